"""Where a command may write: an output path checked before any work, so a run that could never
save its result stops in milliseconds with one line, not at the end of an hour.

>>> check_writable("/proc/version/out")
Traceback (most recent call last):
...
paraamr.errors.InputError: /proc/version/out: cannot be written: /proc/version is a file, not a folder
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from paraamr.atomic import atomic_write
from paraamr.errors import FolderLocked, InputError
from paraamr.layout import CARD, STATE_DIR, is_empty, remove_layout, remove_state

__all__ = ["check_not_input", "check_writable", "check_writable_file", "claim_file"]
__all__ += ["hold", "left_unfinished", "mark_new", "take_folder"]

#: The mark of a command writing a folder that was new or empty (:func:`mark_new`).
WRITING = f"{STATE_DIR}/writing.json"


def check_writable(path: str | os.PathLike) -> None:
    """Refuse ``path`` (a file or folder to create or fill) when the nearest existing folder at or
    above it is a file, read-only (also for root, on a read-only file system) or on a full disk."""
    path = Path(path)
    base = path
    while not base.exists() and base != base.parent:
        base = base.parent
    if not base.is_dir():
        raise InputError(f"{path}: cannot be written: {base} is a file, not a folder")
    if not os.access(base, os.W_OK):
        raise InputError(f"{path}: cannot be written: {base} is read-only")
    disk = os.statvfs(base)
    if disk.f_blocks and not disk.f_bavail:  # a pseudo file system (/proc, /sys) has no blocks at all
        raise InputError(f"{path}: cannot be written: {os.strerror(errno.ENOSPC).lower()} ({base})")


def check_writable_file(path: str | os.PathLike) -> None:
    """:func:`check_writable` for a file written whole and renamed into place: its folder when the
    file (or a link) is already there, which the rename replaces."""
    check_writable(Path(path).parent if os.path.lexists(path) else path)


def check_not_input(output: str | os.PathLike, *inputs: str | os.PathLike, name: str = "") -> None:
    """Refuse an ``output`` file that is one of the ``inputs`` (through a link too): with
    ``--overwrite`` it would replace what the command reads. ``name``: the output's option.

    >>> check_not_input("setup.cfg", "./setup.cfg", name="--output")
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: --output setup.cfg: is the input
    """
    out = Path(output)
    if not out.exists():
        return
    for path in inputs:
        if Path(path).exists() and out.resolve() == Path(path).resolve():
            raise InputError(f"{name + ' ' if name else ''}{output}: is the input")


@contextlib.contextmanager
def claim_file(path: str | os.PathLike, *, overwrite: bool, command: str, name: str = "") -> Iterator[Path]:
    """Hold the output file ``path`` while a command writes it (``.NAME.lock`` beside it): a second
    command writing the same file is refused, ``path`` is checked again under the lock (refused if
    it appeared meanwhile, unless ``overwrite``), and the temporary files a killed writer left
    beside it go; the folders made for it go again when nothing was written. ``name``: the output's
    option, for the messages.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "out.csv"
    >>> with claim_file(out, overwrite=False, command="export"):
    ...     with claim_file(out, overwrite=False, command="export"):
    ...         pass
    Traceback (most recent call last):
    ...
    paraamr.errors.FolderLocked: ...out.csv: being written by pid ... paraamr export
    """
    from paraamr.atomic import hidden_name, new_folders, remove_temps

    shown = f"{name} {os.fspath(path)}" if name else os.fspath(path)  # as the user gave it
    path = Path(path)
    with new_folders(path.parent), hold(hidden_name(path, ".lock"), shown, command=command, named=path):
        if os.path.lexists(path) and not overwrite:  # a link to nowhere is the user's too
            raise InputError(f"{shown}: exists (pass --overwrite to replace it)")
        remove_temps(path)
        yield path


def hold(lock: Path, shown: str, *, command: str, named: Path) -> contextlib.AbstractContextManager:
    """Take the file lock ``lock`` without waiting (an OSError names ``named``); refused in one line
    naming ``shown`` and the holder."""
    from paraamr.atomic import named_errors
    from paraamr.locks import file_lock, holder

    try:
        with named_errors(named):
            return file_lock(lock, command=command, wait=0.0)
    except FolderLocked:
        raise FolderLocked(f"{shown}: being written by {holder(lock)}") from None


def mark_new(folder: str | os.PathLike) -> None:
    """Mark ``folder``, new or empty when the command took it, as being written; the command removes
    the mark with its state once the card is written (:func:`left_unfinished`)."""
    atomic_write(Path(folder) / WRITING, f'{{"pid": {os.getpid()}}}\n')


def left_unfinished(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds what a killed command left of a folder it took new or empty: the mark
    of :func:`mark_new` and no card. No one's data: the command takes it again without
    ``--overwrite``.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> mark_new(d); left_unfinished(d)
    True
    >>> _ = (d / "README.md").write_text("# a card"); left_unfinished(d)
    False
    """
    return (Path(folder) / WRITING).is_file() and not (Path(folder) / CARD).exists()


def take_folder(folder: str | os.PathLike) -> bool:
    """Ready ``folder`` (its lock held) for a run that writes it whole: when it is new or empty, or
    holds only what a killed run left of it (:func:`left_unfinished`), clear it and mark it
    (:func:`mark_new`), so that a kill before the card leaves a folder the next run takes again;
    else remove only the state a killed run left, never mixed into this one. Returns whether the
    folder was taken that first way."""
    fresh = is_empty(folder) or left_unfinished(folder)
    if fresh:
        remove_layout(folder)  # all a killed run left of it
        mark_new(folder)
    else:
        remove_state(folder)
    return fresh
