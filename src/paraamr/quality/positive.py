"""Meaning-preserving (positive) operators: each ``op(text, rng) -> str | None`` keeps the meaning.

``synonym`` (syntax; WordNet first-sense synonym), ``contraction`` (contract or expand one safe
contraction), ``punctuation_case`` (final period, casing), ``passive_voice`` (syntax; active S-V-O
to passive), ``front_adverbial`` (syntax; move a time, place or clause modifier between the front
and the end), ``typo`` (one keyboard slip), ``number_format`` (``5`` <-> ``five``, ``1,000`` <->
``1000``), and :func:`paraamr_paraphrase`, built from ParaAMR records. *Syntax* operators use
the optional spaCy parse (:mod:`paraamr.quality.analysis`) and return None without spaCy.

>>> import random
>>> contraction("I do not know.", random.Random(0))
"I don't know."
>>> typo("The meeting starts at noon.", random.Random(3))
'The meetig starts at noon.'
>>> number_format("She has 3 cats and twelve hens.", random.Random(0))
'She has 3 cats and 12 hens.'
>>> number_format("It cost 1,500 dollars.", random.Random(0))
'It cost 1500 dollars.'

"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

from paraamr.lexicon import WORDNET_POS, irregular_verbs, match_case, synonyms
from paraamr.quality.analysis import parse
from paraamr.quality.edits import (
    APOSTROPHE,
    OBJECT_CASE,
    PRONOUN_ONE,
    SUBJECT_CASE,
    WH,
    Operator,
    as_case,
    changed,
    is_plural,
    lower_first,
    replace_word,
    sentence_case,
    span_text,
    tidy,
)
from paraamr.quality.inflection import IRREGULAR, inflect_like, past_participle
from paraamr.quality.words import (
    CONTRACTIONS,
    KEYBOARD,
    LIGHT_VERBS,
    MOVABLE_PREPS,
    NUMBER_WORDS,
    STATIVE,
    TIME_ADVERBS,
)
from paraamr.records import normalize

__all__ = [
    "contraction",
    "front_adverbial",
    "number_format",
    "paraamr_paraphrase",
    "passive_voice",
    "punctuation_case",
    "synonym",
    "typo",
]


def synonym(text: str, rng: random.Random) -> str | None:
    """Replace one or two content words by a WordNet synonym of their first sense (syntax).

    Base forms are replaced as they are; plurals and verbs in the past, past participle or third
    person are inflected like the word they replace (verbs WordNet knows as irregular only when
    :data:`~paraamr.quality.inflection.IRREGULAR` has them), so the result stays grammatical.
    """
    doc = parse(text)
    if doc is None:
        return None
    candidates = []
    for tok in doc:
        pos = WORDNET_POS.get(tok.pos_)
        if pos is None or tok.ent_type_ or tok.is_stop or not tok.is_alpha or tok.lemma_ in LIGHT_VERBS:
            continue
        lemma = tok.lemma_.lower()
        if tok.tag_ in ("NN", "JJ", "RB", "VB", "VBP") and tok.lower_ == lemma:
            forms = list(synonyms(lemma, pos, first_sense=True, attested=True))
        elif tok.tag_ in ("NNS", "VBD", "VBN", "VBZ"):  # inflected like the word: "called" -> "phoned"
            forms = [
                form
                for word in synonyms(lemma, pos, first_sense=True, attested=True)
                if (word in IRREGULAR or pos != "v" or word not in irregular_verbs())
                and (form := inflect_like(tok.tag_, word))
            ]
        else:
            continue
        if forms:
            candidates.append((tok, forms))
    return replace_word(doc, candidates, rng, text, meaning=False, count=rng.choice((1, 2)))


def _contraction_patterns() -> list[tuple[re.Pattern, str]]:
    """(pattern, replacement) of each direction of each contraction, compiled once."""
    pairs = []
    for expanded, contracted, direction in CONTRACTIONS:
        if direction in ("both", "contract"):
            pairs.append((r"\b" + r"\s+".join(expanded.split()) + r"\b", contracted))
        if direction in ("both", "expand"):
            pairs.append((r"\b" + re.escape(contracted).replace("'", APOSTROPHE) + r"\b", expanded))
    return [(re.compile(pattern, re.IGNORECASE), new) for pattern, new in pairs]


_CONTRACTION_PATTERNS = _contraction_patterns()


def _contraction_edits(text: str) -> list[tuple[int, int, str]]:
    edits = []
    for pattern, new in _CONTRACTION_PATTERNS:
        for match in pattern.finditer(text):
            found = match.group()
            new_text = new if new.startswith("I") else match_case(new, found[:1] + "x")
            edits.append((match.start(), match.end(), new_text))
    return sorted(edits)


def contraction(text: str, rng: random.Random) -> str | None:
    """Contract one expanded form (``do not`` -> ``don't``) or expand one contraction."""
    edits = _contraction_edits(text)
    if not edits:
        return None
    start, end, new = rng.choice(edits)
    return changed(text[:start] + new + text[end:], text, meaning=False)


def punctuation_case(text: str, rng: random.Random) -> str | None:
    """Drop or add the final period, drop the commas, lower-case, or capitalize the first letter."""
    if not re.search(r"\w", text):
        return None
    stripped = text.strip()
    variants = []
    if stripped.endswith(".") and not stripped.endswith(".."):
        variants.append(stripped[:-1])
    if stripped[-1:].isalnum():
        variants.append(stripped + ".")
    if any(ch.isupper() for ch in stripped):
        variants.append(stripped.lower())
    if stripped[:1].islower():
        variants.append(stripped[:1].upper() + stripped[1:])
    if "," in stripped:
        variants.append(tidy(stripped.replace(",", "")))
    variants = [v for v in variants if v != text]
    return rng.choice(variants) if variants else None


_BLOCKS_PASSIVE = {"aux", "auxpass", "neg", "nsubjpass", "dative", "ccomp", "xcomp", "prt", "conj", "expl"}


_CVC = re.compile(r"[^aeiou][aeiou][^aeiouwxy]$")


def passive_voice(text: str, rng: random.Random) -> str | None:
    """Turn a simple-tense active clause ``S V O ...`` into ``O was V-en by S ...`` (syntax)."""
    doc = parse(text)
    if doc is None:
        return None
    roots = [tok for tok in doc if tok.dep_ == "ROOT"]
    if len(roots) != 1:
        return None
    verb = roots[0]
    children = list(verb.children)
    if (
        verb.pos_ != "VERB"
        or verb.tag_ not in ("VBD", "VBZ", "VBP")
        or _BLOCKS_PASSIVE & {c.dep_ for c in children}
    ):
        return None
    subjects = [c for c in children if c.dep_ == "nsubj"]
    objects = [c for c in children if c.dep_ == "dobj"]
    if len(subjects) != 1 or len(objects) != 1:
        return None
    subj, obj = subjects[0], objects[0]
    s_span = doc[subj.left_edge.i : subj.right_edge.i + 1]
    o_span = doc[obj.left_edge.i : obj.right_edge.i + 1]
    if (
        s_span.end != verb.i
        or o_span.start != verb.i + 1
        or {subj.lower_, obj.lower_} & (WH | {"it", "there"})
    ):
        return None
    lemma = verb.lemma_.lower()
    if lemma in STATIVE:
        return None
    if verb.tag_ == "VBD":
        participle = past_participle(lemma, verb.lower_)
    elif lemma in IRREGULAR or not _CVC.search(lemma):
        participle = past_participle(lemma)
    else:
        return None
    plural = is_plural(obj)
    if obj.lower_ in ("i", "me"):
        be = "was" if verb.tag_ == "VBD" else "am"
    elif verb.tag_ == "VBD":
        be = "were" if plural else "was"
    else:
        be = "are" if plural else "is"
    prefix = "".join(tok.text_with_ws for tok in doc[: s_span.start])
    suffix = "".join(tok.text_with_ws for tok in doc[o_span.end :])
    patient = as_case(o_span, SUBJECT_CASE, first=not prefix)
    agent = as_case(s_span, OBJECT_CASE, first=False)
    new = f"{prefix}{patient} {be} {participle} by {agent} {suffix}"
    return changed(tidy(new), text, meaning=False)


def _movable(tok) -> bool:
    if tok.dep_ == "prep":
        return tok.lower_ in MOVABLE_PREPS
    if tok.dep_ == "advmod":
        return tok.lower_ in TIME_ADVERBS or (tok.lower_.endswith("ly") and tok.lower_ != "only")
    return tok.dep_ in ("npadvmod", "advcl")


def front_adverbial(text: str, rng: random.Random) -> str | None:
    """Move a time, place or clause modifier of the main verb to the front, or from the front to the end.

    ``The shop closes at noon.`` <-> ``At noon, the shop closes.`` (syntax).
    """
    doc = parse(text)
    if doc is None or len(doc) < 4:
        return None
    end = len(doc) - 1 if doc[-1].is_punct else len(doc)
    final = doc[end].text if end < len(doc) else ""
    roots = [tok for tok in doc if tok.dep_ == "ROOT"]
    if len(roots) != 1:
        return None
    root = roots[0]
    variants = []
    for mod in root.children:
        if not _movable(mod):
            continue
        first, last = mod.left_edge.i, mod.right_edge.i
        if first == 0 and last + 2 < end and doc[last + 1].text == ",":
            rest = doc[last + 2 : end]
            variants.append(
                f"{sentence_case(span_text(rest), 'A')} {lower_first(doc[first : last + 1])}{final}"
            )
        elif first > root.i and last == end - 1 and first >= 2 and doc[first - 1].text != ",":
            main = doc[:first]
            moved = span_text(doc[first : last + 1])
            variants.append(f"{moved[:1].upper()}{moved[1:]}, {lower_first(main)}{final}")
    variants = [v for v in (tidy(v) for v in variants) if v != text]
    return rng.choice(variants) if variants else None


def paraamr_paraphrase(paraphrases: Mapping[str, Sequence[str]]) -> Operator:
    """An operator returning one of the given ParaAMR paraphrases of a sentence (None if it has none).

    ``paraphrases`` maps source texts to paraphrases (matched by :func:`~paraamr.records.normalize`).

    >>> op = paraamr_paraphrase({"He left  early.": ["Early, he left.", "He departed early."]})
    >>> op("He left early.", random.Random(0))
    'He departed early.'
    >>> print(op("She stayed.", random.Random(0)))
    None
    """

    table: dict[str, list[str]] = {}
    for source, paras in paraphrases.items():
        table.setdefault(normalize(source), []).extend(paras)

    def paraamr(text: str, rng: random.Random) -> str | None:
        options = [p for p in table.get(normalize(text), ()) if normalize(p) != normalize(text)]
        return rng.choice(options) if options else None

    return paraamr


_LONG_WORD = re.compile(r"\b[A-Za-z]{4,}\b")


def typo(text: str, rng: random.Random) -> str | None:
    """One keyboard slip in one word of four or more letters (never its first letter): two letters
    swapped, a letter dropped, doubled, or replaced by a neighbouring key."""
    words = list(_LONG_WORD.finditer(text))
    if not words:
        return None
    match = rng.choice(words)
    word, i = match.group(), rng.randrange(1, len(match.group()) - 1)
    kind = rng.choice(("swap", "drop", "double", "key"))
    if kind == "swap":
        new = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    elif kind == "drop":
        new = word[:i] + word[i + 1 :]
    elif kind == "double":
        new = word[:i] + word[i] + word[i:]
    else:
        key = rng.choice(KEYBOARD.get(word[i].lower(), word[i]))
        new = word[:i] + (key.upper() if word[i].isupper() else key) + word[i + 1 :]
    return changed(text[: match.start()] + new + text[match.end() :], text, meaning=False)


_WORD_NUMBERS = {word: value for value, word in NUMBER_WORDS.items()}
_DIGITS = re.compile(r"(?<![\w.,:$€£¥])(\d{1,3}(?:,\d{3})+|\d+)(?![\w:]|[.,]\d)")
_NUMBER_WORD = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, _WORD_NUMBERS), key=len, reverse=True)) + r")\b(?![-\w])",
    re.IGNORECASE,
)


def number_format(text: str, rng: random.Random) -> str | None:
    """Write one number another way: digits <-> words up to twenty and the tens (``5`` <-> ``five``),
    or with <-> without thousands separators (``1,500`` <-> ``1500``)."""
    edits = []
    for match in _DIGITS.finditer(text):
        digits = match.group(1)
        if "," in digits:
            edits.append((match.start(), match.end(), digits.replace(",", "")))
        elif int(digits) in NUMBER_WORDS and not digits.startswith("0"):
            edits.append((match.start(), match.end(), NUMBER_WORDS[int(digits)]))
        elif int(digits) >= 10000 and not digits.startswith("0"):
            edits.append((match.start(), match.end(), f"{int(digits):,}"))
    for match in _NUMBER_WORD.finditer(text):
        word = match.group(1)
        if word.lower() == "one" and PRONOUN_ONE.search(text[: match.start()]):
            continue
        edits.append((match.start(), match.end(), str(_WORD_NUMBERS[word.lower()])))
    if not edits:
        return None
    start, end, new = rng.choice(edits)
    if start == 0:
        new = new[:1].upper() + new[1:]
    return changed(text[:start] + new + text[end:], text, meaning=False)
