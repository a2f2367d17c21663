"""Statistics that add up: the Table-2 row as exact sums (integers of 2**-1074, the smallest float)
and counts, and corpus BLEU's summed statistics, so any partition of the pairs gives the same bits.

>>> a, b = RowStats(("bleu_diversity",)), RowStats(("bleu_diversity",))
>>> a.update({"bleu_diversity": [0.1, 0.2]}, chunk=0)
>>> b.update({"bleu_diversity": [0.3]}, chunk=1)
>>> merged = RowStats.from_dict(a.to_dict()).merge(b)
>>> merged.pairs, merged.mean("bleu_diversity") == (0.1 + 0.2 + 0.3) / 3, merged.mean("bleu_diversity")
(3, False, 0.2)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

__all__ = ["ExactSum", "RowStats", "exact"]

_SCALE = 1074  # every finite float is an integer multiple of 2**-1074


def exact(value: float) -> int:
    """``value`` as an exact integer count of 2**-1074 (ValueError for NaN and infinities).

    >>> exact(0.5) == 1 << 1073, exact(-1.0) == -(1 << 1074)
    (True, True)
    """
    if not math.isfinite(value):
        raise ValueError(f"cannot add up a non-finite value ({value})")
    numerator, denominator = float(value).as_integer_ratio()  # denominator: a power of two
    return numerator << (_SCALE + 1 - denominator.bit_length())


class ExactSum:
    """An exact sum of floats and how many were added.

    >>> s = ExactSum.of([0.1] * 10)
    >>> s.mean(), sum([0.1] * 10) / 10, str(s)
    (0.1, 0.09999999999999999, '18014398509481985/18014398509481984 10')
    """

    __slots__ = ("count", "total")

    def __init__(self, total: int = 0, count: int = 0) -> None:
        self.total, self.count = total, count

    @classmethod
    def of(cls, values: Iterable[float]) -> ExactSum:
        """The sum of ``values``."""
        values = list(values)
        return cls(sum(map(exact, values)), len(values))

    def __add__(self, other: ExactSum) -> ExactSum:
        return ExactSum(self.total + other.total, self.count + other.count)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExactSum) and (self.total, self.count) == (other.total, other.count)

    def value(self) -> float:
        """The sum, correctly rounded."""
        return self.total / (1 << _SCALE)

    def mean(self) -> float:
        """The mean, correctly rounded (NaN when nothing was added)."""
        return self.total / (self.count << _SCALE) if self.count else math.nan

    def __str__(self) -> str:
        """``numerator/denominator count``: the exact sum as a reduced fraction, then the count."""
        return f"{Fraction(self.total, 1 << _SCALE)} {self.count}"

    @classmethod
    def parse(cls, text: str) -> ExactSum:
        """The sum :meth:`__str__` wrote."""
        fraction, count = text.split(" ")
        value = Fraction(fraction)
        return cls(value.numerator * ((1 << _SCALE) // value.denominator), int(count))


def _added(a: list[int] | None, b: Sequence[int]) -> list[int]:
    """``a + b`` elementwise (``b`` when ``a`` is None)."""
    return list(b) if a is None else [x + y for x, y in zip(a, b, strict=True)]


class RowStats:
    """A row over some pairs: per measure an :class:`ExactSum` and a 1-unit histogram, corpus-BLEU
    statistics, failure rows, signatures, chunks, timings and, with ``clusters``, each cluster's
    pair count and sums (for the bootstrap)."""

    def __init__(self, measures: Sequence[str], *, clusters: bool = False) -> None:
        self.measures = tuple(measures)
        self.pairs = 0
        self.sums = {m: ExactSum() for m in self.measures}
        self.histograms: dict[str, Counter] = {m: Counter() for m in self.measures}
        self.bleu: list[int] | None = None
        self.clusters: dict[int, list[float]] | None = {} if clusters else None
        self.failures: list[dict[str, Any]] = []
        self.signatures: dict[str, str] = {}
        self.chunks: set[int] = set()
        self.timings: dict[str, float] = {}

    def update(
        self,
        scores: Mapping[str, Sequence[float]],
        *,
        chunk: int,
        bleu: Sequence[Sequence[int]] | None = None,
        clusters: Sequence[int] | None = None,
    ) -> None:
        """Add one chunk's per-pair ``scores``, ``bleu`` statistics and ``clusters``."""
        if chunk in self.chunks:
            raise ValueError(f"chunk {chunk} added twice")
        self.chunks.add(chunk)
        n = len(scores[self.measures[0]]) if self.measures else 0
        for m in self.measures:
            if len(scores[m]) != n:
                raise ValueError(f"{m}: {len(scores[m])} values for {n} pairs")
            self.sums[m] += ExactSum.of(scores[m])
            bin_of = int if m.startswith("ted") else math.floor  # distances; 1-unit bins of the ×100 scale
            self.histograms[m].update(bin_of(v) for v in scores[m])
        self.pairs += n
        if bleu:
            self.bleu = _added(self.bleu, [sum(col) for col in zip(*bleu, strict=True)])
        if self.clusters is not None:
            if clusters is None or len(clusters) != n:
                raise ValueError("the stats keep clusters: give each pair's cluster")
            for i, key in enumerate(clusters):
                row = self.clusters.setdefault(key, [0.0] * (1 + len(self.measures) + len((bleu or [[]])[0])))
                row[0] += 1
                for j, m in enumerate(self.measures, start=1):
                    row[j] += scores[m][i]
                for j, x in enumerate(bleu[i] if bleu is not None else (), start=1 + len(self.measures)):
                    row[j] += x

    def merge(self, other: RowStats) -> RowStats:
        """Add ``other``'s pairs (disjoint chunks, the same measures and signatures); returns self."""
        if other.measures != self.measures:
            raise ValueError(f"cannot merge statistics of {other.measures} into {self.measures}")
        if self.signatures and other.signatures and other.signatures != self.signatures:
            keys = {*self.signatures, *other.signatures}
            differ = ", ".join(sorted(k for k in keys if self.signatures.get(k) != other.signatures.get(k)))
            raise ValueError(f"cannot merge statistics computed differently (signatures of {differ})")
        if self.chunks & other.chunks:
            raise ValueError(f"chunk {min(self.chunks & other.chunks)} is in both statistics")
        if (self.clusters is None) != (other.clusters is None):
            raise ValueError("cannot merge statistics with clusters into statistics without")
        self.signatures = self.signatures or dict(other.signatures)
        self.chunks |= other.chunks
        self.pairs += other.pairs
        for m in self.measures:
            self.sums[m] += other.sums[m]
            self.histograms[m].update(other.histograms[m])
        if other.bleu is not None:
            self.bleu = _added(self.bleu, other.bleu)
        if self.clusters is not None:
            for key, row in other.clusters.items():
                if key in self.clusters:
                    raise ValueError(f"cluster {key} is in both statistics")
                self.clusters[key] = list(row)
        self.failures = sorted([*self.failures, *other.failures], key=lambda f: f.get("index", 0))
        for stage, seconds in other.timings.items():
            self.timings[stage] = self.timings.get(stage, 0.0) + seconds
        return self

    def mean(self, measure: str) -> float:
        """The mean of ``measure`` over the pairs (correctly rounded)."""
        return self.sums[measure].mean()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready state (exact sums as ``numerator/denominator count`` strings)."""
        return {
            "measures": list(self.measures),
            "pairs": self.pairs,
            "sums": {m: str(s) for m, s in self.sums.items()},
            "histograms": {m: {str(b): c for b, c in sorted(h.items())} for m, h in self.histograms.items()},
            "bleu": self.bleu,
            "clusters": None if self.clusters is None else {str(k): v for k, v in self.clusters.items()},
            "failures": self.failures,
            "signatures": self.signatures,
            "chunks": sorted(self.chunks),
            "timings": self.timings,
        }

    @classmethod
    def from_dict(cls, state: Mapping[str, Any]) -> RowStats:
        """The statistics :meth:`to_dict` wrote."""
        stats = cls(state["measures"], clusters=state["clusters"] is not None)
        stats.pairs = int(state["pairs"])
        stats.sums = {m: ExactSum.parse(s) for m, s in state["sums"].items()}
        stats.histograms = {
            m: Counter({int(b): c for b, c in h.items()}) for m, h in state["histograms"].items()
        }
        stats.bleu = state["bleu"]
        if state["clusters"] is not None:
            stats.clusters = {int(k): list(v) for k, v in state["clusters"].items()}
        stats.failures = list(state["failures"])
        stats.signatures = dict(state["signatures"])
        stats.chunks = set(state["chunks"])
        stats.timings = dict(state["timings"])
        return stats
