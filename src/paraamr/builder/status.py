"""Where a run's tasks stand, and what to run for those that are not done (shards named as ranges).

>>> ranges(_spans([0, 1, 2, 5, 7, 8]))
'0-2, 5, 7-8'
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraamr import layout
from paraamr.builder.partition import Plan
from paraamr.builder.state import RunFolder
from paraamr.errors import InputError
from paraamr.locks import busy_writers
from paraamr.models.base import precision_words

__all__ = ["RunStatus", "not_done", "ranges", "run_statuses"]

#: Shards to run whose command is printed one per line (the others: the same with their I).
_SHOWN = 20
#: The lock of a run's process (:func:`paraamr.layout.writer_id`), of shard ``shard`` when cut.
_PROCESS = re.compile(r"^(?:s(?P<shard>\d{5,})-of-\d{5,}\.)?\d{5,}-of-\d{5,}$")


@dataclass
class RunStatus:
    """A run's saved settings, its ``plan`` (None before its input is cut), the markers of its
    ``done`` tasks and why each other task is not done (``not run``, ``running (holder)``, ...)."""

    saved: dict[str, Any]
    shards: int
    plan: Plan | None
    done: dict[int, dict]
    todo: dict[int, str]

    @property
    def complete(self) -> bool:
        """Whether every task is done."""
        return self.plan is not None and not self.todo

    def shards_to_run(self, *, running: bool = False) -> list[tuple[int, int]]:
        """The shards of the tasks not done as ``(first, last)`` ranges: without ``running``, not
        those with a task running or queued (the shard still runs, and does its other tasks).

        >>> RunStatus({}, 4, None, {}, {}).shards_to_run()
        [(0, 3)]
        >>> todo = {1: "running (pid 7)", 5: "not run", 6: "not run"}  # shard 1 runs task 1, then 5
        >>> status = RunStatus({}, 4, Plan(Path("run"), 8, {}), {}, todo)
        >>> status.shards_to_run(), status.shards_to_run(running=True)
        ([(2, 2)], [(1, 2)])
        """
        if self.plan is None:
            return [(0, self.shards - 1)]
        busy = {k % self.shards for k, why in self.todo.items() if why.startswith(("running", "queued"))}
        return _spans(sorted({k % self.shards for k in self.todo} - (set() if running else busy)))


    def precision(self, path: Path) -> dict[str, str] | None:
        """The precision every done task ran its models at (None where a marker does not say: one of
        an earlier paraamr); refuses a run at ``path`` whose tasks ran at different ones, naming them."""
        groups: dict[str, list[int]] = {}
        for k, marker in sorted(self.done.items()):
            if marker.get("precision") is not None:
                groups.setdefault(json.dumps(marker["precision"], sort_keys=True), []).append(k)
        seen = [(json.loads(key), tasks) for key, tasks in groups.items()]
        if len(seen) > 1:
            said = "; ".join(
                f"tasks {ranges(_spans(tasks))} at {precision_words(p, seen[1 if i == 0 else 0][0])}"
                for i, (p, tasks) in enumerate(seen)
            )
            raise InputError(
                f"{path}: its tasks ran the models at different precisions ({said}); the records of one "
                "run come from one precision: run the shards of one group again with --overwrite where "
                "the models run as the others did, or the whole run into a new --output folder"
            )
        told = sum(len(tasks) for _, tasks in seen)
        return seen[0][0] if seen and told == len(self.done) else None


def run_statuses(path: str | Path) -> RunStatus:
    """The run's saved settings and where each of its tasks stands."""
    path = Path(path)
    folder = RunFolder(path)
    saved = folder.read_settings()
    if saved is None:
        what = "no such folder" if not path.exists() else "a file, not a run folder"
        if path.is_dir():
            what = f"holds no paraamr generate run (no {layout.STATE_DIR}/settings.json)"
        raise InputError(f"{path}: {what}")
    plan = Plan.load(path)
    shards = saved.get("shards", 1)
    running, alive = {}, {}  # tasks held; shards with a process at work (its next tasks queued)
    for w, who in busy_writers(path):
        if w.startswith("task-"):
            running[int(w[len("task-") :])] = who
        elif found := _PROCESS.match(w):
            alive.setdefault(int(found["shard"] or 0), who)
    done, todo = {}, {}
    for k in plan.rows if plan is not None else ():
        if k in running:
            todo[k] = f"running ({running[k]})"
            continue
        try:
            marker = folder.marker(k)
        except InputError as err:
            todo[k] = f"unreadable ({str(err).split(': ', 1)[-1]})"
            continue
        if marker is None:
            todo[k] = f"queued ({alive[k % shards]})" if k % shards in alive else "not run"
        else:
            done[k] = marker
    return RunStatus(saved, shards, plan, done, todo)


def _spans(indices: Sequence[int]) -> list[tuple[int, int]]:
    """``(first, last)`` of each run of consecutive ``indices`` (sorted)."""
    runs = [[i for _, i in run] for _, run in itertools.groupby(enumerate(indices), lambda p: p[1] - p[0])]
    return [(run[0], run[-1]) for run in runs]


def ranges(spans: Sequence[tuple[int, int]], sep: str = ", ") -> str:
    """``0-2, 5`` for the spans ``[(0, 2), (5, 5)]``."""
    return sep.join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def not_done(path: Path, status: RunStatus) -> InputError:
    """The error naming each task that is not done, and why; the command of each shard to run again
    is printed on stdout."""
    if status.plan is None:
        head = "no task ran yet (the input was never cut into tasks)"
    else:
        whys: dict[str, list[int]] = {}
        for k, why in sorted(status.todo.items()):
            whys.setdefault(why.split(" (")[0].split(":")[0], []).append(k)
        parts = []
        for what, tasks in whys.items():
            first = status.todo[tasks[0]]
            detail = first[len(what) :].strip(" :") if len(tasks) == 1 else ""
            parts.append(f"{what}: {ranges(_spans(tasks))}" + (f" ({detail.strip('()')})" if detail else ""))
        head = f"{len(status.todo)} of {len(status.plan.rows)} tasks not done ({'; '.join(parts)})"
    rerun = status.shards_to_run()
    command, cwd = status.saved.get("command"), status.saved.get("cwd", ".")
    # one command does them all: a run in one piece, or an --executor run (no {shard} in its command)
    if status.shards == 1 or (command and rerun and not any("{shard}" in arg for arg in command)):
        if command:
            print(f"# the command to run again (from {cwd}):\n{' '.join(command)}")
        then = ", then finalize again" if status.shards == 1 else ""
        return InputError(f"{path}: {head}; run the same command to do them{then}")
    if command and rerun:
        print(f"# the shards to run (from {cwd}); on Slurm: --array={ranges(rerun, ',')}")
        for i in itertools.islice((i for a, b in rerun for i in range(a, b + 1)), _SHOWN):
            print(" ".join(arg.replace("{shard}", f"{i}/{status.shards}") for arg in command))
        left = sum(b - a + 1 for a, b in rerun) - _SHOWN
        if left > 0:
            print(f"# ... and {left} more: the same with --shard I/{status.shards}")
    where = "the command of each is printed above" if command else "run each with --shard I/N"
    todo = f"shards to run again: {ranges(rerun)}; {where}, then finalize again" if rerun else "wait for them"
    return InputError(f"{path}: {head}; {todo}")
