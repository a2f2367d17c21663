"""Candidate foci: which variables of a graph may become its new root (:func:`candidate_foci`).

>>> candidate_foci("(w / want-01 :ARG0 (b / boy) :ARG1 (g / go :ARG0 b))", exclude=())
['b', 'g']
"""

from __future__ import annotations

import random
from collections.abc import Collection

from paraamr.amr.reading import GraphInput, _read, _Structure

__all__ = ["DEFAULT_EXCLUDED", "FOCI_RULES", "candidate_foci"]

#: Concepts :func:`candidate_foci` leaves out by default: structural nodes without words of their own,
#: so a sentence headed by one is no paraphrase (``name`` as root reads "the name X of ...").
DEFAULT_EXCLUDED: frozenset[str] = frozenset({"name", "multi-sentence", "amr-unknown", "and", "or"})

#: ``--foci-rule`` names and the concepts each excludes: ``every-node`` is the paper's,
#: ``skip-structural`` leaves out :data:`DEFAULT_EXCLUDED` (docs/generate.md gives the reason).
FOCI_RULES: dict[str, frozenset[str]] = {"every-node": frozenset(), "skip-structural": DEFAULT_EXCLUDED}


def _candidates(
    index: _Structure, foci: str | int, seed: int, exclude: Collection[str], heuristic: bool
) -> list[str]:
    if isinstance(exclude, str):
        exclude = (exclude,)  # one concept, not its letters ("go" is in "going")
    elif exclude is None:
        exclude = ()
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

    Every variable but the top whose concept is not in ``exclude``: all (``foci="all"``) or ``k``
    chosen at random by ``seed`` and the graph; ``heuristic=True`` (amrlib's) keeps only those
    without incoming de-inverted edges.

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
