"""Pure functions behind the evaluate modules in ``metrics/`` (similarity, lexical, TED).

Every result carries a :class:`~paraamr.signature.Signature` saying how it was computed.

>>> str(signature("nrefs:1|tok:13a", {"case": "lc"}))
'nrefs:1|tok:13a|case:lc|paraamr:...'
>>> mean([1.0, 2.0]), mean([])
(1.5, nan)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from paraamr import __version__
from paraamr.signature import Signature
from paraamr.texts import refuse_one_string

__all__ = ["check_pairs", "check_texts", "mean", "signature"]


def signature(*parts: Signature | str | Mapping[str, object], **fields: object) -> Signature:
    """The fields of ``parts`` (signatures, their strings, mappings) and ``fields`` in order, then
    ``paraamr:<version>``: see :meth:`Signature.extend`."""
    return Signature().extend(*parts, fields, paraamr=__version__)


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean; NaN for no values."""
    return math.fsum(values) / len(values) if len(values) else math.nan


def check_pairs(predictions: Sequence[object], references: Sequence[object]) -> None:
    """ValueError unless the two lists have the same length (TypeError for one string)."""
    refuse_one_string(predictions, "predictions")
    refuse_one_string(references, "references")
    if len(predictions) != len(references):
        raise ValueError(
            "predictions and references must have the same length, "
            f"got {len(predictions)} and {len(references)}"
        )


def check_texts(predictions: Sequence[object], references: Sequence[object]) -> None:
    """:func:`check_pairs`, and ValueError naming the pair unless every item is a string."""
    check_pairs(predictions, references)
    for name, texts in (("prediction", predictions), ("reference", references)):
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValueError(f"pair {i} {name}: expected str, got {type(text).__name__}")
