"""Read ParaAMR records from the released JSON lines or from our Parquet folders, and filter them.

One reader for :mod:`paraamr.dataset`, :mod:`paraamr.stats` and ``paraamr convert``. Formats are
told by content, not by name: a zip archive (each member read in name order, hidden and
``__MACOSX`` members skipped), gzip, Parquet (``default`` or ``pairs`` schema, see
:mod:`paraamr.records`) or JSON lines in the release format (``{"text": ..., "paraphrases":
[{"para_text": ..., "perplexity": ...}]}``; our extra fields are read when present). Every record
comes out in the ``default`` schema: fields a source lacks are null, ``id`` is
:func:`paraamr.records.text_id` of the text.

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
import os
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from paraamr.errors import InputError
from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, PARAPHRASE_TYPE, text_id

#: The released subset (177,410 sources) of amazon-science/ParaAMR: a zip of one JSON lines file.
RELEASE_URL = "https://github.com/amazon-science/ParaAMR/raw/main/ParaAMR_small.zip"
RELEASE_HOME = "https://github.com/amazon-science/ParaAMR"
#: The paper's BibTeX (ACL Anthology), the one citation of the card, the builder and the README.
CITATION = (
    "@inproceedings{huang-etal-2023-paraamr,\n"
    '  title = "{P}ara{AMR}: A Large-Scale Syntactically Diverse Paraphrase Dataset by {AMR} '
    'Back-Translation",\n'
    '  author = "Huang, Kuan-Hao and Iyer, Varun and Hsu, I-Hung and Kumar, Anoop and Chang, '
    'Kai-Wei and Galstyan, Aram",\n'
    '  booktitle = "Proceedings of the 61st Annual Meeting of the Association for Computational '
    'Linguistics (Volume 1: Long Papers)",\n'
    '  year = "2023",\n'
    '  pages = "8047--8061",\n'
    "}\n"
)

RECORD_FIELDS = tuple(DEFAULT_SCHEMA.names)
PARAPHRASE_FIELDS = tuple(f.name for f in PARAPHRASE_TYPE)
#: Orders of the paraphrases of a source (see :func:`select`).
ORDERS = ("given", "perplexity")
#: Suffixes of the files taken from a folder that is not a Parquet dataset folder.
RELEASE_SUFFIXES = (".json", ".jsonl", ".zip", ".gz", ".parquet")

_OPTIONAL_STRINGS = ("focus", "amr")
_NUMBER_FIELDS = ("perplexity", "similarity", "quality")


@dataclass
class Skipped:
    """Invalid lines passed over with ``skip_invalid=True``: their count and the first messages."""

    count: int = 0
    messages: list[str] = field(default_factory=list)

    def add(self, message: str) -> None:
        """Count one invalid line (the first ten messages are kept)."""
        self.count += 1
        if len(self.messages) < 10:
            self.messages.append(message)


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def parse_line(obj: Any) -> dict[str, Any]:
    """The ``default`` record of one decoded JSON line; ``ValueError`` says what is wrong.

    >>> rec = parse_line({"text": "Hi.", "paraphrases": [{"para_text": "Hello.", "perplexity": 3}]})
    >>> rec["id"], rec["paraphrases"][0]["perplexity"], rec["paraphrases"][0]["quality"]
    ('dfe655b94c4f8ea9', 3.0, None)
    >>> parse_line({"text": "Hi.", "paraphrases": [{"perplexity": 3}]})
    Traceback (most recent call last):
    ...
    ValueError: paraphrase 1: "para_text" must be a string, got NoneType
    """
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    text = obj.get("text")
    if not isinstance(text, str):
        raise ValueError(f'"text" must be a string, got {type(text).__name__}')
    paras = obj.get("paraphrases")
    if not isinstance(paras, list):
        raise ValueError(f'"paraphrases" must be a list, got {type(paras).__name__}')
    for name in ("id", "amr"):
        if obj.get(name) is not None and not isinstance(obj[name], str):
            raise ValueError(f'"{name}" must be a string, got {type(obj[name]).__name__}')
    out = []
    for n, para in enumerate(paras, 1):
        if not isinstance(para, dict):
            raise ValueError(f"paraphrase {n}: expected a JSON object, got {type(para).__name__}")
        if not isinstance(para.get("para_text"), str):
            raise ValueError(
                f'paraphrase {n}: "para_text" must be a string, got {type(para.get("para_text")).__name__}'
            )
        for name in _OPTIONAL_STRINGS:
            if para.get(name) is not None and not isinstance(para[name], str):
                raise ValueError(
                    f'paraphrase {n}: "{name}" must be a string, got {type(para[name]).__name__}'
                )
        for name in _NUMBER_FIELDS:
            if not _number(para.get(name)):
                raise ValueError(
                    f'paraphrase {n}: "{name}" must be a number, got {type(para[name]).__name__}'
                )
        row = {name: para.get(name) for name in PARAPHRASE_FIELDS}
        for name in _NUMBER_FIELDS:
            if row[name] is not None:
                row[name] = float(row[name])
        out.append(row)
    return {"id": obj.get("id") or text_id(text), "text": text, "amr": obj.get("amr"), "paraphrases": out}


def _complete(record: dict[str, Any]) -> dict[str, Any]:
    """A Parquet ``default`` row with every field of the schema (missing ones null)."""
    out = {name: record.get(name) for name in RECORD_FIELDS}
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


def _iter_jsonl(f: IO[bytes], name: str, skip_invalid: bool, skipped: Skipped) -> Iterator[tuple[str, dict]]:
    for number, raw in enumerate(f, 1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            record = parse_line(json.loads(line))
        except UnicodeDecodeError as err:
            message = f"{name}, line {number}: invalid UTF-8 at byte {err.start}"
        except (ValueError, OverflowError) as err:  # JSONDecodeError is a ValueError; float(10**400)
            message = f"{name}, line {number}: {err}"
        else:
            yield f"line {number}", record
            continue
        if not skip_invalid:
            raise InputError(message)
        skipped.add(message)


def _iter_parquet(f: IO[bytes], name: str, batch_size: int) -> Iterator[tuple[str, dict]]:
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(f)
    except Exception as err:  # pyarrow raises ArrowInvalid / OSError for broken files
        raise InputError(f"{name}: not a readable Parquet file ({err})") from err
    names = pf.schema_arrow.names
    if "paraphrases" in names:
        pairs = False
    elif "para_text" in names:
        pairs = True
    else:
        raise InputError(
            f"{name}: not a ParaAMR Parquet file: expected the columns of the default config "
            f"({', '.join(DEFAULT_SCHEMA.names)}) or of pairs ({', '.join(PAIRS_SCHEMA.names)}), got {names}"
        )
    number = 0
    group: list[dict] = []
    for batch in pf.iter_batches(batch_size=batch_size):
        for row in batch.to_pylist():
            number += 1
            if not pairs:
                yield f"row {number}", _complete(row)
            elif group and row.get("id") != group[0].get("id"):
                yield f"row {number - len(group)}", _from_pairs(group)
                group = [row]
            else:
                group.append(row)
    if group:
        yield f"row {number - len(group) + 1}", _from_pairs(group)


def iter_records(
    source: str | os.PathLike | IO[bytes],
    *,
    name: str | None = None,
    opener: Callable[..., IO[bytes]] = open,
    skip_invalid: bool = False,
    skipped: Skipped | None = None,
    batch_size: int = 1024,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(key, record)`` for each source sentence of a file, in file order.

    ``source`` is a path or URL (opened with ``opener(source, "rb")``) or a binary file object; the
    key names the place (``"line 3"``, ``"row 7"``, ``"member.json, line 3"``) and is stable. A
    malformed line raises :class:`~paraamr.errors.InputError` naming ``name`` (default: the path)
    and the line; with ``skip_invalid=True`` it is counted in ``skipped`` instead. A ``pairs``
    Parquet file is regrouped into ``default`` records by runs of equal ``id``.
    """
    skipped = skipped if skipped is not None else Skipped()
    if isinstance(source, (str, os.PathLike)):
        name = name or os.fspath(source)
        with opener(os.fspath(source), "rb") as f:
            yield from iter_records(
                f, name=name, skip_invalid=skip_invalid, skipped=skipped, batch_size=batch_size
            )
        return
    name = name or getattr(source, "name", "<input>")
    head = source.read(4)
    source.seek(0)
    if head.startswith(b"PK\x03\x04"):
        with zipfile.ZipFile(source) as archive:
            members = sorted(
                m.filename
                for m in archive.infolist()
                if not m.is_dir() and not any(part.startswith((".", "__")) for part in m.filename.split("/"))
            )
            for member in members:
                with archive.open(member) as f:
                    for key, record in iter_records(
                        f,
                        name=f"{name}:{member}",
                        skip_invalid=skip_invalid,
                        skipped=skipped,
                        batch_size=batch_size,
                    ):
                        yield f"{member}, {key}", record
    elif head.startswith(b"\x1f\x8b"):
        with gzip.open(source, "rb") as f:
            yield from _iter_jsonl(f, name, skip_invalid, skipped)
    elif head == b"PAR1":
        yield from _iter_parquet(source, name, batch_size)
    else:
        yield from _iter_jsonl(source, name, skip_invalid, skipped)


