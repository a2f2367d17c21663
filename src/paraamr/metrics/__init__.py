"""Pure functions behind the evaluate modules in ``metrics/`` (similarity, lexical, TED).

Every result carries a ``signature``: ``key:value`` fields joined by ``|``, sacrebleu style, that
say how it was computed.

>>> format_signature({"tok": "13a", "case": "lc"})
'tok:13a|case:lc|paraamr:...'
>>> mean([1.0, 2.0]), mean([])
(1.5, nan)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def format_signature(fields: Mapping[str, object]) -> str:
    """``fields`` as ``k:v|k:v``, with the paraamr version appended."""
    from paraamr import __version__

    return "|".join([*(f"{k}:{v}" for k, v in fields.items()), f"paraamr:{__version__}"])


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean; NaN for no values."""
    return math.fsum(values) / len(values) if len(values) else math.nan


def check_pairs(predictions: Sequence[object], references: Sequence[object]) -> None:
    """ValueError unless the two lists have the same length."""
    if len(predictions) != len(references):
        raise ValueError(
            "predictions and references must have the same length, "
            f"got {len(predictions)} and {len(references)}"
        )
