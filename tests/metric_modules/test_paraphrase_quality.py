"""The evaluate module ``paraphrase_quality``, loaded from the package (its doctest runs under
evaluate's own settings in tests/metric_modules/test_modules_evaluate.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import paraamr
from paraamr.quality import QualityScorer

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["John ate five apples.", "John ate five apples.", "The shop closes at noon."]
PARAS = ["Five apples were eaten by John.", "Penguins cannot fly.", "At noon, the shop closes."]


@pytest.fixture(scope="module")
def metric():
    import evaluate

    return evaluate.load(paraamr.metric_path("paraphrase_quality"))


def test_scores_are_the_scorer_cosines_x100(metric):
    result = metric.compute(predictions=PARAS, references=SOURCES, labels=[1, 0, 1], model="all-MiniLM-L6-v2")
    expected = QualityScorer("all-MiniLM-L6-v2").score(SOURCES, PARAS)
    assert result["paraphrase_quality_scores"] == pytest.approx([100 * s for s in expected], abs=1e-3)
    assert result["paraphrase_quality"] == pytest.approx(100 * sum(expected) / 3, abs=1e-3)
    valid = (expected[0] + expected[2]) / 2
    assert result["separation"] == pytest.approx(100 * (valid - expected[1]), abs=1e-3)
    assert result["f1_weighted"] == 100.0 and result["accuracy"] == 100.0
    assert result["paraphrase_quality_signature"].startswith(
        "quality|model:all-MiniLM-L6-v2|mode:bi|raw:cos|calib:none|copy:1|version:"
    )
    assert result["paraphrase_quality_signature"].endswith("|threshold:0.5|scale:x100")


def test_a_cosines_threshold_is_taken_as_the_cli_takes_it(metric):
    """The untuned base gives raw cosines in [-1, 1]: ``quality score --threshold -0.2`` took it,
    the module refused it ("must be ... in [0, 1]")."""
    result = metric.compute(predictions=PARAS, references=SOURCES, labels=[1, 0, 1], threshold=-0.2,
                            model="all-MiniLM-L6-v2")  # fmt: skip
    assert result["paraphrase_quality_signature"].endswith("|threshold:-0.2|scale:x100")


def test_threshold_and_no_labels(metric):
    result = metric.compute(
        predictions=PARAS, references=SOURCES, labels=[1, 0, 1], threshold=0.99, model="all-MiniLM-L6-v2"
    )
    assert result["recall_macro"] == 50.0  # every pair predicted invalid
    plain = metric.compute(predictions=PARAS, references=SOURCES, model="all-MiniLM-L6-v2")
    assert "separation" not in plain and len(plain["paraphrase_quality_scores"]) == 3


def test_an_exact_copy_scores_one_with_every_model(metric):
    """A copy keeps the meaning: 100 through the module, with the shipped model and the base (the
    stop-19 model scored such copies about 60)."""
    sources = ["The shop closes at noon.", "John ate five apples."]
    copies = ["the shop  closes at noon.", "John ate five apples."]
    for model in ("paraamr-quality", "all-MiniLM-L6-v2"):
        result = metric.compute(predictions=copies, references=sources, model=model)
        assert result["paraphrase_quality_scores"] == [100.0, 100.0]


@pytest.mark.parametrize("threshold", [50, -1.5, float("nan"), "0.5"])
def test_a_threshold_off_the_score_scale_is_refused(metric, threshold):
    """Scores print x100 (95.8), the threshold is a score (0.958): ``threshold=50`` gave accuracy 50
    and macro F1 33.3 with no word, "0.5" a numpy UFuncTypeError."""
    message = r"^paraphrase_quality: threshold \(a score before the x100\) must be"
    with pytest.raises(ValueError, match=message):
        metric.compute(predictions=PARAS, references=SOURCES, labels=[1, 0, 1], threshold=threshold)
