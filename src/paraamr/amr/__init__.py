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
built once per graph from penman's parse tree) because it is several times faster than
``penman.encode`` per focus; its indented layout is penman's default one. Surface alignments
(``~e.3``) stay on their concepts, constants and roles.
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

#: What the functions take as a graph: PENMAN text, penman's tree (:func:`parse`) or its Graph.
GraphInput = str | penman.Tree | penman.Graph


@dataclass(frozen=True)
class Variant:
    """One re-rooted graph: the ``focus`` variable, its ``concept`` and the ``penman`` text."""

    focus: str
    concept: str
    penman: str


class _Pads(dict):
    """``_PADS[n]``: a line break and ``n`` spaces."""

    def __missing__(self, width: int) -> str:
        pad = self[width] = "\n" + " " * width
        return pad


_PADS = _Pads()


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


def parse(text: str, *, where: str = "<graph>") -> penman.Tree:
    """penman's tree of one PENMAN graph (layout and metadata as written), checked for syntax.

    The fastest input of :func:`variants` and :func:`refocus`. Raises
    :class:`~paraamr.errors.AMRError` naming ``where`` (or the graph's ``# ::id``) and the cause.

    >>> parse("# ::id 7\\n(b / bark-01 :ARG0 (d / dog))").node
    ('b', [('/', 'bark-01'), (':ARG0', ('d', [('/', 'dog')]))])
    >>> parse("# ::id 7\\n# ::snt Hi.")
    Traceback (most recent call last):
    ...
    paraamr.errors.AMRError: graph 7: empty graph (no PENMAN after the metadata)
    """
    if not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
        raise AMRError(f"{_describe_text(text, where)}: empty graph (no PENMAN after the metadata)")
    fast = _fast_tree(text)
    if fast is not None:
        return fast
    try:
        trees = list(itertools.islice(penman.iterparse(text), 2)) or [penman.parse(text)]
    except DecodeError as e:
        cause = f"{e.message} (line {e.lineno}, column {e.offset})"
        raise AMRError(f"{_describe_text(text, where)}: not valid PENMAN: {cause}") from e
    except RecursionError:
        raise AMRError(f"{_describe_text(text, where)}: graph too deep") from None
    if len(trees) > 1:
        cause = "more than one graph (a blank line must separate graphs)"
        raise AMRError(f"{_describe_text(text, where)}: {cause}")
    return trees[0]


#: Tokens of the plain PENMAN that AMR corpora use: strings, parentheses, slash, roles, symbols;
#: anything else (alignments, stray quotes) falls through to ``other``.
_TOKEN = re.compile(
    r'(?P<s>"[^"\\]*(?:\\.[^"\\]*)*")|(?P<p>[()/])|(?P<r>:[^\s"()/:~]*)|(?P<y>[^\s"()/:~]+)|(?P<o>\S)'
)


def _fast_tree(text: str) -> penman.Tree | None:
    """penman's tree of ``text`` read in one regular-expression pass, or None where ``text``
    holds anything but metadata lines followed by one plain graph (then penman reads it).

    The tests check that it equals :func:`penman.parse` wherever it answers; it exists because
    penman's lexer is a third of the cost of re-rooting a graph at all its foci.

    >>> text = "# ::id 1\\n(b / bark-01 :ARG0 (d / dog) :polarity -)"
    >>> _fast_tree(text) == penman.parse(text), _fast_tree(text).metadata
    (True, {'id': '1'})
    >>> _fast_tree("(b / bark-01~e.2)") is None
    True
    """
    lines = text.split("\n")
    metadata: dict[str, str] = {}
    start = 0
    for start, line in enumerate(lines):  # noqa: B007 (the index is used after the loop)
        stripped = line.strip()
        if not stripped.startswith("#"):
            break
        comment = stripped
        while comment:  # as penman reads metadata: "# ::key value ::key2 value2"
            comment, found, meta = comment.rpartition("::")
            if found:
                key, _, value = meta.partition(" ")
                metadata[key] = value.rstrip()
    body = "\n".join(lines[start:])
    if "#" in body:
        return None
    stack: list[tuple[str, list]] = []
    root = None
    tokens = _TOKEN.finditer(body)
    for match in tokens:
        kind, token = match.lastgroup, match.group()
        if root is not None or kind == "o":
            return None  # text after the graph, or a token of the full grammar only
        if token == "(":
            var = next(tokens, None)
            if var is None or var.lastgroup != "y":
                return None
            node = (var.group(), [])
            if stack:
                edges = stack[-1][1]
                if not edges or edges[-1][1] is not None:
                    return None
                edges[-1] = (edges[-1][0], node)
            stack.append(node)
        elif not stack:
            return None
        elif token == ")":
            node = stack.pop()
            if node[1] and node[1][-1][1] is None:
                return None
            if not stack:
                root = node
        elif token == "/":
            concept = next(tokens, None)
            edges = stack[-1][1]
            if concept is None or concept.lastgroup not in ("y", "s") or edges:
                return None
            edges.append(("/", concept.group()))
        elif kind == "r":
            edges = stack[-1][1]
            if edges and edges[-1][1] is None:
                return None
            edges.append((token, None))
        else:  # a symbol or string: the target of the last role
            edges = stack[-1][1]
            if not edges or edges[-1][1] is not None:
                return None
            edges[-1] = (edges[-1][0], token)
    return None if root is None else penman.Tree(root, metadata=metadata)


