"""AMR graphs: decoding, candidate foci and re-focusing (re-rooting), with penman's AMR model.

Re-focusing makes another concept the root of the graph: the graph (its de-inverted triples) stays
the same, the edges that now point towards the root are written inverted (``:ARG1`` as
``:ARG1-of``, ``:ARG0-of`` as ``:ARG0``, ``:consist-of`` as ``:consist-of-of``), and the result is
linearized depth-first from the new root. Every node is defined where that traversal first meets
it and referenced by its variable afterwards, as in the ParaAMR paper's linearizations.

>>> g = decode("# ::snt The boy wants to go.\\n(w / want-01 :ARG0 (b / boy) :ARG1 (g / go :ARG0 b))")
>>> candidate_foci(g)
['b', 'g']
>>> print(refocus(g, "b"))
# ::snt The boy wants to go.
# ::focus b
(b / boy
   :ARG0-of (w / want-01
               :ARG1 (g / go
                        :ARG0 b)))
>>> [(v.focus, v.concept) for v in variants(g, foci=1, seed=3)]
[('b', 'boy')]
>>> print(variants(g, oneline=True)[1].penman)
# ::snt The boy wants to go.
# ::focus g
(g / go :ARG1-of (w / want-01 :ARG0 (b / boy)) :ARG0 b)

penman (:mod:`penman.models.amr`) decodes the input and is the reference: it decodes every output
back to the source's triples. The serializer is our own (a single depth-first pass over an index
built once per graph) because it is several times faster than ``penman.encode`` per focus; its
indented layout is penman's default one. Surface alignments (``~e.3``) are not carried over.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import penman
from penman.exceptions import DecodeError, PenmanError
from penman.layout import Pop, Push
from penman.models.amr import model as AMR_MODEL

from paraamr.errors import AMRError
from paraamr.failures import Failure

#: Concepts that make poor foci, left out of :func:`candidate_foci` unless ``exclude`` says
#: otherwise. Each is a structural node without words of its own, so a sentence headed by it is
#: not a paraphrase: ``name`` (the wrapper of an entity's ``:opN`` strings: the entity above it
#: is the natural focus, and ``(n / name ...)`` as root reads "the name X of ..."),
#: ``multi-sentence`` (a container of sentences; under another root it has no surface form),
#: ``amr-unknown`` (the gap of a question: as root the question becomes a fragment), and the
#: connectives ``and`` / ``or`` (as root, a sentence about the coordination itself; the conjuncts
#: remain foci of their own). Constants (``-``, numbers, strings, ``imperative``) are never foci:
#: they are not variables.
DEFAULT_EXCLUDED: frozenset[str] = frozenset({"name", "multi-sentence", "amr-unknown", "and", "or"})

_INSTANCE = AMR_MODEL.concept_role


@dataclass(frozen=True)
class Variant:
    """One re-rooted graph: the ``focus`` variable, its ``concept`` and the ``penman`` text."""

    focus: str
    concept: str
    penman: str


@lru_cache(maxsize=4096)
def _inverse(role: str) -> str:
    """``role`` written from its target: ``:ARG1`` -> ``:ARG1-of``, ``:ARG0-of`` -> ``:ARG0``."""
    return AMR_MODEL.invert_role(role)


@lru_cache(maxsize=4096)
def _is_inverted(role: str) -> bool:
    return AMR_MODEL.is_role_inverted(role)


_ID_LINE = re.compile(r"^\s*#.*?::id\s+(\S+)", re.MULTILINE)


def _describe(where: str, graph_id: str | None) -> str:
    """How errors name a graph: ``where`` (a position), with its ``# ::id`` when it has one."""
    if not graph_id:
        return where
    return f"graph {graph_id}" if where == "<graph>" else f"{where} (id {graph_id})"


def _decode(text: str, where: str) -> penman.Graph:
    """penman's decoding with the AMR model, without the checks of :class:`_Index`."""
    if not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
        raise AMRError(f"{_describe_text(text, where)}: empty graph (no PENMAN after the metadata)")
    try:
        trees = list(itertools.islice(penman.iterparse(text), 2))
        if len(trees) > 1:
            raise AMRError(
                f"{_describe_text(text, where)}: more than one graph (a blank line must separate graphs)"
            )
        return penman.layout.interpret(trees[0], AMR_MODEL)
    except DecodeError as e:
        cause = f"{e.message} (line {e.lineno}, column {e.offset})"
        raise AMRError(f"{_describe_text(text, where)}: not valid PENMAN: {cause}") from e
    except PenmanError as e:
        raise AMRError(f"{_describe_text(text, where)}: not valid PENMAN: {e}") from e


