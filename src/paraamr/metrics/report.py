"""The Table-2 row of a corpus: semantic similarity, 1-BLEU, 1-∩/∪, TED-3, TED-F over its pairs.

Pairs come from a release file, a dataset folder, JSON lines of pairs or a pair file
(``.tsv``/``.txt``/``.csv``) in a layout of :data:`PAIR_LAYOUTS`; a pair that cannot be scored is
a failure row, never dropped silently.

>>> import io
>>> pairs = read_two_columns(io.StringIO("source\\tparaphrase\\nI know it.\\tIt is known.\\n"), name="x.tsv")
>>> pairs[0].where, pairs[0].source, pairs[0].paraphrase, pairs[0].index
('x.tsv, line 2', 'I know it.', 'It is known.', 0)
>>> bank = read_two_columns(io.StringIO("0.93\\tI know it.\\tIt is known.\\tKnown.\\n"), name="pb.tsv")
>>> [(p.where, p.paraphrase) for p in bank]
[('pb.tsv, line 1, paraphrase 1', 'It is known.'), ('pb.tsv, line 1, paraphrase 2', 'Known.')]
>>> [p.paraphrase for p in read_two_columns(io.StringIO("I know it.\\tIt is known.\\t0.81\\n"), name="n.txt")]
['It is known.']
>>> format_row({"pairs": 1, "semantic_similarity": 80.0, "bleu_diversity": 70.0, "jaccard_diversity": 60.0,
...             "ted3": 1.0, "tedf": 4.0}).splitlines()[2]
'| 1 | 80.00 | 70.00 | 60.00 | 1.00 | 4.00 |'
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

import numpy as np

from paraamr.errors import InputError, about, check_splits
from paraamr.metrics import signature
from paraamr.metrics.reference import bleu_from_statistics
from paraamr.metrics.sample import RESAMPLES, interval_signature, intervals
from paraamr.metrics.scoring import MEASURES, score_pairs
from paraamr.metrics.stats import RowStats
from paraamr.network import load_hub_dataset
from paraamr.options import check_number
from paraamr.plots import check_plot_files, claim_plots, figure
from paraamr.report import counted, json_text
from paraamr.sources import iter_records, split_files
from paraamr.texts import csv_rows

__all__ = [
    *("HEADERS", "PAIR_LAYOUTS", "REFERENCE_MEASURES", "TWO_COLUMN_SUFFIXES", "Pair", "card_note"),
    *("card_row", "check_plots", "describe", "evaluate_pairs", "format_row", "pair_layout"),
    *("plot_histograms", "plot_paths", "read_pairs", "read_two_columns", "row_of"),
    *("say_failures", "shard_summary", "signature_lines", "with_references", "attach_references"),
    *("check_references", "hub_pairs", "interval_cells", "iter_pairs", "iter_two_columns", "reference_lines"),
]

TWO_COLUMN_SUFFIXES = (".tsv", ".txt", ".csv")
HEADERS = (("source", "paraphrase"), ("text", "para_text"))


@dataclass(frozen=True)
class Pair:
    """A source and one of its paraphrases, with the place it came from."""

    where: str
    source: str
    paraphrase: str
    reference: str | None = None
    template: str | None = None
    index: int = 0  # position in the input's pairs
    id: str | None = None  # the record's id, when the input has records
    perplexity: float | None = None  # the paraphrase's, when the input has it


#: Pair-file layouts: the column of the source, of the first paraphrase, the columns a row may
#: have (several paraphrases where more than one count) and what they are.
PAIR_LAYOUTS = {
    "two-column": (0, 1, range(2, 3), "2 columns (source, paraphrase)"),
    "paranmt": (0, 1, range(3, 4), "3 columns (source, paraphrase, score)"),
    "parabank": (1, 2, range(3, 8), "a score, the source and 1 to 5 paraphrases"),
}


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def pair_layout(row: Sequence[str]) -> str:
    """The layout of a pair file from its first row: ``parabank`` (a score, the source, one to five
    paraphrases), ``paranmt`` (source, paraphrase, a score) or ``two-column`` (source, paraphrase).

    >>> pair_layout(["0.9", "a", "b"]), pair_layout(["a", "b", "0.5"]), pair_layout(["a", "b"])
    ('parabank', 'paranmt', 'two-column')
    """
    if len(row) >= 3 and _number(row[0]) and not _number(row[1]):
        return "parabank"
    if len(row) == 3 and _number(row[2]):
        return "paranmt"
    return "two-column"


def read_two_columns(f: IO[str], *, name: str, delimiter: str = "\t") -> list[Pair]:
    """The pairs of a pair file (optional header row, blank lines before it too), every row in its
    first row's layout; tabs alone split tab-separated lines (a ``"`` is text, as in ParaNMT's tokens).

    >>> import io
    >>> tokens = io.StringIO('" I know .\\tI do .\\nNo .\\tNot .\\n')  # ParaNMT's quote, unclosed
    >>> [(p.where, p.source) for p in read_two_columns(tokens, name="q")]
    [('q, line 1', '" I know .'), ('q, line 2', 'No .')]
    >>> headed = io.StringIO("\\nsource\\tparaphrase\\nsource\\tparaphrase\\nI know.\\tKnown.\\n")
    >>> [(p.where, p.source) for p in read_two_columns(headed, name="x.tsv")]  # one header, then pairs
    [('x.tsv, line 3', 'source'), ('x.tsv, line 4', 'I know.')]
    >>> spans = io.StringIO('"A\\nb.",C d.\\nE f.,G h.\\n')  # a quoted text over two lines
    >>> [p.where for p in read_two_columns(spans, name="m.csv", delimiter=",")]
    ['m.csv, line 1', 'm.csv, line 3']
    """
    return list(iter_two_columns(f, name=name, delimiter=delimiter))


def iter_two_columns(f: IO[str], *, name: str, delimiter: str = "\t") -> Iterator[Pair]:
    """:func:`read_two_columns`, one pair at a time (a row is read when its pairs are wanted)."""
    layout, seen = None, False
    index = 0
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    reader, last = csv.reader(f, delimiter=delimiter, quoting=quoting), 0
    for row in csv_rows(reader):
        number, last = last + 1, reader.line_num  # the row's first line (a quoted text spans lines)
        if not row:
            continue
        header = not seen and tuple(c.strip().lower() for c in row) in HEADERS  # the first row only
        seen = True
        if header:
            continue
        first_row, layout = layout is None, layout or pair_layout(row)
        source, first, columns, expected = PAIR_LAYOUTS[layout]
        if len(row) not in columns:
            got = f"got {counted(len(row), 'column')}"
            if first_row:  # no layout at all: say which there are
                known = "; ".join(e for *_, e in PAIR_LAYOUTS.values())
                raise InputError(f"{name}, line {number}: {got}, in none of the layouts read ({known})")
            raise InputError(f"{name}, line {number}: expected {expected} as on its first row, {got}")
        more = len(columns) > 1
        for k, paraphrase in enumerate(row[first:] if more else [row[first]], start=1):
            where = f"{name}, line {number}" + (f", paraphrase {k}" if more else "")
            yield Pair(where, row[source], paraphrase, index=index)
            index += 1


def read_pairs(path: str | os.PathLike, split: str | None = None) -> list[Pair]:
    """Every pair of a release file, a dataset folder (split ``split``, else all), a JSON lines file
    of pairs or a pair file (a file is split ``train``)."""
    return list(iter_pairs(path, split))


def iter_pairs(path: str | os.PathLike, split: str | None = None) -> Iterator[Pair]:
    """:func:`read_pairs`, one pair at a time, read when wanted (``index``: its place among them)."""
    path = Path(path)
    suffix = path.suffix.lower()
    pair_lines = suffix in (".jsonl", ".json") and path.is_file() and _starts_with_a_pair(path)
    one_file = pair_lines or (path.is_file() and suffix in TWO_COLUMN_SUFFIXES)
    splits = {"train": [path]} if one_file else split_files(path)
    check_splits(str(path), [split] if split else None, list(splits))
    if pair_lines:
        yield from _iter_pair_lines(path)
        return
    if one_file:
        with open(path, encoding="utf-8-sig", newline="") as f:  # a BOM (Excel) is no text
            yield from iter_two_columns(f, name=str(path), delimiter="," if suffix == ".csv" else "\t")
        return
    index = 0
    for name, files in splits.items():
        if split and name != split:
            continue
        for file in files:
            for key, record in iter_records(file, check_texts=False):  # each text: texts.text_problem
                for pair in _row_pairs(record, f"{file}, {key},", index):
                    yield pair
                    index += 1


def _starts_with_a_pair(path: Path) -> bool:
    """Whether the first line of the JSON lines file ``path`` is a pair (``para_text``), not a record."""
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        first = next((line for line in f if line.strip()), "")
    try:
        row = json.loads(first)
    except ValueError:
        return False
    return isinstance(row, dict) and "para_text" in row and "paraphrases" not in row


def _iter_pair_lines(path: Path) -> Iterator[Pair]:
    """The pairs of a JSON lines file of pairs (an empty text fails its pair when scored)."""
    index = 0
    with about(str(path)), open(path, encoding="utf-8-sig") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}, line {number}"
            try:
                row = json.loads(line)
            except ValueError as err:
                raise InputError(f"{where}: not JSON ({err})") from None
            texts = ("text", "para_text")
            if not (isinstance(row, dict) and all(isinstance(row.get(k), str) for k in texts)):
                raise InputError(f'{where}: not a pair (strings "text" and "para_text") as on its first line')
            try:  # as in a release line: a perplexity is positive (NaN and -20 would pass no filter rightly)
                ppl = check_number(row.get("perplexity"), '"perplexity"', above=0, none=True)
            except ValueError as err:
                raise InputError(f"{where}: {err}") from None
            known = row.get("id") if isinstance(row.get("id"), str) else None
            yield Pair(where, row["text"], row["para_text"], index=index, id=known, perplexity=ppl)
            index += 1


def _row_pairs(row: dict[str, Any], where: str, index: int) -> Iterator[Pair]:
    """The pairs of a record (``paraphrases``) or of a row of the ``pairs`` config, from ``index``."""
    found = [(where, row)] if "para_text" in row else [
        (f"{where} paraphrase {k}", para) for k, para in enumerate(row["paraphrases"], start=1)
    ]  # fmt: skip
    for k, (at, para) in enumerate(found, start=index):
        yield Pair(at, row["text"], para["para_text"], index=k, id=row.get("id"),
                   perplexity=para.get("perplexity"))  # fmt: skip


def card_row(result: dict[str, Any]) -> dict[str, float]:
    """The Table-2 row for a dataset card: each measure's column title and mean, and the pairs.

    >>> card_row({"pairs": 2, "semantic_similarity": 80.0, "bleu_diversity": 70.0,
    ...           "jaccard_diversity": 60.0, "ted3": 1.0, "tedf": 4.0})
    {'Pairs': 2, 'Semantic similarity': 80.0, '1-BLEU': 70.0, '1-∩/∪': 60.0, 'TED-3': 1.0, 'TED-F': 4.0}
    """
    return {"Pairs": result["pairs"], **{title: result[key] for key, title in MEASURES}}


def hub_pairs(repo_id: str, config: str | None = None, split: str = "train") -> Callable[[], Iterator[Pair]]:
    """``read()`` -> the pairs (records or ``pairs`` rows) of a split and config of the Hub dataset
    ``repo_id``, one at a time, as often as wanted: the dataset is loaded (memory-mapped) once, now."""
    where = f" (config {config or 'default'}, split {split})"
    rows = load_hub_dataset(repo_id, config, detail=where, split=split)
    name = f"{repo_id} ({config or 'default'}/{split})"

    def read() -> Iterator[Pair]:
        index = 0
        for i, row in enumerate(rows):
            if "para_text" not in row and "paraphrases" not in row:
                columns = ", ".join(row)
                raise InputError(f"{name}: expected columns text and para_text or paraphrases, got {columns}")
            for pair in _row_pairs(row, f"{name} row {i}", index):
                yield pair
                index += 1

    return read


def with_references(
    pairs: Sequence[Pair], references: str | os.PathLike | None, templates: str | os.PathLike | None = None
) -> list[Pair]:
    """``pairs`` with the reference (and template) of each from one-per-line files, in order."""
    check_references(len(pairs), references, templates)
    return list(attach_references(enumerate(pairs), references, templates))


def check_references(pairs: int, references: Any, templates: Any = None) -> None:
    """InputError unless each of the ``references`` and ``templates`` files (paths or None) has
    ``pairs`` lines."""
    for field, path in (("reference", references), ("template", templates)):
        lines = sum(1 for _ in reference_lines(path)) if path is not None else pairs
        if lines != pairs:
            raise InputError(f"{path}: {lines} lines for {pairs} pairs (one {field} per pair)")


def attach_references(
    numbered: Iterable[tuple[int, Pair]], references: Any, templates: Any = None
) -> Iterator[Pair]:
    """Each pair of ``(line, pair)`` (lines from 0, rising) with the reference (and template) on that
    line of its file, the files read in step, once (:func:`check_references` counted their lines)."""
    files = {k: reference_lines(v) for k, v in (("reference", references), ("template", templates)) if v}
    at = 0
    for line, pair in numbered:
        found = {field: next(itertools.islice(lines, line - at, None)) for field, lines in files.items()}
        at = line + 1
        yield replace(pair, **found) if found else pair


def reference_lines(path: str | os.PathLike) -> Iterator[str]:
    """The lines of a one-per-line file, read when wanted: ended by ``\\n``, ``\\r\\n`` or ``\\r`` (not
    U+2028, ``\\f``, ...) or by the end of the file; errors name ``path``, not the pairs' input.

    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "refs.txt"
    >>> list(reference_lines(f)) if f.write_bytes("a\\u2028b\\r\\n\\nc".encode()) else None
    ['a\\u2028b', '', 'c']
    """
    with about(path), open(path, encoding="utf-8-sig") as f:
        try:
            yield from (line[:-1] if line.endswith("\n") else line for line in f)
        except UnicodeDecodeError:  # read at once, as before: the bad byte's offset in the whole file
            Path(path).read_text(encoding="utf-8-sig")
            raise


#: AESOP's measures against references and templates: key, column title.
REFERENCE_MEASURES = (
    ("bleu", "BLEU"),
    ("rouge1", "ROUGE-1"),
    ("rouge2", "ROUGE-2"),
    ("rougeL", "ROUGE-L"),
    ("meteor", "METEOR"),
    ("ted_r", "TED-R"),
    ("ted_e", "TED-E"),
)


def row_of(stats: RowStats, *, seed: int = 0, unit: str = "sources") -> dict[str, Any]:
    """The row of merged statistics: pairs, means, failures, signatures and timings, and with
    clusters (a sample) the ``intervals`` and their signature."""
    row: dict[str, Any] = {"pairs": stats.pairs, **{m: stats.mean(m) for m in stats.measures}}
    if stats.bleu is not None:
        row["bleu"] = _bleu(stats.bleu)
    row["failures"] = stats.failures
    row["signatures"] = dict(stats.signatures)
    if stats.clusters is not None:
        n = 1 + len(stats.measures)
        width = n + (len(stats.bleu) if stats.bleu is not None else 0)
        table = np.array([stats.clusters[k] for k in sorted(stats.clusters)], dtype=float).reshape(-1, width)
        extra = {"bleu": (slice(n, n + len(stats.bleu)), _bleu)} if stats.bleu is not None else None
        row["intervals"] = intervals(table, stats.measures, seed=seed, extra=extra)
        row["clusters"] = len(stats.clusters)
        row["signatures"]["interval"] = str(signature(interval_signature(unit, seed)))
    row["timings"] = stats.timings
    return row


def _bleu(stats: Sequence[float]) -> float:
    return bleu_from_statistics(stats)[0]


def evaluate_pairs(
    pairs: Sequence[Pair], *, clusters: dict[int, int] | None = None, seed: int = 0, **options: Any
) -> dict[str, Any]:
    """The row of ``pairs`` (:func:`~paraamr.metrics.scoring.score_pairs` with ``options``) with the
    per-pair ``scores`` and ``distinct_sentences``; ``clusters``: each pair's source by index."""
    scored = score_pairs(pairs, **options)
    extra = {"scores": scored.scores, "distinct_sentences": scored.distinct_sentences}
    return {**row_of(scored.stats(clusters=clusters), seed=seed), **extra}


