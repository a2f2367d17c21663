"""Input readers of the generator: stream :class:`~paraamr.builder.rows.InputRow` objects from text,
JSON lines, JSON, CSV, Parquet, a ``datasets`` dataset or PENMAN AMR files.

>>> [(r.text, r.where) for r in read_lines([b"I know.\\n", b"caf\\xe9\\r\\n"])]
[('I know.', '<input>:1'), ('caf\\ufffd', '<input>:2')]
>>> next(read_lines([b"\\xef\\xbb\\xbfI know."])).text  # a UTF-8 byte order mark is not text
'I know.'
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import functools
import io
import itertools
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from paraamr.builder.rows import InputRow, amr_row, decode_bytes, long_line_row, value_row
from paraamr.errors import InputError, UsageError, check_input_file, missing_local, not_a_file, refuse_packed
from paraamr.failures import Failure
from paraamr.layout import open_parquet
from paraamr.network import load_hub_dataset
from paraamr.texts import LongLine, bounded_lines, csv_rows, strip_eol

#: Input formats by file suffix.
FORMATS = {".txt": "txt", ".jsonl": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
#: What JSON counts as white space (RFC 8259): a line of only these holds no value.
_JSON_SPACE = " \t\r\n"
#: The formats read as a stream of lines, so from standard input too (``--input -``, ``--amr-input -``).
_STREAMED = ("txt", "jsonl", "amr")


def read_lines(lines: Iterable[bytes], *, name: str = "<input>") -> Iterator[InputRow]:
    """One row per line of bytes (``.txt`` input); a binary stream is read by
    :func:`paraamr.texts.bounded_lines`."""
    lines = bounded_lines(lines) if hasattr(lines, "readline") else lines
    for number, line in enumerate(lines, 1):
        if number == 1 and not isinstance(line, LongLine):  # a UTF-8 BOM (Notepad) starts no text
            line = line.removeprefix(codecs.BOM_UTF8)
        where = f"{name}:{number}"
        yield (
            long_line_row(line, where=where)
            if isinstance(line, LongLine)
            else decode_bytes(strip_eol(line), where=where)
        )


def read_jsonl(lines: Iterable[bytes], *, column: str = "text", name: str = "<input>") -> Iterator[InputRow]:
    """One row per JSON line; the text is ``obj[column]`` (a bare JSON string is taken as is).

    >>> [r.text for r in read_jsonl([b'{"text": "Hi."}\\n', b'\\n', b'"Yo."\\n', b' \\n'])]  # blank: no row
    ['Hi.', 'Yo.']
    >>> [r.failure.reason[:12] for r in read_jsonl(["\\u3000\\n".encode()])]  # not JSON's blank: a failure
    ['invalid JSON']
    >>> next(read_jsonl([b'{"sentence": "Hi."}'], name="in.jsonl"))
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: in.jsonl: no column 'text' in the first object (keys: ['sentence'])
    """
    first = True
    for row in read_lines(lines, name=name):
        if row.failure is not None:
            yield row
            continue
        if not row.text.strip(_JSON_SPACE):
            continue  # a blank line holds no JSON value (a file's extra last newline): no row
        try:
            obj = json.loads(row.text)
        except ValueError as err:
            row.failure = Failure("input", f"invalid JSON: {err}")
            yield row
            continue
        if first and isinstance(obj, dict) and column not in obj:
            raise InputError(f"{name}: no column {column!r} in the first object (keys: {sorted(obj)})")
        first = False
        value = obj.get(column) if isinstance(obj, dict) else obj
        yield value_row(value, column, row.where, row.text.encode("utf-8"))  # the line's own bytes


def read_json(path: Path, *, column: str = "text") -> Iterator[InputRow]:
    """A ``.json`` file: an array of objects or strings, or JSON lines (as ``datasets`` reads it)."""
    if not _json_array(path):
        with open(path, "rb") as f:
            yield from read_jsonl(f, column=column, name=str(path))
        return
    try:
        items = json.loads(Path(path).read_bytes().decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as err:
        raise InputError(f"{path}: not a JSON array ({err})") from err
    for number, value in enumerate(items, 1):
        value = value.get(column) if isinstance(value, dict) else value
        yield value_row(value, column, f"{path}:item {number}")


def read_csv(path: Path, *, column: str = "text") -> Iterator[InputRow]:
    """A ``.csv`` file with a header row; the text is the ``column`` field."""
    with open(path, "rb") as raw_file:
        text_file = io.TextIOWrapper(raw_file, encoding="utf-8-sig", errors="surrogateescape", newline="")
        reader = csv.DictReader(text_file)
        _check_column(path, column, reader.fieldnames)
        for number, record in enumerate(csv_rows(reader), 2):
            value = record[column]
            raw = (value or "").encode("utf-8", errors="surrogateescape")
            row = decode_bytes(raw, where=f"{path}:{number}")
            if value is None:
                row.failure = Failure("input", f"column {column!r} missing")
            yield row


def read_parquet(path: Path, *, column: str = "text", batch_size: int = 4096) -> Iterator[InputRow]:
    """A ``.parquet`` file, read in record batches of ``column``."""
    import pyarrow as pa

    f = open_parquet(path)
    _check_column(path, column, f.schema_arrow.names)
    number = 0
    for group in range(f.num_row_groups):  # one at a time: a damaged one is named by its first row
        batches = f.iter_batches(batch_size=batch_size, columns=[column], row_groups=[group])
        while True:
            try:
                batch = next(batches, None)
            except (pa.ArrowException, OSError) as err:  # a page damaged past the footer
                why = " ".join(str(err).split())  # (pyarrow's can run over lines)
                raise InputError(f"{path}: unreadable Parquet data after row {number} ({why})") from err
            if batch is None:
                break
            for value in batch.column(0).to_pylist():
                number += 1
                yield value_row(value, column, f"{path}:row {number}")


def _check_column(path: Path, column: str, names: list[str] | None) -> None:
    """InputError unless the header or schema ``names`` hold ``column`` once.

    >>> _check_column(Path("in.csv"), "text", ["text", "text"])
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: in.csv: column 'text' appears 2 times (columns: ['text', 'text'])
    """
    if names is None or column not in names:
        raise InputError(f"{path}: no column {column!r} (columns: {names})")
    if names.count(column) > 1:  # csv would take the last, Parquet the first: neither is sure
        raise InputError(f"{path}: column {column!r} appears {names.count(column)} times (columns: {names})")


def read_dataset(
    name: str, *, split: str = "train", column: str = "text", config: str | None = None
) -> Iterator[InputRow]:
    """A local or Hub dataset through ``datasets.load_dataset(..., streaming=True)``."""
    problem = missing_local(name)
    if problem:
        raise InputError(f"--dataset {problem}")
    if Path(name).is_file():  # datasets takes a folder or a Hub id here, not a file
        raise InputError(f"--dataset {name}: a file; give it as --input {name}")
    if Path(name).exists() and not Path(name).is_dir():
        raise not_a_file(f"--dataset {name}", "save it to a file and give it as --input")
    ds = load_hub_dataset(name, config, detail=f" (split {split})", split=split, streaming=True)
    items = iter(ds)
    first = next(items, None)  # a streamed CSV or JSON lines file has no column names before a row
    names = ds.column_names if ds.column_names is not None or first is None else list(first)
    if names is not None and column not in names:
        raise InputError(
            f"dataset {name!r} (split {split!r}): no column {column!r} (columns: {names}); "
            "name the text column with --text-column"
        )
    for number, item in enumerate(itertools.chain([] if first is None else [first], items), 1):
        value = item.get(column)
        yield value_row(value, column, f"{name.rstrip('/')}[{split}]:row {number}")


def read_amr(lines: Iterable[bytes], *, name: str = "<input>") -> Iterator[InputRow]:
    """Rows for a file of blank-line separated PENMAN graphs; a block that is not UTF-8 is an input
    failure, as a text line would be.

    >>> [str(r.failure) for r in read_amr([b"# ::snt caf\\xe9", b"(c / cafe)", b"", b"(x / y)"])]
    ['input: invalid UTF-8 at byte 11', 'None']
    """
    from paraamr.amr import read_graphs

    texts = (line.decode("utf-8", errors="surrogateescape") for line in lines)
    first = next(texts, "").removeprefix("\ufeff")  # a UTF-8 byte order mark starts no graph
    for position, block in read_graphs(itertools.chain([first], texts)):
        where = f"{name}:graph {position}"
        try:
            block.encode("utf-8")
        except UnicodeEncodeError:
            raw = block.encode("utf-8", errors="surrogateescape")
            bad = decode_bytes(raw, where=where)
            row = amr_row(bad.text, where=where)
            row.raw_b64, row.failure = bad.raw_b64, bad.failure
            yield row
            continue
        yield amr_row(block, where=where)


def input_format(path: str | Path, fmt: str | None = None) -> str:
    """The format of ``path``: ``fmt`` when given, else from the suffix (``-`` is text lines); a packed
    file is refused (:func:`~paraamr.errors.refuse_packed`) unless ``--input-format`` names a format.

    >>> input_format("in.JSONL"), input_format("-"), input_format("x.dat", "csv")
    ('jsonl', 'txt', 'csv')
    >>> input_format("in.txt.gz")
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: in.txt.gz: a .gz archive: ... zcat in.txt.gz | paraamr generate --input - ...
    >>> input_format("g.xz", "amr")
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: g.xz: a .xz archive: ... xzcat g.xz | paraamr generate --amr-input - ...
    >>> input_format("-", "csv")
    Traceback (most recent call last):
    ...
    paraamr.errors.UsageError: --input - --input-format csv: standard input is read as text or JSON lines ...
    """
    path_s = str(path)
    if path_s == "-" and fmt not in (None, *_STREAMED):  # a file's format: read from the file's path
        raise UsageError(
            f"--input - --input-format {fmt}: standard input is read as text or JSON lines "
            f"(--input-format txt or jsonl); save the {fmt} input to a file and give its path"
        )
    if fmt in (None, "amr"):
        stream = f"paraamr generate --{'amr-' if fmt else ''}input - ..."
        refuse_packed(path_s, "generate reads plain files", stream)
    if fmt is None:
        fmt = "txt" if path_s == "-" else FORMATS.get(Path(path_s).suffix.lower())
    if fmt is None:
        raise InputError(f"{path}: unknown input format (suffixes: {', '.join(FORMATS)}; or --input-format)")
    return fmt


def count_rows(path: str | Path, *, fmt: str | None = None) -> int:
    """How many rows :func:`read_input` yields for ``path``, counted without decoding them.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "in.txt"
    >>> _ = p.write_bytes(b"a\\nb\\nc")
    >>> count_rows(p)
    3
    >>> _ = p.with_suffix(".jsonl").write_bytes(b'"a"\\n\\n"b"\\n \\n')  # a blank line is no row
    >>> count_rows(p.with_suffix(".jsonl"))
    2
    """
    fmt = input_format(path, fmt)
    if fmt == "jsonl" or (fmt == "json" and not _json_array(Path(path))):
        space = _JSON_SPACE.encode()
        with open(path, "rb") as f:  # (a first line of a byte order mark alone is blank too)
            lines = itertools.chain([next(f, b"").removeprefix(codecs.BOM_UTF8)], f)
            return sum(1 for line in lines if line.strip(space))
    if fmt == "txt":
        lines, last = 0, b"\n"
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                lines += block.count(b"\n")
                last = block[-1:]
        return lines + (last != b"\n")
    if fmt == "parquet":
        return open_parquet(path).metadata.num_rows
    if fmt == "csv":
        with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
            return max(sum(1 for record in csv_rows(csv.reader(f)) if record) - 1, 0)  # DictReader: no blank
    if fmt == "json":
        return len(json.loads(Path(path).read_bytes()))
    from paraamr.amr import read_graphs

    with open(path, encoding="utf-8-sig", errors="replace") as f:  # (a header after a byte order mark)
        return sum(1 for _ in read_graphs(f))


def _json_array(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4096).removeprefix(codecs.BOM_UTF8).lstrip().startswith(b"[")


def read_input(path: str | Path, *, column: str = "text", fmt: str | None = None) -> Iterator[InputRow]:
    """Stream rows from ``path`` (``-`` is standard input, read as text lines); the format comes from
    the suffix unless ``fmt`` names it."""
    path_s = str(path)
    fmt = input_format(path_s, fmt)
    if path_s != "-":
        check_input_file(path_s)
    if path_s != "-" and fmt != "parquet":
        with open(path_s, "rb") as f:  # Notepad's "Unicode": every line would be a failure
            if f.read(2) in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
                raise InputError(f"{path}: UTF-16 text (a UTF-16 byte order mark): save it as UTF-8")
    files = {"json": read_json, "csv": read_csv, "parquet": read_parquet}
    streams = {"txt": read_lines, "jsonl": functools.partial(read_jsonl, column=column), "amr": read_amr}
    if fmt in files:
        yield from files[fmt](Path(path_s), column=column)
        return
    if fmt not in streams:
        raise InputError(f"{path}: unknown input format {fmt!r}")
    with contextlib.nullcontext(sys.stdin.buffer) if path_s == "-" else open(path_s, "rb") as f:
        yield from streams[fmt](f, name=path_s)