def _describe_text(text: str, where: str) -> str:
    match = _ID_LINE.search(text)
    return _describe(where, match.group(1) if match else None)


def decode(text: str, *, where: str = "<graph>") -> penman.Graph:
    """Decode and validate one PENMAN graph (metadata comments allowed) with penman's AMR model.

    Raises :class:`~paraamr.errors.AMRError` naming ``where`` and the cause: text that is not
    PENMAN, no graph at all, more than one graph, a variable defined twice. The graph remembers
    the tree it was read from, so :func:`variants` of it does not lay it out again (unless its
    triples or top are changed in between; metadata edits are fine).

    >>> decode("(w / want-01 :ARG0-of (b / boy))").triples
    [('w', ':instance', 'want-01'), ('b', ':ARG0', 'w'), ('b', ':instance', 'boy')]
    >>> decode("(w / want-01 :ARG0 (b / boy)", where="graph 7")
    Traceback (most recent call last):
    ...
    paraamr.errors.AMRError: graph 7: not valid PENMAN: Unexpected end of input (line 1, column 28)
    """
    tree = parse(text, where=where)
    _Index(tree, where)  # validates: one definition per variable
    try:
        graph = penman.layout.interpret(tree, AMR_MODEL)
    except PenmanError as e:
        raise AMRError(f"{_describe(where, tree.metadata.get('id'))}: not valid PENMAN: {e}") from e
    graph._paraamr_source = tree, list(graph.triples), graph.top  # spares penman's layout later
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


def _split_alignment(text: str) -> tuple[str, str]:
    """``(":ARG0", "~e.3")`` from ``":ARG0~e.3"``; a quoted string has no alignment of its own."""
    if "~" not in text or text.startswith('"'):
        return text, ""
    base, _, alignment = text.partition("~")
    return base, "~" + alignment


