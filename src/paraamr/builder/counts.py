"""The counts of a run (:class:`Stats`), tallied window by window and added up over its tasks.

>>> a, b = Stats(inputs=2, records=1, failures=Counter(input=1)), Stats(inputs=1, records=1)
>>> a.merge(b)
>>> Stats.from_dict(a.as_dict()) == a, a.as_dict()["failures"]
(True, 1)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["Stats"]


@dataclass
class Stats:
    """Counts of one run: inputs, records, failures by stage, candidates dropped by reason, seconds by
    stage, candidates realized from a ``tagged`` or ``untagged`` input."""

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
        """The inverse of :meth:`as_dict`; ValueError when ``d`` is not such counts.

        >>> Stats.from_dict({"inputs": "2"})
        Traceback (most recent call last):
        ...
        ValueError: not a run's counts ('records' is missing)
        """
        try:
            ints = [d[k] for k in ("inputs", "records", "candidates", "paraphrases")]
            by = ("failures_by_stage", "dropped_by_reason", "seconds_by_stage")
            counters = [Counter(dict(d[k])) for k in by] + [Counter(dict(d.get("realized_by_input", {})))]
        except KeyError as err:  # realized_by_input: absent in the counts of older runs
            raise ValueError(f"not a run's counts ({err} is missing)") from None
        except (TypeError, ValueError, AttributeError):
            raise ValueError("not a run's counts (not an object of counts)") from None
        numbers = [*ints, *(v for c in counters for v in c.values())]
        if any(type(v) is not int for v in ints) or any(type(v) not in (int, float) for v in numbers):
            raise ValueError("not a run's counts (a count is not a number)")
        return cls(*ints, *counters)

    def merge(self, other: Stats) -> None:
        """Add ``other``'s counts to these."""
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, Counter):
                mine.update(theirs)
            else:
                setattr(self, f.name, mine + theirs)
