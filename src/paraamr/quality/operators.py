"""Positive (meaning-preserving) and negative (meaning-changing) sentence operators (ParaQD, §3).

Every operator is a function ``op(text, rng) -> str | None``: it returns a changed sentence, or
None where it does not apply (nothing to change, or the change would be unsafe). The choice among
several places to change is drawn from ``rng`` (a :class:`random.Random`), so an operator is
deterministic for a seed. Operators marked *syntax* use the optional spaCy parse
(:mod:`paraamr.quality.analysis`) and return None without spaCy; the others are regular
expressions and WordNet look-ups.

Positives (:data:`POSITIVE`): ``synonym`` (syntax; WordNet first-sense synonym), ``contraction``
(contract or expand one safe contraction), ``punctuation_case`` (final period, casing),
``passive_voice`` (syntax; active S-V-O to passive), ``front_adverbial`` (syntax; move a time,
place or clause modifier between the front and the end), and :func:`paraamr_paraphrase`, built
from ParaAMR records. Negatives (:data:`NEGATIVE`): ``number``, ``entity`` (syntax; named entity
swapped for another of its type), ``noun`` (syntax; WordNet co-hyponym), ``negation`` (removed by
pattern, added with syntax), ``antonym`` (syntax), ``deletion`` (syntax; a content phrase),
``role_swap`` (syntax; subject and object swapped), ``unit``.

>>> import random
>>> number_change("John ate 5 apples.", random.Random(0))
'John ate 15 apples.'
>>> unit_change("The river is 40 miles long.", random.Random(1))
'The river is 40 centimeters long.'
>>> contraction("I do not know.", random.Random(0))
"I don't know."
>>> negation("She isn't coming.", random.Random(0))
'She is coming.'
>>> print(number_change("John ate some apples.", random.Random(0)))
None
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence

from paraamr.augment.synonyms import match_case, synonyms
from paraamr.quality.analysis import parse
from paraamr.quality.inflection import (
    IRREGULAR,
    indefinite_article,
    past_participle,
    past_tense,
    pluralize,
    third_person,
)
from paraamr.quality.lexicon import WORDNET_POS, antonyms, cohyponyms
from paraamr.records import normalize

Operator = Callable[[str, random.Random], "str | None"]

_APOSTROPHE = "['’]"


# --------------------------------------------------------------------------- shared helpers
def _tidy(text: str) -> str:
    """Whitespace and commas left clean after tokens were removed or moved."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r",(\s*,)+", ",", text)
    text = re.sub(r"^[,;]\s*", "", text)
    return re.sub(r"[,;]+([.!?])$", r"\1", text)


def _render(doc, replace: Mapping[int, str] | None = None, delete: set[int] | frozenset = frozenset()) -> str:
    """The text of ``doc`` with tokens replaced (by index) or deleted, original spacing kept."""
    replace = replace or {}
    pieces = [replace.get(tok.i, tok.text) + tok.whitespace_ for tok in doc if tok.i not in delete]
    return _tidy("".join(pieces))


def _span_text(span) -> str:
    return "".join(tok.text_with_ws for tok in span).strip()


def _sentence_case(text: str, original: str) -> str:
    """``text`` with its first letter upper-cased when ``original`` started with one."""
    if original[:1].isupper() and text:
        return text[:1].upper() + text[1:]
    return text


