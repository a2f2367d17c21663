"""Errors of the package, :func:`about` to name a file in any error, :func:`missing_local` to name
a local path that is not there and :func:`check_utf8` the place where a file stops being UTF-8.
:mod:`paraamr.report` turns each into one line and the exit status :attr:`ParaAMRError.exit_status`.

>>> err = InputError("data.jsonl: line 3: no 'text' field")
>>> str(err), err.exit_status, UsageError("x").exit_status
("data.jsonl: line 3: no 'text' field", 1, 2)
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "DISK_ERRNOS",
    "PACKED",
    "AMRError",
    "ArchiveRefused",
    "FolderLocked",
    "HubError",
    "InputError",
    "ModelNotFoundError",
    "ParaAMRError",
    "UsageError",
    "about",
    "broken_link",
    "check_input_file",
    "check_splits",
    "check_utf8",
    "decode_problem",
    "missing_local",
    "not_a_file",
    "refuse_packed",
    "refuse_pipes",
]


#: The errors of a write that the disk refused: full, over a quota or a file size limit, read-only
#: (about where a command writes; not EIO, which a read raises too).
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EROFS, getattr(errno, "EDQUOT", errno.ENOSPC)})


class ParaAMRError(Exception):
    """Base class of the package's errors; ``str(err)`` is the whole one-line message."""

    exit_status = 1


class AMRError(ParaAMRError, ValueError):
    """A graph that is not valid PENMAN AMR, or an impossible operation on it."""


class ModelNotFoundError(ParaAMRError, FileNotFoundError):
    """A model that is not on disk and cannot be fetched; the message says what to fetch and how."""


class InputError(ParaAMRError, ValueError):
    """Input data that cannot be read; the message names the file and the place."""


class UsageError(ParaAMRError, ValueError):
    """Options that do not go together or out of range (exit status 2, like argparse's errors)."""

    exit_status = 2


class FolderLocked(ParaAMRError):
    """A folder another process is writing or owns (the message names its pid, host and command)."""


class ArchiveRefused(ParaAMRError):
    """An archive with a member that could write outside its folder (or is no plain file/folder)."""


class HubError(ParaAMRError):
    """An upload the Hub refused or that failed on the way; the message names the repo, never the token."""


@contextlib.contextmanager
def about(path: Any) -> Iterator[None]:
    """Name ``path`` in the message of any exception raised inside (unless it already names it).

    For code that calls libraries whose errors do not say which file they were reading:

    >>> import json
    >>> from paraamr.report import describe
    >>> try:
    ...     with about("rows.json"):
    ...         json.loads("{")
    ... except ValueError as err:
    ...     describe(err)[0]
    'rows.json: invalid JSON at line 1, column 2: Expecting property name enclosed in double quotes'
    """
    try:
        yield
    except Exception as err:
        if getattr(err, "_paraamr_about", None) is None:
            with contextlib.suppress(AttributeError, TypeError):
                err._paraamr_about = str(path)  # type: ignore[attr-defined]
        raise


#: Suffixes of data files: a dataset spec ending so is a local path, not a Hub id.
_FILE_SUFFIXES = (".txt", ".json", ".jsonl", ".csv", ".tsv", ".parquet", ".zip", ".gz", ".amr")


def broken_link(path: str | os.PathLike) -> str | None:
    """Why ``path`` cannot be used when it is a symbolic link to nothing; None otherwise.

    >>> import tempfile
    >>> link = Path(tempfile.mkdtemp()) / "out"
    >>> link.symlink_to("/no/such/folder")
    >>> broken_link(link)
    'a symbolic link to /no/such/folder, which does not exist'
    >>> broken_link(link.parent) is None
    True
    >>> loop = link.parent / "loop"
    >>> loop.symlink_to("loop")
    >>> broken_link(loop)
    'a symbolic link to loop, which cannot be followed (a loop, or a link to nothing)'
    """
    if not os.path.islink(path) or os.path.exists(path):
        return None
    target = os.readlink(path)
    if os.path.lexists(os.path.join(os.path.dirname(path), target)):  # itself, or a link to nothing
        return f"a symbolic link to {target}, which cannot be followed (a loop, or a link to nothing)"
    return f"a symbolic link to {target}, which does not exist"


def not_a_file(path: str | Path, way_out: str = "save it to a file first") -> InputError:
    """The error for an input that exists but is neither a file nor a folder: a pipe (``<(...)``,
    a FIFO) or a device, which a command that reads its input more than once cannot take (and
    opening a FIFO nobody writes would wait forever).

    >>> str(not_a_file("/dev/fd/63"))
    '/dev/fd/63: a pipe or a device, not a file: save it to a file first'
    """
    return InputError(f"{path}: a pipe or a device, not a file: {way_out}")


def refuse_pipes(*paths: str | Path, way_out: str = "save it to a file first") -> None:
    """Refuse an input that is neither a file nor a folder (:func:`not_a_file`): a pipe, read more
    than once or waiting forever for a writer, or a device."""
    for path in paths:
        if Path(path).exists() and not (Path(path).is_file() or Path(path).is_dir()):
            raise not_a_file(path, way_out)


#: Packed files, and the command that unpacks each to standard output.
PACKED = {".gz": "zcat", ".bz2": "bzcat", ".xz": "xzcat", ".zst": "zstdcat", ".zip": "unzip -p"}


