"""Scoring pairs: the per-pair values of every measure of the row, and a failure row for each pair
that cannot be scored (the rest go on).

Texts are checked first (:func:`paraamr.texts.text_problem`); then each stage runs over the pairs
still standing, and an item that fails or makes its stage raise fails its pair alone
(:func:`~paraamr.models.base.run_batched`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from paraamr import texts
from paraamr.failures import Failure, is_failure
from paraamr.metrics.lexical import bleu_diversity, jaccard_diversity
from paraamr.metrics.parsers import sentence_key
from paraamr.metrics.reference import reference_pair_scores
from paraamr.metrics.similarity import semantic_similarity
from paraamr.metrics.stats import RowStats
from paraamr.metrics.ted import DEFAULT_CONVENTION, distance_table, ted_signature
from paraamr.models.base import run_batched
from paraamr.records import text_id

__all__ = ["MAX_CHARS", "MEASURES", "Scored", "parse_distinct", "score_pairs"]

#: Longest text scored by default (``--max-chars``): link-grammar refuses sentences over ~2,046
#: characters.
MAX_CHARS = 2000
#: The measures of Table 2: key, column title.
MEASURES = (
    ("semantic_similarity", "Semantic similarity"),
    ("bleu_diversity", "1-BLEU"),
    ("jaccard_diversity", "1-∩/∪"),
    ("ted3", "TED-3"),
    ("tedf", "TED-F"),
)
_SIDES = ("source", "paraphrase", "reference", "template")


@contextlib.contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Add the wall time of the block to ``timings[stage]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - start


def parse_distinct(
    sentences: Sequence[str],
    parser: Any,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The tree (or :class:`Failure`) of each distinct :func:`~paraamr.metrics.parsers.sentence_key`,
    parsed (and cached) 256 at a time; ``progress(done, total)`` after each."""
    distinct = list(dict.fromkeys(sentence_key(s) for s in sentences))
    trees: dict[str, Any] = {}
    for start in range(0, len(distinct), 256):
        chunk = distinct[start : start + 256]
        parsed = run_batched(chunk, parser.parse, [range(len(chunk))], stage="parse")
        trees.update(zip(chunk, parsed, strict=True))
        if progress is not None:
            progress(len(trees), len(distinct))
    return trees


@dataclass
class Scored:
    """The pairs scored, each measure's values, the BLEU statistics (with references), the failure
    rows, signatures and seconds per stage."""

    pairs: list[Any] = field(default_factory=list)
    scores: dict[str, list[float]] = field(default_factory=dict)
    bleu: list[list[int]] | None = None
    failures: list[dict[str, Any]] = field(default_factory=list)
    signatures: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    distinct_sentences: int = 0

    def stats(self, *, chunk: int = 0, clusters: dict[int, int] | None = None) -> RowStats:
        """The statistics of these pairs as chunk ``chunk``; ``clusters``: each pair's source by index."""
        stats = RowStats(list(self.scores), clusters=clusters is not None)
        of = None if clusters is None else [clusters[p.index] for p in self.pairs]
        stats.update(self.scores, chunk=chunk, bleu=self.bleu, clusters=of)
        stats.failures, stats.signatures, stats.timings = self.failures, self.signatures, self.timings
        return stats


def _failure_row(pair: Any, failure: Failure) -> dict[str, Any]:
    try:
        row_id = pair.id or text_id(pair.source)
    except UnicodeEncodeError:  # a lone surrogate in the source
        row_id = None
    return {
        "index": pair.index,
        "where": pair.where,
        "id": row_id,
        "stage": failure.stage,
        "reason": failure.reason,
    }


class _Run:
    """The pairs still standing and their values, stage after stage."""

    def __init__(self, pairs: Sequence[Any], max_chars: int | None):
        self.pairs = list(pairs)
        self.failed: dict[int, Failure] = {}
        for i in range(len(self.pairs)):
            problems = ((side, texts.text_problem(t, max_chars, visible=True)) for side, t in self.sides(i))
            why = next((f"{side}: {w}" for side, w in problems if w), None)
            if why:
                self.failed[i] = Failure("input", why)
        self.values: dict[str, dict[int, Any]] = {}
        self.trees: dict[int, dict[str, str]] = {}

    def sides(self, i: int) -> list[tuple[str, str]]:
        """``(side, text)`` of pair ``i``'s texts (source, paraphrase, reference, template)."""
        return [(s, t) for s in _SIDES if (t := getattr(self.pairs[i], s)) is not None]

    @property
    def live(self) -> list[int]:
        return [i for i in range(len(self.pairs)) if i not in self.failed]

    def take_trees(self, trees: dict[str, Any]) -> None:
        """Each live pair's trees by side; a pair with a sentence the parser failed fails."""
        for i in self.live:
            found = {side: trees[sentence_key(text)] for side, text in self.sides(i)}
            bad = next(((side, t) for side, t in found.items() if is_failure(t)), None)
            if bad:
                self.failed[i] = Failure(bad[1].stage, f"{bad[0]}: {bad[1].reason}")
            else:
                self.trees[i] = found

    def stage(self, name: str, fn: Callable[[list[int]], Sequence], keys: Sequence[str]) -> None:
        """Run ``fn`` over the live pairs' indices: a tuple of ``keys``' values per pair, or a Failure."""
        live = self.live
        for i, result in zip(live, run_batched(live, fn, [range(len(live))], stage=name), strict=True):
            if is_failure(result):
                self.failed[i] = result
            else:
                for key, value in zip(keys, result, strict=True):
                    self.values.setdefault(key, {})[i] = value


