"""The Table-2 row of a corpus: semantic similarity, 1-BLEU, 1-∩/∪, TED-3, TED-F over its pairs.

Pairs (source, paraphrase) come from a ParaAMR release file, one of our dataset folders (both
read by :func:`paraamr.sources.read_path`) or a two-column file (``.tsv``/``.txt``: tab-separated;
``.csv``): source first, paraphrase second, an optional header row ``source,paraphrase`` or
``text,para_text``. A pair with an empty side cannot be parsed: it is left out and reported as a
failure row (``{"where", "reason"}``), never dropped silently.

>>> import io
>>> pairs = read_two_columns(io.StringIO("source\\tparaphrase\\nI know it.\\tIt is known.\\n"), name="x.tsv")
>>> pairs
[Pair(where='x.tsv, line 2', source='I know it.', paraphrase='It is known.', reference=None, template=None)]
>>> format_row({"pairs": 1, "semantic_similarity": 80.0, "bleu_diversity": 70.0, "jaccard_diversity": 60.0,
...             "ted3": 1.0, "tedf": 4.0}).splitlines()[2]
'| 1 | 80.00 | 70.00 | 60.00 | 1.00 | 4.00 |'
"""

from __future__ import annotations

import csv
import os
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from paraamr.errors import InputError
from paraamr.metrics import mean
from paraamr.metrics.lexical import bleu_diversity, jaccard_diversity
from paraamr.metrics.similarity import semantic_similarity
from paraamr.metrics.ted import distance_table, ted_signature
from paraamr.signature import Signature

TWO_COLUMN_SUFFIXES = (".tsv", ".txt", ".csv")
HEADERS = (("source", "paraphrase"), ("text", "para_text"))
#: The measures of the row: key, column title.
MEASURES = (
    ("semantic_similarity", "Semantic similarity"),
    ("bleu_diversity", "1-BLEU"),
    ("jaccard_diversity", "1-∩/∪"),
    ("ted3", "TED-3"),
    ("tedf", "TED-F"),
)


@dataclass(frozen=True)
class Pair:
    """A source and one of its paraphrases, with the place it came from."""

    where: str
    source: str
    paraphrase: str
    reference: str | None = None
    template: str | None = None


def read_two_columns(f: IO[str], *, name: str, delimiter: str = "\t") -> list[Pair]:
    """The pairs of a two-column text file (see the module docstring)."""
    pairs = []
    for number, row in enumerate(csv.reader(f, delimiter=delimiter), start=1):
        if not row:
            continue
        if len(row) != 2:
            raise InputError(
                f"{name}, line {number}: expected 2 columns (source, paraphrase), got {len(row)}"
            )
        if number == 1 and tuple(c.strip().lower() for c in row) in HEADERS:
            continue
        pairs.append(Pair(f"{name}, line {number}", row[0], row[1]))
    return pairs


def read_pairs(path: str | os.PathLike) -> list[Pair]:
    """Every (source, paraphrase) pair of a release file, a dataset folder or a two-column file."""
    path = Path(path)
    if path.is_file() and path.suffix.lower() in TWO_COLUMN_SUFFIXES:
        with open(path, encoding="utf-8", newline="") as f:
            delimiter = "," if path.suffix.lower() == ".csv" else "\t"
            return read_two_columns(f, name=str(path), delimiter=delimiter)
    from paraamr.sources import read_path

    pairs = []
    for split, record in read_path(path):
        for k, para in enumerate(record["paraphrases"]):
            pairs.append(Pair(f"{split} {record['id']} paraphrase {k}", record["text"], para["para_text"]))
    return pairs


def card_row(result: dict[str, Any]) -> dict[str, float]:
    """The Table-2 row for a dataset card: each measure's column title and mean, and the pairs.

    >>> card_row({"pairs": 2, "semantic_similarity": 80.0, "bleu_diversity": 70.0,
    ...           "jaccard_diversity": 60.0, "ted3": 1.0, "tedf": 4.0})
    {'Pairs': 2, 'Semantic similarity': 80.0, '1-BLEU': 70.0, '1-∩/∪': 60.0, 'TED-3': 1.0, 'TED-F': 4.0}
    """
    return {"Pairs": result["pairs"], **{title: result[key] for key, title in MEASURES}}


