"""Training files for the paper's uses of a corpus, streamed from :func:`records`: SimCSE triplets
(:func:`simcse_rows`, a random other source as negative) and SCPN triples (:func:`scpn_rows`, the
paraphrase's parse without words), written as CSV by :func:`write_csv`. Each keeps paraphrases at or
below the paper's perplexity threshold for that use (:data:`THRESHOLDS`); a pair that cannot be
written is a failure row, never dropped silently.

>>> recs = [{"text": f"Sentence {i}.", "paraphrases": [{"para_text": f"Para {i}.", "perplexity": 50.0 * i}]}
...         for i in range(1, 5)]
>>> rows = list(simcse_rows(((f"row {i}", r) for i, r in enumerate(recs)), max_perplexity=110, seed=0))
>>> [r.values for r in rows]  # perplexity 50 and 100 kept; the negatives: other sources
[('Sentence 1.', 'Para 1.', 'Sentence 4.'), ('Sentence 2.', 'Para 2.', 'Sentence 4.')]
>>> linearize(read_tree("(ROOT (S (NP (PRP I)) (VP (VBP know) (NP (PRP it))) (. .)))"))
'(ROOT (S (NP (PRP)) (VP (VBP) (NP (PRP))) (.)))'
"""

from __future__ import annotations

import csv
import random
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraamr.errors import InputError, check_splits
from paraamr.filters import PAPER_USES, Filters
from paraamr.metrics.trees import Tree, read_tree
from paraamr.network import load_hub_dataset
from paraamr.options import check_number
from paraamr.records import normalize
from paraamr.texts import refuse_one_string

__all__ = [
    "SCPN_COLUMNS",
    "SIMCSE_COLUMNS",
    "THRESHOLDS",
    "Row",
    "linearize",
    "records",
    "scpn_rows",
    "simcse_rows",
    "write_csv",
]

#: SimCSE's supervised training CSV: anchor, positive, hard negative.
SIMCSE_COLUMNS = ("sent0", "sent1", "hard_neg")
#: SCPN's triple: the source, the target's parse (no words), the target paraphrase.
SCPN_COLUMNS = ("source", "target_parse", "paraphrase")
#: The paper's perplexity threshold per use: sentence embeddings 110, controlled generation 85.
THRESHOLDS = {"simcse": PAPER_USES["embeddings"], "scpn": PAPER_USES["controlled"]}
#: Sources a negative is drawn from: a uniform sample of those read so far, of at most this many.
POOL_SIZE = 100_000
#: Records read ahead of the one whose negatives are drawn (so the first ones have a pool too).
AHEAD = 10_000
#: Draws before a negative is chosen among the pool's other texts alone (every text drawn was the
#: source or the paraphrase).
TRIES = 64


@dataclass(frozen=True)
class Row:
    """One (source, paraphrase) pair of the input: the file's values, or why it has none."""

    where: str
    text: str
    para_text: str
    values: tuple[str, ...] | None = None
    stage: str = ""
    reason: str = ""

    def failure(self) -> dict[str, str]:
        """The failure row of a pair that could not be written."""
        return {k: getattr(self, k) for k in ("where", "text", "para_text", "stage", "reason")}


