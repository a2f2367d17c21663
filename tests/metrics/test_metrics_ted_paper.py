"""TED at the scale of ParaAMR's Table 2 (convention ``paper``) and the case step of link-grammar.

The paper's Table 2 has TED-3 at 0.23-0.27 of TED-F for all four corpora (ParaNMT 3.28, ParaBank 1
3.59, ParaBank 2 4.04, ParaAMR 5.86). The ``paper`` convention is checked against an independent
nltk + zss computation of its definition, and its TED-3/TED-F ratio on the hand-written gold Penn
Treebank trees (tests/metrics/data/ptb_gold_pairs.txt) against that band, with AESOP's convention
beside it; docs/metrics.md reports the figures.
"""

from __future__ import annotations

import csv
import itertools
import random
from statistics import mean

import pytest
import zss
from nltk import Tree as NltkTree
from test_metrics_fidelity import DOCS, gold_pairs
from test_metrics_ted import corenlp_trees, random_tree

from paraamr.metrics import ted
from paraamr.metrics.parsers import LinkGrammarParser, upper_i

#: Table 2 of the paper: TED-3 / TED-F lies in this band for all four corpora.
PAPER_RATIO = (0.23, 0.27)


def paper_reference(
    pred: str,
    ref: str,
    height: int | None,
    *,
    from_clause: bool = True,
    words: bool = True,
    merge: bool = False,
) -> int:
    """The ``paper`` convention written out with nltk and zss: the tree under its ROOT wrapper
    (``from_clause``), words as lowercased nodes (``words``), trimmed to ``height`` levels, unit
    costs; ``merge``: AESOP's artificial S root with S constituents merged (a variant)."""

    def build(tree: NltkTree | str, level: int, parent: zss.Node) -> None:
        if (height is not None and level > height) or (isinstance(tree, str) and not words):
            return
        if isinstance(tree, str):
            parent.addkid(zss.Node(tree.lower()))
            return
        node = parent if merge and tree.label() in ("S", "") else zss.Node(tree.label())
        if node is not parent:
            parent.addkid(node)
        for kid in tree:
            build(kid, level + 1, node)

    def root(text: str) -> zss.Node:
        tree = NltkTree.fromstring(text)
        if from_clause and tree.label() in ("ROOT", "") and len(tree) == 1:
            tree = tree[0]
        top = zss.Node("S")  # the artificial root (merge), or a holder of the tree's own root
        build(tree, 1, top)
        return top if merge else top.children[0]

    a, b = root(ref), root(pred)
    return zss.simple_distance(a, b, label_dist=lambda x, y: 0 if x == y else 1)


def test_paper_convention_equals_an_nltk_zss_computation_of_its_definition():
    trees = corenlp_trees()
    pairs = list(itertools.permutations(trees, 2))
    rng = random.Random(7)
    pairs += [(f"(ROOT {random_tree(rng)})", f"(ROOT {random_tree(rng)})") for _ in range(200)]
    pairs += [("(S (NP (PRP It)) (. .))", "(ROOT (S (NP (PRP it)) (VP (VBZ is)) (. !)))")]  # no ROOT
    preds, refs = [p for p, _ in pairs], [r for _, r in pairs]
    for height in (3, None):
        assert ted.distances(preds, refs, height=height) == [paper_reference(p, r, height) for p, r in pairs]
    assert ted.distances(preds[-1:], refs[-1:], height=3) == [3]  # VP, VBZ in; "." -> "!": no ROOT is fine


def test_words_count_and_case_does_not():
    a = "(ROOT (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))"
    b = "(ROOT (S (NP (DT the) (NN dog)) (VP (VBD sat)) (. .)))"
    assert ted.distances([b], [a]) == [1]  # cat -> dog; The/the equal
    assert ted.distances([b], [a], height=3) == [0]  # words sit below height 3 here
    assert ted.distances([b], [a], convention="aesop") == [0]


#: The trees compared on the gold pairs: the docs' row title and the reference's options.
VARIANTS = {
    "`paper`: words kept, heights from the clause": {},
    "words dropped, heights from the clause": {"words": False},
    "words kept, heights from `ROOT`": {"from_clause": False},
    "`paper` with AESOP's `S` merge": {"merge": True},
    "`aesop`: words dropped, heights from `ROOT`, `S` merged": {
        "from_clause": False,
        "words": False,
        "merge": True,
    },
}


