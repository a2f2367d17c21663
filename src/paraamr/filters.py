"""Filters of ParaAMR records, vectorized with Arrow: behind the ``ParaAMR`` builder,
:func:`paraamr.sources.select` and :func:`filter_records` (what ``datasets`` loaded, both configs).

The paper keeps paraphrases of perplexity at most 120 in general, 110 for sentence embeddings and
few-shot learning, and 85 for syntactically controlled generation (:data:`PAPER_USES`, ``use=``);
the release, like ``paraamr generate`` by default, keeps every paraphrase with its perplexity.

>>> import datasets
>>> ds = datasets.Dataset.from_list([
...     {"id": "a", "text": "t", "paraphrases": [{"para_text": "x", "perplexity": 125.0},
...                                               {"para_text": "y", "perplexity": 96.5}]},
...     {"id": "b", "text": "u", "paraphrases": [{"para_text": "z", "perplexity": 130.0}]}])
>>> [[p["para_text"] for p in row["paraphrases"]] for row in filter_records(ds, max_perplexity=120)]
[['y'], []]
>>> list(filter_records(ds, max_perplexity=120, min_paraphrases=1)["id"])
['a']
>>> [[p["para_text"] for p in row["paraphrases"]] for row in filter_records(ds, use="controlled")]
[[], []]
>>> pairs = datasets.Dataset.from_list([{"id": "a", "para_text": "x", "perplexity": 125.0},
...     {"id": "a", "para_text": "y", "perplexity": 96.5}, {"id": "b", "para_text": "z", "perplexity": 90.0}])
>>> list(filter_records(pairs, max_perplexity=120, min_paraphrases=1)["para_text"])
['y', 'z']
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from paraamr.options import check_number

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = ["ORDERS", "PAPER_THRESHOLDS", "PAPER_USES", "Filters", "filter_records", "perplexity_limit"]

#: Orders of a source's paraphrases (see :class:`Filters`).
ORDERS = ("given", "perplexity")
#: The paper's perplexity thresholds: in general; sentence embeddings and few-shot; controlled generation.
PAPER_THRESHOLDS = (120, 110, 85)
#: The paper's threshold of each use (``use=``): paraphrases in general, sentence embeddings
#: (SimCSE), few-shot augmentation, syntactically controlled generation.
PAPER_USES = {"general": 120.0, "embeddings": 110.0, "few-shot": 110.0, "controlled": 85.0}

Data = TypeVar("Data")


def perplexity_limit(max_perplexity: float | None = None, use: str | None = None) -> float | None:
    """The perplexity threshold of ``max_perplexity`` or of the paper's ``use``, not both.

    >>> perplexity_limit(use="embeddings"), perplexity_limit(90), perplexity_limit()
    (110.0, 90, None)
    """
    if use is None:
        return max_perplexity
    if use not in PAPER_USES:
        raise ValueError(f"use must be one of {', '.join(PAPER_USES)} (the paper's thresholds), got {use!r}")
    if max_perplexity is not None:
        raise ValueError(
            f"give max_perplexity or use, not both (use={use!r} is max_perplexity={PAPER_USES[use]:g})"
        )
    return PAPER_USES[use]


@dataclass(frozen=True)
class Filters:
    """Which paraphrases of a source are kept, in which order, and which sources.

    ``max_perplexity``: keep paraphrases with perplexity <= it; ``min_similarity``: keep those with
    similarity >= it (compared as stored, float32); a null score fails any threshold. ``order``:
    ``"given"`` keeps the file's (generation) order, ``"perplexity"`` sorts by perplexity, lowest
    first (stable, nulls last); then the first ``max_paraphrases`` are kept; a source left with
    fewer than ``min_paraphrases`` is dropped (the default 0 keeps sources left with none).

    >>> Filters(max_perplexity=-1)
    Traceback (most recent call last):
    ...
    ValueError: max_perplexity must be a finite number >= 0 or None, got -1
    """

    max_perplexity: float | None = None
    min_similarity: float | None = None
    min_paraphrases: int = 0
    max_paraphrases: int | None = None
    order: str = "given"

    def __post_init__(self) -> None:
        # numpy scalars are stored as Python numbers
        values = {
            "max_perplexity": check_number(self.max_perplexity, "max_perplexity", low=0, none=True),
            "min_similarity": check_number(self.min_similarity, "min_similarity", low=-1, high=1, none=True),
            "min_paraphrases": check_number(self.min_paraphrases, "min_paraphrases", kind=int, low=0),
            "max_paraphrases": check_number(
                self.max_paraphrases, "max_paraphrases", kind=int, low=1, none=True
            ),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)
        low, high = self.min_paraphrases, self.max_paraphrases
        if high is not None and low > high:
            raise ValueError(
                f"min_paraphrases ({low}) is more than max_paraphrases ({high}): no source could be kept"
            )
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {self.order!r}")

    @property
    def grouped(self) -> bool:
        """Whether a source's paraphrases must be seen together (in ``pairs``: its rows)."""
        return self.min_paraphrases > 0 or self.max_paraphrases is not None or self.order != "given"

    @property
    def pair_columns(self) -> tuple[str, ...]:
        """The columns a ``pairs`` table must have for these filters."""
        return ("id", "perplexity") if self.grouped else ("perplexity",)

    @property
    def active(self) -> bool:
        """Whether any filter is set (else every record is kept as it is)."""
        return self.grouped or self.max_perplexity is not None or self.min_similarity is not None

    def keep(
        self, parents: np.ndarray, perplexity: pa.Array, similarity: pa.Array | None, sources: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(indices kept, count kept per source)`` of paraphrases given flat, ``parents[i]`` the
        source of the i-th (non-decreasing); ``min_paraphrases`` is not applied here.

        >>> import numpy as np, pyarrow as pa
        >>> Filters(max_perplexity=100, order="perplexity").keep(
        ...     np.array([0, 0, 0, 1]), pa.array([90.0, 120.0, 80.0, None]), None, 3)
        (array([2, 0]), array([2, 0, 0]))
        """
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        perplexity = _numbers(perplexity, "perplexity")
        similarity = None if similarity is None else _numbers(similarity, "similarity")  # float32 exactly
        mask = np.ones(len(parents), dtype=bool)
        if self.max_perplexity is not None:
            mask &= _true(pc.less_equal(perplexity, pa.scalar(float(self.max_perplexity))))
        if self.min_similarity is not None:
            if len(similarity) and similarity.null_count == len(similarity):
                warnings.warn(
                    f"min_similarity={self.min_similarity}: none of {len(similarity):,} paraphrases has a "
                    "similarity score, so none is kept (unscored ones fail it): is the corpus scored?",
                    stacklevel=2,
                )
            mask &= _true(pc.greater_equal(similarity, pa.scalar(float(self.min_similarity))))
        index = np.flatnonzero(mask)
        if self.order == "perplexity":
            values = perplexity.take(pa.array(index))
            nulls = values.is_null().to_numpy(zero_copy_only=False)
            numbers = pc.fill_null(values, 0.0).to_numpy(zero_copy_only=False)
            index = index[np.lexsort((numbers, nulls, parents[index]))]  # stable: ties keep their order
        counts = np.bincount(parents[index], minlength=sources)
        if self.max_paraphrases is not None and len(index):
            rank = np.arange(len(index)) - np.repeat(np.cumsum(counts) - counts, counts)
            index = index[rank < self.max_paraphrases]
            counts = np.minimum(counts, self.max_paraphrases)
        return index, counts

    def records(self, table: pa.Table) -> pa.Table:
        """The rows of a ``default`` table (one per source) kept, their paraphrases filtered."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        _require(table.column_names, "default", ("paraphrases",))
        position = table.column_names.index("paraphrases")
        paras = table.column(position).combine_chunks()
        flat = paras.flatten()
        parents = pc.list_parent_indices(paras).to_numpy(zero_copy_only=False)
        scores = self._scores(flat)
        index, counts = self.keep(parents, *scores, len(table))
        wide = pa.types.is_large_list(paras.type)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64 if wide else np.int32)
        kept = type(paras).from_arrays(pa.array(offsets), flat.take(pa.array(index)), type=paras.type)
        table = table.set_column(position, table.schema.field(position), kept)
        return table.filter(pa.array(counts >= self.min_paraphrases)) if self.min_paraphrases else table

    def pair_rows(self, table: pa.Table) -> np.ndarray:
        """The indices of the rows of a ``pairs`` table kept, in kept order. With :attr:`grouped`
        filters a source is all rows of one ``id`` (without one, of one ``text``), wherever they are:
        its kept rows come out together, where its first row was."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        _require(table.column_names, "pairs", self.pair_columns)
        scores = [table.column(c).combine_chunks() if c in table.column_names else None for c in _SCORES]
        self._check_scores(scores[1] is not None)
        if not (self.grouped and len(table)):
            return self.keep(np.arange(len(table)), *scores, len(table))[0]
        ids = table.column("id").cast(pa.large_string()).combine_chunks()  # millions may pass 2 GiB
        if ids.null_count and "text" in table.column_names:  # no id: the text names the source
            texts = table.column("text").cast(pa.large_string()).combine_chunks()
            ids = pc.coalesce(ids, pc.utf8_replace_slice(texts, 0, 0, "\0"))
        ids = pc.dictionary_encode(pc.fill_null(ids, "\0"))
        codes = ids.indices.to_numpy(zero_copy_only=False)  # numbered by first appearance
        order = np.argsort(codes, kind="stable")
        take = pa.array(order)
        scores = [None if c is None else c.take(take) for c in scores]
        index, counts = self.keep(codes[order], *scores, len(ids.dictionary))
        if self.min_paraphrases:
            index = index[np.repeat(counts >= self.min_paraphrases, counts)]
        return order[index]

    def pairs(self, table: pa.Table) -> pa.Table:
        """The rows of a ``pairs`` table kept (see :meth:`pair_rows`)."""
        return table.take(self.pair_rows(table))

    def iter_records(
        self, items: Iterable[tuple[Any, dict[str, Any]]], batch_size: int = 1000
    ) -> Iterator[tuple[Any, dict[str, Any]]]:
        """``(key, record)`` of each ``default`` record (a dict) kept, its paraphrases filtered, in
        batches of ``batch_size``."""
        if not self.active:
            yield from items
            return
        items = iter(items)
        while batch := list(itertools.islice(items, batch_size)):
            yield from self._kept_batch(batch)

    def _kept_batch(self, batch: list[tuple[Any, dict[str, Any]]]) -> Iterator[tuple[Any, dict[str, Any]]]:
        import numpy as np
        import pyarrow as pa

        paras = [record["paraphrases"] or [] for _key, record in batch]
        lengths = np.fromiter((len(p) for p in paras), dtype=np.int64, count=len(paras))
        parents = np.repeat(np.arange(len(paras)), lengths)
        flat = [para for ps in paras for para in ps]
        perplexity = pa.array([p.get("perplexity") for p in flat], pa.float64())
        similarity = None
        if self.min_similarity is not None:  # float32, as stored (and as a folder's column compares)
            similarity = pa.array([p.get("similarity") for p in flat], pa.float32())
        index, counts = self.keep(parents, perplexity, similarity, len(paras))
        ends = np.cumsum(counts)
        for (key, record), end, count in zip(batch, ends.tolist(), counts.tolist(), strict=True):
            if count >= self.min_paraphrases:
                yield key, {**record, "paraphrases": [flat[i] for i in index[end - count : end].tolist()]}

    def _scores(self, flat: pa.Array) -> tuple[pa.Array, pa.Array | None]:
        import pyarrow.compute as pc

        names = set(flat.type.names) if hasattr(flat.type, "names") else set()
        if "perplexity" not in names:
            raise ValueError(f"paraphrases have no perplexity field (fields: {sorted(names)})")
        self._check_scores("similarity" in names)
        similarity = pc.struct_field(flat, "similarity") if "similarity" in names else None
        return pc.struct_field(flat, "perplexity"), similarity

    def _check_scores(self, has_similarity: bool) -> None:
        if self.min_similarity is not None and not has_similarity:
            raise ValueError("min_similarity: the paraphrases have no similarity scores")


_SCORES = ("perplexity", "similarity")


def _numbers(values: pa.Array, name: str) -> pa.Array:
    """A score column as float64 (one that only ever held nulls is typed null: all null); a
    ValueError for text or another type, which no threshold or order can read.

    >>> import pyarrow as pa
    >>> _numbers(pa.array([None, None]), "perplexity").type
    DataType(double)
    >>> _numbers(pa.array(["50"]), "perplexity")
    Traceback (most recent call last):
    ...
    ValueError: the paraphrases' perplexity is string, not numbers: cast the column first
    """
    import pyarrow as pa

    kind = values.type
    if not (pa.types.is_null(kind) or pa.types.is_floating(kind) or pa.types.is_integer(kind)):
        raise ValueError(f"the paraphrases' {name} is {kind}, not numbers: cast the column first")
    return values.cast(pa.float64())


def _true(mask: pa.Array) -> np.ndarray:
    """A boolean Arrow array as numpy, nulls false."""
    import pyarrow.compute as pc

    return pc.fill_null(mask, False).to_numpy(zero_copy_only=False)


def _require(names: list[str], config: str, needed: Iterable[str]) -> None:
    missing = [name for name in needed if name not in names]
    if missing:
        raise ValueError(f"not a ParaAMR {config!r} table: no column {', '.join(missing)} (columns: {names})")


def _config(names: list[str] | None) -> str:
    """``default`` or ``pairs``, from a dataset's column names."""
    if names and "paraphrases" in names:
        return "default"
    if names and "para_text" in names:
        return "pairs"
    raise ValueError(
        "filter_records: not a ParaAMR dataset: expected a 'paraphrases' column (config default) or "
        f"'para_text' (config pairs), got columns {names}"
    )


