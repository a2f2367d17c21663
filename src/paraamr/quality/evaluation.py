"""Figures of a paraphrase-quality scorer (ParaQD, §5): separation, P/R/F1 at a threshold, triplet
loss, AUC by kind (small kinds pooled), 95% intervals by source.

Labels are 1 (valid) or 0 (invalid); a pair is predicted valid when its score is at least
``threshold``.

>>> separation([0.9, 0.8, 0.3, 0.1], [1, 1, 0, 0])
0.65
>>> report = classify([0.9, 0.8, 0.3, 0.6], [1, 1, 0, 0])
>>> report["accuracy"], round(report["f1_weighted"], 4), report["threshold"]
(0.75, 0.7333, 0.5)
>>> best_threshold([0.9, 0.8, 0.3, 0.6], [1, 1, 0, 0])
(0.7, 1.0)
>>> by_kind([0.9, 0.8, 0.3, 0.6], [1, 1, 0, 0], ["para", "para", "role", "typo"])["role"]
{'label': 0, 'n': 1, 'mean': 0.3, 'auc': 1.0}
>>> pooled_kinds(["voice", "role", "scramble", "unit", "negation", "negation"], [1, 0, 0, 0, 0, 0], least=2)
['valid', 'role_swap', 'shuffle', 'other', 'negation', 'negation']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from paraamr.errors import InputError

#: What a label is, as the messages say it.
LABEL_RULE = "labels are 1 (valid) or 0 (invalid)"


def is_label(value: object) -> bool:
    """Whether ``value`` is a label: 1 (valid) or 0 (invalid); ``True``, ``False``, 1.0 and 0.0 too.

    >>> [is_label(v) for v in (1, 0.0, True, 2, "1", float("nan"), None)]
    [True, True, True, False, False, False, False]
    """
    return value in (0, 1)


def _check(scores: Sequence[float], labels: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    if len(scores) != len(labels):
        raise InputError(f"{len(scores)} scores but {len(labels)} labels")
    bad = [i for i, label in enumerate(labels) if not is_label(label)]
    if bad:
        raise InputError(f"labels[{bad[0]}] is {labels[bad[0]]!r}: {LABEL_RULE}")
    return np.asarray(scores, dtype=float), np.asarray(labels).astype(int)


def separation(scores: Sequence[float], labels: Sequence[int]) -> float:
    """μs: the mean score of valid pairs minus the mean score of invalid pairs (both must occur)."""
    scores_, labels_ = _check(scores, labels)
    if len(set(labels_.tolist())) < 2:
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


def _midpoints(scores: np.ndarray) -> np.ndarray:
    """Midpoints between adjacent distinct scores (the score itself when there is only one)."""
    values = np.unique(scores)
    return (values[:-1] + values[1:]) / 2 if len(values) > 1 else values


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> tuple[float, float]:
    """``(threshold, macro F1)``: the midpoint between adjacent distinct scores with the best macro
    F1 of ``score >= threshold`` (the lowest such threshold on ties)."""
    from sklearn.metrics import f1_score

    scores_, labels_ = _check(scores, labels)
    candidates = _midpoints(scores_)
    f1s = [
        f1_score(labels_, (scores_ >= t).astype(int), average="macro", zero_division=0) for t in candidates
    ]
    best = int(np.argmax(f1s))
    return round(float(candidates[best]), 10), float(f1s[best])


def equal_error_threshold(scores: Sequence[float], labels: Sequence[int]) -> float:
    """The midpoint between adjacent distinct scores where the share of invalid pairs accepted is
    closest to the share of valid pairs rejected (the equal error rate; the lowest on ties).

    >>> equal_error_threshold([0.9, 0.8, 0.3, 0.6], [1, 1, 0, 0])
    0.7
    >>> equal_error_threshold([0.1, 0.5, 0.2, 0.9, 0.6, 0.3], [0, 0, 0, 1, 1, 1])
    0.4
    """
    scores_, labels_ = _check(scores, labels)
    candidates = _midpoints(scores_)
    accepted = (scores_[labels_ == 0][None, :] >= candidates[:, None]).mean(axis=1)
    rejected = (scores_[labels_ == 1][None, :] < candidates[:, None]).mean(axis=1)
    return round(float(candidates[int(np.argmin(np.abs(accepted - rejected)))]), 10)


def by_kind(scores: Sequence[float], labels: Sequence[int], kinds: Sequence[str]) -> dict[str, dict]:
    """Per kind of pair: its label, count, mean score and, for invalid kinds, the ROC AUC of telling
    the valid pairs (all kinds) from the pairs of that kind (1.0: every valid pair scores higher)."""
    from sklearn.metrics import roc_auc_score

    scores_, labels_ = _check(scores, labels)
    kinds_ = np.asarray(kinds)
    valid = scores_[labels_ == 1]
    figures: dict[str, dict] = {}
    for kind in sorted(set(kinds)):
        mask = kinds_ == kind
        label = int(labels_[mask][0])
        row = {"label": label, "n": int(mask.sum()), "mean": round(float(scores_[mask].mean()), 6)}
        if label == 0 and len(valid):
            y = np.r_[np.ones(len(valid)), np.zeros(int(mask.sum()))]
            row["auc"] = round(float(roc_auc_score(y, np.r_[valid, scores_[mask]])), 6)
        figures[kind] = row
    return figures


#: The kinds every held-out set reports apart, however few their pairs: the changes of who did what
#: to whom and of word order, which a model reading words alone cannot see.
ORDER_KINDS = ("role_swap", "shuffle")
#: Sets A and B's names of those kinds.
_SAME_KIND = {"role": "role_swap", "scramble": "shuffle"}


def pooled_kinds(kinds: Sequence[str], labels: Sequence[int], least: int = 25) -> list[str]:
    """The kinds of a set as the goals report them: every valid pair ``valid``; invalid pairs by
    kind when it is one of :data:`ORDER_KINDS` (sets A and B's ``role`` and ``scramble`` included)
    or has at least ``least`` pairs, the others pooled as ``other``."""
    pairs = zip(kinds, labels, strict=True)
    named = [_SAME_KIND.get(kind, kind) if label == 0 else "valid" for kind, label in pairs]
    counts = Counter(named)
    return [k if k in ORDER_KINDS or k == "valid" or counts[k] >= least else "other" for k in named]


def intervals_by_source(
    scores: Sequence[float],
    labels: Sequence[int],
    sources: Sequence[str],
    threshold: float = 0.5,
    *,
    kinds: Sequence[str] | None = None,
    seed: int = 0,
) -> dict[str, tuple[float, float]]:
    """95% intervals of the macro F1 at ``threshold``, of the separation and, given ``kinds``, of the
    AUC of the valid pairs against each invalid kind (``"auc KIND"``), by a cluster bootstrap over
    ``sources`` (:func:`paraamr.metrics.sample.intervals`): a source's pairs are drawn together.

    >>> scores, labels = [0.9, 0.2, 0.8, 0.6, 0.7, 0.4, 0.3, 0.1], [1, 0, 1, 0, 1, 0, 1, 0]
    >>> found = intervals_by_source(scores, labels, list("aabbccdd"), kinds=["ok", "bad"] * 4)
    >>> lo, hi = found["f1_macro"]
    >>> bool(lo <= classify(scores, labels)["f1_macro"] <= hi), bool(lo < hi)
    (True, True)
    >>> lo, hi = found["auc bad"]
    >>> bool(lo <= by_kind(scores, labels, ["ok", "bad"] * 4)["bad"]["auc"] <= hi)
    True
    """
    from paraamr.metrics.sample import intervals, source_groups

    scores_, labels_ = _check(scores, labels)
    if len(sources) != len(scores_):
        raise InputError(f"{len(scores_)} scores but {len(sources)} sources")
    valid, accepted = labels_ == 1, scores_ >= threshold
    columns = (  # per pair: 1, then TP FP FN TN, then valid count and score, invalid count and score
        np.ones(len(scores_)), valid & accepted, ~valid & accepted, valid & ~accepted, ~valid & ~accepted,
        valid, np.where(valid, scores_, 0.0), ~valid, np.where(valid, 0.0, scores_),
    )  # fmt: skip
    per_pair = np.column_stack(columns).astype(float)
    groups = source_groups(sources)
    table = np.array([per_pair[group].sum(axis=0) for group in groups])
    extra = {"f1_macro": (slice(1, 5), _macro_f1), "separation": (slice(5, 9), _separation)}
    found = intervals(table, [], seed=seed, extra=extra)
    if kinds is not None:
        kinds_ = np.asarray(kinds)
        for kind in sorted(set(kinds_[~valid].tolist())):
            found[f"auc {kind}"] = _auc_interval(scores_, valid, kinds_ == kind, groups, seed)
    return found


def _auc_interval(
    scores: np.ndarray, valid: np.ndarray, kind: np.ndarray, groups: list[list[int]], seed: int
) -> tuple[float, float]:
    """The percentile interval of the AUC of the ``valid`` against the ``kind`` pairs over resamples
    of ``groups`` of pair indices; resamples without both are left out."""
    from scipy.stats import rankdata

    from paraamr.metrics.sample import CONFIDENCE, RESAMPLES

    rng, values = np.random.default_rng(seed), []
    for _ in range(RESAMPLES if len(groups) > 1 else 0):
        index = np.concatenate([groups[g] for g in rng.integers(0, len(groups), len(groups))])
        good, bad = scores[index][valid[index]], scores[index][kind[index]]
        if len(good) and len(bad):  # the Mann-Whitney U of the valid pairs over n_good * n_bad
            ranks = rankdata(np.r_[good, bad])[: len(good)].sum()
            values.append((ranks - len(good) * (len(good) + 1) / 2) / (len(good) * len(bad)))
    if not values:
        return (float("nan"), float("nan"))
    tail = 50 * (1 - CONFIDENCE)
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return float(lo), float(hi)


def _macro_f1(counts: np.ndarray) -> float:
    """Macro F1 of ``[TP, FP, FN, TN]`` (valid the positive class; 0 for a class never seen or predicted)."""
    tp, fp, fn, tn = counts
    misses = fp + fn
    return sum(2 * hits / (2 * hits + misses) if 2 * hits + misses else 0.0 for hits in (tp, tn)) / 2


def _separation(sums: np.ndarray) -> float:
    """μs of ``[valid pairs, their score sum, invalid pairs, their score sum]`` (nan without both)."""
    n_valid, valid, n_invalid, invalid = sums
    return valid / n_valid - invalid / n_invalid if n_valid and n_invalid else float("nan")
