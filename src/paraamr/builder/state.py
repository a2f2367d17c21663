"""A run's output folder as its processes see it: the saved settings, the locks, the tasks (each
done again from the start unless its completion marker is written).

>>> import tempfile
>>> f = RunFolder(tempfile.mkdtemp(), rank=1, num_processes=2)
>>> f.writer, f.shard
('00001-of-00002', (0, 1))
>>> RunFolder("d", shard=Shard(3, 8)).writer, task_writer(12)
('s00003-of-00008.00000-of-00001', 't000012')
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraamr import layout
from paraamr.atomic import atomic_write
from paraamr.builder.counts import Stats
from paraamr.builder.folder import clean_parts, pending
from paraamr.builder.partition import REDO, Plan, partition
from paraamr.builder.rows import InputRow
from paraamr.errors import FolderLocked, InputError, broken_link
from paraamr.locks import busy_writers, folder_lock, writer_lock
from paraamr.models.base import precision_words
from paraamr.outputs import check_writable
from paraamr.progress import SharedCount
from paraamr.settings import RecordSettings
from paraamr.tasks import TaskFolder, cpu_only, identity_changed, model_changes, read_json

__all__ = ["RunFolder", "Shard", "finalized", "task_writer"]

#: Why a finalized run's lost task marker cannot be redone, and the ways out.
_FINISHED = (
    "the run is finalized (every task's parts are merged into its shards, whose rows stand), so the "
    "task cannot be done again: restore the file, or run generate with --overwrite to build the run again"
)
#: The lock under which the first process of a run saves its settings and cuts its input.
_FIRST = "partition"
#: Seconds a process waits for that lock before it says so (shards starting at once meet briefly).
_SAY_WAIT = 5.0


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (the tasks ``k mod count = index``); ``finalize``: the last shard
    to finish runs the finalize step (``--finalize auto``)."""

    index: int
    count: int
    finalize: bool = False
    executor: bool = False  # the cut of --executor's --tasks (refusals name that option)

    def __str__(self) -> str:
        return f"shard {self.index}/{self.count}"


def task_writer(task: int) -> str:
    """The writer name of ``task``'s parts."""
    return f"t{task:06d}"


