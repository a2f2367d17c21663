"""One process's run of the corpus builder: the partition, the loop over windows, the commits.

:func:`execute` is the whole run of one process. The main process first checks everything cheap
(:func:`paraamr.builder.checks.check_run`: input, output folder, resume state, models) before any
model loads and before anything is written; the other processes wait for its verdict, so an error
is printed once. Each process then keeps the input rows whose id hashes to it, runs the stages of
:class:`paraamr.builder.pipeline.Generator` on its own device and writes its own parts; nothing is
gathered. Work is committed in chunks (:mod:`paraamr.builder.state`). After
``wait_for_everyone()`` the main process finishes the run (:func:`paraamr.builder.summary.finish`:
summary, shards, card, upload).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from itertools import islice
from pathlib import Path
from typing import Any

from paraamr.builder.checks import check_run, count_rows, read_rows
from paraamr.builder.folder import FailureWriter, ShardWriter
from paraamr.builder.pipeline import Stats
from paraamr.builder.rows import owner, split_of
from paraamr.builder.settings import RecordSettings, RunSettings
from paraamr.builder.stages import make_generator, quiet_libraries
from paraamr.builder.state import RunFolder
from paraamr.builder.summary import Push, finish
from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, to_pairs

__all__ = ["Push", "execute", "launch_info", "launch_warning"]


class _Outputs:
    """The writers of one process: ``default`` and ``pairs`` for each split, and failures
    (:mod:`paraamr.builder.folder`); ``flush`` commits them and returns the state's part numbers."""

    def __init__(self, folder: RunFolder, splits: list[str], state: dict, *, max_shard_size: int | str):
        nxt = state["next"]
        where = {"writer": folder.writer}
        self.writers: dict[str, Any] = {}
        for split in splits:
            for config, schema in (("default", DEFAULT_SCHEMA), ("pairs", PAIRS_SCHEMA)):
                key = f"{config}/{split}"
                self.writers[key] = ShardWriter(
                    folder.path,
                    config,
                    split,
                    schema,
                    max_shard_size=max_shard_size,
                    first_part=nxt.get(key, 0),
                    **where,
                )
        self.writers["failures"] = FailureWriter(folder.path, first_part=nxt.get("failures", 0), **where)
        self.buffered = 0

    def write(self, window, spec: dict[str, Any]) -> None:
        for record in window.records:
            split = split_of(
                record["id"],
                validation=spec["validation_fraction"],
                test=spec["test_fraction"],
                train=spec["split"],
            )
            self.writers[f"default/{split}"].write(record)
            self.writers[f"pairs/{split}"].write_rows(to_pairs(record))
        for failure in window.failures:
            self.writers["failures"].write(failure)
        self.buffered += window.rows

    def flush(self) -> dict[str, int]:
        """Commit every writer (the last commit too: shards are named by ``finalize``)."""
        self.buffered = 0
        return {key: writer.commit() for key, writer in self.writers.items()}



def _state():
    """accelerate's process state: on the CPU (gloo between processes) when there is no GPU."""
    from datetime import timedelta

    import torch
    from accelerate import PartialState

    cpu = not torch.cuda.is_available() or os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true")
    return PartialState(cpu=cpu, timeout=timedelta(days=7))


def launch_info() -> tuple[int, int]:
    """``(rank, number of processes)`` of this process, from the launcher's environment (torchrun and
    ``accelerate launch`` set ``RANK`` and ``WORLD_SIZE``), without importing torch."""
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def launch_warning(environ: dict[str, str] | None = None) -> str | None:
    """What to say when ``accelerate launch`` was asked for several processes but started one:
    with ``--cpu`` it runs a single process and only sets ``MASTER_ADDR`` (no ``WORLD_SIZE``).

    >>> launch_warning({"ACCELERATE_USE_CPU": "True", "MASTER_ADDR": "127.0.0.1"})[:45]
    'accelerate launch started ONE process, not th'
    >>> launch_warning({"ACCELERATE_USE_CPU": "True"}) is None  # one process asked for
    True
    """
    env = os.environ if environ is None else environ
    launched = any(k in env for k in ("ACCELERATE_USE_CPU", "ACCELERATE_MIXED_PRECISION"))
    if not launched or "WORLD_SIZE" in env or "MASTER_ADDR" not in env:
        return None
    return (
        "accelerate launch started ONE process, not the number asked for (with --cpu it always runs "
        "one); for N processes on the CPU use `accelerate launch --multi_gpu --num_processes N ...` "
        "(works without a GPU) or `torchrun --nproc_per_node N ...`"
    )


