"""Runs cut into independent shards (``generate.py --shard I/N``) and their finalize step.

A cluster runs a big build as N tasks that never meet (a Slurm array): task ``I`` keeps the input
rows whose id hash falls to shard ``I`` (:func:`paraamr.builder.rows.shard_of`) and writes its own
parts and resume state into the shared folder under its own writer names
(:func:`paraamr.layout.writer_id` with ``shard=(I, N)``), with no process group and no barrier
between shards. A shard may itself be a launch of ``k`` processes (``accelerate launch`` /
``torchrun``); shard ``I`` of ``N`` run by ``k`` processes is the cut of a run of ``N * k``
processes (:func:`paraamr.builder.rows.owner`), and each shard may use its own ``k``.

The run's settings (record settings, input identity and ``N``) are saved once, by the first shard
to start, and every later shard must match them; a shard's process count is kept per shard. Two
tasks claiming the same shard are refused by its writer lock. ``--overwrite`` resets one shard.

:func:`finalize_run` (``paraamr finalize DIR``, or ``--finalize auto``: the last shard to finish)
checks that every shard is done, then under the folder's own lock merges the writers' states into
the summary, names the shards over the whole run and writes the card (the same steps as a run in
one piece, :func:`paraamr.builder.summary.write_outputs`); it is idempotent.

>>> shard_command(["generate.py", "--shard", "slurm", "--overwrite", "--token", "hf_x", "--output", "o"])
['generate.py', '--shard', '{shard}', '--output', 'o']
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paraamr import layout
from paraamr.builder.folder import check_committed, pending
from paraamr.builder.settings import RecordSettings, RunSettings
from paraamr.builder.state import RunFolder
from paraamr.builder.status import RunStatus, ShardStatus, not_done, parse_writer, run_statuses, span
from paraamr.builder.summary import Push, publish, pushed, write_outputs
from paraamr.errors import FolderLocked, InputError
from paraamr.locks import busy_writers, folder_lock, writer_lock

__all__ = [
    "AUTO_WAIT",
    "RunStatus",
    "Shard",
    "ShardFolder",
    "ShardStatus",
    "finalize_run",
    "open_folder",
    "run_statuses",
    "shard_command",
    "shard_done",
]

#: Seconds ``--finalize auto`` waits for the folder's own lock (shards letting go of theirs, or
#: another shard finalizing) before it leaves the finalize to whoever holds it.
AUTO_WAIT = 60.0
#: The writer lock that serializes the first save of a run's settings by shards starting at once.
_SETTINGS_LOCK = "settings"


@dataclass(frozen=True)
class Shard:
    """This invocation's place in a run cut into shards: shard ``index`` of ``count``; ``finalize``:
    run the finalize step when it is the last shard to finish (``--finalize auto``); ``saved``:
    what the first shard records beside the settings (``command``: its command line with
    ``{shard}`` for the ``--shard`` value; ``run``: its run settings; ``license``)."""

    index: int
    count: int
    finalize: bool = False
    saved: dict[str, Any] = field(default_factory=dict)

    @property
    def prefix(self) -> str:
        """The start of the writer names of this shard (``s00003-of-00008.``; one shard: ``""``)."""
        head, dot, _ = layout.writer_id(0, 1, shard=(self.index, self.count)).rpartition(".")
        return head + dot

    def __str__(self) -> str:
        return f"shard {self.index}/{self.count}"


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


class ShardFolder(RunFolder):
    """The output folder of a run cut into shards, seen by one writer of ``shard``."""

    def __init__(self, folder: str | Path, *, rank: int, num_processes: int, shard: Shard):
        super().__init__(folder, rank=rank, num_processes=num_processes, shard=(shard.index, shard.count))
        self.spec = shard

    def resume_record(self, record: RecordSettings, identity: dict[str, Any] | None) -> dict[str, Any]:
        """The run's settings as the first shard saves them: ``record``, ``shards``, input identity."""
        return {"record": record.as_dict(), "shards": self.spec.count, "input_identity": identity}

    def layout_differences(self, saved: dict[str, Any]) -> list[str]:
        """A changed cut of the run: its shard count, or no shards where there were."""
        if "shards" not in saved:
            return [
                f"the run is not cut into shards ({saved.get('num_processes')} processes), now {self.spec}"
            ]
        if saved["shards"] != self.spec.count:
            return [f"shards were {saved['shards']} (--shard I/{saved['shards']}), now {self.spec.count}"]
        return []

    def check(self, record: RecordSettings, identity: dict[str, Any] | None, *, overwrite: bool) -> str:
        """:meth:`RunFolder.check`, and this shard's process count kept; ``--overwrite`` resets
        only this shard, so it needs the run's settings unchanged and a run not finalized yet."""
        mode = super().check(record, identity, overwrite=overwrite)
        if mode == "resume":
            ks = sorted({k for _, k in self._writers_of_shard()} - {self.num_processes})
            if ks:
                raise InputError(
                    f"{self.path}: {self.spec} ran with {ks[0]} processes, now {self.num_processes}; "
                    "pass --overwrite to start this shard over"
                )
        if mode == "overwrite":
            if _finalized(self.path):
                raise InputError(
                    f"{self.path}: the run is finalized (its shards are merged); --overwrite with --shard "
                    "resets one shard of an unfinished run: give a new --output folder"
                )
            diffs = self.differences(self.read_settings() or {}, record, identity)
            if diffs:
                raise InputError(
                    f"{self.path}: --overwrite with --shard resets only {self.spec}, and the run's "
                    f"other shards use other settings ({'; '.join(diffs)}); give a new --output folder"
                )
        return mode

    def check_lock(self, *, skip_own: bool = False) -> None:
        """Refuse when a writer of this shard (any process count) or of another run holds its
        lock; other shards of this run may be running."""
        for writer, holder in busy_writers(self.path, skip_own=skip_own):
            parsed = parse_writer(writer)
            if writer == _SETTINGS_LOCK or (
                parsed and parsed[1] == self.spec.count > 1 and parsed[0] != self.spec.index
            ):
                continue
            what = (
                f"{self.spec} is running already"
                if writer.startswith(self.spec.prefix)
                else "another run is writing this folder"
            )
            raise FolderLocked(f"{self.path}: {what} ({holder}); wait for it to finish or stop it")

    def reset(self, saved: dict[str, Any], *, overwrite: bool) -> None:
        """(This shard's main process, its lock held) save the run's settings unless a shard did
        (refused if one saved others meanwhile); with ``overwrite``, delete this shard's state
        and parts (any process count), and nothing of the other shards."""
        current = self.read_settings() or self._save_settings(saved)
        diffs = self.differences(current, RecordSettings.from_dict(saved["record"]), saved["input_identity"])
        if diffs:
            raise InputError(f"{self.path}: a shard started with other settings ({'; '.join(diffs)})")
        if overwrite:
            self._remove_shard()

    def _save_settings(self, saved: dict[str, Any]) -> dict[str, Any]:
        """The run's settings: saved by the first shard to take the settings lock, read by the
        others (shards starting at once on a new folder); written once, never replaced."""
        with _settings_lock(self.path):
            current = self.read_settings()
            if current is None:
                current = {**self.spec.saved, **saved}
                layout.atomic_write(self.settings_path, json.dumps(current, indent=1, sort_keys=True))
        return current

    def _writers_of_shard(self) -> set[tuple[str, int]]:
        """``(writer, processes)`` of every writer of this shard with a state or progress file."""
        found = set()
        for path in self.state_dir.glob(f"*-{self.spec.prefix}*.json"):
            writer = path.stem.split("-", 1)[1]
            parsed = parse_writer(writer)
            if parsed and path.name.startswith(("state-", "progress-")):
                found.add((writer, parsed[3]))
        return found

    def _remove_shard(self) -> None:
        prefix = self.spec.prefix
        doomed = [
            p
            for p in self.state_dir.glob(f"*{prefix}*")
            if p.name.startswith(("state-", "progress-", ".state-", ".progress-"))
        ]
        parts = self.path / layout.PARTS
        doomed += [p for p in parts.rglob(f"*{prefix}*") if p.is_file()] if parts.is_dir() else []
        for path in doomed:
            path.unlink(missing_ok=True)