class _Index:
    """A graph prepared for re-rooting at any of its variables, read from penman's tree.

    The source layout fixes a spanning tree: each edge has a ``holder`` (the node that writes it)
    and, if it is a tree edge, a ``child`` (the node it introduces; None for a re-entrancy or an
    attribute). Re-rooting reverses the tree edges on the path from the old top to the focus and
    keeps the others, as the ParaAMR paper's linearizations do; a re-entrant node is then defined
    wherever the new depth-first traversal first meets it. ``adjacency[v]`` lists the edges at
    ``v`` in penman's triple order (depth-first) as ``(role written from v, other end, holder,
    child)``; edges between variables are stored at both ends, attributes at their source only.
    Surface alignments stay where they were written (``:ARG0~e.3``, ``dog~e.4``), except on a
    variable's reference. :meth:`render` reuses the text of a subtree off the reversed path
    across foci (see :meth:`_crossings`), which the tests check changes no output.
    """

    __slots__ = (
        "_cache",
        "_own",
        "adjacency",
        "below",
        "closed",
        "concepts",
        "header",
        "opening",
        "outer",
        "parent",
        "targets",
        "top",
        "where",
    )

    def __init__(self, tree: penman.Tree, where: str) -> None:
        self.where = where = _describe(where, tree.metadata.get("id"))
        self.top = top = tree.node[0]
        if not top:
            raise AMRError(f"{where}: empty graph")
        concepts: dict[str, str | None] = {}
        parent: dict[str, str] = {}
        branches: list[tuple[str, str, str | None, bool]] = []  # holder, role, target, tree edge

        def read(node: tuple) -> None:
            var, edges = node
            if not var:
                raise AMRError(f"{where}: empty node () in the graph")
            if var in concepts:
                raise AMRError(f"{where}: variable {var} is defined more than once")
            concepts[var] = None
            for role, target in edges:
                if role == "/" or role == _INSTANCE:
                    concepts[var] = target
                elif isinstance(target, tuple):
                    parent[target[0]] = var
                    branches.append((var, role, target[0], True))
                    read(target)
                else:
                    branches.append((var, role, target, False))

        try:
            read(tree.node)
        except RecursionError:
            raise AMRError(f"{where}: graph too deep") from None
        adjacency: dict[str, list[tuple[str, str | None, str, str | None]]] = {v: [] for v in concepts}
        targets: set[str] = set()
        reentrancies: list[tuple[str, str]] = []
        for holder, role, target, introduced in branches:
            if not introduced and target not in concepts:
                reference = _split_alignment(target)[0] if target else target
                if reference not in concepts:
                    adjacency[holder].append((role, target, holder, None))
                    continue
                target = reference
            base, alignment = _split_alignment(role)
            child = target if introduced else None
            adjacency[holder].append((role, target, holder, child))
            if target != holder:
                adjacency[target].append((_inverse(base) + alignment, holder, holder, child))
            targets.add(holder if _is_inverted(base) else target)
            if not introduced:
                reentrancies.append((holder, target))
        self.concepts = concepts
        self.parent = parent
        self.adjacency = adjacency
        self.targets = targets  # variables with an incoming edge in the de-inverted graph
        self.outer = self._crossings(reentrancies)
        # leaves are as quick to write as to look up: reuse the text of inner nodes only
        self.closed = set(parent.values()).difference(self.outer)
        self.below = self._below(set(self.outer).intersection(parent.values()))
        self.opening = {v: f"({v}" if c is None else f"({v} / {c}" for v, c in concepts.items()}
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

    def _crossings(self, reentrancies: list[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
        """The nodes whose subtree a re-entrancy enters or leaves, each with the outer ends of
        those that a node inside writes: whether these are written already is all that the
        subtree's text depends on (seen from a focus outside it). The other nodes are closed:
        their subtree is laid out the same from any focus outside it."""
        parent = self.parent
        depth = {self.top: 0}
        for var in self.concepts:  # parents come before their children
            if var in parent:
                depth[var] = depth[parent[var]] + 1
        outer: dict[str, set[str]] = {}
        for holder, target in reentrancies:  # the nodes between each end and their common ancestor
            a, b = holder, target
            while a != b:
                if depth[a] >= depth[b]:
                    outer.setdefault(a, set()).add(target)
                    a = parent[a]
                else:
                    outer.setdefault(b, set())
                    b = parent[b]
        return {v: tuple(sorted(ends)) for v, ends in outer.items()}

    def _below(self, nodes: set[str]) -> dict[str, frozenset[str]]:
        """The nodes of the subtree of each of ``nodes``, itself excluded (source layout)."""
        order = list(self.concepts)  # depth-first: a subtree is the run of nodes after its root
        depth = {self.top: 0}
        for var in order[1:]:
            depth[var] = depth[self.parent[var]] + 1
        below = {}
        for i, var in enumerate(order):
            if var in nodes:
                run = itertools.takewhile(lambda v, d=depth[var]: depth[v] > d, order[i + 1 :])
                below[var] = frozenset(run)
        return below

    def concept(self, var: str) -> str:
        """The concept of ``var`` without its surface alignment ("" for a node without one)."""
        concept = self.concepts[var]
        return "" if concept is None else _split_alignment(concept)[0]

    def _layout(self, mod_as_domain: bool) -> tuple[dict, dict, dict]:
        """What each node writes, as laid out from the old top, and how re-rooting changes it.

        ``own[v]`` lists ``(as a reference, as a definition, variable, width)`` per edge that ``v``
        writes, in order (an attribute is ``(text, None, None, 0)``; the width of the role
        indents a definition). When the tree edge of ``c`` to its parent is reversed, the parent
        drops its entry ``own[parent][down[c]]`` and ``c`` inserts ``up[c] = (index, entry)``.
        """
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
            for role, other, holder, child in edges:
                if rename:
                    base, alignment = _split_alignment(role)
                    role = rename.get(base, base) + alignment
                if other in concepts:
                    entry = (f"{role} {other}", f"{role} ", other, len(role) + 1)
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
            while True:
                path.add(node)
                written = own[node]
                if child is not None:
                    i = down[child]
                    written = written[:i] + written[i + 1 :]
                if node in parent:
                    k, entry = up[node]
                    if child is not None and i < k:
                        k -= 1
                    written = [*written[:k], entry, *written[k:]]
                entries[node] = written
                if node not in parent:
                    break
                node, child = parent[node], node
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
            joiner = " " if oneline else _PADS[inner]
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
                    append(text if oneline else text.replace("\n", _PADS[inner + width]))
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
                    cache[key] = text if oneline or not column else text.replace(_PADS[column], "\n"), inside

        try:
            walk(focus, 0, None)
        except RecursionError:
            raise AMRError(f"{self.where}: graph too deep to linearize") from None
        return "".join(parts)


def _index(graph: GraphInput, where: str = "<graph>") -> _Index:
    """The index of a PENMAN text or tree (penman's parse) or of a Graph (laid out by penman)."""
    if isinstance(graph, str):
        return _Index(parse(graph, where=where), where)
    if isinstance(graph, penman.Tree):
        return _Index(graph, where)
    source = getattr(graph, "_paraamr_source", None)  # decoded here and unchanged since?
    if source is not None and source[2] == graph.top and source[1] == graph.triples:
        return _Index(penman.Tree(source[0].node, metadata=graph.metadata), where)
    try:
        tree = penman.layout.configure(graph, model=AMR_MODEL)
    except PenmanError as e:
        where = _describe(where, graph.metadata.get("id"))
        cause = "empty graph" if not graph.triples else f"cannot lay out the graph ({e})"
        raise AMRError(f"{where}: {cause}") from e
    return _Index(tree, where)


def _candidates(
    index: _Index, foci: str | int, seed: int, exclude: Collection[str], heuristic: bool
) -> list[str]:
    top = index.top
    out = [v for v in index.concepts if v != top and index.concept(v) not in exclude]
    if heuristic:
        out = [v for v in out if v not in index.targets]
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
    graph: GraphInput,
    *,
    foci: str | int = "all",
    seed: int = 0,
    exclude: Collection[str] = DEFAULT_EXCLUDED,
    heuristic: bool = False,
    where: str = "<graph>",
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
    return _candidates(_index(graph, where), foci, seed, exclude, heuristic)


def refocus(
    graph: GraphInput,
    focus_var: str,
    *,
    oneline: bool = False,
    mod_as_domain: bool = False,
    where: str = "<graph>",
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
    return _index(graph, where).render(focus_var, oneline=oneline, mod_as_domain=mod_as_domain)


def variants(
    graph: GraphInput,
    *,
    foci: str | int = "all",
    seed: int = 0,
    exclude: Collection[str] = DEFAULT_EXCLUDED,
    heuristic: bool = False,
    oneline: bool = False,
    mod_as_domain: bool = False,
    where: str = "<graph>",
) -> list[Variant]:
    """One :class:`Variant` per candidate focus (see :func:`candidate_foci` and :func:`refocus`).

    >>> [v.concept for v in variants("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go :ARG0 b))")]
    ['boy', 'go']
    """
    index = _index(graph, where)
    return [
        Variant(v, index.concept(v), index.render(v, oneline=oneline, mod_as_domain=mod_as_domain))
        for v in _candidates(index, foci, seed, exclude, heuristic)
    ]


def refocus_batch(texts: Iterable[GraphInput], **options) -> list[list[Variant] | Failure]:
    """:func:`variants` of each graph, or a ``Failure("refocus", reason)`` for a bad one.

    Options are those of :func:`variants` but ``where``: reasons name the graph by position
    (1-based) and id.

    >>> out = refocus_batch(["(a / b :ARG0 (c / d))", "(a / b", ""])
    >>> [len(x) if isinstance(x, list) else str(x) for x in out]  # doctest: +NORMALIZE_WHITESPACE
    [1, 'refocus: graph 2: not valid PENMAN: Unexpected end of input (line 1, column 6)',
     'refocus: graph 3: empty graph (no PENMAN after the metadata)']
    """
    out: list[list[Variant] | Failure] = []
    for position, text in enumerate(texts, 1):
        try:
            out.append(variants(text, where=f"graph {position}", **options))
        except AMRError as e:
            out.append(Failure("refocus", str(e)))
    return out
