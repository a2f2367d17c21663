"""THE dataset-folder layout: every command that writes or reads a ParaAMR folder goes through here.

A dataset folder is a Hub dataset repository::

    README.md                                          the card (:mod:`paraamr.card`)
    summary.json                                       the run's settings and counts
    plots/*.png                                        the statistics' histograms, shown in the card
    data/{config}/{split}-{i:05d}-of-{n:05d}.parquet   shards, named as ``datasets``' push_to_hub names them
    failures/failures-{i:05d}-of-{n:05d}.jsonl         rows that did not become records
    .paraamr/                                          resume state and parts (hidden: never uploaded)

Writers (:class:`ShardWriter`, :class:`FailureWriter`) write *parts* under
``.paraamr/parts/{config}/{split}/{rank:05d}-of-{procs:05d}-{k:05d}.parquet``, each under a
temporary name until it is closed; a part is closed at every :meth:`~ShardWriter.commit` (the
run's commit interval) and when it reaches ``max_shard_size`` bytes of uncompressed Arrow data, as
``push_to_hub`` measures shards. :func:`finalize` (when the run is complete) streams the parts of
each (config, split) into shards of ``max_shard_size`` (a full part is linked, not rewritten) with
row groups of at most ``MAX_ROW_GROUP_SIZE`` (what the Hub's dataset viewer pages), then gives them
their final names. It is crash-safe: killed at any point, calling it again finishes the job.

>>> shard_name("train", 0, 2), parse_shard_name("my-split-00001-of-00002.parquet")
('train-00000-of-00002.parquet', ('my-split', 1, 2))
>>> data_files("pairs", "train")
'data/pairs/train-?????-of-?????.parquet'
>>> import tempfile, pyarrow.parquet as pq
>>> from paraamr.records import PAIRS_SCHEMA
>>> d = tempfile.mkdtemp()
>>> with ShardWriter(d, "pairs", "my-split", PAIRS_SCHEMA) as w:
...     w.write({"id": "0", "text": "t", "para_text": "p"})
>>> finalize(d)["pairs"]["my-split"]
['data/pairs/my-split-00000-of-00001.parquet']
>>> {c: {s: len(p) for s, p in v.items()} for c, v in list_shards(d).items()}
{'pairs': {'my-split': 1}}
"""

from __future__ import annotations

import glob as _glob
import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "CARD",
    "DATA",
    "EVALUATION",
    "FAILURES",
    "MAX_ROW_GROUP_SIZE",
    "MAX_SHARD_SIZE",
    "OWN_FILES",
    "PLOTS",
    "PLOT_FILES",
    "STATE_DIR",
    "SUMMARY",
    "FailureWriter",
    "ShardWriter",
    "clean_parts",
    "data_files",
    "failure_files",
    "finalize",
    "is_layout_path",
    "layout_info",
    "list_shards",
    "parse_shard_name",
    "parse_size",
    "pending",
    "remove_layout",
    "shard_name",
]

DATA, FAILURES, PLOTS = "data", "failures", "plots"
CARD, SUMMARY = "README.md", "summary.json"
#: Resume state and parts: hidden, so never uploaded nor loaded.
STATE_DIR = ".paraamr"
PARTS = f"{STATE_DIR}/parts"
_STAGING = f"{STATE_DIR}/final"
_PLAN = f"{STATE_DIR}/finalize.json"
#: push_to_hub's default shard size (uncompressed Arrow bytes) and the viewer's row-group bound.
MAX_SHARD_SIZE = "500MB"
MAX_ROW_GROUP_SIZE = "100MB"
#: Rows turned into one Arrow batch at a time (the granularity of every size decision).
BATCH_ROWS = 1000
_NBYTES = b"paraamr:nbytes"
_SHARD = re.compile(r"^(?P<split>.+)-(?P<index>\d{5,})-of-(?P<count>\d{5,})\.parquet$")
_FAILURE = re.compile(r"^failures-(?P<index>\d{5,})-of-(?P<count>\d{5,})\.jsonl$")
_PART = re.compile(r"^(?P<rank>\d{5})-of-(?P<procs>\d{5})-(?P<k>\d{5,})\.(?:parquet|jsonl)$")


def parse_size(size: int | str) -> int:
    """Bytes of ``500MB``, ``1GiB`` or an int, as ``datasets`` reads ``max_shard_size``.

    >>> parse_size("500MB"), parse_size(1024)
    (500000000, 1024)
    """
    from datasets.utils.py_utils import convert_file_size_to_int

    try:
        value = convert_file_size_to_int(size)
    except ValueError as err:
        raise ValueError(f"not a size: {size!r} (e.g. 500MB, 1GB, 2GiB)") from err
    if value < 1:
        raise ValueError(f"a size must be positive, got {size!r}")
    return value


