"""Re-focusing (re-rooting) AMR graphs as PENMAN: :func:`refocus` at one variable, :func:`variants`
at each candidate focus, :func:`refocus_batch` over many graphs.

The de-inverted triples stay the same; edges that now point towards the new root are written
inverted (``:ARG1`` as ``:ARG1-of``, ``:ARG0-of`` as ``:ARG0``), and each node is defined where the
depth-first traversal from the root first meets it, as in the ParaAMR paper. :data:`LINEARIZATIONS`:
``"paraamr"`` (default: our serializer, faster, in penman's layout) or ``"penman"`` (``penman.encode``,
the paper's; docs/generate.md compares them).

>>> print(refocus("(d / dog :ARG0-of (b / bark-01))", "b", oneline=True))
# ::focus b
(b / bark-01 :ARG0 (d / dog))
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import penman
from penman.exceptions import PenmanError
from penman.models.amr import model as AMR_MODEL

from paraamr.amr.foci import DEFAULT_EXCLUDED, _candidates
from paraamr.amr.reading import GraphInput, _describe, _read, _split_alignment, _Structure, decode
from paraamr.errors import AMRError
from paraamr.failures import Failure
from paraamr.texts import refuse_one_string

__all__ = ["LINEARIZATIONS", "Variant", "iter_variants", "refocus", "refocus_batch", "variants"]

#: How a re-rooted graph is written: ``paraamr`` (our serializer) or ``penman`` (``penman.encode``).
LINEARIZATIONS = ("paraamr", "penman")


@dataclass(frozen=True)
class Variant:
    """One re-rooted graph: the ``focus`` variable, its ``concept`` and the ``penman`` text."""

    focus: str
    concept: str
    penman: str


@cache
def _pad(width: int) -> str:
    """A line break and ``width`` spaces."""
    return "\n" + " " * width


class _Index(_Structure):
    """A graph prepared for re-rooting at any of its variables: :meth:`render` reverses the tree
    edges on the path from the old top to the focus and reuses the text of subtrees off that path
    across foci (see :meth:`_crossings`)."""

    __slots__ = ("_cache", "_own", "below", "closed", "header", "opening", "outer")

    def __init__(self, tree: penman.Tree, where: str) -> None:
        super().__init__(tree, where)
        depth = {self.top: 0}
        for var in self.concepts:  # depth-first: parents come before their children
            if var in self.parent:
                depth[var] = depth[self.parent[var]] + 1
        self.outer = self._crossings(depth)
        # leaves are as quick to write as to look up: reuse the text of inner nodes only
        self.closed = set(self.parent.values()).difference(self.outer)
        self.below = self._below(set(self.outer).intersection(self.parent.values()), depth)
        self.opening = {v: f"({v}" if c is None else f"({v} / {c}" for v, c in self.concepts.items()}
        self.header = (
            "".join(
                f"# ::{key} {value}\n" if value else f"# ::{key}\n"
                for key, value in tree.metadata.items()
                if key != "focus"
            )
            + "# ::focus "
        )
        self._own: dict[bool, tuple[dict, dict, dict]] = {}
        self._cache: dict[tuple[bool, bool], dict[str, str]] = {}

    def _crossings(self, depth: dict[str, int]) -> dict[str, tuple[str, ...]]:
        """The nodes whose subtree a re-entrancy crosses, each with the outer ends of those written
        inside: the subtree's text depends only on which of these are written already. The other
        nodes' subtrees are laid out the same from any focus outside them."""
        parent = self.parent
        outer: dict[str, set[str]] = {}
        for holder, target in self.reentrancies:  # the nodes between each end and their common ancestor
            a, b = holder, target
            while a != b:
                if depth[a] >= depth[b]:
                    outer.setdefault(a, set()).add(target)
                    a = parent[a]
                else:
                    outer.setdefault(b, set())
                    b = parent[b]
        return {v: tuple(sorted(ends)) for v, ends in outer.items()}

    def _below(self, nodes: set[str], depth: dict[str, int]) -> dict[str, frozenset[str]]:
        """The nodes of the subtree of each of ``nodes``, itself excluded (source layout)."""
        order = list(self.concepts)  # depth-first: a subtree is the run of nodes after its root
        below = {}
        for i, var in enumerate(order):
            if var in nodes:
                run = itertools.takewhile(lambda v, d=depth[var]: depth[v] > d, order[i + 1 :])
                below[var] = frozenset(run)
        return below

    def _layout(self, mod_as_domain: bool) -> tuple[dict, dict, dict]:
        """``own[v]``: ``(as a reference, as a definition, variable, width)`` per edge ``v`` writes
        from the old top (an attribute: ``(text, None, None, 0)``). Reversing the tree edge of ``c``
        drops ``own[parent][down[c]]`` and inserts ``up[c] = (index, entry)`` into ``c``'s."""
        cached = self._own.get(mod_as_domain)
        if cached is not None:
            return cached
        rename = AMR_MODEL.normalizations if mod_as_domain else {}
        concepts = self.concepts
        own: dict[str, list[tuple]] = {}
        up: dict[str, tuple[int, tuple]] = {}
        down: dict[str, int] = {}
        for var, edges in self.adjacency.items():
            written: list[tuple] = []
            for role, other, holder, child, mark in edges:
                if rename:
                    base, alignment = _split_alignment(role)
                    role = rename.get(base, base) + alignment
                if other in concepts:
                    entry = (f"{role} {other}{mark}", f"{role} ", other, len(role) + 1)
                else:
                    entry = (role if other is None else f"{role} {other}", None, None, 0)
                if holder == var:
                    if child is not None:
                        down[child] = len(written)
                    written.append(entry)
                elif child == var:
                    up[var] = (len(written), entry)
            own[var] = written
        self._own[mod_as_domain] = own, up, down
        return own, up, down

    def render(self, focus: str, *, oneline: bool = False, mod_as_domain: bool = False) -> str:
        """The graph linearized depth-first from ``focus``, with the metadata and ``# ::focus``."""
        if focus not in self.concepts:
            raise AMRError(f"{self.where}: focus {focus!r} is not a variable of the graph")
        own, up, down = self._layout(mod_as_domain)
        parent = self.parent
        entries = own
        path = set()
        if focus in parent:  # reverse the tree edges on the path from the focus to the old top
            entries = own.copy()
            node, child = focus, None
            while node is not None:
                path.add(node)
                written = list(own[node])
                if child is not None:
                    i = down[child]
                    del written[i]
                if node in parent:
                    k, entry = up[node]
                    written.insert(k - 1 if child is not None and i < k else k, entry)
                entries[node] = written
                node, child = parent.get(node), node
        opening, concepts = self.opening, self.concepts
        closed, outer, below = self.closed, self.outer, self.below
        cache = self._cache.setdefault((mod_as_domain, oneline), {})
        visited = {focus}
        order = [focus]  # visited, in the order of definition
        parts = [self.header, focus, "\n"]
        append = parts.append

        def walk(var: str, column: int, key: object) -> None:
            """Write ``var``'s node; a ``key`` stores its text for reuse from another focus."""
            start, defined = len(parts), len(order)
            append(opening[var])
            inner = column + len(var) + 2
            joiner = " " if oneline else _pad(inner)
            separator = " " if concepts[var] is None else joiner  # penman: "(a :ARG0 ..." on one line
            for reference, definition, other, width in entries[var]:
                append(separator)
                separator = joiner
                if other is None or other in visited:
                    append(reference)
                    continue
                visited.add(other)
                order.append(other)
                append(definition)
                # off the path, a subtree is written as from the old top: its text depends on
                # nothing else when no re-entrancy crosses it, else on its outer ends written yet
                reuse = None
                if other not in path:
                    if other in closed:
                        reuse = other
                    elif other in below and visited.isdisjoint(below[other]):
                        reuse = other, tuple(map(visited.__contains__, outer[other]))
                if reuse is not None and (reused := cache.get(reuse)) is not None:
                    text, inside = reused
                    append(text if oneline else text.replace("\n", _pad(inner + width)))
                    if inside:
                        visited.update(inside)
                        order.extend(inside)
                    continue
                walk(other, inner + width, reuse)
            append(")")
            if key is not None:
                inside = () if var in closed else order[defined:]
                if not inside or below[var].issuperset(inside):  # nothing pulled from outside
                    text = "".join(parts[start:])
                    cache[key] = text if oneline or not column else text.replace(_pad(column), "\n"), inside

        try:
            walk(focus, 0, None)
        except RecursionError:
            raise AMRError(f"{self.where}: graph too deep to linearize") from None
        return "".join(parts)