def card_note(result: dict[str, Any], settings: dict[str, Any]) -> str:
    """The note under the row in a card: how many pairs, drawn how, on which scale, the intervals."""
    options, selection = settings["options"], settings.get("selection")
    sample, unit, total = options["sample"], settings["unit"], settings.get("sources")
    drawn = f" of split {options['split']}" if options.get("split") else ""
    if sample:  # as many as there are when --sample asked for more
        drawn += f", {min(sample, total or sample):,}{f' of {total:,}' if total else ''} {unit} drawn"
        drawn += f" with seed {options['seed']}"
    if selection is not None:  # (the card's statistics count every pair: say which were scored)
        kept = f"; {n:,} without a perplexity kept" if (n := selection.get("without_perplexity")) else ""
        drawn += (
            f", those whose paraphrase has perplexity at most {options['max_perplexity']:g} "
            f"({selection['dropped']:,} of {selection['input_pairs']:,} left out{kept})"
        )
    note = f"Computed with `paraamr evaluate` over {result['pairs']:,} pairs{drawn}"
    note += "; scores ×100, TED unnormalized."
    intervals = (result.get("intervals") or {}).items()
    titles = dict(MEASURES + REFERENCE_MEASURES)  # the table's names, not the keys
    spans = [f"{titles.get(k, k)} {lo:.2f}–{hi:.2f}" for k, (lo, hi) in intervals if lo is not None]
    if spans:  # none from a single source
        note += f" 95% intervals (cluster bootstrap over sources): {', '.join(spans)}."
    return note


