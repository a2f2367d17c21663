"""TED-3 / TED-F: tree reading, the AESOP convention against an nltk + zss computation, backends."""

from __future__ import annotations

import itertools
import random
import re
import sys
from pathlib import Path

import pytest
from metrics_aesop_reference import aesop_reference

from paraamr.metrics import ted
from paraamr.metrics.trees import read_tree

DATA = Path(__file__).parent / "data"


def corenlp_trees() -> list[str]:
    lines = (DATA / "corenlp_trees.txt").read_text().splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


PHRASES = ["S", "NP", "VP", "PP", "SBAR", "ADVP", "ADJP", "FRAG", "SINV", "SQ", "WHNP", "PRN"]
TAGS = ["NN", "DT", "PRP", "VBZ", "VBD", "IN", "JJ", "RB", ",", ".", ":", "``", "''", "-LRB-", "CC"]


def random_tree(rng: random.Random, depth: int = 2) -> str:
    """A CoreNLP-shaped tree: phrases over preterminals over words."""
    if depth > 4 or (depth > 2 and rng.random() < 0.35):
        return f"({rng.choice(TAGS)} w{rng.randrange(9)})"
    kids = " ".join(random_tree(rng, depth + 1) for _ in range(rng.randint(1, 3)))
    return f"({rng.choice(PHRASES)} {kids})"


def test_aesop_convention_equals_the_aesop_zss_computation_on_440_pairs():
    trees = corenlp_trees()
    pairs = list(itertools.permutations(trees, 2))  # 240 hand-written pairs
    rng = random.Random(6)
    pairs += [(f"(ROOT {random_tree(rng)})", f"(ROOT {random_tree(rng)})") for _ in range(200)]
    preds, refs = [p for p, _ in pairs], [r for _, r in pairs]
    ted3 = ted.distances(preds, refs, height=3, convention="aesop")
    tedf = ted.distances(preds, refs, convention="aesop")
    assert ted3 == [aesop_reference(p, r, 3) for p, r in pairs]
    assert tedf == [aesop_reference(p, r, None) for p, r in pairs]
    assert len(set(tedf)) > 5 and max(ted3) > 0  # the set really exercises the distance


def test_hand_computed_distances():
    # "I know it." vs "It is known to me.": TED-3 trees S(ROOT(NP VP .)) on both sides -> 0;
    # full trees: VP(VBP NP(PRP)) -> VP(VBZ VP(VBN PP(TO NP(PRP)))): rename VBP->VBZ and insert
    # VP, VBN, PP, TO (9 vs 13 nodes, so at least 4 inserts)
    src, para = corenlp_trees()[:2]
    assert ted.distances([para], [src], height=3, convention="aesop") == [0]
    assert ted.distances([para], [src], convention="aesop") == [5]
    # the S merge: an S over a single NP is the same tree as the NP (aesop), one node more (plain)
    a, b = "(ROOT (S (NP (NN x))))", "(ROOT (NP (NN x)))"
    assert ted.distances([a], [b], convention="aesop") == [0]
    assert ted.distances([a], [b], convention="plain") == [1]
    assert ted.distances([a], [b], convention="plain", normalize=True) == [pytest.approx(1 / 4)]


def test_trim_to_height_3_keeps_root_s_and_s_children():
    tree = read_tree(corenlp_trees()[2])  # The cat sat on the mat.
    assert ted.prepare(tree, height=3, convention="aesop") == (
        ["S", "ROOT", "NP", "VP", "."],
        [-1, 0, 1, 1, 1],
    )
    assert ted.prepare(tree, height=3, convention="plain") == (
        ["ROOT", "S", "NP", "VP", "."],
        [-1, 0, 1, 1, 1],
    )
    labels, parents = ted.prepare(
        tree, convention="aesop"
    )  # the sentence's S merged into ROOT, under the artificial S
    assert labels == ["S", "ROOT", "NP", "DT", "NN", "VP", "VBD", "PP", "IN", "NP", "DT", "NN", "."]
    assert parents == [-1, 0, 1, 2, 2, 1, 5, 5, 7, 7, 9, 9, 1]


