"""paraamr.builder.folder: push_to_hub shard names, byte-sized shards, crash-safe finalize, resume."""

from __future__ import annotations

import fnmatch
import json
import os

import pyarrow.parquet as pq
import pytest

from paraamr import layout
from paraamr.builder import folder, rolling
from paraamr.errors import InputError
from paraamr.records import PAIRS_SCHEMA


def _rows(n: int, start: int = 0) -> list[dict]:
    return [
        {
            "id": f"{i:08d}",
            "text": f"source {i} " * 3,
            "para_text": f"paraphrase {i} " * 4,
            "perplexity": float(i),
        }
        for i in range(start, start + n)
    ]


def _read(root, config="pairs", split="train") -> list[str]:
    paths = layout.list_shards(root).get(config, {}).get(split, [])
    return [row["id"] for p in paths for row in pq.read_table(p).to_pylist()]


def _files(root) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("split", ["train", "my_split", "a_00001_of_00002", "x.y"])
def test_any_split_name_is_parsed_back_and_matched_by_its_card_pattern_only(tmp_path, split):
    for name in (split, f"{split}_other"):  # datasets' rule: no "-" in a split name (issue 28)
        with folder.ShardWriter(tmp_path, "pairs", name, PAIRS_SCHEMA) as w:
            w.write_rows(_rows(3))
    folder.finalize(tmp_path)
    shards = layout.list_shards(tmp_path)["pairs"]
    assert sorted(shards) == sorted([split, f"{split}_other"])
    assert [p.name for p in shards[split]] == [f"{split}-00000-of-00001.parquet"]
    rel = [str(p.relative_to(tmp_path)) for ps in shards.values() for p in ps]
    assert [r for r in rel if fnmatch.fnmatchcase(r, layout.data_files("pairs", split))] == [
        f"data/pairs/{split}-00000-of-00001.parquet"
    ]


def test_bad_names_are_refused(tmp_path):
    for bad in ("", "a/b", ".hidden", "..", "my-split", "a\nb", "../x"):
        with pytest.raises(ValueError, match="breaks datasets' rule"):
            folder.ShardWriter(tmp_path, "pairs", bad, PAIRS_SCHEMA)
    for bad in ("", "a/b", ".hidden", "..", "a\nb", "a:b"):
        with pytest.raises(ValueError, match="cannot name a folder"):
            folder.ShardWriter(tmp_path, bad, "train", PAIRS_SCHEMA)


