"""Shard writers and failure files of a dataset folder, written as parts under ``.paraamr/parts``,
and :func:`finalize`, which turns the parts into shards.

>>> import tempfile, pyarrow.parquet as pq
>>> from paraamr.layout import list_shards
>>> from paraamr.records import PAIRS_SCHEMA
>>> d = tempfile.mkdtemp()
>>> with ShardWriter(d, "pairs", "my_split", PAIRS_SCHEMA) as w:
...     w.write({"id": "0", "text": "t", "para_text": "p"})
>>> finalize(d)["pairs"]["my_split"]
['data/pairs/my_split-00000-of-00001.parquet']
>>> {c: {s: len(p) for s, p in v.items()} for c, v in list_shards(d).items()}
{'pairs': {'my_split': 1}}
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path

from paraamr.atomic import atomic_write
from paraamr.builder.rolling import Rolling
from paraamr.errors import InputError
from paraamr.layout import (
    DATA,
    FAILURES,
    MAX_ROW_GROUP_SIZE,
    MAX_SHARD_SIZE,
    PARTS,
    STATE_DIR,
    SUMMARY,
    check_name,
    list_shards,
    parse_shard_name,
    parse_size,
    shard_name,
    writer_id,
)
from paraamr.records import PAIRS_SOURCE
from paraamr.signals import critical

__all__ = [
    *("BATCH_ROWS", "FailureWriter", "ShardWriter"),
    *("check_committed", "clean_parts", "finalize", "pending", "stray_parts"),
]

_STAGING = f"{STATE_DIR}/final"
_PLAN = f"{STATE_DIR}/finalize.json"
#: Rows turned into one Arrow batch at a time (the granularity of every size decision).
BATCH_ROWS = 1000
_PART = re.compile(
    r"^(?P<writer>(?:s\d{5}-of-\d{5}\.)?\d{5}-of-\d{5}|t\d{6,})-(?P<k>\d{5,})\.(?:parquet|jsonl)$"
)


def _group(config: str) -> tuple[str, ...]:
    """The columns whose runs a shard of ``config`` never cuts (a source's rows in ``pairs``)."""
    return PAIRS_SOURCE if config == "pairs" else ()


def _part_name(writer: str, k: int, suffix: str) -> str:
    return f"{writer}-{k:05d}{suffix}"


class ShardWriter:
    """The rows of one (``config``, ``split``) of ``folder``, in parts of ``writer`` numbered from 0;
    :meth:`commit` returns the next part number. ``max_shard_size`` and
    ``row_group_size``: uncompressed Arrow bytes, as ``datasets`` counts them."""

    def __init__(
        self,
        folder: str | os.PathLike,
        config: str,
        split: str,
        schema,
        *,
        max_shard_size: int | str = MAX_SHARD_SIZE,
        row_group_size: int | str = MAX_ROW_GROUP_SIZE,
        writer: str = writer_id(),
    ):
        check_name("config", config)
        check_name("split", split)
        self.config, self.split, self.schema = config, split, schema
        directory = Path(folder) / PARTS / config / split
        self._files = Rolling(
            directory,
            lambda k: _part_name(writer, k, ".parquet"),
            schema,
            parse_size(max_shard_size),
            parse_size(row_group_size),
            group=_group(config),
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

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if exc_type is None:
            self.commit()


class FailureWriter:
    """Failure rows (JSON lines) of one writer, committed in parts like :class:`ShardWriter`'s."""

    def __init__(self, folder: str | os.PathLike, *, writer: str = writer_id()):
        self.directory = Path(folder) / PARTS / FAILURES
        self.writer, self.next = writer, 0
        self._rows: list[dict] = []

    def write(self, row: dict) -> None:
        """Add one failure row."""
        self._rows.append(row)

    def commit(self) -> int:
        """Write the buffered rows as one part; return the next part number."""
        if self._rows:
            path = self.directory / _part_name(self.writer, self.next, ".jsonl")
            atomic_write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self._rows))
            self.next += 1
            self._rows = []
        return self.next


def _parts(folder: Path) -> Iterator[tuple[str, Path, re.Match | None]]:
    """``(config/split or failures, path, name match)`` of every file under the parts folder."""
    parts = folder / PARTS
    if parts.is_dir():
        for path in sorted(parts.rglob("*")):
            if path.is_file():
                yield "/".join(path.parent.relative_to(parts).parts), path, _PART.match(path.name)


