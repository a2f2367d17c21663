"""evaluate's plan from two readings of its input (paraamr.metrics.scale.Plan, commands.evaluate._plan):
a process holds the pairs of its own chunks alone, each as the plan of the whole input (the list
readers, filter and references, as evaluate composed them before) has it; the readers are lazy."""

from __future__ import annotations

import json
import random

import pytest

from paraamr.commands.evaluate import _plan, build_parser, settings_from_args
from paraamr.errors import InputError
from paraamr.metrics.report import Pair, iter_pairs, read_pairs, with_references
from paraamr.metrics.scale import Plan, make_plan
from paraamr.metrics.table2 import filter_perplexity
from paraamr.tasks import Launch

SOURCES = 128  # 4 pairs each, in two records apart: chunks of 8 pairs hold 2 sources, 64 chunks


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A release file whose sources come back in a second record, far from the first, and its
    references (one a pair)."""
    folder = tmp_path_factory.mktemp("stream")
    rng = random.Random(5)
    second = list(range(SOURCES))
    rng.shuffle(second)
    lines, refs = [], []
    for i in [*range(SOURCES), *second]:
        paras = [{"para_text": f"p{len(refs) + j}.", "perplexity": rng.uniform(20, 200)} for j in (0, 1)]
        lines.append(json.dumps({"text": f"Source {i}.", "paraphrases": paras}))
        refs += [f"reference {len(refs) + j}" for j in range(2)]
    (folder / "rel.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "refs.txt").write_text("\n".join(refs) + "\n")
    return folder


def whole_plan(folder, **options):
    """The plan as evaluate made it before: every pair read, referenced, filtered, then planned."""
    pairs = with_references(read_pairs(folder / "rel.jsonl"), folder / "refs.txt")
    pairs, _ = filter_perplexity(pairs, options.pop("max_perplexity", None), name="rel.jsonl")
    return make_plan(pairs, seed=options.pop("seed", 0), chunk_pairs=8, **options)


def seen(plan: Plan, chunk: int) -> list:
    pairs, clusters = plan.chunk_pairs(chunk)
    return [(p.index, p.where, p.paraphrase, p.reference, c) for p, c in zip(pairs, clusters, strict=True)]


@pytest.mark.parametrize(
    ("extra", "rank", "processes"),
    [([], 0, 1), ([], 1, 2), (["--sample", "100", "--seed", "3", "--max-perplexity", "150"], 0, 1)],
)
def test_a_shard_holds_the_pairs_of_its_own_chunks_alone_as_the_whole_plan_has_them(
    release, extra, rank, processes
):
    args = [str(release / "rel.jsonl"), "--shard", "0/8", "--state-dir", str(release / "st")]
    args += ["--chunk-pairs", "8", "--references", str(release / "refs.txt"), *extra]
    s = settings_from_args(build_parser().parse_args(args))
    plan, _ = _plan(s, Launch(rank=rank, processes=processes))
    whole = whole_plan(release, sample=s.sample, seed=s.seed, max_perplexity=s.max_perplexity)
    mine = whole.owned(shard=(0, 8), rank=rank, processes=processes)
    if not extra:
        assert len(whole.chunks) == 64 and len(whole.pairs) == 4 * SOURCES
        assert mine == list(range(8 * rank, 64, 8 * processes))
    assert (plan.chunks, plan.unit, plan.sources, len(plan.groups)) == (
        whole.chunks, whole.unit, whole.sources, len(whole.groups)
    )  # fmt: skip
    assert sorted(plan.held) == mine and len(plan.pairs) == whole.size(mine) < len(whole.pairs) / 7
    for k in mine:
        assert seen(plan, k) == seen(whole, k)  # indices, places, references and clusters
    with pytest.raises(ValueError, match="not held"):
        plan.chunk_pairs(mine[0] + 1)


def test_the_second_reading_must_find_the_input_of_the_first():
    pairs = [Pair(f"line {i}", f"s{i // 2}", f"p{i}", index=i) for i in range(10)]
    plan = Plan.scan(pairs, sample=None, seed=0, chunk_pairs=3)
    with pytest.raises(InputError, match=r"x\.tsv: changed while it was read"):
        plan.hold([*pairs, Pair("line 10", "s9", "p")], range(len(plan.chunks)), name="x.tsv")
    with pytest.raises(InputError, match="changed while it was read"):
        Plan.scan(pairs, sample=None, seed=0, chunk_pairs=3).hold(pairs[:7], [0])


@pytest.mark.parametrize(
    ("name", "good", "bad", "problem"),
    [
        ("pairs.tsv", "I know.\tIt is known.\n", "a\tb\tc\td\n", "expected 2 columns"),
        ("pairs.jsonl", '{"text": "I know.", "para_text": "Known."}\n', "{not json\n", "not JSON"),
        ("rel.jsonl", '{"text": "I know.", "paraphrases": [{"para_text": "K."}]}\n', "{not json\n", "line 2"),
    ],
)
def test_the_readers_read_no_further_than_the_pairs_wanted(tmp_path, name, good, bad, problem):
    path = tmp_path / name
    path.write_text(good + bad)
    first = next(iter_pairs(path))  # before: the whole file was read (and refused) first
    assert (first.source, first.index) == ("I know.", 0)
    with pytest.raises(InputError, match=problem):
        list(iter_pairs(path))


def test_a_source_that_is_not_text_is_one_source_of_its_own_as_before():
    """A Hub row without a text gives a pair whose source is None: the plan ended in an internal
    error (IndexError when it came first, AttributeError after a text), where the list plan grouped
    it like any source and its pairs failed when scored. Grouped as by exact equality, first
    appearance first (``sample.source_groups`` of the list plan, by hand here)."""
    sources = [None, "a", None, None, "None", "b", "a"]
    pairs = [Pair(f"row {i}", s, f"p{i}", index=i) for i, s in enumerate(sources)]
    plan = make_plan(pairs, sample=None, seed=0, chunk_pairs=1)
    groups = {}
    for i, s in enumerate(sources):
        groups.setdefault(s, []).append(i)
    expected = [(g, i) for g, members in enumerate(groups.values()) for i in members]
    chunks = [plan.chunk_pairs(k) for k in range(len(plan.chunks))]
    held = sorted((c, p.index) for ps, cs in chunks for p, c in zip(ps, cs, strict=True))
    assert held == sorted(expected) and plan.sources == 4
