"""Per-item failures of batch stages.

Batch methods return, for each item, either its value or a :class:`Failure`; one bad item never
loses the others.

>>> f = Failure("parse", "no beam deserialized")
>>> str(f)
'parse: no beam deserialized'
>>> [x for x in [1, f, 2] if not is_failure(x)]
[1, 2]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Failure:
    """Why one item failed: the ``stage`` (parse, refocus, realize, perplexity, ...) and a ``reason``."""

    stage: str
    reason: str

    def __str__(self) -> str:
        return f"{self.stage}: {self.reason}"


def is_failure(value: Any) -> bool:
    """True when ``value`` is a :class:`Failure`."""
    return isinstance(value, Failure)