def _describe_text(text: str, where: str) -> str:
    match = _ID_LINE.search(text)
    return _describe(where, match.group(1) if match else None)


def decode(text: str, *, where: str = "<graph>") -> penman.Graph:
    """Decode and validate one PENMAN graph (metadata comments allowed) with penman's AMR model.

    Raises :class:`~paraamr.errors.AMRError` naming ``where`` and the cause: text that is not
    PENMAN, no graph at all, more than one graph, a variable defined twice, a disconnected graph.

    >>> decode("(w / want-01 :ARG0-of (b / boy))").triples
    [('w', ':instance', 'want-01'), ('b', ':ARG0', 'w'), ('b', ':instance', 'boy')]
    >>> decode("(w / want-01 :ARG0 (b / boy)", where="graph 7")
    Traceback (most recent call last):
    ...
    paraamr.errors.AMRError: graph 7: not valid PENMAN: Unexpected end of input (line 1, column 28)
    """
    graph = _decode(text, where)
    _Index(graph, where)  # validates: one definition per variable, connected
    return graph


def read_graphs(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """Split blank-line separated PENMAN blocks; yield ``(1-based position, block text)``.

    Blocks of plain comments without ``# ::`` metadata (such as the header of an AMR release
    file) are skipped; every other block is yielded, so a bad one can be reported by position.

    >>> list(read_graphs(["# AMR release 3.0", "", "# ::id a", "(x / xx)", "", "", "(y / yy)"]))
    [(1, '# ::id a\\n(x / xx)'), (2, '(y / yy)')]
    """
    if isinstance(lines, str):
        lines = lines.splitlines()
    position = 0
    block: list[str] = []
    for line in itertools.chain(lines, [""]):
        line = line.rstrip("\r\n")
        if line.strip():
            block.append(line)
            continue
        if block and not all(b.lstrip().startswith("#") and "::" not in b for b in block):
            position += 1
            yield position, "\n".join(block)
        block = []


class _Index:
    """A graph prepared for re-rooting at any of its variables.

    ``adjacency[v]`` lists the edges at ``v`` in triple order as ``(edge id, role written from
    v, other end, holder, child)``: every edge is stored at both ends, attributes (edges to
    constants) only at their source with edge id -1. The source layout fixes the spanning tree:
    ``child`` is the node a tree edge introduced (None for a re-entrancy), ``holder`` the node
    that wrote the edge (None when the graph carries no usable layout: the edge goes to whichever
    end the traversal reaches first). Re-rooting reverses the tree edges on the path from the old
    top to the focus and keeps the rest, as the ParaAMR paper's linearizations do.
    """

    __slots__ = ("adjacency", "concepts", "edge_count", "graph", "header", "opening", "parent", "where")

    def __init__(self, graph: penman.Graph, where: str) -> None:
        self.graph = graph
        self.where = where = _describe(where, graph.metadata.get("id"))
        top = graph.top
        if not graph.triples or top is None:
            raise AMRError(f"{where}: empty graph")
        concepts: dict[str, str | None] = {top: None}
        defined: set[str] = set()
        for source, role, target in graph.triples:
            if role == _INSTANCE:
                if source in defined:
                    raise AMRError(f"{where}: variable {source} is defined more than once")
                defined.add(source)
                concepts[source] = target
            elif source not in concepts:
                concepts[source] = None
        self.concepts = concepts
        edges, parent = self._layout(concepts)
        adjacency: dict[str, list[tuple]] = {v: [] for v in concepts}
        for edge_id, (source, role, target, holder, child) in enumerate(edges):
            if target in concepts:
                adjacency[source].append((edge_id, role, target, holder, child))
                if target != source:
                    adjacency[target].append((edge_id, _inverse(role), source, holder, child))
            else:
                adjacency[source].append((-1, role, target, source, None))
        self.adjacency = adjacency
        self.edge_count = len(edges)
        self.parent = parent
        self._check_connected()
        self.opening = {v: f"({v}" if c is None else f"({v} / {c}" for v, c in concepts.items()}
        self.header = "".join(
            f"# ::{key} {value}\n" if value else f"# ::{key}\n"
            for key, value in graph.metadata.items()
            if key != "focus"
        ) + "# ::focus "

    def _layout(self, concepts: dict[str, str | None]) -> tuple[list[tuple], dict[str, str]]:
        """The de-inverted edges with their holder and child, and each tree node's parent.

        Read from penman's layout markers (a ``Push`` on the triple that introduced a node, a
        ``Pop`` per node closed after a triple); a graph whose markers do not describe a
        spanning tree (built or edited by hand) gets no holders.
        """
        graph = self.graph
        epidata = graph.epidata
        stack = [graph.top]
        parent: dict[str, str] = {}
        edges = []
        for triple in graph.triples:
            context = stack[-1] if stack else None
            pushed = None
            for epi in epidata.get(triple, ()):
                if isinstance(epi, Push):
                    pushed = epi.variable
                    stack.append(pushed)
                elif isinstance(epi, Pop) and stack:
                    stack.pop()
            if triple[1] == _INSTANCE:
                continue
            source, role, target = AMR_MODEL.invert(triple) if _is_inverted(triple[1]) else triple
            if target not in concepts:
                edges.append((source, role, target, source, None))
                continue
            if context not in (source, target) or (pushed is not None and pushed not in (source, target)):
                context = pushed = None
            elif pushed is not None:
                parent[pushed] = target if pushed == source else source
            edges.append((source, role, target, context, pushed))
        if len(parent) + 1 != len(concepts) or graph.top in parent or any(e[3] is None for e in edges):
            parent = {}
            edges = [(s, r, t, None if t in concepts else s, None) for s, r, t, _, _ in edges]
        return edges, parent

    def _check_connected(self) -> None:
        top = self.graph.top
        seen = {top}
        agenda = [top]
        while agenda:
            for edge, _, other, _, _ in self.adjacency[agenda.pop()]:
                if edge >= 0 and other not in seen:
                    seen.add(other)
                    agenda.append(other)
        if len(seen) != len(self.concepts):
            missing = ", ".join(v for v in self.concepts if v not in seen)
            raise AMRError(f"{self.where}: disconnected graph: {missing} not reachable from {top}")

    def concept(self, var: str) -> str:
        concept = self.concepts[var]
        return "" if concept is None else concept

    def render(self, focus: str, *, oneline: bool = False, mod_as_domain: bool = False) -> str:
        """The graph linearized depth-first from ``focus``, with the metadata and ``# ::focus``."""
        if focus not in self.concepts:
            raise AMRError(f"{self.where}: focus {focus!r} is not a variable of the graph")
        opening, adjacency, parent = self.opening, self.adjacency, self.parent
        path = set()  # the nodes whose tree edge to their parent is reversed
        node = focus
        while node in parent:
            path.add(node)
            node = parent[node]
        rename = AMR_MODEL.normalizations if mod_as_domain else None
        used = bytearray(self.edge_count)
        visited = {focus}
        parts = [self.header, focus, "\n"]
        append = parts.append

        def walk(var: str, column: int) -> None:
            append(opening[var])
            column += len(var) + 2
            joiner = " " if oneline else "\n" + " " * column
            for edge, role, other, holder, child in adjacency[var]:
                if edge >= 0:
                    if child in path:
                        holder = child
                    if holder is None:
                        if used[edge]:
                            continue
                        used[edge] = 1
                    elif holder != var:
                        continue
                    if rename:
                        role = rename.get(role, role)
                    if other not in visited:
                        visited.add(other)
                        append(f"{joiner}{role} ")
                        walk(other, column + len(role) + 1)
                        continue
                append(f"{joiner}{role} {other}")
            append(")")

        walk(focus, 0)
        return "".join(parts)


def _index(graph: penman.Graph | str, where: str = "<graph>") -> _Index:
    return _Index(_decode(graph, where) if isinstance(graph, str) else graph, where)


def _is_target(var: str, edge: int, role: str, other: str, *_: object) -> bool:
    """Whether an adjacency entry of ``var`` is an edge into ``var`` in the de-inverted graph."""
    return edge >= 0 and (_is_inverted(role) or other == var)


def _candidates(
    index: _Index, foci: str | int, seed: int, exclude: Collection[str], heuristic: bool
) -> list[str]:
    top = index.graph.top
    out = [v for v, c in index.concepts.items() if v != top and c not in exclude]
    if heuristic:
        out = [v for v in out if not any(_is_target(v, *entry) for entry in index.adjacency[v])]
    if foci == "all":
        return out
    if isinstance(foci, bool) or not isinstance(foci, int) or foci < 0:
        raise ValueError(f"foci must be 'all' or a count >= 0, not {foci!r}")
    if foci >= len(out):
        return out
    rng = random.Random(f"{seed}|{top}|" + "|".join(f"{v}/{index.concepts[v]}" for v in index.concepts))
    chosen = set(rng.sample(out, foci))
    return [v for v in out if v in chosen]


def candidate_foci(
    graph: penman.Graph | str,
    *,
    foci: str | int = "all",
    seed: int = 0,
    exclude: Collection[str] = DEFAULT_EXCLUDED,
    heuristic: bool = False,
) -> list[str]:
    """Variables that can become the new root, in the graph's order.

    Every variable except the current top and those whose concept is in ``exclude``
    (:data:`DEFAULT_EXCLUDED` by default; pass ``()`` to keep all). ``foci="all"`` keeps them all;
    an int ``k`` keeps ``k`` of them chosen at random, reproducibly: the choice depends only on
    ``seed`` and the graph. ``heuristic=True`` applies amrlib's paraphrasing heuristic first: only
    variables without incoming edges in the de-inverted graph.

    >>> g = decode("(a / and :op1 (b / bark-01 :ARG0 (d / dog)) :op2 (s / sleep-01 :ARG0 d))")
    >>> candidate_foci(g)
    ['b', 'd', 's']
    >>> candidate_foci(decode("(b / bark-01 :ARG0 (d / dog) :ARG1-of (l / loud))"), heuristic=True)
    ['l']
    >>> candidate_foci(g, foci=2, seed=1) == candidate_foci(g, foci=2, seed=1)
    True
    """
    return _candidates(_index(graph), foci, seed, exclude, heuristic)


def refocus(
    graph: penman.Graph | str, focus_var: str, *, oneline: bool = False, mod_as_domain: bool = False
) -> str:
    """The graph re-rooted at ``focus_var`` as PENMAN, with its metadata and a ``# ::focus`` line.

    Edges towards the new root are inverted with the AMR model. An inverted ``:mod`` is written
    ``:mod-of``, which penman de-inverts to the same triple; ``mod_as_domain=True`` writes it as
    ``:domain`` instead (and an inverted ``:domain`` as ``:mod``), the AMR guidelines' equivalent,
    which penman reads as a different role.

    >>> g = decode("(d / dog :mod (b / big))")
    >>> print(refocus(g, "b", oneline=True))
    # ::focus b
    (b / big :mod-of (d / dog))
    >>> print(refocus(g, "b", oneline=True, mod_as_domain=True))
    # ::focus b
    (b / big :domain (d / dog))
    """
    return _index(graph).render(focus_var, oneline=oneline, mod_as_domain=mod_as_domain)


def variants(
    graph: penman.Graph | str,
    *,
    foci: str | int = "all",
    seed: int = 0,
    exclude: Collection[str] = DEFAULT_EXCLUDED,
    heuristic: bool = False,
    oneline: bool = False,
    mod_as_domain: bool = False,
) -> list[Variant]:
    """One :class:`Variant` per candidate focus (see :func:`candidate_foci` and :func:`refocus`).

    >>> [v.concept for v in variants("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go :ARG0 b))")]
    ['boy', 'go']
    """
    return _variants(_index(graph), foci, seed, exclude, heuristic, oneline, mod_as_domain)


def _variants(
    index: _Index,
    foci: str | int = "all",
    seed: int = 0,
    exclude: Collection[str] = DEFAULT_EXCLUDED,
    heuristic: bool = False,
    oneline: bool = False,
    mod_as_domain: bool = False,
) -> list[Variant]:
    return [
        Variant(v, index.concept(v), index.render(v, oneline=oneline, mod_as_domain=mod_as_domain))
        for v in _candidates(index, foci, seed, exclude, heuristic)
    ]


def refocus_batch(texts: Iterable[str | penman.Graph], **options) -> list[list[Variant] | Failure]:
    """:func:`variants` of each graph, or a ``Failure("refocus", reason)`` for a bad one.

    Options are those of :func:`variants`. Reasons name the graph by position (1-based) and id.

    >>> out = refocus_batch(["(a / b :ARG0 (c / d))", "(a / b", ""])
    >>> [len(x) if isinstance(x, list) else str(x) for x in out]  # doctest: +NORMALIZE_WHITESPACE
    [1, 'refocus: graph 2: not valid PENMAN: Unexpected end of input (line 1, column 6)',
     'refocus: graph 3: empty graph (no PENMAN after the metadata)']
    """
    out: list[list[Variant] | Failure] = []
    for position, text in enumerate(texts, 1):
        try:
            out.append(_variants(_index(text, f"graph {position}"), **options))
        except AMRError as e:
            out.append(Failure("refocus", str(e)))
    return out
