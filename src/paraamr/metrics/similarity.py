"""Semantic similarity: cosine of sentence embeddings ×100 (the paper's scale, Table 2).

The embeddings come from :class:`paraamr.models.embedder.Embedder` (the paper: supervised SimCSE).

>>> class Fixed:  # any object with .similarity(a, b) and .signature
...     signature = "model:fixed"
...     def similarity(self, a, b):
...         return [1.0 if x == y else 0.25 for x, y in zip(a, b)]
>>> scores, sig = semantic_similarity(["a", "b"], ["a", "c"], embedder=Fixed())
>>> scores, str(sig)
([100.0, 25.0], 'model:fixed|scale:x100|paraamr:...')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paraamr.metrics import check_texts, signature
from paraamr.signature import Signature

__all__ = ["semantic_similarity"]


def semantic_similarity(
    predictions: Sequence[str], references: Sequence[str], *, embedder: Any
) -> tuple[list[float], Signature]:
    """Per pair ``100 × cos(embed(prediction), embed(reference))``, and the embedder's signature."""
    check_texts(predictions, references)
    scores = [100.0 * c for c in embedder.similarity(list(predictions), list(references))]
    return scores, signature(embedder.signature, scale="x100")
