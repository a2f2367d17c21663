"""`paraamr evaluate` at corpus scale: the real 193,869-pair run end to end, each stage's time and
bound, the speed-ups of the parse and embed stages against the libraries' defaults, and scaling.

Corpus (``corpus()``, deterministic, offline): ParaAMR-subset-sized and shaped. Sources are the
distinct WordNet 3.0 usage examples of at least ``--min-words`` words (real English; 29,643 of
5 words or more), capitalized with a period, in a fixed shuffled order (seed 0) so that any
prefix is a fair sample; each gets 7 distinct rule-made paraphrases (as ParaAMR's ~6.9 per
source): a clause or PP fronted, a WordNet synonym, a word dropped, and framings ("It is true
that ...", "Apparently, ...", ...); the first ``--pairs`` pairs (default 193,869, i.e. 27,696
sources) are used. Every paraphrase is a distinct sentence, so 1.14 distinct sentences a pair.

Parts (``--part``, several allowed; results appended as JSON lines to ``--out`` so parts run
apart combine with ``--report``):

- ``e2e``: :func:`paraamr.metrics.report.evaluate_pairs` as ``paraamr evaluate`` calls it (parser
  and embedder defaults), wall and CPU time, its own per-stage timings.
- ``bounds``: each stage alone on all cores, on the same sentences: parse (link-grammar + POS
  layer, one call), tree build (:func:`read_tree` of every tree), TED (TED-3 + TED-F on the read
  trees), embed (every distinct sentence), BLEU (1-BLEU + 1-∩/∪); ``--bounds-every K`` measures
  them on every K-th source's pairs and scales by the sentence (or pair) count (said in the table).
- ``speedups``: on the first ``--speed-pairs`` pairs, each setting against the library defaults a
  competent user writes, outputs compared: link-grammar one sentence at a time per process (its
  defaults) vs ``ahead`` sentences queued; spaCy's full default pipeline vs the tagger alone;
  the parse stage both ways; sentence-transformers' ``encode`` defaults (batch 32, torch's threads)
  vs :class:`Embedder` (one single-threaded process per core); link-parser ``-limit=100`` as an
  option (speed and what it changes); start-up of each piece.
- ``scaling``: N = 1 and 2 processes pinned one core each with ``taskset``, each evaluating its
  share of the sources (all pairs of a source in one process; one link-grammar process and one
  torch thread each); ratio of the slowest process's time.

Run in parts on a shared machine, e.g. ``nice -n 5 python benchmarks/bench_evaluate.py --pairs
3000 --part e2e bounds speedups scaling --out /tmp/b.jsonl``; the full run is the default
``--pairs``. Times are wall seconds with CPU seconds (this process and its children) and the load
average before and after each part.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import cpu_seconds, load

PAPER_PAIRS = 193_869
PER_SOURCE = 7
CONNECTIVES = (" because ", " when ", " after ", " before ", " while ", " if ", " although ")
PREPOSITIONS = (" in ", " on ", " at ", " for ", " with ", " from ", " during ", " by ")
FRAMES = (
    "It is true that {}.",
    "People say that {}.",
    "What happened is that {}.",
    "Apparently, {}.",
    "{}, as it happens.",
    "In fact, {}.",
    "We know that {}.",
)


def sources(limit: int, min_words: int, *, seed: int = 0) -> list[str]:
    """``limit`` distinct WordNet usage examples of at least ``min_words`` words, capitalized with a
    period, in a fixed shuffled order (``seed``; None keeps WordNet's order)."""
    from paraamr.wordnet import wordnet

    seen: dict[str, None] = {}
    for synset in wordnet().all_synsets():
        for example in synset.examples():
            if len(example.split()) >= min_words and "`" not in example:
                text = example.strip().rstrip(".!?;")
                seen.setdefault(text[:1].upper() + text[1:] + ".", None)
    found = list(seen)
    if seed is not None:
        random.Random(seed).shuffle(found)
    return found[:limit]


def _lower_first(text: str) -> str:
    return text if text[:2].isupper() else text[:1].lower() + text[1:]


def _synonym(words: list[str], rng: random.Random) -> list[str] | None:
    from paraamr.wordnet import wordnet

    order = list(range(1, len(words)))
    rng.shuffle(order)
    for i in order:
        word = words[i].strip(",.;:")
        if len(word) < 4 or not word.isalpha():
            continue
        for synset in wordnet().synsets(word.lower())[:2]:
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
    swapped = _synonym(words, rng)
    if swapped:
        out[" ".join(swapped) + "."] = None
    if len(words) > 4:
        drop = rng.randrange(1, len(words) - 1)
        out[" ".join(words[:drop] + words[drop + 1 :]) + "."] = None
    for frame in FRAMES:
        out[frame.format(body if frame.startswith("{") else _lower_first(body))] = None
    out.pop(source, None)
    return list(out)[:k]


def corpus(n_pairs: int, min_words: int = 5, per_source: int = PER_SOURCE) -> list[tuple[str, str]]:
    """The first ``n_pairs`` (source, paraphrase) pairs, ``per_source`` per source."""
    rng = random.Random(0)
    pairs: list[tuple[str, str]] = []
    for source in sources(-(-n_pairs // per_source) + 1, min_words):
        pairs += [(source, p) for p in paraphrases(source, per_source, rng)]
        if len(pairs) >= n_pairs:
            return pairs[:n_pairs]
    raise SystemExit(f"only {len(pairs)} pairs from WordNet examples of >= {min_words} words")


def distinct(pairs: list[tuple[str, str]]) -> list[str]:
    """Each distinct sentence once (what the parser and the embedder see), sources first."""
    from paraamr.metrics.parsers import sentence_key

    return list(dict.fromkeys(sentence_key(s) for pair in pairs for s in pair))


def timed(fn):
    """``(fn(), wall seconds, CPU seconds of this process and its waited-for children)``."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    out = fn()
    return out, time.perf_counter() - wall, cpu_seconds() - cpu


def record(args, part: str, **fields) -> dict:
    row = {"part": part, "pairs": args.pairs, "time": time.strftime("%Y-%m-%d %H:%M:%S"), **fields}
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)
    return row


def part_e2e(args, pairs) -> None:
    from paraamr.metrics.parsers import LinkGrammarParser
    from paraamr.metrics.report import Pair, evaluate_pairs
    from paraamr.models.embedder import Embedder

    before = load()

    def start():  # workers, spaCy and the model loaded, as before any corpus-sized run
        parser, embedder = LinkGrammarParser(), Embedder(device="cpu")
        parser.parse(["Warm the workers up."])
        embedder.encode(["Warm the model up."])
        return parser, embedder

    (parser, embedder), start_wall, _ = timed(start)
    items = [Pair(str(i), s, p) for i, (s, p) in enumerate(pairs)]

    def run():  # the workers closed inside, so that their CPU time is counted
        with parser:
            return evaluate_pairs(items, embedder=embedder, parser=parser)

    result, wall, cpu = timed(run)
    means = {
        k: result[k] for k in ("semantic_similarity", "bleu_diversity", "jaccard_diversity", "ted3", "tedf")
    }
    record(
        args,
        "e2e",
        wall=wall,
        cpu=cpu,
        load_start=start_wall,
        stages=result["timings"],
        distinct=result["distinct_sentences"],
        failures=len(result["failures"]),
        means=means,
        load_before=before,
        load_after=load(),
    )


def part_bounds(args, pairs) -> None:
    """Each stage alone on all cores (see the module docstring)."""
    from paraamr.metrics.lexical import bleu_diversity, jaccard_diversity
    from paraamr.metrics.parsers import LinkGrammarParser, sentence_key
    from paraamr.metrics.ted import distance_table
    from paraamr.metrics.trees import read_tree
    from paraamr.models.embedder import Embedder
    from paraamr.tasks import core_share

    before = load()
    every = args.bounds_every
    kept_sources = set(dict.fromkeys(s for s, _ in pairs).keys())
    if every > 1:
        kept_sources = set(list(dict.fromkeys(s for s, _ in pairs))[::every])
    sub = [p for p in pairs if p[0] in kept_sources]
    sentences = distinct(sub)
    scale = {"sentences": len(distinct(pairs)) / len(sentences), "pairs": len(pairs) / len(sub)}
    stages = {}
    parser = LinkGrammarParser()
    parser.parse(["Warm the workers up."])

    def parse():  # the workers closed inside, so that their CPU time is counted
        with parser:
            return parser.parse(sentences)

    trees, wall, cpu = timed(parse)
    stages["parse"] = (wall, cpu, "sentences")
    by_key = dict(zip(sentences, trees, strict=True))
    read, wall, cpu = timed(
        lambda: {k: read_tree(t, leaves=True) for k, t in by_key.items() if isinstance(t, str)}
    )  # with the words: the default convention's trees
    stages["trees"] = (wall, cpu, "sentences")
    ok = [(s, p) for s, p in sub if sentence_key(s) in read and sentence_key(p) in read]
    _, wall, cpu = timed(
        lambda: distance_table(
            [read[sentence_key(p)] for _, p in ok], [read[sentence_key(s)] for s, _ in ok], heights=(3, None)
        )
    )
    stages["ted"] = (wall, cpu, "pairs")
    embedder = Embedder(device="cpu")
    embedder.encode(sentences[:64])
    _, wall, cpu = timed(lambda: embedder.encode(sentences))
    stages["embed"] = (wall, cpu, "sentences")
    preds, srcs = [p for _, p in sub], [s for s, _ in sub]
    _, wall, cpu = timed(lambda: (bleu_diversity(preds, srcs), jaccard_diversity(preds, srcs)))
    stages["bleu"] = (wall, cpu, "pairs")
    scaled = {
        k: {"wall": w * scale[u], "cpu": c * scale[u], "measured_wall": w} for k, (w, c, u) in stages.items()
    }
    record(
        args,
        "bounds",
        every=every,
        measured_pairs=len(sub),
        measured_sentences=len(sentences),
        cores=core_share(),
        embed_processes=embedder._pool_size(len(sentences)),
        stages=scaled,
        load_before=before,
        load_after=load(),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=PAPER_PAIRS, help="first N pairs of the corpus")
    ap.add_argument("--min-words", type=int, default=5)
    ap.add_argument(
        "--part",
        nargs="+",
        default=["e2e", "bounds"],
        choices=("e2e", "bounds", "speedups", "scaling", "shard"),
    )
    ap.add_argument("--bounds-every", type=int, default=1, help="bounds on every K-th source (scaled)")
    ap.add_argument("--speed-pairs", type=int, default=2000)
    ap.add_argument("--scaling-pairs", type=int, default=1400)
    ap.add_argument("--shard", default="0/1", help="(internal, part shard) I/N")
    ap.add_argument("--out", default=None, help="append each part's results to this JSON lines file")
    ap.add_argument(
        "--report", nargs="*", default=None, metavar="FILE", help="print the tables of these results"
    )
    args = ap.parse_args()
    from bench_evaluate_parts import part_scaling, part_shard, part_speedups, report

    if args.report is not None:
        report([json.loads(line) for f in args.report for line in Path(f).read_text().splitlines() if line])
        return 0
    pairs = corpus(args.pairs, args.min_words)
    if "shard" not in args.part:
        print(
            f"{len(pairs):,} pairs, {len({s for s, _ in pairs}):,} sources, "
            f"{sum(len(s.split()) for s, _ in pairs) / len(pairs):.1f} / "
            f"{sum(len(p.split()) for _, p in pairs) / len(pairs):.1f} words a source / paraphrase; "
            f"{os.cpu_count()} cores; {load()}",
            flush=True,
        )
    parts = {"e2e": part_e2e, "bounds": part_bounds, "speedups": part_speedups, "scaling": part_scaling}
    parts["shard"] = part_shard
    for name in args.part:
        parts[name](args, pairs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
