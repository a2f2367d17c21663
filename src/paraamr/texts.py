"""Text where it enters a command: the checks every text passes once (:func:`text_problem`) and
lines of bytes read in memory flat in their size (:func:`bounded_lines`).

>>> text_problem("a\\ud800b"), printable("a\\ud800b") == "a\\ufffdb"
('a lone surrogate (U+D800) at character 2; text cannot hold it', True)
"""

from __future__ import annotations

import csv
import hashlib
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_LINE_BYTES",
    "LongLine",
    "bounded_lines",
    "csv_rows",
    "printable",
    "refuse_one_string",
    "strip_eol",
    "text_problem",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


def csv_rows(reader: Iterator[Any]) -> Iterator[Any]:
    """The rows of a ``csv`` reader (or ``DictReader``), each read with no field limit (a long text
    fails its row's length check, not the whole file); the module's limit is global: lifted only
    while a row is read.

    >>> import io
    >>> [len(r[0]) for r in csv_rows(csv.reader(io.StringIO("x" * 200_000 + "\\n")))]
    [200000]
    """
    while True:
        limit = csv.field_size_limit(sys.maxsize)  # the limit it had
        try:
            row = next(reader, None)
        finally:
            csv.field_size_limit(limit)
        if row is None:
            return
        yield row


def refuse_one_string(items: Iterable[Any], what: str) -> None:
    """A TypeError when ``items`` (the texts or graphs of one call of the API) is one string, whose
    characters would pass for items.

    >>> refuse_one_string(["The boy.", "A girl."], "sentences")
    >>> refuse_one_string("The boy.", "sentences")
    Traceback (most recent call last):
    ...
    TypeError: sentences is one string; give a list of them (or any iterable)
    """
    if isinstance(items, (str, bytes)):
        raise TypeError(f"{what} is one string; give a list of them (or any iterable)")
    if items is None:
        raise TypeError(f"{what} is None; give a list of them (or any iterable)")


def text_problem(text: str, max_chars: int | None = None, *, visible: bool = False) -> str | None:
    """Why ``text`` cannot enter a run, or None: a lone surrogate (no UTF-8 holds it: JSON input
    can carry one as ``"\\ud800"``), a NUL character, or more than ``max_chars`` characters; with
    ``visible`` (a text to parse and score) also an empty text or one with no visible character.

    >>> text_problem("fine"), text_problem("a\\x00b"), text_problem("abcdef", max_chars=4)
    (None, 'a NUL character at character 2', 'longer than --max-chars 4 (6 characters)')
    >>> text_problem("\\u200b\\u200b"), text_problem("\\u200b\\u200b", visible=True)
    (None, 'no visible character')
    """
    if visible and not text.strip():
        return "empty"
    if not text.isascii():
        match = _SURROGATE.search(text)
        if match:
            return (
                f"a lone surrogate (U+{ord(match.group()):04X}) at character {match.start() + 1}; "
                "text cannot hold it"
            )
    nul = text.find("\x00")
    if nul >= 0:
        return f"a NUL character at character {nul + 1}"
    if max_chars is not None and len(text) > max_chars:
        return f"longer than --max-chars {max_chars} ({len(text)} characters)"
    if visible and not any(unicodedata.category(ch)[0] in "LMNPS" for ch in text):
        return "no visible character"
    return None


def printable(text: str) -> str:
    """``text`` as a failure row can store it: lone surrogates become U+FFFD.

    >>> printable("a\\ud800b")
    'a\ufffdb'
    """
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


#: Lines longer than this many bytes are read past, never held (a failure row, an invalid line).
MAX_LINE_BYTES = 32 * 2**20


@dataclass(frozen=True)
class LongLine:
    """A line over the cap of :func:`bounded_lines`: its ``size`` in bytes, the sha1 ``digest`` of
    its bytes (line end stripped) and its first bytes (``head``)."""

    size: int
    digest: str
    head: bytes


def bounded_lines(stream: Any, max_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes | LongLine]:
    """The lines of a binary stream (line ends kept), in memory flat in the size of a line: a line
    over ``max_bytes`` (line end aside) comes as a :class:`LongLine`, hashed as it streams past.

    >>> import io
    >>> out = list(bounded_lines(io.BytesIO(b"ab\\n" + b"x" * 10 + b"\\r\\nlast"), max_bytes=4))
    >>> out[0], out[1].size, out[1].digest == hashlib.sha1(b"x" * 10).hexdigest(), out[2]
    (b'ab\\n', 10, True, b'last')
    """
    while True:
        line = stream.readline(max_bytes + 2)
        if not line:
            return
        if len(line) <= max_bytes or (line.endswith(b"\n") and len(strip_eol(line)) <= max_bytes):
            yield line
            continue
        digest, size, head = hashlib.sha1(), 0, line[:1024]
        while line:
            body = strip_eol(line)
            if len(body) < len(line) and line.endswith(b"\n"):
                digest.update(body)
                size += len(body)
                break
            # a "\r" at the end of a piece may start the line end: held back until the next piece
            keep = b"\r" if line.endswith(b"\r") else b""
            digest.update(line[: len(line) - len(keep)])
            size += len(line) - len(keep)
            more = stream.readline(1 << 20)
            line = keep + more if more else b""
            if not more and keep:
                digest.update(keep)
                size += len(keep)
        yield LongLine(size, digest.hexdigest(), head)


def strip_eol(line: bytes) -> bytes:
    """``line`` without its line end (``\\n`` or ``\\r\\n``)."""
    return line.removesuffix(b"\n").removesuffix(b"\r")
