"""The straightforward per-pair loop AESOP's scripts follow: for each (source, paraphrase) pair,
parse both sides, embed both, score. The baseline of benchmarks/bench_evaluate.py and of the
equal-values test in tests/metrics/test_report.py.

Each sentence goes to the parser and the embedder again wherever it recurs (no cache, one
link-grammar process, one spaCy call per sentence for the POS layer, two sentences per embedder
call); the scoring calls are the library calls a user of sacrebleu and x-ted writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sacrebleu

from paraamr.metrics.lexical import tokenizer
from paraamr.metrics.ted import distances


def per_pair_loop(
    pairs: Sequence[tuple[str, str]], *, embedder, parse: Callable[[str], str]
) -> dict[str, list[float]]:
    """Per-pair scores of (source, paraphrase) ``pairs``: similarity, 1-BLEU, 1-∩/∪ (×100), TED-3, TED-F."""
    split = tokenizer("13a", lowercase=True)
    out: dict[str, list[float]] = {
        k: [] for k in ("semantic_similarity", "bleu_diversity", "jaccard_diversity")
    }
    out |= {"ted3": [], "tedf": []}
    for source, paraphrase in pairs:
        source_tree, para_tree = parse(source), parse(paraphrase)
        a, b = embedder.encode([paraphrase, source])
        out["semantic_similarity"].append(100.0 * min(1.0, max(-1.0, float(a @ b))))
        out["bleu_diversity"].append(max(0.0, 100.0 - sacrebleu.sentence_bleu(paraphrase, [source]).score))
        p, s = set(split(paraphrase)), set(split(source))
        out["jaccard_diversity"].append(100.0 * (1 - len(p & s) / len(p | s)) if p | s else 0.0)
        out["ted3"] += distances([para_tree], [source_tree], height=3)
        out["tedf"] += distances([para_tree], [source_tree])
    return out


def uncached(parser) -> Callable[[str], str]:
    """``parser``'s tree of one sentence, parsed afresh each call (no cache), as a loop does."""
    from paraamr.metrics.parsers import sentence_key

    return lambda sentence: parser._parse_batch([sentence_key(sentence)])[0]
