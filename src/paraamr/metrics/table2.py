"""Table 2 as the paper ran it: corpora scored on the sources all of them share (matched by
:func:`paraamr.records.normalize`), a perplexity filter, and a signature against the paper's protocol.

>>> from paraamr.metrics.report import Pair
>>> a = [Pair("a", "I know.", "Known."), Pair("a", "It rains.", "Rain falls.")]
>>> b = [Pair("b", "i know.", "I am aware.", perplexity=80.0), Pair("b", "Go.", "Leave.", perplexity=90.0)]
>>> sorted(common_sources([a, b]))
['i know.']
>>> [p.paraphrase for p in restrict(b, {"i know."})]
['I am aware.']
>>> kept, counts = filter_perplexity(b, 85)
>>> [p.paraphrase for p in kept], counts
(['I am aware.'], {'input_pairs': 2, 'dropped': 1, 'without_perplexity': 0})
>>> str(protocol_signature(similarity_model="all-MiniLM-L6-v2", ted_convention="paper",
...                        parser_signature="parser:corenlp", corpora=2, max_perplexity=None))
'table2:not-paper|differs:similarity-model|sources:common-of-2|max-ppl:none'
"""

from __future__ import annotations

import math
import random
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from paraamr.errors import InputError, UsageError, about
from paraamr.metrics.report import (
    Pair,
    evaluate_pairs,
    hub_pairs,
    interval_cells,
    iter_pairs,
    say_failures,
    signature_lines,
)
from paraamr.metrics.sample import RESAMPLES
from paraamr.metrics.scale import process_models
from paraamr.metrics.scoring import MEASURES
from paraamr.metrics.settings import PAPER_SIMILARITY, EvaluateSettings
from paraamr.records import normalize
from paraamr.report import json_text
from paraamr.signature import Signature

__all__ = [
    "Shared",
    "check_selection",
    "common_sources",
    "corpus_pairs",
    "evaluate_corpora",
    "filter_perplexity",
    "format_corpora",
    "is_local",
    "keep_perplexity",
    "protocol_signature",
    "read_corpus",
    "restrict",
    "run_corpora",
    "selection_counts",
    "shared_pairs",
]


def filter_perplexity(
    pairs: Sequence[Pair], max_perplexity: float | None, *, name: str | None = None
) -> tuple[list[Pair], dict[str, int]]:
    """The pairs of perplexity at most ``max_perplexity`` or none (all with None) and the
    ``selection`` counts; InputError naming the input ``name`` when every pair is dropped."""
    counts = selection_counts()
    kept = list(keep_perplexity(pairs, max_perplexity, counts))
    check_selection(counts, max_perplexity, name=name)
    return kept, counts


def selection_counts() -> dict[str, int]:
    """The ``selection`` counts of no pair, for :func:`keep_perplexity` to count into."""
    return {"input_pairs": 0, "dropped": 0, "without_perplexity": 0}


def keep_perplexity(pairs: Iterable[Pair], max_perplexity: float | None, counts: dict) -> Iterator[Pair]:
    """:func:`filter_perplexity` one pair at a time, counting into ``counts`` (:func:`selection_counts`).

    >>> counts = selection_counts()
    >>> [p.paraphrase for p in keep_perplexity([Pair("a", "I.", "Me.", perplexity=90.0)], 85, counts)], counts
    ([], {'input_pairs': 1, 'dropped': 1, 'without_perplexity': 0})
    """
    for pair in pairs:
        counts["input_pairs"] += 1
        counts["without_perplexity"] += pair.perplexity is None  # (kept, with a limit or without)
        if max_perplexity is None:
            yield pair
            continue
        if pair.perplexity is None or pair.perplexity <= max_perplexity:
            yield pair
        else:
            counts["dropped"] += 1


def check_selection(counts: dict[str, int], max_perplexity: float | None, *, name: str | None) -> None:
    """InputError naming the input ``name`` when ``--max-perplexity`` dropped every pair it counted."""
    if name is not None and counts["input_pairs"] and counts["dropped"] == counts["input_pairs"]:
        raise InputError(
            f"{name}: all {counts['input_pairs']:,} paraphrases have a perplexity above --max-perplexity "
            f"{max_perplexity:g}: no pairs to evaluate"
        )


def common_sources(corpora: Iterable[Sequence[Pair]]) -> set[str]:
    """The normalized sources found in every corpus."""
    keys = [{normalize(p.source) for p in pairs} for pairs in corpora]
    return set.intersection(*keys) if keys else set()


