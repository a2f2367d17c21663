"""Lexical diversity between a paraphrase and its source: 1-BLEU and 1-∩/∪ (×100, the paper's scale).

1-BLEU is ``100 -`` sacrebleu's sentence BLEU with its defaults; 1-∩/∪ is ``100 × (1 - Jaccard)``
of the token sets (sacrebleu's tokenizer, lowercased by default; two empty texts give 0).

>>> scores, sig = bleu_diversity(["The cat sat on the mat."], ["The cat sat on the mat."])
>>> scores, str(sig)
([0.0], 'nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:...|paraamr:...')
>>> scores, sig = jaccard_diversity(["The cat sat."], ["the cat slept ."])
>>> scores, str(sig)
([40.0], 'tok:13a|case:lc|sets:yes|paraamr:...')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from paraamr.metrics import check_texts, signature
from paraamr.signature import Signature

__all__ = ["bleu_diversity", "jaccard_diversity", "tokenizer"]


@lru_cache(maxsize=16)
def _bleu(tokenize: str, lowercase: bool, smooth_method: str, smooth_value: float | None):
    from sacrebleu.metrics import BLEU

    if tokenize not in BLEU.TOKENIZERS:
        raise ValueError(f"unknown tokenizer {tokenize!r}; expected one of {', '.join(BLEU.TOKENIZERS)}")
    if smooth_method not in BLEU.SMOOTH_DEFAULTS:  # sacrebleu asserts, with an unformatted message
        methods = ", ".join(BLEU.SMOOTH_DEFAULTS)
        raise ValueError(f"unknown smooth_method {smooth_method!r}; expected one of {methods}")
    return BLEU(
        tokenize=tokenize,
        lowercase=lowercase,
        smooth_method=smooth_method,
        smooth_value=smooth_value,
        effective_order=True,
    )


def bleu_diversity(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
) -> tuple[list[float], Signature]:
    """Per pair ``100 - sentence BLEU(prediction, [reference])``, and sacrebleu's signature."""
    check_texts(predictions, references)
    bleu = _bleu(tokenize, lowercase, smooth_method, smooth_value)
    pairs = zip(predictions, references, strict=True)
    scores = [max(0.0, 100.0 - bleu.sentence_score(p, [r]).score) for p, r in pairs]  # no -4e-14
    if not scores:  # sacrebleu's signature needs one scored sentence for nrefs
        bleu.sentence_score("", [""])
    return scores, signature(bleu.get_signature().format())


def tokenizer(tokenize: str = "13a", *, lowercase: bool = True) -> Callable[[str], list[str]]:
    """The token list function of sacrebleu's tokenizer ``tokenize``, optionally lowercasing."""
    tok = _bleu(tokenize, False, "exp", None).tokenizer
    return lambda text: tok(text.lower() if lowercase else text).split()


def jaccard_diversity(
    predictions: Sequence[str],
    references: Sequence[str],
    *,
    tokenize: str = "13a",
    lowercase: bool = True,
) -> tuple[list[float], Signature]:
    """Per pair ``100 × (1 - Jaccard(token set of prediction, token set of reference))``, and a signature."""
    check_texts(predictions, references)
    split = tokenizer(tokenize, lowercase=lowercase)
    scores = []
    for p, r in zip(predictions, references, strict=True):
        a, b = set(split(p)), set(split(r))
        union = len(a | b)
        scores.append(100.0 * (1.0 - len(a & b) / union) if union else 0.0)
    return scores, signature(tok=tokenize, case="lc" if lowercase else "mixed", sets=True)
