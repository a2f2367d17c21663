"""Sources/s of the generator (windows, length-bucketed batches, CPU stages overlapped with model
stages) against a naive sequential loop over the same stages (one source at a time, each stage
called on one item), on tiny random models, with a per-stage time breakdown.

    python benchmarks/bench_pipeline.py [--sources 96] [--models DIR]
    python benchmarks/bench_pipeline.py --rss-lines 1000000      # peak RSS per process, 1M lines

Two inputs: ``text`` (sentences through the parser; the tiny parser gives one-node graphs for
most of them, so parsing dominates) and ``amr`` (hand-written multi-node graphs: re-focusing,
realization and perplexity dominate). Figures on a shared machine are noisy.

``--rss-lines N`` runs ``generate.py`` under ``torchrun --nproc_per_node 2`` on an N-line input
(distinct lines; 99.9% longer than ``--max-chars`` so they end as failure rows without model work,
0.1% short sentences through every stage) and prints the peak resident memory of the largest
process (``getrusage`` of the children).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]
GRAPHS = ROOT / "tests" / "generate" / "data" / "graphs.amr"


def _sentences(n: int, seed: int = 0) -> list[str]:
    from paraamr.models.tiny import _WORDS, PAPER_TEXT

    rng = random.Random(seed)
    words = _WORDS.split()
    out = [PAPER_TEXT]
    while len(out) < n:
        out.append(" ".join(rng.choice(words) for _ in range(rng.randint(3, 30))).capitalize() + ".")
    return out


def _graphs(n: int) -> list[str]:
    from paraamr.amr import read_graphs

    blocks = [
        b for _, b in read_graphs(GRAPHS.read_text().splitlines()) if "g-bad" not in b and "repeat" not in b
    ]
    return [
        f"# ::id bench-{i}\n"
        + "\n".join(line for line in blocks[i % len(blocks)].splitlines() if not line.startswith("# ::id"))
        for i in range(n)
    ]


def naive(models: dict, rows: list, settings) -> tuple[int, float, Counter]:
    """One source at a time through the same stage objects: parse, decode, re-focus, realize each
    candidate, perplexity of each candidate, filter. Returns (paraphrases, seconds, per stage)."""
    from paraamr import amr
    from paraamr.failures import is_failure
    from paraamr.records import normalize

    t_all, seconds, kept = time.perf_counter(), Counter(), 0
    for row in rows:
        t0 = time.perf_counter()
        graph_text = row.amr if row.amr is not None else models["parser"].parse([row.text])[0]
        seconds["parse"] += time.perf_counter() - t0
        if is_failure(graph_text):
            continue
        t0 = time.perf_counter()
        try:
            variants = amr.variants(amr.decode(graph_text), foci=settings.foci, oneline=True)
        except amr.AMRError:
            continue
        seconds["refocus"] += time.perf_counter() - t0
        seen = {normalize(row.text)}
        for v in variants:
            t0 = time.perf_counter()
            text = models["realizer"].realize([v.penman])[0]
            seconds["realize"] += time.perf_counter() - t0
            if is_failure(text) or normalize(text) in seen or not normalize(text):
                continue
            seen.add(normalize(text))
            t0 = time.perf_counter()
            ppl = models["lm"].perplexity([text])[0]
            seconds["perplexity"] += time.perf_counter() - t0
            kept += not is_failure(ppl) and (
                settings.max_perplexity is None or ppl <= settings.max_perplexity
            )
    return kept, time.perf_counter() - t_all, seconds


def ours(models: dict, rows: list, settings) -> tuple[int, float, Counter]:
    from paraamr.builder.pipeline import Generator

    gen = Generator(settings, models=models)
    t0 = time.perf_counter()
    for _ in gen.windows(rows):
        pass
    return gen.stats.paraphrases, time.perf_counter() - t0, gen.stats.seconds


def bench(args) -> None:
    import torch

    from paraamr.builder.rows import InputRow, amr_row
    from paraamr.builder.settings import GeneratorSettings
    from paraamr.models.lm import PerplexityScorer
    from paraamr.models.parser import Parser
    from paraamr.models.realizer import Realizer
    from paraamr.models.tiny import make_tiny
    from paraamr.records import text_id

    torch.manual_seed(0)
    tiny = Path(args.models) if args.models else None
    if tiny is None or not (tiny / "parser").is_dir():
        tiny = Path(args.models or tempfile.mkdtemp(prefix="bench-tiny-"))
        make_tiny(tiny)
    bs = {"parse": args.batch_size, "generate": args.batch_size, "lm": args.batch_size}
    batched = {
        "parser": Parser(tiny / "parser", batch_size=bs["parse"]),
        "realizer": Realizer(tiny / "generator", batch_size=bs["generate"]),
        "lm": PerplexityScorer(tiny / "lm", batch_size=bs["lm"]),
    }
    print(f"torch threads {torch.get_num_threads()}, cores {os.cpu_count()}; tiny models in {tiny}")
    print(
        f"{'input':<6}{'sources':>8}{'naive src/s':>13}{'ours src/s':>12}{'ratio':>8}"
        "   per stage (s), naive | ours"
    )
    for mode in ("text", "amr"):
        settings = GeneratorSettings(
            parser_model=str(tiny / "parser"),
            generator_model=str(tiny / "generator"),
            lm_model=str(tiny / "lm"),
            max_perplexity=None,
            amr_input=mode == "amr",
            window=args.window,
            parse_batch_size=bs["parse"],
            generate_batch_size=bs["generate"],
            lm_batch_size=bs["lm"],
        )
        if mode == "text":
            rows = [InputRow(text_id(t), t) for t in _sentences(args.sources)]
            warm = [InputRow(text_id(t), t) for t in _sentences(8, seed=1)[1:]]
        else:
            rows = [amr_row(g) for g in _graphs(args.sources)]
            warm = [amr_row(g.replace("bench-", "warm-")) for g in _graphs(4)]
        ours(batched, warm, settings)  # warm-up on other rows: first calls allocate
        k_naive, t_naive, s_naive = naive(batched, rows, settings)
        k_ours, t_ours, s_ours = ours(batched, rows, settings)
        stages = ", ".join(
            f"{k} {s_naive[k]:.1f}|{s_ours.get(k, 0):.1f}"
            for k in ("parse", "refocus", "realize", "perplexity")
        )
        print(
            f"{mode:<6}{len(rows):>8}{len(rows) / t_naive:>13.1f}{len(rows) / t_ours:>12.1f}"
            f"{t_naive / t_ours:>7.2f}x   {stages}   (paraphrases {k_naive} | {k_ours})"
        )


def rss(args) -> None:
    from paraamr.models.tiny import make_tiny

    work = Path(tempfile.mkdtemp(prefix="bench-rss-"))
    tiny = Path(args.models) if args.models else work / "tiny"
    if not (tiny / "parser").is_dir():
        make_tiny(tiny)
    src = work / "lines.txt"
    rng = random.Random(0)
    with open(src, "w") as f:
        for i in range(args.rss_lines):
            if i % 1000 == 0:
                f.write(f"the dog saw {i} cats.\n")
            else:
                f.write(f"line {i:09d} " + "".join(rng.choice("abcdefgh ") for _ in range(40)) + "\n")
    cmd = [
        "torchrun",
        "--nproc_per_node",
        "2",
        str(ROOT / "generate.py"),
        "--input",
        str(src),
        "--output",
        str(work / "out"),
        "--parser-model",
        str(tiny / "parser"),
        "--generator-model",
        str(tiny / "generator"),
        "--lm-model",
        str(tiny / "lm"),
        "--max-perplexity",
        "none",
        "--max-chars",
        "30",
        "--no-progress",
        "--window",
        "256",
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB -> MiB (Linux)
    print(proc.stderr[-2500:])
    print(
        f"{args.rss_lines} lines, 2 processes: peak RSS of the largest process {peak:.0f} MiB "
        f"(goal < 2048 MiB), {seconds:.0f} s, exit {proc.returncode}; output in {work}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sources", type=int, default=96)
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--models", help="a make-tiny folder to reuse (made when missing)")
    parser.add_argument("--rss-lines", type=int, help="measure peak RSS per process on this many lines")
    args = parser.parse_args()
    rss(args) if args.rss_lines else bench(args)


if __name__ == "__main__":
    sys.exit(main())
