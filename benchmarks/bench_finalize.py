"""``paraamr finalize`` of a run cut into shards, at scale, against datasets' own route.

A synthetic run (no models) of ``--records`` sources (default 1,000,000) in ``--shards`` shards
(default 64), written as ``generate.py --shard I/N`` writes it: one task per shard, parts of both
configs every ``--part-rows`` records (default 10,000), a completion marker, the plan and the
run's settings (``tests/support/shard_runs.py``). Records are ``bench_folder.py``'s (release-like text,
0-14 paraphrases, ~7 on average) with, unless ``--no-amr``, AMR strings on the source and each
paraphrase as the generator writes them (2.1 characters of PENMAN per character of sentence, the
ratio of the hand-written graphs in ``tests/builder/data/graphs.amr``).

- **paraamr**: :func:`paraamr.builder.shards.finalize_run`: every task's status, the summary
  summed from the tasks' markers, the parts cut into ``{split}-{i:05d}-of-{n:05d}`` shards of
  ``--max-shard-size`` (``paraamr.builder.folder.finalize``), the card (its statistics re-read
  from the shards by ``paraamr.card.write_card``). Each step is timed.
- **datasets** (baseline, what a competent user writes with datasets' defaults to merge the parts
  of 64 jobs into push_to_hub-style shards): ``load_dataset("parquet", data_files=parts)`` per
  config (Arrow cache), ``num_shards = nbytes // max_shard_size + 1``,
  ``shard(..., contiguous=True).to_parquet``. It writes no summary, card or statistics.

Both get the same parts in the same order; their shards are compared by row count and a sha1 of
the ids in order. Each phase runs in its own process (peak RSS is its own). Prints the figures as
a table, ratios paraamr / datasets, and the load average before and after.

Run: ``python benchmarks/bench_finalize.py [--records 1000000] [--shards 64]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests" / "support")]

#: Characters of PENMAN per character of sentence (tests/builder/data/graphs.amr: 2.10).
AMR_RATIO = 2.1


def _amr(text: str) -> str:
    """A PENMAN-shaped string of about ``AMR_RATIO`` times the length of ``text``."""
    words = text.lower().split()
    graph = "(r / root " + " ".join(f":ARG{k % 3} (v{k} / {w}-01)" for k, w in enumerate(words)) + ")"
    while len(graph) < len(text) * AMR_RATIO:
        graph = graph[:-1] + " :mod (x / x))"
    return graph


def _with_amr(rows):
    for record in rows:
        record["amr"] = _amr(record["text"])
        for para in record["paraphrases"]:
            para["amr"] = _amr(para["para_text"])
        yield record


def phase_build(folder: Path, n: int, shards: int, part_rows: int, amr: bool) -> dict:
    from bench_folder import records
    from shard_runs import write_run

    sizes = [n // shards + (1 if i < n % shards else 0) for i in range(shards)]

    def rows_of(i: int):
        rows = records(sizes[i], seed=i + 1)
        return _with_amr(rows) if amr else rows

    counts = write_run(folder, rows_of, shards, part_rows=part_rows)
    parts = [p for p in (folder / ".paraamr" / "parts").rglob("*.parquet")]
    return {"records": sum(counts.values()), "parts": len(parts), "parts_MB": _mb(parts)}


def phase_paraamr(folder: Path, max_shard_size: str) -> dict:
    import paraamr.builder.shards as shards_mod
    import paraamr.builder.summary as summary_mod

    seconds: dict[str, float] = {}

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start

        return wrapper

    shards_mod.run_statuses = timed("status of every shard", shards_mod.run_statuses)
    summary_mod.summarize = timed("summary from the states", summary_mod.summarize)
    summary_mod.finalize = timed("shards named over the run", summary_mod.finalize)
    summary_mod.write_card = timed("card (statistics re-read)", summary_mod.write_card)
    start = time.perf_counter()
    summary = shards_mod.finalize_run(folder, max_shard_size=max_shard_size)
    seconds["finalize in all"] = time.perf_counter() - start
    return {"records": summary["counts"]["records"], "seconds_by_step": seconds}


def phase_datasets(folder: Path, out: Path, max_shard_size: str) -> dict:
    import datasets
    from datasets.utils.py_utils import convert_file_size_to_int

    cache, rows, start = out / "cache", {}, time.perf_counter()
    for config in ("default", "pairs"):
        parts = sorted(str(p) for p in (folder / ".paraamr" / "parts" / config / "train").glob("*.parquet"))
        ds = datasets.load_dataset(
            "parquet", data_files={"train": parts}, split="train", cache_dir=str(cache)
        )
        num_shards = int(ds._estimate_nbytes() / convert_file_size_to_int(max_shard_size)) + 1
        for i in range(num_shards):
            path = out / "data" / config / f"train-{i:05d}-of-{num_shards:05d}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            ds.shard(num_shards=num_shards, index=i, contiguous=True).to_parquet(str(path))
        rows[config] = ds.num_rows
    seconds = time.perf_counter() - start  # (imports not counted, as on paraamr's side)
    shutil.rmtree(cache)  # the Arrow cache is the baseline's scratch, not its output
    return {"rows": rows, "seconds_in": seconds}


def _mb(paths) -> float:
    return round(sum(p.stat().st_size for p in paths) / 1e6, 1)


def run_phase(phase, *args) -> dict:
    """``phase(*args)`` in a fresh process (spawned: nothing of this one's memory): its result,
    wall seconds and the child's peak RSS (MB)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    start = time.perf_counter()
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        result = pool.submit(_measured, phase, *args).result()
    result["seconds"] = round(time.perf_counter() - start, 1)
    return result


def _measured(phase, *args) -> dict:
    result = phase(*args)
    result["peak_rss_MB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return result


def main() -> None:
    from bench_folder import checksum

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--part-rows", type=int, default=10_000)
    parser.add_argument("--max-shard-size", default="500MB")
    parser.add_argument("--no-amr", dest="amr", action="store_false", help="release-like records (no AMR)")
    parser.add_argument("--workdir", help="where to write (default: a temporary folder, removed)")
    args = parser.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-finalize-"))
    run, base = work / "run", work / "datasets"
    load = [os.getloadavg()[0]]
    built = run_phase(phase_build, run, args.records, args.shards, args.part_rows, args.amr)
    print(f"built: {json.dumps(built)}", flush=True)
    theirs = run_phase(phase_datasets, run, base, args.max_shard_size)
    ours = run_phase(phase_paraamr, run, args.max_shard_size)
    load.append(os.getloadavg()[0])
    same = all(checksum(run, c) == checksum(base, c) for c in ("default", "pairs"))
    files = [p for p in run.rglob("*") if p.is_file() and ".paraamr" not in p.parts]
    steps = ours["seconds_by_step"]
    merge, baseline = steps["shards named over the run"], theirs["seconds_in"]
    print(
        f"\n{args.records:,} records in {args.shards} shards, {built['parts']} parts ({built['parts_MB']} MB)"
    )
    print("| step | paraamr s | datasets s | ratio (datasets / paraamr) |\n|---|---:|---:|---:|")
    print(
        f"| parts -> {args.max_shard_size} shards | {merge:.1f} | {baseline:.1f} | {baseline / merge:.2f}x |"
    )
    for step, value in steps.items():
        if step != "shards named over the run":
            print(f"| {step} | {value:.1f} | | |")
    print(f"| peak RSS, MB | {ours['peak_rss_MB']} | {theirs['peak_rss_MB']} | |")
    print(f"\nfolder: {len(files)} files, {_mb(files)} MB; outputs identical (rows, ids in order): {same}")
    print(f"load average: {load[0]:.1f} before, {load[1]:.1f} after; cores: {len(os.sched_getaffinity(0))}")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
