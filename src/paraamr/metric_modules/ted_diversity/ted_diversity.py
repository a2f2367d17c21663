"""evaluate module: syntactic diversity of paraphrases from their sources (TED-3 and TED-F)."""

import evaluate

from paraamr.metrics import PARAAMR_CITATION, format_signature, mean, pair_metric_info
from paraamr.metrics.parsers import get_parser
from paraamr.metrics.ted import distance_table, signature_fields

_CITATION = (
    PARAAMR_CITATION
    + """\
@inproceedings{sun-etal-2021-aesop,
    title = "{AESOP}: Paraphrase Generation with Adaptive Syntactic Control",
    author = "Sun, Jiao and Ma, Xuezhe and Peng, Nanyun",
    booktitle = "Proceedings of EMNLP",
    year = "2021",
}
"""
)

_DESCRIPTION = """\
Syntactic diversity between each paraphrase and its source: the tree edit distance between their
constituency trees, over the trees trimmed to height 3 (TED-3) and over the full trees (TED-F),
as in Table 2 of the ParaAMR paper. Convention "aesop" (default) reproduces
PlusLabNLP/AESOP evaluation/eval_utils.py: leaves dropped, an artificial S root, constituents
labelled S or empty merged into their parent, unit-cost Zhang-Shasha distance, unnormalized.
"plain" keeps the trees as they are. Sentences are parsed by `parser`: "link-grammar" (offline,
Debian link-grammar; its trees are wrapped in (ROOT ...) but have no part-of-speech layer, so
values are NOT on the paper's scale), "corenlp" or a CoreNLP server URL (the paper's parser), or
any callable returning a bracket string; with `trees=True` the inputs are PTB bracket strings.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): the paraphrases (or their trees with trees=True).
    references (list of str): the sources (or their trees), one per paraphrase.
    trees (bool): inputs are PTB bracket strings (default False: sentences, parsed by `parser`).
    parser (str or callable): "link-grammar" (default), "corenlp", a CoreNLP URL
        ("http://localhost:9000"), or a function from a sentence to a bracket string.
    convention (str): "aesop" (default) or "plain".
    normalize (bool): divide each distance by the larger tree's node count (default False).
Returns:
    ted3, tedf (float): mean TED-3 and TED-F.
    ted3_scores, tedf_scores (list): one distance per pair.
    signature (str): convention, normalization, parser, distance library and versions.
Raises:
    ValueError naming the pair for a malformed tree.
Examples:
    >>> metric = evaluate.load("metrics/ted_diversity")
    >>> source = "(ROOT (S (NP (PRP I)) (VP (VBP know) (NP (PRP it))) (. .)))"
    >>> paraphrase = "(ROOT (S (SBAR (IN that)) (NP (PRP I)) (VP (VBP know)) (. .)))"
    >>> results = metric.compute(predictions=[paraphrase], references=[source], trees=True)
    >>> results["ted3_scores"], results["tedf_scores"]
    ([1], [4])
    >>> results["signature"]
    'convention:aesop|heights:3,full|norm:no|backend:...|parser:given-trees|paraamr:...'
    >>> results = metric.compute(predictions=["It is known to me."], references=["I know it."])
    >>> results["ted3"], results["tedf"]
    (0.0, 2.0)
    >>> results["signature"]
    'convention:aesop|...|parser:link-grammar:...|tree:ROOT-wrapped,no-POS|scale:not-paper|paraamr:...'
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TedDiversity(evaluate.Metric):
    """TED-3 and TED-F between the constituency trees of paraphrases and sources."""

    def _info(self):
        urls = ["https://github.com/PlusLabNLP/AESOP", "https://arxiv.org/abs/2305.16585"]
        return pair_metric_info(_DESCRIPTION, _CITATION, _KWARGS_DESCRIPTION, urls)

    def _parser(self, spec):
        cache = self.__dict__.setdefault("_parsers", {})
        key = spec if isinstance(spec, str) else id(spec)
        if key not in cache:
            cache[key] = get_parser(spec)
        return cache[key]

    def _compute(
        self, predictions, references, trees=False, parser="link-grammar", convention="aesop", normalize=False
    ):
        if trees:
            parser_signature = "given-trees"
        else:
            tree_parser = self._parser(parser)
            parsed = tree_parser.parse(list(predictions) + list(references))
            predictions, references = parsed[: len(predictions)], parsed[len(predictions) :]
            parser_signature = tree_parser.signature
        options = {"convention": convention, "normalize": normalize}
        ted3, tedf = distance_table(predictions, references, heights=(3, None), **options)
        return {
            "ted3": mean(ted3),
            "tedf": mean(tedf),
            "ted3_scores": ted3,
            "tedf_scores": tedf,
            "signature": format_signature(signature_fields(**options), {"parser": parser_signature}),
        }
