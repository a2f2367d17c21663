"""The counts of a run (:class:`Stats`): what the pipeline tallies window by window, what each
writer commits in its state, and what ``finalize`` adds up over every writer of a run.

>>> a, b = Stats(inputs=2, records=1, failures=Counter(input=1)), Stats(inputs=1, records=1)
>>> a.merge(b)
>>> Stats.from_dict(a.as_dict()) == a, a.as_dict()["failures"]
(True, 1)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Stats"]


@dataclass
class Stats:
    """Counts of one run: inputs, records, failures by stage, candidates dropped by reason, seconds by
    stage, candidates realized from a ``tagged`` or ``untagged`` input (a realizer with
    ``realize_items``; a graph without ``# ::snt`` goes in untagged whatever ``--tagging`` says).
    ``merge`` adds another run's counts (the summary of several processes)."""

    inputs: int = 0
    records: int = 0
    candidates: int = 0
    paraphrases: int = 0
    failures: Counter = field(default_factory=Counter)
    dropped: Counter = field(default_factory=Counter)
    seconds: Counter = field(default_factory=Counter)
    realized: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready counts."""
        return {
            "inputs": self.inputs,
            "records": self.records,
            "failures": sum(self.failures.values()),
            "candidates": self.candidates,
            "paraphrases": self.paraphrases,
            "failures_by_stage": dict(self.failures),
            "dropped_by_reason": dict(self.dropped),
            "seconds_by_stage": {k: round(v, 3) for k, v in self.seconds.items()},
            "realized_by_input": dict(self.realized),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Stats:
        """The inverse of :meth:`as_dict`."""
        return cls(
            d["inputs"],
            d["records"],
            d["candidates"],
            d["paraphrases"],
            Counter(d["failures_by_stage"]),
            Counter(d["dropped_by_reason"]),
            Counter(d["seconds_by_stage"]),
            Counter(d.get("realized_by_input", {})),  # absent in states of older runs
        )

    def merge(self, other: Stats) -> None:
        """Add ``other``'s counts to these."""
        self.inputs += other.inputs
        self.records += other.records
        self.candidates += other.candidates
        self.paraphrases += other.paraphrases
        self.failures.update(other.failures)
        self.dropped.update(other.dropped)
        self.seconds.update(other.seconds)
        self.realized.update(other.realized)
