"""AESOP's evaluation (PlusLabNLP/AESOP ``evaluation/eval.py``) against references and templates.

Corpus ``bleu`` (sacrebleu lowercased, as ``multi-bleu.perl -lc``), per-pair ``rouge1``, ``rouge2``,
``rougeL`` F1 (rouge-score, stemmed), ``meteor`` (nltk with offline WordNet and no paraphrase
table: close to AESOP's jar, not equal), all ×100, and ``ted_r`` / ``ted_e``: tree edit distance to
the reference's / template's parse in AESOP's convention (``height=None``: the full-tree distances
AESOP prints "at height 5").

>>> scores, sig = rouge(["the cat sat on the mat"], ["the cat sat on a mat"])
>>> [round(scores[k][0], 2) for k in ("rouge1", "rouge2", "rougeL")]
[83.33, 60.0, 83.33]
>>> str(sig)
'rouge:1,2,L|f:F1|stem:yes|lib:rouge-score:...|scale:x100|paraamr:...'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from importlib.metadata import version
from typing import Any

from paraamr.metrics import check_texts, signature
from paraamr.metrics.lexical import tokenizer
from paraamr.metrics.ted import distances, ted_signature
from paraamr.signature import Signature

__all__ = [
    "bleu_from_statistics",
    "bleu_statistics",
    "corpus_bleu",
    "meteor",
    "reference_pair_scores",
    "reference_scores",
    "rouge",
    "summed",
]


def _bleu(tokenize: str, lowercase: bool):
    from sacrebleu.metrics import BLEU

    return BLEU(tokenize=tokenize, lowercase=lowercase)


def bleu_statistics(
    predictions: Sequence[str], references: Sequence[str], *, tokenize: str = "13a", lowercase: bool = True
) -> list[list[int]]:
    """sacrebleu's corpus-BLEU statistics of each pair (lengths, n-gram matches and totals): corpus
    BLEU of any set of pairs is :func:`bleu_from_statistics` of their sum."""
    check_texts(predictions, references)
    if not predictions:
        return []
    stats = _bleu(tokenize, lowercase)._extract_corpus_statistics(list(predictions), [list(references)])
    return [[int(x) for x in row] for row in stats]


def summed(stats: Sequence[Sequence[int]]) -> list[int]:
    """The sum of per-pair :func:`bleu_statistics` (zeros for no pairs).

    >>> summed([[3, 3, 2, 1, 0, 0, 3, 2, 1, 0], [1, 1, 1, 0, 0, 0, 1, 0, 0, 0]])
    [4, 4, 3, 1, 0, 0, 4, 2, 1, 0]
    """
    return [sum(col) for col in zip(*stats, strict=True)] if stats else [0] * 10


def bleu_from_statistics(
    stats: Sequence[float], *, tokenize: str = "13a", lowercase: bool = True
) -> tuple[float, Signature]:
    """Corpus BLEU from summed :func:`bleu_statistics`, and its signature; NaN for no words.

    >>> bleu_from_statistics([0] * 10)[0]
    nan
    """
    bleu = _bleu(tokenize, lowercase)
    bleu._extract_corpus_statistics([""], [[""]])  # sets nrefs, which sacrebleu's signature needs
    score = bleu._compute_score_from_stats([int(x) for x in stats]).score if any(stats) else math.nan
    return score, signature(bleu.get_signature().format())


def corpus_bleu(
    predictions: Sequence[str], references: Sequence[str], *, tokenize: str = "13a", lowercase: bool = True
) -> tuple[float, Signature]:
    """Corpus BLEU of ``predictions`` against one reference each (sacrebleu), and its signature."""
    stats = bleu_statistics(predictions, references, tokenize=tokenize, lowercase=lowercase)
    return bleu_from_statistics(summed(stats), tokenize=tokenize, lowercase=lowercase)


@cache
def _rouge_scorer(stem: bool):
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=stem)


def rouge(
    predictions: Sequence[str], references: Sequence[str], *, stem: bool = True
) -> tuple[dict[str, list[float]], Signature]:
    """Per-pair ROUGE-1, ROUGE-2 and ROUGE-L F1 ×100 (rouge-score), and the signature."""
    check_texts(predictions, references)
    scorer = _rouge_scorer(stem)
    out: dict[str, list[float]] = {"rouge1": [], "rouge2": [], "rougeL": []}
    for p, r in zip(predictions, references, strict=True):
        found = scorer.score(r, p)  # (target, prediction)
        for key, values in out.items():
            values.append(100.0 * found[key].fmeasure)
    fields = {"f": "F1", "stem": stem, "lib": f"rouge-score:{version('rouge-score')}", "scale": "x100"}
    return out, signature(rouge="1,2,L", **fields)


def meteor(predictions: Sequence[str], references: Sequence[str]) -> tuple[list[float], Signature]:
    """Per-pair METEOR ×100 (nltk, WordNet synonyms, 13a tokens lowercased), and the signature."""
    from nltk.translate.meteor_score import meteor_score

    from paraamr.wordnet import wordnet

    check_texts(predictions, references)
    split = tokenizer("13a", lowercase=True)
    wn = wordnet()
    scores = [
        100.0 * meteor_score([split(r)], split(p), wordnet=wn)
        for p, r in zip(predictions, references, strict=True)
    ]
    return scores, signature(
        meteor="nltk", lib=f"nltk:{version('nltk')}", syn="wordnet", tok="13a", case="lc", scale="x100"
    )


def reference_pair_scores(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    pred_trees: Sequence[str] | None = None,
    ref_trees: Sequence[str] | None = None,
    template_trees: Sequence[str] | None = None,
    height: int | None = 5,
    parser_signature: Signature | str = "parser:given-trees",
    tokenize: str = "13a",
) -> tuple[dict[str, list], dict[str, Signature]]:
    """AESOP's measures per pair, each list adding up over any set of pairs: ``rouge1``, ``rouge2``,
    ``rougeL``, ``meteor``, ``bleu_stats`` and, given trees, ``ted_r`` / ``ted_e``; the signatures."""
    scores: dict[str, list] = {"bleu_stats": bleu_statistics(predictions, references, tokenize=tokenize)}
    rouges, rouge_sig = rouge(predictions, references)
    scores |= rouges
    scores["meteor"], meteor_sig = meteor(predictions, references)
    sigs = {
        "bleu": bleu_from_statistics([0] * 10, tokenize=tokenize)[1],
        "rouge": rouge_sig,
        "meteor": meteor_sig,
    }
    for key, others in (("ted_r", ref_trees), ("ted_e", template_trees)):
        if others is not None:
            if pred_trees is None:
                raise ValueError(f"{key} needs the predictions' trees")
            scores[key] = distances(pred_trees, others, height=height, convention="aesop")
    if ref_trees is not None or template_trees is not None:
        sigs["ted_reference"] = ted_signature(
            convention="aesop", normalize=False, heights=(height,), trees=parser_signature
        )
    return scores, sigs


def reference_scores(
    predictions: Sequence[str], references: Sequence[str], **options: Any
) -> tuple[dict[str, Any], dict[str, Signature]]:
    """:func:`reference_pair_scores` with the corpus ``bleu`` in place of ``bleu_stats``."""
    scores, sigs = reference_pair_scores(predictions, references, **options)
    scores["bleu"] = bleu_from_statistics(
        summed(scores.pop("bleu_stats")), tokenize=options.get("tokenize", "13a")
    )[0]
    return scores, sigs
