"""Runs cut into independent shards (``--shard I/N`` runs the tasks ``k mod N = I``) and the finalize
step of every run (:func:`finalize_run`).

>>> shard_command(["generate.py", "--shard", "slurm", "--overwrite", "--token", "hf_x", "--output", "o"])
['generate.py', '--shard', '{shard}', '--output', 'o']
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paraamr import layout
from paraamr.builder.folder import check_committed, stray_parts
from paraamr.builder.state import RunFolder, Shard, finalized, task_writer
from paraamr.builder.status import RunStatus, not_done, ranges, run_statuses
from paraamr.builder.summary import Push, publish, pushed, write_outputs
from paraamr.errors import FolderLocked, InputError
from paraamr.locks import folder_lock
from paraamr.settings import RunSettings

__all__ = ["AUTO_WAIT", "RunStatus", "Shard", "finalize_run", "run_statuses", "shard_command", "shard_done"]

#: Seconds ``--finalize auto`` waits for the folder's own lock (shards letting go of theirs, or
#: another shard finalizing) before it leaves the finalize to whoever holds it.
AUTO_WAIT = 60.0


def shard_command(argv: Sequence[str]) -> list[str]:
    """A shard's command line as a template for every shard: the ``--shard`` value becomes
    ``{shard}``; ``--overwrite`` and ``--token`` (with its value) are left out."""
    out: list[str] = []
    args = iter(argv)
    for arg in args:
        name = arg.split("=", 1)[0]
        if name == "--overwrite":
            continue
        if name in ("--token", "--shard"):
            if "=" not in arg:
                next(args, None)
            out += ["--shard", "{shard}"] if name == "--shard" else []
            continue
        out.append(arg)
    return out


def _check_files(path: Path, status: RunStatus) -> None:
    """Move each done task whose files do not match its counts to the tasks not done (its marker
    removed); refuse a finalized run whose files do not match, or that lost a task's marker."""
    if not status.complete and finalized(path):
        RunFolder(path).check_finished()
    if status.complete and (strays := stray_parts(path, [task_writer(k) for k in status.done])):
        more = f" and {len(strays) - 1} more" if len(strays) > 1 else ""
        raise InputError(
            f"{path}: {strays[0].relative_to(path)}{more}: a part of no task of this run, whose rows "
            "finalize would add; move it out of the folder, then run the command again"
        )
    problems = check_committed(path, [(task_writer(k), status.done[k]) for k in sorted(status.done)])
    if not problems:
        return
    if "" in problems:
        raise InputError(
            f"{path}: the finished run's files do not match its counts ({'; '.join(problems[''])}); "
            "restore them, or run the whole run again into a new --output folder"
        )
    tasks = RunFolder(path).tasks
    for writer, wrong in problems.items():
        task = int(writer[1:])
        tasks.path(task).unlink()
        more = f" and {len(wrong) - 1} more" if len(wrong) > 1 else ""
        status.todo[task] = f"broken: {wrong[0]}{more}"
        del status.done[task]


def finalize_run(
    path: str | Path,
    *,
    wait: float = 0.0,
    license: str | None = None,
    max_shard_size: int | str | None = None,
    push: Push | None = None,
    again: bool = True,
    run: RunSettings | None = None,
    started: float | None = None,
    command: str = "finalize",
) -> dict[str, Any] | None:
    """Finalize a run whose every task is done: under the folder's own lock (waiting ``wait`` seconds)
    check each task's files, write the summary, shards and card, and upload with ``push`` (the lock
    held: another finalize neither uploads the folder again nor rewrites it meanwhile). Without
    ``again``, a finalized run returns None (or redoes a missing upload). InputError names each task
    not done. ``command``: the lock's holder, as a command refused meanwhile is told."""
    path, t0 = Path(path), time.monotonic() if started is None else started
    status = run_statuses(path)
    if not status.complete:
        _check_files(path, status)  # every task not done is named at once, the broken ones too
        raise not_done(path, status)
    with folder_lock(path, command=command, wait=wait):  # (its holder, as others are told)
        if not again and finalized(path):
            status.plan.drop_inputs()  # a finalize killed before it did
            if push is None or pushed(path, push):
                return None
            summary = json.loads((path / layout.SUMMARY).read_text())
            return publish(path, summary, push)
        status = run_statuses(path)  # under the lock: nothing changes any more
        _check_files(path, status)
        if not status.complete:
            raise not_done(path, status)
        status.precision(path)  # refuses a mix
        saved = status.saved
        if run is None:
            known = RunSettings.__dataclass_fields__
            run = RunSettings(**{k: v for k, v in saved.get("run", {}).items() if k in known})
        run = run.replace(max_shard_size=max_shard_size) if max_shard_size is not None else run
        summary = write_outputs(
            path,
            status,
            run,
            time.monotonic() - t0,
            license=license or saved.get("license"),
            repo_id=push.repo_id if push is not None else None,
            revision=push.revision if push is not None else None,
        )
        status.plan.drop_inputs()
        return publish(path, summary, push)  # under the lock: one upload, of the folder as written


def shard_done(
    folder: RunFolder,
    *,
    push: Push | None = None,
    started: float | None = None,
    license: str | None = None,
    max_shard_size: int | str | None = None,
) -> dict[str, Any] | None:
    """(A shard's main process, its tasks done) let go of its lock and, with ``--finalize auto`` and
    every task done, finalize the run (``license``, ``max_shard_size``: this shard's, given; else the
    first shard's); the summary when this process finalized or uploaded."""
    folder.unlock()
    spec = folder.spec
    status = run_statuses(folder.path)
    if finalized(folder.path) and not (spec.finalize and push is not None and not pushed(folder.path, push)):
        note = "the run is finalized already"
        if status.plan is not None:
            status.plan.drop_inputs()  # a finalize killed before it did
    elif not status.complete:
        note = f"shards not done: {ranges(status.shards_to_run(running=True))}"
    elif spec.executor:
        note = "every task is done: the executor's last job finalizes the run"
    elif not spec.finalize:
        note = f"every shard is done: `paraamr finalize {folder.path}` finalizes the run"
    else:
        try:
            given = {"license": license, "max_shard_size": max_shard_size, "push": push}
            finalizing = f"generate --finalize auto, {spec}"
            summary = finalize_run(
                folder.path, wait=AUTO_WAIT, again=False, started=started, command=finalizing, **given
            )
        except FolderLocked as err:
            summary, note = None, f"not finalizing now: {err}"
        else:
            note = "another shard finalized the run"
        if summary is not None:
            return summary
    print(f"{spec} of {folder.path} done; {note}", file=sys.stderr)
    return None
