"""The held-out figures' 95% intervals: a bootstrap over sources, not over pairs."""

from __future__ import annotations

import numpy as np
import pytest

from paraamr.errors import InputError
from paraamr.quality.evaluation import by_kind, classify, intervals_by_source, separation


@pytest.fixture(scope="module")
def pairs():
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 120)
    scores = np.clip(rng.normal(0.35 + 0.3 * labels, 0.2), 0, 1)
    return scores, labels, [f"source {i // 3}" for i in range(120)]


def test_intervals_hold_the_figures_of_the_whole_set(pairs):
    scores, labels, sources = pairs
    found = intervals_by_source(scores, labels, sources)
    lo, hi = found["f1_macro"]
    assert lo < classify(scores, labels)["f1_macro"] < hi  # scikit-learn's macro F1
    lo, hi = found["separation"]
    assert lo < separation(scores, labels) < hi


def test_a_source_is_drawn_with_all_its_pairs(pairs):
    """Copies of a pair under its own source add no information; as new sources they would."""
    scores, labels, sources = pairs
    width = np.diff(intervals_by_source(scores, labels, sources)["f1_macro"])[0]
    same = intervals_by_source(np.repeat(scores, 4), np.repeat(labels, 4), np.repeat(sources, 4).tolist())
    assert np.diff(same["f1_macro"])[0] == pytest.approx(width, rel=0.25)
    apart = [f"{s} copy {k}" for s in sources for k in range(4)]
    narrow = intervals_by_source(np.repeat(scores, 4), np.repeat(labels, 4), apart)
    assert np.diff(narrow["f1_macro"])[0] < 0.7 * width


def test_the_threshold_is_the_one_the_interval_is_of(pairs):
    scores, labels, sources = pairs
    for threshold in (0.3, 0.5, 0.7):
        lo, hi = intervals_by_source(scores, labels, sources, threshold)["f1_macro"]
        assert lo <= classify(scores, labels, threshold)["f1_macro"] <= hi


def test_sources_must_match_the_scores():
    with pytest.raises(InputError, match="3 scores but 2 sources"):
        intervals_by_source([0.1, 0.9, 0.5], [0, 1, 1], ["a", "b"])


def test_auc_intervals_of_each_invalid_kind(pairs):
    """Each interval holds scikit-learn's AUC of the whole set; a kind below every valid pair has
    AUC 1 in every resample, and equal scores 0.5 (the AUC's definition, ties counting half)."""
    scores, labels, sources = pairs
    kinds = np.where(labels == 1, "valid", np.where(np.arange(len(labels)) % 2, "odd", "even")).tolist()
    found = intervals_by_source(scores, labels, sources, kinds=kinds)
    assert {k for k in found if k.startswith("auc")} == {"auc even", "auc odd"}
    whole = by_kind(scores, labels, kinds)
    for kind in ("even", "odd"):
        lo, hi = found[f"auc {kind}"]
        assert lo < whole[kind]["auc"] < hi
    below = np.where(labels == 1, 0.6 + 0.4 * scores, 0.5 * scores)
    assert intervals_by_source(below, labels, sources, kinds=kinds)["auc odd"] == (1.0, 1.0)
    flat = intervals_by_source(np.full(len(labels), 0.5), labels, sources, kinds=kinds)
    assert flat["auc even"] == (0.5, 0.5)
