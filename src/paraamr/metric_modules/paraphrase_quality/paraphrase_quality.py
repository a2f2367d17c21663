"""evaluate module: paraphrase quality (ParaQD) of paraphrases against their sources (scores ×100)."""

import evaluate

from paraamr.metric_modules import (
    cached,
    check_model,
    check_per_pair,
    pair_metric,
    quiet_loading,
    scorable,
    spread,
)
from paraamr.metrics import mean
from paraamr.options import check_number
from paraamr.quality import DEFAULT_MODEL, QualityScorer
from paraamr.quality.evaluation import classify, separation

_CITATION = """\
@inproceedings{paraqd-2022,
    title = "'John ate 5 apples' != 'John ate some apples': Self-Supervised Paraphrase Quality
             Detection for Algebraic Word Problems",
    author = "Rishabh Gupta and Venktesh V and Mukesh Mohania and Vikram Goyal",
    booktitle = "Proceedings of ECML PKDD",
    year = "2022",
}
"""
_URLS = ["https://github.com/paraamr/paraamr/blob/main/docs/quality.md"]

_DESCRIPTION = """\
Paraphrase quality (ParaQD): how well each paraphrase keeps the meaning of its source, from a
model trained on meaning-preserving and meaning-changing edits (`paraamr quality train`), so a
fluent paraphrase that changed a number, a name, a date, a negation or who did what to whom scores
low. The default model (`paraamr-quality`, shipped with the package) is a cross-encoder plus the
cosine of all-mpnet-base-v2 (the cross-encoder alone where that model cannot be had); its scores
are calibrated to [0, 1] with 0.5 at its threshold (the untuned base `all-MiniLM-L6-v2`
gives raw cosines in [-1, 1]). With `labels` (1 valid, 0 invalid) it also gives the separation μs
and precision / recall / F1 of `score >= threshold`. Scores and figures are ×100; `threshold` is
on the natural scale (0.5). The model is loaded once and cached.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the paraphrases.
    references (list of str): the source sentences, one per paraphrase.
    model (str): a folder written by `paraamr quality train` (bi or cross mode), "paraamr-quality"
        (the shipped model, the default) or "all-MiniLM-L6-v2" (the untuned base).
    labels (list of int, optional): 1 for a valid paraphrase, 0 for an invalid one.
    threshold (float): a pair is predicted valid when its score is at least this, in [-1, 1] (default 0.5).
    batch_size (int): sentences per forward pass (default 64).
    device (str, optional): torch device; default CUDA when available, else CPU.
    Under evaluate.combine the other paraamr modules' options (pooling, tokenize, lowercase,
    smooth_method, jaccard_tokenize, jaccard_lowercase, targets, trees, parser, convention,
    normalize, templates, height, cache_dir) are accepted and ignored.
Returns:
    paraphrase_quality (float): the mean score, ×100.
    paraphrase_quality_scores (list of float): one score ×100 per pair (in [0, 100] for a trained
        model); None for a pair with an empty or missing text (None), a NUL or no visible
        character (the mean and the figures are over the others).
    paraphrase_quality_failures (list of str): one line per pair left out, naming the pair, the
        side and the problem.
    separation, accuracy, precision_macro, recall_macro, f1_macro, precision_weighted,
        recall_weighted, f1_weighted (float, ×100): only when labels are given; separation is None
        when the labels of the scored pairs are all 1 or all 0.
    paraphrase_quality_signature (str): model, mode, raw score, calibration, version, threshold
        and scale.
Examples:
    >>> import paraamr
    >>> metric = evaluate.load(paraamr.metric_path("paraphrase_quality"))
    >>> results = metric.compute(
    ...     predictions=["Five apples were eaten by John.", "Penguins cannot fly."],
    ...     references=["John ate five apples.", "John ate five apples."], labels=[1, 0])
    >>> [s > 50 for s in results["paraphrase_quality_scores"]], results["f1_weighted"]
    ([True, False], 100.0)
    >>> results["paraphrase_quality_signature"]  # doctest: +ELLIPSIS
    'quality|model:paraamr-quality|mode:cross|raw:logit[...]|calib:sigmoid@[...]|version:[...]|threshold:0.5|scale:x100'
"""


@pair_metric(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, _URLS)
class ParaphraseQuality(evaluate.Metric):
    """ParaQD paraphrase-quality scores ×100, with μs and P/R/F1 when labels are given."""

    def _compute(
        self,
        predictions,
        references,
        model=DEFAULT_MODEL,
        labels=None,
        threshold=0.5,
        batch_size=64,
        device=None,
        *,  # the other modules' options, which evaluate.combine passes to every module: ignored
        pooling=None, tokenize=None, lowercase=None, smooth_method=None, jaccard_tokenize=None,
        jaccard_lowercase=None, targets=None, trees=None, parser=None, convention=None, normalize=None,
        templates=None, height=None, cache_dir=None,
    ):
        check_per_pair(self, "labels", labels, predictions)
        # [-1, 1] as the command line's: an untuned base's raw cosines go below 0
        check_number(threshold, f"{self.name}: threshold (a score before the x100)", low=-1, high=1)
        check_model(self, model)
        key = (str(model), batch_size, None if device is None else str(device))
        scorer = cached(self, "_scorers", key, QualityScorer, model, batch_size=batch_size, device=device)
        with quiet_loading():
            scorer.model  # noqa: B018  (loaded on first use: here, quietly)
        ok, failures = scorable({"predictions": predictions, "references": references})
        scores = scorer.score([references[i] for i in ok], [predictions[i] for i in ok])
        result = {
            "paraphrase_quality": 100 * mean(scores),
            "paraphrase_quality_scores": spread([100 * s for s in scores], ok, len(predictions)),
            "paraphrase_quality_failures": failures,
        }
        if labels is not None:
            kept = [labels[i] for i in ok]
            figures = classify(scores, kept, threshold)  # checks the labels
            both = len(set(kept)) == 2  # μs compares the two classes: None with one of them only
            figures = {"separation": separation(scores, kept) if both else None, **figures}
            result |= {k: v if v is None else 100 * v for k, v in figures.items() if k != "threshold"}
        signature = scorer.signature.extend(threshold=threshold, scale="x100")
        result["paraphrase_quality_signature"] = str(signature)
        return result

