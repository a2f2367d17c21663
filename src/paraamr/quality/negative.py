"""Meaning-changing (negative) operators: each ``op(text, rng) -> str | None`` changes the meaning.

>>> import random
>>> number_change("John ate 5 apples.", random.Random(0))
'John ate 15 apples.'
>>> unit_change("The river is 40 miles long.", random.Random(1))
'The river is 40 centimeters long.'
>>> negation("She isn't coming.", random.Random(0))
'She is coming.'
>>> print(number_change("John ate some apples.", random.Random(0)))
None
>>> date_time("The train leaves at 7:30 on Monday.", random.Random(0))
'The train leaves at 7:30 on Sunday.'
>>> scramble("The dog bit the man.", random.Random(3))
'The man bit the dog.'
"""

from __future__ import annotations

import random
import re

from paraamr.lexicon import WORDNET_POS, antonyms, cohyponyms, match_case, verb_form_of
from paraamr.quality.analysis import parse
from paraamr.quality.edits import (
    APOSTROPHE,
    OBJECT_CASE,
    PRONOUN_ONE,
    SUBJECT_CASE,
    WH,
    article_fix,
    as_case,
    bound,
    changed,
    is_plural,
    negated,
    one_edit,
    render,
    replace_word,
    sentence_case,
    subtree,
    syntax,
    tidy,
)
from paraamr.quality.inflection import indefinite_article, inflect_like, pluralize, third_person
from paraamr.quality.words import (
    ADJECTIVE_ANTONYMS,
    AGREE,
    CALENDAR,
    CARDINALS,
    ENTITIES,
    FULL_NAMES,
    KEEP_ADVERBS,
    LIGHT_VERBS,
    NT_BASE,
    ORDINALS,
    RELATIVE_TIMES,
    SCALES,
    SMALL,
    UNITS,
    VERB_ANTONYMS,
)
from paraamr.records import normalize

__all__ = [
    "antonym",
    "date_time",
    "deletion",
    "entity_swap",
    "negation",
    "noun_swap",
    "number_change",
    "phrase_swap",
    "role_swap",
    "scramble",
    "unit_change",
]

_NUMBER = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])|\b(" + "|".join(CARDINALS + ORDINALS) + r")\b",
    re.IGNORECASE,
)


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
        if not (m.group(2) and m.group(2).lower() == "one" and PRONOUN_ONE.search(text[: m.start()]))
    ]
    if not matches:
        return None
    match = rng.choice(matches)
    if match.group(1):
        new = _new_number(match.group(1), rng)
    else:
        word = match.group(2).lower()
        pool = next(p for p in (SMALL, SCALES, ORDINALS) if word in p)
        new = match_case(rng.choice([w for w in pool if w != word]), match.group(2))
    return changed(text[: match.start()] + new + text[match.end() :], text, meaning=True)


@syntax
def entity_swap(doc, text: str, rng: random.Random) -> str | None:
    """Swap a named entity (person, place, organization, nationality) for another."""
    present = normalize(text)
    candidates = []
    for ent in doc.ents:
        if ent.label_ not in ENTITIES:
            continue
        pool = FULL_NAMES if ent.label_ == "PERSON" and len(ent) > 1 else ENTITIES[ent.label_]
        options = [name for name in pool if normalize(name) not in present]
        if options:
            candidates.append((ent.start, ent.end, options))
    if not candidates:
        return None
    start, end, options = rng.choice(candidates)
    new = rng.choice(options)
    if start == 0 and new.startswith("the "):
        new = "The " + new[4:]
    delete = set(range(start + 1, end))
    return changed(render(doc, {start: new}, delete), text, meaning=True)


@syntax
def noun_swap(doc, text: str, rng: random.Random) -> str | None:
    """Swap one common noun for a WordNet co-hyponym (``apple`` -> ``pear``)."""
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
    return replace_word(doc, candidates, rng, text, meaning=True)


_NT = re.compile(
    r"\b(ca|wo|sha|do|does|did|is|are|was|were|has|have|had|would|should|could|must|need|might)n"
    + APOSTROPHE
    + r"t\b",
    re.IGNORECASE,
)


