"""Edit helpers shared by the quality operators: rendering a spaCy ``Doc`` with tokens replaced or
deleted, tidying the result, casing and pronoun case of moved phrases, article agreement.

>>> tidy("The  cat , sat .")
'The cat, sat.'
>>> changed("he  left.", "He left.", meaning=True) is None, changed("he left.", "He left.", meaning=False)
(True, 'he left.')
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Mapping, Sequence

from paraamr.lexicon import match_case
from paraamr.quality.analysis import parse
from paraamr.quality.inflection import indefinite_article
from paraamr.quality.words import CONTRACTIONS, NO_ADD
from paraamr.records import normalize

__all__ = [
    "APOSTROPHE",
    "OBJECT_CASE",
    "PRONOUN_ONE",
    "SUBJECT_CASE",
    "WH",
    "Operator",
    "article_fix",
    "as_case",
    "bound",
    "changed",
    "is_plural",
    "lower_first",
    "negated",
    "one_edit",
    "only_root",
    "render",
    "reordered",
    "replace_word",
    "sentence_case",
    "span_text",
    "subtree",
    "syntax",
    "tidy",
]

#: ``op(text, rng) -> str | None``: a changed sentence, or None where the operator does not apply.
Operator = Callable[[str, random.Random], "str | None"]


def syntax(op: Callable[..., str | None]) -> Operator:
    """The operator ``op(doc, text, rng)`` over the spaCy parse of ``text``, run as ``op(text, rng)``;
    None without spaCy."""

    @functools.wraps(op)
    def run(text: str, rng: random.Random) -> str | None:
        doc = parse(text)
        return None if doc is None else op(doc, text, rng)

    return run


#: A straight or typographic apostrophe (regular expression).
APOSTROPHE = "['’]"


def tidy(text: str) -> str:
    """Whitespace and commas left clean after tokens were removed or moved."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r",(\s*,)+", ",", text)
    text = re.sub(r"^[,;]\s*", "", text)
    return re.sub(r"[,;]+([.!?])$", r"\1", text)


def render(doc, replace: Mapping[int, str] | None = None, delete: set[int] | frozenset = frozenset()) -> str:
    """The text of ``doc`` with tokens replaced (by index) or deleted, original spacing kept."""
    replace = replace or {}
    pieces = [replace.get(tok.i, tok.text) + tok.whitespace_ for tok in doc if tok.i not in delete]
    return tidy("".join(pieces))


def span_text(span) -> str:
    return "".join(tok.text_with_ws for tok in span).strip()


def subtree(tok):
    """The span a token heads: the token and all its dependents (a whole noun phrase)."""
    return tok.doc[tok.left_edge.i : tok.right_edge.i + 1]


def reordered(doc, start: int, end: int, parts: Sequence[str]) -> str:
    """``doc`` with its tokens ``start:end`` replaced by ``parts`` (joined by spaces), tidied."""
    before = "".join(tok.text_with_ws for tok in doc[:start])
    after = "".join(tok.text_with_ws for tok in doc[end:])
    return tidy(f"{before}{' '.join(parts)} {after}")


def sentence_case(text: str, original: str) -> str:
    """``text`` with its first letter upper-cased when ``original`` started with one."""
    if original[:1].isupper() and text:
        return text[:1].upper() + text[1:]
    return text