def restrict(pairs: Sequence[Pair], keys: set[str]) -> list[Pair]:
    """The pairs of ``pairs`` whose normalized source is in ``keys``, numbered anew."""
    kept = [p for p in pairs if normalize(p.source) in keys]
    return [replace(p, index=i) for i, p in enumerate(kept)]


def protocol_signature(
    *,
    similarity_model: str,
    ted_convention: str,
    parser_signature: Signature | str,
    corpora: int,
    max_perplexity: float | None,
    pooling: str | None = None,
    sample: str | None = None,
) -> Signature:
    """``table2:paper`` when the similarity model, TED convention and parser are the paper's, else
    ``table2:not-paper`` with what ``differs``; then the sources, perplexity limit and sample."""
    differs = []
    if similarity_model != PAPER_SIMILARITY or pooling not in (None, "cls"):
        differs.append("similarity-model")
    if ted_convention != "paper":
        differs.append("ted-convention")
    if Signature.parse(str(parser_signature))["parser"] != "corenlp":
        differs.append("parser")
    fields: dict[str, object] = {"table2": "not-paper" if differs else "paper"}
    if differs:
        fields["differs"] = ",".join(differs)
    fields["sources"] = f"common-of-{corpora}" if corpora > 1 else "all"
    fields["max-ppl"] = "none" if max_perplexity is None else f"{max_perplexity:g}"
    if sample is not None:
        fields["sample"] = sample
    return Signature(**fields)


@dataclass(frozen=True)
class Shared:
    """What :func:`shared_pairs` selected: each named corpus's pairs and ``selection`` counts, the
    number of shared ``sources`` and the ``max_perplexity`` applied."""

    corpora: list[tuple[str, list[Pair], dict[str, int]]]
    sources: int
    max_perplexity: float | None
    #: ``N-of-M-seed-S`` when ``N`` of the ``M`` shared sources were drawn (``--sample``).
    sample: str | None = None
    seed: int = 0
    #: Whether the sources were drawn (``--sample``, all of them too): each row gets its intervals.
    drawn: bool = False


