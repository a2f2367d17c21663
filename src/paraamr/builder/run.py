"""One process's run of the corpus builder: partition, resume state, commits, summary and card.

Each process keeps the input rows whose id hashes to it, runs the stages of
:class:`paraamr.builder.pipeline.Generator` on its own device and writes its own shards; nothing is
gathered. Work is committed in chunks: the chunk's shards are renamed into place, then the process's
state file under ``DIR/.paraamr/`` (never uploaded) records how many of its rows are done. A killed
run started again with the same command deletes shards written after the last commit and goes on,
so its records are exactly those of an uninterrupted run. After ``wait_for_everyone()`` the main
process writes ``summary.json`` and the card ``README.md``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from paraamr.builder.pipeline import Stats
from paraamr.builder.settings import GeneratorSettings
from paraamr.errors import InputError

STATE_DIR = ".paraamr"


SUMMARY = "summary.json"


def read_rows(spec: dict[str, Any]) -> Iterator:
    """All input rows of a run, in order (see :mod:`paraamr.builder.readers`)."""
    from paraamr.builder import readers

    if spec.get("amr_input"):
        return readers.read_input(spec["amr_input"], fmt="amr")
    if spec.get("dataset"):
        return readers.read_dataset(
            spec["dataset"],
            split=spec["dataset_split"],
            column=spec["text_column"],
            config=spec.get("dataset_config"),
        )
    return readers.read_input(spec["input"], column=spec["text_column"], fmt=spec.get("input_format"))


def splits_of(spec: dict[str, Any]) -> list[str]:
    """The split names a run writes."""
    names = [spec["split"]]
    names += ["validation"] if spec["validation_fraction"] > 0 else []
    names += ["test"] if spec["test_fraction"] > 0 else []
    return names


class RunFolder:
    """The output folder of a run and its resume state (``DIR/.paraamr/``).

    >>> import tempfile
    >>> f = RunFolder(tempfile.mkdtemp(), rank=1, num_processes=2)
    >>> f.prefix, f.state_path.name
    ('00001-of-00002-', 'state-00001-of-00002.json')
    """

    def __init__(self, folder: str | Path, *, rank: int, num_processes: int):
        self.path = Path(folder)
        self.rank, self.num_processes = rank, num_processes
        self.prefix = f"{rank:05d}-of-{num_processes:05d}-"
        self.state_dir = self.path / STATE_DIR
        self.state_path = self.state_dir / f"state-{self.prefix[:-1]}.json"
        self.settings_path = self.state_dir / "settings.json"

    def read_settings(self) -> dict | None:
        """The saved run settings, or None."""
        return json.loads(self.settings_path.read_text()) if self.settings_path.is_file() else None

    def check(self, run: dict, *, overwrite: bool) -> None:
        """Refuse to mix runs: a folder holding another run (or other files) needs ``overwrite``."""
        if overwrite:
            return
        saved = self.read_settings()
        if saved is None:
            if self.path.exists() and any(p.name != STATE_DIR for p in self.path.iterdir()):
                raise InputError(
                    f"{self.path}: exists and holds no paraamr run; pass --overwrite to replace it"
                )
            return
        diffs = [
            f"--{k.replace('_', '-')} was {saved.get(k)!r}, now {v!r}"
            for k, v in run.items()
            if saved.get(k) != v
        ]
        if diffs:
            raise InputError(
                f"{self.path} holds a run with other settings ({'; '.join(diffs)}); "
                "pass --overwrite to start over"
            )

    def reset(self, run: dict, *, overwrite: bool) -> None:
        """(Main process) delete an earlier run when ``overwrite``; save the run settings."""
        import shutil

        if overwrite and self.path.exists():
            for child in self.path.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if not self.settings_path.is_file():
            _atomic_write(self.settings_path, json.dumps(run, indent=1, sort_keys=True))

    def load_state(self) -> dict:
        """This process's committed state (fresh when none)."""
        if self.state_path.is_file():
            return json.loads(self.state_path.read_text())
        return {"consumed": 0, "next": {}, "stats": Stats().as_dict(), "done": False}

    def save_state(self, state: dict) -> None:
        """Commit: the state file is replaced atomically."""
        _atomic_write(self.state_path, json.dumps(state, sort_keys=True))

    def clean(self, state: dict) -> int:
        """Delete this process's files written after its last commit (and temporary ones); return how many."""
        removed = 0
        for path in [*self.path.glob("data/*/*"), *self.path.glob("failures/*")]:
            name = path.name.lstrip(".")
            mark = name.find(self.prefix)
            if mark < 0:
                continue
            if path.name.endswith(".tmp"):
                key, number = None, None
            elif path.parent.name == "failures":
                key = "failures"
            else:
                key = f"{path.parent.name}/{name[: mark - 1]}"
            if key is not None:
                number = int(name[mark + len(self.prefix) :].split(".")[0])
            if key is None or number >= state["next"].get(key, 0):
                path.unlink()
                removed += 1
        return removed


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class _Outputs:
    """The writers of one process: ``default`` and ``pairs`` for each split, and failures."""

    def __init__(self, folder: RunFolder, splits: list[str], state: dict):
        from paraamr.builder.folder import FailureWriter, ShardWriter
        from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA

        nxt = state["next"]
        self.writers: dict[str, Any] = {}
        for split in splits:
            for config, schema in (("default", DEFAULT_SCHEMA), ("pairs", PAIRS_SCHEMA)):
                key = f"{config}/{split}"
                first = nxt.get(key, 0)
                self.writers[key] = ShardWriter(
                    folder.path,
                    config,
                    split,
                    schema,
                    prefix=folder.prefix,
                    rows_per_shard=None,
                    first_shard=first,
                    empty_shard=first == 0,
                )
        self.writers["failures"] = FailureWriter(
            folder.path, prefix=folder.prefix, first_shard=nxt.get("failures", 0)
        )
        self.buffered = 0

    def write(self, window, spec: dict[str, Any]) -> None:
        from paraamr.builder.rows import split_of
        from paraamr.records import to_pairs

        for record in window.records:
            split = split_of(
                record["id"],
                validation=spec["validation_fraction"],
                test=spec["test_fraction"],
                train=spec["split"],
            )
            self.writers[f"default/{split}"].write(record)
            for pair in to_pairs(record):
                self.writers[f"pairs/{split}"].write(pair)
        for failure in window.failures:
            self.writers["failures"].write(failure)
        self.buffered += window.rows

    def flush(self, *, final: bool = False) -> dict[str, int]:
        for writer in self.writers.values():
            writer.close() if final and hasattr(writer, "close") else writer.flush()
        self.buffered = 0
        return {key: w.next_shard for key, w in self.writers.items()}