class RunFolder:
    """The output folder of a run seen by process ``rank`` of ``num_processes`` (of ``shard``);
    ``origin``: what the first invocation saves beside the settings (``command``, ``cwd``, ...);
    ``device``: where this launch runs the models (None: :attr:`on`); ``--dtype`` and
    ``--compute-type`` differ from the saved run's only where they give another precision there.
    Without ``runs_models`` (an executor's Slurm launcher and partition job, whose node is not the
    tasks'), they are not compared: each task compares what its models run at on its own node."""

    def __init__(
        self,
        folder: str | Path,
        *,
        rank: int = 0,
        num_processes: int = 1,
        shard: Shard | None = None,
        origin: dict[str, Any] | None = None,
        device: str | None = None,
        runs_models: bool = True,
    ):
        self.path, self.origin, self.device = Path(folder), origin or {}, device
        self.runs_models = runs_models
        self.rank, self.num_processes, self.spec = rank, num_processes, shard
        self.shard = (shard.index, shard.count) if shard is not None else (0, 1)
        self.writer = layout.writer_id(rank, num_processes, shard=self.shard)
        self.tasks = TaskFolder(self.path, "generate", unit="task", what="a generate run")
        self.settings_path = layout.state_path(self.path, "settings.json")
        writers = [layout.writer_id(r, num_processes, shard=self.shard) for r in range(num_processes)]
        #: Rows handled in this launch by each process of this invocation (``progress-{writer}.json``).
        self.count = SharedCount(self.path / layout.STATE_DIR, self.writer, names=writers)
        self._lock = None
        #: Why the run in the folder starts over (a ``restart`` of :meth:`check`), for the one line.
        self.restarting = ""

    @property
    def on(self) -> str:
        """The device this launch runs the models on: ``device``, else ``cuda`` where there is one."""
        return self.device or ("cpu" if cpu_only() else "cuda")

    def read_settings(self) -> dict | None:
        """The saved run (``record``, ``input_identity``, ``shards``, ...), or None."""
        if not self.settings_path.is_file():
            return None
        saved = read_json(self.settings_path, "the run's settings", fix=REDO)
        if saved is None:  # removed since the check above
            return None
        if not isinstance(saved.get("record"), dict):
            raise InputError(f"{self.path} holds a run of an older paraamr; pass --overwrite to start over")
        return saved

    def check(self, record: RecordSettings, identity: dict[str, Any] | None, *, overwrite: bool) -> str:
        """Refuse to mix runs or to touch files that are not ours; return ``new``, ``resume``,
        ``overwrite`` or ``restart`` (other settings in a run that has not :meth:`started`). Writes
        nothing."""
        if self.path.exists() and not self.path.is_dir():
            raise InputError(f"{self.path}: exists and is not a folder")
        if broken := broken_link(self.path):
            raise InputError(f"{self.path}: {broken}")
        check_writable(self.path)
        if not self.path.exists():
            return "new"
        self.check_lock()
        saved = self.read_settings()
        if saved is None and (done := self.tasks.completed()):  # what they were made with is not known
            if overwrite:
                return "overwrite"
            raise InputError(f"{self.settings_path}: missing, while {len(done):,} tasks are done{REDO}")
        if saved is None:
            if any(p.name != layout.STATE_DIR for p in self.path.iterdir()):
                why = "give an empty or new folder"
                if overwrite:
                    why = "refusing to delete its files even with --overwrite"
                raise InputError(f"{self.path}: exists and holds no paraamr run; {why}")
            return "new"
        diffs = self.differences(saved, record, identity)
        if overwrite and self.spec is not None:
            if finalized(self.path):
                raise InputError(
                    f"{self.path}: the run is finalized (its shards are merged); --overwrite with --shard "
                    "resets one shard of an unfinished run: give a new --output folder"
                )
            if diffs:
                raise InputError(
                    f"{self.path}: --overwrite with --shard resets only {self.spec}, and the run's other "
                    f"shards use other settings ({'; '.join(diffs)}); give a new --output folder"
                )
        if overwrite:
            return "overwrite"
        if diffs:
            return self._restart(diffs)
        if finalized(self.path):
            self.check_finished()
        return "resume"

    def check_models(self, record: RecordSettings, models: dict[str, str]) -> str:
        """Refuse to resume with a model whose files (``models``: digests by kind) are not those the
        run started with; ``resume``, or ``restart`` (see :meth:`check`)."""
        changed = model_changes((self.read_settings() or {}).get("models"), models, record.models())
        return self._restart(changed) if changed else "resume"

    def started(self) -> bool:
        """Whether the run in the folder did work that other settings would throw away: a task
        completed, the run finalized, or a process at work in it."""
        return bool(self.tasks.completed()) or finalized(self.path) or bool(busy_writers(self.path))

    def _restart(self, diffs: list[str]) -> str:
        """``restart`` when the run has not :meth:`started` (:attr:`restarting` says why), else refused."""
        why = "; ".join(diffs)
        if self.started():
            # (--overwrite with --shard resets that shard only: a run cut into shards takes a new folder)
            anew = "give a new --output" if self.spec is not None else "pass --overwrite"
            raise InputError(f"{self.path} holds a run with other settings ({why}); {anew} to start over")
        self.restarting = f"{self.path}: the run there finished no task; it starts over with these settings"
        self.restarting += f" ({why})"
        return "restart"

    def check_finished(self) -> None:
        """Refuse a finalized run that lost a task's completion marker (it cannot be done again)."""
        plan = Plan.load(self.path)
        for task in plan.rows if plan is not None else ():
            try:
                if self.marker(task) is None:
                    raise InputError(f"{self.tasks.path(task)}: missing")
            except InputError as err:
                raise InputError(f"{err}; {_FINISHED}") from None

    def differences(
        self,
        saved: dict[str, Any],
        record: RecordSettings,
        identity: dict[str, Any] | None,
        models: dict[str, str] | None = None,
    ) -> list[str]:
        """What differs between the saved run and this one: settings, the cut into shards, the input
        and, with ``models`` (:func:`~paraamr.models.fast.model_digest` by kind), a model's files."""
        done = self.done_precision()
        diffs = RecordSettings.from_dict(saved["record"]).differences(record, precision=done is None)
        if done is not None and self.runs_models:
            now = {k: record.precision(self.on) for k in done}
            diffs += [self._precision_change(done, now)] if now != done else []
        diffs += model_changes(saved.get("models"), models, record.models())
        was, now = saved.get("shards"), self.shard[1] if self.spec is not None else None
        executor = self.spec is not None and self.spec.executor
        if was != now and was is None:
            now_cut = f"tasks, now --tasks {now}" if executor else f"shards, now {self.spec}"
            diffs.append(f"the run is not cut into {now_cut}")
        elif was != now and now is None:
            diffs.append(f"the run is cut into {was} shards (--shard I/{was}), now no --shard")
        elif was != now:
            cut = f"tasks were {was} (--tasks {was})" if executor else f"shards were {was} (--shard I/{was})"
            diffs.append(f"{cut}, now {now}")
        changed = identity_changed(saved.get("input_identity"), identity)
        if changed:
            diffs.append(f"the input changed: {changed}")
        return diffs

    def resume_record(
        self, record: RecordSettings, identity: dict[str, Any] | None, models: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """The run's settings as saved: ``record``, ``input_identity``, ``models`` (each model's
        digest), ``shards`` and ``origin``."""
        saved = {**self.origin, "record": record.as_dict(), "input_identity": identity, "models": models}
        return saved if self.spec is None else {**saved, "shards": self.spec.count}

    def _others(self, writer: str) -> bool:
        """Whether the lock ``writer`` may be held by another shard of this run while this one runs."""
        if self.spec is None:
            return False
        if writer == _FIRST:
            return True
        if writer.startswith("task-"):
            return int(writer[len("task-") :]) % self.spec.count != self.spec.index
        return not writer.startswith(f"s{self.spec.index:05d}-of-{self.spec.count:05d}.")

    def check_lock(self, *, skip_own: bool = False) -> None:
        """Raise :class:`~paraamr.errors.FolderLocked` when another run (or this shard, run again)
        holds a lock of the folder."""
        for writer, holder in busy_writers(self.path, skip_own=skip_own):
            if self._others(writer):
                continue
            what = f"{self.spec} is running already" if self.spec else "another run is writing this folder"
            raise FolderLocked(f"{self.path}: {what} ({holder}); wait for it to finish or stop it")

    def lock(self, *, alone: bool = False) -> None:
        """Take this process's writer lock. ``alone`` (the main process, before the others start):
        refuse, and let the lock go, when another run holds a lock."""
        try:
            self._lock = writer_lock(self.path, self.writer, command="generate")
        except FolderLocked:  # this shard, run again: said as the shard, not as its writer's name
            self.check_lock(skip_own=True)
            raise
        if alone:
            try:
                self.check_lock(skip_own=True)
            except FolderLocked:
                self.unlock()
                raise

    def unlock(self) -> None:
        """Release this process's writer lock."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def prepare(
        self,
        saved: dict[str, Any],
        rows: Callable[[], Iterable[InputRow]],
        *,
        mode: str,
        task_rows: int,
        identity: Callable[[], dict[str, Any] | None] = lambda: None,
    ) -> Plan:
        """(The main process, its lock held) clear what ``mode`` (of :meth:`check`) throws away, save
        the settings unless a shard did (refused when they differ) and cut the input into tasks
        unless that is done (stdin, then, must be the same rows); an input whose ``identity`` after
        the cut is not the one saved changed while it was read: the cut is undone and refused."""
        overwrite = mode == "overwrite"
        if mode == "restart":
            print(f"paraamr generate: {self.restarting}", file=sys.stderr)
        if mode == "restart" or (overwrite and self.spec is None):
            with folder_lock(self.path, command="generate --overwrite"):
                if mode == "restart" and self.tasks.completed():  # since the check: a run came and went
                    raise InputError(f"{self.path}: a run there completed tasks meanwhile; run again")
                if overwrite:  # the earlier dataset stays, unfinalized, until the new one replaces it
                    layout.remove_state(self.path)
                    (self.path / layout.SUMMARY).unlink(missing_ok=True)
                else:
                    layout.remove_layout(self.path)
        said, since = False, time.monotonic()
        while True:  # the lock of the run's start: the others wait for the first process
            try:
                first = writer_lock(self.path, _FIRST, command="generate (cutting the input into tasks)")
                break
            except FolderLocked as err:
                if not said and time.monotonic() - since > _SAY_WAIT:
                    print(f"paraamr generate: waiting: {err}", file=sys.stderr)
                    said = True
                time.sleep(0.2)
        with first:
            if overwrite and self.spec is not None:
                for task in self.tasks.completed():
                    if task % self.spec.count == self.spec.index:
                        self.remove_task(task)
            current = self.read_settings()
            if current is None:
                atomic_write(self.settings_path, json.dumps(saved, indent=1, sort_keys=True))
            else:
                record = RecordSettings.from_dict(saved["record"])
                diffs = self.differences(current, record, saved["input_identity"], saved.get("models"))
                if diffs:
                    raise InputError(f"{self.path}: a shard started with other settings ({'; '.join(diffs)})")
            plan = Plan.load(self.path)
            if plan is None and (done := self.tasks.completed()):  # cut again: done rows written twice
                missing = f"{self.path}: the plan of its tasks is missing, {len(done):,} being done"
                raise InputError(missing + REDO)
            if plan is None:
                plan = partition(
                    self.path, rows(), task_rows=task_rows, at_least=self.num_processes, shards=self.shard[1]
                )
                now = identity()
                if now is not None and (changed := identity_changed(saved["input_identity"], now)):
                    plan.remove()
                    if current is None:  # saved by this call: the next run starts afresh
                        self.settings_path.unlink(missing_ok=True)
                    given = saved["record"]
                    source = given.get("input") or given.get("amr_input") or given.get("dataset")
                    raise InputError(f"{source}: changed while it was read ({changed}); run again")
            elif saved["record"].get("input") == "-":  # no identity before it is read: read it again
                plan.check_input(rows())
        return plan

    def claim(self, plan: Plan) -> Iterator[int]:
        """The tasks this process runs, one at a time, each under its lock: those neither completed
        (readably) nor held by another process, starting at this process's share."""
        mine = plan.of(self.shard)
        start = len(mine) * self.rank // self.num_processes
        for task in mine[start:] + mine[:start]:
            if self.completed(task):
                continue
            try:
                lock = writer_lock(self.path, f"task-{task:06d}", command="generate")
            except FolderLocked:
                continue
            try:
                if not self.completed(task):
                    self.remove_task(task)
                    yield task
            finally:
                lock.release()

    def marker(self, task: int) -> dict[str, Any] | None:
        """``task``'s completion marker (``next``: its writers' part counts; ``stats``), or None;
        InputError when its file is unreadable or holds something else."""
        marker = self.tasks.load(task)
        if marker is None:
            return None
        try:
            Stats.from_dict(marker["stats"])
            if not all(isinstance(k, str) and type(n) is int and n >= 0 for k, n in marker["next"].items()):
                raise ValueError("part counts that are not numbers")
        except (ValueError, TypeError, KeyError, AttributeError) as err:
            why = f" ({err})" if isinstance(err, ValueError) else ""
            raise InputError(f"{self.tasks.path(task)}: not a task's completion marker{why}") from None
        return marker

    def completed(self, task: int) -> bool:
        """Whether ``task`` has a readable completion marker."""
        try:
            return self.marker(task) is not None
        except InputError:
            return False

    def complete(
        self, task: int, parts: dict[str, int], stats: dict[str, Any], precision: dict[str, str] | None = None
    ) -> None:
        """Mark ``task`` completed: its ``parts`` (the next part number of each of its writers), counts
        and the ``precision`` its models ran at (:meth:`check_precision`; None: not known)."""
        self.tasks.commit(task, {"next": parts, "stats": stats, "precision": precision})

    def done_precision(self) -> dict[str, str] | None:
        """What the models of the run's done tasks ran at (``{stage: precision}``), from the first
        marker that says; None before any."""
        for task in self.tasks.completed():
            try:
                done = (self.marker(task) or {}).get("precision")
            except InputError:  # finalize names it
                continue
            if done is not None:  # (not a marker of an earlier paraamr)
                return done
        return None

    def check_precision(self, precision: dict[str, str]) -> None:
        """Refuse to run tasks at another ``precision`` (``{stage: what its model runs at}``) than
        the run's done tasks ran at: the records of one run come from one precision."""
        done = self.done_precision()
        if done is not None and done != precision:
            raise InputError(
                f"{self.path}: {self._precision_change(done, precision)}; the records of one run come "
                "from one precision: give the --dtype, --compute-type or --device that runs them as "
                "before, or start over into a new --output folder"
            )

    def _precision_change(self, done: dict[str, str], now: dict[str, str]) -> str:
        was, will = precision_words(done, now), precision_words(now, done)
        return f"its done tasks ran the models at {was}, this launch would run them at {will} ({self.on})"

    def remove_task(self, task: int) -> None:
        """Delete ``task``'s marker and every file it wrote (parts, temporary files)."""
        self.tasks.path(task).unlink(missing_ok=True)
        self.tasks.clean([task])
        clean_parts(self.path, writer=task_writer(task), committed={})

    def running(self) -> bool:
        """Whether a process holds a task lock of this invocation's tasks."""
        return any(w.startswith("task-") and not self._others(w) for w, _ in busy_writers(self.path))


def finalized(path: Path) -> bool:
    """Whether the run's finalize step is done (shards named, nothing pending, summary and card written)."""
    return (
        (path / layout.SUMMARY).is_file()
        and (path / layout.CARD).is_file()
        and bool(layout.list_shards(path))
        and not pending(path)
    )
