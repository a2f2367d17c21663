"""Statistics that add up (paraamr.metrics.stats, .sample, .scale): any partition of the pairs into
chunks, merged in any order, gives the same bits; corpus BLEU from summed per-pair statistics is
sacrebleu's corpus BLEU; the plan keeps sources whole and gives every chunk exactly one owner."""

from __future__ import annotations

import argparse
import json
import random
from fractions import Fraction
from itertools import pairwise

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

from paraamr.metrics.reference import bleu_from_statistics, bleu_statistics, corpus_bleu, summed
from paraamr.metrics.report import Pair
from paraamr.metrics.scale import combine, make_plan
from paraamr.metrics.stats import ExactSum, RowStats
from paraamr.options import shard_spec
from paraamr.tasks import owned

MEASURES = ("semantic_similarity", "ted3")


def chunked(values: list[float], cuts: list[int]) -> list[list[float]]:
    bounds = [0, *sorted(c % (len(values) + 1) for c in cuts), len(values)]
    return [values[a:b] for a, b in pairwise(bounds)]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=60),
    st.lists(st.integers(0, 10**6), max_size=6),
    st.randoms(use_true_random=False),
)
def test_any_partition_merged_in_any_order_gives_the_exact_mean(values, cuts, rng):
    parts = []
    for k, chunk in enumerate(chunked(values, cuts)):
        stats = RowStats(MEASURES)
        stats.update({m: chunk for m in MEASURES}, chunk=k)
        parts.append(RowStats.from_dict(json.loads(json.dumps(stats.to_dict()))))  # through a state file
    rng.shuffle(parts)
    merged = RowStats(MEASURES)
    for part in parts:
        merged.merge(part)
    exact = float(sum(map(Fraction, values)) / len(values))  # fractions: an independent exact mean
    assert merged.pairs == len(values) and merged.mean("semantic_similarity") == exact


def test_float_sums_would_not_add_up():
    # why the sums are exact: the same values summed in two orders differ in floats
    values = [0.1, 0.2, 0.3, 1e16, -1e16]
    assert sum(values) != sum(reversed(values))
    assert (
        ExactSum.of(values).value()
        == ExactSum.of(reversed(values)).value()
        == float(sum(map(Fraction, values)))
    )


def test_merge_refuses_what_does_not_add_up():
    a, b = RowStats(MEASURES), RowStats(MEASURES)
    a.update({m: [1.0] for m in MEASURES}, chunk=0)
    b.update({m: [2.0] for m in MEASURES}, chunk=0)
    with pytest.raises(ValueError, match="chunk 0 is in both"):
        RowStats.from_dict(a.to_dict()).merge(b)
    a.signatures, c = {"ted": "parser:x"}, RowStats(MEASURES)
    c.update({m: [2.0] for m in MEASURES}, chunk=1)
    c.signatures = {"ted": "parser:y"}
    with pytest.raises(ValueError, match="signatures of ted"):
        a.merge(c)
    with pytest.raises(ValueError, match="non-finite"):
        RowStats(MEASURES).update({m: [float("nan")] for m in MEASURES}, chunk=0)


def test_corpus_bleu_from_summed_pair_statistics_is_sacrebleus():
    rng = random.Random(0)
    words = ["the", "a", "cat", "dog", "sat", "ran", "on", "under", "mat", "house", "quickly"]
    preds = [" ".join(rng.choices(words, k=rng.randint(1, 9))) for _ in range(40)]
    refs = [" ".join(rng.choices(words, k=rng.randint(1, 9))) for _ in range(40)]
    golden = sacrebleu.corpus_bleu(preds, [refs], lowercase=True).score  # sacrebleu on the whole
    assert corpus_bleu(preds, refs)[0] == golden
    stats = bleu_statistics(preds, refs)
    halves = [summed(stats[:17]), summed(stats[17:])]
    assert bleu_from_statistics([a + b for a, b in zip(*halves, strict=True)])[0] == golden


def test_the_plan_keeps_sources_whole_and_every_chunk_has_one_owner():
    rng = random.Random(1)
    sources = [f"s{rng.randrange(30)}" for _ in range(200)]
    pairs = [Pair(f"line {i}", s, f"p{i}", index=i) for i, s in enumerate(sources)]
    plan = make_plan(pairs, sample=None, seed=0, chunk_pairs=7)
    seen: dict[str, int] = {}
    for k in range(len(plan.chunks)):
        chunk, clusters = plan.chunk_pairs(k)
        assert len({p.source for p in chunk}) == len(set(clusters))
        for p in chunk:
            assert seen.setdefault(p.source, k) == k  # every pair of a source in one chunk
    assert sorted(p.index for k in range(len(plan.chunks)) for p in plan.chunk_pairs(k)[0]) == list(
        range(200)
    )
    for shards in (1, 3):
        for processes in (1, 2, 4):
            for k in range(len(plan.chunks)):
                owners = [
                    (i, r)
                    for i in range(shards)
                    for r in range(processes)
                    if owned(k, rank=r, processes=processes, shard=(i, shards))
                ]
                assert len(owners) == 1, (k, shards, processes, owners)


def test_a_sample_draws_sources_with_all_their_pairs_or_pairs():
    pairs = [Pair(f"line {i}", f"s{i // 3}", f"p{i}", index=i) for i in range(30)]
    plan = make_plan(pairs, sample=4, seed=2, chunk_pairs=5)
    assert plan.unit == "sources" and len(plan.groups) == 4 and len(plan.pairs) == 12
    assert make_plan(pairs, sample=4, seed=2, chunk_pairs=5).pairs == plan.pairs  # seeded
    single = [Pair(f"line {i}", f"s{i}", f"p{i}", index=i) for i in range(30)]
    one = make_plan(single, sample=4, seed=2, chunk_pairs=5)
    assert one.unit == "pairs" and len(one.pairs) == 4


def test_combine_names_the_process_that_failed_and_a_missing_chunk():
    stats = RowStats(MEASURES)
    stats.update({m: [1.0] for m in MEASURES}, chunk=0)
    with pytest.raises(Exception, match="process 1 of 2: boom"):
        combine([("ok", stats.to_dict()), ("error", "boom")], {0})
    with pytest.raises(Exception, match=r"scored chunks \[0\], not \[0, 1\]"):
        combine([("ok", stats.to_dict()), ("ok", None)], {0, 1})


def test_shard_spec_reads_slurm_arrays():
    assert shard_spec("0/1") == (0, 1) and shard_spec("7/8") == (7, 8)
    assert shard_spec("slurm", {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "8"}) == (3, 8)
    one_based = {"SLURM_ARRAY_TASK_ID": "8", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "8"}
    assert shard_spec("slurm", one_based) == (7, 8)
    stepped = {"SLURM_ARRAY_TASK_ID": "12", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "12"}
    assert shard_spec("slurm", {**stepped, "SLURM_ARRAY_TASK_STEP": "4"}) == (3, 4)
    for bad, message in (
        ("3", "is not I/N"),
        ("3/3", "shard 3 of 3: I must be in 0..2"),
        ("0/0", "N >= 1"),
        ("slurm", "SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT"),
    ):
        with pytest.raises(argparse.ArgumentTypeError, match=message):
            shard_spec(bad, {})