_NAMES = {"PERSON", "GPE", "ORG", "NORP", "LOC", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LANGUAGE"}


def _lower_first(span) -> str:
    """A span's text with its first letter lower-cased, unless it starts with a name or ``I``."""
    text = _span_text(span)
    first = span[0]
    if first.pos_ == "PROPN" or first.text == "I" or first.ent_type_ in _NAMES or first.text.isupper():
        return text
    return text[:1].lower() + text[1:]


def _article_fix(doc, index: int, new_word: str) -> dict[int, str]:
    """Replace ``a``/``an`` right before token ``index`` so it agrees with ``new_word``."""
    if index > 0 and doc[index - 1].lower_ in ("a", "an"):
        article = doc[index - 1]
        return {article.i: match_case(indefinite_article(new_word), article.text)}
    return {}


def _replace_word(doc, candidates: list, rng: random.Random, text: str, *, meaning: bool) -> str | None:
    """Replace one ``(token, [forms])`` candidate by one of its forms, cased like it, article fixed."""
    if not candidates:
        return None
    tok, forms = rng.choice(candidates)
    new = rng.choice(forms)
    replace = {tok.i: match_case(new, tok.text), **_article_fix(doc, tok.i, new)}
    return _changed(_render(doc, replace), text, meaning=meaning)


def _changed(new: str | None, text: str, *, meaning: bool) -> str | None:
    """``new`` if it differs from ``text`` (after :func:`normalize` when ``meaning`` must change)."""
    if not new:
        return None
    if meaning:
        return new if normalize(new) != normalize(text) else None
    return new if new != text else None


_OBJECT_CASE = {"i": "me", "he": "him", "she": "her", "we": "us", "they": "them"}
_SUBJECT_CASE = {v: k for k, v in _OBJECT_CASE.items()}
_WH = {"who", "whom", "which", "that", "what", "whoever", "whatever"}


def _as_case(span, table: Mapping[str, str], *, first: bool) -> str:
    """A noun phrase moved to another grammatical role: pronoun case changed, sentence-initial case."""
    if len(span) == 1 and span[0].lower_ in table:
        word = table[span[0].lower_]
        word = "I" if word == "i" else word
    else:
        word = _lower_first(span)
    return word[:1].upper() + word[1:] if first else word


def _is_plural(head) -> bool:
    """Whether a noun phrase headed by ``head`` takes plural agreement."""
    return (
        head.tag_ in ("NNS", "NNPS")
        or head.lower_ in ("we", "they", "you", "us", "them", "i", "me")
        or any(child.dep_ == "conj" for child in head.children)
    )


# --------------------------------------------------------------------------- positives
_LIGHT_VERBS = {"be", "have", "do", "get", "make", "go", "take", "let", "say"}


def synonym(text: str, rng: random.Random) -> str | None:
    """Replace one content word by a WordNet synonym of its first sense (syntax).

    Only uninflected words and regular plurals are replaced, so the result stays grammatical.
    """
    doc = parse(text)
    if doc is None:
        return None
    candidates = []
    for tok in doc:
        pos = WORDNET_POS.get(tok.pos_)
        if pos is None or tok.ent_type_ or tok.is_stop or not tok.is_alpha or tok.lemma_ in _LIGHT_VERBS:
            continue
        lemma = tok.lemma_.lower()
        if tok.tag_ in ("NN", "JJ", "RB", "VB", "VBP") and tok.lower_ == lemma:
            forms = list(synonyms(lemma, pos, first_sense=True, attested=True))
        elif tok.tag_ == "NNS":
            forms = [pluralize(word) for word in synonyms(lemma, "n", first_sense=True, attested=True)]
        else:
            continue
        if forms:
            candidates.append((tok, forms))
    return _replace_word(doc, candidates, rng, text, meaning=False)


# (expanded, contracted, direction): "both", or "contract" only where the expansion is ambiguous
# ('s is "is" or "has"), or "expand" only where contracting reads oddly ("I have a car").
_CONTRACTIONS = [
    ("do not", "don't", "both"), ("does not", "doesn't", "both"), ("did not", "didn't", "both"),
    ("is not", "isn't", "both"), ("are not", "aren't", "both"), ("was not", "wasn't", "both"),
    ("were not", "weren't", "both"), ("have not", "haven't", "both"), ("has not", "hasn't", "both"),
    ("had not", "hadn't", "both"), ("will not", "won't", "both"), ("would not", "wouldn't", "both"),
    ("should not", "shouldn't", "both"), ("could not", "couldn't", "both"), ("cannot", "can't", "both"),
    ("must not", "mustn't", "both"), ("I am", "I'm", "both"), ("you are", "you're", "both"),
    ("we are", "we're", "both"), ("they are", "they're", "both"), ("I will", "I'll", "both"),
    ("you will", "you'll", "both"), ("we will", "we'll", "both"), ("they will", "they'll", "both"),
    ("he will", "he'll", "both"), ("she will", "she'll", "both"), ("let us", "let's", "both"),
    ("it is", "it's", "contract"), ("that is", "that's", "contract"), ("there is", "there's", "contract"),
    ("he is", "he's", "contract"), ("she is", "she's", "contract"), ("I have", "I've", "expand"),
    ("we have", "we've", "expand"), ("they have", "they've", "expand"), ("you have", "you've", "expand"),
]  # fmt: skip


def _contraction_edits(text: str) -> list[tuple[int, int, str]]:
    edits = []
    for expanded, contracted, direction in _CONTRACTIONS:
        pairs = []
        if direction in ("both", "contract"):
            pairs.append((r"\b" + r"\s+".join(expanded.split()) + r"\b", contracted))
        if direction in ("both", "expand"):
            pairs.append((r"\b" + re.escape(contracted).replace("'", _APOSTROPHE) + r"\b", expanded))
        for pattern, new in pairs:
            for match in re.finditer(pattern, text, flags=re.IGNORECASE):
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
    return _changed(text[:start] + new + text[end:], text, meaning=False)


def punctuation_case(text: str, rng: random.Random) -> str | None:
    """Drop or add the final period, lower-case the sentence, or capitalize its first letter."""
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
    variants = [v for v in variants if v != text]
    return rng.choice(variants) if variants else None


_BLOCKS_PASSIVE = {"aux", "auxpass", "neg", "nsubjpass", "dative", "ccomp", "xcomp", "prt", "conj", "expl"}
_CVC = re.compile(r"[^aeiou][aeiou][^aeiouwxy]$")
_STATIVE = {"cost", "have", "weigh", "resemble", "lack", "fit", "suit", "mean", "contain", "take", "last"}


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
        or {subj.lower_, obj.lower_} & (_WH | {"it", "there"})
    ):
        return None
    lemma = verb.lemma_.lower()
    if lemma in _STATIVE:
        return None
    if verb.tag_ == "VBD":
        participle = past_participle(lemma, verb.lower_)
    elif lemma in IRREGULAR or not _CVC.search(lemma):
        participle = past_participle(lemma)
    else:
        return None
    plural = _is_plural(obj)
    if obj.lower_ in ("i", "me"):
        be = "was" if verb.tag_ == "VBD" else "am"
    elif verb.tag_ == "VBD":
        be = "were" if plural else "was"
    else:
        be = "are" if plural else "is"
    prefix = "".join(tok.text_with_ws for tok in doc[: s_span.start])
    suffix = "".join(tok.text_with_ws for tok in doc[o_span.end :])
    patient = _as_case(o_span, _SUBJECT_CASE, first=not prefix)
    agent = _as_case(s_span, _OBJECT_CASE, first=False)
    new = f"{prefix}{patient} {be} {participle} by {agent} {suffix}"
    return _changed(_tidy(new), text, meaning=False)