def format_row(result: dict[str, Any]) -> str:
    """The row as a Markdown table, AESOP's measures in a second one, each with its intervals."""
    lines = []
    intervals = result.get("intervals") or {}
    for measures in (MEASURES, tuple((k, t) for k, t in REFERENCE_MEASURES if k in result)):
        if measures:
            lines += [
                "| pairs | " + " | ".join(title for _, title in measures) + " |",
                "|" + "---|" * (len(measures) + 1),
                f"| {result['pairs']:,} | " + " | ".join(f"{result[k]:.2f}" for k, _ in measures) + " |",
            ]
            if intervals:
                lines.append("| 95% CI | " + interval_cells(intervals, measures) + " |")
            lines.append("")
    return "\n".join(lines[:-1])


def interval_cells(intervals: dict[str, Any], measures: Sequence[tuple[str, str]]) -> str:
    """The ``low–high`` cells of a table's ``95% CI`` row (``n/a`` where a measure has none).

    >>> interval_cells({"ted3": [1.0, 2.5], "tedf": [None, None]}, [("ted3", "TED-3"), ("tedf", "TED-F")])
    '1.00–2.50 | n/a'
    """
    spans = (intervals[k] for k, _ in measures)
    return " | ".join("n/a" if lo is None else f"{lo:.2f}–{hi:.2f}" for lo, hi in spans)


