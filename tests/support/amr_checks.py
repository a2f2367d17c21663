"""The invariants every re-rooted graph must satisfy, checked against penman (the reference)."""

from __future__ import annotations

from collections import Counter

import penman
from penman.models.amr import model

#: Figure 1 of the ParaAMR paper (Huang et al., ACL 2023), "I know for them to approve this price,
#: they'll need statistical documentation.", in the paper's notation (as in tests/conftest.py).
PAPER_AMR = (
    "(z1 / know :ARG0 (z2 / i) :ARG1 (z3 / need :ARG0 (z4 / they) :ARG1 (z5 / documentation "
    ":mod (z6 / statistic)) :purpose (z7 / approve :ARG0 z4 :ARG1 (z8 / thing :ARG2-of "
    "(z9 / price) :mod (z10 / this)))))"
)
PAPER_TEXT = "I know for them to approve this price, they'll need statistical documentation."
#: The paper's re-rooted linearizations (Figure 1, as quoted in issue 2).
PAPER_AT_Z3 = (
    "(z3 / need :ARG1-of (z1 / know :ARG0 (z2 / i)) :ARG0 (z4 / they) :ARG1 (z5 / documentation "
    ":mod (z6 / statistic)) :purpose (z7 / approve :ARG0 z4 :ARG1 (z8 / thing :ARG2-of (z9 / price) "
    ":mod (z10 / this))))"
)
PAPER_AT_Z4 = (
    "(z4 / they :ARG0-of (z3 / need :ARG1 (z5 / documentation :mod (z6 / statistic)) :purpose "
    "(z7 / approve :ARG0 z4 :ARG1 (z8 / thing :ARG2-of (z9 / price) :mod (z10 / this))) "
    ":ARG1-of (z1 / know :ARG0 (z2 / i))))"
)


def written_edges(text: str) -> Counter:
    """``(node, role as written, target)`` of every branch of the PENMAN tree (order ignored)."""
    out: Counter = Counter()
    agenda = [penman.parse(text).node]
    while agenda:
        var, branches = agenda.pop()
        for role, target in branches:
            if isinstance(target, tuple):
                out[var, role, target[0]] += 1
                agenda.append(target)
            else:
                out[var, role, target] += 1
    return out


def mentions_before_definition(text: str) -> list[str]:
    """Variables referenced before the node that defines them, in text order."""
    tree = penman.parse(text)
    variables = {var for var, _ in tree.nodes()}
    defined: set[str] = set()
    early = []

    def walk(node):
        var, branches = node
        defined.add(var)
        for role, target in branches:
            if isinstance(target, tuple):
                walk(target)
            elif role != "/" and target in variables and target not in defined:
                early.append(target)

    walk(tree.node)
    return early


def _mod_domain(triples):
    """(a :domain b) and (b :mod a) are one relation (for the ``mod_as_domain`` outputs)."""
    return Counter((t, ":mod", s) if r == ":domain" else (s, r, t) for s, r, t in triples)


def assert_invariants(source: str | penman.Graph, text: str, focus: str, *, mod_as_domain: bool = False):
    """What issue 2 requires of every output: it decodes; its top is the focus; its de-inverted
    triples equal the source's; every variable is defined exactly once and never referenced before
    its definition; the metadata is kept plus ``# ::focus``; penman re-encodes it unchanged."""
    src = penman.decode(source, model=model) if isinstance(source, str) else source
    out = penman.decode(text, model=model)
    assert out.top == focus
    if mod_as_domain:
        assert _mod_domain(out.triples) == _mod_domain(src.triples)
    else:
        assert Counter(out.triples) == Counter(src.triples), text
    definitions = [var for var, _ in penman.parse(text).nodes()]
    assert sorted(definitions) == sorted(src.variables())  # each exactly once, all of them
    assert mentions_before_definition(text) == []
    assert out.metadata.pop("focus") == focus
    assert out.metadata == {k: v for k, v in src.metadata.items() if k != "focus"}
    oneline = len([line for line in text.splitlines() if not line.startswith("#")]) == 1
    out.metadata["focus"] = focus
    assert penman.encode(out, model=model, indent=None if oneline else -1) == text
