"""A run's input cut into tasks by :func:`~paraamr.builder.rows.row_task`, so repeats of a source
meet in one task; the plan, written last, marks the partition complete.

>>> import tempfile
>>> from paraamr.builder.rows import decode_bytes
>>> d = tempfile.mkdtemp()
>>> plan = partition(d, [decode_bytes(t) for t in (b"a.", b"b.", b"a.")], task_rows=2)
>>> plan.count, sum(plan.rows.values())
(2, 3)
>>> [row.text for k in plan.of() for row in plan.read(k)].count("a.")  # repeats in one task
2
>>> Plan.load(d) == plan
True
>>> plan.drop_inputs(); sorted(p.name for p in _root(d).iterdir())
['plan.json']
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from paraamr import layout
from paraamr.atomic import atomic_write
from paraamr.builder.rows import InputRow, row_task
from paraamr.errors import InputError
from paraamr.failures import Failure
from paraamr.tasks import read_json

__all__ = ["Plan", "partition", "rows_digest", "task_count"]

_PLAN = "plan.json"
#: What to do about a damaged state file of a run.
REDO = "; run the same command with --overwrite to build the run again"
#: Bytes of rows held in memory before they are appended to their tasks' files.
_BUFFER_BYTES = 16 << 20


def task_count(rows: int, *, task_rows: int, at_least: int = 1, shards: int = 1) -> int:
    """The tasks of a run of ``rows`` rows: ``task_rows`` rows a task, at least ``at_least``, a
    multiple of ``shards``.

    >>> task_count(10_000, task_rows=1000), task_count(10, task_rows=1000, at_least=2)
    (10, 2)
    >>> task_count(5, task_rows=1, shards=4)
    8
    """
    wanted = max(math.ceil(rows / task_rows), at_least, 1)
    return shards * math.ceil(wanted / shards)


def _encode(row: InputRow) -> str:
    failure = None if row.failure is None else [row.failure.stage, row.failure.reason]
    fields = [row.id, row.text, row.amr, row.raw_b64, failure, row.where]
    return json.dumps(fields, separators=(",", ":")) + "\n"  # ASCII: lone surrogates stay writable


def _decode(line: str) -> InputRow:
    rid, text, amr, raw_b64, failure, where = json.loads(line)
    return InputRow(rid, text, amr, raw_b64, failure and Failure(*failure), where)


@dataclass(frozen=True)
class Plan:
    """A run's cut into ``count`` tasks: the ``rows`` of each task that has any."""

    folder: Path
    count: int
    rows: dict[int, int]
    #: The digest of the rows cut (:func:`rows_digest`), to check stdin read again on resume.
    digest: str | None = None
    #: The ``--task-rows`` the run was cut with (a later invocation's changes nothing).
    task_rows: int | None = None

    @classmethod
    def load(cls, folder: str | Path) -> Plan | None:
        """The plan of the run in ``folder``, or None when its input was never (fully) cut;
        InputError when it is unreadable."""
        path = _root(folder) / _PLAN
        what = "the plan of the run's tasks"
        saved = read_json(path, what, fix=REDO)
        if saved is None:
            return None
        try:
            count, rows = saved["tasks"], {int(k): n for k, n in saved["rows"].items()}
            wrong = [k for k, n in rows.items() if type(n) is not int or not 0 <= k < count]
            if type(count) is not int or wrong:
                raise ValueError("a task count that is not a number, or a task out of range")
        except (ValueError, TypeError, KeyError, AttributeError) as err:
            why = f"no {err}" if isinstance(err, KeyError) else err
            raise InputError(f"{path}: not {what} ({why}){REDO}") from None
        return cls(Path(folder), count, rows, saved.get("digest"), saved.get("task_rows"))

    def of(self, shard: tuple[int, int] = (0, 1)) -> list[int]:
        """The tasks with rows of shard ``shard = (i, N)``, in order."""
        i, n = shard
        return sorted(k for k in self.rows if k % n == i)

    def total(self, tasks: Iterable[int]) -> int:
        """The rows of ``tasks``."""
        return sum(self.rows.get(k, 0) for k in tasks)

    def save(self) -> None:
        """Write the plan (atomically: the partition's completion marker)."""
        rows = {str(k): self.rows[k] for k in sorted(self.rows)}
        saved = {"tasks": self.count, "rows": rows, "digest": self.digest, "task_rows": self.task_rows}
        atomic_write(_root(self.folder) / _PLAN, json.dumps(saved))

    def remove(self) -> None:
        """Undo the cut: the plan and the tasks' input files."""
        shutil.rmtree(_root(self.folder), ignore_errors=True)

    def drop_inputs(self) -> None:
        """Delete the tasks' input files (a finalized run reads them no more); the plan stays."""
        for task in self.rows:
            _task_path(self.folder, task).unlink(missing_ok=True)

    def check_input(self, rows: Iterable[InputRow]) -> None:
        """InputError unless ``rows`` are those the plan was cut from: an input that cannot be
        identified before it is read (stdin), read again when the run resumes."""
        n, digest = rows_digest(rows)
        if self.digest is not None and digest != self.digest:
            raise InputError(
                f"stdin: not the input the run in {self.folder} started with ({n:,} rows now, "
                f"{self.total(self.rows):,} then); pipe the same input to resume, or pass --overwrite "
                "to start over"
            )

    def read(self, task: int) -> Iterator[InputRow]:
        """The rows of ``task``, in input order; InputError when its file is not what the partition
        wrote (rows lost, cut short or added: the plan counts them)."""
        path, expected, n = _task_path(self.folder, task), self.rows.get(task, 0), 0
        try:
            with open(path, encoding="ascii") as f:
                for n, line in enumerate(f, start=1):
                    if n > expected or not line.endswith("\n"):
                        raise ValueError("more rows than the plan counts, or a row cut short")
                    yield _decode(line)
        except (ValueError, TypeError) as err:  # JSON's and ASCII's errors are ValueErrors
            raise InputError(f"{path}: damaged near line {max(n, 1)} ({err}){REDO}") from None
        if n != expected:
            raise InputError(f"{path}: {n:,} rows where the plan counts {expected:,}{REDO}")


