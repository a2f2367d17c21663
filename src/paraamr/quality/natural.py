"""Triplets from natural pairs: hand-written rewordings as positives, with hard negatives.

Each rewording is paired with its source's hand-written negatives, with negatives made from the
rewording itself (same word order, another meaning) and with the operators' negatives of the
source. Only training sources come here: set C never does.

>>> rows = [
...     {"text": "The dog chased the cat.", "para_text": "The cat was chased by the dog.", "label": 1,
...      "kind": "voice"},
...     {"text": "The dog chased the cat.", "para_text": "The dog chased the cow.", "label": 0,
...      "kind": "entity"},
... ]
>>> for t in natural_triplets(rows):
...     print(t.positive_op, t.negative_op, t.negative)
natural_voice natural_entity The dog chased the cow.
natural_voice role_swap_of_positive The dog was chased by the cat.
>>> natural_positives(rows)
{'The dog chased the cat.': ['The cat was chased by the dog.']}
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from paraamr.quality.analysis import parsed
from paraamr.quality.edits import Operator
from paraamr.quality.negative import phrase_swap, role_swap
from paraamr.quality.positive import paraamr_paraphrase
from paraamr.quality.triplets import Triplet, build_triplets
from paraamr.records import normalize

__all__ = ["natural_positives", "natural_training", "natural_triplets"]

#: The negatives made from a natural positive itself, by name (``NAME_of_positive`` in triplets).
DERIVED: dict[str, Operator] = {"role_swap": role_swap, "phrase_swap": phrase_swap}


def _by_source(rows: Iterable[dict]) -> dict[str, dict[int, list[tuple[str, str]]]]:
    groups: dict[str, dict[int, list[tuple[str, str]]]] = {}
    for row in rows:
        group = groups.setdefault(row["text"], {0: [], 1: []})
        group[int(row["label"])].append((row["para_text"], row["kind"]))
    return groups


def natural_positives(rows: Iterable[dict]) -> dict[str, list[str]]:
    """``{source: [rewording, ...]}`` of the valid natural pairs."""
    return {source: [p for p, _ in group[1]] for source, group in _by_source(rows).items() if group[1]}


def natural_triplets(rows: Iterable[dict], *, seed: int = 0) -> list[Triplet]:
    """Triplets of natural pairs (rows as :func:`~paraamr.quality.data.natural_pairs` gives them):
    each rewording with each hand-written negative of its source and with each negative of
    :data:`DERIVED` that applies to the rewording, drawn with ``seed``."""
    groups = _by_source(rows)
    triplets: list[Triplet] = []
    with parsed(p for group in groups.values() for p, _ in group[1]):
        for source, group in groups.items():
            for positive, kind in group[1]:
                pos_op = f"natural_{kind}"
                triplets += [Triplet(source, positive, n, pos_op, f"natural_{nk}") for n, nk in group[0]]
                rng = random.Random(f"{seed}:{source}:{positive}")
                made = {normalize(source)}
                for name, op in DERIVED.items():
                    negative = op(positive, rng)
                    if negative and normalize(negative) not in made:  # not the source, not made twice
                        made.add(normalize(negative))
                        triplets.append(Triplet(source, positive, negative, pos_op, f"{name}_of_positive"))
    return triplets


def natural_training(
    rows: Iterable[dict], *, seed: int = 0, operator_triplets: int = 1000, progress: bool = False
) -> list[Triplet]:
    """Every triplet of :func:`natural_triplets` and up to ``operator_triplets`` of the operators'
    negatives of the sources, each paired with one of the source's rewordings (the ``natural``
    positive operator; negative kinds taken in turns, as :func:`build_triplets` does)."""
    rows = list(rows)
    triplets = natural_triplets(rows, seed=seed)
    if operator_triplets > 0:
        sources = natural_positives(rows)
        positives = {"natural": paraamr_paraphrase(sources)}
        triplets += build_triplets(
            sources, seed=seed, max_triplets=operator_triplets, positives=positives, progress=progress
        )
    return triplets
