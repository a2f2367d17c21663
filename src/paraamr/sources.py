"""Read ParaAMR records from the released JSON lines or from our Parquet folders, and filter them.

Formats are told by content, not by name: a zip archive (each member read in name order, hidden and
``__MACOSX`` members skipped), gzip, Parquet (``default`` or ``pairs`` schema, see
:mod:`paraamr.records`) or JSON lines in the release format (``{"text": ..., "paraphrases":
[{"para_text": ..., "perplexity": ...}]}``; our extra fields are read when present); a file named
``.bz2``, ``.xz`` or ``.zst`` is refused. Every record comes out in the ``default`` schema: fields a
source lacks are null, ``id`` is :func:`paraamr.records.text_id` of the text.

>>> import io
>>> line = b'{"text": "I know.", "paraphrases": [{"para_text": "Known.", "perplexity": 130.5}]}'
>>> [(key, rec["id"], rec["paraphrases"][0]["focus"]) for key, rec in iter_records(io.BytesIO(line))]
[('line 1', 'dff1f819b8599b45', None)]
>>> list(iter_records(io.BytesIO(b'{"text": 1}'), name="x.json"))
Traceback (most recent call last):
...
paraamr.errors.InputError: x.json, line 1: "text" must be a string, got int
"""

from __future__ import annotations

import gzip
import json
import math
import os
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from paraamr.errors import InputError, refuse_packed, refuse_pipes
from paraamr.filters import Filters
from paraamr.layout import unchanged
from paraamr.options import check_number
from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, PARAPHRASE_TYPE, text_id
from paraamr.texts import LongLine, bounded_lines, printable, text_problem

#: The released subset (177,410 sources) of amazon-science/ParaAMR: a zip of one JSON lines file.
RELEASE_URL = "https://github.com/amazon-science/ParaAMR/raw/main/ParaAMR_small.zip"
RELEASE_HOME = "https://github.com/amazon-science/ParaAMR"
PARAPHRASE_FIELDS = tuple(f.name for f in PARAPHRASE_TYPE)
_RECORD_KEYS = frozenset(DEFAULT_SCHEMA.names)
_PARAPHRASE_KEYS = frozenset(PARAPHRASE_FIELDS)
#: Suffixes of the files taken from a folder that is not a Parquet dataset folder.
RELEASE_SUFFIXES = (".json", ".jsonl", ".zip", ".gz", ".parquet")

GZIP_MAGIC = b"\x1f\x8b"
_OPTIONAL_STRINGS = ("focus", "amr")
#: A paraphrase's numbers, each with the value it must lie above (a perplexity is positive).
_NUMBER_FIELDS = {"perplexity": 0.0, "similarity": None, "quality": None}


@dataclass
class Skipped:
    """What reading passed over: invalid lines (with ``skip_invalid=True``: their count and the first
    messages) and, where ``fields`` is a Counter, the fields of JSON lines that records have no
    place for, with how many lines (or paraphrases) had each (``{"note": 3, "paraphrases[].score":
    12}``; counting them costs about 5% of the reading)."""

    count: int = 0
    messages: list[str] = field(default_factory=list)
    fields: Counter[str] | None = None

    def add(self, message: str) -> None:
        """Count one invalid line (the first ten messages are kept)."""
        self.count += 1
        if len(self.messages) < 10:
            self.messages.append(message)


@dataclass(frozen=True)
class Limits:
    """What reading may unpack: at most ``max_bytes`` in all (``--max-unpacked``), at most
    ``max_ratio`` times the archive's own size once past ``grace`` bytes (``--max-unpack-ratio``),
    and lines of at most ``max_line`` bytes (``--max-line-bytes``; a longer one is read past, never
    held). Release JSON lines pack about 3 times.

    >>> Limits().max_ratio, Limits().max_line
    (100.0, 33554432)
    """

    max_bytes: int = 64 * 10**9
    max_ratio: float = 100.0
    max_line: int = 32 * 2**20
    grace: int = 16 * 2**20

    def check(self, name: str, unpacked: int, packed: int) -> None:
        """Refuse ``name`` once it has unpacked ``unpacked`` bytes from ``packed``, past a limit."""
        if unpacked > self.max_bytes:
            raise InputError(
                f"{name}: unpacks to more than {self.max_bytes:,} bytes (--max-unpacked raises the cap)"
            )
        if unpacked > self.grace and unpacked > self.max_ratio * max(packed, 1):
            raise InputError(
                f"{name}: unpacks to more than {self.max_ratio:g} times its {packed:,} bytes, "
                "a decompression bomb? (--max-unpack-ratio raises the cap)"
            )


