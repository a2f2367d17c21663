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

>>> _ranges([0, 1, 2, 5, 7, 8])
'0-2, 5, 7-8'
>>> shard_command(["generate.py", "--shard", "slurm", "--overwrite", "--token", "hf_x", "--output", "o"])
['generate.py', '--shard', '{shard}', '--output', 'o']
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paraamr import layout
from paraamr.builder.folder import pending
from paraamr.builder.settings import RecordSettings, RunSettings
from paraamr.builder.state import RunFolder
from paraamr.builder.summary import Push, publish, write_outputs
from paraamr.errors import FolderLocked, InputError
from paraamr.locks import busy_writers, folder_lock, writer_lock

__all__ = [
    "AUTO_WAIT",
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
_WRITER = re.compile(r"^s(?P<i>\d{5,})-of-(?P<n>\d{5,})\.(?P<rank>\d{5,})-of-(?P<k>\d{5,})$")
_PLAIN = re.compile(r"^(?P<rank>\d{5,})-of-(?P<k>\d{5,})$")
#: Missing shards whose command is printed one per line (the others: the same with their I).
_SHOWN = 20


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


def _parse_writer(writer: str) -> tuple[int, int, int, int] | None:
    """``(shard, shards, rank, processes)`` of a writer name (a run in one piece: shard 0 of 1)."""
    m = _WRITER.match(writer) or _PLAIN.match(writer)
    if m is None:
        return None
    shard = (int(m["i"]), int(m["n"])) if "i" in m.groupdict() else (0, 1)
    return (*shard, int(m["rank"]), int(m["k"]))


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
            parsed = _parse_writer(writer)
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
            parsed = _parse_writer(writer)
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


@dataclass
class ShardStatus:
    """Where one shard of a run stands: ``done``, ``missing`` (never committed), ``unfinished``
    (committed, not done, not running) or ``running`` (a writer holds its lock); ``detail`` says more."""

    index: int
    state: str
    detail: str = ""


def _read_settings(path: Path) -> dict[str, Any]:
    settings = layout.state_path(path, "settings.json")
    if not settings.is_file():
        raise InputError(f"{path}: holds no paraamr generate run (no {layout.STATE_DIR}/settings.json)")
    return json.loads(settings.read_text())


def _writer_states(path: Path, shards: int) -> dict[int, list[tuple[str, dict, int, int]]]:
    """Per shard, ``(writer, committed state, rank, processes)`` of each of its writers."""
    out: dict[int, list[tuple[str, dict, int, int]]] = {}
    for state_path in sorted((path / layout.STATE_DIR).glob("state-*.json")):
        writer = state_path.stem[len("state-") :]
        parsed = _parse_writer(writer)
        if parsed is None or parsed[1] != shards:
            continue
        with contextlib.suppress(OSError, ValueError):  # replaced right now: read as not done
            out.setdefault(parsed[0], []).append((writer, json.loads(state_path.read_text()), *parsed[2:]))
    return out


def run_statuses(path: str | Path) -> tuple[dict[str, Any], list[ShardStatus], list[tuple[str, dict]]]:
    """The run's saved settings, the status of each of its shards (a run in one piece is one
    shard), and the committed states of the writers of the done shards, in writer order."""
    path = Path(path)
    saved = _read_settings(path)
    shards = saved.get("shards", 1)
    states = _writer_states(path, shards)
    running: dict[int, str] = {}
    for writer, holder in busy_writers(path):
        parsed = _parse_writer(writer)
        if parsed and parsed[1] == shards:
            running.setdefault(parsed[0], holder)
    statuses, done = [], []
    for i in range(shards):
        writers = states.get(i, [])
        ks = {k for *_, k in writers}
        finished = sum(1 for _, state, *_ in writers if state.get("done"))
        if i in running:
            statuses.append(ShardStatus(i, "running", running[i]))
        elif not writers:
            statuses.append(ShardStatus(i, "missing"))
        elif len(ks) == 1 and finished == len(writers) == ks.pop():
            statuses.append(ShardStatus(i, "done"))
            done += [(writer, state) for writer, state, *_ in writers]
        else:
            statuses.append(ShardStatus(i, "unfinished", f"{finished} of {len(writers)} processes done"))
    return saved, statuses, done


def _ranges(indices: Sequence[int]) -> str:
    """``0-2, 5`` for [0, 1, 2, 5]."""
    spans: list[list[int]] = []
    for i in indices:
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _not_done(path: Path, saved: dict[str, Any], statuses: list[ShardStatus]) -> InputError:
    """The error naming each shard that is not done; the command of each is printed on stdout."""
    shards = saved.get("shards", 1)
    todo = [s for s in statuses if s.state != "done"]
    parts = []
    for state in ("missing", "unfinished", "running"):
        these = [s for s in todo if s.state == state]
        if these:
            detail = f" ({these[0].detail})" if these[0].detail and len(these) == 1 else ""
            parts.append(f"{state}: {_ranges([s.index for s in these])}{detail}")
    command = saved.get("command")
    rerun = [s for s in todo if s.state != "running"]
    if command and rerun:
        array = _ranges([s.index for s in rerun]).replace(" ", "")
        print(f"# the shards to run (from {saved.get('cwd', '.')}); on Slurm: --array={array}")
        for status in rerun[:_SHOWN]:
            print(" ".join(arg.replace("{shard}", f"{status.index}/{shards}") for arg in command))
        if len(rerun) > _SHOWN:
            print(f"# ... and {len(rerun) - _SHOWN} more: the same with --shard I/{shards}")
    where = "the command of each is printed above" if command and rerun else "run each with --shard I/N"
    return InputError(
        f"{path}: {len(todo)} of {shards} shards not done ({'; '.join(parts)}); {where}, then finalize again"
    )


def _finalized(path: Path) -> bool:
    """Whether the run's finalize step is done (shards named, nothing pending, summary written)."""
    return (path / layout.SUMMARY).is_file() and bool(layout.list_shards(path)) and not pending(path)


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
    ``wait`` seconds), merge the writers' states into ``summary.json``, name the shards over the
    whole run and write the card (:func:`~paraamr.builder.summary.write_outputs`); then upload with
    ``push``. ``license`` and ``max_shard_size`` default to the first shard's. A run finalized
    already is done again unless ``again`` is off (then None). Raises :class:`InputError` naming
    each shard that is not done (and printing its command), :class:`FolderLocked` while a writer
    or another owner holds the folder."""
    path, t0 = Path(path), time.monotonic()
    saved, statuses, _ = run_statuses(path)
    if any(s.state != "done" for s in statuses):
        raise _not_done(path, saved, statuses)
    with folder_lock(path, command="finalize", wait=wait):
        if not again and _finalized(path):
            return None
        saved, statuses, states = run_statuses(path)  # under the lock: nothing changes any more
        if any(s.state != "done" for s in statuses):
            raise _not_done(path, saved, statuses)
        known = RunSettings.__dataclass_fields__
        run = RunSettings(**{k: v for k, v in saved.get("run", {}).items() if k in known})
        run = run.replace(max_shard_size=max_shard_size) if max_shard_size is not None else run
        summary = write_outputs(
            path,
            states,
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
    at once, one finalizes and the other finds it done or in progress. Returns the summary when
    this process finalized."""
    folder.unlock()
    spec = folder.spec
    _, statuses, _ = run_statuses(folder.path)
    left = [s.index for s in statuses if s.state != "done"]
    if _finalized(folder.path):
        note = "the run is finalized already"
    elif left:
        note = f"shards not done: {_ranges(left)}"
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