@contextlib.contextmanager
def _settings_lock(path: Path, wait: float = 120.0) -> Iterator[None]:
    """Serialize the check-and-save of the run's settings between shards starting at once."""
    deadline = time.monotonic() + wait
    while True:
        try:
            lock = writer_lock(path, _SETTINGS_LOCK, command="generate --shard (saving the run's settings)")
            break
        except FolderLocked:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    try:
        yield
    finally:
        lock.release()


def open_folder(folder: str | Path, *, rank: int, num_processes: int, shard: Shard | None) -> RunFolder:
    """The run folder of this writer: a :class:`ShardFolder` for a shard, else a :class:`RunFolder`."""
    if shard is None:
        return RunFolder(folder, rank=rank, num_processes=num_processes)
    return ShardFolder(folder, rank=rank, num_processes=num_processes, shard=shard)


def _check_files(path: Path, status: RunStatus) -> None:
    """Refuse (naming each shard and its command) a run whose done shards' committed files do not
    match their counts (:func:`~paraamr.builder.folder.check_committed`): a part lost or cut short."""
    problems = check_committed(path, status.states)
    if not problems:
        return
    if "" in problems:
        raise InputError(
            f"{path}: the finished run's files do not match its counts ({'; '.join(problems[''])}); "
            "restore them, or run the whole run again into a new --output folder"
        )
    broken = {}
    for writer, wrong in problems.items():
        parsed = parse_writer(writer)
        index = parsed[0] if parsed else 0
        broken.setdefault(index, f"{wrong[0]}" + (f" and {len(wrong) - 1} more" if len(wrong) > 1 else ""))
    statuses = [
        ShardStatus(s.index, "broken", broken[s.index]) if s.index in broken else s for s in status.statuses
    ]
    if status.shards == 1:
        raise InputError(
            f"{path}: the committed files do not match the run's counts ({broken[0]}); nothing was "
            "finalized: run the same command with --overwrite to build it again"
        )
    raise not_done(path, RunStatus(status.saved, status.shards, statuses, status.states))