class Unpacked:
    """A decompressed stream (gzip) whose lines count what it unpacks, refused past ``limits``."""

    def __init__(self, stream: IO[bytes], name: str, packed: int, limits: Limits) -> None:
        self.stream, self.name, self.packed, self.limits = stream, name, packed, limits
        self.unpacked = 0

    def readline(self, size: int = -1) -> bytes:
        """One line, or its first ``size`` bytes."""
        data = self.stream.readline(size)
        self.unpacked += len(data)
        self.limits.check(self.name, self.unpacked, self.packed)
        return data


def parse_line(obj: Any, *, max_chars: int | None = None, check_texts: bool = True) -> dict[str, Any]:
    """The ``default`` record of one decoded JSON line; ``ValueError`` says what is wrong: a field
    of the wrong type, or (unless ``check_texts`` is off) a text that cannot enter a dataset
    (:func:`paraamr.texts.text_problem`: a lone surrogate, a NUL, over ``max_chars``).

    >>> rec = parse_line({"text": "Hi.", "paraphrases": [{"para_text": "Hello.", "perplexity": 3}]})
    >>> rec["id"], rec["paraphrases"][0]["perplexity"], rec["paraphrases"][0]["quality"]
    ('dfe655b94c4f8ea9', 3.0, None)
    >>> parse_line({"text": "Hi.", "paraphrases": [{"perplexity": 3}]})
    Traceback (most recent call last):
    ...
    ValueError: paraphrase 1: "para_text" must be a string, got NoneType
    >>> parse_line({"text": "Hi.", "paraphrases": [{"para_text": "Hello.", "perplexity": -3}]})
    Traceback (most recent call last):
    ...
    ValueError: paraphrase 1: "perplexity" must be a finite number > 0, got -3
    >>> parse_line({"text": "Hi.", "paraphrases": [{"para_text": "Hello \\ud800"}]})
    Traceback (most recent call last):
    ...
    ValueError: paraphrase 1: "para_text": a lone surrogate (U+D800) at character 7; text cannot hold it
    """
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    limit = max_chars if check_texts else None
    _check_string(obj, "text", "", limit, required=True, content=check_texts)
    paras = obj.get("paraphrases")
    if not isinstance(paras, list):
        raise ValueError(f'"paraphrases" must be a list, got {type(paras).__name__}')
    for name in ("id", "amr"):
        _check_string(obj, name, "", None)
    out = []
    for n, para in enumerate(paras, 1):
        if not isinstance(para, dict):
            raise ValueError(f"paraphrase {n}: expected a JSON object, got {type(para).__name__}")
        _check_string(para, "para_text", f"paraphrase {n}: ", limit, required=True, content=check_texts)
        for name in _OPTIONAL_STRINGS:
            _check_string(para, name, f"paraphrase {n}: ", None)
        row = {name: para.get(name) for name in PARAPHRASE_FIELDS}
        for name, above in _NUMBER_FIELDS.items():  # JSON allows NaN and Infinity; a quantile cannot
            value = row[name]
            low = -math.inf if above is None else above
            if type(value) in (float, int) and low < value < math.inf:  # fast: the release's case
                row[name] = float(value)
            elif value is not None:
                try:
                    row[name] = check_number(value, f'"{name}"', above=above)
                except ValueError as err:
                    raise ValueError(f"paraphrase {n}: {err}") from None
        out.append(row)
    text = obj["text"]
    return {
        "id": obj.get("id") or text_id(printable(text)),
        "text": text,
        "amr": obj.get("amr"),
        "paraphrases": out,
    }


def _check_string(
    obj: dict, name: str, where: str, max_chars: int | None, *, required: bool = False, content: bool = True
) -> None:
    """``obj[name]`` must be a string (or ``None``, unless ``required``) a dataset can hold."""
    value = obj.get(name)
    if value is None and not required:
        return
    if not isinstance(value, str):
        raise ValueError(f'{where}"{name}" must be a string, got {type(value).__name__}')
    problem = text_problem(value, max_chars) if content else None
    if problem is not None:
        raise ValueError(f'{where}"{name}": {problem}')