def shared_pairs(
    corpora: Sequence[tuple[str, Sequence[Pair]]],
    *,
    max_perplexity: float | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> Shared:
    """Each named corpus's pairs of the sources all share after the perplexity filter (``sample``
    of them drawn with ``seed``); InputError when none is shared."""
    filtered = [(name, *filter_perplexity(pairs, max_perplexity, name=name)) for name, pairs in corpora]
    keys = common_sources(kept for _, kept, _ in filtered)
    if not keys:
        raise InputError(f"no source is in all {len(corpora)} inputs ({', '.join(n for n, _ in corpora)})")
    drawn = None
    if sample is not None and sample < len(keys):
        drawn = f"{sample}-of-{len(keys)}-seed-{seed}"
        keys = set(random.Random(seed).sample(sorted(keys), sample))
    selected = [(name, restrict(kept, keys), selection) for name, kept, selection in filtered]
    return Shared(selected, len(keys), max_perplexity, drawn, seed, sample is not None)


def evaluate_corpora(
    shared: Shared,
    *,
    parser: Any,
    embedder: Any,
    ted_convention: str = "paper",
    max_chars: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """One row per corpus of ``shared``, and the signatures (with ``protocol``)."""
    rows, signatures = [], {}
    options = {} if max_chars is None else {"max_chars": max_chars}
    for name, pairs, selection in shared.corpora:
        if progress is not None:
            progress(f"scoring {name}: {len(pairs):,} pairs of {shared.sources:,} shared sources")
        if shared.drawn:  # a sample of sources (all of them too): each row's intervals, over them
            ids: dict[str, int] = {}
            clusters = {p.index: ids.setdefault(normalize(p.source), len(ids)) for p in pairs}
            options |= {"clusters": clusters, "seed": shared.seed}
        row = evaluate_pairs(
            pairs, embedder=embedder, parser=parser, ted_convention=ted_convention, **options
        )
        signatures.update(row.pop("signatures"))
        del row["scores"]
        left_out = {failure["where"] for failure in row["failures"]}  # a source of failed pairs alone: none
        sources = len({normalize(p.source) for p in pairs if p.where not in left_out})
        rows.append({"input": name, "sources": sources, **row, "selection": selection})
    signatures["protocol"] = str(
        protocol_signature(
            similarity_model=embedder.model_name, pooling=embedder.pooling, ted_convention=ted_convention,
            parser_signature=parser.signature, corpora=len(shared.corpora),
            max_perplexity=shared.max_perplexity, sample=shared.sample,
        )
    )  # fmt: skip
    return {"corpora": rows, "common_sources": shared.sources, "signatures": signatures}


def format_corpora(result: dict[str, Any]) -> str:
    """The rows as one Markdown table (Table 2's columns), then the signatures."""
    titles = [title for _, title in MEASURES]
    lines = [
        "| corpus | sources | pairs | " + " | ".join(titles) + " |",
        "|" + "---|" * (len(titles) + 3),
    ]
    for row in result["corpora"]:
        cells = " | ".join("n/a" if math.isnan(row[key]) else f"{row[key]:.2f}" for key, _ in MEASURES)
        name = row["input"].replace("|", "\\|")  # (a | of the name would end its cell)
        lines.append(f"| {name} | {row['sources']:,} | {row['pairs']:,} | {cells} |")
        if row.get("intervals"):  # (--sample) under its row, as for one input
            lines.append(f"| 95% CI | | | {interval_cells(row['intervals'], MEASURES)} |")
    lines += ["", *signature_lines(result)]
    if any(row.get("intervals") for row in result["corpora"]):
        lines.append(
            "95% CI: cluster bootstrap over each corpus's pairs of the sources drawn "
            f"({RESAMPLES:,} resamples, percentile, seed {result.get('seed', 0)})"
        )
    return "\n".join(lines)


#: ``owner/name``: read from the Hub when no such local path exists.
HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


def is_local(path: str) -> bool:
    """Whether ``path`` is read from disk (else it is a Hub dataset id).

    >>> is_local("pairs.tsv"), is_local("org/name")
    (True, False)
    """
    return Path(path).exists() or not HUB_ID.match(path)


def read_corpus(path: str, *, config: str | None, split: str | None) -> list[Pair]:
    """The pairs of one input: a local path (:func:`is_local`), else a Hub dataset id."""
    pairs = list(corpus_pairs(path, config=config, split=split)())
    if not pairs:
        raise InputError(f"{path}: no pairs to evaluate")
    return pairs


def corpus_pairs(path: str, *, config: str | None, split: str | None) -> Callable[[], Iterator[Pair]]:
    """:func:`read_corpus` as ``read()`` -> the pairs one at a time, as often as wanted."""
    if is_local(path) and config is not None:
        raise UsageError(f"--config {config}: only for a Hub dataset ({path} is a local path)")
    if is_local(path):
        return lambda: iter_pairs(path, split)
    return hub_pairs(path, config, split or "train")


def run_corpora(s: EvaluateSettings, world: int) -> int:
    """``paraamr evaluate A B ...``: one row each over their shared sources, in this process."""
    single = {
        "--shard": s.shard != (0, 1), "--merge": s.merge, "--state-dir": s.state_dir,
        "--write-card": s.write_card, "--references": s.references, "--templates": s.templates,
        "--plots": s.plots,
        "several processes": world > 1,
    }  # fmt: skip
    for name, given in single.items():
        if given:
            raise UsageError(f"{name} takes one corpus; several corpora are scored in one process")
    corpora = []
    for path in s.path:
        with about(path):  # an error about its content names this input, not all of them
            corpora.append((path, read_corpus(path, config=s.config, split=s.split)))
    # no shared source is refused here, before the models load
    shared = shared_pairs(corpora, max_perplexity=s.max_perplexity, sample=s.sample, seed=s.seed)
    if s.sample is not None and s.sample > shared.sources:
        print(
            f"paraamr evaluate: warning: --sample {s.sample:,} exceeds the {shared.sources:,} shared "
            "sources; evaluating all of them",
            file=sys.stderr,
        )
    parser, embedder = process_models(s)()
    say = None if s.progress == "none" else (lambda line: print(line, file=sys.stderr))
    try:
        result = evaluate_corpora(
            shared, parser=parser, embedder=embedder, ted_convention=s.ted_convention,
            max_chars=s.max_chars, progress=say,
        )  # fmt: skip
    finally:
        parser.close()
    result |= {"sample": s.sample, "seed": s.seed}
    say_failures(failure for row in result["corpora"] for failure in row["failures"])
    empty = [row for row in result["corpora"] if not row["pairs"]]
    if empty:  # a row of nothing is no result, as for one input: no table either
        names = ", ".join(row["input"] for row in empty)
        raise InputError(f"{names}: no pair could be scored of the shared sources (the lines above say why)")
    print(json_text(result, indent=2, ensure_ascii=False) if s.json else format_corpora(result))
    return 0
