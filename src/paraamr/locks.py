"""The locks of a dataset folder: one per writer (:func:`writer_lock`), and the folder's own
(:func:`folder_lock`, refused while any writer or another owner holds it). A refusal raises
:class:`~paraamr.errors.FolderLocked` naming the holder (pid, host, command).

They are ``flock`` locks, released when their process ends however it ends: every writer holds
``DIR/.paraamr/locks/folder.lock`` shared and its own ``writer-{id}.lock`` exclusively; an owner
holds ``folder.lock`` exclusively. The last holder to let go removes the lock file, so a finished
command leaves no lock behind (unlike :mod:`filelock`, ``benchmarks/bench_locks.py``).

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> with writer_lock(d, "00000-of-00002"):
...     try:
...         writer_lock(d, "00000-of-00002")
...     except FolderLocked as err:
...         print(str(err)[len(d):].split(" (")[0])
: writer 00000-of-00002 is running already
>>> with writer_lock(d, "00000-of-00002"), folder_lock(d, command="finalize"):  # its own writer's
...     pass
>>> import os; os.listdir(d)  # nothing left behind
[]
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import time
from pathlib import Path

from paraamr.errors import FolderLocked
from paraamr.layout import LOCKS

__all__ = ["FolderLock", "Lock", "busy_writers", "file_lock", "folder_lock", "holder", "writer_lock"]

#: How long an acquire retries a lock held for a moment (another holder letting go).
SETTLE_SECONDS = 1.0
_FOLDER = "folder.lock"
#: How often a lock file's creation is tried again when its folder vanished in between.
_TRIES = 100
#: Shared holds of ``folder.lock`` by this process's writers, by path (an owner in the same
#: process lets them go while it works and takes them back after).
_SHARED: dict[str, list[_Flock]] = {}
#: Writer lock files this process holds (skipped by :func:`busy_writers`).
_HELD: set[str] = set()


class _Flock:
    """One ``flock`` on one file, on a file that is still the one at ``path`` once locked."""

    def __init__(self, path: Path, mode: int, wait: float):
        self.path, self.mode, self.fd = path, mode, -1
        self.acquire(wait)

    def acquire(self, wait: float) -> None:
        """Lock the file, retrying for ``wait`` seconds; BlockingIOError when it stays held."""
        deadline = time.monotonic() + wait
        while True:
            fd = self._open()
            if _try_lock(fd, self.mode):
                if self._current(fd):
                    self.fd = fd
                    return
                os.close(fd)
                continue  # removed or replaced by its last holder: lock the new one
            os.close(fd)
            if time.monotonic() >= deadline:
                raise BlockingIOError(errno.EAGAIN, "held", str(self.path))
            time.sleep(0.02)

    def _open(self) -> int:
        """The lock file, created with its folders when missing (again, if a last holder removed them
        in between; a folder that cannot be made at all, as under ``/proc``, fails after a few tries)."""
        for _ in range(_TRIES):
            with contextlib.suppress(FileNotFoundError, FileExistsError):  # a rmdir came between
                return self._create()
        return self._create()

    def _create(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)

    def _current(self, fd: int) -> bool:
        try:
            now = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)

    def record(self, command: str) -> None:
        """Say who holds it, running ``command`` (exclusive holds only)."""
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": command, "since": time.time()}
        data = json.dumps(info).encode()
        os.pwrite(self.fd, data, 0)
        os.ftruncate(self.fd, len(data))  # after the write: ext4 flushes a file truncated to 0 on close

    def release(self) -> None:
        """Let go; the last holder removes the file (and the lock folders it emptied)."""
        if self.fd < 0:
            return
        fd, self.fd = self.fd, -1
        try:
            if _try_lock(fd, fcntl.LOCK_EX) and self._current(fd):
                self.path.unlink()
                locks, state = self.path.parent, self.path.parent.parent
                with contextlib.suppress(OSError):  # a folder's lock folders, kept while the state holds more
                    if Path(state.name, locks.name) == Path(LOCKS) and os.listdir(state) == [locks.name]:
                        locks.rmdir()
                        state.rmdir()
        finally:
            os.close(fd)


def _try_lock(fd: int, mode: int) -> bool:
    """``flock`` in ``mode`` without waiting; False when another holder is in the way."""
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def holder(lock_path: str | os.PathLike) -> str:
    """Who holds the lock at ``lock_path``: ``pid P on host H, paraamr COMMAND``."""
    try:
        info = json.loads(Path(lock_path).read_text(encoding="utf-8"))
        return f"pid {info['pid']} on host {info['host']}, paraamr {info['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that left no record"


class Lock(contextlib.AbstractContextManager):
    """A writer's lock (see :func:`writer_lock`)."""

    def __init__(self, shared: _Flock, own: _Flock):
        self._shared, self._own = shared, own
        _SHARED.setdefault(os.path.realpath(shared.path), []).append(shared)
        _HELD.add(os.path.realpath(own.path))

    def release(self) -> None:
        """Let the lock go (a second call does nothing)."""
        if self._own.fd >= 0:
            _HELD.discard(os.path.realpath(self._own.path))
            self._own.release()
            holds = _SHARED.get(os.path.realpath(self._shared.path), [])
            with contextlib.suppress(ValueError):
                holds.remove(self._shared)
            self._shared.release()

    def __exit__(self, *_) -> None:
        self.release()