def stray_parts(folder: str | os.PathLike, writers: Collection[str]) -> list[Path]:
    """The part files of other writers than ``writers`` (every writer of a run): :func:`finalize`
    would merge their rows too."""
    return [path for _key, path, m in _parts(Path(folder)) if m is not None and m["writer"] not in writers]


def clean_parts(folder: str | os.PathLike, *, writer: str, committed: dict[str, int]) -> int:
    """Delete ``writer``'s temporary files and parts after its last commit (``committed``: the next
    part number per ``config/split``, as ``commit`` returned it); return how many."""
    removed = 0
    prefix = f"{writer}-"
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


#: Which count of a writer's committed statistics the rows of each part kind must add up to.
_COUNTED = {"default": "records", "pairs": "paraphrases", FAILURES: "failures"}


def _rows_of(path: Path) -> int:
    """Rows of a part or shard (Parquet footer, JSON line ends); ValueError for a file cut short."""
    if path.suffix == ".jsonl":
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            raise ValueError("its last line is cut short")
        return data.count(b"\n")
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata.num_rows
    except (pa.ArrowException, OSError) as err:
        raise ValueError(f"not a whole Parquet file ({err})") from None


def _add_rows(root: Path, path: Path, kind: str, counts: dict[str, int], wrong: list[str]) -> None:
    """Add the rows of ``path`` to ``counts[kind]``, or say in ``wrong`` why they cannot be counted."""
    try:
        counts[kind] = counts.get(kind, 0) + _rows_of(path)
    except (OSError, ValueError) as err:
        wrong.append(f"{path.relative_to(root)}: {err}")


def _count_against(counts: dict[str, int], stats: dict, what: str) -> list[str]:
    return [
        f"{what} hold {counts.get(kind, 0):,} {kind} rows, its counts say {stats.get(name, 0):,}"
        for kind, name in _COUNTED.items()
        if counts.get(kind, 0) != stats.get(name, 0)
    ]


def check_committed(folder: str | os.PathLike, states: list[tuple[str, dict]]) -> dict[str, list[str]]:
    """What is wrong with the committed files of each writer (``states``: ``(writer, state)``): a part
    gone or cut short, rows that do not add up to its counts; once finalized, the shards against
    every writer's counts (key ``""``); nothing while a :func:`finalize` is half done.

    >>> import tempfile
    >>> from paraamr.records import PAIRS_SCHEMA
    >>> d = tempfile.mkdtemp()
    >>> with ShardWriter(d, "pairs", "train", PAIRS_SCHEMA, writer="00000-of-00001") as w:
    ...     w.write({"id": "0", "text": "t", "para_text": "p"})
    >>> state = {"next": {"pairs/train": 1, "failures": 0}, "stats": {"paraphrases": 1}}
    >>> check_committed(d, [("00000-of-00001", state)])
    {}
    >>> state["next"]["pairs/train"] = 2
    >>> check_committed(d, [("00000-of-00001", state)])["00000-of-00001"]
    ['.paraamr/parts/pairs/train/00000-of-00001-00001.parquet is missing']
    """
    root = Path(folder)
    if (root / _PLAN).exists():
        return {}
    problems: dict[str, list[str]] = {}
    parts = list(_parts(root))
    if not parts and list_shards(root) and (root / SUMMARY).is_file():
        counts: dict[str, int] = {}
        wrong: list[str] = []
        for path in [*(root / DATA).rglob("*.parquet"), *(root / FAILURES).glob("*.jsonl")]:
            kind = path.relative_to(root).parts[0 if path.suffix == ".jsonl" else 1]
            _add_rows(root, path, kind, counts, wrong)
        total = {name: sum(state["stats"].get(name, 0) for _, state in states) for name in _COUNTED.values()}
        wrong += _count_against(counts, total, "the finished files")
        return {"": wrong} if wrong else {}
    found: dict[str, list[tuple[str, Path, int]]] = {}  # each writer's part files
    for key, path, m in parts:
        if m is not None:
            found.setdefault(m["writer"], []).append((key, path, int(m["k"])))
    for writer, state in states:
        counts, wrong = {}, []
        for key, path, k in found.get(writer, []):  # a part it never committed would be merged too
            if k >= state["next"].get(key, 0):
                wrong.append(f"{path.relative_to(root)} is not one of its committed parts")
        for key, nxt in state["next"].items():
            suffix = ".jsonl" if key == FAILURES else ".parquet"
            for k in range(nxt):
                path = root / PARTS / key / _part_name(writer, k, suffix)
                if path.is_file():
                    _add_rows(root, path, key.split("/", 1)[0], counts, wrong)
                else:
                    wrong.append(f"{path.relative_to(root)} is missing")
        if not wrong:
            wrong = _count_against(counts, state["stats"], "its parts")
        if wrong:
            problems[writer] = wrong
    return problems