def _check_name(kind: str, name: str) -> str:
    if not name or "/" in name or "\\" in name or name in (".", "..") or name.startswith("."):
        raise ValueError(f"{kind} name {name!r} cannot be a file name (empty, '/', or leading '.')")
    return name


def shard_name(split: str, index: int, count: int) -> str:
    """The file name of shard ``index`` of ``count`` of ``split`` (push_to_hub's)."""
    return f"{split}-{index:05d}-of-{count:05d}.parquet"


def parse_shard_name(name: str) -> tuple[str, int, int] | None:
    """``(split, index, count)`` of a shard file name, or None; a ``-`` in the split is kept."""
    m = _SHARD.match(name)
    return (m["split"], int(m["index"]), int(m["count"])) if m else None


def data_files(config: str, split: str) -> str:
    """The card's ``data_files`` pattern of one (config, split): matches its shards and no others."""
    return f"{DATA}/{config}/{_glob.escape(split)}-?????-of-?????.parquet"


def list_shards(folder: str | os.PathLike, config: str | None = None) -> dict[str, dict[str, list[Path]]]:
    """``{config: {split: [shard paths in order]}}`` of a folder's final shards (one config or all)."""
    root = Path(folder) / DATA
    out: dict[str, dict[str, list[tuple[int, Path]]]] = {}
    configs = [root / config] if config is not None else sorted(p for p in root.glob("*") if p.is_dir())
    for cdir in configs:
        for path in sorted(cdir.glob("*.parquet")):
            parsed = parse_shard_name(path.name)
            if parsed:
                out.setdefault(cdir.name, {}).setdefault(parsed[0], []).append((parsed[1], path))
    return {c: {s: [p for _, p in sorted(v)] for s, v in splits.items()} for c, splits in out.items()}


def failure_files(folder: str | os.PathLike) -> list[Path]:
    """The folder's failure files, in order."""
    return sorted(p for p in (Path(folder) / FAILURES).glob("*.jsonl") if _FAILURE.match(p.name))


