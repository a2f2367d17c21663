"""The folder-equivalence oracle: what two ``paraamr generate`` folders must agree on to be the same
corpus, however each was made (killed and rerun, N processes or one, shards in any order, Slurm,
datatrove's executors, the Hub journey).

:func:`content` reads a folder as ``records`` by id (their perplexities apart), ``pairs`` and
``failures`` sorted, and the summary's counts (without timings). :func:`assert_same` compares
perplexities to a relative 1e-5, since batches of other sizes move float32 sums in their last bits,
and ``exact=True`` bit for bit. A record id written twice fails at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest


def records(folder: Path, config: str = "default") -> list[dict]:
    """The rows of ``config`` (``default`` or ``pairs``), in file order."""
    files = sorted((folder / "data" / config).glob("*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def failures(folder: Path) -> list[dict]:
    """The failure rows, in file order."""
    return [json.loads(line) for f in sorted((folder / "failures").glob("*.jsonl")) for line in f.open()]


@dataclass
class Content:
    """A folder as the oracle compares it."""

    records: dict[str, dict]
    perplexities: dict[str, list[float]]
    pairs: list[tuple]
    failures: list[tuple]
    counts: dict[str, Any] | None


def content(folder: Path) -> Content:
    """:class:`Content` of a generate folder (``counts`` None when it has no summary yet)."""
    by_id: dict[str, dict] = {}
    perplexities: dict[str, list[float]] = {}
    for record in records(folder):
        assert record["id"] not in by_id, f"{folder}: record {record['id']} written twice"
        perplexities[record["id"]] = [para.pop("perplexity") for para in record["paraphrases"]]
        by_id[record["id"]] = record
    pairs = sorted((r["id"], r["para_text"], r["focus"]) for r in records(folder, "pairs"))
    failed = sorted((f["id"], f["stage"], f["reason"], f.get("raw_b64")) for f in failures(folder))
    summary = folder / "summary.json"
    counts = json.loads(summary.read_text())["counts"] if summary.is_file() else None
    if counts is not None:
        counts.pop("seconds_by_stage", None)
    return Content(by_id, perplexities, pairs, failed, counts)


def assert_same(a: Path, b: Path, *, counts: bool = True, exact: bool = False) -> Content:
    """``a`` and ``b`` hold the same corpus: records, perplexities, pairs, failures (and the
    summary's counts); returns ``a``'s :class:`Content`."""
    left, right = content(a), content(b)
    assert left.records.keys() == right.records.keys(), f"other record ids: {a} vs {b}"
    assert left.records == right.records
    assert left.pairs == right.pairs
    assert left.failures == right.failures
    if exact:
        assert left.perplexities == right.perplexities
    else:  # in id order, flat (approx compares flat sequences only)
        ids = sorted(left.perplexities)
        flat = [[x for key in ids for x in side.perplexities[key]] for side in (left, right)]
        assert flat[0] == pytest.approx(flat[1], rel=1e-5)
    if counts:
        assert left.counts == right.counts
    return left