def records(
    spec: str,
    *,
    config: str | None = None,
    splits: Sequence[str] | None = None,
    limits: Any = None,
    skipped: Any = None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, record)`` of each source of ``spec``, streamed, in the ``default`` shape.

    A local file or folder is read by :mod:`paraamr.sources` (``limits`` caps what an archive may
    unpack; with ``skipped``, a :class:`~paraamr.sources.Skipped`, a malformed line is counted
    there instead of ending the run); any other name is a Hub dataset, streamed by
    ``datasets.load_dataset`` (``config``; a ``pairs`` row is a record of one paraphrase).
    ``splits`` keeps those splits (all by default); a split that is not there is an error naming
    the ones that are.
    """
    from paraamr.layout import unchanged
    from paraamr.sources import RELEASE_SUFFIXES, iter_records, parse_line, split_files

    splits = [splits] if isinstance(splits, str) else splits  # one split, not its letters
    path = Path(spec)
    if path.exists():
        with unchanged(path):
            files = split_files(path)
            check_splits(spec, splits, list(files))
            for split in splits or list(files):
                for file in files[split]:
                    reading = {"limits": limits, "skip_invalid": skipped is not None, "skipped": skipped}
                    for key, record in iter_records(file, **reading):
                        yield f"{file}, {key}", record
        return
    if spec.startswith(("/", "./", "../", "~")) or path.suffix.lower() in (*RELEASE_SUFFIXES, ".csv", ".tsv"):
        raise InputError(f"{spec}: no such file or folder")
    loaded = load_hub_dataset(spec, config, detail=f" (config {config or 'default'})", streaming=True)
    check_splits(spec, splits, list(loaded))
    for split in splits or list(loaded):
        for i, row in enumerate(loaded[split]):
            where = f"{spec} ({split}) row {i}"
            if "para_text" in row and "paraphrases" not in row:
                row = {"text": row.get("text"), "paraphrases": [row]}
            try:
                yield where, parse_line(row)
            except ValueError as err:
                raise InputError(f"{where}: {err}") from None


def _kept(
    items: Iterable[tuple[str, dict[str, Any]]], max_perplexity: float | None, counts: dict[str, int]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Records with their paraphrases at or below ``max_perplexity``; ``counts["pairs"]`` and
    ``counts["kept"]`` count the pairs read and those kept."""

    def counted() -> Iterator[tuple[str, dict[str, Any]]]:
        for where, record in items:
            counts["pairs"] = counts.get("pairs", 0) + len(record["paraphrases"])
            yield where, record

    for where, record in Filters(max_perplexity=max_perplexity).iter_records(counted()):
        counts["kept"] = counts.get("kept", 0) + len(record["paraphrases"])
        yield where, record


def simcse_rows(
    items: Iterable[tuple[str, dict[str, Any]]],
    *,
    max_perplexity: float | None = THRESHOLDS["simcse"],
    seed: int = 0,
    pool_size: int = POOL_SIZE,
    ahead: int = AHEAD,
    counts: dict[str, int] | None = None,
) -> Iterator[Row]:
    """A :class:`Row` per kept (source, paraphrase) pair with values ``(source, paraphrase,
    negative)``: the negative a source text of the input, neither the source nor the paraphrase
    once normalized, drawn uniformly from a reservoir sample of up to ``pool_size`` sources read so
    far, the ``ahead`` records after the pair's own included. Reproducible by ``seed``."""
    pool_size = check_number(pool_size, "pool_size", kind=int, low=1)
    ahead = check_number(ahead, "ahead", kind=int, low=0)
    counts = {} if counts is None else counts
    rng = random.Random(seed)
    pool: list[str] = []
    seen: list[str] = []  # the pool's texts normalized
    kinds: Counter[str] = Counter()  # how many of each
    window: deque[tuple[str, dict[str, Any]]] = deque()

    def negative_for(avoid: set[str]) -> str | None:
        draws = (rng.randrange(len(pool)) for _ in range(TRIES if pool else 0))
        at = next((i for i in draws if seen[i] not in avoid), None)
        if at is None and len(pool) > sum(kinds[a] for a in avoid):  # mostly the pair's own: walk on
            start, n = rng.randrange(len(pool)), len(pool)  # from a random place to the next other text
            at = next(i % n for i in range(start, start + n) if seen[i % n] not in avoid)
        return None if at is None else pool[at]

    def emit(where: str, record: dict[str, Any]) -> Iterator[Row]:
        for k, para in enumerate(record["paraphrases"]):
            text, paraphrase = record["text"], para["para_text"]
            negative = negative_for({normalize(text), normalize(paraphrase)})
            at = f"{where}, paraphrase {k + 1}"
            if negative is None:
                yield Row(
                    at, text, paraphrase, stage="negative", reason="no other source to draw a negative from"
                )
            else:
                yield Row(at, text, paraphrase, (text, paraphrase, negative))

    read = 0
    for where, record in _kept(items, max_perplexity, counts):
        window.append((where, record))
        if _missing_in_csv([record["text"]]) is None:  # never a negative CSV readers take for a null
            read += 1
            slot = len(pool) if len(pool) < pool_size else rng.randrange(read)
            if slot < pool_size:
                kinds[new := normalize(record["text"])] += 1
                if slot == len(pool):
                    pool.append(record["text"])
                    seen.append(new)
                else:
                    kinds[seen[slot]] -= 1
                    pool[slot], seen[slot] = record["text"], new
        if len(window) > ahead:
            yield from emit(*window.popleft())
    while window:
        yield from emit(*window.popleft())


def linearize(tree: Tree) -> str:
    """A tree's bracket string without its words, as SCPN takes parses: ``(ROOT (S (NP (PRP)) ...)``."""
    parts: list[str] = []
    open_depths: list[int] = []
    for label, depth in zip(tree.labels, tree.depths, strict=True):
        while open_depths and open_depths[-1] >= depth:
            parts.append(")")
            open_depths.pop()
        parts.append(("(" if not parts else " (") + label)
        open_depths.append(depth)
    return "".join(parts) + ")" * len(open_depths)