def filter_records(
    data: Data,
    *,
    max_perplexity: float | None = None,
    use: str | None = None,
    min_paraphrases: int = 0,
    min_similarity: float | None = None,
    max_paraphrases: int | None = None,
    order: str = "given",
    batch_size: int = 1000,
    num_proc: int | None = None,
    desc: str | None = "filter_records",
) -> Data:
    """Filter a loaded ParaAMR dataset as the builder's options do (``ParaAMR(max_perplexity=...)``,
    :class:`Filters`), like ``Dataset.filter`` for paraphrases.

    Config ``default``: each row's paraphrases are filtered; rows left with fewer than
    ``min_paraphrases`` go. Config ``pairs``: a source is all rows of one ``id`` (without one, of
    one ``text``), wherever they are (its rows come out together, where its first row was).

    Args:
        data: a ``datasets`` ``Dataset``, ``DatasetDict``, ``IterableDataset`` or
            ``IterableDatasetDict`` of config ``default`` or ``pairs``.
        max_perplexity: keep paraphrases of perplexity at most this.
        use: the paper's threshold of a use instead of ``max_perplexity`` (:data:`PAPER_USES`).
        min_paraphrases: drop a source left with fewer paraphrases (0 keeps every source).
        min_similarity: keep paraphrases whose similarity to the source is at least this, in [-1, 1].
        max_paraphrases: keep at most this many paraphrases per source, after ``order``.
        order: ``"given"`` (generation order) or ``"perplexity"`` (lowest first).
        batch_size: rows per Arrow batch (config ``default``).
        num_proc: processes for the work, as in ``Dataset.filter`` (config ``default`` of a
            ``Dataset``; a streamed dataset filters lazily, in the reading process).
        desc: the progress bar's label, as in ``Dataset.filter`` (``None``: datasets' own).

    Returns:
        The same kind of object as ``data``, with the same columns and format. A streamed
        ``pairs`` dataset takes only ``max_perplexity`` and ``min_similarity``; the others raise
        ``ValueError`` (stream ``default`` instead).

    Example:

    ```py
    >>> import datasets
    >>> from paraamr import filter_records
    >>> ds = datasets.Dataset.from_list([{"id": "a", "text": "He left.", "paraphrases": [
    ...     {"para_text": "He went away.", "perplexity": 60.0},
    ...     {"para_text": "Left, he.", "perplexity": 300.0}]}])
    >>> kept = filter_records(ds, max_perplexity=120, num_proc=1, desc="ppl <= 120")
    >>> [p["para_text"] for p in kept[0]["paraphrases"]]
    ['He went away.']

    ```
    """
    import datasets

    limit = perplexity_limit(max_perplexity, use)
    rules = Filters(limit, min_similarity, min_paraphrases, max_paraphrases, order)
    batch_size = check_number(batch_size, "batch_size", kind=int, above=0)
    options = {"batch_size": batch_size, "num_proc": num_proc, "desc": desc}
    if isinstance(data, (datasets.DatasetDict, datasets.IterableDatasetDict)):
        return type(data)({split: _filter(ds, rules, **options) for split, ds in data.items()})
    return _filter(data, rules, **options)


