"""The dataset-folder layout written by the builder: Parquet shards under ``data/{config}/`` and
failure rows under ``failures/``, each written under a temporary name and renamed when complete.
"""

from __future__ import annotations

import json
import os
from pathlib import Path


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
