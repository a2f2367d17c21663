"""TED speed: TED-3 + TED-F over 20,000 tree pairs, paraamr.metrics.ted against the AESOP zss
computation, side by side as ratios; also link-grammar's parse rate and semantic_similarity's pairs/s.

Trees: link-grammar parses of distinct WordNet usage examples of at least ``--min-words`` words
(default 10; offline, real English), each word given a preterminal ``(W word)`` so trees have
about CoreNLP's size (phrases + one node per token); the mean node count is printed.
Pairs: neighbours in length order (paraphrase-like: similar lengths). Every tree string is made
unique (a leaf suffix: leaves never reach the distance) so no pair benefits from a cache. The
baseline is tests/metrics/metrics_aesop_reference.py (AESOP's steps with nltk + zss; slightly
faster than AESOP's own string round trip), run on a subsample and extrapolated; its values are
checked equal to ours on that subsample. Parsing is timed on its own, not in the TED figures.

Run: ``python benchmarks/bench_ted.py [--pairs 20000] [--baseline-pairs 200] [--sentences 2000]
[--min-words 10]``.
Figures on a shared machine are noisy; compare the ratios.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

PAPER_PAIRS = 193_869  # the paper's comparison set (Table 2)


def wordnet_sentences(limit: int, min_words: int) -> list[str]:
    from paraamr.wordnet import wordnet

    seen: dict[str, None] = {}
    for synset in wordnet().all_synsets():
        for example in synset.examples():
            if len(example.split()) >= min_words:
                seen.setdefault(example[:1].upper() + example[1:] + ".", None)
        if len(seen) >= limit:
            break
    return list(seen)[:limit]


def with_preterminals(tree: str) -> str:
    """``(NP the cat)`` -> ``(NP (W the) (W cat))``: one node per token, as CoreNLP's POS layer."""
    return re.sub(r"(\s)([^\s()]+)(?=[\s)])", r"\1(W \2)", tree)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--baseline-pairs", type=int, default=200)
    ap.add_argument("--sentences", type=int, default=2_000, help="distinct sentences parsed")
    ap.add_argument("--similarity-pairs", type=int, default=1_000)
    ap.add_argument("--min-words", type=int, default=10, help="shortest sentence taken (words)")
    args = ap.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "metrics"))
    from metrics_aesop_reference import aesop_reference

    from paraamr.metrics.parsers import LinkGrammarParser
    from paraamr.metrics.ted import backend, distance_table

    sentences = wordnet_sentences(args.sentences, args.min_words)
    with LinkGrammarParser() as parser:
        start = time.perf_counter()
        trees = parser.parse(sentences)
        parse_s = time.perf_counter() - start
    trees = [with_preterminals(t) for t in trees]
    order = sorted(range(len(trees)), key=lambda i: len(trees[i]))
    preds, refs = [], []
    for k in range(args.pairs):
        i = order[k % len(order)]
        j = order[min(k % len(order) + 1, len(order) - 1)]
        preds.append(trees[i].replace(")", f" u{k})", 1))  # unique strings, same trees
        refs.append(trees[j].replace(")", f" v{k})", 1))
    nodes = sum(t.count("(") for t in preds + refs) / (2 * len(preds))

    start = time.perf_counter()
    ted3, tedf = distance_table(preds, refs, heights=(3, None))
    ours_s = time.perf_counter() - start

    n_base = min(args.baseline_pairs, args.pairs)
    step = max(1, args.pairs // n_base)
    picked = list(range(0, args.pairs, step))[:n_base]
    start = time.perf_counter()
    base3 = [aesop_reference(preds[i], refs[i], 3) for i in picked]
    basef = [aesop_reference(preds[i], refs[i], None) for i in picked]
    base_s = (time.perf_counter() - start) * args.pairs / len(picked)
    same = base3 == [ted3[i] for i in picked] and basef == [tedf[i] for i in picked]

    from paraamr.models.embedder import Embedder

    embedder = Embedder()
    n_sim = min(args.similarity_pairs, len(sentences) // 2)  # disjoint halves: 2 sentences a pair
    sim_pairs = list(zip(sentences[:n_sim], sentences[n_sim : 2 * n_sim], strict=True))
    embedder.similarity(["warm up"], ["warm up"])
    start = time.perf_counter()
    embedder.similarity([a for a, _ in sim_pairs], [b for _, b in sim_pairs])
    sim_s = time.perf_counter() - start

    print(
        f"TED-3 + TED-F over {args.pairs:,} tree pairs ({nodes:.1f} nodes per tree on average; "
        f"backend {backend()[0]}; one process)"
    )
    print(f"{'':28}{'seconds':>10}{'pairs/s':>12}{'193,869 pairs':>16}")
    for name, secs in ((f"AESOP zss (x{len(picked)} extrap.)", base_s), ("paraamr.metrics.ted", ours_s)):
        print(f"{name:28}{secs:10.2f}{args.pairs / secs:12,.0f}{secs * PAPER_PAIRS / args.pairs:15.1f}s")
    print(f"speed-up: {base_s / ours_s:,.0f}x (goal >= 300x); same values on the subsample: {same}")
    print(f"193,869 pairs: {ours_s * PAPER_PAIRS / args.pairs:.1f} s (goal < 120 s on 2 cores)")
    print(f"mean TED-3 {sum(ted3) / len(ted3):.2f}, TED-F {sum(tedf) / len(tedf):.2f}")
    print(
        f"parsing (link-grammar, {len(sentences):,} sentences, one process): "
        f"{len(sentences) / parse_s:,.1f} sentences/s"
    )
    print(
        f"semantic_similarity ({embedder.signature}, CPU): {len(sim_pairs) / sim_s:,.1f} pairs/s "
        f"({len(sim_pairs):,} pairs, {2 * len(sim_pairs):,} sentences)"
    )
    print("Shared machine: figures are noisy.")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