def _read_plan(path: Path) -> dict[str, list]:
    """The plan of a finalize under way; InputError when unreadable or naming other paths than its own."""

    def inside(name: object, *tops: str) -> bool:
        return isinstance(name, str) and name.startswith(tops) and ".." not in Path(name).parts

    try:
        plan = json.loads(path.read_text())
        out = (f"{DATA}/", f"{FAILURES}/")
        ok = all(inside(a, f"{_STAGING}/") and inside(b, *out) for a, b in plan["renames"])
        if ok and all(inside(p, f"{PARTS}/") for p in plan["parts"]):
            return plan
        why = " (it names paths outside the run's parts, staging and data folders)"
    except (OSError, ValueError, TypeError, KeyError) as err:
        why = f" ({err})" if isinstance(err, (OSError, ValueError)) else ""
    raise InputError(
        f"{path}: not a plan of the finalize under way{why}; delete it and finalize again (a task whose "
        "parts it had deleted is then named, to be run again)"
    )


def finalize(
    folder: str | os.PathLike,
    *,
    max_shard_size: int | str = MAX_SHARD_SIZE,
    row_group_size: int | str = MAX_ROW_GROUP_SIZE,
    replacing: Callable[[], object] | None = None,
) -> dict[str, dict[str, list[str]]]:
    """Turn every part under ``folder`` into shards and failure files; return the shard paths written
    (``{config: {split: [...]}}``). Crash-safe: shards are staged, a plan of renames saved, then the
    parts deleted and the renames done; a call after a kill finishes the plan or stages again. A
    (config, split) with shards is refused unless ``replacing``, which removes the old dataset just
    before the renames, in the same uninterruptible block."""
    import pyarrow.parquet as pq

    root = Path(folder)
    plan_path = root / _PLAN
    fresh = not plan_path.exists()
    if fresh:
        groups: dict[str, list[Path]] = {}
        for key, path, m in _parts(root):
            if m is not None and not path.name.startswith("."):
                groups.setdefault(key, []).append(path)
        if not groups:
            return {}
        existing = list_shards(root)
        for key in groups:
            config, _, split = key.partition("/")
            if split and existing.get(config, {}).get(split) and replacing is None:
                raise ValueError(f"{root}: {key} already has shards; remove them before writing it again")
        staging = root / _STAGING
        shutil.rmtree(staging, ignore_errors=True)
        renames: list[tuple[str, str]] = []
        for key, paths in sorted(groups.items()):
            if key == FAILURES:
                renames += _stage_failures(root, paths, staging, parse_size(max_shard_size))
                continue
            config, split = key.split("/", 1)
            out = Rolling(
                staging / config / split,
                lambda k: f"{k:05d}.parquet",
                pq.read_schema(paths[0]),
                parse_size(max_shard_size),
                parse_size(row_group_size),
                group=_group(config),
            )
            for path in paths:
                if out.link(path):
                    continue
                for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS):
                    out.add(batch)
            out.close()
            n = len(out.closed)
            for i, staged in enumerate(out.closed):
                renames.append((str(staged.relative_to(root)), f"{DATA}/{config}/{shard_name(split, i, n)}"))
        plan = {"renames": renames, "parts": [str(p.relative_to(root)) for ps in groups.values() for p in ps]}
        atomic_write(plan_path, json.dumps(plan))
    plan = _read_plan(plan_path)
    written: dict[str, dict[str, list[str]]] = {}
    with critical():
        if replacing is not None and not plan.get("replaced"):  # once: a rename may have been done
            replacing()
            plan["replaced"] = True
            atomic_write(plan_path, json.dumps(plan))
        for part in plan["parts"]:
            (root / part).unlink(missing_ok=True)
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
    out_dir = staging / FAILURES
    out_dir.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    with contextlib.ExitStack() as stack:
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