class FolderLock(contextlib.AbstractContextManager):
    """The folder's own lock (see :func:`folder_lock`), or a file's (:func:`file_lock`)."""

    def __init__(self, hold: _Flock, suspended: list[_Flock] = ()):
        self._hold, self._suspended = hold, list(suspended)

    def release(self) -> None:
        """Let the lock go; this process's writers take their shared holds back."""
        if self._hold.fd >= 0:
            self._hold.release()
            _resume(self._suspended)

    def __exit__(self, *_) -> None:
        self.release()


def _resume(suspended: list[_Flock]) -> None:
    """Take back the shared holds of this process's writers that an owner let go."""
    for shared in suspended:
        try:
            shared.acquire(SETTLE_SECONDS)
        except BlockingIOError:  # another owner came between: this process's writers must stop
            folder = shared.path.parent.parent.parent
            raise FolderLocked(f"{folder}: taken over by {holder(shared.path)}") from None


def writer_lock(folder: str | os.PathLike, writer: str, *, command: str = "generate") -> Lock:
    """Take the lock of ``writer`` (e.g. :func:`paraamr.layout.writer_id`) in ``folder``; refused
    when another process holds the same writer's lock, or an owner the folder's own lock."""
    locks = Path(folder) / LOCKS
    try:
        shared = _Flock(locks / _FOLDER, fcntl.LOCK_SH, SETTLE_SECONDS)
    except BlockingIOError:
        raise FolderLocked(f"{folder}: locked by {holder(locks / _FOLDER)}") from None
    own_path = locks / f"writer-{writer}.lock"
    try:
        own = _Flock(own_path, fcntl.LOCK_EX, 0)
    except BlockingIOError:
        shared.release()
        raise FolderLocked(f"{folder}: writer {writer} is running already ({holder(own_path)})") from None
    own.record(command)
    return Lock(shared, own)


def busy_writers(folder: str | os.PathLike, *, skip_own: bool = True) -> list[tuple[str, str]]:
    """``(writer, holder)`` of each writer lock of ``folder`` held now (by another process, unless
    ``skip_own`` is off), in writer order; lock files that nobody holds are removed."""
    busy = []
    for path in sorted((Path(folder) / LOCKS).glob("writer-*.lock")):
        if skip_own and os.path.realpath(path) in _HELD:
            continue
        try:
            _Flock(path, fcntl.LOCK_EX, 0).release()
        except BlockingIOError:
            busy.append((path.name[len("writer-") : -len(".lock")], holder(path)))
    return busy


def folder_lock(folder: str | os.PathLike, *, command: str, wait: float = 0.0) -> FolderLock:
    """Take ``folder``'s own lock, waiting up to ``wait`` seconds; refused while another owner holds
    it or any writer (but this process's own) holds its lock."""
    path = Path(folder) / LOCKS / _FOLDER
    suspended = list(_SHARED.get(os.path.realpath(path), []))
    for shared in suspended:
        shared.release()
    try:
        hold = _Flock(path, fcntl.LOCK_EX, max(wait, SETTLE_SECONDS))
    except BlockingIOError:
        _resume(suspended)
        busy = busy_writers(folder)
        if busy:
            raise FolderLocked(f"{folder}: being written (writer {busy[0][0]}) by {busy[0][1]}") from None
        raise FolderLocked(f"{folder}: locked by {holder(path)}") from None
    lock = FolderLock(hold, suspended)
    try:
        hold.record(command)  # (a full disk: the lock goes, not left behind)
        busy_writers(folder)  # no writer holds a lock now: the files killed writers left are removed
    except BaseException:
        lock.release()
        raise
    return lock


def file_lock(path: str | os.PathLike, *, command: str, wait: float = float("inf")) -> FolderLock:
    """An exclusive lock on the file ``path`` outside any dataset folder, waiting up to ``wait``
    seconds.

    >>> import tempfile
    >>> lock_path = Path(tempfile.mkdtemp()) / "models" / ".tiny.lock"
    >>> with file_lock(lock_path, command="models download"):
    ...     holder(lock_path).endswith("paraamr models download")
    True
    >>> lock_path.exists()
    False
    """
    path = Path(path)
    try:
        hold = _Flock(path, fcntl.LOCK_EX, wait)
    except BlockingIOError:
        raise FolderLocked(f"{path}: locked by {holder(path)}") from None
    try:
        hold.record(command)
    except BaseException:
        hold.release()
        raise
    return FolderLock(hold)
