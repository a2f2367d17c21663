"""Tree edit distance (unit-cost Zhang–Shasha) between constituency trees: TED-3 and TED-F.

Conventions (``normalize=True`` divides by the larger tree's node count):

* ``paper`` (Table 2's scale): the tree below its ``ROOT`` wrapper, so heights count from the
  clause, with its words as nodes, lowercased.
* ``aesop`` (PlusLabNLP/AESOP ``eval_utils.py``, TED-R/TED-E): words dropped, trimmed to the
  height from ``ROOT``, then every ``S`` or unlabelled constituent merged into its parent under
  an artificial root ``S``.
* ``plain``: the tree without its words.

Distances come from x-ted when installed, else from zss (same values, far slower).

>>> a = "(ROOT (S (NP (PRP I)) (VP (VBP know) (NP (PRP it))) (. .)))"
>>> b = "(ROOT (S (VP (VBP Know) (NP (PRP it))) (. !)))"
>>> prepare(read_tree(a), height=3, convention="aesop")
(['S', 'ROOT', 'NP', 'VP', '.'], [-1, 0, 1, 1, 1])
>>> prepare(read_tree(a, leaves=True), height=3)
(['S', 'NP', 'PRP', 'VP', 'VBP', 'NP', '.', '.'], [-1, 0, 1, 0, 3, 3, 0, 6])
>>> distances([a], [b], height=3), distances([a], [b])
([3], [4])
>>> distances([a], [b], height=3, convention="aesop"), distances([a], [b], convention="aesop")
([1], [2])
>>> distance_table([a, a], [b, b], convention="aesop")
[[1, 1], [2, 2]]
>>> distances([a], [b], height=3, convention="plain"), distances([a], [b], normalize=True)
([1], [0.3333333333333333])
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from paraamr.metrics import check_pairs, signature
from paraamr.metrics.trees import Tree, read_tree
from paraamr.options import check_number
from paraamr.signature import Signature

__all__ = [
    *("BACKENDS", "CONVENTIONS", "CONVENTION_FIELDS", "DEFAULT_CONVENTION", "Prepared", "backend"),
    *("check_convention", "check_height", "distance_table", "distances", "prepare", "ted_signature"),
]

CONVENTIONS = ("paper", "aesop", "plain")
#: The convention of Table 2's TED-3 / TED-F here (TED-R / TED-E stay ``aesop``, AESOP's own).
DEFAULT_CONVENTION = "paper"
#: Signature fields that spell out each convention's tree.
CONVENTION_FIELDS = {
    "paper": {"levels": "from-clause", "leaves": "lowercased"},
    "aesop": {"levels": "from-root", "leaves": "dropped"},
    "plain": {"levels": "from-root", "leaves": "dropped"},
}
BACKENDS = ("auto", "x-ted", "zss")

Prepared = tuple[list[str], list[int]]


def check_convention(convention: str) -> str:
    """``convention`` if it is one of :data:`CONVENTIONS`, else ValueError."""
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown convention {convention!r}; expected one of {', '.join(CONVENTIONS)}")
    return convention


def prepare(tree: Tree, *, height: int | None = None, convention: str = DEFAULT_CONVENTION) -> Prepared:
    """The (labels, parents) preorder arrays the distance is computed on, in ``convention``."""
    paper, merge = check_convention(convention) == "paper", convention == "aesop"
    # paper: below a ROOT wrapper (a root labelled ROOT or "" with one child, not a word)
    wrapper = paper and tree.labels[0] in ("ROOT", "") and tree.parents.count(0) == 1
    top = int(len(tree) > 1 and wrapper and 1 not in tree.words)
    limit = len(tree) + 1 if height is None else height + top
    labels: list[str] = ["S"] if merge else []
    parents: list[int] = [-1] if merge else []
    where: list[int] = [0] * len(tree)  # the new index of each old node (or of the node it merged into)
    for i in range(top, len(tree)):
        word = i in tree.words
        if tree.depths[i] > limit or (word and not paper):
            continue
        label = tree.labels[i]
        parent = where[tree.parents[i]] if i > top else (0 if merge else -1)
        if merge and (label == "S" or not label):
            where[i] = parent
        else:
            where[i] = len(labels)
            labels.append(label.lower() if word else label)
            parents.append(parent)
    return labels, parents


def _zss_distance(a: Prepared, b: Prepared) -> int:
    import zss

    def build(labels: list[str], parents: list[int]):
        nodes = [zss.Node(label) for label in labels]
        for node, parent in zip(nodes, parents, strict=True):
            if parent >= 0:
                nodes[parent].addkid(node)
        return nodes[0]

    return int(zss.simple_distance(build(*a), build(*b), label_dist=lambda x, y: 0 if x == y else 1))


def _xted_distance(a: Prepared, b: Prepared) -> int:
    from xted import XTED_CPU

    return XTED_CPU.compute_tree_edit_distance_uniform(a[0], a[1], b[0], b[1], 1)


@functools.cache
def backend(name: str = "auto") -> tuple[str, Callable[[Prepared, Prepared], int]]:
    """``(name with version, distance function)`` of ``name`` in :data:`BACKENDS` (``auto``: x-ted
    when importable, else zss with a RuntimeWarning)."""
    if name not in BACKENDS:
        raise ValueError(f"unknown TED backend {name!r}; expected one of {', '.join(BACKENDS)}")
    if name in ("auto", "x-ted"):
        try:
            import xted  # noqa: F401

            return f"x-ted:{version('x-ted')}", _xted_distance
        except ImportError:
            if name == "x-ted":
                raise ImportError("x-ted is not installed (pip install x-ted; Python < 3.13 only)") from None
            warnings.warn(
                "x-ted is not installed (it needs Python < 3.13); computing tree edit distances with "
                "zss instead: same values, several hundred times slower",
                RuntimeWarning,
                stacklevel=2,
            )
    try:
        zss_version = version("zss")
    except PackageNotFoundError:
        raise ImportError("no tree edit distance backend: pip install x-ted (Python < 3.13) or zss") from None
    return f"zss:{zss_version}", _zss_distance


def check_height(height: object, name: str = "height") -> int | None:
    """``height`` if a tree height (an integer >= 1, or None: the full tree), else ValueError.

    >>> check_height("full")
    Traceback (most recent call last):
    ...
    ValueError: height must be an integer >= 1 or None, got 'full'
    """
    return check_number(height, name, kind=int, low=1, none=True)


def distance_table(
    predictions: Sequence[str | Tree],
    references: Sequence[str | Tree],
    *,
    heights: Sequence[int | None] = (3, None),
    convention: str = DEFAULT_CONVENTION,
    normalize: bool = False,
    backend_name: str = "auto",
) -> list[list[int] | list[float]]:
    """For each height of ``heights`` (3: TED-3, None: TED-F), the distance of each pair of trees
    (bracket strings or :class:`Tree`); ValueError naming the pair for a malformed tree."""
    check_pairs(predictions, references)
    heights = [check_height(h) for h in heights]
    leaves = check_convention(convention) == "paper"
    _, distance = backend(backend_name)
    read: dict[object, Tree] = {}

    def get(tree: str | Tree, where: str) -> Tree:
        if tree not in read:
            read[tree] = tree if isinstance(tree, Tree) else read_tree(tree, where=where, leaves=leaves)
        return read[tree]

    pairs = [
        (get(ref, f"pair {i} reference"), get(pred, f"pair {i} prediction"))
        for i, (pred, ref) in enumerate(zip(predictions, references, strict=True))
    ]
    table: list = []
    for height in heights:
        trees = dict.fromkeys(t for pair in pairs for t in pair)
        forms = {t: prepare(t, height=height, convention=convention) for t in trees}
        keys = {t: (tuple(labels), tuple(parents)) for t, (labels, parents) in forms.items()}
        memo: dict[tuple, int] = {}  # equal prepared pairs (frequent at height 3) computed once
        row: list = []
        for a, b in pairs:
            key = (keys[a], keys[b])
            if key not in memo:
                memo[key] = distance(forms[a], forms[b])
            row.append(memo[key] / max(len(forms[a][0]), len(forms[b][0])) if normalize else memo[key])
        table.append(row)
    return table


def distances(
    predictions: Sequence[str | Tree], references: Sequence[str | Tree], *, height: int | None = None,
    **options: Any,
) -> list[int] | list[float]:
    """The tree edit distance of each pair at one height (3: TED-3, None: TED-F); ``options``
    (``convention``, ``normalize``, ``backend_name``) as :func:`distance_table`'s."""
    return distance_table(predictions, references, heights=(height,), **options)[0]


def ted_signature(
    *,
    convention: str,
    normalize: bool,
    heights: Sequence[int | None] = (3, None),
    backend_name: str = "auto",
    trees: Signature | str = "parser:given-trees",
) -> Signature:
    """The signature of a TED computation over ``trees`` (a parser's signature).

    >>> str(ted_signature(convention="aesop", normalize=False, heights=(5,), trees="parser:x"))
    'convention:aesop|levels:from-root|leaves:dropped|heights:5|norm:no|backend:...|parser:x|paraamr:...'
    """
    fields = {
        "convention": convention,
        **CONVENTION_FIELDS[check_convention(convention)],
        "heights": ",".join("full" if h is None else str(h) for h in heights),
        "norm": "max-nodes" if normalize else "no",
        "backend": backend(backend_name)[0],
    }
    return signature(fields, trees)
