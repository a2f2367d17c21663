"""The registry of quality operators: positive (meaning-preserving) and negative (meaning-changing).

Each is an :data:`~paraamr.quality.edits.Operator`, deterministic for a seed; the operators of
:mod:`~paraamr.quality.positive`, :mod:`~paraamr.quality.negative` and :mod:`~paraamr.quality.phrases`
are re-exported here.

>>> import random
>>> sorted(NEGATIVE)[:3], POSITIVE["contraction"]("I do not know.", random.Random(0))
(['antonym', 'date_time', 'deletion'], "I don't know.")
"""

from __future__ import annotations

from paraamr.quality.edits import Operator
from paraamr.quality.negative import (
    antonym,
    date_time,
    deletion,
    entity_swap,
    negation,
    noun_swap,
    number_change,
    phrase_swap,
    role_swap,
    scramble,
    unit_change,
)
from paraamr.quality.phrases import fragment, phrase_synonym, topic_shift
from paraamr.quality.positive import (
    contraction,
    dative_shift,
    front_adverbial,
    negated_antonym,
    number_format,
    paraamr_paraphrase,
    particle_shift,
    passive_voice,
    punctuation_case,
    synonym,
    typo,
)

__all__ = [
    "EXTRA",
    "NEGATIVE",
    "POSITIVE",
    "Operator",
    "antonym",
    "contraction",
    "date_time",
    "dative_shift",
    "deletion",
    "entity_swap",
    "fragment",
    "front_adverbial",
    "negated_antonym",
    "negation",
    "noun_swap",
    "number_change",
    "number_format",
    "paraamr_paraphrase",
    "particle_shift",
    "passive_voice",
    "phrase_swap",
    "phrase_synonym",
    "punctuation_case",
    "role_swap",
    "scramble",
    "synonym",
    "topic_shift",
    "typo",
    "unit_change",
]

#: Meaning-preserving operators by name (ParaAMR paraphrases join them via :func:`paraamr_paraphrase`).
POSITIVE: dict[str, Operator] = {
    "synonym": synonym,
    "contraction": contraction,
    "punctuation_case": punctuation_case,
    "passive_voice": passive_voice,
    "front_adverbial": front_adverbial,
    "dative_shift": dative_shift,
    "particle_shift": particle_shift,
    "negated_antonym": negated_antonym,
    "typo": typo,
    "number_format": number_format,
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
    "phrase_swap": phrase_swap,
    "unit": unit_change,
    "date_time": date_time,
    "scramble": scramble,
}
#: Opt-in operators of ``quality train``: ``--phrase-synonyms``, ``--fragment-triplets`` and
#: ``--topic-shift-triplets``.
EXTRA: dict[str, Operator] = {
    "phrase_synonym": phrase_synonym,
    "fragment": fragment,
    "topic_shift": topic_shift,
}