_NEGATORS = re.compile(r"\b(?:cannot|not|never)\b\s*", re.IGNORECASE)


def _remove_negation(text: str, rng: random.Random) -> str | None:
    edits = []
    for match in _NT.finditer(text):
        stem = match.group(1)
        edits.append((match.start(), match.end(), match_case(NT_BASE.get(stem.lower(), stem), stem)))
    for match in _NEGATORS.finditer(text):
        word = match.group().strip()
        new = match_case("can ", word) if word.lower() == "cannot" else ""
        edits.append((match.start(), match.end(), new))
    if not edits:
        return None
    start, end, new = rng.choice(sorted(edits))
    return sentence_case(tidy(text[:start] + new + text[end:]), text)


def negation(text: str, rng: random.Random) -> str | None:
    """Remove a negation (``not``, ``n't``, ``never``, ``cannot``), or add one to the main verb (syntax)."""
    return changed(_remove_negation(text, rng) or negated(parse(text), rng), text, meaning=True)


#: Each word of the antonym tables with its opposite, both ways (a word's first pair wins).
_OPPOSITE = {
    pos: {word: other for a, b in reversed(pairs) for word, other in ((a, b), (b, a))}
    for pos, pairs in (("v", VERB_ANTONYMS), ("a", ADJECTIVE_ANTONYMS))
}


@syntax
def antonym(doc, text: str, rng: random.Random) -> str | None:
    """Replace one adjective, adverb, verb or noun by an antonym: the word tables first
    (``hire`` -> ``fire``, ``early`` -> ``late``), else WordNet's first; the main predicate (the root
    verb or its adjective complement) is chosen half of the time when it has one."""
    candidates = []
    for tok in doc:
        pos = WORDNET_POS.get(tok.pos_)
        if pos is None or tok.ent_type_ or not tok.is_alpha or tok.lemma_ in LIGHT_VERBS:
            continue
        lemma = tok.lemma_.lower() if pos in ("n", "v") else tok.lower_
        table = _OPPOSITE.get(pos, {})
        found = [table[lemma]] if lemma in table else antonyms(lemma, pos)
        new = inflect_like(tok.tag_, found[0]) if found else None
        if new:
            candidates.append((tok, [new]))
    main = [
        c for c in candidates if c[0].dep_ == "ROOT" or (c[0].dep_ == "acomp" and c[0].head.dep_ == "ROOT")
    ]
    if main and rng.random() < 0.5:
        candidates = main
    return replace_word(doc, candidates, rng, text, meaning=True)


_DELETABLE = {"amod", "advmod", "prep", "npadvmod", "advcl", "relcl", "acl", "nummod", "compound", "appos"}


_CONTENT = {"NOUN", "PROPN", "ADJ", "VERB", "NUM", "ADV"}


@syntax
def deletion(doc, text: str, rng: random.Random) -> str | None:
    """Delete one content phrase: a modifier, prepositional phrase, clause or apposition."""
    words = sum(tok.is_alpha for tok in doc)
    candidates = []
    for tok in doc:
        if tok.dep_ not in _DELETABLE or tok.head == tok:
            continue
        if tok.dep_ == "advmod" and (tok.lower_ in KEEP_ADVERBS or tok.head.pos_ in ("ADJ", "ADV")):
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
    replace = article_fix(doc, min(span), doc[after].text) if after < len(doc) else {}
    result = render(doc, replace, delete=span)
    return changed(sentence_case(result, text), text, meaning=True)


def _agree(tok, plural: bool) -> str | None:
    """The form of verb ``tok`` agreeing with a (non-)plural subject, or None when unchanged."""
    if (tok.lower_, plural) in AGREE:
        return match_case(AGREE[tok.lower_, plural], tok.text)
    lemma = tok.lemma_.lower()
    if tok.text[:1] in "'\N{RIGHT SINGLE QUOTATION MARK}":  # a clitic ('ve, 'm, 're) spelled out
        full = {"be": "are" if plural else "is", "have": "have" if plural else "has"}.get(lemma)
        return full and " " + full
    if tok.tag_ == "VBZ" and plural:
        return lemma
    if tok.tag_ == "VBP" and not plural and not verb_form_of(tok.lower_):  # not a past: "mistook"
        return third_person(lemma)
    return None