class _PenmanWriter:
    """A graph written by ``penman.encode(g, top=focus, model=amr_model)`` at any focus."""

    def __init__(self, graph: GraphInput, where: str) -> None:
        if isinstance(graph, (str, penman.Tree)):
            graph = decode(graph, where=where)
        # read as the paraamr linearization reads it: a graph built by hand is refused the same way
        self.structure = _read(graph, where, _Structure)
        self.graph, self.where = graph, _describe(where, graph.metadata.get("id"))
        self.metadata = {k: v for k, v in graph.metadata.items() if k != "focus"}

    def render(self, focus: str, *, oneline: bool = False, mod_as_domain: bool = False) -> str:
        g = self.graph
        if focus not in g.variables():
            raise AMRError(f"{self.where}: focus {focus!r} is not a variable of the graph")
        out = penman.Graph(
            g.triples, top=g.top, epidata=g.epidata, metadata={**self.metadata, "focus": focus}
        )
        try:
            return penman.encode(out, top=focus, model=AMR_MODEL, indent=None if oneline else -1)
        except RecursionError:
            raise AMRError(f"{self.where}: graph too deep to linearize") from None
        except PenmanError as err:
            raise AMRError(f"{self.where}: penman cannot lay out the graph at {focus!r} ({err})") from err