def _state():
    """accelerate's process state: on the CPU (gloo between processes) when there is no GPU."""
    from datetime import timedelta

    import torch
    from accelerate import PartialState

    cpu = not torch.cuda.is_available() or os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true")
    return PartialState(cpu=cpu, timeout=timedelta(days=7))


def _quiet() -> None:
    """amrlib logs every graph it cannot deserialize and transformers draws a bar per model load:
    the run counts failures itself and has its own progress bar."""
    import logging

    from transformers.utils import logging as hf_logging

    logging.getLogger("amrlib").setLevel(logging.CRITICAL)
    hf_logging.disable_progress_bar()


def _process(
    settings: GeneratorSettings,
    spec: dict[str, Any],
    folder: RunFolder,
    state_obj,
    *,
    commit_rows: int,
    commit_seconds: float,
    progress: bool,
) -> None:
    """One process's share: owned rows after the committed ones, windows, commits."""
    from itertools import islice

    from tqdm.auto import tqdm

    from paraamr.builder.pipeline import Generator
    from paraamr.builder.rows import owner

    state = folder.load_state()
    folder.clean(state)
    if state["done"]:
        return
    _quiet()
    stats = Stats.from_dict(state["stats"])
    generator = Generator(settings)
    n, rank = folder.num_processes, folder.rank
    owned = (row for row in read_rows(spec) if owner(row.id, n) == rank)
    generator.mark_seen(row.id for row in islice(owned, state["consumed"]))
    outputs = _Outputs(folder, splits_of(spec), state)
    bar = tqdm(
        desc=f"generate (process {rank + 1}/{n})" if n > 1 else "generate",
        unit=" src",
        initial=stats.inputs,
        disable=not state_obj.is_main_process or not progress,
        dynamic_ncols=True,
    )
    started, last_commit = time.monotonic(), time.monotonic()
    paras0 = stats.paraphrases

    def commit(final: bool = False) -> None:
        state["next"] = outputs.flush(final=final)
        state["stats"] = stats.as_dict()
        state["done"] = final
        folder.save_state(state)

    for window in generator.windows(owned):
        outputs.write(window, spec)
        stats.merge(window.stats)
        state["consumed"] += window.rows
        bar.update(window.rows)
        elapsed = max(time.monotonic() - started, 1e-9)
        bar.set_postfix(
            para_per_s=f"{(stats.paraphrases - paras0) / elapsed:.1f}",
            failures=sum(stats.failures.values()),
            refresh=False,
        )
        if outputs.buffered >= commit_rows or time.monotonic() - last_commit > commit_seconds:
            commit()
            last_commit = time.monotonic()
    commit(final=True)
    bar.close()


