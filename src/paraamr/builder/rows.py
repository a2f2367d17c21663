"""Input rows shared by the readers and the pipeline: ids, byte decoding, AMR metadata, and the
cut of rows over tasks and splits by id. Bad input never raises: it becomes an input failure row.

>>> row = decode_bytes(b"I know.")
>>> row.id, row.text, row.failure
('dff1f819b8599b45', 'I know.', None)
>>> bad = decode_bytes(b"caf\\xe9")
>>> bad.text, bad.raw_b64, str(bad.failure)
('caf\\ufffd', 'Y2Fm6Q==', 'input: invalid UTF-8 at byte 3')
>>> str(value_row("a\\ud800b", "text", "in.jsonl:2", b'{"text": "a\\\\ud800b"}').failure)
'input: a lone surrogate (U+D800) at character 2; text cannot hold it'
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from paraamr.amr.reading import text_after_graph
from paraamr.failures import Failure
from paraamr.records import text_id
from paraamr.texts import MAX_LINE_BYTES, LongLine, printable, text_problem

__all__ = [
    "InputRow",
    "amr_row",
    "decode_bytes",
    "graph_id",
    "long_line_row",
    "row_task",
    "shown_where",
    "split_of",
    "text_row",
    "value_row",
]

_META = re.compile(r"^#\s*::(\S+)\s?(.*)$")


@dataclass
class InputRow:
    """One input item: its ``id``, ``text``, the PENMAN ``amr`` for AMR input, ``raw_b64`` when the
    bytes were not UTF-8, ``failure`` when it cannot be processed, ``where`` for error messages."""

    id: str
    text: str
    amr: str | None = None
    raw_b64: str | None = None
    failure: Failure | None = None
    where: str = ""


def _bytes_id(raw: bytes) -> str:
    return hashlib.sha1(raw).hexdigest()[:16]


def _json(value: Any) -> str:
    """``value`` as JSON; what JSON has no type for (bytes, dates, decimals of a Parquet column) by
    its ``repr``."""
    return json.dumps(value, ensure_ascii=False, default=repr)


def decode_bytes(raw: bytes, *, where: str = "") -> InputRow:
    """An :class:`InputRow` for one line of bytes (line end stripped); id = sha1 of the bytes, which is
    ``text_id(text)`` whenever the bytes are valid UTF-8."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return InputRow(
            _bytes_id(raw),
            raw.decode("utf-8", errors="replace"),
            raw_b64=base64.b64encode(raw).decode("ascii"),
            failure=Failure("input", f"invalid UTF-8 at byte {err.start}"),
            where=where,
        )
    problem = text_problem(text)
    return InputRow(_bytes_id(raw), text, failure=problem and Failure("input", problem), where=where)


def long_line_row(line: LongLine, *, where: str) -> InputRow:
    """The failure row of a line over :data:`MAX_LINE_BYTES` (or the reader's cap)."""
    text = printable(line.head.decode("utf-8", errors="replace")) + "…"
    reason = f"a line of {line.size} bytes, over the cap of {MAX_LINE_BYTES} bytes a line"
    return InputRow(line.digest[:16], text, failure=Failure("input", reason), where=where)


def shown_where(where: str) -> str:
    """An input row's ``where`` as a failure row (published with the folder) shows it: an absolute
    path without its folders, which are the machine's, not the data's.

    >>> shown_where("/home/me/in.csv:7"), shown_where("<text 2>"), shown_where("org/ds[train]:row 3")
    ('in.csv:7', '<text 2>', 'org/ds[train]:row 3')
    """
    return re.sub(r"^/(?:[^/]*/)+", "", where)


def value_row(value: Any, column: str, where: str, raw: bytes | None = None) -> InputRow:
    """The :class:`InputRow` of one input value (``column`` of a row whose bytes are ``raw``, by
    default its JSON's): a failure row unless it is a text that can enter a run
    (:func:`paraamr.texts.text_problem`); bytes (a binary Parquet column) are read as UTF-8. The id
    is the sha1 of a text, of ``raw`` for a value that is none.

    >>> value_row(b"Hi.", "text", "in.parquet, row 1").text, value_row(b"\\xff", "text", "").failure.reason
    ('Hi.', 'invalid UTF-8 at byte 0')
    """
    if isinstance(value, bytes):
        return decode_bytes(value, where=where)
    if isinstance(value, str):  # id: sha1 of the text in every format, as decode_bytes gives a line's
        rid = _bytes_id(value.encode("utf-8", errors="surrogatepass"))  # a lone surrogate too
        problem = text_problem(value)
        if problem is None:
            return InputRow(rid, value, where=where)
        return InputRow(rid, printable(value), failure=Failure("input", problem), where=where)
    raw = _json(value).encode("utf-8", errors="surrogatepass") if raw is None else raw
    text = "" if value is None else _json(value)
    kind = "missing" if value is None else f"not a string ({type(value).__name__})"
    return InputRow(_bytes_id(raw), text, failure=Failure("input", f"column {column!r} {kind}"), where=where)