_MOVABLE_PREPS = {
    "in", "on", "at", "during", "after", "before", "since", "until", "near", "throughout", "despite",
    "inside", "outside", "across", "behind", "beside", "under", "over",
}  # fmt: skip
_TIME_ADVERBS = {
    "yesterday",
    "today",
    "tomorrow",
    "now",
    "recently",
    "later",
    "sometimes",
    "often",
    "usually",
}


def _movable(tok) -> bool:
    if tok.dep_ == "prep":
        return tok.lower_ in _MOVABLE_PREPS
    if tok.dep_ == "advmod":
        return tok.lower_ in _TIME_ADVERBS or (tok.lower_.endswith("ly") and tok.lower_ != "only")
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
                f"{_sentence_case(_span_text(rest), 'A')} {_lower_first(doc[first : last + 1])}{final}"
            )
        elif first > root.i and last == end - 1 and first >= 2 and doc[first - 1].text != ",":
            main = doc[:first]
            moved = _span_text(doc[first : last + 1])
            variants.append(f"{moved[:1].upper()}{moved[1:]}, {_lower_first(main)}{final}")
    variants = [v for v in (_tidy(v) for v in variants) if v != text]
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


# --------------------------------------------------------------------------- negatives
_SMALL = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "fifteen", "twenty", "thirty", "forty", "fifty",
]  # fmt: skip
_SCALES = ["hundred", "thousand", "million", "billion"]
_CARDINALS = _SMALL + _SCALES
_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
_NUMBER = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])|\b(" + "|".join(_CARDINALS + _ORDINALS) + r")\b",
    re.IGNORECASE,
)
_PRONOUN_ONE = re.compile(r"\b(no|any|every|some|the|this|that|which|each|little)\s+$", re.IGNORECASE)


