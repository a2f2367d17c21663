"""WordNet look-ups of English words (nltk's reader, set up offline by ``python -m paraamr.wordnet``):
synonyms, antonyms and co-hyponyms, cached. Answers are lowercase single words (one token stays one
token; no proper names), without repeats, in WordNet's order; parts of speech are WordNet's letters
``n``, ``v``, ``a`` (satellites included) and ``r``.

>>> match_case("cost", "Price"), match_case("cost", "PRICE"), match_case("cost", "price")
('Cost', 'COST', 'cost')
>>> antonyms("expensive", "a")
['cheap']
>>> "pear" in cohyponyms("apple")
True
>>> antonyms("xqzzy", "a"), cohyponyms("xqzzy")
([], [])
"""

from __future__ import annotations

import contextlib
import os
from functools import cache, lru_cache

__all__ = [
    "WORDNET_POS",
    "antonyms",
    "cohyponyms",
    "common_words",
    "is_noun",
    "match_case",
    "phrasal_verb",
    "synonyms",
    "verb_exceptions",
    "verb_form_of",
]

#: spaCy universal POS tags -> WordNet parts of speech.
WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}


def match_case(word: str, model: str) -> str:
    """``word`` with the casing pattern of ``model``: all caps, capitalized, or as it is."""
    if len(model) > 1 and model.isupper():
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


@cache
def _wordnet():
    """nltk's WordNet reader, made fork-safe: a forked child (``datasets.map(num_proc=...)``)
    drops the parent's open data files, whose shared file offsets would race between processes."""
    from paraamr.wordnet import wordnet

    wn = wordnet()
    os.register_at_fork(after_in_child=wn._data_file_map.clear)
    return wn


@cache
def _sense_counts() -> dict[str, int]:
    """SemCor's count of every WordNet sense key (``cntlist.rev``), read once (nltk's
    ``Lemma.count()`` searches the file on each call)."""
    with contextlib.closing(_wordnet().open("cntlist.rev")) as stream:
        rows = (line.split() for line in stream.read().splitlines())
        return {row[0]: int(row[-1]) for row in rows if len(row) == 3}


def _attested(lemma) -> bool:
    """Whether SemCor has the WordNet ``lemma`` (in this sense) at least once."""
    return _sense_counts().get(lemma.key(), 0) > 0


@lru_cache(maxsize=1 << 16)
def synonyms(
    word: str,
    pos: str | None = None,
    *,
    first_sense: bool = False,
    attested: bool = False,
    phrases: bool = False,
) -> tuple[str, ...]:
    """Lemma names of the WordNet synsets of ``word`` (found through WordNet's morphology, all parts
    of speech unless ``pos``) but ``word`` and its base forms: ``synonyms("price")`` gives ``('cost',
    'terms', 'damage', 'toll')``. ``first_sense``: its most frequent sense only; ``attested``: lemmas
    SemCor has; ``phrases``: the multi-word ones instead, joined by spaces. ``LookupError`` (with the
    setup command) when WordNet is not installed.
    """
    wn = _wordnet()
    lower = word.lower()
    if not lower[:1].isalnum():
        return ()
    own = {lower}
    for tag in (pos,) if pos else ("n", "v", "a", "r"):
        base = wn.morphy(lower, tag)
        if base:
            own.add(base)
    senses = wn.synsets(lower, pos=pos)
    names: dict[str, None] = {}
    for synset in senses[:1] if first_sense else senses:
        for lemma in synset.lemmas():
            name = lemma.name()
            words = name.split("_")
            plain = all(w.isalpha() and w.islower() for w in words)
            if (len(words) > 1) != phrases or name in own or not plain:
                continue
            if not attested or _attested(lemma):
                names[" ".join(words)] = None
    return tuple(names)


