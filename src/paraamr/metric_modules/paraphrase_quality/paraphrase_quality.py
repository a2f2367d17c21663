"""evaluate module: paraphrase quality (ParaQD) of paraphrases against their sources (cosine ×100)."""

import evaluate

from paraamr.metrics import pair_metric_info
from paraamr.quality import QualityScorer
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

_DESCRIPTION = """\
Paraphrase quality (ParaQD): the cosine of the sentence embeddings of each paraphrase and its
source under an encoder fine-tuned with triplet loss on meaning-preserving and meaning-changing
edits (`paraamr quality train`), so a fluent paraphrase that changed a number, a name, a negation
or who did what to whom scores low. With `labels` (1 valid, 0 invalid) it also gives the
separation μs (mean score of valid pairs − mean score of invalid pairs) and precision / recall /
F1 (macro and weighted) of `score >= threshold`. Scores and figures are ×100 (the paper's scale;
the stored `paraphrases.quality` field keeps the natural [-1, 1] scale); `threshold` is on the
natural scale (0.5, as in ParaQD). The model is loaded once and cached on the module.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the paraphrases.
    references (list of str): the source sentences, one per paraphrase.
    model (str): a folder written by `paraamr quality train`, or "all-MiniLM-L6-v2" (the untuned
        base, the default).
    labels (list of int, optional): 1 for a valid paraphrase, 0 for an invalid one.
    threshold (float): a pair is predicted valid when its cosine is at least this (default 0.5).
    batch_size (int): sentences per forward pass (default 64).
Returns:
    paraphrase_quality (float): the mean score, ×100.
    scores (list of float): one cosine ×100 per pair, in [-100, 100].
    separation, accuracy, precision_macro, recall_macro, f1_macro, precision_weighted,
        recall_weighted, f1_weighted (float, ×100): only when labels are given.
    signature (str): model, similarity, threshold, scale and version.
Examples:
    >>> metric = evaluate.load("metrics/paraphrase_quality")
    >>> results = metric.compute(
    ...     predictions=["Five apples were eaten by John.", "Penguins cannot fly."],
    ...     references=["John ate five apples.", "John ate five apples."], labels=[1, 0])
    >>> [round(s) for s in results["scores"]]
    [94, 9]
    >>> round(results["separation"]), results["f1_weighted"]
    (85, 100.0)
    >>> results["signature"]
    'model:all-MiniLM-L6-v2|sim:cos|threshold:0.5|scale:x100|version:...'
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ParaphraseQuality(evaluate.Metric):
    """ParaQD paraphrase-quality scores ×100, with μs and P/R/F1 when labels are given."""

    def _info(self):
        urls = ["https://github.com/paraamr/paraamr/blob/main/docs/quality.md"]
        return pair_metric_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, urls)

    def _scorer(self, model, batch_size):
        cache = self.__dict__.setdefault("_scorers", {})
        key = (str(model), batch_size)
        if key not in cache:
            cache[key] = QualityScorer(model, batch_size=batch_size)
        return cache[key]

    def _compute(
        self, predictions, references, model="all-MiniLM-L6-v2", labels=None, threshold=0.5, batch_size=64
    ):
        scorer = self._scorer(model, batch_size)
        scores = scorer.score(references, predictions)
        result = {
            "paraphrase_quality": 100 * sum(scores) / len(scores) if scores else float("nan"),
            "scores": [100 * s for s in scores],
        }
        if labels is not None:
            figures = {"separation": separation(scores, labels), **classify(scores, labels, threshold)}
            result |= {k: 100 * v for k, v in figures.items() if k != "threshold"}
        base, version = scorer.signature.split("|scale:1|")
        result["signature"] = f"{base}|threshold:{threshold}|scale:x100|{version}"
        return result
