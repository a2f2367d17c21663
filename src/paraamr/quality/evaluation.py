"""Figures of a paraphrase-quality scorer (ParaQD, §5): separation, P/R/F1 at a threshold, triplet loss.

Labels are 1 for a valid paraphrase and 0 for an invalid one; a pair is predicted valid when its
score is at least ``threshold`` (0.5 in ParaQD). Figures are on the natural scale (the evaluate
module reports them ×100).

>>> separation([0.9, 0.8, 0.3, 0.1], [1, 1, 0, 0])
0.65
>>> report = classify([0.9, 0.8, 0.3, 0.6], [1, 1, 0, 0])
>>> report["accuracy"], round(report["f1_weighted"], 4), report["threshold"]
(0.75, 0.7333, 0.5)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paraamr.errors import InputError


def _check(scores: Sequence[float], labels: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    if len(scores) != len(labels):
        raise InputError(f"{len(scores)} scores but {len(labels)} labels")
    labels_ = np.asarray(labels)
    bad = [i for i, label in enumerate(labels) if label not in (0, 1, True, False)]
    if bad:
        raise InputError(f"labels[{bad[0]}] is {labels[bad[0]]!r}: labels are 1 (valid) or 0 (invalid)")
    return np.asarray(scores, dtype=float), labels_.astype(int)


def separation(scores: Sequence[float], labels: Sequence[int]) -> float:
    """μs: the mean score of valid pairs minus the mean score of invalid pairs (both must occur)."""
    scores_, labels_ = _check(scores, labels)
    if labels_.min(initial=1) == labels_.max(initial=0) or len(labels_) == 0:
        raise InputError("the separation needs both valid (1) and invalid (0) pairs")
    return round(float(scores_[labels_ == 1].mean() - scores_[labels_ == 0].mean()), 10)


def classify(scores: Sequence[float], labels: Sequence[int], threshold: float = 0.5) -> dict[str, float]:
    """Accuracy and macro / weighted precision, recall and F1 of ``score >= threshold`` (scikit-learn)."""
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    scores_, labels_ = _check(scores, labels)
    predicted = (scores_ >= threshold).astype(int)
    report: dict[str, float] = {"accuracy": float(accuracy_score(labels_, predicted)), "threshold": threshold}
    for average in ("macro", "weighted"):
        p, r, f, _ = precision_recall_fscore_support(
            labels_, predicted, average=average, labels=[0, 1], zero_division=0
        )
        report |= {f"precision_{average}": float(p), f"recall_{average}": float(r), f"f1_{average}": float(f)}
    return report


def triplet_figures(anchor, positive, negative, margin: float = 0.5) -> dict[str, float]:
    """Mean triplet loss ``max(0, d(a, p) - d(a, n) + margin)`` (d = 1 - cosine) and the share of
    triplets with ``d(a, p) < d(a, n)``, from L2-normalized embedding rows.

    >>> e = np.eye(3)
    >>> triplet_figures(e[[0]], e[[0]], e[[1]])
    {'loss': 0.0, 'accuracy': 1.0, 'separation': 1.0}
    """
    d_pos = 1.0 - np.sum(np.asarray(anchor) * np.asarray(positive), axis=1)
    d_neg = 1.0 - np.sum(np.asarray(anchor) * np.asarray(negative), axis=1)
    return {
        "loss": float(np.maximum(0.0, d_pos - d_neg + margin).mean()),
        "accuracy": float((d_pos < d_neg).mean()),
        "separation": float((d_neg - d_pos).mean()),
    }