def _finalized(path: Path) -> bool:
    """Whether the run's finalize step is done (shards named, nothing pending, summary and card
    written)."""
    return (
        (path / layout.SUMMARY).is_file()
        and (path / layout.CARD).is_file()
        and bool(layout.list_shards(path))
        and not pending(path)
    )


def finalize_run(
    path: str | Path,
    *,
    wait: float = 0.0,
    license: str | None = None,
    max_shard_size: int | str | None = None,
    push: Push | None = None,
    again: bool = True,
) -> dict[str, Any] | None:
    """Finalize a run whose every shard is done: under the folder's own lock (waiting up to
    ``wait`` seconds), check each shard's committed files against its counts, merge the writers'
    states into ``summary.json``, name the shards over the whole run and write the card
    (:func:`~paraamr.builder.summary.write_outputs`); then upload with ``push``. ``license`` and
    ``max_shard_size`` default to the first shard's. A run finalized already is done again unless
    ``again`` is off (then None, or the summary when ``push`` has not reached its repo yet: a
    requeued task redoes an upload that failed). Raises :class:`InputError` naming each shard that
    is not done or whose files do not match its counts (and printing its command),
    :class:`FolderLocked` while a writer or another owner holds the folder."""
    path, t0 = Path(path), time.monotonic()
    status = run_statuses(path)
    if not status.complete:
        raise not_done(path, status)
    with folder_lock(path, command="finalize", wait=wait):
        if not again and _finalized(path):
            if push is None or pushed(path, push):
                return None
            summary = json.loads((path / layout.SUMMARY).read_text())
            return publish(path, summary, push)
        status = run_statuses(path)  # under the lock: nothing changes any more
        if not status.complete:
            raise not_done(path, status)
        _check_files(path, status)
        saved = status.saved
        known = RunSettings.__dataclass_fields__
        run = RunSettings(**{k: v for k, v in saved.get("run", {}).items() if k in known})
        run = run.replace(max_shard_size=max_shard_size) if max_shard_size is not None else run
        summary = write_outputs(
            path,
            status.states,
            saved,
            run,
            time.monotonic() - t0,
            license=license or saved.get("license"),
            repo_id=push.repo_id if push is not None else None,
        )
    return publish(path, summary, push)


def shard_done(folder: ShardFolder, *, push: Push | None = None) -> dict[str, Any] | None:
    """(A shard's main process, its work committed) let go of its lock; with ``--finalize auto``
    and every shard done, finalize the run (:func:`finalize_run`), once: when two shards finish
    at once, one finalizes and the other finds it done or in progress; a requeued shard of a run
    finalized already redoes an upload that did not reach its repo. Returns the summary when this
    process finalized or uploaded."""
    folder.unlock()
    spec = folder.spec
    status = run_statuses(folder.path)
    done = _finalized(folder.path)
    if done and not (spec.finalize and push is not None and not pushed(folder.path, push)):
        note = "the run is finalized already"
    elif not status.complete:
        left = [*(span(a, b) for a, b in status.missing()), *(str(s.index) for s in status.not_done())]
        note = f"shards not done: {', '.join(left)}"
    elif not spec.finalize:
        note = f"every shard is done: `paraamr finalize {folder.path}` finalizes the run"
    else:
        try:
            summary = finalize_run(folder.path, wait=AUTO_WAIT, push=push, again=False)
        except FolderLocked as err:
            summary, note = None, f"not finalizing now: {err}"
        else:
            note = "another shard finalized the run"
        if summary is not None:
            return summary
    print(f"{spec} of {folder.path} done; {note}", file=sys.stderr)
    return None