@cache
def common_words(pos: str) -> tuple[str, ...]:
    """The single-word lowercase WordNet lemmas of part of speech ``pos`` that SemCor has at least
    three times, in WordNet's order (ordinary words to put in a word's place)."""
    counts, wn = _sense_counts(), _wordnet()
    seen: dict[str, None] = {}
    for synset in wn.all_synsets(pos):
        for lemma in synset.lemmas():
            name = lemma.name()
            if name.isalpha() and name.islower() and counts.get(lemma.key(), 0) >= 3:
                seen[name] = None
    return tuple(seen)


#: WordNet's verb frames with a thing as object: "Somebody/Something ----s something".
_THING_FRAMES = {8, 11}


@cache
def phrasal_verb(verb: str, particle: str) -> bool:
    """Whether WordNet has ``verb particle`` as a verb taking a thing as object (``turn off`` the
    lights; not ``look out``, whose only object is a person, nor ``walk down``, not in WordNet).

    >>> phrasal_verb("turn", "off"), phrasal_verb("look", "out"), phrasal_verb("walk", "down")
    (True, False, False)
    """
    name = f"{verb.lower()}_{particle.lower()}"
    return any(
        _THING_FRAMES & set(lemma.frame_ids())
        for synset in _wordnet().synsets(name, pos="v")
        for lemma in synset.lemmas()
        if lemma.name() == name
    )


@cache
def verb_exceptions() -> dict[str, frozenset[str]]:
    """WordNet's verb exception list by lemma: the inflected forms it lists for each verb.

    >>> sorted(verb_exceptions()["run"])
    ['ran', 'running']
    """
    forms: dict[str, set[str]] = {}
    for form, lemmas in _wordnet()._exception_map["v"].items():
        for lemma in lemmas:
            forms.setdefault(lemma, set()).add(form)
    return {lemma: frozenset(found) for lemma, found in forms.items()}


def verb_form_of(word: str) -> tuple[str, ...]:
    """The other verbs of which WordNet's exception list gives ``word`` as an inflected form.

    >>> verb_form_of("bent"), verb_form_of("bend")
    (('bend',), ())
    """
    return tuple(lemma for lemma in _wordnet()._exception_map["v"].get(word, ()) if lemma != word)


@cache
def is_noun(word: str) -> bool:
    """Whether ``word`` is itself a noun lemma in WordNet (not only an inflected form of one).

    >>> is_noun("work"), is_noun("works"), is_noun("plants")
    (True, True, False)
    """
    synsets = _wordnet().synsets(word, pos="n")
    return any(lemma.name() == word for synset in synsets for lemma in synset.lemmas())


def _single(name: str) -> str | None:
    """A lemma name usable as one replacement word (no multiword or capitalized names)."""
    return name if name.isalpha() and name.islower() else None


@cache
def antonyms(word: str, pos: str) -> list[str]:
    """Single-word antonyms of ``word`` over its first three senses (direct, then via the cluster head)."""
    word = word.lower()
    found: list[str] = []
    for sense in _wordnet().synsets(word, pos=pos)[:3]:
        heads = [sense, *sense.similar_tos()] if sense.pos() == "s" else [sense]
        for head in heads:
            for lemma in head.lemmas():
                if head is sense and lemma.name() != word:
                    continue
                for antonym in lemma.antonyms():
                    name = _single(antonym.name())
                    if name and name != word and name not in found:
                        found.append(name)
    return found


@cache
def cohyponyms(noun: str) -> list[str]:
    """Common single-word nouns sharing a hypernym with the first sense of ``noun`` (apple -> pear)."""
    senses = _wordnet().synsets(noun, pos="n")
    if not senses:
        return []
    sense, noun = senses[0], noun.lower()
    found: list[str] = []
    for hypernym in sense.hypernyms():
        for sibling in hypernym.hyponyms():
            if sibling == sense:
                continue
            for lemma in sibling.lemmas()[:1]:
                name = _single(lemma.name())
                if name and name != noun and name not in found and _attested(lemma):
                    found.append(name)
    return sorted(found)