def _part_name(rank: int, procs: int, k: int, suffix: str) -> str:
    return f"{rank:05d}-of-{procs:05d}-{k:05d}{suffix}"


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class _Rolling:
    """Parquet files ``directory/name(k)`` of at most ``max_bytes`` uncompressed Arrow bytes, row
    groups of at most ``row_group_bytes``; each file written as ``.name.tmp`` and renamed when closed,
    its Arrow bytes in its metadata (``paraamr:nbytes``)."""

    def __init__(self, directory: Path, name, schema, max_bytes: int, row_group_bytes: int, first: int = 0):
        self.directory, self.name, self.schema = directory, name, schema
        self.max_bytes, self.row_group_bytes = max_bytes, row_group_bytes
        self.next = first
        self.closed: list[Path] = []
        self.rows = 0
        self._writer = None
        self._file_bytes = 0
        self._batches: list = []
        self._buffered = 0

    def add(self, batch) -> None:
        """Add one Arrow record batch (or table) of rows; a batch that would overfill the open file
        is split so that files end within a row of ``max_bytes``."""
        while batch.num_rows:
            room = self.max_bytes - self._file_bytes - self._buffered
            take = batch.num_rows
            if batch.nbytes > room:
                take = max(1, int(batch.num_rows * room / batch.nbytes))
            head, batch = batch.slice(0, take), batch.slice(take)
            self._batches.append(head)
            self._buffered += head.nbytes
            self.rows += head.num_rows
            if self._buffered >= self.row_group_bytes or self._file_bytes + self._buffered >= self.max_bytes:
                self._write_group()
                if self._file_bytes >= self.max_bytes:
                    self._close()

    def _write_group(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._batches:
            return
        if self._writer is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._tmp = self.directory / f".{self.name(self.next)}.tmp"
            self._writer = pq.ParquetWriter(self._tmp, self.schema)
        table = pa.Table.from_batches(self._batches, schema=self.schema)
        self._writer.write_table(table, row_group_size=table.num_rows)
        self._file_bytes += self._buffered
        self._batches, self._buffered = [], 0

    def _close(self) -> None:
        if self._writer is None:
            return
        self._writer.add_key_value_metadata({_NBYTES: str(self._file_bytes).encode()})
        self._writer.close()
        path = self.directory / self.name(self.next)
        os.replace(self._tmp, path)
        self.closed.append(path)
        self.next += 1
        self._writer, self._file_bytes = None, 0

    def close(self) -> int:
        """Write what is buffered and close the open file; return the next file number."""
        self._write_group()
        self._close()
        return self.next

    def link(self, path: Path) -> None:
        """Take a file of full size as the next one unchanged (hard link, else copy); nothing is open."""
        import pyarrow.parquet as pq

        assert self._writer is None and not self._batches
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.directory / self.name(self.next)
        target.unlink(missing_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copyfile(path, target)
        self.rows += pq.ParquetFile(target).metadata.num_rows
        self.closed.append(target)
        self.next += 1

    @property
    def idle(self) -> bool:
        return self._writer is None and not self._batches


class ShardWriter:
    """The one writer of the rows of one (``config``, ``split``) of ``folder``.

    Rows go to parts of this process (``rank`` of ``num_processes``), numbered from ``first_part``;
    :meth:`commit` closes the open part and returns the next part number (what a resume state
    keeps); :func:`finalize` turns the parts of all processes into the shards. ``max_shard_size``
    and ``row_group_size``: uncompressed Arrow bytes, as ``datasets`` counts them.
    """

    def __init__(
        self,
        folder: str | os.PathLike,
        config: str,
        split: str,
        schema,
        *,
        max_shard_size: int | str = MAX_SHARD_SIZE,
        row_group_size: int | str = MAX_ROW_GROUP_SIZE,
        rank: int = 0,
        num_processes: int = 1,
        first_part: int = 0,
    ):
        _check_name("config", config)
        _check_name("split", split)
        self.config, self.split, self.schema = config, split, schema
        directory = Path(folder) / PARTS / config / split
        self._files = _Rolling(
            directory,
            lambda k: _part_name(rank, num_processes, k, ".parquet"),
            schema,
            parse_size(max_shard_size),
            parse_size(row_group_size),
            first_part,
        )
        self._rows: list[dict] = []

    @property
    def rows_written(self) -> int:
        """Rows given to the writer so far (this session)."""
        return self._files.rows + len(self._rows)

    @property
    def parts(self) -> list[Path]:
        """The parts closed so far (this session)."""
        return list(self._files.closed)

    def write(self, row: dict) -> None:
        """Add one row (fields it lacks are null)."""
        self._rows.append(row)
        if len(self._rows) >= BATCH_ROWS:
            self._flush_rows()

    def write_rows(self, rows: Iterable[dict]) -> None:
        """Add rows."""
        for row in rows:
            self.write(row)

    def write_table(self, table) -> None:
        """Add the rows of an Arrow table (or record batch) with this writer's columns."""
        self._flush_rows()
        table = table.select(self.schema.names).cast(self.schema)
        for batch in table.to_batches(max_chunksize=BATCH_ROWS):
            self._files.add(batch)

    def _flush_rows(self) -> None:
        import pyarrow as pa

        if self._rows:
            self._files.add(pa.RecordBatch.from_pylist(self._rows, schema=self.schema))
            self._rows = []

    def commit(self) -> int:
        """Close the open part (its rows are then durable); return the next part number."""
        self._flush_rows()
        return self._files.close()

    close = commit

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None:
            self.commit()


class FailureWriter:
    """Failure rows (JSON lines) of one process, committed in parts like :class:`ShardWriter`'s."""

    config = FAILURES

    def __init__(
        self, folder: str | os.PathLike, *, rank: int = 0, num_processes: int = 1, first_part: int = 0
    ):
        self.directory = Path(folder) / PARTS / FAILURES
        self.rank, self.num_processes, self.next = rank, num_processes, first_part
        self.rows_written = 0
        self._rows: list[dict] = []

    def write(self, row: dict) -> None:
        """Add one failure row."""
        self._rows.append(row)

    def commit(self) -> int:
        """Write the buffered rows as one part; return the next part number."""
        if self._rows:
            self.directory.mkdir(parents=True, exist_ok=True)
            path = self.directory / _part_name(self.rank, self.num_processes, self.next, ".jsonl")
            _atomic_write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self._rows))
            self.next += 1
            self.rows_written += len(self._rows)
            self._rows = []
        return self.next

    close = commit


def _part_key(path: Path, parts: Path) -> str:
    """``config/split`` (or ``failures``) of a part path."""
    return "/".join(path.parent.relative_to(parts).parts)


