"""Reading PENMAN AMR: checked parse trees (a one-pass reader for plain PENMAN, penman for the
rest), decoded graphs, blank-line separated files, and the structure every re-rooting starts from.

>>> tree = parse("# ::id 1\\n(w / want-01 :ARG0 (b / boy) :ARG1 (g / go :ARG0 b))")
>>> s = _Structure(tree, "<graph>")
>>> s.top, s.concepts, sorted(s.targets)
('w', {'w': 'want-01', 'b': 'boy', 'g': 'go'}, ['b', 'g'])
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import TypeVar

import penman
from penman.exceptions import DecodeError, PenmanError
from penman.models.amr import model as AMR_MODEL

from paraamr.errors import AMRError, decode_problem

__all__ = [
    "MAX_DEPTH", "MAX_NODES", "GraphInput", "check_size", "decode", "parse", "read_graphs", "split_graph",
    "text_after_graph",
]

#: Default caps on one graph (``--max-amr-nodes``, ``--max-amr-depth``): far above sentence AMRs
#: (tens of nodes, a dozen deep), below what stalls the realizer or meets Python's recursion limit.
MAX_NODES = 500
MAX_DEPTH = 100

_INSTANCE = AMR_MODEL.concept_role


def _unreported(record: logging.LogRecord) -> bool:
    """Drop penman's warnings of a missing concept or target: :class:`_Structure` refuses those."""
    return not record.getMessage().startswith(("Missing concept:", "Missing target:"))


logging.getLogger("penman").addFilter(_unreported)

#: What the functions take as a graph: PENMAN text, penman's tree (:func:`parse`) or its Graph.
GraphInput = str | penman.Tree | penman.Graph


@lru_cache(maxsize=4096)
def _invert(role: str) -> tuple[str, bool]:
    """``role`` written from its target (``:ARG1`` -> ``:ARG1-of``, ``:ARG0-of`` -> ``:ARG0``), and
    whether ``role`` is inverted."""
    return AMR_MODEL.invert_role(role), AMR_MODEL.is_role_inverted(role)


_ID_LINE = re.compile(r"^\s*#.*?::id\s+(\S+)", re.MULTILINE)


def _describe(where: str, graph_id: str | None) -> str:
    """How errors name a graph: ``where`` (a position), with its ``# ::id`` when it has one."""
    if not graph_id:
        return where
    return f"graph {graph_id}" if where == "<graph>" else f"{where} (id {graph_id})"


#: A string or comment (both skipped by :func:`check_size`; a ``#`` inside a symbol is the
#: symbol's, as for penman), or a parenthesis.
_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|(?<![^\s()/])#[^\n]*|[()]')


def check_size(
    text: str, *, max_nodes: int | None = MAX_NODES, max_depth: int | None = MAX_DEPTH, where: str = "<graph>"
) -> None:
    """Refuse a graph of more than ``max_nodes`` nodes or nested deeper than ``max_depth`` (None: no
    limit), from its text, before anything parses it.

    >>> check_size("(a / b :ARG0 (c / d :ARG1 (e / f)))", max_depth=2)
    Traceback (most recent call last):
    ...
    paraamr.errors.AMRError: <graph>: nested more than 2 deep (--max-amr-depth 2)
    >>> check_size('# ::snt ((((\\n(a / b :name (n / name :op1 "((("))', max_nodes=2, max_depth=2)
    """
    nodes_cap = float("inf") if max_nodes is None else max_nodes
    depth_cap = float("inf") if max_depth is None else max_depth
    if text.count("(") <= min(nodes_cap, depth_cap):
        return  # no more parentheses than either cap: the usual graph costs one count
    nodes = depth = 0
    for match in _NESTING.finditer(text):
        token = match.group()
        if token == ")":
            depth -= 1
        elif token == "(":
            nodes, depth = nodes + 1, depth + 1
            if nodes > nodes_cap:
                problem = f"more than {max_nodes} nodes (--max-amr-nodes {max_nodes})"
            elif depth > depth_cap:
                problem = f"nested more than {max_depth} deep (--max-amr-depth {max_depth})"
            else:
                continue
            raise AMRError(f"{_describe_text(text, where)}: {problem}")


