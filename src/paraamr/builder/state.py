"""The resume state of a run in its output folder: input identity, locks, committed state.

A run's folder keeps, under ``DIR/.paraamr/`` (:data:`paraamr.layout.STATE_FILES`, never
uploaded), the settings it started with and, per writer (a process of the run), a state file that
each commit replaces atomically: how many of its rows are done, the next part number of each of
its writers and its counts. A killed run started again with the same command deletes what was
written after the last commit and goes on, so its records are exactly those of an uninterrupted
run. Each writer holds its lock (:func:`paraamr.locks.writer_lock`) for as long as it runs, so a
second run on the same folder refuses at once, naming the holder.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from paraamr import layout
from paraamr.builder.folder import clean_parts
from paraamr.builder.pipeline import Stats
from paraamr.builder.rows import owner, shard_of
from paraamr.builder.settings import RecordSettings
from paraamr.errors import FolderLocked, InputError
from paraamr.locks import busy_writers, folder_lock, writer_lock
from paraamr.outputs import check_writable

__all__ = ["FULL_HASH_BYTES", "RunFolder", "dataset_identity", "identity_changed", "input_identity"]

#: Inputs up to this size are hashed whole for their identity; larger ones by head, tail and size.
FULL_HASH_BYTES = 64 << 20
_EDGE_BYTES = 1 << 20


def _read_state(path: Path) -> dict:
    """A state file of the run (replaced whole at each commit, so one that does not parse was cut
    short or changed by hand): its content, else a one-line error naming it and the way out."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        data = err
    if not isinstance(data, dict):
        why = str(data) if isinstance(data, Exception) else "not a JSON object"
        raise InputError(
            f"{path}: the run's state is unreadable ({why}); run the same command with --overwrite to "
            "build this run (with --shard: this shard) again"
        )
    return data


def input_identity(path: str | Path) -> dict[str, Any]:
    """What identifies an input file's content: size, mtime and sha1 of the whole file when it is
    small (<= :data:`FULL_HASH_BYTES`), else of its first and last MiB.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "in.txt"
    >>> _ = p.write_text("a\\nb\\n")
    >>> ident = input_identity(p)
    >>> ident["size"], ident["sha1"]  # sha1sum of the same bytes
    (4, '05dec960e24d918b8a73a1c53bcbbaac2ee5c2e0')
    """
    import hashlib

    path = Path(path)
    st = path.stat()
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        if st.st_size <= FULL_HASH_BYTES:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
            return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha1": digest.hexdigest()}
        digest.update(f.read(_EDGE_BYTES))
        f.seek(st.st_size - _EDGE_BYTES)
        digest.update(f.read(_EDGE_BYTES))
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "edges_sha1": digest.hexdigest()}


def dataset_identity(name: str) -> dict[str, Any]:
    """What identifies a ``--dataset``: a local folder by each visible file's identity
    (:func:`input_identity`, by path inside it), a local file by its own, a Hub dataset by the
    revision (commit sha) it resolves to now (None when offline: then it cannot be checked).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "train.jsonl").write_text("a\\n")
    >>> sorted(dataset_identity(str(d))["files"])
    ['train.jsonl']
    """
    path = Path(name)
    if path.is_file():
        return input_identity(path)
    if path.is_dir():
        files = {}
        for top, dirs, names in os.walk(path):
            dirs[:] = [d for d in dirs if not d.startswith(".")]  # .cache, a run's state
            for file in (n for n in names if not n.startswith(".")):
                files[(Path(top) / file).relative_to(path).as_posix()] = input_identity(Path(top) / file)
        return {"files": dict(sorted(files.items()))}
    return {"hub": name, "revision": _hub_revision(name)}


def _hub_revision(name: str) -> str | None:
    """The commit a Hub dataset resolves to now; None offline or when the Hub cannot say (the load
    that follows reports why)."""
    from huggingface_hub import HfApi, constants

    from paraamr.network import bound_hub_requests, hub_timeout

    if constants.HF_HUB_OFFLINE:
        return None
    bound_hub_requests()
    try:
        return HfApi().dataset_info(name, timeout=hub_timeout()).sha
    except Exception:  # not a Hub dataset, no network: the load says what is wrong
        return None