def _parts(folder: Path) -> Iterator[tuple[str, Path, re.Match | None]]:
    parts = folder / PARTS
    if parts.is_dir():
        for path in sorted(parts.rglob("*")):
            if path.is_file():
                yield _part_key(path, parts), path, _PART.match(path.name)


def clean_parts(
    folder: str | os.PathLike, *, rank: int, num_processes: int, committed: dict[str, int]
) -> int:
    """Delete this process's parts written after its last commit (``committed``: the next part
    number per ``config/split`` key, as the writers' ``commit`` returned it) and its temporary
    files; return how many were deleted."""
    removed = 0
    prefix = _part_name(rank, num_processes, 0, "")[:-5]
    for key, path, m in _parts(Path(folder)):
        name = path.name.lstrip(".")
        if not name.startswith(prefix):
            continue
        if path.name.endswith(".tmp") or m is None or int(m["k"]) >= committed.get(key, 0):
            path.unlink()
            removed += 1
    return removed


def pending(folder: str | os.PathLike) -> bool:
    """Whether parts or an unfinished :func:`finalize` wait in ``folder``."""
    root = Path(folder)
    return (root / _PLAN).exists() or any(True for _ in _parts(root))


def finalize(
    folder: str | os.PathLike,
    *,
    max_shard_size: int | str = MAX_SHARD_SIZE,
    row_group_size: int | str = MAX_ROW_GROUP_SIZE,
) -> dict[str, dict[str, list[str]]]:
    """Turn every part under ``folder`` into the final shards and failure files; return the shard
    paths written (relative, ``{config: {split: [...]}}``). Call it when every writer has committed.

    Crash-safe: shards are first written to a staging folder (parts untouched), then a plan of
    renames is saved atomically, the parts deleted and the renames done; a call after a kill
    finishes the plan, or restarts the staging. A (config, split) that already has shards and gets
    new parts is refused (a layout is written once; :func:`remove_layout` clears it).
    """
    import pyarrow.parquet as pq

    root = Path(folder)
    plan_path = root / _PLAN
    if not plan_path.exists():
        groups: dict[str, list[Path]] = {}
        for key, path, m in _parts(root):
            if m is not None and not path.name.startswith("."):
                groups.setdefault(key, []).append(path)
        if not groups:
            return {}
        existing = list_shards(root)
        for key in groups:
            config, _, split = key.partition("/")
            if split and existing.get(config, {}).get(split):
                raise ValueError(f"{root}: {key} already has shards; remove them before writing it again")
        staging = root / _STAGING
        shutil.rmtree(staging, ignore_errors=True)
        renames: list[tuple[str, str]] = []
        written: dict[str, dict[str, list[str]]] = {}
        for key, paths in sorted(groups.items()):
            if key == FAILURES:
                renames += _stage_failures(root, paths, staging, parse_size(max_shard_size))
                continue
            config, split = key.split("/", 1)
            out = _Rolling(
                staging / config / split,
                lambda k: f"{k:05d}.parquet",
                pq.read_schema(paths[0]),
                parse_size(max_shard_size),
                parse_size(row_group_size),
            )
            for path in paths:
                if out.idle and arrow_bytes(pq.ParquetFile(path).metadata) >= out.max_bytes:
                    out.link(path)
                    continue
                for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS):
                    out.add(batch)
            out.close()
            n = len(out.closed)
            for i, staged in enumerate(out.closed):
                final = f"{DATA}/{config}/{shard_name(split, i, n)}"
                renames.append((str(staged.relative_to(root)), final))
                written.setdefault(config, {}).setdefault(split, []).append(final)
        plan = {"renames": renames, "parts": [str(p.relative_to(root)) for ps in groups.values() for p in ps]}
        _atomic_write(plan_path, json.dumps(plan))
    plan = json.loads(plan_path.read_text())
    for part in plan["parts"]:
        (root / part).unlink(missing_ok=True)
    written = {}
    for staged, final in plan["renames"]:
        if (root / staged).exists():
            (root / final).parent.mkdir(parents=True, exist_ok=True)
            os.replace(root / staged, root / final)
        if final.startswith(f"{DATA}/"):
            _, config, name = final.split("/", 2)
            written.setdefault(config, {}).setdefault(parse_shard_name(name)[0], []).append(final)
    shutil.rmtree(root / _STAGING, ignore_errors=True)
    shutil.rmtree(root / PARTS, ignore_errors=True)
    plan_path.unlink()
    return written