def _new_number(digits: str, rng: random.Random) -> str:
    grouped = "," in digits
    if "." in digits:
        whole, frac = digits.split(".")
        return f"{int(whole) + rng.choice([1, 2, 3])}.{frac}"
    value = int(digits.replace(",", ""))
    if 1000 <= value <= 2100 and not grouped:  # a year
        options = [value + d for d in (-3, -2, -1, 1, 2, 3)]
    else:
        options = [value + 1, value + 2, value * 2, value + 10, value * 10, value - 1]
    new = rng.choice([o for o in options if o != value and o >= 0])
    return f"{new:,}" if grouped else str(new)


def number_change(text: str, rng: random.Random) -> str | None:
    """Change one number (digits, cardinal or ordinal word) to a different one."""
    matches = [
        m
        for m in _NUMBER.finditer(text)
        if not (m.group(2) and m.group(2).lower() == "one" and _PRONOUN_ONE.search(text[: m.start()]))
    ]
    if not matches:
        return None
    match = rng.choice(matches)
    if match.group(1):
        new = _new_number(match.group(1), rng)
    else:
        word = match.group(2).lower()
        pool = next(p for p in (_SMALL, _SCALES, _ORDINALS) if word in p)
        new = match_case(rng.choice([w for w in pool if w != word]), match.group(2))
    return _changed(text[: match.start()] + new + text[match.end() :], text, meaning=True)


_ENTITIES = {
    "PERSON": ["Alice", "Carlos", "Priya", "Tom", "Fatima", "Kenji", "Olga", "Samuel", "Mei", "Omar"],
    "GPE": ["Paris", "Tokyo", "Brazil", "Canada", "Kenya", "Berlin", "Chicago", "India", "Madrid", "Sydney"],
    "ORG": ["Google", "the United Nations", "Toyota", "Oxford University", "the BBC", "NASA", "Microsoft"],
    "NORP": ["French", "German", "Japanese", "Mexican", "Canadian", "Italian", "Egyptian"],
    "LOC": ["Europe", "Africa", "the Alps", "the Pacific", "Asia", "the Sahara"],
}
_FULL_NAMES = ["Alice Moreau", "Carlos Silva", "Priya Patel", "Tom Becker", "Fatima Haddad", "Kenji Sato"]
_CALENDAR = [
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"],
    ["january", "february", "march", "april", "june", "july", "august", "september", "october", "november",
     "december"],
]  # fmt: skip


def entity_swap(text: str, rng: random.Random) -> str | None:
    """Swap a named entity (person, place, organization, nationality, weekday, month) for another (syntax)."""
    doc = parse(text)
    if doc is None:
        return None
    present = normalize(text)
    candidates = []
    for ent in doc.ents:
        if ent.label_ not in _ENTITIES:
            continue
        pool = _FULL_NAMES if ent.label_ == "PERSON" and len(ent) > 1 else _ENTITIES[ent.label_]
        options = [name for name in pool if normalize(name) not in present]
        if options:
            candidates.append((ent.start, ent.end, options))
    for tok in doc:
        for pool in _CALENDAR:
            if tok.lower_ in pool and tok.text[:1].isupper():
                candidates.append((tok.i, tok.i + 1, [w.title() for w in pool if w != tok.lower_]))
    if not candidates:
        return None
    start, end, options = rng.choice(candidates)
    new = rng.choice(options)
    if start == 0 and new.startswith("the "):
        new = "The " + new[4:]
    delete = set(range(start + 1, end))
    return _changed(_render(doc, {start: new}, delete), text, meaning=True)


def noun_swap(text: str, rng: random.Random) -> str | None:
    """Swap one common noun for a WordNet co-hyponym (``apple`` -> ``pear``) (syntax)."""
    doc = parse(text)
    if doc is None:
        return None
    present = set(normalize(text).split())
    candidates = []
    for tok in doc:
        if tok.pos_ != "NOUN" or tok.ent_type_ or not tok.is_alpha or tok.is_stop:
            continue
        lemma = tok.lemma_.lower()
        if tok.tag_ == "NN" and tok.lower_ == lemma:
            forms = cohyponyms(lemma)
        elif tok.tag_ == "NNS":
            forms = [pluralize(w) for w in cohyponyms(lemma)]
        else:
            continue
        forms = [f for f in forms if f not in present]
        if forms:
            candidates.append((tok, forms))
    return _replace_word(doc, candidates, rng, text, meaning=True)