def test_gold_trees_ratio_is_near_the_papers_band_in_paper_convention_only():
    pairs = gold_pairs()
    preds, refs = [p["paraphrase_tree"] for p in pairs], [p["source_tree"] for p in pairs]
    docs = DOCS.read_text(encoding="utf-8")
    ratios = {}
    for title, options in VARIANTS.items():
        ted3 = [paper_reference(p, r, 3, **options) for p, r in zip(preds, refs, strict=True)]
        tedf = [paper_reference(p, r, None, **options) for p, r in zip(preds, refs, strict=True)]
        ratios[title] = mean(ted3) / mean(tedf)
        zeros = sum(d == 0 for d in ted3)
        row = f"| {title} | {mean(ted3):.2f} | {mean(tedf):.2f} | {ratios[title]:.2f} | {zeros} of 51 |"
        assert row in docs, f"docs/metrics.md lacks the measured row {row}"
    paper, aesop = (ted.distance_table(preds, refs, convention=c) for c in ("paper", "aesop"))
    assert mean(paper[0]) / mean(paper[1]) == ratios["`paper`: words kept, heights from the clause"]
    assert mean(aesop[0]) / mean(aesop[1]) == ratios[list(VARIANTS)[-1]]
    # within a quarter of the band's edges on 51 short hand-written pairs; AESOP's under half of it
    low, high = PAPER_RATIO
    assert low / 1.25 <= ratios["`paper`: words kept, heights from the clause"] <= high * 1.25
    assert ratios[list(VARIANTS)[-1]] < low / 2


def test_upper_i_changes_only_the_pronoun():
    assert upper_i("i think i'll go, i’d say; i've seen it.") == "I think I'll go, I’d say; I've seen it."
    assert upper_i("pi is 3. i.e. hi, i-th, it is.") == "pi is 3. i.e. hi, i-th, it is."
    assert upper_i('"i" (i) i') == '"I" (I) I'


@pytest.mark.slow
def test_a_lowercase_i_parses_as_the_pronoun():
    cased = ["I know that I am right.", "I'm sure I'll go."]
    lower = [s.lower() for s in cased]
    with LinkGrammarParser(processes=1) as fixed, LinkGrammarParser(processes=1, case=None) as as_given:
        want, got, raw = fixed.parse(cased), fixed.parse(lower), as_given.parse(lower)
        assert fixed.signature["case"] == "upper-i" and as_given.signature["case"] == "as-given"
    assert ted.distances(got, want) == [0, 0]  # the same trees (words compared lowercased)
    assert all(d > 0 for d in ted.distances(raw, want, height=3))  # link-grammar breaks the clause
    with pytest.raises(ValueError, match="unknown case step"):
        LinkGrammarParser(case="truecase")


def _natural_figures(rows: list[dict], *, lower: bool, case: str | None) -> dict[str, tuple[float, float]]:
    """Mean TED-3 and TED-F per convention of ``rows`` parsed by link-grammar (+ POS layer)."""
    fix = str.lower if lower else str
    with LinkGrammarParser(processes=2, case=case) as parser:
        trees = parser.parse([fix(s) for r in rows for s in (r["source"], r["candidate"])])
    assert all(isinstance(t, str) for t in trees)
    return {
        c: tuple(mean(d) for d in ted.distance_table(trees[1::2], trees[0::2], convention=c))
        for c in ("paper", "aesop")
    }


@pytest.mark.slow
def test_link_grammar_figures_on_the_natural_pairs_are_those_the_docs_report():
    """934 valid hand-written pairs, cased; then the pairs with the pronoun "i", lowercased."""
    import re

    from paraamr.quality.data import NATURAL_PAIRS

    with open(NATURAL_PAIRS, encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r["label"] == "1"]
    assert len(rows) == 934
    docs = " ".join(DOCS.read_text(encoding="utf-8").split())
    cased = _natural_figures(rows, lower=False, case="upper-i")
    (p3, pf), (a3, af) = cased["paper"], cased["aesop"]
    assert f"`paper` gives {p3:.2f} / {pf:.2f} = **{p3 / pf:.2f}**" in docs
    assert f"`aesop` {a3:.2f} / {af:.2f} = {a3 / af:.2f}" in docs
    assert PAPER_RATIO[0] <= p3 / pf <= PAPER_RATIO[1] and a3 / af < PAPER_RATIO[0] / 2
    with_i = [r for r in rows if re.search(r"\bi\b", (r["source"] + " " + r["candidate"]).lower())]
    as_given = _natural_figures(with_i, lower=True, case=None)["paper"][0]
    fixed = _natural_figures(with_i, lower=True, case="upper-i")["paper"][0]
    on_cased = _natural_figures(with_i, lower=False, case="upper-i")["paper"][0]
    said = f"On the {len(with_i)} of those 934 pairs with the pronoun, lowercased: TED-3 (`paper`) "
    assert (
        said + f"{as_given:.2f} as given, **{fixed:.2f}** with the step, {on_cased:.2f} on the cased text"
        in docs
    )
    assert abs(fixed - on_cased) < 0.1 < as_given - fixed
