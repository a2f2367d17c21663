"""ParaAMR paraphrases of given texts, looked up by :func:`paraamr.records.normalize`.

A :class:`ParaphraseIndex` maps normalized source texts to their paraphrases, most fluent first
(ascending perplexity, nulls last, by :class:`paraamr.filters.Filters`), without repeats and never
the source itself. Build it from

- anything :func:`paraamr.sources.read_path` reads: a ParaAMR release JSONL (plain, gzip or zip),
  a Parquet file, or a folder made by ``paraamr generate`` (``data/default/*.parquet``):
  :meth:`ParaphraseIndex.from_path`;
- records in that shape (``text``, ``paraphrases`` with ``para_text`` and ``perplexity``), such as
  those the generator yields on the fly: :meth:`ParaphraseIndex.from_records`.

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

import math
import os
from collections.abc import Iterable, Iterator
from typing import Any

from paraamr.filters import Filters
from paraamr.records import normalize
from paraamr.sources import Limits, read_path


class ParaphraseIndex:
    """Normalized source text -> its paraphrases, most fluent first (see the module docstring)."""

    def __init__(self) -> None:
        self._paraphrases: dict[str, dict[str, str]] = {}  # key -> paraphrase key -> paraphrase

    def __len__(self) -> int:
        """How many texts have a paraphrase."""
        return sum(1 for kept in self._paraphrases.values() if kept)

    def add(self, text: str, paraphrases: Iterable[str]) -> None:
        """Append the paraphrases of ``text`` that are new for its key and differ from it."""
        key = normalize(text)
        kept = self._paraphrases.setdefault(key, {})
        for para in paraphrases:
            para_key = normalize(para)
            if para_key and para_key != key:
                kept.setdefault(para_key, para)

    def lookup(self, text: str, k: int) -> list[str]:
        """Up to ``k`` distinct paraphrases of ``text``, none equal to it once normalized."""
        return list(self._paraphrases.get(normalize(text), {}).values())[:k]

    @classmethod
    def from_records(
        cls,
        records: Iterable[dict[str, Any]],
        *,
        keys: set[str] | None = None,
        max_perplexity: float | None = None,
    ) -> ParaphraseIndex:
        """An index of records, the paraphrases of each text by ascending perplexity (nulls last), over
        every record of that text (the same sentence twice, or in another case)."""
        wanted = (
            (None, {**record, "paraphrases": record.get("paraphrases") or []})
            for record in records
            if keys is None or normalize(record["text"]) in keys
        )
        ranked: dict[str, tuple[str, list[tuple[float, int, str]]]] = {}
        for _, kept in Filters(max_perplexity=max_perplexity).iter_records(wanted):
            _, paras = ranked.setdefault(normalize(kept["text"]), (kept["text"], []))
            for para in kept["paraphrases"]:
                ppl = para.get("perplexity")
                paras.append((math.inf if ppl is None else ppl, len(paras), para["para_text"]))
        index = cls()
        for text, paras in ranked.values():
            index.add(text, (para for *_, para in sorted(paras)))
        return index

    @classmethod
    def from_path(
        cls,
        path: str | os.PathLike,
        *,
        keys: set[str] | None = None,
        max_perplexity: float | None = None,
        limits: Limits | None = None,
    ) -> ParaphraseIndex:
        """An index of every record under ``path`` (all splits, :func:`paraamr.sources.read_path`;
        ``limits`` caps what an archive may unpack)."""
        records = (record for _split, record in read_path(path, limits=limits))
        return cls.from_records(records, keys=keys, max_perplexity=max_perplexity)


def generate_index(
    texts: Iterable[str], *, generator: Any = None, **settings: Any
) -> tuple[ParaphraseIndex, list[dict[str, Any]]]:
    """Paraphrases generated on the fly for ``texts``, and the generator's failure rows.

    ``generator`` is a :class:`paraamr.builder.pipeline.Generator`; by default one is built by
    :func:`paraamr.builder.stages.make_generator` from ``settings`` (by field name, see
    :func:`paraamr.settings.split_settings`). The setting ``progress`` (``auto``, ``bar``, ``log``,
    ``none``) shows the models loading, then the texts done on stderr, moved per model batch.
    """
    from paraamr.builder.checks import models_on_disk
    from paraamr.builder.rows import text_row
    from paraamr.builder.stages import make_generator
    from paraamr.builder.tracking import RunProgress, batch_stages, model_line
    from paraamr.models.base import batch_listener
    from paraamr.progress import SharedCount, progress_mode
    from paraamr.settings import split_settings

    texts = list(texts)
    record, run = split_settings(**settings)
    paths: dict[str, str] = {}
    if generator is None:  # each model missing named in one line, before the display starts
        paths = models_on_disk(record, download=run.download, trust_remote_code=run.trust_remote_code)
    tracker = RunProgress(
        SharedCount(None, "augment"),
        desc="augment: generating",
        mode=progress_mode(run.progress),
        main=True,
        window=run.window if generator is None else generator.window,
        stages=batch_stages(record),
        total=len(texts),
    )
    failures: list[dict[str, Any]] = []

    def records(gen: Any) -> Iterator[dict[str, Any]]:
        rows = tracker.taken(text_row(number, text) for number, text in enumerate(texts, 1))
        for window in gen.windows(rows, seen=set()):
            failures.extend(window.failures)
            yield from window.records
            tracker.window_done(window.rows, window.stats)

    try:
        if generator is None:
            tracker.display.phase(model_line(record.models(), paths))
            generator = make_generator(record.with_models(paths), run)
        with batch_listener(tracker.on_batch):
            index = ParaphraseIndex.from_records(records(generator))
    finally:
        tracker.close()
    return index, failures