@syntax
def role_swap(doc, text: str, rng: random.Random) -> str | None:
    """Swap the subject and the object of a verb (``the dog chased the cat`` -> ``the cat chased the dog``).

    Active clauses swap ``nsubj`` with ``dobj`` (or the first object of a ditransitive); passive
    ones swap the subject with the ``by`` agent. Pronoun case and present-tense agreement follow.
    """
    candidates = []
    for verb in doc:
        if verb.pos_ not in ("VERB", "AUX"):
            continue
        kids = list(verb.children)
        subj = [c for c in kids if c.dep_ in ("nsubj", "nsubjpass")]
        if len(subj) != 1 or subj[0].lower_ in WH:
            continue
        if subj[0].dep_ == "nsubj":
            obj = [c for c in kids if c.dep_ == "dative"] or [c for c in kids if c.dep_ == "dobj"]
        else:
            obj = [g for c in kids if c.dep_ == "agent" for g in c.children if g.dep_ == "pobj"]
        if not obj or obj[0].lower_ in WH:
            continue
        s_span, o_span = subtree(subj[0]), subtree(obj[0])
        if (
            s_span.end <= o_span.start
            and normalize(s_span.text) != normalize(o_span.text)
            and not (bound(s_span) or bound(o_span))
        ):
            candidates.append((verb, s_span, o_span))
    if not candidates:
        return None
    verb, s_span, o_span = rng.choice(candidates)
    replace = {verb.i: verb.text}
    plural = is_plural(o_span.root)
    if s_span.root.dep_ == "nsubj":
        for tok in [verb, *(c for c in verb.children if c.dep_ == "aux")]:
            if tok.i > s_span.end - 1 and (new := _agree(tok, plural)):
                replace[tok.i] = new
    replace[s_span.end - 1] = as_case(o_span, SUBJECT_CASE, first=s_span.start == 0)
    replace[o_span.end - 1] = as_case(s_span, OBJECT_CASE, first=False)  # each with its span's last space
    delete = {*range(s_span.start, s_span.end - 1), *range(o_span.start, o_span.end - 1)}
    return changed(render(doc, replace, delete), text, meaning=True)


@syntax
def phrase_swap(doc, text: str, rng: random.Random) -> str | None:
    """Two noun phrases trade places, the words kept (``plants absorb carbon dioxide and release
    oxygen`` -> ``plants absorb oxygen and release carbon dioxide``): phrases headed by a noun, of
    the same number, so no agreement changes, and not two conjuncts of one coordination."""
    chunks = [
        c
        for c in doc.noun_chunks
        if c.root.pos_ in ("NOUN", "PROPN") and not bound(c) and not any(tok.lower_ in WH for tok in c)
    ]
    pairs = [
        (a, b)
        for i, a in enumerate(chunks)
        for b in chunks[i + 1 :]
        if normalize(a.text) != normalize(b.text)
        and is_plural(a.root) == is_plural(b.root)
        and b.root not in a.root.conjuncts  # "milk and bread" -> "bread and milk" means the same
    ]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    replace = {a.start: as_case(b, {}, first=a.start == 0), b.start: as_case(a, {}, first=False)}
    delete = {*range(a.start + 1, a.end), *range(b.start + 1, b.end)}
    return changed(render(doc, replace, delete), text, meaning=True)


_UNIT_FORMS = {
    form: (group, i, n) for group in UNITS for i, pair in enumerate(group) for n, form in enumerate(pair)
}


_AMOUNT = r"\d+(?:[.,]\d+)*|" + "|".join(CARDINALS) + r"|a|an|half\s+an?"


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
    return one_edit(text, edits, rng, meaning=True)


