"""Input readers and shard writers of the generator; no model knowledge.

Readers stream :class:`InputRow` objects from text, JSON lines, JSON, CSV, Parquet, a ``datasets``
dataset or PENMAN AMR files. Bytes that are not valid UTF-8 never raise: the row carries the text
decoded with replacement characters, the raw bytes in ``raw_b64`` and an input failure.

>>> rows = list(read_lines([b"I know.\\n", b"caf\\xe9\\r\\n"]))
>>> rows[0].id, rows[0].text, rows[0].failure
('dff1f819b8599b45', 'I know.', None)
>>> rows[1].text, rows[1].raw_b64, str(rows[1].failure)
('caf\\ufffd', 'Y2Fm6Q==', 'input: invalid UTF-8 at byte 3')
>>> owner(rows[0].id, 2) in (0, 1)
True
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraamr.errors import InputError
from paraamr.failures import Failure
from paraamr.records import text_id

#: Input formats by file suffix.
FORMATS = {".txt": "txt", ".jsonl": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
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


def decode_bytes(raw: bytes, *, where: str = "") -> InputRow:
    """An :class:`InputRow` for one line of bytes (line end already stripped); id = sha1 of the bytes,
    which is ``text_id(text)`` whenever the bytes are valid UTF-8.

    >>> decode_bytes(b"\\xff\\xfeok").failure
    Failure(stage='input', reason='invalid UTF-8 at byte 0')
    """
    try:
        return InputRow(_bytes_id(raw), raw.decode("utf-8"), where=where)
    except UnicodeDecodeError as err:
        return InputRow(
            _bytes_id(raw),
            raw.decode("utf-8", errors="replace"),
            raw_b64=base64.b64encode(raw).decode("ascii"),
            failure=Failure("input", f"invalid UTF-8 at byte {err.start}"),
            where=where,
        )


def _strip_eol(line: bytes) -> bytes:
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    return line


def read_lines(lines: Iterable[bytes], *, name: str = "<input>") -> Iterator[InputRow]:
    """One row per line of bytes (``.txt`` input: one sentence a line)."""
    for number, line in enumerate(lines, 1):
        yield decode_bytes(_strip_eol(line), where=f"{name}:{number}")


def _value_row(value: Any, column: str, where: str, raw: bytes) -> InputRow:
    if isinstance(value, str):
        return InputRow(text_id(value), value, where=where)
    text = "" if value is None else json.dumps(value, ensure_ascii=False)
    kind = "missing" if value is None else f"not a string ({type(value).__name__})"
    return InputRow(_bytes_id(raw), text, failure=Failure("input", f"column {column!r} {kind}"), where=where)


def read_jsonl(lines: Iterable[bytes], *, column: str = "text", name: str = "<input>") -> Iterator[InputRow]:
    """One row per JSON line; the text is ``obj[column]`` (a bare JSON string is taken as is).

    >>> [r.text for r in read_jsonl([b'{"text": "Hi."}\\n', b'"Yo."\\n'])]
    ['Hi.', 'Yo.']
    >>> str(next(read_jsonl([b'{"text": 3}'])).failure)
    "input: column 'text' not a string (int)"
    """
    for number, line in enumerate(lines, 1):
        raw = _strip_eol(line)
        row = decode_bytes(raw, where=f"{name}:{number}")
        if row.failure is not None:
            yield row
            continue
        try:
            obj = json.loads(row.text)
        except ValueError as err:
            row.failure = Failure("input", f"invalid JSON: {err}")
            yield row
            continue
        value = obj.get(column) if isinstance(obj, dict) else obj
        yield _value_row(value, column, row.where, raw)


def read_json(path: Path, *, column: str = "text") -> Iterator[InputRow]:
    """A ``.json`` file: an array of objects or strings, or JSON lines (as ``datasets`` reads it)."""
    with open(path, "rb") as f:
        head = f.read(4096).lstrip()
    if not head.startswith(b"["):
        with open(path, "rb") as f:
            yield from read_jsonl(f, column=column, name=str(path))
        return
    try:
        items = json.loads(Path(path).read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise InputError(f"{path}: not a JSON array ({err})") from err
    for number, value in enumerate(items, 1):
        value = value.get(column) if isinstance(value, dict) else value
        raw = json.dumps(value, ensure_ascii=False).encode("utf-8")
        yield _value_row(value, column, f"{path}:item {number}", raw)


def read_csv(path: Path, *, column: str = "text") -> Iterator[InputRow]:
    """A ``.csv`` file with a header row; the text is the ``column`` field."""
    with open(path, "rb") as raw_file:
        text_file = io.TextIOWrapper(raw_file, encoding="utf-8", errors="surrogateescape", newline="")
        reader = csv.DictReader(text_file)
        if reader.fieldnames is None or column not in reader.fieldnames:
            raise InputError(f"{path}: no column {column!r} (columns: {reader.fieldnames})")
        for number, record in enumerate(reader, 2):
            value = record[column]
            raw = (value or "").encode("utf-8", errors="surrogateescape")
            row = decode_bytes(raw, where=f"{path}:{number}")
            if value is None:
                row.failure = Failure("input", f"column {column!r} missing")
            yield row


def read_parquet(path: Path, *, column: str = "text", batch_size: int = 4096) -> Iterator[InputRow]:
    """A ``.parquet`` file, read in record batches of ``column``."""
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    if column not in f.schema_arrow.names:
        raise InputError(f"{path}: no column {column!r} (columns: {f.schema_arrow.names})")
    number = 0
    for batch in f.iter_batches(batch_size=batch_size, columns=[column]):
        for value in batch.column(0).to_pylist():
            number += 1
            raw = json.dumps(value, ensure_ascii=False).encode("utf-8")
            yield _value_row(value, column, f"{path}:row {number}", raw)


def read_dataset(
    name: str, *, split: str = "train", column: str = "text", config: str | None = None
) -> Iterator[InputRow]:
    """A local or Hub dataset through ``datasets.load_dataset(..., streaming=True)``."""
    import datasets

    try:
        ds = datasets.load_dataset(name, config, split=split, streaming=True)
    except Exception as err:
        raise InputError(f"dataset {name!r} (split {split!r}): cannot be loaded: {err}") from err
    for number, item in enumerate(ds, 1):
        value = item.get(column)
        raw = json.dumps(value, ensure_ascii=False).encode("utf-8")
        yield _value_row(value, column, f"{name}[{split}]:row {number}", raw)


def amr_row(block: str, *, where: str = "") -> InputRow:
    """An :class:`InputRow` for one PENMAN block: id = ``# ::id``, else sha1 of ``# ::snt``, else of
    the graph string; text = ``# ::snt`` (empty when absent).

    >>> r = amr_row("# ::id x.1\\n# ::snt Hi.\\n(h / hi)")
    >>> r.id, r.text
    ('x.1', 'Hi.')
    >>> amr_row("(h / hi)").id == text_id("(h / hi)")
    True
    """
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
    graph = "\n".join(body).strip()
    snt = meta.get("snt")
    rid = meta.get("id") or text_id(snt if snt is not None else graph)
    return InputRow(rid, snt or "", amr=block, where=where)


def read_amr(lines: Iterable[bytes], *, name: str = "<input>") -> Iterator[InputRow]:
    """Rows for a file of blank-line separated PENMAN graphs (via ``amr.read_graphs``)."""
    from paraamr.builder.amr import read_graphs

    texts = (line.decode("utf-8", errors="replace") for line in lines)
    for position, block in read_graphs(texts):
        yield amr_row(block, where=f"{name}:graph {position}")


def _open_binary(path: str | Path):
    return sys.stdin.buffer if str(path) == "-" else open(path, "rb")


def read_input(path: str | Path, *, column: str = "text", fmt: str | None = None) -> Iterator[InputRow]:
    """Stream rows from ``path`` (``-`` is standard input, read as text lines); the format comes from
    the suffix unless ``fmt`` names it."""
    path_s = str(path)
    if fmt is None:
        fmt = "txt" if path_s == "-" else FORMATS.get(Path(path_s).suffix.lower())
    if fmt is None:
        raise InputError(f"{path}: unknown input format (suffixes: {', '.join(FORMATS)}; or --input-format)")
    if path_s != "-" and not Path(path_s).is_file():
        raise InputError(f"{path}: no such file")
    if fmt == "json":
        yield from read_json(Path(path_s), column=column)
    elif fmt == "csv":
        yield from read_csv(Path(path_s), column=column)
    elif fmt == "parquet":
        yield from read_parquet(Path(path_s), column=column)
    else:
        f = _open_binary(path_s)
        try:
            if fmt == "txt":
                yield from read_lines(f, name=path_s)
            elif fmt == "jsonl":
                yield from read_jsonl(f, column=column, name=path_s)
            elif fmt == "amr":
                yield from read_amr(f, name=path_s)
            else:
                raise InputError(f"{path}: unknown input format {fmt!r}")
        finally:
            if f is not sys.stdin.buffer:
                f.close()


def _hash_fraction(key: str, salt: str) -> int:
    return int(hashlib.sha1(f"{salt}:{key}".encode()).hexdigest()[:15], 16)


def owner(row_id: str, num_processes: int) -> int:
    """The process (0-based) that handles the row with id ``row_id``: a hash of the id modulo the
    process count, so repeats of a source always meet in one process.

    >>> owner("dff1f819b8599b45", 1)
    0
    """
    return _hash_fraction(row_id, "process") % num_processes


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


class ShardWriter:
    """Rows of one ``config``/``split`` as Parquet shards ``data/{config}/{split}-{prefix}{n:05d}.parquet``.

    Every shard is written under a temporary name and renamed when complete, so a reader (or a
    resumed run) never sees half a shard. A writer that wrote no rows still leaves one empty shard
    with the schema, so the config loads. ``rows_per_shard=None`` flushes only on :meth:`flush`.
    ``first_shard`` continues the numbering of an earlier session; ``empty_shard=False`` leaves out
    the empty shard (when an earlier session wrote some).

    >>> import tempfile, pyarrow.parquet as pq
    >>> from paraamr.records import PAIRS_SCHEMA
    >>> d = tempfile.mkdtemp()
    >>> with ShardWriter(d, "pairs", "train", PAIRS_SCHEMA, rows_per_shard=2) as w:
    ...     for i in range(3):
    ...         w.write({"id": str(i), "text": "t", "para_text": "p"})
    >>> [p.name for p in w.paths]
    ['train-00000.parquet', 'train-00001.parquet']
    >>> pq.read_table(w.paths[1]).num_rows
    1
    """

    def __init__(
        self,
        folder: str | Path,
        config: str,
        split: str,
        schema,
        *,
        prefix: str = "",
        rows_per_shard: int | None = 10000,
        first_shard: int = 0,
        empty_shard: bool = True,
    ):
        if rows_per_shard is not None and rows_per_shard < 1:
            raise ValueError(f"rows_per_shard must be positive, got {rows_per_shard}")
        self.folder = Path(folder) / "data" / config
        self.split, self.schema, self.prefix = split, schema, prefix
        self.rows_per_shard = rows_per_shard
        self.next_shard = first_shard
        self.empty_shard = empty_shard
        self.paths: list[Path] = []
        self.rows_written = 0
        self._rows: list[dict] = []

    def shard_path(self, n: int) -> Path:
        """The final path of shard number ``n``."""
        return self.folder / f"{self.split}-{self.prefix}{n:05d}.parquet"

    def write(self, row: dict) -> None:
        """Add one row (missing fields are null); flushes a full shard."""
        self._rows.append(row)
        if self.rows_per_shard is not None and len(self._rows) >= self.rows_per_shard:
            self.flush()

    def flush(self) -> Path | None:
        """Write the buffered rows as one shard now (nothing when the buffer is empty)."""
        if not self._rows:
            return None
        return self._write_shard(self._rows)

    def _write_shard(self, rows: list[dict]) -> Path:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self.shard_path(self.next_shard)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        with pq.ParquetWriter(tmp, self.schema) as writer:
            if rows:  # an empty shard has no row group at all (datasets rejects a 0-row one)
                writer.write_table(pa.Table.from_pylist(rows, schema=self.schema))
        os.replace(tmp, path)
        self.next_shard += 1
        self.paths.append(path)
        self.rows_written += len(rows)
        self._rows = []
        return path

    def close(self) -> None:
        """Flush the rest; write the one empty shard when nothing was written at all."""
        self.flush()
        if not self.paths and self.empty_shard:
            self._write_shard([])

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None:
            self.close()


class FailureWriter:
    """Failure rows as JSON lines ``failures/{prefix}{n:05d}.jsonl``, written and renamed like shards."""

    def __init__(self, folder: str | Path, *, prefix: str = "", first_shard: int = 0):
        self.folder = Path(folder) / "failures"
        self.prefix, self.next_shard = prefix, first_shard
        self.rows_written = 0
        self._rows: list[dict] = []

    def shard_path(self, n: int) -> Path:
        """The final path of file number ``n``."""
        return self.folder / f"{self.prefix}{n:05d}.jsonl"

    def write(self, row: dict) -> None:
        """Add one failure row."""
        self._rows.append(row)

    def flush(self) -> Path | None:
        """Write the buffered rows as one file now."""
        if not self._rows:
            return None
        path = self.shard_path(self.next_shard)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for row in self._rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
        self.next_shard += 1
        self.rows_written += len(self._rows)
        self._rows = []
        return path
