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
from paraamr.builder.rows import split_of
from paraamr.builder.settings import RecordSettings, RunSettings
from paraamr.builder.shards import Shard, open_folder, shard_done
from paraamr.builder.stages import make_generator, quiet_libraries
from paraamr.builder.state import RunFolder
from paraamr.builder.summary import Push, finish
from paraamr.builder.tracking import RunProgress, model_line
from paraamr.models.base import batch_listener
from paraamr.progress import progress_mode
from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, to_pairs
from paraamr.signals import Interrupted, check, critical, pause_point

__all__ = ["Push", "execute", "launch_info", "launch_warning", "share_cores"]


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


def share_cores(local_processes: int) -> None:
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
    """One process's share: owned rows after the committed ones, windows, commits. A signal
    (:mod:`paraamr.signals`) drops the window in flight, commits the windows before it and stops
    with :class:`~paraamr.signals.Interrupted` saying how far the run got."""
    state = folder.load_state()
    folder.clean(state)
    stats = Stats.from_dict(state["stats"])
    main = state_obj.is_main_process
    tracker = RunProgress(
        folder,
        stats,
        mode=progress_mode(run.progress),
        main=main,
        window=min(run.window, run.commit_every),  # windows end at commits too
        stages=_model_stages(record),
        total=total,
    )
    try:
        if not state["done"]:
            tracker.phase(model_line(record.models()))
            pause_point("models")
            generator = make_generator(record, run)
            tracker.phase("reading input")
            _windows(record, run, folder, generator, state, stats, tracker)
        # the others may still run: keep the display moving until every process is done
        while main and tracker.display.mode != "none" and folder.num_processes > 1 and not _all_done(folder):
            tracker.show()
            time.sleep(0.5)
    except Interrupted as err:
        done = int(folder.progress(skip=folder.writer) + stats.inputs)
        of = f" of {total[0]:,}" if total[0] is not None else ""
        raise err.with_detail(f"after {done:,}{of} sources; run the same command to resume") from None
    finally:
        tracker.close()


def _model_stages(record: RecordSettings) -> list[str]:
    """The stages that batch a window's work through :func:`~paraamr.models.base.run_batched`."""
    return [*([] if record.amr_input else ["parse"]), "realize", *(["perplexity"] if record.lm_model else [])]


def _windows(record, run, folder, generator, state: dict, stats: Stats, tracker: RunProgress) -> None:
    """The loop over windows; commits every ``commit_every`` rows (windows are cut there) and at the
    end of the first window after ``commit_seconds``; on a signal, the windows done are committed."""
    owned = (row for row in read_rows(record) if folder.owns(row.id))
    generator.mark_seen(row.id for row in islice(owned, state["consumed"]))
    owned = tracker.taken(owned)
    outputs = _Outputs(folder, record.splits(), state, max_shard_size=run.max_shard_size)
    spec, last_commit = record.as_dict(), time.monotonic()

    def commit(final: bool = False, moment: str = "commit") -> None:
        with critical():
            state["next"] = outputs.flush()
            state["stats"] = stats.as_dict()
            state["done"] = final
            pause_point(moment)
            folder.save_state(state)

    def on_batch(stage: str, items: int, call_items: int) -> None:
        tracker.on_batch(stage, items, call_items)
        if stage == "realize":
            pause_point("window")

    try:
        with batch_listener(on_batch):
            for window in generator.windows(owned, start=state["consumed"], cut_every=run.commit_every):
                with critical():  # a window is written whole, or not at all
                    outputs.write(window, spec)
                    stats.merge(window.stats)
                    state["consumed"] += window.rows
                tracker.window_done(window.rows)
                check()  # a signal whose exception Python dropped stops here, the window done kept
                due = time.monotonic() - last_commit > run.commit_seconds
                if outputs.buffered >= run.commit_every or due:
                    commit()
                    last_commit = time.monotonic()
            check()
    except Interrupted:  # the windows written since the last commit are committed; the one in flight dropped
        commit(moment="last-commit")
        raise
    commit(final=True)


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
    shard: Shard | None = None,
) -> dict[str, Any] | None:
    """Run this process's share of the build into ``output``; the main process then writes the
    summary and the card (and uploads the folder with ``push``) and returns the summary. As
    ``shard`` of a run cut into shards (:mod:`paraamr.builder.shards`), the main process instead
    lets go of its lock and finalizes the run only when asked to and it is the last shard done.

    The main process checks everything (:func:`~paraamr.builder.checks.check_run`) before a model
    loads or a file is written; the others wait for its verdict and end with status 1, silently,
    when it fails."""
    run = run or RunSettings()
    t0 = time.monotonic()
    rank, n = launch_info()
    folder = open_folder(output, rank=rank, num_processes=n, shard=shard)
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
            share_cores(int(os.environ.get("LOCAL_WORLD_SIZE") or n))
        total: list = [None]  # for the display and the line of an interruption
        if state_obj.is_main_process and shard is None:  # a shard's share of the rows is not counted
            threading.Thread(target=count_rows, args=(record, total), daemon=True).start()
        _process(record, run, folder, state_obj, total=total)
        if not state_obj.is_main_process:
            folder.unlock()  # done: the main process finishes the run under the folder's own lock
        state_obj.wait_for_everyone()
        if not state_obj.is_main_process:
            return None
        try:
            if shard is not None:
                return shard_done(folder, push=push)
            return finish(folder, saved, run, time.monotonic() - t0, license=license, push=push)
        except Interrupted as err:  # the records are all written; the summary, card or upload was not
            detail = "after every source, while writing the summary and card"
            raise err.with_detail(f"{detail}; run the same command to resume") from None
    finally:
        folder.unlock()