def summarize(folder: RunFolder, run: dict, settings: GeneratorSettings, seconds: float) -> dict[str, Any]:
    """The run summary: settings, counts of all processes (from their state files), time."""
    total, per_process = Stats(), []
    for path in sorted(folder.state_dir.glob("state-*.json")):
        s = json.loads(path.read_text())
        total.merge(Stats.from_dict(s["stats"]))
        per_process.append({"process": path.stem[6:], "done": s["done"], **s["stats"]})
    counts = total.as_dict()
    return {
        "settings": settings.as_dict(),
        "run": run,
        "counts": counts,
        "reconciles": counts["inputs"] == counts["records"] + counts["failures"],
        "complete": bool(per_process) and all(p["done"] for p in per_process),
        "processes": per_process,
        "seconds_this_session": round(seconds, 3),
    }


def format_summary(summary: dict[str, Any]) -> str:
    """The summary table printed at the end.

    >>> c = Stats(inputs=3, records=2, failures={"input": 1}).as_dict()
    >>> print(format_summary({"counts": c, "reconciles": True, "seconds_this_session": 1.0}).splitlines()[0])
    inputs                        3  = records 2 + failures 1 (reconciles)
    """
    c = summary["counts"]
    lines = [
        f"{'inputs':<24}{c['inputs']:>7}  = records {c['records']} + failures {c['failures']}"
        f" ({'reconciles' if summary['reconciles'] else 'DOES NOT RECONCILE'})",
        f"{'candidates':<24}{c['candidates']:>7}",
        f"{'paraphrases kept':<24}{c['paraphrases']:>7}",
    ]
    lines += [f"  failed at {stage:<14}{n:>7}" for stage, n in sorted(c["failures_by_stage"].items())]
    lines += [f"  dropped: {reason:<14}{n:>7}" for reason, n in sorted(c["dropped_by_reason"].items())]
    lines += [f"  seconds in {stage:<12}{t:>9.1f}" for stage, t in sorted(c["seconds_by_stage"].items())]
    lines.append(f"{'wall seconds':<24}{summary['seconds_this_session']:>9.1f}")
    return "\n".join(lines)


def _write_card(
    folder: RunFolder, summary: dict[str, Any], spec: dict[str, Any], license: str | None
) -> None:
    from paraamr.card import dataset_info, render_card
    from paraamr.stats import compute_stats

    # datasets cannot load a split without rows: the card lists the splits that have some
    infos = dataset_info(folder.path, splits_of(spec))
    default = next(info for info in infos if info["config_name"] == "default")
    splits = [split["name"] for split in default["splits"] if split["num_examples"]] or splits_of(spec)[:1]
    # the card's statistics are computed from the shards just written, never typed by hand
    stats = compute_stats(folder.path)
    text = render_card(summary=summary, stats=stats, license=license, splits=splits, folder=folder.path)
    _atomic_write(folder.path / "README.md", text)


def execute(
    settings: GeneratorSettings,
    spec: dict[str, Any],
    *,
    output: str | Path,
    overwrite: bool = False,
    license: str | None = None,
    commit_rows: int = 10000,
    commit_seconds: float = 600.0,
    progress: bool = True,
) -> None:
    """Run this process's share of the build into ``output``; the main process then writes the
    summary and the card."""
    from paraamr.errors import InputError

    t0 = time.monotonic()
    if commit_rows < 1:
        raise InputError(f"--rows-per-shard must be positive, got {commit_rows}")
    state_obj = _state()
    n, rank = state_obj.num_processes, state_obj.process_index
    if spec.get("input") == "-" and n > 1:
        raise InputError("--input - (stdin) needs a single process")
    if settings.device is None and state_obj.device.type != "cpu":
        settings.device = str(state_obj.device)
    run_options = {**settings.result_options(), **spec, "num_processes": n}
    folder = RunFolder(output, rank=rank, num_processes=n)
    folder.check(run_options, overwrite=overwrite)
    state_obj.wait_for_everyone()
    if state_obj.is_main_process:
        folder.reset(run_options, overwrite=overwrite)
    state_obj.wait_for_everyone()
    _process(
        settings,
        spec,
        folder,
        state_obj,
        commit_rows=commit_rows,
        commit_seconds=commit_seconds,
        progress=progress,
    )
    state_obj.wait_for_everyone()
    if state_obj.is_main_process:
        summary = summarize(folder, run_options, settings, time.monotonic() - t0)
        _atomic_write(folder.path / SUMMARY, json.dumps(summary, indent=1, sort_keys=True))
        _write_card(folder, summary, spec, license)
        print(format_summary(summary), file=sys.stderr)
        print(f"wrote {folder.path}", file=sys.stderr)