def test_repeated_trees_are_read_once(monkeypatch):
    calls = []
    real = ted.read_tree
    monkeypatch.setattr(
        ted,
        "read_tree",
        lambda text, where, leaves: calls.append(text) or real(text, where=where, leaves=leaves),
    )
    a, b = corenlp_trees()[:2]
    assert ted.distances([a, a, b], [b, b, a], convention="aesop") == [5, 5, 5]
    assert sorted(calls) == sorted([a, b])


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("(ROOT (S (NP x))", "pair 1 prediction: malformed tree: 1 unclosed"),
        ("(ROOT (S x)))", "pair 1 prediction: malformed tree: unbalanced ')'"),
        ("(ROOT (S x)) (ROOT (S y))", "pair 1 prediction: malformed tree: text after the end"),
        ("(ROOT (S x)) y", "pair 1 prediction: malformed tree: text after the end"),
        ("x (ROOT (S x))", "pair 1 prediction: malformed tree: 'x' outside brackets"),
        ("ROOT x", "pair 1 prediction: malformed tree: no bracket"),
        ("", "pair 1 prediction: malformed tree: no bracket"),
    ],
)
def test_malformed_tree_names_the_pair(bad, message):
    good = corenlp_trees()[0]
    with pytest.raises(ValueError, match=re.escape(message)):
        ted.distances([good, bad], [good, good])


def test_unequal_lengths_and_unknown_convention():
    with pytest.raises(ValueError, match="same length"):
        ted.distances(["(A)"], [])
    with pytest.raises(ValueError, match="unknown convention"):
        ted.distances(["(A)"], ["(A)"], convention="apted")


def test_zss_backend_gives_the_same_values():
    trees = corenlp_trees()
    pairs = list(itertools.combinations(trees[:8], 2))
    preds, refs = [p for p, _ in pairs], [r for _, r in pairs]
    for height in (3, None):
        assert ted.distances(preds, refs, height=height, backend_name="zss") == ted.distances(
            preds, refs, height=height, backend_name="x-ted"
        )


def test_without_x_ted_falls_back_to_zss_with_a_warning(monkeypatch):
    monkeypatch.setitem(sys.modules, "xted", None)  # import xted -> ImportError
    ted.backend.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="x-ted is not installed"):
            name, _ = ted.backend("auto")
        assert name.startswith("zss:")
        with pytest.raises(ImportError, match="x-ted is not installed"):
            ted.backend("x-ted")
    finally:
        ted.backend.cache_clear()
    monkeypatch.undo()
    assert ted.backend("auto")[0].startswith("x-ted:")


def test_ted_signature():
    sig = ted.ted_signature(convention="aesop", normalize=True, heights=(3, None), trees="parser:p|tree:t")
    assert sig["convention"] == "aesop" and sig["norm"] == "max-nodes" and sig["heights"] == "3,full"
    assert sig["backend"].startswith("x-ted:0.")
    assert list(sig)[-3:] == ["parser", "tree", "paraamr"] and sig["tree"] == "t"


def test_ted_module_leaves_out_pairs_it_cannot_parse():
    """Control characters, a 100,000-character paraphrase, only invisible characters and too many
    words: one line per pair left out, the other pairs scored as alone (issue 28, item 10)."""
    import evaluate

    import paraamr

    metric = evaluate.load(paraamr.metric_path("ted_diversity"))
    good = ("On the mat sat the cat.", "The cat sat on the mat.")
    predictions = [good[0], "x" * 100_000, "tab\tand \x07bell", good[0], "\u200b", " ".join(["w"] * 300)]
    references = [good[1], good[1], good[1], "nul \x00 here", good[1], good[1]]
    out = metric.compute(predictions=predictions, references=references, parser="link-grammar:no-pos")
    alone = metric.compute(predictions=[good[0]], references=[good[1]], parser="link-grammar:no-pos")
    assert out["ted3_scores"] == alone["ted3_scores"] + [None] * 5
    assert out["tedf_scores"] == alone["tedf_scores"] + [None] * 5
    assert (out["ted3"], out["tedf"]) == (alone["ted3"], alone["tedf"])
    assert alone["ted_diversity_failures"] == []
    lines = out["ted_diversity_failures"]
    assert [line.split(":")[0] for line in lines] == [
        f"pair {i} {side}"
        for i, side in [
            (1, "prediction"),
            (2, "prediction"),
            (3, "reference"),
            (4, "prediction"),
            (5, "prediction"),
        ]
    ]
    assert "100,002 bytes" in lines[0] and "control character (U+0007)" in lines[1]
    assert "NUL" in lines[2] and "no visible character" in lines[3] and "254 words" in lines[4]
