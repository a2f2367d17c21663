"""The start of a run: cutting the input into tasks, against reading it once more.

A generate run reads its input once, at its start, and writes each row to the file of its task
(:func:`paraamr.builder.partition.partition`); every task then reads only its own rows. The
baseline is what a run would otherwise pay for each shard: one pass of ``paraamr.builder.readers``
over the whole input (every one of ``N`` shards reading it and keeping its own rows costs ``N`` such
passes). Input: ``--rows`` release-like sentences (default 1,000,000) in a text file.

- **read**: one pass of the reader over the input (the baseline; ``N`` shards paid ``N`` of these).
- **partition**: the input read once and written to its tasks (``--task-rows``, default 1,000).
- **tasks read back**: every task's rows read from its file (what all shards together pay now).

Sides are interleaved (``benchmarks/_timing.py``); prints wall and CPU seconds, the ratio
partition / read, and the load before and after.

Run: ``python benchmarks/bench_partition.py [--rows 1000000] [--task-rows 1000]``.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from _timing import interleave, load, machine  # noqa: E402

WORDS = ("the", "a", "man", "woman", "said", "wants", "know", "need", "go", "thing", "they", "document")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--task-rows", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from paraamr.builder.partition import Plan, partition
    from paraamr.builder.readers import read_input

    work = Path(tempfile.mkdtemp(prefix="bench-partition-"))
    rng = random.Random(0)
    source = work / "in.txt"
    with open(source, "w") as f:
        for i in range(args.rows):
            f.write(" ".join(rng.choices(WORDS, k=rng.randint(6, 20))) + f" {i} .\n")
    print(machine(1))
    print(f"{args.rows:,} rows, {source.stat().st_size / 1e6:.1f} MB, {args.task_rows:,} rows a task")

    def read() -> int:
        return sum(1 for _ in read_input(source))

    def cut() -> int:
        return sum(partition(work / "out", read_input(source), task_rows=args.task_rows).rows.values())

    def back() -> int:
        plan = Plan.load(work / "out")
        plan = plan or partition(work / "out", read_input(source), task_rows=args.task_rows)
        return sum(1 for task in plan.of() for _ in plan.read(task))

    times, outputs = interleave({"read": read, "partition": cut, "tasks read back": back}, rounds=args.rounds)
    assert len(set(outputs.values())) == 1, outputs  # every side saw every row
    for name, timing in times.items():
        print(f"{name:<16} {timing.row()}")
    print(f"partition / read: {times['partition'].median / times['read'].median:.2f}x the time of one read")
    print("after:", load())
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
