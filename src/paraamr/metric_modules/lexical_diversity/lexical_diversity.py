"""evaluate module: lexical diversity of paraphrases from their sources (1-BLEU, 1-∩/∪, ×100)."""

import evaluate

from paraamr.metric_modules import check_flags, check_per_pair, pair_metric, scorable, spread
from paraamr.metrics import mean
from paraamr.metrics.lexical import bleu_diversity, jaccard_diversity
from paraamr.metrics.reference import reference_scores
from paraamr.records import CITATION

_CITATION = (
    CITATION
    + """\
@inproceedings{post-2018-call,
    title = "A Call for Clarity in Reporting {BLEU} Scores",
    author = "Post, Matt",
    booktitle = "Proceedings of the Third Conference on Machine Translation",
    year = "2018",
}
"""
)
_URLS = ["https://github.com/mjpost/sacrebleu", "https://arxiv.org/abs/2305.16585"]

_DESCRIPTION = """\
Lexical diversity between each paraphrase and its source, on the scale of Table 2 of the ParaAMR
paper (×100, higher = more diverse): 1-BLEU = 100 - sacrebleu.sentence_bleu(paraphrase,
[source]).score with sacrebleu's defaults; 1-∩/∪ = 100 × (1 - Jaccard similarity of the two token
sets), tokens from sacrebleu's 13a tokenizer, lowercased. With `targets` (a reference paraphrase
per pair) it also gives AESOP's measures against them (PlusLabNLP/AESOP evaluation/eval.py):
corpus BLEU, ROUGE-1/2/L F1 and METEOR, ×100.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the paraphrases.
    references (list of str): the source sentences, one per paraphrase.
    tokenize (str): sacrebleu tokenizer for BLEU (default "13a").
    lowercase (bool): lowercase before BLEU (default False).
    smooth_method (str): sacrebleu smoothing, "exp" (default), "floor", "add-k" or "none".
    jaccard_tokenize (str): sacrebleu tokenizer for the token sets (default "13a").
    jaccard_lowercase (bool): lowercase the token sets (default True).
    targets (list of str, optional): a reference paraphrase per pair: adds bleu, rouge1, rouge2,
        rougeL, meteor (means, ×100), their per-pair lists (except BLEU, a corpus score) and
        signatures.
    Under evaluate.combine the other paraamr modules' options (model, pooling, device, batch_size,
    trees, parser, convention, normalize, templates, height, cache_dir, labels, threshold) are
    accepted and ignored.
Returns:
    bleu_diversity (float): mean 1-BLEU ×100 (Table 2's "1-BLEU").
    jaccard_diversity (float): mean 1-∩/∪ ×100 (Table 2's "1-∩/∪").
    bleu_diversity_scores, jaccard_diversity_scores (list of float): one per pair; None for a pair
        with an empty or missing text (None), a NUL or no visible character (the means are over
        the others).
    lexical_diversity_failures (list of str): one line per pair left out, naming the pair, the side
        and the problem (as paraamr evaluate leaves such pairs out).
    bleu_signature, jaccard_signature (str): how each was computed.
Examples:
    >>> import paraamr
    >>> metric = evaluate.load(paraamr.metric_path("lexical_diversity"))
    >>> results = metric.compute(predictions=["The cat sat on the mat.", "On the mat sat a cat."],
    ...                          references=["The cat sat on the mat.", "The cat sat on the mat."])
    >>> [round(s, 2) for s in results["bleu_diversity_scores"]]
    [0.0, 83.48]
    >>> [round(s, 2) for s in results["jaccard_diversity_scores"]]
    [0.0, 14.29]
    >>> results["bleu_signature"]  # doctest: +ELLIPSIS
    'nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:[...]|paraamr:[...]'
"""


@pair_metric(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, _URLS)
class LexicalDiversity(evaluate.Metric):
    """1-BLEU and 1-∩/∪ (×100) between paraphrases and sources."""

    def _compute(
        self,
        predictions,
        references,
        tokenize="13a",
        lowercase=False,
        smooth_method="exp",
        jaccard_tokenize="13a",
        jaccard_lowercase=True,
        targets=None,
        *,  # the other modules' options, which evaluate.combine passes to every module: ignored
        model=None, pooling=None, device=None, batch_size=None,
        trees=None, parser=None, convention=None, normalize=None, templates=None, height=None, cache_dir=None,
        labels=None, threshold=None,
    ):
        check_flags(self, lowercase=lowercase, jaccard_lowercase=jaccard_lowercase)
        check_per_pair(self, "targets", targets, predictions)
        sides = {"predictions": predictions, "references": references}
        if targets is not None:
            sides["targets"] = targets
        ok, failures = scorable(sides)
        preds, refs = ([texts[i] for i in ok] for texts in (predictions, references))
        bleu, bleu_signature = bleu_diversity(
            preds, refs, tokenize=tokenize, lowercase=lowercase, smooth_method=smooth_method
        )
        jaccard, jaccard_signature = jaccard_diversity(
            preds, refs, tokenize=jaccard_tokenize, lowercase=jaccard_lowercase
        )
        pairs = len(predictions)
        result = {
            "bleu_diversity": mean(bleu),
            "jaccard_diversity": mean(jaccard),
            "bleu_diversity_scores": spread(bleu, ok, pairs),
            "jaccard_diversity_scores": spread(jaccard, ok, pairs),
            "lexical_diversity_failures": failures,
            "bleu_signature": str(bleu_signature),
            "jaccard_signature": str(jaccard_signature),
        }
        if targets is not None:
            scores, signatures = reference_scores(preds, [targets[i] for i in ok])
            result["bleu"] = scores.pop("bleu")
            result |= {key: mean(values) for key, values in scores.items()}
            result |= {f"{key}_scores": spread(values, ok, pairs) for key, values in scores.items()}
            result |= {f"{key}_signature": str(sig) for key, sig in signatures.items() if key != "bleu"}
            result["reference_bleu_signature"] = str(signatures["bleu"])
        return result
