"""`paraamr evaluate` throughput: pairs/s end to end and per stage, against the per-pair loop.

Ours: :func:`paraamr.metrics.report.evaluate_pairs` (each distinct sentence parsed once by
link-grammar in one process per core with the POS layer, embedded once in length-sorted batches,
TED through the distance table). Baseline: the straightforward loop AESOP's scripts follow
(tests/metrics/metrics_per_pair_loop.py: for each pair parse both sides, embed both, score; one
link-grammar process, no cache), doing the same work with the same models; its values are
compared with ours on the pairs it scores.

Pairs (synthetic but shaped like ParaAMR's): sources are distinct WordNet usage examples of at
least ``--min-words`` words (offline, real English); each gets ``--per-source`` paraphrases made by
rule (a PP or adverbial fronted, a clause wrapped in "It is true that" / "People say that", a
content word replaced by a WordNet synonym, a word dropped, a clause cleft): every paraphrase is
a distinct sentence, so only sources recur (as in ParaAMR, where each source has several).

Methodology (issue 17): torch threads pinned (``--threads``, printed); a warm-up of both sides on
other pairs; ``--repeats`` rounds alternating baseline and ours, each with a fresh parser (no
parse reaches the next round); best and median of pairs/s; wall and CPU time (this process and
its link-grammar children); load average before and after. The baseline runs on a random
``--loop-pairs`` subsample (it costs the same per pair whatever the size) and is extrapolated;
193,869 pairs (Table 2) are extrapolated from ours' best rate.

Run: ``python benchmarks/bench_evaluate.py [--pairs 20000] [--loop-pairs 300] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

PAPER_PAIRS = 193_869
CONNECTIVES = (" because ", " when ", " after ", " before ", " while ", " if ", " although ")
PREPOSITIONS = (" in ", " on ", " at ", " for ", " with ", " from ", " during ", " by ")


def sources(limit: int, min_words: int) -> list[str]:
    """Distinct WordNet usage examples of at least ``min_words`` words, capitalized, with a period."""
    from paraamr.wordnet import wordnet

    seen: dict[str, None] = {}
    for synset in wordnet().all_synsets():
        for example in synset.examples():
            if len(example.split()) >= min_words and "`" not in example:
                text = example.strip().rstrip(".!?;")
                seen.setdefault(text[:1].upper() + text[1:] + ".", None)
        if len(seen) >= limit:
            break
    return list(seen)[:limit]


def _lower_first(text: str) -> str:
    return text if text[:2].isupper() else text[:1].lower() + text[1:]


def _synonym(words: list[str], rng: random.Random) -> list[str] | None:
    from paraamr.wordnet import wordnet

    wn = wordnet()
    order = list(range(1, len(words)))
    rng.shuffle(order)
    for i in order:
        word = words[i].strip(",.;:")
        if len(word) < 4 or not word.isalpha():
            continue
        for synset in wn.synsets(word.lower())[:2]:
            for lemma in synset.lemma_names():
                if lemma.lower() != word.lower() and "_" not in lemma:
                    return [*words[:i], words[i].replace(word, lemma), *words[i + 1 :]]
    return None


def paraphrases(source: str, k: int, rng: random.Random) -> list[str]:
    """``k`` distinct rule-made paraphrases of ``source`` (see the module docstring)."""
    body = source.rstrip(".")
    words = body.split()
    out: dict[str, None] = {}
    for connective in CONNECTIVES:  # clause order
        if connective in body:
            head, tail = body.split(connective, 1)
            out[f"{connective.strip().capitalize()} {tail}, {_lower_first(head)}."] = None
            break
    for prep in PREPOSITIONS:  # a PP fronted
        at = body.rfind(prep)
        if at > len(body) // 3:
            out[f"{body[at + 1 :].capitalize()}, {_lower_first(body[:at])}."] = None
            break
    out[f"It is true that {_lower_first(body)}."] = None
    swapped = _synonym(words, rng)
    if swapped:
        out[" ".join(swapped) + "."] = None
    if len(words) > 4:
        drop = rng.randrange(1, len(words) - 1)
        out[" ".join(words[:drop] + words[drop + 1 :]) + "."] = None
    out[f"People say that {_lower_first(body)}."] = None
    out[f"What happened is that {_lower_first(body)}."] = None
    out[f"Apparently, {_lower_first(body)}."] = None
    out[f"{body}, as it happens."] = None
    out.pop(source, None)
    return list(out)[:k]


def corpus(n_pairs: int, per_source: int, min_words: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n_pairs`` (source, paraphrase) pairs, ``per_source`` (at most) per source."""
    rng = random.Random(seed)
    pairs: list[tuple[str, str]] = []
    for source in sources(n_pairs, min_words):
        pairs += [(source, p) for p in paraphrases(source, per_source, rng)]
        if len(pairs) >= n_pairs:
            break
    if len(pairs) < n_pairs:
        raise SystemExit(f"only {len(pairs)} pairs from WordNet examples of >= {min_words} words")
    return pairs[:n_pairs]


