"""Long texts (issue 14 item 7): random swap stays linear and draws as before; ``--max-chars``
turns longer texts into failure rows. Speed itself is measured by benchmarks/bench_augment.py."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest
from datasets import Dataset

from paraamr.augment.reda import REDA
from paraamr.augment.runner import augment

TABLE = {"quick": ("fast",), "fox": ("dog",), "jumps": ("leaps",)}


def reda(seed=0):
    return REDA(synonyms=lambda w: TABLE.get(w.lower(), ()), seed=seed)


def exact_one_swap(tokens):
    """The distribution of one RS swap by its definition (the old scan): i uniform, then j uniform
    among the positions holding another token than i's. Computed exactly, independently of REDA."""
    dist: Counter = Counter()
    for i in range(len(tokens)):
        partners = [j for j, t in enumerate(tokens) if t != tokens[i]]
        for j in partners:
            out = list(tokens)
            out[i], out[j] = out[j], out[i]
            dist[tuple(out)] += Fraction(1, len(tokens) * len(partners))
    return dist


@pytest.mark.parametrize(
    "tokens",
    [
        ["x", "x", "x", "y", "z"],  # a token over half the text: the kept list of other positions
        ["a", "b", "c", "a", "d", "b"],  # no token over half: rejection draws
    ],
)
def test_swap_draws_the_defined_distribution(tokens):
    expected = exact_one_swap(tokens)
    runs = 12000
    rng = random.Random(7)
    seen = Counter(tuple(reda().swap(tokens, 1, rng)) for _ in range(runs))
    assert set(seen) == set(expected)
    for outcome, p in expected.items():
        # 5 standard deviations of a binomial count: fails only when the distribution is wrong
        sd = (runs * float(p) * (1 - float(p))) ** 0.5
        assert abs(seen[outcome] - runs * float(p)) <= 5 * sd + 1, outcome


def test_many_swaps_keep_the_multiset_and_the_kept_list_in_step():
    tokens = ["a"] * 700 + ["b", "c"] * 150  # "a" fills 70%: both branches, many times
    rng = random.Random(3)
    for _ in range(20):
        out = reda().swap(tokens, 200, rng)
        assert Counter(out) == Counter(tokens)


def test_a_100k_character_text_is_augmented():
    """Before, each of ~4,000 swaps scanned all ~20,000 tokens (211 s for one row in the audit)."""
    words = ["the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog"]
    rng = random.Random(0)
    text = " ".join(rng.choice(words) for _ in range(22000))[:100_000]
    degenerate = " ".join(["a"] * 49_999 + ["b"])  # one odd token: every swap needs it
    for source in (text, degenerate):
        outputs = reda().augment(source, 2)
        assert len(outputs) == 2 and source not in outputs


def test_max_chars_makes_a_failure_row_and_keeps_the_row():
    long = "word " * 30_000
    data = Dataset.from_dict({"text": ["The quick fox jumps .", long], "label": [1, 0]})
    result = augment(data, method="reda", n=1, reda=reda(), max_chars=1000)
    rows = result.dataset.to_list()
    assert [r["source_index"] for r in rows if not r["augmented"]] == [0, 1]
    assert {r["source_index"] for r in rows if r["augmented"]} == {0}
    assert rows[-1]["text"] == long  # kept unchanged
    (failure,) = result.failures
    assert (
        failure["index"] == 1
        and failure["reason"] == f"longer than --max-chars 1000 ({len(long)} characters)"
    )