def signature_lines(result: dict[str, Any]) -> list[str]:
    """A ``key: signature`` line per signature of ``result``, then the scale of the scores."""
    lines = [f"{key}: {sig}" for key, sig in result["signatures"].items()]
    return [*lines, "scale: similarity, 1-BLEU and 1-∩/∪ ×100; TED unnormalized"]


def describe(result: dict[str, Any], *, sources: int | None = None) -> str:
    """What ``paraamr evaluate`` prints: the row, signatures, scale, intervals and files written."""
    lines = [format_row(result), "", *signature_lines(result)]
    if "intervals" in result:
        unit, clusters = result.get("unit", "sources"), result["clusters"]
        of = f" of {sources:,} {unit}" if sources is not None else ""
        drawn = min(result["sample"], sources) if result.get("sample") and sources is not None else clusters
        over = f"the {clusters:,} {unit} drawn{of}"
        if drawn > clusters:  # a source whose pairs all failed is in no resample
            over = f"the {clusters:,} of the {drawn:,} {unit} drawn{of.replace(' of ', ' (of ', 1)}"
            over += f"{')' if of else ''} {'that have a pair ' * (unit == 'sources')}scored"
            over += f" ({drawn - clusters:,} drawn had none)"
        lines.append(
            f"95% CI: cluster bootstrap over {over} "
            f"({RESAMPLES:,} resamples, percentile, seed {result.get('seed', 0)})"
        )
    lines += [f"wrote {path}" for path in result.get("plots", [])]
    if "card" in result:
        lines.append(f"wrote the row into {result['card']}")
    return "\n".join(lines)