def pairs_of_rows(rows: Iterable[dict[str, Any]], *, name: str) -> list[Pair]:
    """The pairs of dataset rows: ``text`` with ``para_text`` (the ``pairs`` config) or with each
    ``paraphrases[].para_text`` (``default``, as the release)."""
    pairs = []
    for i, row in enumerate(rows):
        if "para_text" in row:
            pairs.append(Pair(f"{name} row {i}", row["text"], row["para_text"]))
        elif "paraphrases" in row:
            for k, para in enumerate(row["paraphrases"]):
                pairs.append(Pair(f"{name} row {i} paraphrase {k}", row["text"], para["para_text"]))
        else:
            raise InputError(
                f"{name}: expected columns text and para_text or paraphrases, got {', '.join(row)}"
            )
    return pairs


def read_hub_pairs(repo_id: str, config: str | None = None, split: str = "train") -> list[Pair]:
    """The pairs of split ``split`` of config ``config`` of the Hub dataset ``repo_id``
    (:func:`datasets.load_dataset`; ``HF_ENDPOINT`` decides which Hub)."""
    import datasets

    try:
        rows = datasets.load_dataset(repo_id, config, split=split)
    except (FileNotFoundError, ValueError, datasets.exceptions.DatasetNotFoundError) as err:
        raise InputError(
            f"{repo_id}: cannot load config {config or 'default'}, split {split}: {err}"
        ) from err
    return pairs_of_rows(rows, name=f"{repo_id} ({config or 'default'}/{split})")


def with_references(
    pairs: Sequence[Pair], references: str | os.PathLike | None, templates: str | os.PathLike | None = None
) -> list[Pair]:
    """``pairs`` with the reference (and template) of each from one-per-line files, in order."""
    from dataclasses import replace

    extra: dict[str, list[str]] = {}
    for field, path in (("reference", references), ("template", templates)):
        if path is not None:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
            if len(lines) != len(pairs):
                raise InputError(f"{path}: {len(lines)} lines for {len(pairs)} pairs (one {field} per pair)")
            extra[field] = lines
    return [replace(p, **{k: v[i] for k, v in extra.items()}) for i, p in enumerate(pairs)]


def sample(pairs: Sequence[Pair], n: int | None, *, seed: int = 0) -> list[Pair]:
    """``n`` pairs drawn without replacement (in input order), or all when ``n`` is None or larger."""
    if n is None or n >= len(pairs):
        return list(pairs)
    if n < 0:
        raise ValueError(f"sample size must be positive, got {n}")
    keep = sorted(random.Random(seed).sample(range(len(pairs)), n))
    return [pairs[i] for i in keep]


def _timed(timings: dict[str, float], stage: str):
    """A context manager adding the wall time of its block to ``timings[stage]``."""
    import contextlib
    import time

    @contextlib.contextmanager
    def timer():
        start = time.perf_counter()
        try:
            yield
        finally:
            timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - start

    return timer()


def parse_distinct(
    sentences: Sequence[str],
    parser: Any,
    *,
    chunk_size: int = 2048,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, str]:
    """The tree of each distinct sentence (by :func:`~paraamr.metrics.parsers.sentence_key`),
    parsed ``chunk_size`` at a time (each chunk reaches the on-disk cache before the next starts);
    ``progress(done, total)`` after each chunk."""
    from paraamr.metrics.parsers import sentence_key

    distinct = list(dict.fromkeys(sentence_key(s) for s in sentences))
    trees: dict[str, str] = {}
    for start in range(0, len(distinct), chunk_size):
        chunk = distinct[start : start + chunk_size]
        trees.update(zip(chunk, parser.parse(chunk), strict=True))
        if progress is not None:
            progress(len(trees), len(distinct))
    return trees


