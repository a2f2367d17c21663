"""Candidate foci: which variables of a graph may become its new root.

Every variable but the current top, minus excluded concepts (:data:`DEFAULT_EXCLUDED`), optionally
only those without incoming edges (amrlib's paraphrasing heuristic), all of them or ``k`` chosen
reproducibly at random.

>>> candidate_foci("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go :ARG0 b))", exclude=())
['b', 'g']
"""

from __future__ import annotations

import random
from collections.abc import Collection

from paraamr.amr.reading import GraphInput, _read, _Structure

__all__ = ["DEFAULT_EXCLUDED", "FOCI_RULES", "candidate_foci"]

#: Concepts that make poor foci, left out of :func:`candidate_foci` unless ``exclude`` says
#: otherwise: structural nodes without words of their own, so a sentence headed by one is not a
#: paraphrase (``name`` as root reads "the name X of ...", ``amr-unknown`` turns a question into a
#: fragment). Constants (``-``, numbers, strings) are never foci: they are not variables.
DEFAULT_EXCLUDED: frozenset[str] = frozenset({"name", "multi-sentence", "amr-unknown", "and", "or"})

#: The named rules of which variables may be foci (``--foci-rule``), as the concepts each excludes:
#: ``every-node`` is the paper's (every variable but the current top), ``skip-structural`` leaves
#: out :data:`DEFAULT_EXCLUDED` (docs/generate.md gives the measured reason).
FOCI_RULES: dict[str, frozenset[str]] = {"every-node": frozenset(), "skip-structural": DEFAULT_EXCLUDED}


def _candidates(
    index: _Structure, foci: str | int, seed: int, exclude: Collection[str], heuristic: bool
) -> list[str]:
    if isinstance(exclude, str):
        exclude = (exclude,)  # one concept, not its letters ("go" is in "going")
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

    Every variable except the current top and those whose concept is in ``exclude`` (``()`` keeps
    all). ``foci="all"`` keeps them all; an int ``k`` keeps ``k`` of them chosen at random, by
    ``seed`` and the graph alone. ``heuristic=True`` (amrlib's) keeps only variables without
    incoming edges in the de-inverted graph.

    >>> g = "(a / and :op1 (b / bark-01 :ARG0 (d / dog)) :op2 (s / sleep-01 :ARG0 d))"
    >>> candidate_foci(g)
    ['b', 'd', 's']
    >>> candidate_foci("(b / bark-01 :ARG0 (d / dog) :ARG1-of (l / loud))", heuristic=True)
    ['l']
    >>> candidate_foci(g, foci=2, seed=1) == candidate_foci(g, foci=2, seed=1)
    True
    >>> candidate_foci("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go :ARG0 b))", exclude="going")
    ['b', 'g']
    """
    return _candidates(_read(graph, where, _Structure), foci, seed, exclude, heuristic)
