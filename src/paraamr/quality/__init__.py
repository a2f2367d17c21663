"""Paraphrase quality detection (ParaQD) for English paraphrases and ParaAMR corpora.

Meaning-preserving and meaning-changing operators (:mod:`paraamr.quality.operators`) turn plain
sentences into (anchor, positive, negative) triplets (:mod:`paraamr.quality.triplets`); MiniLM is
trained on them (:mod:`paraamr.quality.train`) as a cross-encoder reading both sentences (the
default) or as a ParaQD bi-encoder (cosine of two embeddings), and calibrated so 0.5 is the
threshold; :class:`QualityScorer` loads either; :mod:`paraamr.quality.evaluation` gives the
separation, P/R/F1 at a threshold and per-kind AUC. Heavy libraries load only when a model is used.

>>> from paraamr.quality import QualityScorer, BASE_MODEL
>>> BASE_MODEL
'all-MiniLM-L6-v2'
"""

from paraamr.quality.scorer import BASE_MODEL, DEFAULT_MODEL, QualityScorer

__all__ = ["BASE_MODEL", "DEFAULT_MODEL", "QualityScorer"]
