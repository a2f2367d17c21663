"""Triplets of the natural pairs: each rewording with its source's negative and with negatives made
from the rewording itself."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from paraamr.quality.data import read_pairs
from paraamr.quality.natural import natural_positives, natural_training, natural_triplets
from paraamr.records import normalize

ROWS = read_pairs(Path(__file__).parent / "data" / "tiny_natural.tsv")


@pytest.fixture(scope="module")
def triplets():
    return natural_triplets(ROWS, seed=0)


def test_each_rewording_meets_its_sources_negative(triplets):
    hand = [t for t in triplets if t.negative_op.startswith("natural_")]
    expected = {(r["text"], p["para_text"], r["para_text"]) for r in ROWS if r["label"] == 0
                for p in ROWS if p["text"] == r["text"] and p["label"] == 1}  # fmt: skip
    assert {(t.anchor, t.positive, t.negative) for t in hand} == expected and len(hand) == 8
    kinds = {(r["text"], r["para_text"]): r["kind"] for r in ROWS}
    assert all(t.positive_op == f"natural_{kinds[t.anchor, t.positive]}" for t in hand)


def test_negatives_made_from_the_rewording_keep_its_order(triplets):
    """A role swap of the passive rewording is a passive too: word order alone cannot tell it."""
    made = [t for t in triplets if t.negative_op.endswith("_of_positive")]
    assert Counter(t.negative_op for t in made).keys() == {"role_swap_of_positive", "phrase_swap_of_positive"}
    for t in made:
        assert normalize(t.negative) not in {normalize(t.anchor), normalize(t.positive)}
        assert t.positive in {r["para_text"] for r in ROWS if r["text"] == t.anchor and r["label"] == 1}
    voice = "The mail carrier was barked at by the neighbors' dog every morning last week."
    assert any(t.positive == voice and t.negative == "The neighbors' dog was barked at by the mail carrier "
               "every morning last week." for t in made)  # fmt: skip
    assert len({(t.positive, t.negative) for t in made}) == len(made)  # none made twice


def test_natural_training_adds_operator_negatives_with_rewordings():
    triplets = natural_training(ROWS, seed=0, operator_triplets=6)
    ops = [t for t in triplets if t.positive_op == "natural"]
    assert len(ops) == 6 and triplets[: len(triplets) - 6] == natural_triplets(ROWS, seed=0)
    positives = natural_positives(ROWS)
    assert all(t.positive in positives[t.anchor] for t in ops)
    assert natural_training(ROWS, seed=0, operator_triplets=6) == triplets  # deterministic