def scpn_rows(
    items: Iterable[tuple[str, dict[str, Any]]],
    parser: Any,
    *,
    max_perplexity: float | None = THRESHOLDS["scpn"],
    batch_size: int = 256,
    counts: dict[str, int] | None = None,
) -> Iterator[Row]:
    """A :class:`Row` per kept (source, paraphrase) pair with values ``(source, target parse,
    paraphrase)``: the paraphrase parsed by ``parser`` (a :class:`paraamr.metrics.parsers.TreeParser`)
    in batches of ``batch_size`` pairs, its tree written by :func:`linearize`. A paraphrase the
    parser fails on is a failure row (stage ``parse``)."""
    counts = {} if counts is None else counts
    batch: list[Row] = []

    def flush() -> Iterator[Row]:
        trees = parser.parse([row.para_text for row in batch])
        parser.clear()
        for row, tree in zip(batch, trees, strict=True):
            try:
                parse = linearize(read_tree(tree, where="the paraphrase's parse"))  # (the row names where)
            except ValueError as err:
                yield Row(row.where, row.text, row.para_text, stage="parse", reason=str(err))
            else:
                yield Row(row.where, row.text, row.para_text, (row.text, parse, row.para_text))
        batch.clear()

    for where, record in _kept(items, max_perplexity, counts):
        for k, para in enumerate(record["paraphrases"]):
            batch.append(Row(f"{where}, paraphrase {k + 1}", record["text"], para["para_text"]))
            if len(batch) >= batch_size:
                yield from flush()
    if batch:
        yield from flush()


def _check_fit(row: Row, columns: Sequence[str]) -> None:
    """Refuse the values of ``row`` when they do not fit the header ``columns`` one to one."""
    refuse_one_string(row.values, f"{row.where}: values")
    if len(row.values) != len(columns):
        raise ValueError(
            f"{row.where}: {len(row.values)} values for the {len(columns)} columns {', '.join(columns)}; "
            "nothing written"
        )


def _missing_in_csv(values: Sequence[str | None]) -> str | None:
    """The ``repr`` of a value CSV readers take for a missing one (None, written as an empty field;
    pandas' ``NA``, ``null``, ``nan``, an empty field, ...: what ``load_dataset("csv")`` reads as
    None), or None."""
    from pandas.io.parsers.readers import STR_NA_VALUES

    return next((repr(v) for v in values if v is None or v in STR_NA_VALUES), None)


def write_csv(
    rows: Iterable[Row],
    output: str | Path,
    columns: Sequence[str],
    *,
    failures: Any,
    empty: Callable[[], str] | None = None,
) -> int:
    """Write ``rows``' values under the header ``columns`` as CSV (UTF-8) to ``output`` atomically;
    rows without values, and rows with a value a CSV reader would read as missing, go to
    ``failures.append``. Returns the rows written. With no row to write, ``empty`` (when given)
    makes the message of an :class:`InputError` and nothing is written. A row whose values do not
    fit the header (more or fewer) is a ValueError naming it, and nothing is written.

    >>> import tempfile
    >>> rows = [Row("r1", "a", "b", ("a", "b", "c")), Row("r2", "a", "b", ("a", "b"))]
    >>> write_csv(rows, Path(tempfile.mkdtemp()) / "o.csv", SIMCSE_COLUMNS, failures=[])
    Traceback (most recent call last):
    ...
    ValueError: r2: 2 values for the 3 columns sent0, sent1, hard_neg; nothing written
    """
    from paraamr.atomic import atomic_file

    refuse_one_string(columns, "columns")
    written = 0
    with atomic_file(output) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        quoted = csv.writer(f, lineterminator="\n", quoting=csv.QUOTE_ALL)  # csv quotes only "\n" here
        writer.writerow(columns)
        for row in rows:
            if row.values is not None:
                _check_fit(row, columns)
            missing = _missing_in_csv(row.values) if row.values is not None else None
            if row.values is None or missing is not None:
                why = (
                    {"stage": "csv", "reason": f"{missing} reads back as a missing value"}
                    if missing is not None
                    else {}
                )
                failures.append({**row.failure(), **why})
                continue
            (quoted if any("\r" in value for value in row.values) else writer).writerow(row.values)
            written += 1
        if not written and empty is not None:
            raise InputError(empty())
    return written
