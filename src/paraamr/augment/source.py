"""ParaAMR paraphrases of given texts, looked up by :func:`paraamr.records.normalize`.

A :class:`ParaphraseIndex` maps normalized source texts to their paraphrases, most fluent first
(ascending perplexity; those without one keep their order, after the scored ones), without repeats
and never the source itself. Build it from

- a ParaAMR release JSONL (``{"text": ..., "paraphrases": [{"para_text", "perplexity"}, ...]}`` per
  line), or a Parquet file, or a folder made by ``paraamr generate`` (shards ``data/default/*.parquet``
  per :data:`paraamr.records.DEFAULT_SCHEMA`): :meth:`ParaphraseIndex.from_path`;
- records in that shape, e.g. those the generator yields on the fly:
  :meth:`ParaphraseIndex.from_records`.

Pass ``keys`` (normalized texts) to keep only the sources you need: a release holds millions.

>>> index = ParaphraseIndex.from_records([
...     {"text": "I know.", "paraphrases": [{"para_text": "It is known to me.", "perplexity": 80.0},
...                                         {"para_text": "i KNOW.", "perplexity": 1.0},
...                                         {"para_text": "I do know.", "perplexity": 20.0}]}])
>>> index.lookup("i  know.", 5)
['I do know.', 'It is known to me.']
>>> index.lookup("unknown text", 5)
[]
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from paraamr.errors import InputError
from paraamr.records import normalize


def _rank(paraphrases: list[dict[str, Any]]) -> list[tuple[float, int, str]]:
    ranked = []
    for position, para in enumerate(paraphrases):
        ppl = para.get("perplexity")
        key = ppl if isinstance(ppl, (int, float)) and not math.isnan(ppl) else math.inf
        ranked.append((key, position, para["para_text"]))
    return ranked


class ParaphraseIndex:
    """Normalized source text -> its paraphrases, most fluent first (see the module docstring)."""

    def __init__(self) -> None:
        self._ranked: dict[str, list[tuple[float, int, str]]] = {}
        self._final: dict[str, list[str]] = {}

    def __len__(self) -> int:
        return len(self._ranked)

    def add(self, text: str, paraphrases: list[dict[str, Any]]) -> None:
        """Add the paraphrases of ``text`` (merged with any already there for the same key)."""
        key = normalize(text)
        self._ranked.setdefault(key, []).extend(_rank(paraphrases))
        self._final.pop(key, None)

    def lookup(self, text: str, k: int) -> list[str]:
        """Up to ``k`` distinct paraphrases of ``text``, none equal to it once normalized."""
        key = normalize(text)
        final = self._final.get(key)
        if final is None:
            seen, final = {key}, []
            for _, _, para in sorted(self._ranked.get(key, ())):
                para_key = normalize(para)
                if para_key and para_key not in seen:
                    seen.add(para_key)
                    final.append(para)
            self._final[key] = final
        return final[:k]

    @classmethod
    def from_records(
        cls, records: Iterable[dict[str, Any]], *, keys: set[str] | None = None
    ) -> ParaphraseIndex:
        """An index of records with ``text`` and ``paraphrases`` (``para_text``, ``perplexity``)."""
        index = cls()
        for record in records:
            if keys is None or normalize(record["text"]) in keys:
                index.add(record["text"], record.get("paraphrases") or [])
        return index

    @classmethod
    def from_path(cls, path: str | Path, *, keys: set[str] | None = None) -> ParaphraseIndex:
        """An index of a release JSONL, a Parquet file, or a folder with ``data/default/*.parquet``."""
        return cls.from_records(read_records(Path(path)), keys=keys)


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The ``text`` / ``paraphrases`` records of a JSONL file, a Parquet file or a dataset folder."""
    if path.is_dir():
        shards = sorted((path / "data" / "default").glob("*.parquet")) or sorted(path.glob("*.parquet"))
        if not shards:
            raise InputError(f"{path}: no Parquet shards in data/default/ nor in the folder itself")
        for shard in shards:
            yield from _read_parquet(shard)
    elif path.suffix == ".parquet":
        yield from _read_parquet(path)
    elif path.is_file():
        yield from _read_jsonl(path)
    else:
        raise InputError(f"{path}: no such file or folder (expected a ParaAMR JSONL or dataset folder)")


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record.get("text"), str) or not all(
                    isinstance(p.get("para_text"), str) for p in record.get("paraphrases") or []
                ):
                    raise ValueError("needs a string 'text' and 'paraphrases' with string 'para_text'")
            except (ValueError, AttributeError, TypeError) as err:
                raise InputError(f"{path}:{number}: not a ParaAMR record ({err})") from err
            yield record


def _read_parquet(path: Path) -> Iterator[dict[str, Any]]:
    import pyarrow.parquet as pq

    try:
        shard = pq.ParquetFile(path)
        batches = shard.iter_batches(columns=["text", "paraphrases"], batch_size=4096)
        for batch in batches:
            yield from batch.to_pylist()
    except (OSError, KeyError, ValueError) as err:
        raise InputError(f"{path}: cannot read 'text' and 'paraphrases' ({err})") from err