_NT = re.compile(
    r"\b(ca|wo|sha|do|does|did|is|are|was|were|has|have|had|would|should|could|must|need|might)n"
    + _APOSTROPHE
    + r"t\b",
    re.IGNORECASE,
)
_NT_BASE = {"ca": "can", "wo": "will", "sha": "shall"}
_NEGATORS = re.compile(r"\b(?:cannot|not|never)\b\s*", re.IGNORECASE)
_NO_ADD = {"not", "n't", "never", "no", "nobody", "nothing", "nowhere", "neither", "nor", "none", "cannot"}


def _remove_negation(text: str, rng: random.Random) -> str | None:
    edits = []
    for match in _NT.finditer(text):
        stem = match.group(1)
        edits.append((match.start(), match.end(), match_case(_NT_BASE.get(stem.lower(), stem), stem)))
    for match in _NEGATORS.finditer(text):
        word = match.group().strip()
        edits.append(
            (match.start(), match.end(), match_case("can ", word) if word.lower() == "cannot" else "")
        )
    if not edits:
        return None
    start, end, new = rng.choice(sorted(edits))
    result = text[:start] + new + text[end:]
    return _sentence_case(_tidy(result), text)


def _add_negation(text: str) -> str | None:
    doc = parse(text)
    if doc is None or any(tok.lower_ in _NO_ADD for tok in doc):
        return None
    roots = [tok for tok in doc if tok.dep_ == "ROOT"]
    if len(roots) != 1:
        return None
    root = roots[0]
    auxiliaries = [c for c in root.children if c.dep_ in ("aux", "auxpass") and c.i < root.i]
    if auxiliaries:
        aux = auxiliaries[0]
        new = {aux.i: f"{aux.text}not" if aux.lower_ == "can" else f"{aux.text} not"}
    elif root.pos_ == "AUX" or root.lemma_ == "be":
        new = {root.i: "cannot" if root.lower_ == "can" else f"{root.text} not"}
    elif root.pos_ == "VERB" and root.tag_ in ("VBD", "VBZ", "VBP"):
        helper = {"VBD": "did", "VBZ": "does", "VBP": "do"}[root.tag_]
        first = root.i  # "he quickly opened" -> "he did not quickly open"
        while first > 0 and doc[first - 1].dep_ == "advmod" and doc[first - 1].head == root:
            first -= 1
        new = {first: f"{helper} not {doc[first].text}", root.i: root.lemma_.lower()}
        if first == root.i:
            new = {root.i: f"{helper} not {root.lemma_.lower()}"}
    elif root.pos_ == "VERB" and root.tag_ == "VB" and root.i == 0:  # an imperative
        new = {root.i: f"Do not {root.lower_}"}
    else:
        return None
    return _render(doc, new)


def negation(text: str, rng: random.Random) -> str | None:
    """Remove a negation (``not``, ``n't``, ``never``, ``cannot``), or add one to the main verb (syntax)."""
    return _changed(_remove_negation(text, rng) or _add_negation(text), text, meaning=True)


def _inflect_like(tok, lemma: str) -> str | None:
    if tok.tag_ in ("JJ", "RB", "VB", "VBP", "NN"):
        return lemma
    if tok.tag_ == "VBD":
        return past_tense(lemma)
    if tok.tag_ == "VBZ":
        return third_person(lemma)
    if tok.tag_ == "NNS":
        return pluralize(lemma)
    return None


def antonym(text: str, rng: random.Random) -> str | None:
    """Replace one adjective, adverb, verb or noun by its first WordNet antonym (syntax)."""
    doc = parse(text)
    if doc is None:
        return None
    candidates = []
    for tok in doc:
        pos = WORDNET_POS.get(tok.pos_)
        if pos is None or tok.ent_type_ or not tok.is_alpha or tok.lemma_ in _LIGHT_VERBS:
            continue
        lemma = tok.lemma_.lower() if pos in ("n", "v") else tok.lower_
        found = antonyms(lemma, pos)
        new = _inflect_like(tok, found[0]) if found else None
        if new:
            candidates.append((tok, [new]))
    return _replace_word(doc, candidates, rng, text, meaning=True)


