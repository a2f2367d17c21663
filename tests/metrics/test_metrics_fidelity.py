"""How far the offline TED is from TED on gold Penn Treebank trees (issue 29, item 6).

tests/metrics/data/ptb_gold_pairs.txt holds 51 (source, paraphrase) pairs with hand-written gold
Penn Treebank trees (no registry carries nltk's ``treebank`` sample: PyPI's ``treebank`` package
is the Mikolov language-modelling text without trees, ``nltkdata`` is empty, Debian has none).
The test checks the gold trees, then computes TED-3 and TED-F on them and on link-grammar's
trees (with the POS layer, and bare) of the same sentences, and the Pearson and Spearman
correlations per measure; the figures must be those docs/metrics.md reports.
"""

from __future__ import annotations

import re
from pathlib import Path
from statistics import mean

import pytest

from paraamr.metrics.parsers import LinkGrammarParser
from paraamr.metrics.ted import distance_table
from paraamr.metrics.trees import read_tree

DATA = Path(__file__).parent / "data" / "ptb_gold_pairs.txt"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"

#: Penn Treebank part-of-speech tags (Santorini 1990) with CoreNLP's bracket tokens, and phrase labels
#: (Bies et al. 1995).
POS_TAGS = set(
    "CC CD DT EX FW IN JJ JJR JJS LS MD NN NNS NNP NNPS PDT POS PRP PRP$ RB RBR RBS RP SYM TO UH VB VBD "  # noqa: SIM905
    "VBG VBN VBP VBZ WDT WP WP$ WRB . , : `` '' -LRB- -RRB- # $".split()
)
PHRASES = set(
    "ROOT S SBAR SBARQ SINV SQ ADJP ADVP CONJP FRAG INTJ LST NAC NP NX PP PRN PRT QP RRC UCP VP WHADJP "  # noqa: SIM905
    "WHADVP WHNP WHPP X".split()
)
LABELS = {"pos": "link-grammar + POS layer (default)", "bare": "link-grammar, no POS layer"}


def gold_pairs() -> list[dict]:
    """The pairs of the data file: where, source, its tree, paraphrase, its tree."""
    pairs = []
    for block in DATA.read_text(encoding="utf-8").split("\n## ")[1:]:
        where, *lines = [line for line in block.strip().splitlines() if line]
        source, source_tree, paraphrase, paraphrase_tree = lines
        pairs.append({"where": where, "source": source, "source_tree": source_tree,
                      "paraphrase": paraphrase, "paraphrase_tree": paraphrase_tree})
    return pairs


def _preterminals(tree: str) -> list[tuple[str, str]]:
    return re.findall(r"\(([^\s()]+) ([^\s()]+)\)", tree)


def test_gold_trees_are_penn_treebank_trees_of_their_sentences():
    pairs = gold_pairs()
    assert len(pairs) == 51
    for pair in pairs:
        for side in ("source", "paraphrase"):
            tree = pair[f"{side}_tree"]
            read = read_tree(tree, where=pair["where"])
            assert read.labels[0] == "ROOT" and read.parents.count(0) == 1, (pair["where"], tree)
            leaves = _preterminals(tree)
            # every word sits under a POS tag: as many "(TAG word)" as words outside brackets
            assert len(leaves) == len(re.findall(r"[^\s()]+\)", tree)), (pair["where"], tree)
            assert "".join(w for _, w in leaves) == pair[side].replace(" ", ""), (pair["where"], side)
            tags = {t for t, _ in leaves}
            assert tags <= POS_TAGS, (pair["where"], tags - POS_TAGS)
            assert set(read.labels) - tags <= PHRASES, (pair["where"], set(read.labels) - tags - PHRASES)


def _correlations(gold: list[float], ours: list[float]) -> tuple[float, float]:
    from scipy.stats import pearsonr, spearmanr

    return float(pearsonr(gold, ours)[0]), float(spearmanr(gold, ours)[0])


def fidelity(convention: str = "aesop") -> dict[str, dict[str, tuple[float, ...]]]:
    """Per tree source (``gold``, ``pos``, ``bare``) and measure, in TED ``convention``: (Pearson,
    Spearman) against the gold TED, then the mean TED and the mean absolute difference from the
    gold TED."""
    pairs = gold_pairs()
    gold = distance_table(
        [p["paraphrase_tree"] for p in pairs], [p["source_tree"] for p in pairs], convention=convention
    )
    out = {"gold": {m: (1.0, 1.0, mean(g), 0.0) for m, g in zip(("ted3", "tedf"), gold, strict=True)}}
    for name, pos in (("pos", "spacy"), ("bare", None)):
        with LinkGrammarParser(pos=pos, processes=2) as parser:
            trees = parser.parse([s for p in pairs for s in (p["source"], p["paraphrase"])])
        ours = distance_table(trees[1::2], trees[0::2], convention=convention)
        out[name] = {
            m: (*_correlations(g, o), mean(o), mean([abs(a - b) for a, b in zip(g, o, strict=True)]))
            for m, g, o in zip(("ted3", "tedf"), gold, ours, strict=True)
        }
    return out


@pytest.fixture(scope="module", params=["aesop", "paper"])
def measured(request):
    return request.param, fidelity(request.param)


def test_correlations_are_those_the_docs_report(measured):
    convention, measured = measured
    docs = DOCS.read_text(encoding="utf-8")
    for name, label in LABELS.items():
        (p3, s3, m3, d3), (pf, sf, mf, df) = measured[name]["ted3"], measured[name]["tedf"]
        means = f"{m3:.2f} ({d3:.2f}) | {mf:.2f} ({df:.2f})"
        row = f"| {label} | {p3:.2f} | {s3:.2f} | {pf:.2f} | {sf:.2f} | {means} |"
        assert row in docs, f"docs/metrics.md lacks the measured row ({convention}) {row}"
    (_, _, m3, _), (_, _, mf, _) = measured["gold"]["ted3"], measured["gold"]["tedf"]
    assert f"| gold Penn Treebank trees | 1 | 1 | 1 | 1 | {m3:.2f} | {mf:.2f} |" in docs


if __name__ == "__main__":  # print the figures for docs/metrics.md
    for convention in ("aesop", "paper"):
        for name, measures in fidelity(convention).items():
            print(convention, name, {m: tuple(round(v, 3) for v in c) for m, c in measures.items()})
