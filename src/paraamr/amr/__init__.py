"""AMR graphs: reading, candidate foci and re-focusing (re-rooting), with penman's AMR model; the
public API of :mod:`~paraamr.amr.reading`, :mod:`~paraamr.amr.foci` and :mod:`~paraamr.amr.rerooting`.

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

penman decodes every output back to the source's triples; alignments (``~e.3``) stay where written.
"""

from paraamr.amr.foci import DEFAULT_EXCLUDED, FOCI_RULES, candidate_foci
from paraamr.amr.reading import MAX_DEPTH, MAX_NODES, GraphInput, check_size, decode, parse, read_graphs
from paraamr.amr.rerooting import LINEARIZATIONS, Variant, iter_variants, refocus, refocus_batch, variants
from paraamr.errors import AMRError

__all__ = [
    "DEFAULT_EXCLUDED",
    "FOCI_RULES",
    "LINEARIZATIONS",
    "MAX_DEPTH",
    "MAX_NODES",
    "AMRError",
    "GraphInput",
    "Variant",
    "candidate_foci",
    "check_size",
    "decode",
    "iter_variants",
    "parse",
    "read_graphs",
    "refocus",
    "refocus_batch",
    "variants",
]
