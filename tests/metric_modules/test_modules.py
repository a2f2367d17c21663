"""The evaluate modules: loading from the checkout and through paraamr.metric_path, agreement with
the pure functions they wrap, their options and keys under evaluate.combine, their Hub Spaces and
quiet model loading. Their documented examples run in evaluate's own module test
(test_modules_evaluate.py)."""

from __future__ import annotations

import configparser
import inspect
import os
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

import paraamr
from paraamr.metrics.lexical import bleu_diversity, jaccard_diversity
from paraamr.quality import QualityScorer

REPO = Path(__file__).resolve().parents[2]
NAMES = ("semantic_similarity", "lexical_diversity", "ted_diversity", "paraphrase_quality")
CORENLP_TREES = Path(__file__).parents[1] / "metrics" / "data" / "corenlp_trees.txt"
TREES = [line for line in CORENLP_TREES.read_text().splitlines() if line.startswith("(")]


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
    assert second["semantic_similarity_scores"] == [second["semantic_similarity"]]


def test_ted_module_on_trees_and_sentences(modules):
    metric = modules["ted_diversity"]
    out = metric.compute(predictions=TREES[1:4], references=TREES[:3], trees=True, normalize=True)
    assert all(0 <= s <= 1 for s in out["tedf_scores"]) and "norm:max-nodes" in out["ted_diversity_signature"]
    with pytest.raises(ValueError, match="pair 1 reference: malformed tree"):
        metric.compute(predictions=TREES[:2], references=[TREES[0], "(ROOT (S"], trees=True)
    aesop = {"convention": "aesop"}  # the hand-counted distances below are AESOP's trees
    out = metric.compute(
        predictions=["On the mat sat the cat."], references=["The cat sat on the mat."], **aesop
    )
    parser = metric._parsers["link-grammar", None]
    again = metric.compute(
        predictions=["The cat sat on the mat."], references=["On the mat sat the cat."], **aesop
    )
    assert metric._parsers["link-grammar", None] is parser and parser.calls == 2  # parsed once each
    assert out["tedf_scores"] == again["tedf_scores"] == [3]  # IN NP VP . vs NP VP(PP(IN NP)) .
    assert out["ted3_scores"] == [1] and "scale:not-paper" in out["ted_diversity_signature"]
    bare = metric.compute(
        predictions=["On the mat sat the cat."],
        references=["The cat sat on the mat."],
        parser="link-grammar:no-pos",
        **aesop,
    )
    assert bare["tedf_scores"] == [1] and "tree:ROOT,no-POS" in bare["ted_diversity_signature"]
    plain = metric.compute(
        predictions=TREES[1:3], references=TREES[:2], trees=True, convention="plain", parser=lambda s: 1 / 0
    )  # the parser is not used on trees
    assert plain["ted_diversity_signature"].startswith("convention:plain|")


def test_ted_module_keeps_parses_in_the_cache_dir_of_each_call(modules, tmp_path):
    metric, pair = modules["ted_diversity"], {"predictions": ["A b."], "references": ["B a."]}
    for name in ("one", "two"):  # the same parser, another cache_dir: its own parse cache
        metric.compute(**pair, parser=_flat_tree, cache_dir=str(tmp_path / name))
        assert (tmp_path / name / "trees.sqlite").is_file()


def _flat_tree(sentence: str) -> str:
    return "(ROOT (S " + " ".join(f"(NN {w})" for w in sentence.split()) + "))"


# --- Hub Spaces ---------------------------------------------------------------------------------

#: The front matter keys of evaluate's own Spaces: huggingface/evaluate metrics/bleu/README.md
#: (commit a7dd338386a4fae9a1767e05eb9ef9479513d9e8).
SPACE_KEYS = {"title", "emoji", "colorFrom", "colorTo", "sdk", "sdk_version", "app_file", "pinned"}
SPACE_KEYS |= {"tags", "description"}


def _setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    return config


def _debian_package(path: str) -> str:
    """The Debian package that installed ``path`` (``dpkg -S``), an independent account of it."""
    out = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True, check=True).stdout
    return out.split(":")[0]