_DELETABLE = {"amod", "advmod", "prep", "npadvmod", "advcl", "relcl", "acl", "nummod", "compound", "appos"}
_KEEP_ADVERBS = {
    "not",
    "n't",
    "never",
    "also",
    "too",
    "so",
    "then",
    "there",
    "here",
    "how",
    "when",
    "where",
    "why",
}
_CONTENT = {"NOUN", "PROPN", "ADJ", "VERB", "NUM", "ADV"}


def deletion(text: str, rng: random.Random) -> str | None:
    """Delete one content phrase: a modifier, prepositional phrase, clause or apposition (syntax)."""
    doc = parse(text)
    if doc is None:
        return None
    words = sum(tok.is_alpha for tok in doc)
    candidates = []
    for tok in doc:
        if tok.dep_ not in _DELETABLE or tok.head == tok:
            continue
        if tok.dep_ == "advmod" and (tok.lower_ in _KEEP_ADVERBS or tok.head.pos_ in ("ADJ", "ADV")):
            continue
        span = range(tok.left_edge.i, tok.right_edge.i + 1)
        if any(doc[i].dep_ == "ROOT" for i in span) or not any(doc[i].pos_ in _CONTENT for i in span):
            continue
        if words - sum(doc[i].is_alpha for i in span) >= 3:
            candidates.append(set(span))
    if not candidates:
        return None
    span = rng.choice(candidates)
    after = max(span) + 1
    replace = _article_fix(doc, min(span), doc[after].text) if after < len(doc) else {}
    result = _render(doc, replace, delete=span)
    return _changed(_sentence_case(result, text), text, meaning=True)


_AGREE = {
    ("is", True): "are", ("are", False): "is", ("was", True): "were", ("were", False): "was",
    ("has", True): "have", ("have", False): "has", ("does", True): "do", ("do", False): "does",
}  # fmt: skip


def _agree(tok, plural: bool) -> str | None:
    """The form of verb ``tok`` agreeing with a (non-)plural subject, or None when unchanged."""
    if (tok.lower_, plural) in _AGREE:
        return match_case(_AGREE[tok.lower_, plural], tok.text)
    if tok.tag_ == "VBZ" and plural:
        return tok.lemma_.lower()
    if tok.tag_ == "VBP" and not plural:
        return third_person(tok.lemma_.lower())
    return None


def role_swap(text: str, rng: random.Random) -> str | None:
    """Swap the subject and the object of a verb (``the dog chased the cat`` -> ``the cat chased the dog``).

    Active clauses swap ``nsubj`` with ``dobj`` (or the first object of a ditransitive); passive
    ones swap the subject with the ``by`` agent. Pronoun case and present-tense agreement follow (syntax).
    """
    doc = parse(text)
    if doc is None:
        return None
    candidates = []
    for verb in doc:
        if verb.pos_ not in ("VERB", "AUX"):
            continue
        kids = list(verb.children)
        subj = [c for c in kids if c.dep_ in ("nsubj", "nsubjpass")]
        if len(subj) != 1 or subj[0].lower_ in _WH:
            continue
        if subj[0].dep_ == "nsubj":
            obj = [c for c in kids if c.dep_ == "dative"] or [c for c in kids if c.dep_ == "dobj"]
        else:
            obj = [g for c in kids if c.dep_ == "agent" for g in c.children if g.dep_ == "pobj"]
        if not obj or obj[0].lower_ in _WH:
            continue
        s, o = subj[0], obj[0]
        s_span, o_span = doc[s.left_edge.i : s.right_edge.i + 1], doc[o.left_edge.i : o.right_edge.i + 1]
        if s_span.end <= o_span.start and normalize(s_span.text) != normalize(o_span.text):
            candidates.append((verb, s_span, o_span))
    if not candidates:
        return None
    verb, s_span, o_span = rng.choice(candidates)
    replace = {verb.i: verb.text}
    plural = _is_plural(o_span.root)
    if s_span.root.dep_ == "nsubj":
        for tok in [verb, *(c for c in verb.children if c.dep_ == "aux")]:
            if tok.i > s_span.end - 1 and (new := _agree(tok, plural)):
                replace[tok.i] = new
    pieces = []
    for tok in doc:
        if tok.i == s_span.start:
            pieces.append(_as_case(o_span, _SUBJECT_CASE, first=tok.i == 0) + s_span[-1].whitespace_)
        elif tok.i == o_span.start:
            pieces.append(_as_case(s_span, _OBJECT_CASE, first=False) + o_span[-1].whitespace_)
        elif s_span.start < tok.i < s_span.end or o_span.start < tok.i < o_span.end:
            continue
        else:
            pieces.append(replace.get(tok.i, tok.text) + tok.whitespace_)
    return _changed(_tidy("".join(pieces)), text, meaning=True)