def identity_changed(saved: dict[str, Any] | None, now: dict[str, Any] | None) -> str | None:
    """Why the input is not the one a run started with (None when it is): a file, a dataset folder
    (:func:`dataset_identity`: a file added, removed or changed), a Hub dataset's revision.

    >>> identity_changed({"size": 4, "sha1": "a"}, {"size": 5, "sha1": "b"})
    'its size was 4 bytes, now 5'
    >>> identity_changed({"files": {"a.csv": {"size": 4, "sha1": "a"}}}, {"files": {}})
    'a.csv was removed'
    """
    if saved is None and now is not None and ("files" in now or "hub" in now):
        return None  # a --dataset run of a paraamr that kept no identity for it: cannot be checked
    if saved == now or saved is None or now is None:
        return None if saved == now else "the input's identity was not recorded"
    if "files" in saved or "files" in now:
        old, new = saved.get("files", {}), now.get("files", {})
        for name in sorted(old.keys() | new.keys()):
            if name not in old or name not in new:
                return f"{name} was {'added' if name in new else 'removed'}"
            changed = identity_changed(old[name], new[name])
            if changed:
                return f"{name}: {changed}"
        return None
    if "revision" in saved or "revision" in now:
        was, is_ = saved.get("revision"), now.get("revision")
        if was and is_ and was != is_:  # offline (None): cannot be checked
            return f"the Hub dataset's revision was {was[:12]}, now {is_[:12]}"
        return None
    if saved.get("size") != now.get("size"):
        return f"its size was {saved.get('size')} bytes, now {now.get('size')}"
    if "sha1" in saved and "sha1" in now:
        return None if saved["sha1"] == now["sha1"] else "its content changed (sha1)"
    if saved.get("edges_sha1") != now.get("edges_sha1"):
        return "its content changed (first or last MiB)"
    return "it was modified (mtime) since the run started"