@pytest.mark.parametrize("name", NAMES)
def test_module_folder_is_a_space(name, evaluate, monkeypatch):
    import runpy

    import yaml
    from packaging.requirements import Requirement

    folder = Path(paraamr.metric_path(name))
    card = (folder / "README.md").read_text()
    assert card.startswith("---\n")
    meta = yaml.safe_load(card.split("---\n")[1])
    assert set(meta) == SPACE_KEYS
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and meta["pinned"] is False
    assert {"evaluate", "metric"} <= set(meta["tags"])
    lines = (folder / "requirements.txt").read_text().split("\n")
    requirements = {r.name: r for r in map(Requirement, filter(None, lines))}
    extras = _setup_cfg()["options.extras_require"]
    metrics = map(Requirement, filter(None, extras["metrics"].split("\n")))
    evaluate_pin = next(str(r.specifier) for r in metrics if r.name == "evaluate")
    version = _setup_cfg()["metadata"]["version"]
    # the rest comes with paraamr and the extras its measure needs
    assert set(requirements) == {"evaluate", "paraamr"}
    assert str(requirements["evaluate"].specifier) == evaluate_pin
    assert str(requirements["paraamr"].specifier) == f"=={version}"
    wanted = {"metrics", "quality"} if name == "paraphrase_quality" else {"metrics"}
    assert requirements["paraamr"].extras == wanted
    # a Space installs Debian packages from packages.txt: TED's link-grammar is one (pip brings no
    # link-parser). Before, none was listed, so every TED call on a Space failed
    packages = folder / "packages.txt"
    needed = {_debian_package(shutil.which("link-parser")), _debian_package("/usr/share/link-grammar/en")}
    assert (packages.read_text().split() if packages.exists() else []) == (
        sorted(needed) if name == "ted_diversity" else []
    )
    gradio = pytest.importorskip("gradio")  # a Space's own (sdk: gradio); not a dependency of paraamr
    assert meta["sdk_version"] == gradio.__version__  # the gradio this app is tested with
    apps = []
    monkeypatch.setattr(gradio.Interface, "launch", lambda app, **_: apps.append(app))  # started: next test
    monkeypatch.chdir(folder)  # a Space runs app.py from its own folder
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runpy.run_path(str(folder / "app.py"), run_name="__main__")
    said = [str(w.message) for w in caught if "gradio" in w.filename]
    assert not said, said  # before: "The `col_count` parameter is deprecated" (gradio 6)
    (app,) = apps
    assert app.title == f"Metric: {name}" and "## How to Use" in app.article and "---" not in app.article[:3]
    how = app.article.split("## How to Use")[1].split("### Inputs")[0]
    code = how.split("```python\n")[1].split("```")[0]
    assert not any(
        line.startswith("#") for line in code.splitlines()
    )  # no line a renderer takes as a heading
    assert f'evaluate.load(paraamr.metric_path("{name}"))' in code


