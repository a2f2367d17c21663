"""A similarity gate: keep an operator's output only where a sentence encoder finds it close.

WordNet lists a word's synonyms by sense, and a rule cannot tell the sense a sentence uses: the
``synonym`` operator's first-sense synonyms often mean something else in context (``a long time
ago`` → ``a long clip ago``, ``the police are searching`` → ``the laws are searching``,
``children`` → ``minors``). Trained as positives, such pairs teach the model that replacing a word
by another keeps the meaning, which is what the noun and antonym negatives do. A sentence encoder
trained on a billion sentence pairs (all-MiniLM-L6-v2, the model the scorer starts from) knows
which substitutions keep a sentence close: :class:`SimilarityGate` keeps an output only when the
cosine of its embedding and its input's reaches ``minimum``.

>>> import numpy as np
>>> vectors = {"a big dog": [1.0, 0.0], "a large dog": [0.96, 0.28], "a big clip": [0.6, 0.8]}
>>> gate = SimilarityGate(lambda texts: np.array([vectors[t] for t in texts]), minimum=0.9)
>>> grow = gate.gated(lambda text, rng: {"a big dog": "a large dog", "a large dog": "a big clip"}[text])
>>> grow("a big dog", None), grow("a large dog", None), gate.counts
('a large dog', None, {'kept': 1, 'dropped': 1})
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

import numpy as np

from paraamr.quality.edits import Operator

__all__ = ["SYNONYM_MIN_SIMILARITY", "SimilarityGate"]

#: Default cosine an operator's output needs with its input under all-MiniLM-L6-v2 (``quality
#: train --synonym-min-similarity``): about half of the synonym operator's outputs reach it.
SYNONYM_MIN_SIMILARITY = 0.9


class SimilarityGate:
    """Gate operators by the cosine of ``encode``'s embeddings (``encode(texts) -> array`` of
    L2-normalized rows, as :meth:`~paraamr.quality.scorer.QualityScorer.encode` gives) of an output
    and its input; embeddings are cached by text."""

    def __init__(self, encode: Callable[[list[str]], np.ndarray], minimum: float) -> None:
        self.encode = encode
        self.minimum = minimum
        self.counts = {"kept": 0, "dropped": 0}
        self._cache: dict[str, np.ndarray] = {}

    def prime(self, texts: Iterable[str]) -> None:
        """Embed ``texts`` not seen yet in one batch (the anchors, before the operators run)."""
        new = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if new:
            for text, vector in zip(new, self.encode(new), strict=True):
                self._cache[text] = vector

    def similarity(self, a: str, b: str) -> float:
        """Cosine of the embeddings of ``a`` and ``b``."""
        self.prime((a, b))
        return float(np.dot(self._cache[a], self._cache[b]))

    def gated(self, op: Operator) -> Operator:
        """``op`` that returns None where its output's similarity to its input is below ``minimum``."""

        def gated_op(text: str, rng: random.Random) -> str | None:
            out = op(text, rng)
            if out is None:
                return None
            keep = self.similarity(text, out) >= self.minimum
            self.counts["kept" if keep else "dropped"] += 1
            return out if keep else None

        return gated_op