def cpu_seconds() -> float:
    """CPU time of this process and its ended children (link-grammar processes once closed)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run_loop(pairs, embedder):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "metrics"))
    from metrics_per_pair_loop import per_pair_loop, uncached

    from paraamr.metrics.parsers import LinkGrammarParser

    parser = LinkGrammarParser(processes=1)
    wall, cpu = time.perf_counter(), cpu_seconds()
    try:
        scores = per_pair_loop(pairs, embedder=embedder, parse=uncached(parser))
    finally:
        parser.close()
    return scores, time.perf_counter() - wall, cpu_seconds() - cpu, {}


def run_ours(pairs, embedder, processes):
    from paraamr.metrics.parsers import LinkGrammarParser
    from paraamr.metrics.report import Pair, evaluate_pairs

    items = [Pair(str(i), s, p) for i, (s, p) in enumerate(pairs)]
    parser = LinkGrammarParser(processes=processes)
    wall, cpu = time.perf_counter(), cpu_seconds()
    try:
        result = evaluate_pairs(items, embedder=embedder, parser=parser)
    finally:
        parser.close()
    result["distinct_per_pair"] = result["distinct_sentences"] / len(pairs)
    return result, time.perf_counter() - wall, cpu_seconds() - cpu, result["timings"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--loop-pairs", type=int, default=300, help="baseline subsample (extrapolated)")
    ap.add_argument("--per-source", type=int, default=6, help="paraphrases per source")
    ap.add_argument("--min-words", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="torch threads (pinned)")
    ap.add_argument("--processes", type=int, default=None, help="link-grammar processes (default: cores)")
    args = ap.parse_args()

    import torch

    from paraamr.metrics.parsers import cpu_count
    from paraamr.models.embedder import Embedder

    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    all_pairs = corpus(args.pairs + 40, args.per_source, args.min_words)
    warm, pairs = all_pairs[:40], all_pairs[40:]
    sample_at = sorted(random.Random(1).sample(range(len(pairs)), min(args.loop_pairs, len(pairs))))
    loop_pairs = [pairs[i] for i in sample_at]
    embedder = Embedder("all-MiniLM-L6-v2", device="cpu")
    processes = args.processes or cpu_count()
    print(
        f"{len(pairs):,} pairs ({len({s for s, _ in pairs}):,} sources, "
        f"{sum(len(p.split()) for _, p in pairs) / len(pairs):.1f} words a paraphrase); baseline on "
        f"{len(loop_pairs)}; torch threads {torch.get_num_threads()}, link-grammar processes "
        f"{processes}, cores {cpu_count()}; load average before {load_before[0]:.2f}"
    )
    run_loop(warm[:10], embedder)  # warm-up on other pairs: models, spaCy, link-grammar dictionaries
    run_ours(warm[10:], embedder, processes)
    rates: dict[str, list[float]] = {"loop": [], "ours": []}
    cpu: dict[str, list[float]] = {"loop": [], "ours": []}
    stages: list[dict[str, float]] = []
    for round_ in range(args.repeats):
        loop_scores, wall, cpu_s, _ = run_loop(loop_pairs, embedder)
        rates["loop"].append(len(loop_pairs) / wall)
        cpu["loop"].append(cpu_s / len(loop_pairs))
        result, wall, cpu_s, timings = run_ours(pairs, embedder, processes)
        rates["ours"].append(len(pairs) / wall)
        cpu["ours"].append(cpu_s / len(pairs))
        stages.append(timings)
        print(
            f"round {round_ + 1}: loop {rates['loop'][-1]:.1f} pairs/s, ours {rates['ours'][-1]:.1f} "
            f"pairs/s ({wall:.0f} s), load {os.getloadavg()[0]:.2f}"
        )
    diffs = {
        key: max(abs(result["scores"][key][i] - loop_scores[key][k]) for k, i in enumerate(sample_at))
        for key in loop_scores
    }
    print(f"\nvalues, ours vs loop on its {len(loop_pairs)} pairs (max |difference|):")
    print("  " + ", ".join(f"{k} {v:.2g}" for k, v in diffs.items()))
    best = {k: max(v) for k, v in rates.items()}
    median = {k: statistics.median(v) for k, v in rates.items()}
    print("\n| | loop (AESOP-style) | ours | ratio |\n|---|---|---|---|")
    print(
        f"| pairs/s, best of {args.repeats} | {best['loop']:.1f} | {best['ours']:.1f} | "
        f"{best['ours'] / best['loop']:.1f}x |"
    )
    print(
        f"| pairs/s, median | {median['loop']:.1f} | {median['ours']:.1f} | "
        f"{median['ours'] / median['loop']:.1f}x |"
    )
    cpu_loop, cpu_ours = min(cpu["loop"]), min(cpu["ours"])
    print(
        f"| CPU ms a pair, best | {1000 * cpu_loop:.1f} | {1000 * cpu_ours:.1f} | "
        f"{cpu_loop / cpu_ours:.1f}x |"
    )
    fastest = max(range(args.repeats), key=lambda r: rates["ours"][r])
    print(
        "\nours per stage (fastest round): "
        + ", ".join(
            f"{stage} {len(pairs) / s:,.0f} pairs/s ({s:.1f} s)" for stage, s in stages[fastest].items()
        )
    )
    print(f"distinct sentences parsed per pair: {result['distinct_per_pair']:.2f} (loop: 2)")
    minutes = PAPER_PAIRS / best["ours"] / 60
    loop_hours = PAPER_PAIRS / best["loop"] / 3600
    print(
        f"\n{PAPER_PAIRS:,} pairs (Table 2), EXTRAPOLATED from the best measured rates: ours "
        f"{minutes:.0f} min, loop {loop_hours:.1f} h"
    )
    print(f"load average after {os.getloadavg()[0]:.2f} (before {load_before[0]:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