def _writer(
    graph: GraphInput, linearization: str, where: str, mod_as_domain: bool = False
) -> _Index | _PenmanWriter:
    """What writes ``graph`` at a focus: our index (``paraamr``) or penman (``penman``)."""
    if linearization not in LINEARIZATIONS:
        raise ValueError(f"linearization must be one of {LINEARIZATIONS}, not {linearization!r}")
    if linearization == "paraamr":
        return _read(graph, where, _Index)
    if mod_as_domain:
        raise ValueError("mod_as_domain needs linearization='paraamr' (penman writes :mod-of)")
    return _PenmanWriter(graph, where)


def refocus(
    graph: GraphInput,
    focus_var: str,
    *,
    oneline: bool = False,
    mod_as_domain: bool = False,
    linearization: str = "paraamr",
    where: str = "<graph>",
) -> str:
    """The graph re-rooted at ``focus_var`` as PENMAN, with its metadata and a ``# ::focus`` line.

    An inverted ``:mod`` is written ``:mod-of``, or ``:domain`` with ``mod_as_domain=True`` (the AMR
    guidelines' equivalent; an inverted ``:domain`` as ``:mod``). ``linearization="penman"`` writes
    it with ``penman.encode``.

    >>> g = "(d / dog :mod (b / big))"
    >>> print(refocus(g, "b", oneline=True))
    # ::focus b
    (b / big :mod-of (d / dog))
    >>> print(refocus(g, "b", oneline=True, mod_as_domain=True))
    # ::focus b
    (b / big :domain (d / dog))
    >>> refocus(g, "b", oneline=True, linearization="penman") == refocus(g, "b", oneline=True)
    True
    """
    writer = _writer(graph, linearization, where, mod_as_domain)
    return writer.render(focus_var, oneline=oneline, mod_as_domain=mod_as_domain)


def variants(graph: GraphInput, **options: Any) -> list[Variant]:
    """:func:`iter_variants` as a list.

    >>> [v.concept for v in variants("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go :ARG0 b))")]
    ['boy', 'go']
    """
    return list(iter_variants(graph, **options))


def iter_variants(
    graph: GraphInput,
    *,
    foci: str | int = "all",
    seed: int = 0,
    exclude: Collection[str] = DEFAULT_EXCLUDED,
    heuristic: bool = False,
    oneline: bool = False,
    mod_as_domain: bool = False,
    linearization: str = "paraamr",
    where: str = "<graph>",
) -> Iterator[Variant]:
    """One :class:`Variant` per candidate focus (:func:`candidate_foci`'s options), rendered as by
    :func:`refocus` when asked for; a bad graph is refused before the first.

    >>> it = iter_variants("(d / dog :ARG0-of (b / bark-01))", oneline=True)
    >>> next(it).penman.splitlines()[-1]
    '(b / bark-01 :ARG0 (d / dog))'
    """
    writer = _writer(graph, linearization, where, mod_as_domain)
    index = writer if isinstance(writer, _Index) else writer.structure
    chosen = _candidates(index, foci, seed, exclude, heuristic)
    return (
        Variant(v, index.concept(v), writer.render(v, oneline=oneline, mod_as_domain=mod_as_domain))
        for v in chosen
    )


def refocus_batch(texts: Iterable[GraphInput], **options) -> list[list[Variant] | Failure]:
    """:func:`variants` of each graph, or a ``Failure("refocus", reason)`` naming a bad one by
    1-based position and id.

    >>> out = refocus_batch(["(a / b :ARG0 (c / d))", "(a / b", ""])
    >>> [len(x) if isinstance(x, list) else str(x) for x in out]  # doctest: +NORMALIZE_WHITESPACE
    [1, 'refocus: graph 2: not valid PENMAN: Unexpected end of input (line 1, column 6)',
     'refocus: graph 3: empty graph (no PENMAN after the metadata)']
    >>> refocus_batch("(a / b :ARG0 (c / d))")
    Traceback (most recent call last):
    ...
    TypeError: texts is one string; give a list of them (or any iterable)
    """
    refuse_one_string(texts, "texts")
    out: list[list[Variant] | Failure] = []
    for position, text in enumerate(texts, 1):
        try:
            out.append(variants(text, where=f"graph {position}", **options))
        except AMRError as e:
            out.append(Failure("refocus", str(e)))
    return out
