"""Random AMR-like graphs for the property tests and ``benchmarks/bench_refocus.py``.

A random spanning tree whose edges point either way (so penman writes some of them inverted),
plus re-entrancies (undirected cycles) and attributes (polarity, numbers, strings, names).
Driven by a :class:`random.Random`, so hypothesis' ``st.randoms()`` can shrink it.
"""

from __future__ import annotations

import random

import penman
from penman.models.amr import model

PREDICATES = ["want-01", "need-01", "know-01", "approve-01", "say-01", "go-02", "make-01", "see-01"]
NOUNS = ["boy", "girl", "thing", "price", "they", "i", "city", "document", "statistic", "this"]
STRUCTURAL = ["and", "name", "person", "date-entity"]
ROLES = [":ARG0", ":ARG1", ":ARG2", ":mod", ":domain", ":purpose", ":time", ":location",
         ":consist-of", ":poss", ":op1", ":op2", ":part", ":manner", ":prep-with"]  # fmt: skip
ATTRIBUTES = [(":polarity", "-"), (":quant", "5"), (":wiki", '"Paris"'), (":op1", '"John Smith"'),
              (":mode", "imperative")]  # fmt: skip


def random_triples(
    rng: random.Random, nodes: int, *, reentrancies: int = 2, attributes: int = 2, local: bool = False
):
    """``(triples, top)`` of a connected graph with ``nodes`` variables ``z1``..``zN``.

    Re-entrancies join random pairs of nodes, or with ``local=True`` a node and a sibling, an
    uncle or its grandparent, as AMR's control and shared arguments mostly do.
    """
    variables = [f"z{i}" for i in range(1, nodes + 1)]
    parent: dict[str, str] = {}
    triples = []
    for i, var in enumerate(variables):
        kind = PREDICATES if rng.random() < 0.4 else NOUNS if rng.random() < 0.85 else STRUCTURAL
        concept = rng.choice(kind)
        triples.append((var, ":instance", concept))
        if i:
            other = parent[var] = variables[rng.randrange(i)]
            role = rng.choice(ROLES)
            triples.append((other, role, var) if rng.random() < 0.7 else (var, role, other))
    edges = {(s, t) for s, r, t in triples if r != ":instance"}
    for _ in range(reentrancies if nodes > 2 else 0):
        a, b = rng.sample(variables, 2)
        if local and a in parent:
            up = parent[a]
            near = [v for v, p in parent.items() if p in (up, parent.get(up)) and v != a]
            b = rng.choice([*near, parent[up]] if up in parent else near or [b])
        if (a, b) not in edges and (b, a) not in edges:
            edges.add((a, b))
            triples.append((a, rng.choice(ROLES), b))
    for _ in range(attributes):
        role, value = rng.choice(ATTRIBUTES)
        if (attribute := (rng.choice(variables), role, value)) not in triples:
            triples.append(attribute)
    return triples, variables[0]


def random_penman(rng: random.Random, nodes: int, **options) -> str:
    """A random graph as PENMAN text, laid out by penman from a random top."""
    triples, _ = random_triples(rng, nodes, **options)
    rng.shuffle(triples)
    top = rng.choice([t[0] for t in triples if t[1] == ":instance"])
    graph = penman.Graph(triples, top=top, metadata={"id": f"g{rng.randrange(10**6)}", "snt": "A sentence."})
    return penman.encode(graph, model=model)
