"""Synthetic runs cut into shards, written as ``generate.py --shard I/N`` writes them (the plan,
each task's parts and completion marker, the run's settings) but without models: for the finalize
tests and ``benchmarks/bench_finalize.py``. Shard ``i`` of these runs is the one task ``i``."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from paraamr import layout
from paraamr.atomic import atomic_write
from paraamr.builder.folder import ShardWriter
from paraamr.builder.partition import Plan
from paraamr.builder.pipeline import Stats
from paraamr.builder.rows import shard_of
from paraamr.builder.state import RunFolder, task_writer
from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, text_id, to_pairs
from paraamr.settings import RecordSettings, RunSettings

WORDS = ("the", "a", "man", "woman", "boy", "girl", "said", "wants", "know", "need", "go", "thing", "they")


def records(n: int, seed: int = 0) -> Iterator[dict]:
    """``n`` small ``default`` records with 0-4 paraphrases each, deterministic in ``seed``."""
    rng = random.Random(seed)
    for i in range(n):
        text = " ".join(rng.choices(WORDS, k=rng.randint(3, 9))) + f" {i} ."
        paras = [
            {
                "para_text": f"{text} ({k})",
                "perplexity": rng.uniform(20, 300),
                "focus": "m",
                "amr": "(m / man)",
            }
            for k in range(rng.randint(0, 4))
        ]
        yield {"id": text_id(text), "text": text, "amr": "(s / say-01)", "paraphrases": paras}


def by_shard(rows: Iterable[dict], shards: int) -> Callable[[int], list[dict]]:
    """The rows of each shard (:func:`paraamr.builder.rows.shard_of`), for :func:`write_run`."""
    groups: dict[int, list[dict]] = {}
    for row in rows:
        groups.setdefault(shard_of(row["id"], shards), []).append(row)
    return lambda i: groups.get(i, [])


def write_run(
    folder: str | Path,
    rows_of: Callable[[int], Iterable[dict]],
    shards: int,
    *,
    part_rows: int = 10000,
    done: Iterable[int] | None = None,
) -> dict[int, int]:
    """Write ``rows_of(i)`` as the parts of task ``i`` of a run of ``shards`` shards (one task
    each) in ``folder`` (a part per ``part_rows`` rows, as ``--max-shard-size`` cuts them); the
    tasks in ``done`` (default: all) get their completion marker. Returns the rows of each task."""
    folder = Path(folder)
    done = set(range(shards) if done is None else done)
    counts = {}
    run = RunFolder(folder)
    for i in range(shards):
        w = task_writer(i)
        default = ShardWriter(folder, "default", "train", DEFAULT_SCHEMA, writer=w)
        pairs = ShardWriter(folder, "pairs", "train", PAIRS_SCHEMA, writer=w)
        counts[i] = paraphrases = 0
        for record in rows_of(i):
            default.write(record)
            pairs.write_rows(to_pairs(record))
            counts[i] += 1
            paraphrases += len(record["paraphrases"])
            if counts[i] % part_rows == 0:
                default.commit(), pairs.commit()
        parts = {"default/train": default.commit(), "pairs/train": pairs.commit(), "failures": 0}
        stats = Stats(inputs=counts[i], records=counts[i], paraphrases=paraphrases).as_dict()
        if i in done:
            run.complete(i, parts, stats)
    Plan(folder, shards, {i: n for i, n in counts.items() if n}).save()
    settings = {
        "record": RecordSettings(amr_input=str(folder.parent / "input.amr"), max_perplexity=None).as_dict(),
        "shards": shards,
        "input_identity": None,
        "run": RunSettings().as_dict(),
        "command": ["generate.py", "--amr-input", "input.amr", "--shard", "{shard}"],
    }
    atomic_write(layout.state_path(folder, "settings.json"), json.dumps(settings))
    return counts
