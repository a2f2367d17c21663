"""QualityScorer on the real all-MiniLM-L6-v2 weights (packaged offline)."""

from __future__ import annotations

import pytest

from paraamr.errors import InputError, ModelNotFoundError
from paraamr.quality import BASE_MODEL, QualityScorer


@pytest.fixture(scope="module")
def base():
    return QualityScorer(BASE_MODEL)


def test_scores_are_cosines_in_range(base):
    sources = ["John ate five apples.", "John ate five apples.", "The meeting starts at noon."]
    paras = ["John ate five apples.", "Five apples were eaten by John.", "Penguins cannot fly."]
    scores = base.score(sources, paras)
    assert len(scores) == 3
    assert scores[0] == pytest.approx(1.0, abs=1e-5)  # identical texts
    assert all(-1.0 <= s <= 1.0 for s in scores)
    assert scores[1] > scores[2]  # a paraphrase beats an unrelated sentence
    # a pair scores the same whether or not other pairs share the batch (dedup of texts is exact)
    assert base.score(sources[1:2], paras[1:2])[0] == pytest.approx(scores[1], abs=1e-5)


def test_bad_input_names_the_place(base):
    with pytest.raises(InputError, match="2 sources but 1 paraphrases"):
        base.score(["a", "b"], ["a"])
    with pytest.raises(InputError, match=r"sources\[1\] is int"):
        base.score(["a", 3], ["a", "b"])
    assert base.score([], []) == []


def test_a_bad_device_is_refused_when_built_and_generators_are_scored(base):
    """Before: ``device="gpu"`` was taken, then torch's "Expected one of cpu, cuda, ..." at the first
    score; generators raised "object of type 'generator' has no len()"."""
    from paraamr.errors import UsageError

    with pytest.raises(UsageError, match="device 'gpu': not a torch device"):
        QualityScorer(BASE_MODEL, device="gpu")
    with pytest.raises(ValueError, match="batch_size"):
        QualityScorer(BASE_MODEL, batch_size=0)
    pairs = (["John ate five apples."], ["Five apples were eaten by John."])
    assert base.score(iter(pairs[0]), (p for p in pairs[1])) == base.score(*pairs)
    with pytest.raises(TypeError, match="sources is one string"):
        base.score("John ate.", ["John ate."])


def test_missing_model_says_what_to_do(tmp_path):
    with pytest.raises(ModelNotFoundError, match="paraamr quality train"):
        QualityScorer(tmp_path / "nope")
    with pytest.raises(ModelNotFoundError, match=r"quality model .* is not a model folder"):
        QualityScorer(tmp_path)


def test_signature_names_model(base):
    from paraamr.signature import Signature

    sig = Signature.parse(str(base.signature))
    assert sig.name == "quality" and sig["model"] == "all-MiniLM-L6-v2"
    assert (sig["mode"], sig["raw"], sig["calib"], sig["copy"]) == ("bi", "cos", "none", "1")


def test_copies_score_one_and_skip_the_model(base, monkeypatch):
    sources = ["John ate five apples.", "The meeting starts at noon.", "He left."]
    paras = ["john  ate five apples.", "The meeting starts at noon!", "He left."]
    expected = base.score(sources[1:2], paras[1:2])[0]
    seen = []
    monkeypatch.setattr(base, "raw", lambda s, p: seen.append(list(p)) or [expected] * len(p))
    assert base.score(sources, paras) == [1.0, expected, 1.0]
    assert seen == [["The meeting starts at noon!"]]  # only the pair that is no copy ran


@pytest.mark.parametrize("damage", ["cut-short", "another-shape"])
def test_damaged_trained_weights_are_named_not_an_internal_error(tmp_path, damage):
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    from paraamr.quality.scorer import DEFAULT_DIR, DELTA_FILE

    folder = tmp_path / "model"
    shutil.copytree(DEFAULT_DIR, folder)
    weights = folder / DELTA_FILE
    if damage == "cut-short":
        weights.write_bytes(weights.read_bytes()[:1000])
        expected = rf"{DELTA_FILE}: unreadable weights"
    else:
        tensors = load_file(str(weights))
        tensors[next(iter(tensors))] = torch.zeros(3)
        save_file(tensors, str(weights))
        expected = "weights that do not fit"
    with pytest.raises(ModelNotFoundError, match=expected):
        _ = QualityScorer(folder).model