def text_row(number: int, text: Any) -> InputRow:
    """The input row of the ``number``-th item of a stream of source sentences (str, or bytes taken
    as one UTF-8 line), as :meth:`paraamr.builder.pipeline.Generator.generate` takes them.

    >>> text_row(2, b"caf\\xe9").where, text_row(3, None).failure.reason
    ('<text 2>', "column 'text' missing")
    """
    return value_row(text, "text", f"<text {number}>")


def _read_block(block: str) -> tuple[dict[str, str], str]:
    """The ``# ::key value`` metadata of a PENMAN block (the first of a key wins) and its graph."""
    meta: dict[str, str] = {}
    body = []
    for line in block.splitlines():
        match = _META.match(line.strip())
        if match:
            for key_value in re.split(r"\s(?=::)", "::" + match.group(1) + " " + match.group(2)):
                key, _, value = key_value.strip()[2:].partition(" ")
                meta.setdefault(key, value.strip())
        elif not line.lstrip().startswith("#"):
            body.append(line)
    return meta, "\n".join(body).strip()


def graph_id(block: str) -> str:
    """The record id of a PENMAN block: its first ``# ::id``, else sha1 of a ``# ::snt`` that is not
    empty (an empty one is no text: every such graph would share one id), else of the graph string.

    >>> graph_id("# ::id x.1\\n(h / hi)"), graph_id("# ::snt\\n(h / hi)") == text_id("(h / hi)")
    ('x.1', True)
    """
    return _record_id(*_read_block(block))


def _record_id(meta: dict[str, str], graph: str) -> str:
    return meta.get("id") or text_id(meta.get("snt") or graph)


def amr_row(block: Any, *, where: str = "") -> InputRow:
    """An :class:`InputRow` for one PENMAN block: id = :func:`graph_id`; text = ``# ::snt`` (empty
    when absent). Bytes are read as UTF-8; anything but a text is a failure row.

    >>> r = amr_row("# ::id x.1\\n# ::snt Hi.\\n(h / hi)")
    >>> r.id, r.text
    ('x.1', 'Hi.')
    >>> amr_row(None, where="<graph 2>").failure.reason, amr_row(b"(h / hi)").amr
    ("column 'graph' missing", '(h / hi)')
    """
    if not isinstance(block, str):  # from Python: bytes, None, a number
        row = value_row(block, "graph", where)
        if row.failure is not None:
            return row
        block = row.text
    meta, graph = _read_block(block)
    snt = meta.get("snt")
    problem = text_problem(block)
    if problem is not None:  # a graph given as a str from Python (a file's bad bytes are caught before)
        rid = meta.get("id") or _bytes_id(block.encode("utf-8", errors="surrogatepass"))
        return InputRow(printable(rid), printable(snt or ""), failure=Failure("input", problem), where=where)
    rid = _record_id(meta, graph)
    junk = text_after_graph(block, shown_where(where) or "<graph>")
    failure = Failure("input", junk) if junk else None
    return InputRow(rid, snt or "", amr=block, failure=failure, where=where)


def _hash_fraction(key: str, salt: str) -> int:
    return int(hashlib.sha1(f"{salt}:{key}".encode()).hexdigest()[:15], 16)


def row_task(row_id: str) -> int:
    """The task number of the row with id ``row_id``: a hash of the id, so repeats of a source meet in
    one task; shard ``i`` of ``N`` run by ``P`` processes is the cut of ``N * P`` processes.

    >>> from paraamr.tasks import owned
    >>> ks = [row_task(f"{i:016x}") for i in range(200)]  # shard 1 of 4 by 3 processes = 12 processes
    >>> [owned(k, rank=2, processes=3, shard=(1, 4)) for k in ks] == [k % 12 == 1 + 4 * 2 for k in ks]
    True
    """
    return _hash_fraction(row_id, "process")


def shard_of(row_id: str, shards: int) -> int:
    """The shard (0-based, of ``shards``) the row with id ``row_id`` falls to (see :func:`row_task`)."""
    return row_task(row_id) % shards


def split_of(row_id: str, *, validation: float = 0.0, test: float = 0.0, train: str = "train") -> str:
    """The split of a row, deterministic by id: ``test`` for the first ``test`` fraction of the hash
    range, then ``validation``, else ``train`` (or the name given).

    >>> split_of("dff1f819b8599b45")
    'train'
    >>> split_of("dff1f819b8599b45", test=1.0)
    'test'
    """
    u = _hash_fraction(row_id, "split") / 16**15
    if u < test:
        return "test"
    if u < test + validation:
        return "validation"
    return train