def score_pairs(
    pairs: Sequence[Any],
    *,
    embedder: Any,
    parser: Any,
    ted_height: int | None = 5,
    ted_convention: str = DEFAULT_CONVENTION,
    max_chars: int | None = MAX_CHARS,
    progress: Callable[[int, int], None] | None = None,
) -> Scored:
    """Table 2's measures of ``pairs``, and AESOP's when they have references (TED-R/TED-E at
    ``ted_height``); ``progress(done, total)``: distinct sentences parsed."""
    run, out, sig = _Run(pairs, max_chars), Scored(), {}
    with _timed(out.timings, "parse"):
        trees = parse_distinct([t for i in run.live for _, t in run.sides(i)], parser, progress=progress)
        run.take_trees(trees)
    out.distinct_sentences = len(trees)
    p, tree = run.pairs, run.trees

    def similarity(live: list[int]) -> list[tuple[float]]:
        preds, srcs = [p[i].paraphrase for i in live], [p[i].source for i in live]
        scores, sig["semantic_similarity"] = semantic_similarity(preds, srcs, embedder=embedder)
        return [(s,) for s in scores]

    def ted(live: list[int]) -> list[tuple[int, int]]:
        preds, srcs = [tree[i]["paraphrase"] for i in live], [tree[i]["source"] for i in live]
        table = distance_table(preds, srcs, heights=(3, None), convention=ted_convention)
        return list(zip(*table, strict=True)) if live else []

    with _timed(out.timings, "embed"):
        run.stage("embed", similarity, ["semantic_similarity"])
    with _timed(out.timings, "ted"):
        run.stage("ted", ted, ["ted3", "tedf"])
    sig["ted"] = ted_signature(convention=ted_convention, normalize=False, trees=parser.signature)
    measures = [key for key, _ in MEASURES]
    if any(pair.reference is not None for pair in p):
        with _timed(out.timings, "reference"):
            measures += _reference_stage(run, sig, ted_height, parser.signature)
    live = run.live
    with _timed(out.timings, "lexical"):
        preds, srcs = [p[i].paraphrase for i in live], [p[i].source for i in live]
        for key, fn in (("bleu_diversity", bleu_diversity), ("jaccard_diversity", jaccard_diversity)):
            values, sig[key] = fn(preds, srcs)
            run.values[key] = dict(zip(live, values, strict=True))
    out.pairs = [p[i] for i in live]
    out.scores = {m: [run.values[m][i] for i in live] for m in measures}
    if "bleu_stats" in run.values:
        out.bleu = [run.values["bleu_stats"][i] for i in live]
    out.failures = [_failure_row(p[i], f) for i, f in sorted(run.failed.items())]
    out.signatures = {key: str(value) for key, value in sig.items()}
    return out


def _reference_stage(run: _Run, sig: dict[str, Any], height: int | None, parser_signature: Any) -> list[str]:
    """AESOP's measures of the live pairs against their references (and templates); their keys."""
    p, tree = run.pairs, run.trees
    templates = any(pair.template is not None for pair in p)
    keys = ["rouge1", "rouge2", "rougeL", "meteor", "ted_r", *(["ted_e"] if templates else []), "bleu_stats"]

    def reference(live: list[int]) -> list[tuple]:
        found, signatures = reference_pair_scores(
            [p[i].paraphrase for i in live],
            [p[i].reference for i in live],
            pred_trees=[tree[i]["paraphrase"] for i in live],
            ref_trees=[tree[i]["reference"] for i in live],
            template_trees=[tree[i]["template"] for i in live] if templates else None,
            height=height,
            parser_signature=parser_signature,
        )
        sig.update(signatures)
        return list(zip(*(found[k] for k in keys), strict=True))

    run.stage("reference", reference, keys)
    if "bleu" not in sig:
        reference([])  # no pair left: the signatures all the same
    return keys[:-1]