def say_failures(failures: Iterable[dict[str, Any]]) -> None:
    """One line on stderr for each failure row: ``paraamr evaluate: left out WHERE: STAGE: REASON``."""
    for f in failures:
        print(f"paraamr evaluate: left out {f['where']}: {f['stage']}: {f['reason']}", file=sys.stderr)


def shard_summary(stats: RowStats, *, shard: tuple[int, int], folder: Any, json: bool = False) -> str:
    """What a ``--shard I/N`` run prints: its counts and what next (or the counts as JSON).

    >>> shard_summary(RowStats(["x"]), shard=(1, 3), folder="st")[:42]
    'shard 1/3: 0 chunks, 0 pairs (0 failures) '
    """
    i, n = shard
    chunks, failures = len(stats.chunks), len(stats.failures)
    if json:
        summary = {"shard": [i, n], "chunks": chunks, "pairs": stats.pairs, "failures": failures}
        return json_text({**summary, "state_dir": str(folder)})
    return (
        f"shard {i}/{n}: {counted(chunks, 'chunk')}, {stats.pairs:,} pairs "
        f"({failures:,} failures) committed in {folder}; "
        "when every shard is done: paraamr evaluate --merge DIR..."
    )


def plot_paths(plot_dir: str | os.PathLike) -> list[Path]:
    """The files :func:`plot_histograms` writes in ``plot_dir``: ``<measure>.png``."""
    return [Path(plot_dir) / f"{key}.png" for key, _ in MEASURES]


