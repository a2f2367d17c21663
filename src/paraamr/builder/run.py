"""One process's run of the corpus builder (:func:`execute`): its tasks, one after the other, each
written as parts and then a completion marker; the main process then finalizes the run."""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from paraamr.atomic import new_folders
from paraamr.builder.checks import check_run, local_identity, read_rows
from paraamr.builder.folder import FailureWriter, ShardWriter
from paraamr.builder.partition import Plan
from paraamr.builder.pipeline import Generator, Stats
from paraamr.builder.rows import split_of
from paraamr.builder.shards import Shard, finalize_run, shard_done
from paraamr.builder.stages import make_generator, quiet_libraries, stage_precision
from paraamr.builder.state import RunFolder, task_writer
from paraamr.builder.summary import Push
from paraamr.builder.tracking import RunProgress, batch_stages, model_line
from paraamr.layout import MAX_SHARD_SIZE
from paraamr.models.base import batch_listener
from paraamr.progress import progress_mode
from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, to_pairs
from paraamr.settings import RecordSettings, RunSettings
from paraamr.signals import Interrupted, check, critical
from paraamr.tasks import broadcast, cpu_only, launch, share_cores

__all__ = ["TASK_ROWS", "Push", "execute", "launch_warning", "prepare"]


#: Rows a task by default (``--task-rows``): a few minutes of work on either device (docs/scale.md).
TASK_ROWS = {"cpu": 50, "accelerator": 1000}