_MONTH_DAY = re.compile(
    r"\b(" + "|".join(m.title() for m in CALENDAR[1]) + r")\s+(\d{1,2})(st|nd|rd|th)?\b"
    r"|\b(\d{1,2})(st|nd|rd|th)?(\s+of)?\s+(" + "|".join(m.title() for m in CALENDAR[1]) + r")\b"
)
_CLOCK = re.compile(r"\b(\d{1,2})(?::(\d{2}))?(\s*)(a\.?m\.?|p\.?m\.?|o'clock)?(?=\W|$)", re.IGNORECASE)
_CALENDAR_WORD = re.compile(r"\b(" + "|".join(w.title() for pool in CALENDAR for w in pool) + r")\b")
_RELATIVE = re.compile(r"\b(" + "|".join(w for pool in RELATIVE_TIMES for w in pool) + r")\b", re.IGNORECASE)


def _clock_edits(text: str, rng: random.Random) -> list[tuple[int, int, str]]:
    edits = []
    for match in _CLOCK.finditer(text):
        hour, minutes, space, suffix = match.groups()
        if not (minutes or suffix):  # a bare number is not a time
            continue
        top = 12 if suffix and suffix[0].lower() in "ap" else 23 if minutes else 12
        if not 0 < int(hour) <= top:
            continue
        new_hour = (int(hour) - 1 + rng.choice([1, 2, 3, 4, 5])) % top + 1
        tail = f":{minutes}" if minutes else ""
        edits.append((match.start(), match.end(), f"{new_hour}{tail}{space}{suffix or ''}"))
        if suffix and suffix[0].lower() in "ap":
            other = match_case({"a": "p", "p": "a"}[suffix[0].lower()], suffix[0]) + suffix[1:]
            edits.append((match.start(), match.end(), f"{hour}{tail}{space}{other}"))
    return edits


def date_time(text: str, rng: random.Random) -> str | None:
    """Change one date or time: a clock time (``7:30`` -> ``9:30``, ``3 pm`` -> ``3 am``), a day of
    the month, a weekday or month, or a relative time (``yesterday`` -> ``tomorrow``, ``morning``
    -> ``evening``, ``last`` -> ``next``, ``before`` -> ``after``)."""
    edits = _clock_edits(text, rng)
    for match in _MONTH_DAY.finditer(text):
        group = 2 if match.group(2) else 4
        day = int(match.group(group))
        if 1 <= day <= 28:
            new = str(day + rng.choice([1, 2, 3]) if day <= 25 else day - rng.choice([1, 2, 3]))
            edits.append((match.start(group), match.end(group), new))
    for pattern, pools in ((_CALENDAR_WORD, CALENDAR), (_RELATIVE, RELATIVE_TIMES)):
        for match in pattern.finditer(text):
            word = match.group()
            pool = next(p for p in pools if word.lower() in p)
            edits += [(match.start(), match.end(), match_case(w, word)) for w in pool if w != word.lower()]
    return one_edit(text, edits, rng, meaning=True)


_GLUE = {
    "the", "and", "but", "for", "with", "that", "this", "was", "were", "are", "has", "had", "have",
    "its", "his", "her", "our", "their", "from", "into", "not", "will", "can",
}  # fmt: skip


def scramble(text: str, rng: random.Random) -> str | None:
    """The same words in another order (at least four words): all of them shuffled (word salad), or
    two content words swapped (``the dog bit the man`` -> ``the man bit the dog``-like changes)."""
    body = text.rstrip().rstrip(".!?")
    final = text.rstrip()[len(body) :]
    words = [w.rstrip(",;") for w in body.split()]
    if len(words) < 4:
        return None
    if words[0] != "I" and words[0][1:].islower():  # names too: the encoders are uncased
        words[0] = words[0][:1].lower() + words[0][1:]
    order = words[:]
    if rng.random() < 0.5:
        content = [i for i, w in enumerate(words) if len(w) >= 3 and w.lower() not in _GLUE]
        if len(content) >= 2:
            i, j = rng.sample(content, 2)
            order[i], order[j] = order[j], order[i]
    if order == words:
        for _ in range(10):
            rng.shuffle(order)
            if order != words:
                break
    new = " ".join(order)
    return changed(new[:1].upper() + new[1:] + final, text, meaning=True)