_NAMES = {"PERSON", "GPE", "ORG", "NORP", "LOC", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LANGUAGE"}


def lower_first(span) -> str:
    """A span's text with its first letter lower-cased, unless it starts with a name or ``I``."""
    text = span_text(span)
    first = span[0]
    if first.pos_ == "PROPN" or first.text == "I" or first.ent_type_ in _NAMES or first.text.isupper():
        return text
    return text[:1].lower() + text[1:]


def article_fix(doc, index: int, new_word: str) -> dict[int, str]:
    """Replace ``a``/``an`` right before token ``index`` so it agrees with ``new_word``."""
    if index > 0 and doc[index - 1].lower_ in ("a", "an"):
        article = doc[index - 1]
        return {article.i: match_case(indefinite_article(new_word), article.text)}
    return {}


def replace_word(
    doc, candidates: list, rng: random.Random, text: str, *, meaning: bool, count: int = 1
) -> str | None:
    """Replace ``count`` (or as many as there are) ``(token, [forms])`` candidates by one of their
    forms each, cased like the token, articles fixed."""
    if not candidates:
        return None
    # one word: rng.choice, as every one-word operator always drew (rng.sample draws differently)
    chosen = [rng.choice(candidates)] if count == 1 else rng.sample(candidates, min(count, len(candidates)))
    replace = {}
    for tok, forms in chosen:
        new = rng.choice(forms)
        replace |= {tok.i: match_case(new, tok.text), **article_fix(doc, tok.i, new)}
    return changed(render(doc, replace), text, meaning=meaning)


def only_root(doc):
    """The one ``ROOT`` token of ``doc``, or None (no parse, or not one root)."""
    roots = [tok for tok in doc if tok.dep_ == "ROOT"] if doc is not None else []
    return roots[0] if len(roots) == 1 else None


def one_edit(
    text: str, edits: Sequence[tuple[int, int, str]], rng: random.Random, *, meaning: bool
) -> str | None:
    """``text`` with one ``(start, end, new)`` of ``edits`` (drawn with ``rng``) made, as :func:`changed`."""
    if not edits:
        return None
    start, end, new = rng.choice(edits)
    return changed(text[:start] + new + text[end:], text, meaning=meaning)


def changed(new: str | None, text: str, *, meaning: bool) -> str | None:
    """``new`` if it differs from ``text`` (after :func:`normalize` when ``meaning`` must change)."""
    if not new:
        return None
    same = normalize(new) == normalize(text) if meaning else new == text
    return None if same else new


OBJECT_CASE = {"i": "me", "he": "him", "she": "her", "we": "us", "they": "them"}


SUBJECT_CASE = {v: k for k, v in OBJECT_CASE.items()}


WH = {"who", "whom", "which", "that", "what", "whoever", "whatever"}


#: Reflexives: bound to another argument wherever they occur in a phrase (``a fool of himself``).
_REFLEXIVE = frozenset(
    {"myself", "yourself", "himself", "herself", "itself", "ourselves", "yourselves", "themselves", "oneself"}
)
#: Bound only as the whole phrase: reciprocals and let's ``'s`` (a possessive ``'s`` inside a
#: phrase, ``John's cat``, binds nothing).
_BOUND_PHRASES = frozenset({"each other", "one another", "'s"})


def bound(span) -> bool:
    """Whether a noun phrase is bound to another argument, so the two cannot trade places: a
    reflexive anywhere in it, or a reciprocal or let's ``'s`` as the whole phrase (not a possessive)."""
    text = span.text.lower().replace("\N{RIGHT SINGLE QUOTATION MARK}", "'")
    return text in _BOUND_PHRASES or any(tok.lower_ in _REFLEXIVE for tok in span)


def as_case(span, table: Mapping[str, str], *, first: bool) -> str:
    """A noun phrase moved to another grammatical role: pronoun case changed, sentence-initial case."""
    if len(span) == 1 and span[0].lower_ in table:
        word = table[span[0].lower_]
        word = "I" if word == "i" else word
    else:
        word = lower_first(span)
    return word[:1].upper() + word[1:] if first else word


def is_plural(head) -> bool:
    """Whether a noun phrase headed by ``head`` takes plural agreement."""
    return (
        head.tag_ in ("NNS", "NNPS")
        or head.lower_ in ("we", "they", "you", "us", "them", "i", "me")
        or any(child.dep_ == "conj" for child in head.children)
    )


#: ``one`` used as a pronoun after these words (``no one``, ``the one``): not a number.
PRONOUN_ONE = re.compile(r"\b(no|any|every|some|the|this|that|which|each|little)\s+$", re.IGNORECASE)


#: The contracted negation of each auxiliary that has one ("is" -> "isn't", "can" -> "can't").
_SHORT_NOT = {
    expanded.removesuffix("not").strip(): short  # "do not" -> "do", "cannot" -> "can"
    for expanded, short, _ in CONTRACTIONS
    if expanded.endswith("not")
}


def _not(word: str, short: bool) -> str:
    """``word`` negated: ``is not`` / ``isn't`` (``short``), ``cannot`` / ``can't``; the case kept.

    >>> _not("Is", False), _not("is", True), _not("can", False), _not("Can", True), _not("am", True)
    ('Is not', "isn't", 'cannot', "Can't", 'am not')
    """
    contracted = _SHORT_NOT.get(word.lower()) if short else None
    if contracted:
        return match_case(contracted, word)
    return f"{word}not" if word.lower() == "can" else f"{word} not"


def negated(
    doc, rng: random.Random, *, verb: str | None = None, replace: Mapping[int, str] | None = None
) -> str | None:
    """The sentence of ``doc`` with a negation added to its main verb, half of the time contracted,
    or None where there is one already, no single main verb or no parse. ``verb`` is the base form a
    simple-tense main verb takes instead of its own lemma; ``replace`` puts other words in by index.
    """
    root = only_root(doc)
    if root is None or any(tok.lower_ in NO_ADD for tok in doc):
        return None
    short = rng.random() < 0.5
    base = verb or root.lemma_.lower()
    auxiliaries = [c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i]
    if auxiliaries:
        new = {auxiliaries[0].i: _not(auxiliaries[0].text, short)}
    elif root.pos_ == "AUX" or root.lemma_ == "be":
        new = {root.i: _not(root.text, short)}
    elif root.pos_ == "VERB" and root.tag_ in ("VBD", "VBZ", "VBP"):
        helper = _not({"VBD": "did", "VBZ": "does", "VBP": "do"}[root.tag_], short)
        first = root.i  # "he quickly opened" -> "he did not quickly open"
        while first > 0 and doc[first - 1].dep_ == "advmod" and doc[first - 1].head == root:
            first -= 1
        new = {first: f"{helper} {doc[first].text}", root.i: base}
        if first == root.i:
            new = {root.i: f"{helper} {base}"}
    elif root.pos_ == "VERB" and root.tag_ == "VB" and root.i == 0:  # an imperative
        new = {root.i: f"{_not('Do', short)} {root.lower_}"}
    else:
        return None
    return render(doc, {**(replace or {}), **new})
