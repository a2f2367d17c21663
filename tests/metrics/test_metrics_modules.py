"""The evaluate modules: loading from the checkout and through paraamr.metric_path, their
documented examples, and agreement with the pure functions they wrap."""

from __future__ import annotations

import doctest
import os
from pathlib import Path

import pytest

import paraamr
from paraamr.metrics.lexical import bleu_diversity, jaccard_diversity

REPO = Path(__file__).resolve().parents[2]
NAMES = ("semantic_similarity", "lexical_diversity", "ted_diversity")
TREES = [
    line
    for line in (Path(__file__).parent / "data" / "corenlp_trees.txt").read_text().splitlines()
    if line.startswith("(")
]


@pytest.fixture(scope="module")
def evaluate():
    import evaluate

    return evaluate


@pytest.fixture(scope="module")
def modules(evaluate):
    """Each module loaded the way a checkout user does: evaluate.load("metrics/<name>")."""
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        return {name: evaluate.load(f"metrics/{name}") for name in NAMES}
    finally:
        os.chdir(cwd)


def test_one_copy_of_each_module():
    for name in NAMES:
        folder = Path(paraamr.metric_path(name))
        assert folder == REPO / "src" / "paraamr" / "metric_modules" / name
        assert (REPO / "metrics" / name).resolve() == folder.resolve()
        assert (folder / f"{name}.py").is_file() and (folder / "README.md").is_file()


def test_loads_through_metric_path_from_elsewhere(evaluate, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no metrics/ folder here: only the package's path works
    metric = evaluate.load(paraamr.metric_path("lexical_diversity"))
    preds, refs = ["On the mat sat a cat."], ["The cat sat on the mat."]
    assert (
        metric.compute(predictions=preds, references=refs)["bleu_diversity_scores"]
        == bleu_diversity(preds, refs)[0]
    )


@pytest.mark.parametrize("name", NAMES)
def test_documented_examples_run(name, modules, evaluate, monkeypatch):
    monkeypatch.chdir(REPO)
    text = modules[name].inputs_description
    assert "Examples:" in text and ">>>" in text
    test = doctest.DocTestParser().get_doctest(
        text, {"evaluate": evaluate}, f"{name}._KWARGS_DESCRIPTION", f"metrics/{name}/{name}.py", 0
    )
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 3


def test_lexical_module_matches_the_functions(modules):
    preds, refs = [TREES[0], "On the mat sat a cat."], ["The cat sat on the mat.", "The cat sat on the mat."]
    out = modules["lexical_diversity"].compute(predictions=preds, references=refs, jaccard_lowercase=False)
    assert out["bleu_diversity_scores"] == bleu_diversity(preds, refs)[0]
    assert out["jaccard_diversity_scores"] == jaccard_diversity(preds, refs, lowercase=False)[0]
    assert out["jaccard_diversity"] == pytest.approx(sum(out["jaccard_diversity_scores"]) / 2)
    assert "case:mixed" in out["jaccard_signature"]


def test_similarity_module_caches_its_model(modules):
    metric = modules["semantic_similarity"]
    source = ["The cat sat on the mat."]
    first = metric.compute(predictions=["A cat was sitting on the mat."], references=source)
    embedder = next(iter(metric._embedders.values()))
    second = metric.compute(predictions=["Penguins cannot fly."], references=source)
    assert len(metric._embedders) == 1 and next(iter(metric._embedders.values())) is embedder
    assert first["semantic_similarity"] > 50 > second["semantic_similarity"]
    assert second["scores"] == [second["semantic_similarity"]]


def test_ted_module_on_trees_and_sentences(modules):
    metric = modules["ted_diversity"]
    out = metric.compute(predictions=TREES[1:4], references=TREES[:3], trees=True, normalize=True)
    assert all(0 <= s <= 1 for s in out["tedf_scores"]) and "norm:max-nodes" in out["signature"]
    with pytest.raises(ValueError, match="pair 1 reference: malformed tree"):
        metric.compute(predictions=TREES[:2], references=[TREES[0], "(ROOT (S"], trees=True)
    out = metric.compute(predictions=["On the mat sat the cat."], references=["The cat sat on the mat."])
    parser = metric._parsers["link-grammar"]
    again = metric.compute(predictions=["The cat sat on the mat."], references=["On the mat sat the cat."])
    assert metric._parsers["link-grammar"] is parser and parser.calls == 2  # parsed once each
    assert out["tedf_scores"] == again["tedf_scores"] == [3]  # IN NP VP . vs NP VP(PP(IN NP)) .
    assert out["ted3_scores"] == [1] and "scale:not-paper" in out["signature"]
    bare = metric.compute(
        predictions=["On the mat sat the cat."],
        references=["The cat sat on the mat."],
        parser="link-grammar:no-pos",
    )
    assert bare["tedf_scores"] == [1] and "tree:ROOT,no-POS" in bare["signature"]
    plain = metric.compute(
        predictions=TREES[1:3], references=TREES[:2], trees=True, convention="plain", parser=lambda s: 1 / 0
    )  # the parser is not used on trees
    assert plain["signature"].startswith("convention:plain|")


# --- Hub Spaces and evaluate.combine -------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_module_folder_is_a_space(name, evaluate, monkeypatch):
    import runpy

    import yaml

    folder = Path(paraamr.metric_path(name))
    card = (folder / "README.md").read_text()
    assert card.startswith("---\n")
    meta = yaml.safe_load(card.split("---\n")[1])
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and meta["pinned"] is False
    assert {"title", "emoji", "colorFrom", "colorTo", "sdk_version", "description"} <= set(meta)
    assert {"evaluate", "metric"} <= set(meta["tags"])
    requirements = (folder / "requirements.txt").read_text().split()
    assert requirements[0].startswith("evaluate") and "paraamr" in requirements
    launched = []
    monkeypatch.setattr(evaluate.utils, "launch_gradio_widget", launched.append)
    monkeypatch.chdir(folder)  # a Space runs app.py from its own folder
    runpy.run_path(str(folder / "app.py"), run_name="__main__")
    (module,) = launched
    assert isinstance(module, evaluate.EvaluationModule) and module.name == name


def test_combine_passes_each_module_its_options(modules, evaluate):
    combined = evaluate.combine([modules[name] for name in NAMES])
    out = combined.compute(
        predictions=["On the mat sat the cat."],
        references=["The cat sat on the mat."],
        parser="link-grammar:no-pos",  # ted_diversity's
        jaccard_lowercase=False,  # lexical_diversity's
        targets=["The cat sat on the mat."],  # both
        batch_size=8,  # semantic_similarity's
    )
    assert out["tedf"] == 1 and "tree:ROOT,no-POS" in out["ted_diversity_signature"]
    assert out["rouge1"] == 100  # the same words
    assert out["rouge2"] == pytest.approx(60)  # bigrams shared: on the, the mat, the cat (3 of 5 each)
    assert out["ted_r"] == 1 and out["semantic_similarity"] > 80
    with pytest.raises(TypeError, match="unknown keyword argument 'parsre'"):
        combined.compute(predictions=["a"], references=["a"], parsre="link-grammar")
