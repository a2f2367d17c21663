"""REDA operators: edit counts follow the rates (Python's round), outputs are distinct and never the
input, SR edits one position at a time, REDA and REDA+NG choose from the same pool."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paraamr.augment.ngram import NgramLM
from paraamr.augment.reda import OPERATORS, REDA, edit_counts, tokenize
from paraamr.augment.synonyms import synonyms
from paraamr.records import normalize

TABLE = {
    "big": ("large", "huge"),
    "dog": ("hound", "canine"),
    "runs": ("sprints",),
    "quickly": ("fast", "rapidly"),
    "house": ("home",),
}
VOCAB = [*TABLE, "the", "a", "red", "of", ",", ".", "Big", "dog,", "(house)", "and"]
texts = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=30).map(" ".join)
SETTINGS = settings(max_examples=60, deadline=None)


def table_reda(seed: int = 0, draws: int = 20) -> REDA:
    return REDA(synonyms=lambda word: TABLE.get(word.lower(), ()), seed=seed, draws=draws)


def is_subsequence(short: list[str], long: list[str]) -> bool:
    it = iter(long)
    return all(token in it for token in short)


def test_counts_use_pythons_round():
    # Python rounds halves to even (independent computation: the language definition of round()).
    assert edit_counts(5) == {"SR": 1, "RS": 1, "RI": 0, "RD": 0}  # 0.1 * 5 = 0.5 -> 0
    assert edit_counts(15)["RI"] == 2  # 1.5 -> 2
    assert edit_counts(25)["RD"] == 2  # 2.5 -> 2
    assert edit_counts(13) == {"SR": 3, "RS": 3, "RI": 1, "RD": 1}  # 2.6 -> 3, 1.3 -> 1
    assert edit_counts(2) == {"SR": 0, "RS": 0, "RI": 0, "RD": 0}


@SETTINGS
@given(texts, st.integers(0, 3))
def test_replace_changes_exactly_the_expected_positions(text, seed):
    reda, tokens = table_reda(), tokenize(text)
    n = edit_counts(len(tokens))["SR"]
    replaceable = [i for i, t in enumerate(tokens) if reda.token_synonyms(t)]
    out = reda.replace(tokens, n, random.Random(seed))
    if not replaceable or n == 0:
        assert out is None
        return
    changed = [i for i, (a, b) in enumerate(zip(tokens, out, strict=True)) if a != b]
    assert len(changed) == min(n, len(replaceable))
    assert all(out[i] in reda.token_synonyms(tokens[i]) for i in changed)


@SETTINGS
@given(texts, st.integers(0, 3))
def test_swap_insert_delete_follow_the_rates(text, seed):
    reda, tokens = table_reda(), tokenize(text)
    counts = edit_counts(len(tokens))
    swapped = reda.swap(tokens, counts["RS"], random.Random(seed))
    if swapped is not None:
        assert Counter(swapped) == Counter(tokens)
        assert sum(a != b for a, b in zip(tokens, swapped, strict=True)) <= 2 * counts["RS"]
    else:
        assert counts["RS"] == 0 or len(set(tokens)) < 2
    inserted = reda.insert(tokens, counts["RI"], random.Random(seed))
    if inserted is not None:
        assert len(inserted) == len(tokens) + counts["RI"]
        assert is_subsequence(tokens, inserted)
    deleted = reda.delete(tokens, counts["RD"], random.Random(seed))
    if deleted is not None:
        assert len(deleted) == len(tokens) - counts["RD"]
        assert is_subsequence(deleted, tokens)
    else:
        assert counts["RD"] == 0


@SETTINGS
@given(texts, st.integers(0, 3))
def test_mix_makes_two_single_edits(text, seed):
    reda, tokens = table_reda(), tokenize(text)
    out = reda.mix(tokens, random.Random(seed))
    if out is not None:  # SR: one token out, one in; RS: none; RI: one in; RD: one out
        gone, new = Counter(tokens) - Counter(out), Counter(out) - Counter(tokens)
        assert abs(len(out) - len(tokens)) <= 2
        assert sum(gone.values()) <= 2 and sum(new.values()) <= 2


@SETTINGS
@given(texts, st.integers(0, 5), st.integers(1, 8))
def test_outputs_are_distinct_and_never_the_input(text, seed, n):
    reda = table_reda(seed)
    pools = reda.pool(text)
    counts = edit_counts(len(tokenize(text)))
    assert set(pools) <= {op for op in OPERATORS if op == "RM" or counts[op] > 0}
    for outputs in pools.values():
        keys = [normalize(o) for o in outputs]
        assert len(set(keys)) == len(keys)
        assert normalize(text) not in keys
    chosen = reda.augment(text, n)
    keys = [normalize(o) for o in chosen]
    assert len(chosen) <= n and len(set(keys)) == len(keys) and normalize(text) not in keys
    assert chosen == table_reda(seed).augment(text, n)  # seeded: the same again
    union = {o for outputs in pools.values() for o in outputs}
    assert set(chosen) <= union
    if len(union) >= n:
        assert len(chosen) == n


def test_replace_edits_one_occurrence_not_every_one():
    reda, tokens = table_reda(), ["dog", "dog", "dog", "dog", "dog"]  # round(0.2 * 5) == 1
    for seed in range(20):
        out = reda.replace(tokens, 1, random.Random(seed))
        assert sum(token != "dog" for token in out) == 1


def test_replace_keeps_punctuation_and_case():
    reda = table_reda()
    assert set(reda.token_synonyms("dog,")) == {"hound,", "canine,"}
    assert set(reda.token_synonyms("Big")) == {"Large", "Huge"}
    assert set(reda.token_synonyms("(house)")) == {"(home)"}
    assert reda.token_synonyms(",") == ()


@SETTINGS
@given(texts, st.integers(0, 5))
def test_reda_and_reda_ng_pick_from_the_same_pool(text, seed):
    lm = NgramLM.train(["the big dog runs quickly .", "a red house , and a big house .", "the dog runs ."])
    reda = table_reda(seed)
    pools = reda.pool(text)
    ranked_first = {max(outputs, key=lm.logprob) for outputs in pools.values()}
    drawn_first = {outputs[0] for outputs in pools.values()}
    best = reda.augment(text, 1, lm=lm)
    random_pick = reda.augment(text, 1)
    if pools:
        assert best[0] in ranked_first
        assert any(
            best[0] in outputs and lm.logprob(best[0]) == max(map(lm.logprob, outputs))
            for outputs in pools.values()
        )
        assert random_pick[0] in drawn_first
    else:
        assert best == random_pick == []


@pytest.mark.slow
def test_wordnet_synonyms_drive_sr_and_ri():
    text = "The quick brown fox jumps over the lazy dog near the old house ."
    reda = REDA(seed=3)
    pools = reda.pool(text)
    assert {"SR", "RS", "RI", "RD", "RM"} == set(pools)
    tokens = tokenize(text)
    for out in pools["SR"]:
        new = tokenize(out)
        for old, token in zip(tokens, new, strict=True):
            if old != token:
                assert token.lower() in synonyms(old.lower())
    assert "cost" in synonyms("price") and "price" not in synonyms("price")
    assert "dog" not in synonyms("dogs") and all("_" not in s for s in synonyms("dog"))
    assert synonyms("buy", "v", first_sense=True, attested=True) == ("purchase",)


def test_forked_children_reopen_wordnet_files():
    # nltk keeps WordNet's data files open; a forked child (datasets.map workers) sharing them
    # would share their file offsets with the parent and race. The child must start without them.
    import os

    from paraamr.augment.synonyms import _wordnet

    assert synonyms("purchase")
    assert _wordnet()._data_file_map  # the parent has files open
    pid = os.fork()
    if pid == 0:
        ok = not _wordnet()._data_file_map and "receive" in synonyms("obtain")
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_draw_of_rm_that_cannot_act_is_skipped_not_the_end_of_its_pool():
    """RM draws random operators, so one draw can find nothing to do where the next does: a first
    such draw ended RM's pool, and a two-word text (RM its only operator) got no new version."""
    reda = REDA(seed=0)
    for text in ("Hello world", "nice idea", "happy car"):
        assert len(reda.pool(text).get("RM", [])) >= 3, text
        assert len(reda.augment(text, 4)) == 4, text
