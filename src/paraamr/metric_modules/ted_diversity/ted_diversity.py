"""evaluate module: syntactic diversity of paraphrases from their sources (TED-3 and TED-F)."""

import evaluate

from paraamr.failures import is_failure
from paraamr.metric_modules import cached, check_flags, check_per_pair, no_text, pair_metric, scorable, spread
from paraamr.metrics import mean
from paraamr.metrics.parsers import get_parser
from paraamr.metrics.ted import CONVENTIONS, check_height, distance_table, distances, ted_signature
from paraamr.records import CITATION

_CITATION = (
    CITATION
    + """\
@inproceedings{sun-etal-2021-aesop,
    title = "{AESOP}: Paraphrase Generation with Adaptive Syntactic Control",
    author = "Sun, Jiao and Ma, Xuezhe and Peng, Nanyun",
    booktitle = "Proceedings of EMNLP",
    year = "2021",
}
"""
)
_URLS = ["https://github.com/PlusLabNLP/AESOP", "https://arxiv.org/abs/2305.16585"]

_DESCRIPTION = """\
Syntactic diversity between each paraphrase and its source: the tree edit distance between their
constituency trees trimmed to height 3 (TED-3) and full (TED-F), as in Table 2 of the ParaAMR
paper. Convention "paper" (default, that table's scale) drops the ROOT wrapper and keeps the words
as nodes; "aesop" reproduces PlusLabNLP/AESOP evaluation/eval_utils.py; "plain" keeps the trees
without their words. Sentences are parsed by `parser`: "link-grammar" (offline, with spaCy's Penn
tags; values are NOT CoreNLP's), "corenlp" or a CoreNLP server URL (the paper's parser), or any
callable returning a bracket string; with `trees=True` the inputs are PTB bracket strings. With
`targets` and `templates` it also gives AESOP's TED-R and TED-E at `height` (AESOP's convention).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the paraphrases (or their trees with trees=True).
    references (list of str): the sources (or their trees), one per paraphrase.
    trees (bool): inputs are PTB bracket strings (default False: sentences, parsed by `parser`).
    parser (str or callable): "link-grammar" (default), "corenlp", a CoreNLP URL
        ("http://localhost:9000"), or a function from a sentence to a bracket string.
    convention (str): "paper" (default), "aesop" or "plain" (TED-3 and TED-F).
    normalize (bool): divide each distance by the larger tree's node count (default False).
    targets (list of str, optional): a reference paraphrase per pair (or its tree): adds TED-R.
    templates (list of str, optional): a syntactic template per pair (or its tree): adds TED-E.
    height (int or None): the height of TED-R/TED-E (default 5; None: full trees, which is what
        AESOP's eval.py computes, as its distance trims only at height 3).
    cache_dir (str, optional): keep parses on disk there across runs.
    Under evaluate.combine the other paraamr modules' options (model, pooling, device, batch_size,
    tokenize, lowercase, smooth_method, jaccard_tokenize, jaccard_lowercase, labels, threshold) are
    accepted and ignored.
Returns:
    ted3, tedf (float): mean TED-3 and TED-F.
    ted3_scores, tedf_scores (list): one distance per pair; None for a pair with a sentence the
        parser could not parse (the means are over the other pairs).
    ted_r, ted_e (float), ted_r_scores, ted_e_scores (list): with targets / templates.
    ted_diversity_failures (list of str): one line per pair left out, naming the pair, the side
        and the reason (a sentence over link-grammar's 2,046-byte line, control characters, ...).
    ted_diversity_signature (str): convention, normalization, parser, distance library, versions.
    reference_signature (str): the same for TED-R / TED-E (convention aesop), with targets / templates.
Raises:
    ValueError naming the pair for a malformed tree given with trees=True.
Examples:
    >>> import paraamr
    >>> metric = evaluate.load(paraamr.metric_path("ted_diversity"))
    >>> source = "(ROOT (S (NP (PRP I)) (VP (VBP know) (NP (PRP it))) (. .)))"
    >>> paraphrase = "(ROOT (S (SBAR (IN that)) (NP (PRP I)) (VP (VBP know)) (. .)))"
    >>> results = metric.compute(predictions=[paraphrase], references=[source], trees=True)
    >>> results["ted3_scores"], results["tedf_scores"]
    ([3], [6])
    >>> results["ted_diversity_signature"]  # doctest: +ELLIPSIS
    'convention:paper|levels:from-clause|leaves:lowercased|heights:3,full|norm:no|backend:[...]|parser:given-trees|paraamr:[...]'
    >>> aesop = metric.compute(predictions=[paraphrase], references=[source], trees=True, convention="aesop")
    >>> aesop["ted3_scores"], aesop["tedf_scores"]
    ([1], [4])
    >>> results = metric.compute(predictions=["It is known to me."], references=["I know it."])
    >>> results["ted3"], results["tedf"]
    (2.0, 10.0)
    >>> results["ted_diversity_signature"]  # doctest: +ELLIPSIS
    'convention:paper|[...]|parser:link-grammar:[...]|tree:ROOT+POS:spacy:[...]|case:upper-i|scale:not-paper|paraamr:[...]'
"""


