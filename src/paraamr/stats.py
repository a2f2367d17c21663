"""Table 1 statistics of a ParaAMR corpus (release JSON lines or our Parquet folder), and histograms.

Table 1 of the paper gives the number of instances (source sentences), the average number of
paraphrases per source and the average paraphrase length. Tokens are whitespace-separated words
(``str.split()``), as in the release's detokenized text. Perplexity quantiles are numpy's linear
interpolation over every paraphrase with a perplexity.

>>> import io, json, tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "tiny.jsonl"
>>> _ = f.write_text(json.dumps({"text": "a b", "paraphrases": [
...     {"para_text": "b a", "perplexity": 10.0}, {"para_text": "a , b", "perplexity": 30.0}]}) + "\\n")
>>> s = compute_stats(f)
>>> s["instances"], s["avg_paraphrases"], s["avg_paraphrase_tokens"], s["perplexity"]["p50"]
(1, 2.0, 2.5, 20.0)
"""

from __future__ import annotations

import os
from array import array
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from paraamr import sources
from paraamr.filters import PAPER_THRESHOLDS, Filters
from paraamr.layout import PLOT_FILES
from paraamr.plots import claim_plots, figure

#: Perplexity quantiles reported, by name.
QUANTILES = {"min": 0.0, "p5": 0.05, "p25": 0.25, "p50": 0.5, "p75": 0.75, "p95": 0.95, "max": 1.0}
TOKENS = "whitespace-separated words (str.split)"


def compute_stats(
    path: str | os.PathLike,
    *,
    max_perplexity: float | None = None,
    skip_invalid: bool = False,
    plot_dir: str | os.PathLike | None = None,
    overwrite: bool = False,
    limits: sources.Limits | None = None,
) -> dict[str, Any]:
    """Statistics of every record under ``path`` (file or folder, see :func:`paraamr.sources.split_files`).

    Keys: ``instances``, ``pairs``, ``avg_paraphrases`` (per source), ``avg_paraphrase_tokens``,
    ``avg_source_tokens``, ``sources_without_paraphrases``, ``perplexity`` (quantiles, ``mean`` and
    ``missing``), ``splits`` (instances per split), ``tokens`` (how tokens are counted),
    ``max_perplexity``, ``skipped_lines``; with ``plot_dir``, ``plots`` (the histograms written;
    PNGs already there are refused unless ``overwrite``). ``max_perplexity`` filters as the loader
    does; ``limits`` caps what gz/zip input may unpack (:class:`paraamr.sources.Limits`).
    """
    import numpy as np

    held = nullcontext()
    if plot_dir is not None:  # the plots folder, to the last plot
        held = claim_plots(plot_dir, PLOT_FILES, overwrite=overwrite, command="stats")
    with held:
        perplexities = array("d")
        per_source = array("l")
        splits: dict[str, int] = {}
        para_tokens = source_tokens = missing = 0
        skipped = sources.Skipped()
        records = sources.read_path(path, skip_invalid=skip_invalid, skipped=skipped, limits=limits)
        for split, record in Filters(max_perplexity=max_perplexity).iter_records(records):  # in batches
            splits[split] = splits.get(split, 0) + 1
            per_source.append(len(record["paraphrases"]))
            source_tokens += len(record["text"].split())
            for para in record["paraphrases"]:
                para_tokens += len(para["para_text"].split())
                if para["perplexity"] is None:
                    missing += 1
                else:
                    perplexities.append(para["perplexity"])
        instances, pairs = len(per_source), int(sum(per_source))
        ppl = np.frombuffer(perplexities, dtype=np.float64) if perplexities else np.zeros(0)
        stats: dict[str, Any] = {
            "instances": instances,
            "pairs": pairs,
            "avg_paraphrases": pairs / instances if instances else None,  # a mean of nothing: none
            "avg_paraphrase_tokens": para_tokens / pairs if pairs else None,
            "avg_source_tokens": source_tokens / instances if instances else None,
            "sources_without_paraphrases": per_source.count(0),
            "perplexity": {
                **{name: (float(np.quantile(ppl, q)) if ppl.size else None) for name, q in QUANTILES.items()},
                "mean": float(ppl.mean()) if ppl.size else None,
                "missing": missing,
            },
            "splits": splits,
            "tokens": TOKENS,
            "max_perplexity": max_perplexity,
            "skipped_lines": skipped.count,
        }
        if plot_dir is not None:
            stats["plots"] = [str(p) for p in plot_histograms(ppl, np.asarray(per_source), plot_dir)]
        return stats


#: From this many paraphrases on, the perplexity histogram stops at the 99th percentile (a long tail
#: would squeeze the rest into a few bars); below it, every value is shown.
CLIP_FROM = 1000