def _filter(ds: Data, rules: Filters, *, batch_size: int, num_proc: int | None, desc: str | None) -> Data:
    import datasets

    if not isinstance(ds, (datasets.Dataset, datasets.IterableDataset)):
        raise TypeError(
            f"filter_records: expected a datasets Dataset or IterableDataset, got {type(ds).__name__}"
        )
    if ds.features is None:  # a streamed dataset after .map(): its rows cannot be read as Arrow
        raise ValueError(
            "filter_records: this streamed dataset's features are unknown (as after .map()), so its "
            "rows cannot be filtered in Arrow batches: filter it before mapping"
        )
    config = _config(ds.column_names)
    if isinstance(ds, datasets.Dataset):
        if config == "pairs":
            _require(ds.column_names, "pairs", rules.pair_columns)  # (named among all the columns)
            columns = [c for c in ("id", "text", *_SCORES) if c in ds.column_names]
            return ds.select(rules.pair_rows(ds.with_format("arrow", columns=columns)[:]))
        form = ds.format
        kept = ds.with_format("arrow").map(
            rules.records,
            batched=True,
            batch_size=batch_size,
            features=ds.features,
            num_proc=num_proc,
            desc=desc,
        )
        return kept.with_format(
            form["type"], form["columns"], form["output_all_columns"], **form["format_kwargs"]
        )
    if config == "pairs" and rules.grouped:
        unset = Filters()
        given = [
            f"{name}={getattr(rules, name)!r}"
            for name in ("min_paraphrases", "max_paraphrases", "order")
            if getattr(rules, name) != getattr(unset, name)
        ]
        raise ValueError(
            f"filter_records: {', '.join(given)} need{'s' if len(given) == 1 else ''} all rows of a "
            "source together, which a streamed 'pairs' dataset cannot promise (they may span batches, "
            "shards and workers): stream the 'default' config (one row per source) or load 'pairs' "
            "without streaming"
        )
    form = ds._formatting.format_type if ds._formatting else None
    method = rules.records if config == "default" else rules.pairs
    kept = ds.with_format("arrow").map(method, batched=True, batch_size=batch_size, features=ds.features)
    return kept.with_format(form)
