"""The one atomic writer every writer of the package uses: files and folders appear whole or not
at all, under the name the user gave, never written through a symbolic link.

>>> import tempfile
>>> p = Path(tempfile.mkdtemp()) / "notes.txt"
>>> atomic_write(p, "whole") == p, p.read_text()
(True, 'whole')
"""

from __future__ import annotations

import contextlib
import glob as _glob
import hashlib
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "atomic_dir",
    "atomic_file",
    "atomic_write",
    "hidden_name",
    "named_errors",
    "new_folders",
    "remove_temps",
    "temp_name",
]


#: Bytes kept for what follows a hidden name's stem (``.lock``, ``.PID-RANDOM.tmp``, ``.ct2-DIGEST``).
_TAIL = 48


def _stem(name: str) -> str:
    """``name``, or where a tail would take it past the file system's 255 bytes, a digest of it
    and its beginning (the same for every tail, so a glob of the stem finds them all)."""
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) <= 255 - 1 - _TAIL:
        return name
    digest = hashlib.sha1(raw).hexdigest()[:16]
    return digest + "~" + raw[: 255 - 1 - _TAIL - 17].decode("utf-8", "ignore")


def hidden_name(path: Path, tail: str = "") -> Path:
    """The hidden name ``.NAME`` + ``tail`` beside ``path`` for a file made for it (a lock, a
    temporary file); a long name is shortened (:func:`_stem`), as the user may give one of 255 bytes.

    >>> hidden_name(Path("out/a.csv"), ".lock").as_posix()
    'out/.a.csv.lock'
    >>> len(hidden_name(Path("b" * 251 + ".csv"), ".lock").name)
    212
    """
    return path.with_name(f".{_stem(path.name)}{tail}")


def temp_name(path: Path, suffix: str = ".tmp") -> Path:
    """A hidden name beside ``path``, unique to this call (two writers never share one)."""
    return hidden_name(path, f".{os.getpid()}-{secrets.token_hex(4)}{suffix}")


@contextlib.contextmanager
def named_errors(path: str | os.PathLike) -> Iterator[None]:
    """An OSError inside names ``path``, the file or folder the user knows of, not the temporary or
    lock file made for it beside it or in it (an error about a folder above it keeps that folder's
    name)."""
    try:
        yield
    except OSError as e:
        ours = (os.path.dirname(os.path.abspath(path)), os.path.abspath(path))
        if e.filename is not None and os.path.dirname(os.path.abspath(os.fsdecode(e.filename))) not in ours:
            raise
        raise type(e)(e.errno, e.strerror, str(path)) from None


@contextlib.contextmanager
def new_folders(path: str | os.PathLike) -> Iterator[None]:
    """Remove again, when the block ends, the folders at and above ``path`` that were missing when it
    began and are still empty: a command that wrote nothing leaves none of the folders it made.

    >>> import tempfile
    >>> top = Path(tempfile.mkdtemp())
    >>> with new_folders(top / "a" / "b"):
    ...     (top / "a" / "b").mkdir(parents=True)
    >>> list(top.iterdir())
    []
    """
    chain = (Path(path), *Path(path).parents)  # deepest first; "a/../b" is b, which may exist
    made = [p for p in chain if not os.path.lexists(p) and not os.path.lexists(os.path.abspath(p))]
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # one not empty (written, another run's): it and those above stay
            for folder in made:
                folder.rmdir()


def remove_temps(path: str | os.PathLike) -> int:
    """Delete the temporary files :func:`atomic_file` left beside ``path``; return how many. Call it
    only where no other process is writing ``path``.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "state.json"
    >>> _ = temp_name(p).write_text("half")
    >>> remove_temps(p), list(p.parent.iterdir())
    (1, [])
    """
    path = Path(path)
    pattern = f".{_glob.escape(_stem(path.name))}.*.tmp"  # one part between: not x.jsonl.gz's for x.jsonl
    exact = re.compile(rf"\.{re.escape(_stem(path.name))}\.[^.]+\.tmp")
    found = path.parent.glob(pattern) if path.parent.is_dir() else []
    stale = [tmp for tmp in found if exact.fullmatch(tmp.name)]
    for tmp in stale:
        if tmp.is_dir() and not tmp.is_symlink():  # an atomic_dir's folder
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
    return len(stale)