@pytest.mark.slow
def test_a_space_answers_a_request_on_loopback(evaluate, tmp_path):
    """The lexical_diversity Space's app.py started as a Space starts it (gradio on 127.0.0.1, a
    free port), asked through gradio_client; its answer is the module's own result. Stopped after."""
    import socket
    import subprocess
    import sys
    import time

    pytest.importorskip("gradio")
    from gradio_client import Client

    folder = Path(paraamr.metric_path("lexical_diversity"))
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    env = {**os.environ, "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port)}
    env.update(GRADIO_ANALYTICS_ENABLED="False", PYTHONPATH=str(Path(paraamr.__file__).parents[1]))
    log = (tmp_path / "app.log").open("w")
    app = subprocess.Popen([sys.executable, "app.py"], cwd=folder, env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                client = Client(f"http://127.0.0.1:{port}/", verbose=False)
                break
            except Exception:
                assert app.poll() is None and time.monotonic() < deadline, (tmp_path / "app.log").read_text()
                time.sleep(1)
        pairs = [["A cat was sitting on the mat.", "The cat sat on the mat."], ["It rained.", "Rain fell."]]
        got = client.predict({"headers": ["predictions", "references"], "data": pairs}, api_name="/compute")
    finally:
        app.terminate()
        app.wait(timeout=30)
        log.close()
    want = evaluate.load(str(folder)).compute(
        predictions=[p for p, _ in pairs], references=[r for _, r in pairs]
    )
    assert got["bleu_diversity_scores"] == pytest.approx(want["bleu_diversity_scores"])
    assert got["jaccard_diversity"] == pytest.approx(want["jaccard_diversity"]) and len(pairs) == 2


# --- options and keys under evaluate.combine ----------------------------------------------------


def _options(module) -> tuple[set[str], set[str]]:
    """A module's own options (keyword or positional) and the siblings' it accepts (keyword-only)."""
    parameters = list(inspect.signature(module._compute).parameters.values())[2:]  # after the inputs
    own = {p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD}
    return own, {p.name for p in parameters if p.kind is p.KEYWORD_ONLY}


def test_every_module_accepts_every_option_and_no_kwargs(modules):
    options = {name: _options(modules[name]) for name in NAMES}
    everything = set().union(*(own for own, _ in options.values()))
    assert len(everything) == 19  # 4 + 6 + 8 + 5 options; model, device, batch_size, targets shared
    for name, (own, siblings) in options.items():
        assert own | siblings == everything and not own & siblings, name
        assert list(inspect.signature(modules[name]._compute).parameters)[:2] == ["predictions", "references"]


@pytest.mark.parametrize("name", NAMES)
def test_sibling_options_are_ignored(name, modules):
    """Every sibling option set to a value that fails wherever it is used changes nothing."""
    metric = modules[name]
    pair = {"predictions": ["On the mat sat the cat."], "references": ["The cat sat on the mat."]}
    poisoned = {option: object() for option in _options(metric)[1]}
    assert metric.compute(**pair, **poisoned) == metric.compute(**pair)


def test_combine_keeps_every_key_of_every_module(modules, evaluate):
    """No key collides: evaluate.combine prefixes none, so each module's keys stay its own."""
    pair = {"predictions": ["On the mat sat the cat."], "references": ["The cat sat on the mat."]}
    alone = {name: modules[name].compute(**pair) for name in NAMES}
    combined = evaluate.combine([modules[name] for name in NAMES]).compute(**pair)
    assert combined == {key: value for result in alone.values() for key, value in result.items()}
    for name in ("semantic_similarity", "ted_diversity", "paraphrase_quality"):
        assert f"{name}_signature" in alone[name]


def test_combine_passes_each_module_its_options(modules, evaluate):
    combined = evaluate.combine([modules[name] for name in NAMES])
    sources = ["The cat sat on the mat.", "The cat sat on the mat."]
    out = combined.compute(
        predictions=["On the mat sat the cat.", "Penguins cannot fly."],
        references=sources,
        parser="link-grammar:no-pos",  # ted_diversity's
        convention="aesop",  # ted_diversity's
        jaccard_lowercase=False,  # lexical_diversity's
        targets=sources,  # both
        batch_size=8,  # semantic_similarity's and paraphrase_quality's
        labels=[1, 0],  # paraphrase_quality's
    )
    assert out["tedf_scores"][0] == 1 and "tree:ROOT,no-POS" in out["ted_diversity_signature"]
    assert "case:mixed" in out["jaccard_signature"]
    assert out["rouge1_scores"][0] == 100  # the same words
    assert out["rouge2_scores"][0] == pytest.approx(60)  # bigrams shared: on the, the mat, the cat (3 of 5)
    assert out["ted_r_scores"][0] == 1 and out["semantic_similarity_scores"][0] > 80
    assert out["separation"] > 0 and "threshold:0.5" in out["paraphrase_quality_signature"]
    with pytest.raises(TypeError, match="unexpected keyword argument 'parsre'"):
        combined.compute(predictions=["a"], references=["a"], parsre="link-grammar")


# --- quiet loading -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["semantic_similarity", "paraphrase_quality"])
def test_loading_a_model_prints_no_progress_bar(name, evaluate, capfd, caplog):
    from transformers.utils import logging

    logging.enable_progress_bar()  # as a fresh process has it (an in-process run before may have quieted it)
    metric = evaluate.load(paraamr.metric_path(name))  # a new instance: its model loads afresh
    capfd.readouterr()
    metric.compute(predictions=["A cat sat on the mat."], references=["The cat sat on the mat."])
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "it/s" not in err, err
    assert not [r for r in caplog.records if r.name.startswith("sentence_transformers")]  # "Converting ..."
    assert logging.is_progress_bar_enabled()  # put back as it was


def test_a_bare_string_is_refused_not_taken_as_pairs_of_characters(modules):
    """evaluate takes a string for a list of its characters: "A cat." / "The cat." were 6 pairs."""
    for name, module in modules.items():
        for side in ("predictions", "references"):
            sides = {"predictions": ["A cat."], "references": ["The cat."], side: "A cat."}
            one = f"^{name}: {side} is one string; give a list, one item a pair"
            with pytest.raises(ValueError, match=one):
                module.compute(**sides)
            with pytest.raises(ValueError, match=f"^{name}: {side} is one string"):
                module.add_batch(**sides)
    for name, option in (("lexical_diversity", "targets"), ("ted_diversity", "templates")):  # per-pair lists
        with pytest.raises(ValueError, match=f"^{name}: {option} is one string; give a list"):
            modules[name].compute(predictions=list("abc"), references=list("abc"), **{option: "abc"})
    lexical = modules["lexical_diversity"]
    lexical.add_batch(predictions=["A cat."], references=["The cat."])  # lists still go through
    bleu = bleu_diversity(["A cat."], ["The cat."])[0]
    assert lexical.compute()["bleu_diversity_scores"] == pytest.approx(bleu)


def test_a_pair_with_an_empty_or_invisible_text_is_left_out_as_paraamr_evaluate_does(modules):
    """An empty text, a NUL, no visible character or a missing value (None, which evaluate's string
    features let through): None in the per-pair lists, the means over the other pairs, one line
    naming the pair in ``<module>_failures`` (``paraamr evaluate`` writes a failure row for such a
    pair; before, the modules scored it, an empty paraphrase at 1-BLEU 100, and None ended the call
    with an AttributeError)."""
    preds = ["On the mat sat a cat.", "", "It rains.", "Fine.", "\u200b", None]
    refs = ["The cat sat on the mat.", "Hello.", "a\x00b", "Fine.", "Hi.", "Hi again."]
    ok = [0, 3]
    lines = [
        "pair 1 prediction: empty",
        "pair 2 reference: a NUL character at character 2",
        "pair 4 prediction: no visible character",
        "pair 5 prediction: not a text (None)",
    ]
    lexical = modules["lexical_diversity"].compute(predictions=preds, references=refs, targets=preds)
    bleu = bleu_diversity([preds[i] for i in ok], [refs[i] for i in ok])[0]
    assert lexical["bleu_diversity_scores"] == [bleu[0], None, None, bleu[1], None, None]
    assert lexical["bleu_diversity"] == pytest.approx(sum(bleu) / 2)
    assert lexical["lexical_diversity_failures"] == lines
    assert lexical["rouge1_scores"][1] is None and lexical["rouge1"] == pytest.approx(100.0)
    similarity = modules["semantic_similarity"].compute(predictions=preds, references=refs)
    scores = similarity["semantic_similarity_scores"]
    assert [s is None for s in scores] == [False, True, True, False, True, True]
    assert similarity["semantic_similarity"] == pytest.approx((scores[0] + scores[3]) / 2)
    assert similarity["semantic_similarity_failures"] == lines
    ted = modules["ted_diversity"].compute(predictions=preds, references=refs)
    assert [s is None for s in ted["ted3_scores"]] == [False, True, True, False, True, True]
    labels = [1, 1, 1, 0, 1, 1]  # the left-out pairs' labels count in no figure either
    quality = modules["paraphrase_quality"].compute(predictions=preds, references=refs, labels=labels)
    scores = quality["paraphrase_quality_scores"]
    assert [s is None for s in scores] == [False, True, True, False, True, True]
    kept = QualityScorer("paraamr-quality").score([refs[i] for i in ok], [preds[i] for i in ok])
    assert [scores[i] for i in ok] == pytest.approx([100 * s for s in kept], abs=1e-3)
    assert quality["paraphrase_quality"] == pytest.approx(50 * sum(kept), abs=1e-3)
    assert quality["paraphrase_quality_failures"] == lines
    assert quality["separation"] == pytest.approx(100 * (kept[0] - kept[1]), abs=1e-3)  # valid - invalid


def test_none_first_a_number_or_a_lone_surrogate_is_a_failure_line_too(modules):
    """Items evaluate's Arrow cache cannot carry as text: before, None as the first item was
    evaluate's format error (a None further down was a failure line), a lone surrogate a
    UnicodeEncodeError from pyarrow, a number evaluate's format error."""
    preds, refs = [None, "On the mat sat a cat.", "a\ud800b"], ["Hi.", "The cat sat on the mat.", 7]
    lines = [
        "pair 0 prediction: not a text (None)",
        "pair 2 prediction: a lone surrogate (U+D800) at character 2; text cannot hold it",
    ]
    for name, module in modules.items():
        extra = {"labels": [1, 1, 0]} if name == "paraphrase_quality" else {}
        result = module.compute(predictions=preds, references=refs, **extra)
        failures = result[f"{name}_failures"]
        assert failures == lines, (name, failures)
        scores = next(v for k, v in result.items() if k.endswith("_scores"))
        assert [s is None for s in scores] == [True, False, True], (name, scores)
        if name == "paraphrase_quality":  # one class left: μs is None, the scores and F1 stay
            assert result["separation"] is None and result["accuracy"] in (0.0, 100.0)


def test_given_trees_that_are_no_text_are_failure_lines_as_sentences_are(modules):
    """Before (``trees=True``): ``malformed tree: '\\x00paraamr' outside brackets``, the module's
    own marker for a missing text shown as a tree, for None or a number."""
    trees = ["(S (NP x) (VP y))", None, 3, "(S (NP x))"]
    result = modules["ted_diversity"].compute(predictions=trees, references=["(S (NP x))"] * 4, trees=True)
    said = ["pair 1 prediction: not a text (None)", "pair 2 prediction: not a text (int)"]
    assert result["ted_diversity_failures"] == said
    assert [s is None for s in result["ted3_scores"]] == [False, True, True, False]
    assert result["ted3_scores"][3] == 0


@pytest.mark.parametrize(
    "name, option, value",
    [
        ("ted_diversity", "parser", None),  # an AttributeError ('removeprefix') inside
        ("ted_diversity", "parser", 3),
        ("ted_diversity", "convention", "nope"),  # a ValueError that named no module
        ("semantic_similarity", "model", None),  # a TypeError inside (os.fspath)
        ("paraphrase_quality", "model", None),
    ],
)
def test_a_wrong_parser_model_or_convention_names_the_module_and_option(modules, name, option, value):
    with pytest.raises(ValueError, match=f"^{name}: {option}"):
        modules[name].compute(predictions=["It is known."], references=["I know it."], **{option: value})


@pytest.mark.parametrize(
    "name, option, value",
    [
        ("ted_diversity", "height", 0),  # gave TED-R 0 for every pair
        ("ted_diversity", "height", "full"),  # the command line's word: a TypeError inside
        ("ted_diversity", "height", float("nan")),  # gave TED-F under the signature heights:nan
        ("ted_diversity", "normalize", "no"),  # a true string: normalized, norm:max-nodes
        ("lexical_diversity", "lowercase", "no"),  # lowercased, case:lc
    ],
)
def test_an_option_out_of_its_range_is_refused_before_any_work(modules, name, option, value):
    with pytest.raises(ValueError, match=f"^{name}: {option} must be"):
        modules[name].compute(predictions=[TREES[0]], references=[TREES[1]], trees=True, **{option: value})


def test_corpus_bleu_over_no_pairs_is_nan_as_the_other_means(modules):
    """It was 0.0 (sacrebleu's score of no n-grams) beside ROUGE and METEOR at NaN."""
    import math

    result = modules["lexical_diversity"].compute(predictions=["a b"], references=["a b"], targets=[""])
    assert math.isnan(result["bleu"]) and math.isnan(result["meteor"])