def _complete(record: dict[str, Any]) -> dict[str, Any]:
    """A Parquet ``default`` row with every field of the schema (missing ones null)."""
    out = {name: record.get(name) for name in DEFAULT_SCHEMA.names}
    if out["id"] is None and out["text"] is not None:
        out["id"] = text_id(out["text"])
    out["paraphrases"] = [{name: p.get(name) for name in PARAPHRASE_FIELDS} for p in out["paraphrases"] or []]
    return out


def _from_pairs(rows: list[dict[str, Any]]) -> dict[str, Any]:
    first = rows[0]
    record = {"id": first.get("id"), "text": first.get("text"), "amr": first.get("amr")}
    record["paraphrases"] = [
        {name: row.get("para_amr" if name == "amr" else name) for name in PARAPHRASE_FIELDS} for row in rows
    ]
    return _complete(record)


def _invalid(message: str, read: _Reading) -> None:
    """Refuse a malformed line, or count it (``skip_invalid``)."""
    if not read.skip_invalid:
        raise InputError(message)
    read.skipped.add(message)


def _iter_jsonl(f: IO[bytes], name: str, read: _Reading) -> Iterator[tuple[str, dict]]:
    for number, raw in enumerate(bounded_lines(f, read.limits.max_line), 1):
        if isinstance(raw, LongLine):
            message = (
                f"{name}, line {number}: longer than {read.limits.max_line} bytes "
                f"({raw.size}; --max-line-bytes raises the cap)"
            )
            _invalid(message, read)
            continue
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8-sig" if number == 1 else "utf-8"))
            record = parse_line(obj, max_chars=read.max_chars, check_texts=read.check_texts)
        except UnicodeDecodeError as err:
            message = f"{name}, line {number}: invalid UTF-8 at byte {err.start}"
        except json.JSONDecodeError as err:
            message = f"{name}, line {number}: not JSON ({err.msg.removesuffix(' at')} at column {err.colno})"
            if number == 1:  # plain sentences, say: the input of `paraamr generate`, not a corpus
                message += "; a release file holds one JSON object a line"
        except (ValueError, OverflowError) as err:  # a record's own problem; float(10**400)
            message = f"{name}, line {number}: {err}"
        else:
            if read.skipped.fields is not None:
                _count_fields(obj, read.skipped.fields)
            yield f"line {number}", record
            continue
        _invalid(message, read)


def _count_fields(obj: dict[str, Any], fields: Counter[str]) -> None:
    """Count the keys of a release line that a record has no place for."""
    if not obj.keys() <= _RECORD_KEYS:  # a subset test allocates nothing: the common case
        fields.update(obj.keys() - _RECORD_KEYS)
    for para in obj["paraphrases"]:
        if not para.keys() <= _PARAPHRASE_KEYS:
            fields.update(f"paraphrases[].{k}" for k in para.keys() - _PARAPHRASE_KEYS)


def _iter_parquet(f: IO[bytes], name: str, read: _Reading) -> Iterator[tuple[str, dict]]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(f)
    except Exception as err:  # pyarrow raises ArrowInvalid / OSError for broken files
        raise InputError(f"{name}: not a readable Parquet file ({err})") from err
    names = pf.schema_arrow.names
    if "paraphrases" not in names and "para_text" not in names:
        raise InputError(
            f"{name}: not a ParaAMR Parquet file: expected the columns of the default config "
            f"({', '.join(DEFAULT_SCHEMA.names)}) or of pairs ({', '.join(PAIRS_SCHEMA.names)}), got {names}"
        )
    for key, record in _parquet_records(pf, "paraphrases" not in names, read.batch_size):
        try:
            parse_line(record, max_chars=read.max_chars, check_texts=read.check_texts)  # a JSON line's checks
        except ValueError as err:
            _invalid(f"{name}, {key}: {err}", read)
            continue
        yield key, record


def _parquet_records(pf, pairs: bool, batch_size: int) -> Iterator[tuple[str, dict]]:
    number = 0
    group: list[dict] = []
    for batch in pf.iter_batches(batch_size=batch_size):
        for row in batch.to_pylist():
            number += 1
            if not pairs:
                yield f"row {number}", _complete(row)
            elif group and (row.get("id"), row.get("text")) != (group[0].get("id"), group[0].get("text")):
                # (a source's rows: one id, one text; pairs without ids, each text its own source)
                yield f"row {number - len(group)}", _from_pairs(group)
                group = [row]
            else:
                group.append(row)
    if group:
        yield f"row {number - len(group) + 1}", _from_pairs(group)