def plot_histograms(perplexities, per_source, plot_dir: str | os.PathLike) -> list[Path]:
    """Write ``perplexity.png`` (from :data:`CLIP_FROM` values on, clipped at the 99th percentile; the
    paper's thresholds marked) and
    ``paraphrases_per_source.png`` into ``plot_dir``; return their paths."""
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    paths = [Path(plot_dir) / name for name in PLOT_FILES]
    title = "Paraphrase perplexity (no paraphrases)"
    if len(perplexities):  # a few: all of them (a cut at p99 hid 1 of 11, and a threshold's line)
        clip = len(perplexities) >= CLIP_FROM
        low, top = float(perplexities.min()), float(np.quantile(perplexities, 0.99 if clip else 1.0))
        shown = perplexities[perplexities <= top]
        cut = f"{len(shown)} of {len(perplexities)} shown, <= p99 = {top:.1f}"
        title = f"Paraphrase perplexity ({cut if clip else f'all {len(shown)}'})"
    with figure(paths[0], title, "perplexity", "paraphrases") as ax:
        if len(perplexities):
            span = (low - 1.0, top + 1.0) if top - low < 1.0 else (low, top)  # one value: a visible bar
            ax.hist(shown, bins=50, range=span, color="#4c72b0")
            for step, t in enumerate(sorted(PAPER_THRESHOLDS)):
                if span[0] <= t <= span[1]:  # the paper's thresholds that fall inside the data
                    ax.axvline(t, color="#c44e52", linestyle="--", linewidth=1)
                    height = ax.get_ylim()[1] * (0.97 - 0.07 * step)  # staggered: close ones stay legible
                    ax.text(t, height, f" {t}", color="#c44e52", fontsize=8, va="top")
    top = int(per_source.max()) if len(per_source) else 0
    title = f"Paraphrases per source ({len(per_source)} sources)"
    with figure(paths[1], title, "paraphrases", "sources") as ax:
        ax.hist(per_source, bins=np.arange(-0.5, top + 1.5, 1.0), color="#55a868", rwidth=0.9)
        ax.set_xlim(-0.5, top + 0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if top < 5:  # (on a range of one, the locator falls back to fractions)
            ax.set_xticks(range(top + 1))
    return paths


def cell(value: float | None, digits: int = 2) -> str:
    """A statistic as a table shows it: ``digits`` decimals, thousands grouped as the counts beside
    it are, ``n/a`` for none (a mean of nothing).

    >>> cell(1.5), cell(None), cell(2.25, 1), cell(1e6, 1)
    ('1.50', 'n/a', '2.2', '1,000,000.0')
    """
    return "n/a" if value is None else f"{value:,.{digits}f}"


def format_stats(stats: dict[str, Any]) -> str:
    """The statistics as a Markdown table (Table 1's columns, then perplexity quantiles).

    >>> print(format_stats({"instances": 2, "pairs": 3, "avg_paraphrases": 1.5, "avg_paraphrase_tokens": 4.0,
    ...     "avg_source_tokens": 5.0, "sources_without_paraphrases": 0, "splits": {"train": 2},
    ...     "perplexity": {"min": 1.0, "p50": 2.0, "max": 3.0, "mean": 2.0, "missing": 0}}))
    | statistic | value |
    |---|---|
    | instances (source sentences) | 2 |
    | source–paraphrase pairs | 3 |
    | avg. paraphrases per source | 1.50 |
    | avg. paraphrase length (tokens) | 4.00 |
    | avg. source length (tokens) | 5.00 |
    | sources without paraphrases | 0 |
    | instances in split train | 2 |
    | perplexity min | 1.00 |
    | perplexity p50 | 2.00 |
    | perplexity max | 3.00 |
    | perplexity mean | 2.00 |
    | paraphrases without perplexity | 0 |
    """
    rows = [
        ("instances (source sentences)", f"{stats['instances']:,}"),
        ("source–paraphrase pairs", f"{stats['pairs']:,}"),
        ("avg. paraphrases per source", cell(stats["avg_paraphrases"])),
        ("avg. paraphrase length (tokens)", cell(stats["avg_paraphrase_tokens"])),
        ("avg. source length (tokens)", cell(stats["avg_source_tokens"])),
        ("sources without paraphrases", f"{stats['sources_without_paraphrases']:,}"),
    ]
    rows += [(f"instances in split {split}", f"{n:,}") for split, n in stats["splits"].items()]
    ppl = stats["perplexity"]
    rows += [(f"perplexity {name}", cell(ppl[name])) for name in (*QUANTILES, "mean") if name in ppl]
    rows.append(("paraphrases without perplexity", f"{ppl['missing']:,}"))
    return "\n".join(["| statistic | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)])