def _share_cores(local_processes: int) -> None:
    """Several processes on one machine's CPU: torch's threads (OpenMP and MKL alike) in each at
    most its share of the cores. torchrun sets only ``OMP_NUM_THREADS``; an ``MKL_NUM_THREADS`` left
    at the core count oversubscribed the cores (2 processes on 2 cores: 72 s instead of 20 s). The
    cores are those this process may run on (taskset, cgroups, Slurm), not the machine's."""
    import torch

    share = max(1, len(os.sched_getaffinity(0)) // local_processes)
    torch.set_num_threads(min(torch.get_num_threads(), share))  # sets MKL's count too


def _verdict(error: BaseException | None) -> bool:
    """(Several processes) share the main process's verdict; True when the run may go on."""
    import torch.distributed as dist

    message = [None if error is None else str(error) or type(error).__name__]
    dist.broadcast_object_list(message, src=0)
    return message[0] is None


def _process(
    record: RecordSettings,
    run: RunSettings,
    folder: RunFolder,
    state_obj,
    *,
    total: list,
) -> None:
    """One process's share: owned rows after the committed ones, windows, commits."""
    from tqdm.auto import tqdm

    state = folder.load_state()
    folder.clean(state)
    stats = Stats.from_dict(state["stats"])
    folder.save_progress(stats.inputs)
    if state["done"]:
        return
    generator = make_generator(record, run)
    n, rank = folder.num_processes, folder.rank
    owned = (row for row in read_rows(record) if owner(row.id, n) == rank)
    generator.mark_seen(row.id for row in islice(owned, state["consumed"]))
    outputs = _Outputs(folder, record.splits(), state, max_shard_size=run.max_shard_size)
    main = state_obj.is_main_process
    bar = tqdm(
        desc=f"generate ({n} processes)" if n > 1 else "generate",
        unit=" src",
        total=total[0],
        initial=folder.progress() if main else 0,
        disable=not main or not run.progress,
        dynamic_ncols=True,
    )
    started, last_commit = time.monotonic(), time.monotonic()
    paras0, spec = stats.paraphrases, record.as_dict()

    def commit(final: bool = False) -> None:
        state["next"] = outputs.flush()
        state["stats"] = stats.as_dict()
        state["done"] = final
        folder.save_state(state)

    def show() -> None:
        if bar.total is None and total[0] is not None:
            bar.total = total[0]
        bar.n = folder.progress()
        elapsed = max(time.monotonic() - started, 1e-9)
        bar.set_postfix(
            para_per_s=f"{(stats.paraphrases - paras0) / elapsed:.1f}",
            failures=sum(stats.failures.values()),
            refresh=False,
        )
        bar.refresh()

    for window in generator.windows(owned):
        outputs.write(window, spec)
        stats.merge(window.stats)
        state["consumed"] += window.rows
        folder.save_progress(stats.inputs)
        if main and run.progress:
            show()
        if outputs.buffered >= run.commit_every or time.monotonic() - last_commit > run.commit_seconds:
            commit()
            last_commit = time.monotonic()
    commit(final=True)
    # the others may still run: keep the bar moving until every process is done
    while main and run.progress and n > 1 and not _all_done(folder):
        show()
        time.sleep(0.5)
    if main and run.progress:
        show()
    bar.close()


def _all_done(folder: RunFolder) -> bool:
    try:
        states = folder.states()
    except (OSError, ValueError):  # a state file being replaced right now
        return False
    return len(states) == folder.num_processes and all(state["done"] for _, state in states)


def execute(
    record: RecordSettings,
    run: RunSettings | None = None,
    *,
    output: str | Path,
    overwrite: bool = False,
    license: str | None = None,
    push: Push | None = None,
) -> dict[str, Any] | None:
    """Run this process's share of the build into ``output``; the main process then writes the
    summary and the card (and uploads the folder with ``push``) and returns the summary.

    The main process checks everything (:func:`~paraamr.builder.checks.check_run`) before a model
    loads or a file is written; the others wait for its verdict and end with status 1, silently,
    when it fails."""
    run = run or RunSettings()
    t0 = time.monotonic()
    rank, n = launch_info()
    folder = RunFolder(output, rank=rank, num_processes=n)
    error: BaseException | None = None
    if rank == 0:
        warning = launch_warning()
        if warning:
            print(f"paraamr generate: warning: {warning}", file=sys.stderr)
        try:
            saved, mode = check_run(
                record,
                folder,
                overwrite=overwrite,
                download=run.download,
                trust_remote_code=run.trust_remote_code,
            )
            folder.lock(alone=True)
            folder.reset(saved, overwrite=mode == "overwrite")
        except BaseException as err:  # told to every process, then raised here
            error = err
    if n == 1 and error is not None:
        raise error
    quiet_libraries(run.verbose)
    state_obj = _state()
    if n > 1:
        go = _verdict(error)
        if error is not None:
            raise error
        if not go:
            raise SystemExit(1)  # the main process reports it
        if rank != 0:
            folder.lock()
        saved = folder.read_settings()
    try:
        if run.device is None and state_obj.device.type != "cpu":
            run = run.replace(device=str(state_obj.device))
        if n > 1 and (run.device or "cpu") == "cpu":
            _share_cores(int(os.environ.get("LOCAL_WORLD_SIZE") or n))
        total: list = [None]
        if state_obj.is_main_process and run.progress:
            threading.Thread(target=count_rows, args=(record, total), daemon=True).start()
        _process(record, run, folder, state_obj, total=total)
        if not state_obj.is_main_process:
            folder.unlock()  # done: the main process finishes the run under the folder's own lock
        state_obj.wait_for_everyone()
        if not state_obj.is_main_process:
            return None
        return finish(folder, saved, run, time.monotonic() - t0, license=license, push=push)
    finally:
        folder.unlock()
