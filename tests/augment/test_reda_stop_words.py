"""English REDA never replaces or inserts through a function word: with the default WordNet source,
EDA's stop words have no synonyms (as in EDA's and REDA's code), so "a" no longer becomes "adenine",
"in" "indium" or "I" "iodine"; content words still get their WordNet synonyms."""

from __future__ import annotations

import pytest

from paraamr.augment.reda import REDA
from paraamr.augment.synonyms import WORDNET, split_affixes
from paraamr.lexicon import synonyms

#: Every function word of SENTENCES (all on EDA's list, jasonwei20/eda_nlp code/eda.py); the other
#: words are content words.
FUNCTION_WORDS = {
    "i", "a", "an", "the", "in", "on", "at", "is", "it", "and", "we", "to", "with", "our", "after", "she",
    "he", "can", "but", "will",
}  # fmt: skip
SENTENCES = [
    "I saw a dog in the park on Monday .",
    "A man in a hat sat on the bench at noon .",
    "The cat is on the mat and it is happy .",
    "We walked to the river with our friends after lunch .",
    "She can play the piano but he will sing .",
]


def _words(text: str) -> list[str]:
    return [split_affixes(token)[1].lower() for token in text.split()]


def test_function_words_have_no_synonyms():
    # WordNet itself lists them (adenine for "a", indium for "in", iodine for "I")
    assert {"adenine", "indium", "iodine"} <= {s for w in ("a", "in", "i") for s in synonyms(w)}
    for word in FUNCTION_WORDS:
        assert WORDNET(word) == WORDNET(word.upper()) == WORDNET(word.capitalize()) == (), word
    assert "hound" in WORDNET("dog") and "cost" in WORDNET("Price")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sr_and_ri_never_go_through_a_function_word(seed):
    reda = REDA(seed=seed, draws=50)
    for text in SENTENCES:
        words = _words(text)
        content = {s.lower() for w in words if w not in FUNCTION_WORDS for s in synonyms(w)}
        through_function = {s.lower() for w in words if w in FUNCTION_WORDS for s in synonyms(w)} - content
        pools = reda.pool(text)
        assert pools["SR"] and pools["RI"], text  # content words still get replaced and inserted
        for out in pools["SR"]:
            changed = [old for old, new in zip(words, _words(out), strict=True) if old != new]
            assert changed and not set(changed) & FUNCTION_WORDS, (text, out)
        for out in pools["RI"]:
            inserted = _words(out)
            for word in words:
                inserted.remove(word)
            assert inserted and set(inserted) <= content, (text, out)
        for out in (o for outputs in pools.values() for o in outputs):
            assert not set(_words(out)) - set(words) & through_function, (text, out)