def evaluate_pairs(
    pairs: Sequence[Pair],
    *,
    embedder: Any,
    parser: Any,
    ted_height: int | None = 5,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The Table-2 row of ``pairs``: means, per-pair scores, failures, signatures and the seconds
    each stage took (``timings``); with references (:attr:`Pair.reference`) also AESOP's
    measures against them (:mod:`paraamr.metrics.reference`; TED-R/TED-E at ``ted_height``).

    Each distinct sentence is parsed once (:func:`parse_distinct`) and embedded once (length-sorted
    batches); TED goes through :func:`~paraamr.metrics.ted.distance_table`. ``embedder``: an
    :class:`~paraamr.models.embedder.Embedder`; ``parser``: a
    :class:`~paraamr.metrics.parsers.TreeParser`; ``progress(done, total)``: distinct sentences parsed.
    """
    from paraamr.metrics.parsers import sentence_key

    failures = [{"where": p.where, "reason": reason} for p in pairs if (reason := _unusable(p))]
    kept = [p for p in pairs if not _unusable(p)]
    preds, srcs = [p.paraphrase for p in kept], [p.source for p in kept]
    refs = [p.reference for p in kept if p.reference is not None]
    temps = [p.template for p in kept if p.template is not None]
    timings: dict[str, float] = {}
    with _timed(timings, "parse"):
        trees = parse_distinct(srcs + preds + refs + temps, parser, progress=progress)
    scores: dict[str, list[float]] = {}
    signatures: dict[str, Signature] = {}
    with _timed(timings, "embed"):
        scores["semantic_similarity"], signatures["semantic_similarity"] = semantic_similarity(
            preds, srcs, embedder=embedder
        )
    with _timed(timings, "lexical"):
        scores["bleu_diversity"], signatures["bleu_diversity"] = bleu_diversity(preds, srcs)
        scores["jaccard_diversity"], signatures["jaccard_diversity"] = jaccard_diversity(preds, srcs)
    pred_trees = [trees[sentence_key(s)] for s in preds]
    with _timed(timings, "ted"):
        scores["ted3"], scores["tedf"] = distance_table(
            pred_trees, [trees[sentence_key(s)] for s in srcs], heights=(3, None)
        )
    signatures["ted"] = ted_signature(convention="aesop", normalize=False, trees=parser.signature)
    measures = [key for key, _ in MEASURES]
    if refs:
        from paraamr.metrics.reference import reference_scores

        with _timed(timings, "reference"):
            extra, extra_signatures = reference_scores(
                preds,
                refs,
                pred_trees=pred_trees,
                ref_trees=[trees[sentence_key(s)] for s in refs],
                template_trees=[trees[sentence_key(s)] for s in temps] if temps else None,
                height=ted_height,
                parser_signature=parser.signature,
            )
        scores |= {k: v for k, v in extra.items() if isinstance(v, list)}
        signatures |= extra_signatures
        measures += [k for k in extra if isinstance(extra[k], list)]
    return {
        "pairs": len(kept),
        **{key: mean(scores[key]) for key in measures},
        **({"bleu": extra["bleu"]} if refs else {}),
        "scores": scores,
        "failures": failures,
        "signatures": {key: str(sig) for key, sig in signatures.items()},
        "distinct_sentences": len(trees),
        "timings": timings,
    }


def _unusable(pair: Pair) -> str | None:
    """Why ``pair`` cannot be scored (an empty side), or None."""
    if not pair.source.strip() or not pair.paraphrase.strip():
        return "empty source or paraphrase"
    for side in ("reference", "template"):
        text = getattr(pair, side)
        if text is not None and not text.strip():
            return f"empty {side}"
    return None


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


def format_row(result: dict[str, Any]) -> str:
    """The row as a Markdown table (Table 2's columns, ×100 scale for the first three), and AESOP's
    measures in a second table when there are references."""
    lines = []
    for measures in (MEASURES, tuple((k, t) for k, t in REFERENCE_MEASURES if k in result)):
        if measures:
            lines += [
                "| pairs | " + " | ".join(title for _, title in measures) + " |",
                "|" + "---|" * (len(measures) + 1),
                f"| {result['pairs']:,} | " + " | ".join(f"{result[k]:.2f}" for k, _ in measures) + " |",
                "",
            ]
    return "\n".join(lines[:-1])


def plot_histograms(scores: dict[str, Iterable[float]], plot_dir: str | os.PathLike) -> list[Path]:
    """One PNG histogram per measure (``<key>.png``) in ``plot_dir``; their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    out = Path(plot_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for key, title in MEASURES:
        values = np.asarray(list(scores[key]), dtype=float)
        fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
        if len(values):
            discrete = key.startswith("ted")
            bins = np.arange(-0.5, values.max() + 1.5, 1.0) if discrete and values.max() < 80 else 40
            ax.hist(values, bins=bins, color="#4c72b0", rwidth=0.9 if discrete else None)
            ax.axvline(values.mean(), color="#c44e52", linestyle="--", linewidth=1)
            ax.set_title(f"{title}: mean {values.mean():.2f} over {len(values):,} pairs", fontsize=9)
        else:
            ax.set_title(f"{title} (no pairs)", fontsize=9)
        ax.set_xlabel(title + ("" if key.startswith("ted") else " (×100)"))
        ax.set_ylabel("pairs")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        fig.tight_layout()
        path = out / f"{key}.png"
        fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    return paths
