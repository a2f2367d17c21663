"""Meaning-preserving (positive) operators: each ``op(text, rng) -> str | None`` keeps the meaning.

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

from paraamr.lexicon import WORDNET_POS, antonyms, match_case, phrasal_verb, synonyms, verb_form_of
from paraamr.quality.edits import (
    APOSTROPHE,
    OBJECT_CASE,
    PRONOUN_ONE,
    SUBJECT_CASE,
    WH,
    Operator,
    as_case,
    bound,
    changed,
    is_plural,
    lower_first,
    negated,
    one_edit,
    only_root,
    reordered,
    replace_word,
    sentence_case,
    span_text,
    subtree,
    syntax,
    tidy,
)
from paraamr.quality.inflection import CVC, IRREGULAR, inflect_like, past_participle
from paraamr.quality.words import (
    COMPLEMENTARY_ADJECTIVES,
    COMPLEMENTARY_VERBS,
    CONTRACTIONS,
    DATIVE_FOR,
    DATIVE_TO,
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
    "dative_shift",
    "front_adverbial",
    "negated_antonym",
    "number_format",
    "paraamr_paraphrase",
    "particle_shift",
    "passive_voice",
    "punctuation_case",
    "synonym",
    "synonym_candidates",
    "typo",
]


@syntax
def synonym(doc, text: str, rng: random.Random) -> str | None:
    """Replace one or two content words by a WordNet synonym of their first sense,
    inflected like the word they replace (:func:`~paraamr.quality.inflection.inflect_like`)."""
    candidates = synonym_candidates(doc, phrases=False)
    return replace_word(doc, candidates, rng, text, meaning=False, count=rng.choice((1, 2)))


_PLACEHOLDERS = {"oneself", "someone", "something", "one's", "somebody"}


def synonym_candidates(doc, *, phrases: bool) -> list:
    """``(token, [forms])`` of the content words that have first-sense, SemCor-attested synonyms
    (single words, or phrases when ``phrases``), each form inflected like the token."""
    candidates = []
    for tok in doc:
        pos = WORDNET_POS.get(tok.pos_)
        if pos is None or tok.ent_type_ or tok.is_stop or not tok.is_alpha or tok.lemma_ in LIGHT_VERBS:
            continue
        lemma = tok.lemma_.lower()
        base = tok.tag_ in ("NN", "JJ", "RB", "VB", "VBP") and tok.lower_ == lemma
        if not base and tok.tag_ not in ("NNS", "VBD", "VBN", "VBZ"):
            continue
        forms = []
        before = doc[tok.i - 1].lemma_.lower() if tok.i else ""
        has_object = any(child.dep_ in ("dobj", "obj") for child in tok.children)
        for word in synonyms(lemma, pos, first_sense=True, attested=True, phrases=phrases):
            words = word.split()
            if phrases and (_PLACEHOLDERS & set(words) or words[0] == before):  # not "got get married"
                continue
            if pos == "v" and has_object and len(words) == 2 and not phrasal_verb(*words):
                continue  # "leave the house" -> not "go away the house"
            at = -1 if pos == "n" else 0  # "hot dogs", "passed away"
            form = words[at] if base else inflect_like(tok.tag_, words[at])
            if form:
                words[at] = form
                forms.append(" ".join(words))
        if forms:
            candidates.append((tok, forms))
    return candidates


_COMPLEMENT = {  # "closed" -> "open": only towards "not" and the plain word ("does not dislike" is weaker)
    pos: {negative: plain for plain, negative in pairs}
    for pos, pairs in (("a", COMPLEMENTARY_ADJECTIVES), ("v", COMPLEMENTARY_VERBS))
}


_NEGATIVE_PREFIX = re.compile(r"^(un|in|im|il|ir|dis|non)(?=[a-z]{3})")


def _plain(adjective: str) -> str | None:
    """The plain opposite of a negative adjective: from the table, or a WordNet antonym that is
    the word without its negative prefix (``unhappy`` -> ``happy``, not ``inflammable``)."""
    if adjective in _COMPLEMENT["a"]:
        return _COMPLEMENT["a"][adjective]
    prefix = _NEGATIVE_PREFIX.match(adjective)
    rest = adjective[prefix.end() :] if prefix else None
    return rest if rest and rest in antonyms(adjective, "a") else None


@syntax
def negated_antonym(doc, text: str, rng: random.Random) -> str | None:
    """Replace the main predicate by its complementary opposite and negate it: ``The
    museum is closed.`` -> ``The museum is not open.``. Only opposites with nothing between them
    (:data:`~paraamr.quality.words.COMPLEMENTARY_ADJECTIVES`, ``..._VERBS``), in simple tenses.
    """
    root = only_root(doc)
    if root is None:
        return None
    if any(c.dep_ == "advmod" for c in root.children):
        return None  # "is still alive" -> "is not still dead", "often forgets" are no paraphrases
    adjectives = [c for c in root.children if c.dep_ == "acomp" and _plain(c.lower_)]
    if (  # "is closed", parsed as a passive; not "has been closed", "is closed by the police"
        root.tag_ == "VBN"
        and _plain(root.lower_)
        and [c.dep_ for c in root.children if c.dep_ in ("aux", "auxpass", "agent")] == ["auxpass"]
    ):
        adjectives = [root]
    if root.lemma_ == "be" or adjectives == [root]:
        if len(adjectives) != 1 or any(c.dep_ == "advmod" for c in adjectives[0].children):
            return None  # "is very open" -> "is not very closed" is no paraphrase
        word = adjectives[0]
        new = negated(doc, rng, replace={word.i: match_case(_plain(word.lower_), word.text)})
    elif (
        root.pos_ == "VERB"
        and root.tag_ in ("VBD", "VBZ", "VBP")
        and (other := _COMPLEMENT["v"].get(root.lemma_.lower()))
        and not any(c.dep_ in ("aux", "auxpass") for c in root.children)
    ):
        new = negated(doc, rng, verb=other)
    else:
        return None
    return changed(new, text, meaning=False)


#: (pattern, replacement) of each direction of each contraction that goes that way.
_CONTRACTION_PATTERNS = [
    (re.compile(pattern, re.IGNORECASE), new)
    for expanded, contracted, direction in CONTRACTIONS
    for way, pattern, new in (
        ("contract", r"\b" + r"\s+".join(expanded.split()) + r"\b", contracted),
        ("expand", r"\b" + re.escape(contracted).replace("'", APOSTROPHE) + r"\b", expanded),
    )
    if direction in ("both", way)
]


def contraction(text: str, rng: random.Random) -> str | None:
    """Contract one expanded form (``do not`` -> ``don't``) or expand one contraction."""
    edits = []
    for pattern, new in _CONTRACTION_PATTERNS:
        for match in pattern.finditer(text):
            new_text = new if new.startswith("I") else match_case(new, match.group()[:1] + "x")
            edits.append((match.start(), match.end(), new_text))
    return one_edit(text, sorted(edits), rng, meaning=False)


def punctuation_case(text: str, rng: random.Random) -> str | None:
    """Drop the final period or make it ``!``, add one, drop the commas, lower-case, or capitalize
    the first letter."""
    if not re.search(r"\w", text):
        return None
    stripped = text.strip()
    variants = []
    if stripped.endswith(".") and not stripped.endswith(".."):
        variants += [stripped[:-1], stripped[:-1] + "!"]
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


@syntax
def passive_voice(doc, text: str, rng: random.Random) -> str | None:
    """Turn a simple-tense active clause ``S V O ...`` into ``O was V-en by S ...``."""
    verb = only_root(doc)
    if verb is None:
        return None
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
    s_span, o_span = subtree(subj), subtree(obj)
    if (
        s_span.end != verb.i
        or o_span.start != verb.i + 1
        or {subj.lower_, obj.lower_} & (WH | {"it", "there"})
        or bound(o_span)
    ):
        return None
    lemma = verb.lemma_.lower()
    if lemma in STATIVE or inflect_like("VBN", lemma) is None or verb_form_of(lemma):
        return None  # no participle it would misspell (ran, bended), no past taken for a lemma (bent)
    if verb.tag_ == "VBD":
        participle = past_participle(lemma, verb.lower_)
    elif lemma in IRREGULAR or not CVC.search(lemma):
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
    patient = as_case(o_span, SUBJECT_CASE, first=s_span.start == 0)
    agent = as_case(s_span, OBJECT_CASE, first=False)
    new = reordered(doc, s_span.start, o_span.end, [patient, be, participle, "by", agent])
    return changed(new, text, meaning=False)


def _bare(noun) -> bool:
    """A singular common noun with no word of its own: in idioms, ``gave rise to``, ``made room for``."""
    return noun.tag_ == "NN" and not any(True for _ in noun.children)


@syntax
def dative_shift(doc, text: str, rng: random.Random) -> str | None:
    """Move an indirect object into a ``to``/``for`` phrase after the object, or back.

    ``The nurse gave the patient a blanket.`` <-> ``The nurse gave a blanket to the patient.``
    Only verbs of :data:`DATIVE_TO` and :data:`DATIVE_FOR`; never a pronoun object, an object with
    a verb in it, or a bare singular noun (idioms: ``gave rise to``).
    """
    variants = []
    for verb in doc:
        lemma = verb.lemma_.lower()
        prep = "to" if lemma in DATIVE_TO else "for" if lemma in DATIVE_FOR else None
        if verb.pos_ != "VERB" or prep is None:
            continue
        objects = [c for c in verb.children if c.dep_ == "dobj"]
        if len(objects) != 1:
            continue
        obj = subtree(objects[0])
        if objects[0].pos_ == "PRON" or any(tok.pos_ in ("VERB", "AUX") for tok in obj) or _bare(objects[0]):
            continue
        for child in verb.children:
            if child.dep_ == "dative" and child.tag_ != "IN":
                recipient = subtree(child)  # gave [the patient] [a blanket]
                if recipient.start == verb.i + 1 and obj.start == recipient.end:
                    variants.append(
                        reordered(doc, recipient.start, obj.end, [obj.text, prep, recipient.text])
                    )
            elif (
                child.dep_ in ("dative", "prep")
                and child.lower_ == prep
                and obj.start == verb.i + 1
                and child.i == obj.end
            ):
                pobjs = [c for c in child.children if c.dep_ == "pobj"]  # gave [a blanket] [to the patient]
                if len(pobjs) == 1 and subtree(child).end == pobjs[0].right_edge.i + 1:
                    recipient = subtree(pobjs[0])
                    variants.append(reordered(doc, obj.start, recipient.end, [recipient.text, obj.text]))
    variants = [v for v in variants if v != text]
    return rng.choice(variants) if variants else None


@syntax
def particle_shift(doc, text: str, rng: random.Random) -> str | None:
    """Move a verb's particle after its object, or a short object after the particle.

    ``Please turn off the lights.`` <-> ``Please turn the lights off.`` Only phrasal verbs WordNet
    knows (:func:`~paraamr.lexicon.phrasal_verb`); a pronoun object stays before its particle, and
    objects of more than four words stay after it.
    """
    variants = []
    for verb in doc:
        particles = [c for c in verb.children if c.dep_ == "prt"]
        objects = [c for c in verb.children if c.dep_ == "dobj"]
        if verb.pos_ != "VERB" or len(particles) != 1 or len(objects) != 1:
            continue
        particle, obj = particles[0], subtree(objects[0])
        if not phrasal_verb(verb.lemma_, particle.lower_):
            continue
        if particle.i == verb.i + 1 and obj.start == particle.i + 1 and len(obj) <= 4:
            variants.append(reordered(doc, particle.i, obj.end, [obj.text, particle.text]))
        elif obj.start == verb.i + 1 and particle.i == obj.end and objects[0].pos_ != "PRON":
            variants.append(reordered(doc, obj.start, particle.i + 1, [particle.text, obj.text]))
    variants = [v for v in variants if v != text]
    return rng.choice(variants) if variants else None


def _movable(tok) -> bool:
    if tok.dep_ == "prep":
        return tok.lower_ in MOVABLE_PREPS
    if tok.dep_ == "advmod":
        return tok.lower_ in TIME_ADVERBS or (tok.lower_.endswith("ly") and tok.lower_ != "only")
    return tok.dep_ in ("npadvmod", "advcl")


@syntax
def front_adverbial(doc, text: str, rng: random.Random) -> str | None:
    """Move a time, place or clause modifier of the main verb to the front, or from the front to the
    end: ``The shop closes at noon.`` <-> ``At noon, the shop closes.``"""
    if len(doc) < 4:
        return None
    end = len(doc) - 1 if doc[-1].is_punct else len(doc)
    final = doc[end].text if end < len(doc) else ""
    root = only_root(doc)
    if root is None:
        return None
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
    edits = [(start, end, new[:1].upper() + new[1:] if start == 0 else new) for start, end, new in edits]
    return one_edit(text, edits, rng, meaning=False)