def parse(
    text: str, *, where: str = "<graph>", max_nodes: int | None = MAX_NODES, max_depth: int | None = MAX_DEPTH
) -> penman.Tree:
    """penman's tree of one PENMAN graph, checked for size (:func:`check_size`) and syntax; the
    fastest input of :func:`variants`. Raises AMRError naming ``where`` (or the ``# ::id``).

    >>> parse("# ::id 7\\n(b / bark-01 :ARG0 (d / dog))").node
    ('b', [('/', 'bark-01'), (':ARG0', ('d', [('/', 'dog')]))])
    >>> parse("# ::id 7\\n# ::snt Hi.")
    Traceback (most recent call last):
    ...
    paraamr.errors.AMRError: graph 7: empty graph (no PENMAN after the metadata)
    """
    if not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()):
        raise AMRError(f"{_describe_text(text, where)}: empty graph (no PENMAN after the metadata)")
    check_size(text, max_nodes=max_nodes, max_depth=max_depth, where=where)
    fast = _fast_tree(text)
    if fast is not None:
        return fast
    graph, junk = split_graph(text)
    try:
        trees = list(itertools.islice(penman.iterparse(text if junk else graph), 2)) or [penman.parse(text)]
    except DecodeError as e:
        raise AMRError(f"{_describe_text(text, where)}: not valid PENMAN: {decode_problem(e)}") from e
    except RecursionError:
        raise AMRError(f"{_describe_text(text, where)}: graph too deep") from None
    if len(trees) > 1:
        cause = "more than one graph (a blank line must separate graphs)"
        raise AMRError(f"{_describe_text(text, where)}: {cause}")
    if junk:
        raise AMRError(_after_graph(text, where, junk))
    return trees[0]


def text_after_graph(text: str, where: str = "<graph>") -> str | None:
    """The problem of text after the graph of ``text``, named as :func:`parse` names it; None without.

    >>> text_after_graph("# ::id 7\\n(x / y) z", "in.amr:graph 2"), text_after_graph("(x / y) # note")
    ("in.amr:graph 2 (id 7): not valid PENMAN: text after the graph: 'z'", None)
    """
    junk = split_graph(text)[1]
    return _after_graph(text, where, junk) if junk else None


def _after_graph(text: str, where: str, junk: str) -> str:
    return f"{_describe_text(text, where)}: not valid PENMAN: text after the graph: {junk[:40]!r}"


def split_graph(text: str) -> tuple[str, str]:
    """``text`` up to the end of its first graph, and what follows, comments left out: penman's
    reader stops after a graph without a word, and fails on a comment after it on its line.

    >>> split_graph("(x / y))) extra )")
    ('(x / y)', ')) extra )')
    >>> split_graph('# ::id 1\\n(x / y :name "a)b#") # a comment')
    ('# ::id 1\\n(x / y :name "a)b#")', '')
    """
    end = _graph_end(text)[0]
    if end is None:
        return text, ""
    return text[:end], _COMMENT.sub(lambda m: m.group(1) or "", text[end:]).strip()


def _graph_end(text: str, depth: int = 0) -> tuple[int | None, int]:
    """Where the first graph of ``text`` ends (after its last parenthesis; None if none ends there),
    and how many parentheses are open at the end of ``text``, ``depth`` being open before it."""
    for match in _LEXEME.finditer(text):
        if match.lastgroup == "p" and match.group() != "/":
            depth += 1 if match.group() == "(" else -1
            if depth == 0:
                return match.end(), depth
    return None, depth


#: A PENMAN string: double quotes around anything, backslash escapes included.
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
#: Tokens of the plain PENMAN that AMR corpora use: strings, parentheses, slash, roles, symbols;
#: anything else (alignments, stray quotes) falls through to ``other``.
_TOKEN = re.compile(rf'(?P<s>{_STRING})|(?P<p>[()/])|(?P<r>:[^\s"()/:~]*)|(?P<y>[^\s"()/:~]+)|(?P<o>\S)')
#: A string (kept) or a comment to the end of its line (dropped by :func:`split_graph`).
_COMMENT = re.compile(rf"({_STRING})|#[^\n]*")
#: Whitespace that penman's reader does not take for a space between tokens.
_WIDE_SPACE = re.compile(r"[^\S \t\r\n\v\f]")
#: A comment, or a token of :data:`_TOKEN` (a ``#`` inside a symbol is the symbol's, as for penman).
_LEXEME = re.compile(rf"(?P<c>#[^\n]*)|{_TOKEN.pattern}")


