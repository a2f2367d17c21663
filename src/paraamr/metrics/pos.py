"""A part-of-speech layer for trees without one (link-grammar's): Penn tags from spaCy's tagger.

Link-grammar's trees have no preterminal above each word (CoreNLP's, which published TED numbers
use, do). :func:`add_preterminals` wraps each word in ``(TAG word)`` with the tag of the spaCy
token at its first character; words are found case-blind from where the previous one ended, and
one not found takes the next token's tag.

>>> tokens = [(0, 3, "DT"), (4, 7, "NN"), (8, 11, "VBD"), (11, 12, ".")]
>>> add_preterminals("(ROOT (S (NP the cat) (VP sat) .))", "The cat sat.", tokens)
'(ROOT (S (NP (DT the) (NN cat)) (VP (VBD sat)) (. .)))'
>>> print(add_preterminals("(ROOT (S (NP I) (VP don't (VP go)) .))", "I don't go.",
...                  [(0, 1, "PRP"), (2, 4, "VBP"), (4, 7, "RB"), (8, 10, "VB"), (10, 11, ".")]))
(ROOT (S (NP (PRP I)) (VP (VBP don't) (VP (VB go))) (. .)))
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from functools import cache
from importlib.metadata import PackageNotFoundError, version

from paraamr.metrics.trees import TOKEN, join_tokens

__all__ = ["PosTagger", "add_preterminals"]

#: A token's start and end offsets in its sentence and its Penn tag.
Token = tuple[int, int, str]

_OPEN = {"-LRB-": "([{", "-RRB-": ")]}"}
#: How far past the previous word a word may be found (skipped quotes, dropped punctuation).
_WINDOW = 40


def _find(word: str, lowered: str, cursor: int) -> tuple[int, int] | None:
    """Start and end of ``word`` in ``lowered`` at or after ``cursor`` (within :data:`_WINDOW`)."""
    if word in _OPEN:
        for at in range(cursor, min(len(lowered), cursor + _WINDOW)):
            if lowered[at] in _OPEN[word]:
                return at, at + 1
        return None
    at = lowered.find(word.lower(), cursor, cursor + _WINDOW + len(word))
    return None if at < 0 else (at, at + len(word))


def add_preterminals(tree: str, sentence: str, tokens: Sequence[Token]) -> str:
    """``tree`` (a bracket string over the words of ``sentence``) with ``(TAG word)`` for each word."""
    lowered = sentence.lower()
    cursor, t = 0, 0
    parts: list[str] = []
    after_open = False
    for piece in TOKEN.findall(tree):
        if piece in "()" or after_open:  # a bracket or a label
            parts.append(piece)
            after_open = piece == "("
            continue
        span = _find(piece, lowered, cursor)
        start = span[0] if span else cursor
        while t < len(tokens) - 1 and tokens[t][1] <= start:
            t += 1
        tag = tokens[t][2] if tokens else "XX"
        cursor = span[1] if span else (tokens[t][1] if tokens else cursor)
        parts.append(f"({tag} {piece})")
    return join_tokens(parts)


class PosTagger:
    """Penn tags from the tagger of the spaCy pipeline ``model`` (None: the first installed of
    :data:`paraamr.models.realizer.SPACY_MODELS`), loaded on the first :meth:`tag`."""

    def __init__(self, model: str | None = None) -> None:
        from paraamr.models.realizer import SPACY_MODELS

        for name in [model] if model is not None else SPACY_MODELS:
            with contextlib.suppress(PackageNotFoundError):
                self.name = f"spacy:{name}-{version(name)}"
                break
        else:
            raise FileNotFoundError(
                f"no spaCy English pipeline ({model or ' or '.join(SPACY_MODELS)}) for the POS layer: "
                "pip install 'paraamr[metrics]' (or leave the layer out: --no-pos; in Python, the parser "
                "link-grammar:no-pos)"
            )
        self.model = name

    def tag(self, sentences: Sequence[str]) -> list[list[Token]]:
        """Per sentence, its tokens as (start, end, Penn tag)."""
        docs = _pipeline(self.model).pipe(sentences, batch_size=256)
        return [[(w.idx, w.idx + len(w.text), w.tag_) for w in doc] for doc in docs]


@cache
def _pipeline(model: str):
    """The spaCy pipeline ``model`` with only what tagging needs, loaded once per process."""
    import spacy

    return spacy.load(model, exclude=["parser", "ner", "lemmatizer", "senter"])