def refuse_packed(
    path: str | os.PathLike, problem: str, stream: str = "", unpacked: tuple[str, ...] = ()
) -> None:
    """Raise the one-line error of a ``path`` named as a packed file (a suffix of :data:`PACKED` not
    in ``unpacked``): ``problem``, and how to unpack it, or stream it to the command ``stream``.

    >>> refuse_packed("rel.jsonl.gz", "only gzip and zip are unpacked", unpacked=(".gz", ".zip"))
    >>> refuse_packed("rel.jsonl.XZ", "only gzip and zip are unpacked", unpacked=(".gz", ".zip"))
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: rel.jsonl.XZ: a .xz archive: only gzip and zip are unpacked; unpack it: \
xzcat rel.jsonl.XZ > rel.jsonl
    """
    suffix = Path(path).suffix.lower()
    if suffix not in PACKED or suffix in unpacked:
        return
    command = f"{PACKED[suffix]} {path}"
    way = f"stream it: {command} | {stream}" if stream else f"{command} > {Path(path).with_suffix('')}"
    raise InputError(f"{path}: a {suffix} archive: {problem}; unpack it{', or' if stream else ':'} {way}")


def check_input_file(path: str | Path, way_out: str = "save it to a file first") -> None:
    """Raise the one-line error of an input ``path`` that is not a readable file: a folder, a pipe
    or a device (:func:`not_a_file`, with ``way_out``), nothing, or a file this user cannot read.

    >>> check_input_file("/no/such.txt")
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: /no/such.txt: no such file
    """
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{path}: is a folder, not a file")
    refuse_pipes(path, way_out=way_out)
    if not p.is_file():
        raise InputError(f"{path}: no such file")
    if not os.access(p, os.R_OK):
        raise InputError(f"{path}: not readable")


def missing_local(spec: str) -> str | None:
    """The one-line problem of a dataset ``spec`` that looks like a local path (``./x``, ``/x``,
    ``~/x``, ``a/b/c``, ``x.jsonl``, or ``a/b`` where the folder ``a`` is here) but is not there;
    None when it is there or looks like a Hub id (``ORG/NAME``), which only the Hub can answer.

    >>> missing_local("./no-such-run"), missing_local("org/name")
    ('./no-such-run: no such file or folder here (a Hub dataset id is ORG/NAME)', None)
    """
    path = Path(spec).expanduser()
    if path.exists():
        return None
    parts = spec.replace("\\", "/").split("/")
    local = (
        spec.startswith(("/", ".", "~"))
        or len(parts) > 2
        or "\\" in spec
        or path.suffix.lower() in _FILE_SUFFIXES
        or (len(parts) == 2 and Path(parts[0]).is_dir())
    )
    if not local:
        return None
    near = path.parent if str(path.parent) not in ("", ".") else Path(".")
    hint = ""
    if near.is_dir() and near != Path("."):
        names = sorted(p.name for p in near.iterdir() if not p.name.startswith("."))[:5]
        hint = f"; {near}/ holds {', '.join(names)}" if names else f"; {near}/ is empty"
    return f"{spec}: no such file or folder here{hint} (a Hub dataset id is ORG/NAME)"


def check_splits(spec: str, wanted: Sequence[str] | None, found: Sequence[str]) -> None:
    """InputError naming each split of ``wanted`` that is not among ``found`` in the dataset ``spec``.

    >>> check_splits("d", ["dev"], ["train", "test"])
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: d: no split dev (splits: train, test)
    """
    missing = [s for s in wanted or () if s not in found]
    if missing:
        raise InputError(f"{spec}: no split {', '.join(missing)} (splits: {', '.join(found) or 'none'})")


def check_utf8(path: str | os.PathLike, chunk: int = 1 << 20) -> None:
    """Raise :class:`InputError` naming the line and byte offset of the first invalid UTF-8 in
    ``path`` (read in chunks).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "rows.jsonl"
    >>> _ = path.write_bytes(b'{"text": "ok"}\\n{"text": "b\\xffd"}\\n')
    >>> check_utf8(path)
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: ...: not valid UTF-8 at line 2 (byte 0xff at offset 26)
    """
    import codecs

    path = Path(path)
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = lines = 0
    with path.open("rb") as stream:
        while True:
            data = stream.read(chunk)
            pending = len(decoder.getstate()[0])  # bytes of a character begun in the last chunk
            try:
                decoder.decode(data, final=not data)
            except UnicodeDecodeError as err:
                at = err.start - pending  # in ``data``
                line = lines + data.count(b"\n", 0, max(at, 0)) + 1
                bad = err.object[err.start : err.start + 1].hex()
                raise InputError(
                    f"{path}: not valid UTF-8 at line {line} (byte 0x{bad} at offset {offset + at})"
                ) from None
            if not data:
                return
            offset += len(data)
            lines += data.count(b"\n")


def decode_problem(err: Exception) -> str:
    """What penman's ``DecodeError`` found wrong, and where, in one line (its own text starts with
    the graph's line).

    >>> import penman
    >>> try:
    ...     penman.decode("(a / b :ARG0 (c / d)")
    ... except penman.DecodeError as err:
    ...     decode_problem(err)
    'Unexpected end of input (line 1, column 20)'
    """
    return f"{err.message} (line {err.lineno}, column {err.offset})"  # type: ignore[attr-defined]