def _fsync(path: Path) -> None:
    """Flush ``path`` (a file, or a folder: its renames) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (where the platform can)."""
    with contextlib.suppress(OSError):
        _fsync(directory)


def _umask_modes(folder: Path) -> None:
    """Give what is in ``folder`` the permissions of a new file or folder (transformers writes its
    weights private, which other users of a shared model folder cannot read): ``folder``'s own
    mode, made by ``mkdir``, holds the umask."""
    allowed = folder.stat().st_mode & 0o777
    for path in folder.rglob("*"):
        if not path.is_symlink():
            whole = path.is_dir() or path.stat().st_mode & 0o100  # a folder or an executable
            path.chmod((0o777 if whole else 0o666) & allowed)


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, *, durable: bool = True) -> Iterator[Path]:
    """A file made atomically: yields a temporary path beside ``path`` (unique to the call) to
    write; when the block ends without an error it is flushed to disk and renamed over ``path`` (a
    symbolic link there is replaced, never written through), else removed. Readers see the old file
    or the new one, never a part; a crash leaves at most a hidden temporary file. Creates missing
    parent folders. ``durable=False`` skips the flushes to disk.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "x.txt"
    >>> with atomic_file(p) as tmp:
    ...     _ = tmp.write_text("new")
    ...     p.exists()
    False
    >>> p.read_text()
    'new'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    with named_errors(path):
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield tmp
        if durable:
            _fsync(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        _sync_dir(path.parent)


def atomic_write(
    path: str | os.PathLike, data: str | bytes, *, encoding: str = "utf-8", durable: bool = True
) -> Path:
    """Write ``data`` (text in ``encoding``, or bytes) to ``path`` through :func:`atomic_file`.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "a" / "x.json"
    >>> atomic_write(p, '{"n": 1}').read_text(), [q.name for q in p.parent.iterdir()]
    ('{"n": 1}', ['x.json'])

    An error names ``path``, not the temporary file:

    >>> atomic_write("/proc/x.json", "{}")
    Traceback (most recent call last):
    ...
    FileNotFoundError: [Errno 2] No such file or directory: '/proc/x.json'
    """
    with atomic_file(path, durable=durable) as tmp:
        tmp.write_bytes(data.encode(encoding) if isinstance(data, str) else data)
    return Path(path)


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike, *, replace: bool = False, exist_ok: bool = False) -> Iterator[Path]:
    """A new folder made atomically: yields a temporary folder beside ``path`` (unique to the call)
    to fill; when the block ends without an error it becomes ``path``, else it is removed. Creates
    missing parent folders. ``path`` must not exist, unless ``replace`` (the old folder is swapped
    out and deleted; a crash in between leaves it as a hidden sibling) or ``exist_ok`` (a folder
    another process put there meanwhile wins, ours is dropped).

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "model"
    >>> with atomic_dir(target) as tmp:
    ...     _ = (tmp / "w.bin").write_bytes(b"x")
    >>> [p.name for p in target.iterdir()], [p.name for p in target.parent.iterdir()]
    (['w.bin'], ['model'])
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    with named_errors(path):
        tmp.mkdir()
    try:
        yield tmp
        _umask_modes(tmp)
        if replace and (path.exists() or path.is_symlink()):
            old = temp_name(path, ".old")
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old) if old.is_dir() and not old.is_symlink() else old.unlink()
        elif exist_ok and path.is_dir():
            shutil.rmtree(tmp)
        else:
            os.rename(tmp, path)  # fails on an existing non-empty folder: never merged into
        _sync_dir(path.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
