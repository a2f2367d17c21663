"""The AESOP tree edit distance computation, written out with nltk and zss (the libraries AESOP
uses): the baseline of tests/metrics/test_ted.py and benchmarks/bench_ted.py.

PlusLabNLP/AESOP evaluation/eval_utils.py: deleaf, trim to height 3 (TED-3 only), build a zss
tree under an artificial "S" root merging S/empty-labelled constituents, unit-cost distance.
"""

from __future__ import annotations

import zss
from nltk import Tree as NltkTree


def _trim(tree: NltkTree, height: int) -> NltkTree:
    kids = [_trim(kid, height - 1) for kid in tree if isinstance(kid, NltkTree)] if height > 1 else []
    return NltkTree(tree.label(), kids)


def _zss_tree(tree: NltkTree) -> zss.Node:
    root = zss.Node("S")

    def walk(node: zss.Node, t: NltkTree) -> None:
        if t.label() and t.label() != "S":
            kid = zss.Node(t.label())
            node.addkid(kid)
            node = kid
        for child in t:
            if isinstance(child, NltkTree):
                walk(node, child)

    walk(root, tree)
    return root


def aesop_reference(pred: str, ref: str, height: int | None) -> int:
    """TED-3 (height=3) or TED-F (None) between two PTB bracket strings, as AESOP computes it."""
    trees = [NltkTree.fromstring(s, read_leaf=lambda _: "") for s in (ref, pred)]
    if height is not None:
        trees = [_trim(t, height) for t in trees]
    a, b = (_zss_tree(t) for t in trees)
    return zss.simple_distance(a, b, label_dist=lambda x, y: 0 if x == y else 1)