@dataclass
class _Reading:
    """The options of one call of :func:`iter_records`."""

    skip_invalid: bool
    skipped: Skipped
    max_chars: int | None
    limits: Limits
    batch_size: int
    check_texts: bool = True


def iter_records(
    source: str | os.PathLike | IO[bytes],
    *,
    name: str | None = None,
    opener: Callable[..., IO[bytes]] = open,
    skip_invalid: bool = False,
    skipped: Skipped | None = None,
    batch_size: int = 1024,
    max_chars: int | None = None,
    limits: Limits | None = None,
    check_texts: bool = True,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(key, record)`` for each source sentence of a file, in file order.

    ``source`` is a path or URL (opened with ``opener(source, "rb")``) or a binary file object; the
    key names the place (``"line 3"``, ``"row 7"``, ``"member.json, line 3"``). A malformed line
    raises :class:`~paraamr.errors.InputError` naming ``name`` (default: the path) and the line;
    with ``skip_invalid=True`` it is counted in ``skipped`` instead. So is a line whose ``text`` or
    a ``para_text`` is longer than ``max_chars`` characters or holds a lone surrogate or a NUL
    (unless ``check_texts`` is off), and a line longer than ``limits.max_line`` bytes.
    A ``pairs`` Parquet file is regrouped into ``default`` records by runs of equal ``id``.
    Archives are opened one level deep and unpacked within ``limits`` (:class:`Limits`).
    """
    skipped = skipped if skipped is not None else Skipped()
    read = _Reading(skip_invalid, skipped, max_chars, limits or Limits(), batch_size, check_texts)
    if isinstance(source, (str, os.PathLike)):
        name = name or os.fspath(source)
        with opener(os.fspath(source), "rb") as f:
            yield from _iter_source(f, name, read)
        return
    yield from _iter_source(source, name or getattr(source, "name", "<input>"), read)


def _iter_source(source: IO[bytes], name: str, read: _Reading) -> Iterator[tuple[str, dict]]:
    head = source.read(4)
    try:
        size = source.seek(0, os.SEEK_END)
        source.seek(0)
    except OSError as err:  # a /proc or /sys file, say
        raise InputError(f"{name}: cannot seek in it ({err.strerror}); give a regular file") from None
    if head.startswith(b"PK\x03\x04"):
        yield from _iter_zip(source, name, size, read)
    elif head.startswith(GZIP_MAGIC):
        with gzip.open(source, "rb") as f:
            yield from _iter_jsonl(Unpacked(f, name, size, read.limits), name, read)
    elif head == b"PAR1":
        yield from _iter_parquet(source, name, read)
    else:  # a name of another packed file is refused: it would be read as broken JSON lines
        refuse_packed(name, "only gzip and zip are unpacked", unpacked=(".gz", ".zip"))
        yield from _iter_jsonl(source, name, read)


def _iter_zip(source: IO[bytes], name: str, size: int, read: _Reading) -> Iterator[tuple[str, dict]]:
    """The records of a zip archive's members (see the module docstring); an archive inside is
    refused, never opened."""
    with zipfile.ZipFile(source) as archive:
        members = sorted(
            (m for m in archive.infolist() if not m.is_dir() and not _hidden(m.filename)),
            key=lambda m: m.filename,
        )
        unpacked = 0
        for member in members:
            where = f"{name}:{member.filename}"
            unpacked += member.file_size  # zipfile never unpacks more than a member declares
            read.limits.check(name, unpacked, size)  # so a bomb is refused before it is opened
            with archive.open(member) as f:
                head = f.read(4)
            if head.startswith((b"PK\x03\x04", GZIP_MAGIC)):
                raise InputError(
                    f"{where}: an archive inside an archive (only one level is opened: "
                    "the release is a zip of JSON lines)"
                )
            with archive.open(member) as f:
                records = _iter_parquet(f, where, read) if head == b"PAR1" else _iter_jsonl(f, where, read)
                for key, record in records:
                    yield f"{member.filename}, {key}", record


def _hidden(filename: str) -> bool:
    return any(part.startswith((".", "__")) for part in filename.split("/"))


def select(
    record: dict[str, Any],
    *,
    max_perplexity: float | None = None,
    min_paraphrases: int = 0,
    max_paraphrases: int | None = None,
    order: str = "given",
    min_similarity: float | None = None,
) -> dict[str, Any] | None:
    """The record with the paraphrases a task keeps, or ``None`` when too few are left: the rules
    of :class:`paraamr.filters.Filters`, for one record.

    >>> rec = {"id": "a", "text": "t", "amr": None, "paraphrases": [
    ...     {"para_text": "x", "perplexity": 125.0}, {"para_text": "y", "perplexity": 96.6},
    ...     {"para_text": "z", "perplexity": 91.9}]}
    >>> [p["para_text"] for p in select(rec, max_perplexity=120)["paraphrases"]]
    ['y', 'z']
    >>> [p["para_text"] for p in select(rec, max_paraphrases=2, order="perplexity")["paraphrases"]]
    ['z', 'y']
    >>> select(rec, max_perplexity=95, min_paraphrases=2) is None
    True
    """
    rules = Filters(max_perplexity, min_similarity, min_paraphrases, max_paraphrases, order)
    if not rules.active:
        return {**record}
    kept = next(rules.iter_records([(None, record)]), None)
    return None if kept is None else kept[1]


def split_files(path: str | os.PathLike) -> dict[str, list[str]]:
    """The files of each split under a local ``path``.

    A file is split ``train``; a dataset folder, the splits of its ``default`` shards (none without
    records; ``pairs`` shards only, or a split not one whole cut, refused); another folder, all its
    :data:`RELEASE_SUFFIXES` files (recursively, hidden ones skipped) as ``train``.
    """
    from paraamr import layout

    root = Path(path)
    if root.is_file():
        return {"train": [str(root)]}
    refuse_pipes(root)
    if not root.is_dir():
        raise InputError(f"{root}: no such file or folder")
    shards = layout.list_shards(root)
    layout.check_shards(shards)
    if shards.get("pairs") and not shards.get("default"):  # (it read as no records, without a word)
        raise InputError(f"{root}: pairs shards but no default shards, which hold the records")
    if shards or (root / layout.DATA).is_dir() or (root / layout.STATE_DIR).is_dir():
        return {split: [str(p) for p in paths] for split, paths in shards.get("default", {}).items()}
    if root.name == layout.DATA and layout.list_shards(root.parent):  # its pairs shards: the records again
        raise InputError(f"{root}: the data folder of the dataset folder {root.parent}; give {root.parent}")
    files = sorted(
        str(p)
        for p in root.rglob("*")
        if p.is_file()
        and p.name.lower().endswith(RELEASE_SUFFIXES)
        and not _hidden(p.relative_to(root).as_posix())
    )
    if not files:
        raise InputError(
            f"{root}: no data files (data/default/*.parquet, or {', '.join(RELEASE_SUFFIXES)} files)"
        )
    if inside := layout.dataset_inside(root, files):  # its default and pairs shards: each record twice
        raise InputError(f"{root}: holds the dataset folder {inside}; give that folder, or move it out")
    if twice := _unpacked_beside(files):
        raise InputError(
            f"{root}: holds {twice[0]} and {twice[1]}, which it unpacks to: the same records twice; "
            "give one of them, or move the other out of the folder"
        )
    return {"train": files}


def _unpacked_beside(files: list[str]) -> tuple[str, str] | None:
    """An archive among ``files`` (.zip, .gz) and a file it unpacks to beside it, also among them
    (a release zip unzipped in its folder), or None."""
    present = set(files)
    for name in files:
        if name.lower().endswith(".gz") and name[:-3] in present:
            return name, name[:-3]
        if name.lower().endswith(".zip"):
            try:
                with zipfile.ZipFile(name) as archive:
                    members = archive.namelist()
            except (OSError, zipfile.BadZipFile):
                continue  # read (and refused) with the others
            unpacked = next((f for m in members if (f := str(Path(name).parent / m)) in present), None)
            if unpacked:
                return name, unpacked
    return None


def read_path(
    path: str | os.PathLike,
    *,
    skip_invalid: bool = False,
    skipped: Skipped | None = None,
    max_chars: int | None = None,
    limits: Limits | None = None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(split, record)`` for every record under a local file or folder (:func:`split_files`; a
    dataset folder :func:`~paraamr.layout.unchanged` while it is read)."""
    with unchanged(path):
        for split, files in split_files(path).items():
            for file in files:
                for _key, record in iter_records(
                    file, skip_invalid=skip_invalid, skipped=skipped, max_chars=max_chars, limits=limits
                ):
                    yield split, record
