"""Paraphrase quality detection (ParaQD) for English paraphrases and ParaAMR corpora.

Meaning-preserving and meaning-changing operators (:mod:`paraamr.quality.operators`) turn plain
sentences into (anchor, positive, negative) triplets (:mod:`paraamr.quality.triplets`); a MiniLM
sentence encoder fine-tuned on them with triplet loss (:mod:`paraamr.quality.train`) scores a pair
by the cosine of its embeddings (:class:`QualityScorer`); :mod:`paraamr.quality.evaluation` gives
the separation and P/R/F1 at a threshold. Heavy libraries load only when a model is used.

>>> from paraamr.quality import QualityScorer, BASE_MODEL
>>> BASE_MODEL
'all-MiniLM-L6-v2'
"""

from paraamr.quality.scorer import BASE_MODEL, QualityScorer

__all__ = ["BASE_MODEL", "QualityScorer"]
