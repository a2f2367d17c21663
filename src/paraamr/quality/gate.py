"""A similarity gate: keep an operator's output only where a sentence encoder finds it close.

WordNet's first-sense synonyms often mean something else in context (``a long time ago`` → ``a
long clip ago``).

>>> import numpy as np
>>> vectors = {"a big dog": [1.0, 0.0], "a large dog": [0.96, 0.28], "a big clip": [0.6, 0.8]}
>>> gate = SimilarityGate(lambda texts: np.array([vectors[t] for t in texts]), minimum=0.9)
>>> gate([("synonym", "a big dog", "a large dog"), ("synonym", "a large dog", "a big clip"),
...       ("typo", "a big dog", "a big clip")]), gate.counts
([True, False, True], {'kept': 1, 'dropped': 1})
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

__all__ = ["SYNONYM_MIN_SIMILARITY", "SimilarityGate"]

#: The operators whose outputs the gate judges (the others' are always kept).
GATED = frozenset({"synonym", "phrase_synonym"})

#: Default cosine an operator's output needs with its input under all-MiniLM-L6-v2 (``quality
#: train --synonym-min-similarity``): about half of the synonym operator's outputs reach it.
SYNONYM_MIN_SIMILARITY = 0.9


class SimilarityGate:
    """Gate the outputs of :data:`GATED` operators by the cosine of ``encode``'s embeddings (``encode(texts)
    -> array`` of L2-normalized rows, as :meth:`~paraamr.quality.scorer.QualityScorer.encode`
    gives) of an output and its input; embeddings are cached by text."""

    def __init__(self, encode: Callable[[list[str]], np.ndarray], minimum: float) -> None:
        self.encode = encode
        self.minimum = minimum
        self.counts = {"kept": 0, "dropped": 0}
        self._cache: dict[str, np.ndarray] = {}

    def prime(self, texts: Iterable[str]) -> None:
        """Embed ``texts`` not seen yet in one batch (the anchors, before the operators run)."""
        new = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if new:
            self._cache.update(zip(new, self.encode(new), strict=True))

    def similarity(self, a: str, b: str) -> float:
        """Cosine of the embeddings of ``a`` and ``b``."""
        self.prime((a, b))
        return float(np.dot(self._cache[a], self._cache[b]))

    def __call__(self, outputs: Sequence[tuple[str, str, str]]) -> list[bool]:
        """Whether to keep each ``(operator, input, output)``: always for an operator not gated, else
        where the cosine of output and input reaches ``minimum``."""
        judged = [(a, b) if name in GATED else None for name, a, b in outputs]
        self.prime(text for pair in judged if pair for text in pair)
        kept = [pair is None or self.similarity(*pair) >= self.minimum for pair in judged]
        for pair, keep in zip(judged, kept, strict=True):
            if pair:
                self.counts["kept" if keep else "dropped"] += 1
        return kept