def select(
    record: dict[str, Any],
    *,
    max_perplexity: float | None = None,
    min_paraphrases: int = 0,
    max_paraphrases: int | None = None,
    order: str = "given",
) -> dict[str, Any] | None:
    """The record with the paraphrases a task keeps, or ``None`` when too few are left.

    Keeps paraphrases with ``perplexity <= max_perplexity`` (a null perplexity fails any threshold);
    ``order="perplexity"`` sorts them by perplexity, lowest first (stable, nulls last), ``"given"``
    keeps the file's (generation) order; then the first ``max_paraphrases`` are kept; a source with
    fewer than ``min_paraphrases`` left is dropped.

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
    paras = record["paraphrases"]
    if max_perplexity is not None:
        paras = [p for p in paras if p["perplexity"] is not None and p["perplexity"] <= max_perplexity]
    if order == "perplexity":
        paras = sorted(paras, key=lambda p: (p["perplexity"] is None, p["perplexity"] or 0.0))
    elif order != "given":
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    if max_paraphrases is not None:
        paras = paras[:max_paraphrases]
    if len(paras) < min_paraphrases:
        return None
    return {**record, "paraphrases": paras}


def split_files(path: str | os.PathLike) -> dict[str, list[str]]:
    """The files of each split under a local ``path``.

    A file is split ``train``. A dataset folder (ours: ``data/{config}/{split}-{i}-of-{n}.parquet``)
    gives the splits of its ``default`` shards (:func:`paraamr.builder.layout.list_shards`; none
    when it has no records, as in a layout folder with no shards); another folder gives all its
    ``.json``, ``.jsonl``, ``.zip``, ``.gz`` and ``.parquet`` files (recursively, hidden ones
    skipped) as ``train``.
    """
    from paraamr import layout

    root = Path(path)
    if root.is_file():
        return {"train": [str(root)]}
    if not root.is_dir():
        raise InputError(f"{root}: no such file or folder")
    shards = layout.list_shards(root)
    if shards or (root / layout.DATA).is_dir() or (root / layout.STATE_DIR).is_dir():
        return {split: [str(p) for p in paths] for split, paths in shards.get("default", {}).items()}
    files = sorted(
        str(p)
        for p in root.rglob("*")
        if p.is_file()
        and p.name.lower().endswith(RELEASE_SUFFIXES)
        and not any(part.startswith((".", "__")) for part in p.relative_to(root).parts)
    )
    if not files:
        raise InputError(
            f"{root}: no data files (data/default/*.parquet, or {', '.join(RELEASE_SUFFIXES)} files)"
        )
    return {"train": files}


def read_path(
    path: str | os.PathLike, *, skip_invalid: bool = False, skipped: Skipped | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(split, record)`` for every record under a local file or folder (see :func:`split_files`)."""
    for split, files in split_files(path).items():
        for file in files:
            for _key, record in iter_records(file, skip_invalid=skip_invalid, skipped=skipped):
                yield split, record
