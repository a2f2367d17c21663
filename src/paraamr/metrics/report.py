"""The Table-2 row of a corpus: semantic similarity, 1-BLEU, 1-∩/∪, TED-3, TED-F over its pairs.

Pairs (source, paraphrase) come from a ParaAMR release file, one of our dataset folders (both
read by :func:`paraamr.sources.read_path`) or a two-column file (``.tsv``/``.txt``: tab-separated;
``.csv``): source first, paraphrase second, an optional header row ``source,paraphrase`` or
``text,para_text``. A pair with an empty side cannot be parsed: it is left out and reported as a
failure row (``{"where", "reason"}``), never dropped silently.

>>> import io
>>> pairs = read_two_columns(io.StringIO("source\\tparaphrase\\nI know it.\\tIt is known.\\n"), name="x.tsv")
>>> pairs
[Pair(where='x.tsv, line 2', source='I know it.', paraphrase='It is known.')]
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
from paraamr.metrics import format_signature, mean
from paraamr.metrics.lexical import bleu_diversity, jaccard_diversity
from paraamr.metrics.similarity import semantic_similarity
from paraamr.metrics.ted import distance_table, signature_fields

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


def sample(pairs: Sequence[Pair], n: int | None, *, seed: int = 0) -> list[Pair]:
    """``n`` pairs drawn without replacement (in input order), or all when ``n`` is None or larger."""
    if n is None or n >= len(pairs):
        return list(pairs)
    if n < 0:
        raise ValueError(f"sample size must be positive, got {n}")
    keep = sorted(random.Random(seed).sample(range(len(pairs)), n))
    return [pairs[i] for i in keep]


def evaluate_pairs(
    pairs: Sequence[Pair],
    *,
    embedder: Any,
    parser: Any,
    chunk_size: int = 512,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The Table-2 row of ``pairs``: means, per-pair scores, failures and signatures.

    ``embedder``: an :class:`~paraamr.models.embedder.Embedder`; ``parser``: a
    :class:`~paraamr.metrics.parsers.TreeParser`; ``progress(k)`` is called after each ``k`` pairs.
    """
    failures = [
        {"where": p.where, "reason": "empty source or paraphrase"}
        for p in pairs
        if not p.source.strip() or not p.paraphrase.strip()
    ]
    kept = [p for p in pairs if p.source.strip() and p.paraphrase.strip()]
    scores: dict[str, list[float]] = {key: [] for key, _ in MEASURES}
    signatures: dict[str, str] = {}
    for start in range(0, len(kept), chunk_size):
        chunk = kept[start : start + chunk_size]
        preds, refs = [p.paraphrase for p in chunk], [p.source for p in chunk]
        sim, signatures["semantic_similarity"] = semantic_similarity(preds, refs, embedder=embedder)
        bleu, signatures["bleu_diversity"] = bleu_diversity(preds, refs)
        jaccard, signatures["jaccard_diversity"] = jaccard_diversity(preds, refs)
        trees = parser.parse(preds + refs)
        tree_preds, tree_refs = trees[: len(chunk)], trees[len(chunk) :]
        scores["semantic_similarity"] += sim
        scores["bleu_diversity"] += bleu
        scores["jaccard_diversity"] += jaccard
        ted3, tedf = distance_table(tree_preds, tree_refs, heights=(3, None))
        scores["ted3"] += ted3
        scores["tedf"] += tedf
        if progress is not None:
            progress(len(chunk))
    signatures["ted"] = format_signature(
        signature_fields(convention="aesop", normalize=False), {"parser": parser.signature}
    )
    return {
        "pairs": len(kept),
        **{key: mean(values) for key, values in scores.items()},
        "scores": scores,
        "failures": failures,
        "signatures": signatures,
    }


def format_row(result: dict[str, Any]) -> str:
    """The row as a Markdown table (Table 2's columns, ×100 scale for the first three)."""
    head = "| pairs | " + " | ".join(title for _, title in MEASURES) + " |"
    rule = "|" + "---|" * (len(MEASURES) + 1)
    row = f"| {result['pairs']:,} | " + " | ".join(f"{result[key]:.2f}" for key, _ in MEASURES) + " |"
    return "\n".join([head, rule, row])


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
