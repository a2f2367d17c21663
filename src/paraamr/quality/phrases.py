"""Operators over phrases and whole sentences: a multi-word synonym (positive), a fragment and a
topic shift (negatives), registered in :mod:`paraamr.quality.operators`. ``phrase_synonym`` and
``topic_shift`` read the spaCy parse (:func:`~paraamr.quality.edits.syntax`) and return None without it.

>>> import random
>>> fragment("The neighbors' dog barked at the mail carrier every morning.", random.Random(0))
"The neighbors' dog barked at the"
"""

from __future__ import annotations

import random

from paraamr.lexicon import common_words
from paraamr.quality.edits import changed, replace_word, syntax
from paraamr.quality.inflection import inflect_like
from paraamr.quality.positive import synonym_candidates
from paraamr.quality.words import LIGHT_VERBS

__all__ = ["fragment", "phrase_synonym", "topic_shift"]


@syntax
def phrase_synonym(doc, text: str, rng: random.Random) -> str | None:
    """Replace one content word by a multi-word WordNet synonym of its first sense:
    ``died`` -> ``passed away``, ``cancelled`` -> ``called off`` (a verb's first word, a noun's last
    word inflected like the word replaced); none with a placeholder (``oneself``, ``someone``)."""
    return replace_word(doc, synonym_candidates(doc, phrases=True), rng, text, meaning=False)


def fragment(text: str, rng: random.Random) -> str | None:
    """A piece of the sentence (at least six words): its start, a middle part or its end, a third
    to two thirds of its words (``The neighbors' dog barked at``): not a paraphrase of the whole."""
    words = text.split()
    if len(words) < 6:
        return None
    size = rng.randint(max(2, len(words) // 3), max(2, 2 * len(words) // 3))
    start = rng.choice((0, rng.randint(1, len(words) - size), len(words) - size))
    return changed(" ".join(words[start : start + size]).rstrip(",;:"), text, meaning=True)


#: spaCy fine tags whose words :func:`topic_shift` replaces, and their WordNet parts of speech.
_TOPIC_TAGS = {"NN": "n", "NNS": "n", "VB": "v", "VBD": "v", "VBN": "v", "VBZ": "v", "VBP": "v", "JJ": "a"}


@syntax
def topic_shift(doc, text: str, rng: random.Random) -> str | None:
    """The sentence's frame with other content words: every common noun, main verb and
    adjective (at least two) replaced by a common WordNet word of its part of speech, inflected
    like it (``The dog barked at the mail carrier`` -> ``The tree argued at the mail window``):
    the same template about something else."""
    candidates = []
    for tok in doc:
        pos = _TOPIC_TAGS.get(tok.tag_)
        if pos is None or tok.ent_type_ or not tok.is_alpha or tok.pos_ == "AUX" or tok.lemma_ in LIGHT_VERBS:
            continue
        forms = [form for word in rng.sample(common_words(pos), 3) if (form := inflect_like(tok.tag_, word))]
        if forms:
            candidates.append((tok, forms))
    if len(candidates) < 2:
        return None
    return replace_word(doc, candidates, rng, text, meaning=True, count=len(candidates))
