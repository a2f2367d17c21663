"""TED speed: TED-3 + TED-F, paraamr.metrics.ted against AESOP's zss computation, on pairs that
never repeat, at 20,000 pairs and at the paper's 193,869.

Trees: link-grammar parses with the POS layer (``paraamr evaluate``'s default trees) of
``--sentences`` distinct WordNet usage examples of at least ``--min-words`` words (offline, real
English; ``bench_evaluate.sources`` in WordNet's order). Pairs: each tree with its neighbours in
length order at offsets 1, 2, 3, ... (paraphrase-like: similar lengths); every (tree, tree) pair
occurs once, so no pair's distance can be served from another pair's (issue 17: the earlier
version cycled through 2,000 pairs).
Equal height-3 shapes still share one computation, as they do in a real corpus.

Baseline: AESOP's steps with nltk + zss (tests/metrics/metrics_aesop_reference.py; slightly
faster than AESOP's own string round trip), what a user of AESOP's evaluation runs, timed on a
``--baseline-pairs`` subsample and extrapolated; ours runs on the same subsample too, and the
values are compared there. Timing: single-threaded both sides (x-ted and zss are), a warm-up on
other pairs, ``--repeats`` interleaved rounds (baseline, ours on the subsample, ours on 20,000
pairs), best and median, CPU next to wall time, load average before and after; 193,869 pairs
run once, measured, not extrapolated.

Run: ``python benchmarks/bench_ted.py [--sentences 1000] [--pairs 20000] [--baseline-pairs 200]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

PAPER_PAIRS = 193_869


def distinct_pairs(trees: list[str], n: int) -> list[tuple[str, str]]:
    """``n`` (prediction, reference) tree pairs, each pair of positions once: neighbours in length
    order at offsets 1, 2, ... (wrapping around)."""
    order = sorted(range(len(trees)), key=lambda i: (len(trees[i]), i))
    if n > len(order) * (len(order) - 1):
        raise SystemExit(f"{n} distinct pairs need more than {len(order)} trees")
    pairs = []
    offset = 1
    while len(pairs) < n:
        for k in range(len(order)):
            pairs.append((trees[order[k]], trees[order[(k + offset) % len(order)]]))
            if len(pairs) == n:
                break
        offset += 1
    return pairs


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=1_000, help="distinct sentences parsed")
    ap.add_argument("--min-words", type=int, default=10, help="shortest sentence taken (words)")
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--baseline-pairs", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-full", action="store_true", help="skip the 193,869-pair run")
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "metrics"))
    from metrics_aesop_reference import aesop_reference

    from paraamr.metrics.parsers import LinkGrammarParser
    from paraamr.metrics.ted import backend, distance_table

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_evaluate import sources

    load_before = os.getloadavg()
    sentences = sources(args.sentences, args.min_words, seed=None)
    with LinkGrammarParser() as parser:
        trees, parse_s, _ = timed(lambda: parser.parse(sentences))
        tree_source = parser.signature["tree"]
    total = (args.pairs if args.no_full else max(args.pairs, PAPER_PAIRS)) + 50
    every = distinct_pairs(trees, total)
    warm, pairs = every[:50], every[50:]
    step = max(1, args.pairs // args.baseline_pairs)
    sub = pairs[: args.pairs : step][: args.baseline_pairs]
    nodes = sum(t.count("(") for p in pairs[: args.pairs] for t in p) / (2 * args.pairs)

    def ours(items):
        return distance_table([p for p, _ in items], [r for _, r in items], convention="aesop")

    def base(items):
        return [[aesop_reference(p, r, h) for p, r in items] for h in (3, None)]

    ours(warm), base(warm[:10])  # warm-up on other pairs
    rows: dict[str, list[tuple[float, float]]] = {"base": [], "ours_sub": [], "ours": []}
    for _ in range(args.repeats):
        base_out, wall, cpu = timed(lambda: base(sub))
        rows["base"].append((wall, cpu))
        sub_out, wall, cpu = timed(lambda: ours(sub))
        rows["ours_sub"].append((wall, cpu))
        _, wall, cpu = timed(lambda: ours(pairs[: args.pairs]))
        rows["ours"].append((wall, cpu))
    same = sub_out == base_out

    print(
        f"TED-3 + TED-F, x-ted backend {backend()[0]}, one thread; trees: link-grammar {tree_source} "
        f"of {len(sentences):,} sentences ({nodes:.1f} nodes per tree); every pair distinct; load "
        f"average before {load_before[0]:.2f}"
    )
    print(
        "\n| | pairs | best s (wall) | median s | CPU s (best) | pairs/s (best) |\n"
        "|---|---:|---:|---:|---:|---:|"
    )
    for key, name, n in (
        ("base", "AESOP nltk+zss", len(sub)),
        ("ours_sub", "paraamr.metrics.ted", len(sub)),
        ("ours", "paraamr.metrics.ted", args.pairs),
    ):
        walls = [w for w, _ in rows[key]]
        print(
            f"| {name} | {n:,} | {min(walls):.3f} | {statistics.median(walls):.3f} | "
            f"{min(c for _, c in rows[key]):.3f} | {n / min(walls):,.0f} |"
        )
    base_rate = len(sub) / min(w for w, _ in rows["base"])
    ours_rate = args.pairs / min(w for w, _ in rows["ours"])
    sub_rate = len(sub) / min(w for w, _ in rows["ours_sub"])
    cpu_ratio = min(c for _, c in rows["base"]) / max(min(c for _, c in rows["ours_sub"]), 1e-9)
    print(
        f"\nCPU-time ratio on the same {len(sub)} pairs: {cpu_ratio:,.0f}x; wall-time ratio there: "
        f"{sub_rate / base_rate:,.0f}x; ours at {args.pairs:,} "
        f"pairs vs the baseline's rate: {ours_rate / base_rate:,.0f}x; values equal on the "
        f"subsample: {same}"
    )
    if not args.no_full:
        (ted3, tedf), wall, cpu = timed(lambda: ours(pairs[:PAPER_PAIRS]))
        print(
            f"{PAPER_PAIRS:,} distinct pairs, measured: {wall:.1f} s wall, {cpu:.1f} s CPU "
            f"(baseline extrapolated: {PAPER_PAIRS / base_rate / 3600:.1f} h); mean TED-3 "
            f"{sum(ted3) / len(ted3):.2f}, TED-F {sum(tedf) / len(tedf):.2f}"
        )
    print(
        f"parsing ({len(sentences):,} sentences, POS layer, one process per core): "
        f"{len(sentences) / parse_s:,.1f}/s"
    )
    print(f"load average after {os.getloadavg()[0]:.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
