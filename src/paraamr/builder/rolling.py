"""Parquet files of a bounded size, written one after another, that never cut a group of rows.

>>> import tempfile, pyarrow as pa, pyarrow.parquet as pq
>>> rows = pa.RecordBatch.from_pydict({"id": list("aaabbbccc"), "n": list(range(9))})
>>> out = Rolling(Path(tempfile.mkdtemp()), "{:02d}.parquet".format, rows.schema, 60, 1 << 20, group=("id",))
>>> out.add(rows); _ = out.close()
>>> [pq.read_table(p).column("id").to_pylist() for p in out.closed]
[['a', 'a', 'a', 'b', 'b', 'b'], ['c', 'c', 'c']]
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from paraamr.atomic import atomic_file
from paraamr.layout import NBYTES, arrow_bytes

__all__ = ["Rolling"]


class Rolling:
    """Parquet files ``directory/name(k)`` from ``k = 0``, of at most ``max_bytes`` uncompressed
    Arrow bytes in row groups of at most ``row_group_bytes``, each named when closed, its bytes in
    :data:`NBYTES`; a file ends within a row of ``max_bytes``, or, with ``group`` (column names),
    within the group of its last row (a run of rows equal in those columns)."""

    _file: contextlib.ExitStack

    def __init__(
        self,
        directory: Path,
        name: Callable[[int], str],
        schema,
        max_bytes: int,
        row_group_bytes: int,
        *,
        group: tuple[str, ...] = (),
    ):
        self.directory, self.name, self.schema, self.group = directory, name, schema, group
        self.max_bytes, self.row_group_bytes = max_bytes, row_group_bytes
        self.next = 0
        self.closed: list[Path] = []
        self.rows = 0
        self._writer = None
        self._file_bytes = 0
        self._batches: list = []
        self._buffered = 0
        self._full = False  # the open file is at its size; only its last group may go on
        self._last: tuple | None = None  # the group key of the last row added

    def add(self, batch) -> None:
        """Add one Arrow record batch (or table) of rows, split where a file reaches its size."""
        while batch.num_rows:
            if self._full:
                same = self._run(batch, 0, self._last)
                if same:
                    self._buffer(batch.slice(0, same))
                    batch = batch.slice(same)
                    continue
                self._write_group()
                self._close()
                continue
            room = self.max_bytes - self._file_bytes - self._buffered
            take = batch.num_rows
            if batch.nbytes > room:
                take = max(1, int(batch.num_rows * room / batch.nbytes))
                take += self._run(batch, take, self._key(batch, take - 1))
            self._buffer(batch.slice(0, take))
            batch = batch.slice(take)
            if self._buffered >= self.row_group_bytes or self._file_bytes + self._buffered >= self.max_bytes:
                self._write_group()
                if self._file_bytes >= self.max_bytes:
                    self._full = True
                    if not self.group:
                        self._close()

    def _key(self, batch, i: int) -> tuple | None:
        return tuple(batch.column(c)[i].as_py() for c in self.group) if self.group else None

    def _run(self, batch, start: int, key: tuple | None) -> int:
        """How many rows from ``start`` belong to the group ``key``."""
        end = start
        while key is not None and end < batch.num_rows and self._key(batch, end) == key:
            end += 1
        return end - start

    def _buffer(self, batch) -> None:
        self._batches.append(batch)
        self._buffered += batch.nbytes
        self.rows += batch.num_rows
        self._last = self._key(batch, batch.num_rows - 1)

    def _write_group(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._batches:
            return
        if self._writer is None:
            self._file = contextlib.ExitStack()
            tmp = self._file.enter_context(atomic_file(self.directory / self.name(self.next)))
            self._writer = pq.ParquetWriter(tmp, self.schema)
        table = pa.Table.from_batches(self._batches, schema=self.schema)
        self._writer.write_table(table, row_group_size=table.num_rows)
        self._file_bytes += self._buffered
        self._batches, self._buffered = [], 0

    def _close(self) -> None:
        self._full = False
        if self._writer is None:
            return
        self._writer.add_key_value_metadata({NBYTES: str(self._file_bytes).encode()})
        self._writer.close()
        self._file.close()  # renamed into place
        self.closed.append(self.directory / self.name(self.next))
        self.next += 1
        self._writer, self._file_bytes = None, 0

    def close(self) -> int:
        """Write what is buffered and close the open file; return the next file number."""
        self._write_group()
        self._close()
        return self.next

    def link(self, path: Path) -> bool:
        """Whether ``path``, a file of full size, was taken as the next file unchanged (hard link, else
        copy): only when no file is open, or the open one is full and ``path`` starts a new group."""
        import pyarrow.parquet as pq

        if self._batches or (self._writer is not None and not self._full):
            return False
        pf = pq.ParquetFile(path)
        if arrow_bytes(pf.metadata) < self.max_bytes:
            return False
        if self._writer is not None:  # full, its last group still open
            first = pf.read_row_group(0, columns=list(self.group))
            if not first.num_rows or self._run(first, 0, self._last):
                return False
            self._close()
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.directory / self.name(self.next)
        target.unlink(missing_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copyfile(path, target)
        self.rows += pf.metadata.num_rows
        self.closed.append(target)
        self.next += 1
        return True
