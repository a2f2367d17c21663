"""Paraphrase quality detection (ParaQD) for English paraphrases and ParaAMR corpora.

Operators (:mod:`~paraamr.quality.operators`) make (anchor, positive, negative) triplets
(:mod:`~paraamr.quality.triplets`) on which MiniLM is trained (:mod:`~paraamr.quality.train`) as a
cross-encoder or a bi-encoder; :class:`QualityScorer` loads either; figures are in
:mod:`~paraamr.quality.evaluation`. Heavy libraries load only when a model is used.

>>> from paraamr.quality import QualityScorer, BASE_MODEL
>>> BASE_MODEL
'all-MiniLM-L6-v2'
"""

from typing import Any

__all__ = ["BASE_MODEL", "DEFAULT_MODEL", "QualityScorer"]


def __getattr__(name: str) -> Any:
    """The scorer's names, imported on first use: so ``python -m paraamr.quality.mpnet`` runs a
    module that importing this package has not imported already (runpy warns of that)."""
    if name not in __all__:
        raise AttributeError(f"module 'paraamr.quality' has no attribute {name!r}")
    from paraamr.quality import scorer

    return getattr(scorer, name)