_UNITS = [
    [("millimeter", "millimeters"), ("centimeter", "centimeters"), ("meter", "meters"),
     ("kilometer", "kilometers"), ("inch", "inches"), ("foot", "feet"), ("yard", "yards"), ("mile", "miles")],
    [("milligram", "milligrams"), ("gram", "grams"), ("kilogram", "kilograms"), ("pound", "pounds"),
     ("ounce", "ounces"), ("ton", "tons")],
    [("second", "seconds"), ("minute", "minutes"), ("hour", "hours"), ("day", "days"), ("week", "weeks"),
     ("month", "months"), ("year", "years")],
    [("milliliter", "milliliters"), ("liter", "liters"), ("gallon", "gallons"), ("cup", "cups")],
    [("dollar", "dollars"), ("euro", "euros"), ("cent", "cents"), ("rupee", "rupees")],
    [("mm", "mm"), ("cm", "cm"), ("km", "km"), ("ft", "ft")],
    [("mg", "mg"), ("kg", "kg"), ("lb", "lbs"), ("oz", "oz")],
]  # fmt: skip
_UNIT_FORMS = {
    form: (group, i, n) for group in _UNITS for i, pair in enumerate(group) for n, form in enumerate(pair)
}
_AMOUNT = r"\d+(?:[.,]\d+)*|" + "|".join(_CARDINALS) + r"|a|an|half\s+an?"
_UNIT = re.compile(
    rf"\b(?P<num>{_AMOUNT})(?P<sep>[\s-]+|(?<=\d))(?P<unit>"
    + "|".join(sorted(map(re.escape, _UNIT_FORMS), key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)
_CURRENCY = re.compile(r"([$€£¥])(?=\s?\d)")


def unit_change(text: str, rng: random.Random) -> str | None:
    """Change the unit of one measure (``40 miles`` -> ``40 meters``, ``$5`` -> ``€5``)."""
    edits = []
    for match in _UNIT.finditer(text):
        group, index, number = _UNIT_FORMS[match.group("unit").lower()]
        for other in (pair[number] for i, pair in enumerate(group) if i != index):
            num = re.sub(
                r"\b(an?)$",
                lambda m, o=other: match_case(indefinite_article(o), m.group()),
                match.group("num"),
            )
            edits.append((match.start(), match.end(), f"{num}{match.group('sep')}{other}"))
    for match in _CURRENCY.finditer(text):
        for symbol in "$€£¥".replace(match.group(1), ""):
            edits.append((match.start(), match.end(), symbol))
    if not edits:
        return None
    start, end, new = rng.choice(edits)
    return _changed(text[:start] + new + text[end:], text, meaning=True)


#: Meaning-preserving operators by name (ParaAMR paraphrases join them via :func:`paraamr_paraphrase`).
POSITIVE: dict[str, Operator] = {
    "synonym": synonym,
    "contraction": contraction,
    "punctuation_case": punctuation_case,
    "passive_voice": passive_voice,
    "front_adverbial": front_adverbial,
}
#: Meaning-changing operators by name.
NEGATIVE: dict[str, Operator] = {
    "number": number_change,
    "entity": entity_swap,
    "noun": noun_swap,
    "negation": negation,
    "antonym": antonym,
    "deletion": deletion,
    "role_swap": role_swap,
    "unit": unit_change,
}