def test_shards_are_sized_by_arrow_bytes_and_row_groups_bounded(tmp_path):
    n = 20_000
    total = sum(
        b.nbytes for b in __import__("pyarrow").Table.from_pylist(_rows(n), schema=PAIRS_SCHEMA).to_batches()
    )
    target = total // 6
    with folder.ShardWriter(
        tmp_path, "pairs", "train", PAIRS_SCHEMA, max_shard_size=target, row_group_size=target // 3
    ) as w:
        for start in range(0, n, 2500):  # commits in between: small parts, merged by finalize
            w.write_rows(_rows(2500, start))
            w.commit()
    folder.finalize(tmp_path, max_shard_size=target, row_group_size=target // 3)
    paths = layout.list_shards(tmp_path)["pairs"]["train"]
    sizes = [layout.arrow_bytes(pq.ParquetFile(p).metadata) for p in paths]
    assert len(paths) in (6, 7) and paths[0].name == f"train-00000-of-{len(paths):05d}.parquet"
    assert all(0.98 * target <= s <= 1.02 * target for s in sizes[:-1]), (target, sizes)
    for p in paths:
        meta = pq.ParquetFile(p).metadata
        assert meta.num_row_groups >= 3 or p == paths[-1]
        assert all(meta.row_group(i).num_rows <= n for i in range(meta.num_row_groups))
    assert _read(tmp_path) == [f"{i:08d}" for i in range(n)]  # every row once, in order
    info = layout.layout_info(tmp_path)["pairs"]["train"]
    assert info["num_examples"] == n and info["num_bytes"] == sum(sizes)
    assert _files(tmp_path) == sorted(f"data/pairs/{p.name}" for p in paths)  # parts and staging gone


def test_full_parts_are_linked_not_rewritten(tmp_path):
    with folder.ShardWriter(tmp_path, "pairs", "train", PAIRS_SCHEMA, max_shard_size=20_000) as w:
        w.write_rows(_rows(3000))
    parts = w.parts
    inodes = [os.stat(p).st_ino for p in parts]
    folder.finalize(tmp_path, max_shard_size=20_000)
    finals = layout.list_shards(tmp_path)["pairs"]["train"]
    assert [os.stat(p).st_ino for p in finals[: len(inodes) - 1]] == inodes[:-1]


def _two_processes_with_an_uncommitted_tail(root) -> None:
    """Rank 0 and 1 of a 2-process run; rank 1 was killed after its commit, leaving a part and a
    temporary file written after it."""
    for rank in (0, 1):
        w = folder.ShardWriter(
            root, "pairs", "train", PAIRS_SCHEMA, writer=layout.writer_id(rank, 2), max_shard_size=5000
        )
        f = folder.FailureWriter(root, writer=layout.writer_id(rank, 2))
        w.write_rows(_rows(100, 1000 * rank))
        f.write({"id": f"fail-{rank}"})
        committed = {"pairs/train": w.commit(), "failures": f.commit()}
        before = len(w.parts)
        w.write_rows(_rows(50, 1000 * rank + 100))
        w.commit()  # after the last commit of the state: must be deleted on resume
        late = len(w.parts) - before
        parts = root / layout.PARTS / "pairs" / "train"
        (parts / f".0000{rank}-of-00002-00009.parquet.tmp").write_bytes(b"half")
        removed = folder.clean_parts(root, writer=layout.writer_id(rank, 2), committed=committed)
        assert late >= 2 and removed == late + 1  # the late parts and the temporary file


def test_resume_deletes_uncommitted_parts_and_finalize_merges_processes_in_rank_order(tmp_path):
    _two_processes_with_an_uncommitted_tail(tmp_path)
    assert folder.pending(tmp_path)
    written = folder.finalize(tmp_path)
    assert len(written["pairs"]["train"]) == 1
    assert _read(tmp_path) == [f"{i:08d}" for i in [*range(100), *range(1000, 1100)]]
    (failures,) = layout.failure_files(tmp_path)
    assert failures.name == "failures-00000-of-00001.jsonl"
    assert [json.loads(line)["id"] for line in failures.read_text().splitlines()] == ["fail-0", "fail-1"]
    assert not folder.pending(tmp_path) and folder.finalize(tmp_path) == {}  # done: a no-op


class Killed(Exception):
    pass


@pytest.mark.parametrize("where", ["replace", "unlink", "link", "write"])
def test_finalize_killed_anywhere_resumes_to_the_same_folder(tmp_path, monkeypatch, where):
    reference = tmp_path / "reference"
    _two_processes_with_an_uncommitted_tail(reference)
    folder.finalize(reference, max_shard_size=2000)
    expected = {p: (reference / p).read_bytes() for p in _files(reference)}
    assert len(expected) > 3
    for kill_at in range(1, 40):
        root = tmp_path / f"killed-{kill_at}"
        _two_processes_with_an_uncommitted_tail(root)
        calls = [0]
        target = {"replace": os, "unlink": type(root), "link": os, "write": rolling.Rolling}
        name = {"replace": "replace", "unlink": "unlink", "link": "link", "write": "add"}[where]
        real = getattr(target[where], name)

        def dying(*args, real=real, calls=calls, kill_at=kill_at, **kwargs):
            calls[0] += 1
            if calls[0] == kill_at:
                raise Killed
            return real(*args, **kwargs)

        monkeypatch.setattr(target[where], name, dying)
        try:
            folder.finalize(root, max_shard_size=2000)
        except Killed:
            pass
        finally:
            monkeypatch.undo()
        folder.finalize(root, max_shard_size=2000)
        assert {p: (root / p).read_bytes() for p in _files(root)} == expected, kill_at
        if calls[0] < kill_at:  # ran to the end without reaching the kill: every point was tried
            break


def test_a_split_with_shards_is_not_written_again(tmp_path):
    for _ in range(2):
        with folder.ShardWriter(tmp_path, "pairs", "train", PAIRS_SCHEMA) as w:
            w.write_rows(_rows(2))
        if not layout.list_shards(tmp_path):
            folder.finalize(tmp_path)
    with pytest.raises(ValueError, match="already has shards"):
        folder.finalize(tmp_path)


def test_remove_layout_deletes_only_the_layout(tmp_path):
    with folder.ShardWriter(tmp_path, "pairs", "train", PAIRS_SCHEMA) as w:
        w.write_rows(_rows(2))
    folder.finalize(tmp_path)
    (tmp_path / "data" / "pairs" / "notes.txt").write_text("mine")
    (tmp_path / "keep.parquet").write_text("mine")
    (tmp_path / "evaluation.json").write_text("{}")
    assert layout.remove_layout(tmp_path) == 2
    assert _files(tmp_path) == ["data/pairs/notes.txt", "keep.parquet"]


def test_any_dataset_goes_through_write_table_and_loads_by_its_card_pattern(tmp_path):
    """The route of augment and other writers of arbitrary columns: Arrow batches in, shards out."""
    import datasets

    ds = datasets.Dataset.from_dict({"sentence": [f"s{i}" for i in range(2500)], "label": list(range(2500))})
    w = folder.ShardWriter(tmp_path, "default", "train", ds.features.arrow_schema, max_shard_size=10_000)
    for batch in ds.with_format("arrow").iter(batch_size=700):
        w.write_table(batch)
    w.commit()
    written = folder.finalize(tmp_path, max_shard_size=10_000)
    assert len(written["default"]["train"]) > 2
    files = {"train": str(tmp_path / layout.data_files("default", "train"))}
    back = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=str(tmp_path / "c"))
    assert back.to_dict() == ds.to_dict()


@pytest.mark.parametrize(
    "plan",
    [
        "null",
        "{}",
        '{"parts": ["../victim.txt"], "renames": []}',
        '{"parts": [], "renames": [[".paraamr/final/a", "../victim.txt"]]}',
        '{"parts": ["/tmp/victim.txt"], "renames": []}',
    ],
)
def test_a_damaged_finalize_plan_is_refused_and_touches_nothing_outside(tmp_path, plan):
    root = tmp_path / "out"
    with folder.ShardWriter(root, "pairs", "train", PAIRS_SCHEMA, writer="00000-of-00001") as w:
        w.write({"id": "0", "text": "t", "para_text": "p"})
    victim = tmp_path / "victim.txt"
    victim.write_text("a user's file")
    (root / folder._PLAN).write_text(plan)
    with pytest.raises(InputError, match=r"finalize\.json: not a plan of the finalize under way"):
        folder.finalize(root)
    assert victim.read_text() == "a user's file"
    assert list((root / layout.PARTS).rglob("*.parquet"))  # the parts are kept
