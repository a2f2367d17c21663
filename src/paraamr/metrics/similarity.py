"""Semantic similarity: cosine of sentence embeddings ×100 (the paper's scale, Table 2).

The embeddings come from :class:`paraamr.models.embedder.Embedder` (default
all-MiniLM-L6-v2, offline; the paper used supervised SimCSE, ``pooling="cls"``).

>>> class Fixed:  # any object with .similarity(a, b) and .signature
...     signature = "model:fixed"
...     def similarity(self, a, b):
...         return [1.0 if x == y else 0.25 for x, y in zip(a, b)]
>>> semantic_similarity(["a", "b"], ["a", "c"], embedder=Fixed())
([100.0, 25.0], 'model:fixed|scale:x100|paraamr:...')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paraamr.metrics import check_texts, format_signature


def semantic_similarity(
    predictions: Sequence[str], references: Sequence[str], *, embedder: Any
) -> tuple[list[float], str]:
    """Per pair ``100 × cos(embed(prediction), embed(reference))``, and the embedder's signature."""
    check_texts(predictions, references)
    scores = [100.0 * c for c in embedder.similarity(list(predictions), list(references))]
    return scores, format_signature(embedder.signature, {"scale": "x100"})
