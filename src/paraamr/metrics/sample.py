"""Sources, samples, chunks and confidence intervals of a row.

The pairs of one source are not independent, so the unit is the source: a sample draws sources
with all their pairs, a chunk holds whole sources, and intervals come from a cluster bootstrap.

>>> groups = source_groups(["a", "b", "a", "c"])
>>> groups
[[0, 2], [1], [3]]
>>> chunk_plan([len(g) for g in groups], chunk_pairs=2)
[range(0, 1), range(1, 3)]
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Sequence

import numpy as np

__all__ = [
    "CONFIDENCE",
    "RESAMPLES",
    "chunk_plan",
    "draw",
    "interval_signature",
    "intervals",
    "pick",
    "source_groups",
]

#: The bootstrap's resamples and confidence level.
RESAMPLES = 1000
CONFIDENCE = 0.95


def source_groups(sources: Sequence[Hashable]) -> list[list[int]]:
    """The indices of the pairs of each distinct source, sources in order of first appearance."""
    groups: dict[Hashable, list[int]] = {}
    for i, source in enumerate(sources):
        groups.setdefault(source, []).append(i)
    return list(groups.values())


def draw(groups: Sequence[Sequence[int]], n: int | None, *, seed: int = 0) -> tuple[list[list[int]], str]:
    """``n`` groups drawn without replacement (all when None or not fewer), in input order, and
    the unit: ``"sources"`` when some group has several pairs, else ``"pairs"``.

    >>> draw([[0, 1], [2], [3, 4]], 2, seed=1)
    ([[0, 1], [3, 4]], 'sources')
    """
    keep, unit = pick([len(g) for g in groups], n, seed=seed)
    return [list(groups[i]) for i in (range(len(groups)) if keep is None else keep)], unit


def pick(sizes: Sequence[int], n: int | None, *, seed: int = 0) -> tuple[list[int] | None, str]:
    """:func:`draw` from the groups' sizes alone: the positions of the groups drawn, rising (None:
    all of them), and the unit.

    >>> pick([2, 1, 2], 2, seed=1), pick([1, 1], None)
    (([0, 2], 'sources'), (None, 'pairs'))
    """
    unit = "sources" if any(size > 1 for size in sizes) else "pairs"
    if n is None or n >= len(sizes):
        return None, unit
    if n < 1:
        raise ValueError(f"sample size must be positive, got {n}")
    return sorted(random.Random(seed).sample(range(len(sizes)), n)), unit


def chunk_plan(sizes: Iterable[int], *, chunk_pairs: int) -> list[range]:
    """The positions of groups of ``sizes`` pairs cut into chunks of at least ``chunk_pairs`` pairs
    (the last may have fewer), in order."""
    plan: list[range] = []
    start = size = g = 0
    for g, group in enumerate(sizes, start=1):
        size += group
        if size >= chunk_pairs:
            plan.append(range(start, g))
            start, size = g, 0
    if start < g:
        plan.append(range(start, g))
    return plan


def interval_signature(unit: str, seed: int) -> dict[str, str]:
    """The signature fields of an interval.

    >>> interval_signature("sources", 0)["bootstrap"]
    'cluster:sources'
    """
    return {
        "ci": f"{CONFIDENCE:.0%}",
        "bootstrap": f"cluster:{unit}",
        "method": "percentile",
        "resamples": str(RESAMPLES),
        "seed": str(seed),
    }


def intervals(
    table: np.ndarray,
    columns: Sequence[str],
    *,
    seed: int,
    extra: dict[str, tuple[slice, Callable[[np.ndarray], float]]] | None = None,
) -> dict[str, tuple[float, float]]:
    """95% percentile intervals of each mean by a cluster bootstrap (:func:`scipy.stats.bootstrap`,
    statistic ``sum of sums / sum of counts``), the same resamples for every measure.

    ``table``: per cluster its pair count, then its sum of each of ``columns``; ``extra``: ``name ->
    (columns, statistic of their sums)`` for measures that are no mean (corpus BLEU).

    >>> table = np.array([[2, 10.0], [1, 8.0], [3, 9.0], [2, 2.0]])
    >>> lo, hi = intervals(table, ["x"], seed=0)["x"]
    >>> bool(lo <= table[:, 1].sum() / table[:, 0].sum() <= hi)
    True
    """
    import warnings

    from scipy.stats import DegenerateDataWarning, bootstrap

    table = np.asarray(table, dtype=float)
    batch = max(1, 2_000_000 // max(1, len(table)))

    def run(data: tuple[np.ndarray, ...], statistic) -> tuple[float, float]:
        if len(table) < 2:
            return (float("nan"), float("nan"))
        with warnings.catch_warnings():  # resamples that cannot differ (2 sources): nan, said as null
            warnings.simplefilter("ignore", DegenerateDataWarning)
            found = bootstrap(
                data,
                statistic,
                paired=True,
                vectorized=True,
                n_resamples=RESAMPLES,
                confidence_level=CONFIDENCE,
                method="percentile",
                batch=batch,
                rng=np.random.default_rng(seed),
            )
        return float(found.confidence_interval.low), float(found.confidence_interval.high)

    out = {}
    for j, name in enumerate(columns, start=1):
        out[name] = run((table[:, 0], table[:, j]), lambda c, s, axis=-1: s.sum(axis) / c.sum(axis))
    for name, (cols, statistic) in (extra or {}).items():

        def summed(*parts, axis=-1, statistic=statistic):
            totals = np.stack([p.sum(axis) for p in parts], axis=-1)
            return np.apply_along_axis(statistic, -1, totals)

        out[name] = run(tuple(table[:, c] for c in range(cols.start, cols.stop)), summed)
    return out
