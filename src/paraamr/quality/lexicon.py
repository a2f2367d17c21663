"""WordNet look-ups for the negative operators: antonyms and co-hyponyms of a word (offline).

(Synonyms come from the package's one synonym look-up, :func:`paraamr.augment.synonyms.synonyms`,
with ``first_sense=True, attested=True`` so a replacement keeps the meaning.) Antonyms come from
the word's first three senses, directly or through the head of an adjective cluster. Parts of
speech are WordNet's letters: ``n``, ``v``, ``a`` (adjectives, satellites included) and ``r``.

>>> antonyms("expensive", "a")
['cheap']
>>> "pear" in cohyponyms("apple")
True
>>> antonyms("xqzzy", "a"), cohyponyms("xqzzy")
([], [])
"""

from __future__ import annotations

from functools import cache

from paraamr.wordnet import wordnet

#: spaCy universal POS tags -> WordNet parts of speech.
WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}


def _single(name: str) -> str | None:
    """A lemma name usable as one replacement word (no multiword or capitalized names)."""
    return name if name.isalpha() and name.islower() else None


@cache
def antonyms(word: str, pos: str) -> list[str]:
    """Single-word antonyms of ``word`` over its first three senses (direct, then via the cluster head)."""
    word = word.lower()
    found: list[str] = []
    for sense in wordnet().synsets(word, pos=pos)[:3]:
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
    senses = wordnet().synsets(noun, pos="n")
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
                if name and name != noun and name not in found and lemma.count() > 0:
                    found.append(name)
    return sorted(found)