class RunFolder:
    """The output folder of a run and this writer's resume state (``DIR/.paraamr/``): process
    ``rank`` of ``num_processes``, of shard ``shard = (i, N)`` of a run cut into independent shards
    (:mod:`paraamr.builder.shards`; ``(0, 1)``: a run in one piece).

    >>> import tempfile
    >>> f = RunFolder(tempfile.mkdtemp(), rank=1, num_processes=2)
    >>> f.writer, f.state_path.name
    ('00001-of-00002', 'state-00001-of-00002.json')
    >>> RunFolder("d", rank=0, num_processes=1, shard=(3, 8)).writer
    's00003-of-00008.00000-of-00001'
    """

    def __init__(self, folder: str | Path, *, rank: int, num_processes: int, shard: tuple[int, int] = (0, 1)):
        self.path = Path(folder)
        self.rank, self.num_processes, self.shard = rank, num_processes, shard
        self.writer = layout.writer_id(rank, num_processes, shard=shard)
        #: The state files of this run's (or shard's) writers: ``state-{writers}.json``.
        head, _, tail = layout.writer_id(0, num_processes, shard=shard).rpartition("00000-of-")
        self.writers = f"{head}[0-9]*-of-{tail}"
        self.state_dir = self.path / layout.STATE_DIR
        self.state_path = layout.state_path(self.path, "state-{writer}.json", writer=self.writer)
        self.progress_path = layout.state_path(self.path, "progress-{writer}.json", writer=self.writer)
        self.settings_path = layout.state_path(self.path, "settings.json")
        self._lock = None

    def owns(self, row_id: str) -> bool:
        """Whether this writer handles the row with id ``row_id`` (:func:`~paraamr.builder.rows.owner`)."""
        index, shards = self.shard
        if shards > 1 and shard_of(row_id, shards) != index:
            return False
        return owner(row_id, self.num_processes, shards=shards) == self.rank

    def read_settings(self) -> dict | None:
        """The saved run (``record``, ``num_processes``, ``input_identity``), or None."""
        return _read_state(self.settings_path) if self.settings_path.is_file() else None

    def check(self, record: RecordSettings, identity: dict[str, Any] | None, *, overwrite: bool) -> str:
        """Refuse to mix runs or to touch files that are not ours; return what will happen
        (``new``, ``resume`` or ``overwrite``). Writes nothing."""
        if self.path.exists() and not self.path.is_dir():
            raise InputError(f"{self.path}: exists and is not a folder")
        check_writable(self.path)
        if not self.path.exists():
            return "new"
        self.check_lock()
        saved = self.read_settings()
        if saved is None:
            if any(p.name != layout.STATE_DIR for p in self.path.iterdir()):
                raise InputError(
                    f"{self.path}: exists and holds no paraamr run; "
                    + ("refusing to delete its files even with --overwrite" if overwrite else "")
                    + ("" if overwrite else "give an empty or new folder")
                )
            return "new"
        if overwrite:
            return "overwrite"
        if "record" not in saved:
            raise InputError(f"{self.path} holds a run of an older paraamr; pass --overwrite to start over")
        diffs = self.differences(saved, record, identity)
        if diffs:
            raise InputError(
                f"{self.path} holds a run with other settings ({'; '.join(diffs)}); "
                "pass --overwrite to start over"
            )
        return "resume"

    def differences(
        self, saved: dict[str, Any], record: RecordSettings, identity: dict[str, Any] | None
    ) -> list[str]:
        """What differs between the saved run and this one: record settings, the cut into processes
        (:meth:`layout_differences`), the input."""
        diffs = RecordSettings.from_dict(saved["record"]).differences(record)
        diffs += self.layout_differences(saved)
        changed = identity_changed(saved.get("input_identity"), identity)
        if changed:
            diffs.append(f"the input changed: {changed}")
        return diffs

    def layout_differences(self, saved: dict[str, Any]) -> list[str]:
        """A changed cut of the run: its process count, or shards where there were none."""
        if "shards" in saved:
            return [
                f"the run is cut into {saved['shards']} shards (--shard I/{saved['shards']}), now no --shard"
            ]
        if saved.get("num_processes") != self.num_processes:
            return [f"processes were {saved.get('num_processes')}, now {self.num_processes}"]
        return []

    def resume_record(self, record: RecordSettings, identity: dict[str, Any] | None) -> dict[str, Any]:
        """The run's settings as saved for resuming: ``record``, ``num_processes``, input identity."""
        return {"record": record.as_dict(), "num_processes": self.num_processes, "input_identity": identity}

    def check_lock(self, *, skip_own: bool = False) -> None:
        """Raise :class:`~paraamr.errors.FolderLocked` when a writer of a run holds its lock."""
        for _writer, holder in busy_writers(self.path, skip_own=skip_own)[:1]:
            raise FolderLocked(
                f"{self.path}: another run is writing this folder ({holder}); "
                "wait for it to finish or stop it"
            )

    def lock(self, *, alone: bool = False) -> None:
        """Take this writer's lock; the OS releases it when the process ends, however it ends.
        ``alone`` (the main process, before the others start): refuse, and let the lock go, when
        any other writer holds its lock (another run that started at the same moment)."""
        self._lock = writer_lock(self.path, self.writer, command="generate")
        if alone:
            try:
                self.check_lock(skip_own=True)
            except FolderLocked:
                self.unlock()
                raise

    def unlock(self) -> None:
        """Release this writer's lock."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def reset(self, saved: dict[str, Any], *, overwrite: bool) -> None:
        """(Main process, its lock held) with ``overwrite``, delete every file of the earlier run
        (:func:`paraamr.layout.remove_layout`: only the layout's, never a user's) under the
        folder's own lock; save the settings."""
        if overwrite:
            with folder_lock(self.path, command="generate --overwrite"):
                layout.remove_layout(self.path)
        if not self.settings_path.is_file():
            layout.atomic_write(self.settings_path, json.dumps(saved, indent=1, sort_keys=True))

    def load_state(self) -> dict:
        """This writer's committed state (fresh when none)."""
        if self.state_path.is_file():
            return _read_state(self.state_path)
        return {"consumed": 0, "next": {}, "stats": Stats().as_dict(), "done": False}

    def save_state(self, state: dict) -> None:
        """Commit: the state file is replaced atomically."""
        layout.atomic_write(self.state_path, json.dumps(state, sort_keys=True))

    def save_progress(self, rows: float) -> None:
        """Rows this writer has handled so far, a share of those in flight included (for the main
        process's display; not a commit)."""
        layout.atomic_write(self.progress_path, f"{rows:.1f}", durable=False)

    def progress(self, *, skip: str | None = None) -> float:
        """Rows handled so far by every writer of the run or shard (but ``skip``)."""
        total = 0.0
        for path in self.state_dir.glob(f"progress-{self.writers}.json"):
            if path.stem[len("progress-") :] == skip:
                continue
            with contextlib.suppress(OSError, ValueError):  # being replaced right now
                total += float(path.read_text() or 0)
        return total

    def states(self) -> list[tuple[str, dict]]:
        """``(writer, committed state)`` of each writer of the run (or shard) that committed, by writer."""
        out = []
        for path in sorted(self.state_dir.glob(f"state-{self.writers}.json")):
            out.append((path.stem[len("state-") :], _read_state(path)))
        return out

    def clean(self, state: dict) -> int:
        """Delete this writer's parts written after its last commit and its temporary files (a
        writer killed mid-write); return how many."""
        temps = layout.remove_temps(self.state_path) + layout.remove_temps(self.progress_path)
        return temps + clean_parts(self.path, writer=self.writer, committed=state["next"])
