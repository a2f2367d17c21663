"""Paraphrase quality detection (ParaQD) for English paraphrases and ParaAMR corpora.

Operators (:mod:`~paraamr.quality.operators`) make (anchor, positive, negative) triplets
(:mod:`~paraamr.quality.triplets`) on which MiniLM is trained (:mod:`~paraamr.quality.train`) as a
cross-encoder or a bi-encoder; :class:`QualityScorer` loads either; figures are in
:mod:`~paraamr.quality.evaluation`. Heavy libraries load only when a model is used.

>>> from paraamr.quality import QualityScorer, BASE_MODEL
>>> BASE_MODEL
'all-MiniLM-L6-v2'
"""

from paraamr.quality.scorer import BASE_MODEL, DEFAULT_MODEL, QualityScorer

__all__ = ["BASE_MODEL", "DEFAULT_MODEL", "QualityScorer"]