@pair_metric(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, _URLS)
class TedDiversity(evaluate.Metric):
    """TED-3 and TED-F between the constituency trees of paraphrases and sources."""

    def _compute(
        self,
        predictions,
        references,
        trees=False,
        parser="link-grammar",
        convention="paper",
        normalize=False,
        targets=None,
        templates=None,
        height=5,
        cache_dir=None,
        *,  # the other modules' options, which evaluate.combine passes to every module: ignored
        model=None, pooling=None, device=None, batch_size=None,
        tokenize=None, lowercase=None, smooth_method=None, jaccard_tokenize=None, jaccard_lowercase=None,
        labels=None, threshold=None,
    ):
        check_flags(self, trees=trees, normalize=normalize)
        check_height(height, f"{self.name}: height")
        if convention not in CONVENTIONS:
            expected = ", ".join(CONVENTIONS)
            raise ValueError(f"{self.name}: convention must be one of {expected}, got {convention!r}")
        sides = {"predictions": list(predictions), "references": list(references)}
        for name, texts in (("targets", targets), ("templates", templates)):
            if texts is not None:
                check_per_pair(self, name, texts, predictions)
                sides[name] = list(texts)
        pairs = len(sides["predictions"])
        ok, failures = list(range(pairs)), []
        if trees:
            parser_signature = "parser:given-trees"
            ok, failures = scorable(sides, no_text)  # None, a number: a failure, as a sentence is
        else:
            # a callable parser is kept alive by its cached TreeParser, so its id is not reused
            key = (parser if isinstance(parser, str) else id(parser), cache_dir and str(cache_dir))
            try:
                tree_parser = cached(self, "_parsers", key, get_parser, parser, cache_dir=cache_dir)
            except ValueError as err:
                raise ValueError(f"{self.name}: parser: {err}") from None
            texts = [s for side in sides.values() for s in side if not no_text(s)]  # None: a failure
            parsed = iter(tree_parser.parse(texts))
            sides = {name: [s if no_text(s) else next(parsed) for s in side] for name, side in sides.items()}
            parser_signature = tree_parser.signature
            ok, failures = scorable(sides, lambda tree: str(tree) if is_failure(tree) else no_text(tree))
        kept = {name: [texts[i] for i in ok] for name, texts in sides.items()}
        options = {"convention": convention, "normalize": normalize}
        reference = {**options, "convention": "aesop"}  # TED-R / TED-E: AESOP's own measures
        preds = kept["predictions"]
        ted3, tedf = distance_table(preds, kept["references"], heights=(3, None), **options)
        result = {"ted3": mean(ted3), "tedf": mean(tedf)}
        result |= {"ted3_scores": spread(ted3, ok, pairs), "tedf_scores": spread(tedf, ok, pairs)}
        result["ted_diversity_signature"] = str(ted_signature(**options, trees=parser_signature))
        for key, name in (("ted_r", "targets"), ("ted_e", "templates")):
            if name in sides:
                scores = distances(preds, kept[name], height=height, **reference)
                result[f"{key}_scores"] = spread(scores, ok, pairs)
                result[key] = mean(scores)
        result["ted_diversity_failures"] = failures
        if len(sides) > 2:
            signature = ted_signature(**reference, heights=(height,), trees=parser_signature)
            result["reference_signature"] = str(signature)
        return result