def _stage_failures(root: Path, paths: list[Path], staging: Path, max_bytes: int) -> list[tuple[str, str]]:
    """Failure parts concatenated into files of about ``max_bytes``; the renames to their final names."""
    from contextlib import ExitStack

    out_dir = staging / FAILURES
    out_dir.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    with ExitStack() as stack:
        sink, size = None, 0
        for path in paths:
            with open(path, "rb") as source:
                for line in source:
                    if sink is None or size >= max_bytes:
                        stack.close()
                        files.append(out_dir / f"{len(files):05d}.jsonl")
                        sink, size = stack.enter_context(open(files[-1], "wb")), 0
                    sink.write(line)
                    size += len(line)
    n = len(files)
    return [
        (str(f.relative_to(root)), f"{FAILURES}/failures-{i:05d}-of-{n:05d}.jsonl")
        for i, f in enumerate(files)
    ]


#: Table 2's row (``paraamr evaluate DIR --write-card``) and the statistics' plots under ``plots/``.
EVALUATION = "evaluation.json"
PLOT_FILES = ("perplexity.png", "paraphrases_per_source.png")
#: Files at the top of a folder that paraamr writes (besides data/, failures/, plots/ and the state).
OWN_FILES = (CARD, SUMMARY, EVALUATION)


def is_layout_path(folder: str | os.PathLike, path: str | os.PathLike) -> bool:
    """Whether ``path`` (inside ``folder``) is a file of this layout, one paraamr may replace.

    >>> [is_layout_path("d", p) for p in ("d/README.md", "d/data/pairs/x-y-00000-of-00001.parquet",
    ...     "d/data/pairs/mine.parquet", "d/failures/failures-00000-of-00002.jsonl", "d/notes.txt")]
    [True, True, False, True, False]
    """
    parts = Path(os.path.relpath(path, folder)).parts
    if not parts or parts[0] == "..":
        return False
    if parts[0] == STATE_DIR:
        return True
    if len(parts) == 1:
        return parts[0] in OWN_FILES
    if len(parts) == 2 and parts[0] == PLOTS:
        return parts[1] in PLOT_FILES
    if len(parts) == 2 and parts[0] == FAILURES:
        return bool(_FAILURE.match(parts[1]))
    return len(parts) == 3 and parts[0] == DATA and parse_shard_name(parts[2]) is not None


def remove_layout(folder: str | os.PathLike) -> int:
    """Delete the files of this layout in ``folder`` (shards, failure files, Table-2 row, plots
    written by paraamr, the state folder) and nothing else; return how many files were deleted.
    The card and ``summary.json`` are left for the writer to replace."""
    root = Path(folder)
    removed = 0
    for splits in list_shards(root).values():
        for paths in splits.values():
            for path in paths:
                path.unlink()
                removed += 1
    for path in [*failure_files(root), root / EVALUATION, *(root / PLOTS / name for name in PLOT_FILES)]:
        if path.is_file():
            path.unlink()
            removed += 1
    if (root / STATE_DIR).is_dir():
        removed += sum(1 for p in (root / STATE_DIR).rglob("*") if p.is_file())
        shutil.rmtree(root / STATE_DIR)
    for sub in (DATA, FAILURES, PLOTS):  # folders this layout emptied
        for d in sorted((root / sub).rglob("*"), reverse=True) if (root / sub).is_dir() else []:
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        if (root / sub).is_dir() and not any((root / sub).iterdir()):
            (root / sub).rmdir()
    return removed


def arrow_bytes(meta) -> int:
    """Uncompressed Arrow bytes of a shard (recorded by the writer; Parquet's own count otherwise)."""
    recorded = (meta.metadata or {}).get(_NBYTES)
    if recorded is not None:
        return int(recorded)
    return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def layout_info(folder: str | os.PathLike) -> dict[str, Any]:
    """Rows and bytes of every (config, split) of ``folder`` from the shards' Parquet metadata:
    ``{config: {split: {"num_examples", "num_bytes" (uncompressed), "download_size" (files)}}}``."""
    import pyarrow.parquet as pq

    out: dict[str, Any] = {}
    for config, splits in list_shards(folder).items():
        for split, paths in splits.items():
            rows = nbytes = size = 0
            for path in paths:
                meta = pq.ParquetFile(path).metadata
                rows += meta.num_rows
                nbytes += arrow_bytes(meta)
                size += path.stat().st_size
            out.setdefault(config, {})[split] = {
                "num_examples": rows,
                "num_bytes": nbytes,
                "download_size": size,
            }
    return out