def _root(folder: str | Path) -> Path:
    return layout.state_path(folder, "input/")


def _task_path(folder: str | Path, task: int) -> Path:
    return _root(folder) / f"task-{task:06d}.jsonl"


def partition(
    folder: str | Path, rows: Iterable[InputRow], *, task_rows: int, at_least: int = 1, shards: int = 1
) -> Plan:
    """Cut ``rows`` into the tasks of the run in ``folder`` (:func:`task_count`) and save the plan:
    spooled first (stdin and datasets have no count), then dealt to their tasks' files; a cut that
    fails leaves none of its files."""
    root = _root(folder)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    try:
        spool = root / "rows.jsonl"
        with open(spool, "w", encoding="ascii") as f:
            n, digest = rows_digest(rows, spool=f)
        count = task_count(n, task_rows=task_rows, at_least=at_least, shards=shards)
        counts: dict[int, int] = {}
        buffers: dict[int, list[str]] = {}
        held = 0
        with open(spool, encoding="ascii") as f:
            for line in f:
                key, _, row = line.partition(" ")
                k = int(key) % count
                buffers.setdefault(k, []).append(row)
                counts[k] = counts.get(k, 0) + 1
                held += len(row)
                if held >= _BUFFER_BYTES:
                    _flush(folder, buffers)
                    held = 0
        _flush(folder, buffers)
        spool.unlink()
        plan = Plan(Path(folder), count, dict(sorted(counts.items())), digest, task_rows)
        plan.save()
    except BaseException:  # a full disk, a bad input, a signal: no spool nor part of a cut stays
        shutil.rmtree(root, ignore_errors=True)
        raise
    return plan


def rows_digest(rows: Iterable[InputRow], *, spool: TextIO | None = None) -> tuple[int, str]:
    """How many ``rows``, and the sha1 of the lines :func:`partition` writes for them (to ``spool``,
    each after its task key, when given).

    >>> from paraamr.builder.rows import decode_bytes
    >>> rows_digest([decode_bytes(b"a.")]) == rows_digest([decode_bytes(b"a.")]), rows_digest([])[0]
    (True, 0)
    """
    digest, n = hashlib.sha1(), 0
    for row in rows:
        line = _encode(row)
        if spool is not None:
            spool.write(f"{row_task(row.id)} {line}")
        digest.update(line.encode("ascii"))
        n += 1
    return n, digest.hexdigest()


def _flush(folder: str | Path, buffers: dict[int, list[str]]) -> None:
    for k, lines in buffers.items():
        with open(_task_path(folder, k), "a", encoding="ascii") as f:
            f.writelines(lines)
    buffers.clear()
