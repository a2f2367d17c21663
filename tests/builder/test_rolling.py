from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paraamr.builder.rolling import Rolling
from paraamr.layout import arrow_bytes


def _rows(seed: int) -> pa.Table:
    """Sources of 1-12 rows each, as ``pairs`` holds them (one id and text a run)."""
    rng = random.Random(seed)
    ids, paras = [], []
    for source in range(rng.randint(5, 40)):
        for k in range(rng.randint(1, 12)):
            ids.append(f"s{source}")
            paras.append("x" * rng.randint(1, 30) + str(k))
    return pa.table({"id": ids, "text": [f"text of {i}" for i in ids], "para_text": paras})


def _feed(out: Rolling, table: pa.Table, rng: random.Random) -> None:
    """The table in batches of random sizes, as writers flush them."""
    start = 0
    while start < table.num_rows:
        n = rng.randint(1, 25)
        out.add(table.slice(start, n).combine_chunks().to_batches()[0])
        start += n


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("group", [("id", "text"), ()])
def test_files_end_at_their_size_and_never_inside_a_group(tmp_path, seed, group):
    rng = random.Random(seed)
    table = _rows(seed)
    max_bytes = rng.choice([50, 200, 700, 3000])
    row_group = rng.choice([40, 1 << 20])
    out = Rolling(tmp_path, "{:03d}.parquet".format, table.schema, max_bytes, row_group, group=group)
    _feed(out, table, rng)
    out.close()
    files = [pq.read_table(p) for p in out.closed]
    assert pa.concat_tables(files).equals(table)  # every row once, in order
    assert out.rows == table.num_rows
    ends = [f.column("id")[-1].as_py() for f in files[:-1]]
    starts = [f.column("id")[0].as_py() for f in files[1:]]
    if group:  # a source never spans two files
        assert all(end != start for end, start in zip(ends, starts, strict=True))
    for path, f in list(zip(out.closed, files, strict=True))[:-1]:
        size = arrow_bytes(pq.ParquetFile(path).metadata)
        assert size == f.nbytes and size >= max_bytes  # full, by the bytes recorded in the footer
        # and past its size by at most its last group (without groups, its last row)
        last = f.column("id")[-1].as_py()
        tail = sum(1 for v in f.column("id").to_pylist() if v == last) if group else 1
        assert f.slice(0, f.num_rows - tail).nbytes < max_bytes


def test_a_full_file_is_linked_unless_it_goes_on_with_the_open_group(tmp_path):
    schema = pa.schema([("id", pa.string()), ("n", pa.int64())])
    whole = tmp_path / "whole.parquet"  # a file of full size starting with a new source
    pq.write_table(pa.table({"id": ["b"] * 20, "n": list(range(20))}, schema=schema), whole)
    going_on = tmp_path / "going_on.parquet"  # one whose first rows finish the open source
    pq.write_table(pa.table({"id": ["a", "a"] + ["c"] * 18, "n": list(range(20))}, schema=schema), going_on)
    out = Rolling(tmp_path / "out", "{:03d}.parquet".format, schema, 100, 1 << 20, group=("id",))
    out.add(pa.record_batch({"id": ["a"] * 9, "n": list(range(9))}, schema=schema))  # 117 bytes: full
    assert not out.link(going_on)
    for batch in pq.ParquetFile(going_on).iter_batches():
        out.add(batch)
    assert out.link(whole) and out.close() == 3
    ids = [pq.read_table(p).column("id").to_pylist() for p in out.closed]
    assert ids == [["a"] * 11, ["c"] * 18, ["b"] * 20]