def launch_warning(environ: dict[str, str] | None = None) -> str | None:
    """What to say when ``accelerate launch --cpu`` started one process, not the number asked for.

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


def _process(
    record: RecordSettings,
    run: RunSettings,
    folder: RunFolder,
    plan: Plan,
    paths: dict[str, str],
    *,
    main: bool,
) -> None:
    """This process's tasks (:meth:`RunFolder.claim`) with the models at ``paths``. A signal drops
    the task in flight and raises :class:`~paraamr.signals.Interrupted` saying how far the run got."""
    mine = plan.of(folder.shard)
    total = plan.total(mine)
    before = plan.total(k for k in mine if folder.completed(k))
    n = folder.num_processes
    tracker = RunProgress(
        folder.count,
        desc=f"generate ({n} processes)" if n > 1 else "generate",
        mode=progress_mode(run.progress),
        main=main,
        window=run.window,
        stages=batch_stages(record),
        total=total,
        initial=before,
    )
    try:
        if before < total:
            tracker.display.phase(model_line(record.models(), paths))
            generator = make_generator(record.with_models(paths), run)
            folder.check_precision(stage_precision(generator.stages))
            tracker.display.phase("reading input")
            with batch_listener(tracker.on_batch):
                for task in folder.claim(plan):
                    _task(task, record, run, folder, plan, generator, tracker)
        # the others may still run: keep the display moving until every process is done
        while main and tracker.display.mode != "none" and folder.num_processes > 1 and folder.running():
            tracker.show()
            time.sleep(0.5)
    except Interrupted as err:
        done = plan.total(k for k in mine if folder.completed(k))
        raise err.with_detail(
            f"after {done:,} of {total:,} sources in finished tasks; run the same command to resume "
            "(a task cut short is done again)"
        ) from None
    finally:
        tracker.close()


def _task(
    task: int,
    record: RecordSettings,
    run: RunSettings,
    folder: RunFolder,
    plan: Plan,
    generator: Generator,
    tracker: RunProgress,
) -> None:
    """One task: its rows in windows, written as parts of each split's ``default`` and ``pairs``
    writers and of its failures, then its completion marker."""
    where, size = {"writer": task_writer(task)}, run.max_shard_size
    writers: dict[str, Any] = {
        f"{config}/{split}": ShardWriter(folder.path, config, split, schema, max_shard_size=size, **where)
        for split in record.splits()
        for config, schema in (("default", DEFAULT_SCHEMA), ("pairs", PAIRS_SCHEMA))
    }
    writers["failures"] = FailureWriter(folder.path, **where)
    stats = Stats()
    for window in generator.windows(tracker.taken(plan.read(task)), seen=set()):
        for row in window.records:
            split = split_of(
                row["id"],
                validation=record.validation_fraction,
                test=record.test_fraction,
                train=record.split,
            )
            writers[f"default/{split}"].write(row)
            writers[f"pairs/{split}"].write_rows(to_pairs(row))
        for failure in window.failures:
            writers["failures"].write(failure)
        stats.merge(window.stats)
        tracker.window_done(window.rows, window.stats)
        check()  # a signal whose exception Python dropped stops here
    precision = stage_precision(generator.stages)
    with critical():
        parts = {key: writer.commit() for key, writer in writers.items()}
        folder.complete(task, parts, stats.as_dict(), precision)


def prepare(
    record: RecordSettings,
    run: RunSettings,
    folder: RunFolder,
    *,
    overwrite: bool = False,
    push: Push | None = None,
) -> dict[str, str]:
    """(The main process) check everything (``push``: the upload), take this process's lock, save
    the settings and cut the input into tasks (once per run); returns the local path of each model."""
    checks = {"download": run.download, "trust_remote_code": run.trust_remote_code, "push": push}
    saved, mode, paths = check_run(record, folder, overwrite=overwrite, **checks)
    with new_folders(folder.path):  # a refused run leaves none of the folders it made
        folder.lock(alone=True)
        try:
            cpu = run.device == "cpu" if run.device is not None else cpu_only()
            task_rows = run.task_rows or TASK_ROWS["cpu" if cpu else "accelerator"]
            plan = folder.prepare(
                saved,
                lambda: read_rows(record),
                mode=mode,
                task_rows=task_rows,
                identity=lambda: local_identity(record),  # after the cut: the input did not change meanwhile
            )
        except BaseException:  # refused (other stdin, a shard's other settings): the lock goes with it
            folder.unlock()
            raise
    folder.count.clear()  # an earlier launch's counts are not this one's
    if run.task_rows and plan.task_rows not in (None, run.task_rows):
        print(
            f"paraamr generate: --task-rows {run.task_rows} changes nothing: the run was cut into "
            f"{plan.count:,} tasks of {plan.task_rows:,} rows at its start",
            file=sys.stderr,
        )
    return paths


def execute(
    record: RecordSettings,
    run: RunSettings | None = None,
    *,
    output: str | Path,
    overwrite: bool = False,
    license: str | None = None,
    push: Push | None = None,
    shard: Shard | None = None,
    origin: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Run this process's share of the build into ``output``; the main process checks everything
    first (:func:`prepare`; the others exit 1 when that fails), then finalizes the run (as ``shard``:
    :func:`~paraamr.builder.shards.shard_done`) and returns the summary."""
    run = run or RunSettings()
    t0 = time.monotonic()
    where = launch()
    rank, n = where.rank, where.processes
    folder = RunFolder(output, rank=rank, num_processes=n, shard=shard, origin=origin, device=run.device)
    error: BaseException | None = None
    paths: dict[str, str] = {}
    if rank == 0:
        warning = launch_warning()
        if warning:
            print(f"paraamr generate: warning: {warning}", file=sys.stderr)
        try:
            paths = prepare(record, run, folder, overwrite=overwrite, push=push)
        except BaseException as err:  # told to every process, then raised here
            error = err
    if n == 1 and error is not None:
        raise error
    quiet_libraries(run.verbose)
    with critical():  # (as in cpu_only)
        from accelerate import PartialState

    state_obj = PartialState(cpu=cpu_only(), timeout=timedelta(days=7))  # gloo on the CPU
    if n > 1:
        why = None if error is None else str(error) or type(error).__name__
        verdict, paths = broadcast((why, paths), where)
        if error is not None:
            raise error
        if verdict is not None:
            raise SystemExit(1)  # the main process reports it
        if rank != 0:
            folder.lock()
    try:
        if run.device is None and state_obj.device.type != "cpu":
            run = run.replace(device=str(state_obj.device))
        if n > 1 and (run.device or "cpu") == "cpu":
            share_cores(where.local)
        _process(record, run, folder, Plan.load(folder.path), paths, main=state_obj.is_main_process)
        if not state_obj.is_main_process:
            folder.unlock()  # done: the main process finishes the run under the folder's own lock
        state_obj.wait_for_everyone()
        if not state_obj.is_main_process:
            return None
        folder.count.clear()  # every process is done: its counts were for the progress bar
        try:
            if shard is not None:
                size = None if run.max_shard_size == MAX_SHARD_SIZE else run.max_shard_size  # given
                return shard_done(folder, push=push, started=t0, license=license, max_shard_size=size)
            return finalize_run(folder.path, license=license, push=push, run=run, started=t0)
        except Interrupted as err:  # the records are all written; the summary, card or upload was not
            detail = "after every source, while writing the summary and card or uploading them"
            raise err.with_detail(f"{detail}; run the same command to resume") from None
    finally:
        folder.unlock()