def check_plots(plot_dir: str | os.PathLike, *, overwrite: bool) -> None:
    """InputError before a run when a plot file exists in ``plot_dir`` and ``overwrite`` is off."""
    check_plot_files(plot_paths(plot_dir), overwrite=overwrite)


def plot_histograms(stats: RowStats, plot_dir: str | os.PathLike, *, overwrite: bool = False) -> list[Path]:
    """One PNG histogram per measure (:func:`plot_paths`), each replaced atomically; their paths."""
    paths = plot_paths(plot_dir)
    with claim_plots(plot_dir, [path.name for path in paths], overwrite=overwrite, command="evaluate"):
        return [_histogram(stats, key, title, p) for (key, title), p in zip(MEASURES, paths, strict=True)]


def _histogram(stats: RowStats, key: str, title: str, path: Path) -> Path:
    """The histogram of measure ``key`` into ``path``."""
    counts = stats.histograms[key]
    mean = stats.mean(key) if counts else None
    heading = f"{title}: mean {mean:.2f} over {stats.pairs:,} pairs" if counts else f"{title} (no pairs)"
    xlabel = title + ("" if key.startswith("ted") else " (×100, 1-unit bins)")
    with figure(path, heading, xlabel, "pairs") as ax:
        if counts:
            lo, hi = min(counts), max(counts)
            step = max(1, math.ceil((hi - lo + 1) / 80))
            offset = -0.5 if key.startswith("ted") else 0.0
            edges = np.arange(lo, hi + step + 1, step) + offset
            ax.hist(list(counts), bins=edges, weights=list(counts.values()), color="#4c72b0", rwidth=0.9)
            ax.axvline(mean, color="#c44e52", linestyle="--", linewidth=1)
    return path