def _fast_tree(text: str) -> penman.Tree | None:
    """penman's tree of ``text`` in one regular-expression pass (penman's lexer is slow), or None
    unless ``text`` is metadata lines and one plain graph.

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
    # penman's reader: no comments here; only ASCII whitespace parts tokens (isascii: no scan)
    if "#" in body or (not body.isascii() and _WIDE_SPACE.search(body)):
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


def _check_tree(tree: penman.Tree, where: str) -> penman.Tree:
    """``tree`` if shaped as penman's parse (nodes ``(variable, [(role, target), ...])``), else
    AMRError naming the first part that is not.

    >>> _check_tree(penman.Tree(("a", [(":ARG0", ["b"])])), "graph 3")
    Traceback (most recent call last):
    ...
    paraamr.errors.AMRError: graph 3: not a penman tree: branch (':ARG0', ['b'])
    """
    name = _describe(where, tree.metadata.get("id") if isinstance(tree.metadata, dict) else None)
    nodes = [tree.node]
    while nodes:
        node = nodes.pop()
        if not (
            isinstance(node, tuple)
            and len(node) == 2
            and isinstance(node[0], str)
            and isinstance(node[1], (list, tuple))
        ):
            raise AMRError(f"{name}: not a penman tree: node {node!r:.80}")
        for branch in node[1]:
            role, target = branch if isinstance(branch, tuple) and len(branch) == 2 else (None, None)
            if not isinstance(role, str) or not (target is None or isinstance(target, (str, tuple))):
                raise AMRError(f"{name}: not a penman tree: branch {branch!r:.80}")
            if isinstance(target, tuple):
                nodes.append(target)
    return tree


def decode(
    text: str | penman.Tree,
    *,
    where: str = "<graph>",
    max_nodes: int | None = MAX_NODES,
    max_depth: int | None = MAX_DEPTH,
) -> penman.Graph:
    """One PENMAN graph (text, or penman's tree whose size is not checked) decoded with penman's AMR
    model. Raises AMRError naming ``where`` and the cause (not PENMAN, no graph or several, a
    variable defined twice, over ``max_nodes`` or ``max_depth``). The graph keeps its source tree,
    which :func:`variants` reuses while the triples and top are unchanged.

    >>> decode("(w / want-01 :ARG0-of (b / boy))").triples
    [('w', ':instance', 'want-01'), ('b', ':ARG0', 'w'), ('b', ':instance', 'boy')]
    >>> decode("(w / want-01 :ARG0 (b / boy)", where="graph 7")
    Traceback (most recent call last):
    ...
    paraamr.errors.AMRError: graph 7: not valid PENMAN: Unexpected end of input (line 1, column 28)
    """
    tree = (
        _check_tree(text, where)
        if isinstance(text, penman.Tree)
        else parse(text, where=where, max_nodes=max_nodes, max_depth=max_depth)
    )
    _Structure(tree, where)  # validates: one definition per variable
    try:
        graph = penman.layout.interpret(tree, AMR_MODEL)
    except PenmanError as e:
        raise AMRError(f"{_describe(where, tree.metadata.get('id'))}: not valid PENMAN: {e}") from e
    except RecursionError:  # deeper than Python's stack, with --max-amr-depth raised that far
        raise AMRError(f"{_describe(where, tree.metadata.get('id'))}: graph too deep") from None
    graph._paraamr_source = tree, list(graph.triples), graph.top  # spares penman's layout later
    return graph


def read_graphs(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """``(1-based position, block text)`` of the PENMAN blocks of ``lines``, skipping blocks of plain
    comments without ``# ::`` metadata (an AMR release's header). As penman reads a file, a blank
    line or comments between a finished graph and more PENMAN part two graphs, and a lone carriage
    return ends a line (classic Mac OS).

    >>> list(read_graphs(["# AMR release 3.0", "", "# ::id a", "(x / xx)", "", "", "(y / yy)"]))
    [(1, '# ::id a\\n(x / xx)'), (2, '(y / yy)')]
    >>> list(read_graphs(["(x / xx", "# ::id b", ":ARG0 (y / yy)) # end", "# ::id c", "(z / zz)", "# ."]))
    [(1, '(x / xx\\n# ::id b\\n:ARG0 (y / yy)) # end'), (2, '# ::id c\\n(z / zz)\\n# .')]
    >>> list(read_graphs(["# ::id a\\r(x / xx)\\r# ::id b\\r(y / yy)\\r\\n"]))
    [(1, '# ::id a\\n(x / xx)'), (2, '# ::id b\\n(y / yy)')]
    """
    if isinstance(lines, str):
        lines = lines.splitlines()
    position = 0
    for block in _blocks(lines):
        for graph in _split_block(block):
            if not all(b.lstrip().startswith("#") and "::" not in b for b in graph):
                position += 1
                yield position, "\n".join(graph)


def _blocks(lines: Iterable[str]) -> Iterator[list[str]]:
    """The blank-line separated blocks of ``lines``, a line ending at a newline or carriage return."""
    block: list[str] = []
    for text in itertools.chain(lines, [""]):
        text = text.removesuffix("\n").removesuffix("\r")
        for line in text.split("\r") if "\r" in text else (text,):
            if line.strip():
                block.append(line)
            elif block:
                yield block
                block = []


def _split_block(block: list[str]) -> Iterator[list[str]]:
    """``block`` cut before each run of comments that ends a finished graph and precedes more PENMAN
    (penman reads those comments as the next graph's metadata); each line is scanned once."""
    start = scanned = depth = 0  # depth: parentheses open in block[start:scanned]
    cut, penman_seen = None, False  # cut: the first line of a run of comments after PENMAN
    for i, line in enumerate(block):
        if not line.lstrip().startswith("#"):
            if cut is not None:
                end, depth = _graph_end("\n".join(block[scanned:cut]), depth)
                scanned = cut
                if end is not None:
                    yield block[start:cut]
                    start, depth = cut, 0
            cut, penman_seen = None, True
        elif penman_seen and cut is None:
            cut = i
    yield block[start:]


def _split_alignment(text: str) -> tuple[str, str]:
    """``(":ARG0", "~e.3")`` from ``":ARG0~e.3"``; a quoted string has no alignment of its own."""
    if "~" not in text or text.startswith('"'):
        return text, ""
    base, _, alignment = text.partition("~")
    return base, "~" + alignment


class _Structure:
    """A graph read from penman's tree: its variables, the source's spanning tree and its edges.

    ``adjacency[v]`` lists the edges at ``v`` in depth-first order as ``(role written from v, other
    end, holder, child, mark)``: ``holder`` writes the edge, ``child`` is the node a tree edge
    introduces (None for a re-entrancy or attribute), ``mark`` a re-entrancy's alignment (``~e.5``)
    written after the reference; edges between variables are stored at both ends.
    ``targets``: variables with an incoming de-inverted edge; ``reentrancies``: ``(holder, target)``.
    Raises AMRError for an empty graph or node and a variable defined twice.
    """

    __slots__ = ("adjacency", "concepts", "parent", "reentrancies", "targets", "top", "where")

    def __init__(self, tree: penman.Tree, where: str) -> None:
        self.where = where = _describe(where, tree.metadata.get("id"))
        self.top = tree.node[0]
        if not self.top:
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
                if target is None:  # penman warns of a missing concept or target and reads on
                    what = "a '/' without a concept" if role == "/" else f"{role} without a target"
                    raise AMRError(f"{where}: {var} has {what}")
                if role == "/" or role == _INSTANCE:
                    if concepts[var] is not None:  # penman reads both; one would be lost
                        both = f"{concepts[var]} and {target}"
                        raise AMRError(f"{where}: variable {var} has two concepts, {both}")
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
        adjacency: dict[str, list[tuple[str, str | None, str, str | None, str]]] = {v: [] for v in concepts}
        targets: set[str] = set()
        reentrancies: list[tuple[str, str]] = []
        for holder, role, target, introduced in branches:
            mark = ""  # a reference's own alignment (b~e.5), kept where it is written as one
            if not introduced and target not in concepts:
                reference, mark = _split_alignment(target) if target else (target, "")
                if reference not in concepts:
                    adjacency[holder].append((role, target, holder, None, ""))
                    continue
                target = reference
            base, alignment = _split_alignment(role)
            inverse, inverted = _invert(base)
            if inverted and _invert(inverse)[1]:  # :ARG0-of-of: no role writes it from its other end
                raise AMRError(f"{where}: role {base} is inverted twice")
            child = target if introduced else None
            adjacency[holder].append((role, target, holder, child, mark))
            if target != holder:
                adjacency[target].append((inverse + alignment, holder, holder, child, ""))
            targets.add(holder if inverted else target)
            if not introduced:
                reentrancies.append((holder, target))
        self.concepts = concepts
        self.parent = parent
        self.adjacency = adjacency
        self.targets = targets
        self.reentrancies = reentrancies

    def concept(self, var: str) -> str:
        """The concept of ``var`` without its surface alignment ("" for a node without one)."""
        concept = self.concepts[var]
        return "" if concept is None else _split_alignment(concept)[0]


_S = TypeVar("_S", bound=_Structure)


def _read(graph: GraphInput, where: str, kind: type[_S]) -> _S:
    """The ``kind`` of structure of a PENMAN text, tree or Graph."""
    if isinstance(graph, str):
        return kind(parse(graph, where=where), where)
    if isinstance(graph, penman.Tree):
        return kind(_check_tree(graph, where), where)
    if not isinstance(graph, penman.Graph):  # None, bytes, a list of graphs: no 'triples' to read
        raise AMRError(f"{where}: a PENMAN string, penman.Graph or penman.Tree, not {type(graph).__name__}")
    source = getattr(graph, "_paraamr_source", None)  # decoded here and unchanged since?
    if source is not None and source[2] == graph.top and source[1] == graph.triples:
        return kind(penman.Tree(source[0].node, metadata=graph.metadata), where)
    try:
        tree = penman.layout.configure(graph, model=AMR_MODEL)
    except PenmanError as e:
        where = _describe(where, graph.metadata.get("id"))
        cause = "empty graph" if not graph.triples else f"cannot lay out the graph ({e})"
        raise AMRError(f"{where}: {cause}") from e
    return kind(_check_tree(tree, where) if graph.triples else tree, where)  # empty: named by kind
