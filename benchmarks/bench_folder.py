"""Dataset-folder writing and loading at ParaAMR's scale, against datasets' own route.

Synthetic records (no models): ``--records`` sources (default 2,000,000) with 0-14 paraphrases
each (~7 on average, so ~14M pairs), release-like English-ish text, a focus and a perplexity;
no AMR strings (as the release). Both writers get the same records, in the same order:

- **paraamr**: :class:`paraamr.builder.folder.ShardWriter` for ``default`` and ``pairs``, a commit
  every ``--commit-every`` records (the generator's commit interval), then ``finalize``.
- **datasets** (baseline, what a competent user writes with datasets' defaults):
  ``Dataset.from_generator(records)`` (Arrow cache), ``pairs = default.map(explode, batched=True)``,
  then shards as ``push_to_hub`` writes them: ``num_shards = nbytes // 500MB + 1``,
  ``shard(..., contiguous=True).to_parquet(...)``.

Then the paraamr folder is read back: ``load_dataset(folder, config)`` (Parquet -> Arrow cache)
and ``load_dataset(folder, config, streaming=True)`` (every row iterated). Each phase runs in its
own process, so peak RSS is the phase's own. Reported: rows/s side by side (ratio paraamr /
datasets), peak RSS (also at a tenth of the records: flat in the number of records), shard count
and size spread (Arrow bytes per shard / target, all but the last), and the outputs compared
(row counts and an id checksum per config).

Run: ``python benchmarks/bench_folder.py [--records 2000000] [--max-shard-size 500MB]``; the
machine is shared, so the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_WORD_TEXT = (
    "the a of to and in is was he she they it that for on with as at by from this his her their have had not "
    "but what all were when we there can an your which one more about would said could will time people year "
    "way day man thing woman life child world school state family student group country problem hand part "
    "place case week company system program question work government number night point home water room "
    "mother area money story fact month lot right study book eye job word"
)
WORDS = tuple(_WORD_TEXT.split())
FOCI = ("know-01", "need-01", "want-01", "say-01", "person", "thing", "i", "you", "go-02", "make-01")


def records(n: int, seed: int = 0):
    """The synthetic ``default`` records, deterministic in ``seed``."""
    from paraamr.records import text_id

    rng = random.Random(seed)
    for i in range(n):
        words = rng.choices(WORDS, k=rng.randint(6, 24))
        text = " ".join(words).capitalize() + f" {i} ."
        paras = []
        for _ in range(rng.randint(0, 14)):
            rng.shuffle(words)
            paras.append(
                {
                    "para_text": " ".join(words).capitalize() + " .",
                    "perplexity": rng.uniform(20.0, 300.0),
                    "focus": rng.choice(FOCI),
                    "amr": None,
                    "similarity": None,
                    "quality": None,
                }
            )
        yield {"id": text_id(text), "text": text, "amr": None, "paraphrases": paras}


def phase_paraamr(out: Path, n: int, max_shard_size: str, commit_every: int) -> dict:
    from paraamr.builder.folder import ShardWriter, finalize
    from paraamr.card import render_card
    from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, to_pairs

    default = ShardWriter(out, "default", "train", DEFAULT_SCHEMA, max_shard_size=max_shard_size)
    pairs = ShardWriter(out, "pairs", "train", PAIRS_SCHEMA, max_shard_size=max_shard_size)
    for i, record in enumerate(records(n), 1):
        default.write(record)
        pairs.write_rows(to_pairs(record))
        if i % commit_every == 0:
            default.commit(), pairs.commit()
    default.commit(), pairs.commit()
    finalize(out, max_shard_size=max_shard_size)
    # the card's configs: (sizes from the shards' metadata; statistics are not part of writing)
    (out / "README.md").write_text(render_card(summary=None, stats=None, license=None, folder=out))
    return {"records": default.rows_written, "pairs": pairs.rows_written}


def _explode(batch: dict) -> dict:
    """``default`` rows -> ``pairs`` rows (a batched ``map``), as ``paraamr.records.to_pairs``."""
    out: dict[str, list] = {
        k: [] for k in ("id", "text", "amr", "para_text", "perplexity", "focus", "para_amr")
    }
    out.update(similarity=[], quality=[])
    for rid, text, amr, paras in zip(
        batch["id"], batch["text"], batch["amr"], batch["paraphrases"], strict=True
    ):
        for p in paras:
            for key, value in (("id", rid), ("text", text), ("amr", amr), ("para_amr", p["amr"])):
                out[key].append(value)
            for key in ("para_text", "perplexity", "focus", "similarity", "quality"):
                out[key].append(p[key])
    return out


def phase_datasets(out: Path, n: int, max_shard_size: str) -> dict:
    import datasets
    from datasets.utils.py_utils import convert_file_size_to_int

    from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA

    cache = out / "cache"
    default = datasets.Dataset.from_generator(
        records,
        gen_kwargs={"n": n},
        features=datasets.Features.from_arrow_schema(DEFAULT_SCHEMA),
        cache_dir=str(cache / "default"),
    )
    pairs = default.map(
        _explode,
        batched=True,
        remove_columns=default.column_names,
        features=datasets.Features.from_arrow_schema(PAIRS_SCHEMA),
        cache_file_name=str(cache / "pairs.arrow"),
    )
    for config, ds in (("default", default), ("pairs", pairs)):
        num_shards = int(ds._estimate_nbytes() / convert_file_size_to_int(max_shard_size)) + 1
        for i in range(num_shards):
            shard = ds.shard(num_shards=num_shards, index=i, contiguous=True)
            path = out / "data" / config / f"train-{i:05d}-of-{num_shards:05d}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            shard.to_parquet(str(path))
    shutil.rmtree(cache)  # the Arrow cache is the baseline's scratch, not its output
    return {"records": default.num_rows, "pairs": pairs.num_rows}


def phase_load(folder: Path, config: str, streaming: bool) -> dict:
    import datasets

    cache = folder.parent / f"load-cache-{config}"
    ds = datasets.load_dataset(str(folder), config, split="train", streaming=streaming, cache_dir=str(cache))
    rows = sum(1 for _ in ds) if streaming else ds.num_rows
    shutil.rmtree(cache, ignore_errors=True)
    return {"rows": rows}


def checksum(folder: Path, config: str) -> dict:
    """Rows and a sha1 of the ids in order, read with pyarrow alone."""
    import pyarrow.parquet as pq

    digest, rows = hashlib.sha1(), 0
    for path in sorted((folder / "data" / config).glob("*.parquet")):
        ids = pq.read_table(path, columns=["id"]).column("id").to_pylist()
        rows += len(ids)
        digest.update("".join(f"{i}\n" for i in ids).encode())
    return {"rows": rows, "ids_sha1": digest.hexdigest()[:16]}


def spread(folder: Path, config: str, target: int) -> dict:
    import pyarrow.parquet as pq

    from paraamr.layout import arrow_bytes, list_shards

    paths = list_shards(folder, config)[config]["train"]
    metas = [pq.ParquetFile(p).metadata for p in paths]
    ratios = [arrow_bytes(m) / target for m in metas]
    groups = [m.row_group(i).total_byte_size for m in metas for i in range(m.num_row_groups)]
    return {
        "shards": len(paths),
        "size_ratio_min": round(min(ratios[:-1]), 3) if len(ratios) > 1 else None,
        "size_ratio_max": round(max(ratios[:-1]), 3) if len(ratios) > 1 else None,
        "last_ratio": round(ratios[-1], 3),
        "file_MB": [round(p.stat().st_size / 1e6, 1) for p in paths][:6],
        "largest_row_group_MB": round(max(groups) / 1e6, 1),
    }


def run_phase(args: list[str]) -> dict:
    """One phase in a child process: its result, seconds and peak RSS."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--phase", *args], capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"phase {args} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["seconds"] = time.perf_counter() - start
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--max-shard-size", default="500MB")
    parser.add_argument("--commit-every", type=int, default=10_000, help="records between commits (paraamr)")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--no-load", action="store_true", help="skip reading the folder back")
    parser.add_argument("--phase", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        kind, out, *rest = args.phase
        out = Path(out)
        if kind == "paraamr":
            result = phase_paraamr(out, int(rest[0]), rest[1], int(rest[2]))
        elif kind == "datasets":
            result = phase_datasets(out, int(rest[0]), rest[1])
        else:
            result = phase_load(out, rest[0], kind == "stream")
        result["peak_rss_MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return

    from paraamr.layout import parse_size

    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-folder-"))
    n, size = args.records, args.max_shard_size
    print(f"records {n:,}, max shard size {size}, commit every {args.commit_every:,} records; work in {work}")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    ours = run_phase(["paraamr", str(work / "paraamr"), str(n), size, str(args.commit_every)])
    base = run_phase(["datasets", str(work / "datasets"), str(n), size])
    small = run_phase(
        ["paraamr", str(work / "paraamr-tenth"), str(max(n // 10, 1)), size, str(args.commit_every)]
    )
    rows = ours["records"] + ours["pairs"]
    print(f"\nwrite ({rows:,} rows: {ours['records']:,} records + {ours['pairs']:,} pairs)")
    print(f"{'':24}{'paraamr':>12}{'datasets':>12}{'ratio':>8}")
    print(
        f"{'rows/s':24}{rows / ours['seconds']:>12,.0f}{rows / base['seconds']:>12,.0f}"
        f"{base['seconds'] / ours['seconds']:>8.2f}"
    )
    print(f"{'seconds':24}{ours['seconds']:>12.1f}{base['seconds']:>12.1f}")
    print(
        f"{'peak RSS MB':24}{ours['peak_rss_MB']:>12.0f}{base['peak_rss_MB']:>12.0f}"
        f"{ours['peak_rss_MB'] / base['peak_rss_MB']:>8.2f}"
    )
    print(
        f"{'peak RSS MB at n/10':24}{small['peak_rss_MB']:>12.0f}"
        f"   (flat: {ours['peak_rss_MB'] / small['peak_rss_MB']:.2f}x for 10x the records)"
    )
    for config in ("default", "pairs"):
        a, b = checksum(work / "paraamr", config), checksum(work / "datasets", config)
        print(f"outputs {config:8} paraamr {a}  datasets {b}  {'SAME' if a == b else 'DIFFERENT'}")
        print(f"shards  {config:8} {spread(work / 'paraamr', config, parse_size(size))}")
    for config, count in [] if args.no_load else (("default", ours["records"]), ("pairs", ours["pairs"])):
        if config == "default":
            print("\nread the paraamr folder back")
        loaded = run_phase(["load", str(work / "paraamr"), config])
        streamed = run_phase(["stream", str(work / "paraamr"), config])
        assert loaded["rows"] == streamed["rows"] == count, (loaded, streamed, count)
        print(
            f"{config:8} load_dataset {count / loaded['seconds']:>12,.0f} rows/s ({loaded['seconds']:.1f} s,"
            f" RSS {loaded['peak_rss_MB']:.0f} MB); streaming {count / streamed['seconds']:>10,.0f} rows/s"
            f" ({streamed['seconds']:.1f} s, RSS {streamed['peak_rss_MB']:.0f} MB)"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
