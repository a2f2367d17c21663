"""``linearization="penman"``: every re-rooted graph is ``penman.encode(g, top=v)`` byte for byte,
over every hand-written graph of the repository and every focus; the named foci rules."""

from __future__ import annotations

from pathlib import Path

import penman
import pytest
from amr_checks import PAPER_AMR, PAPER_AT_Z3, PAPER_AT_Z4, PAPER_TEXT
from penman.models.amr import model
from test_rerooting import GRAPHS

from paraamr import amr

CHAIN_GRAPHS = Path(__file__).parents[1] / "builder" / "data" / "graphs.amr"
#: Structural concepts as foci: a name, a coordination, a question's gap, several sentences.
STRUCTURAL = (
    "# ::snt Did John or Mary go? They left.\n"
    '(m / multi-sentence :snt1 (g / go-02 :ARG0 (o / or :op1 (p / person :name (n / name :op1 "John")) '
    ':op2 (p2 / person :name (n2 / name :op1 "Mary"))) :polarity (a / amr-unknown)) '
    ":snt2 (l / leave-11 :ARG0 (t / they)))"
)


def _hand_written() -> dict[str, str]:
    """Every hand-written graph of the tests that decodes: the AMR tests', the chain tests', the paper's."""
    graphs = {f"amr:{name}": text for name, text in GRAPHS.items()}
    for position, block in amr.read_graphs(CHAIN_GRAPHS.read_text().splitlines()):
        try:
            amr.decode(block)
        except amr.AMRError:
            continue  # the chain's deliberately broken graph
        graphs[f"chain:{position}"] = block
    graphs["paper"] = f"# ::id paper-fig1\n# ::snt {PAPER_TEXT}\n{PAPER_AMR}"
    graphs["structural"] = STRUCTURAL
    return graphs


HAND_WRITTEN = _hand_written()


def _penman_at(text: str, focus: str, oneline: bool) -> str:
    """penman's own linearization, computed here from penman alone: the decoded graph, its
    metadata with ``# ::focus`` last, encoded with ``top=focus``."""
    graph = penman.decode(text, model=model)
    graph.metadata = {k: v for k, v in graph.metadata.items() if k != "focus"} | {"focus": focus}
    return penman.encode(graph, top=focus, model=model, indent=None if oneline else -1)


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
@pytest.mark.parametrize("oneline", [True, False])
def test_every_focus_is_penman_encode_byte_for_byte(name, oneline):
    text = HAND_WRITTEN[name]
    graph = penman.decode(text, model=model)
    variants = amr.variants(
        text, exclude=amr.FOCI_RULES["every-node"], oneline=oneline, linearization="penman"
    )
    order = dict.fromkeys(s for s, _, _ in graph.triples)
    assert [v.focus for v in variants] == [v for v in order if v != graph.top]  # every node
    for v in variants:
        assert v.penman == _penman_at(text, v.focus, oneline)
        assert amr.refocus(text, v.focus, oneline=oneline, linearization="penman") == v.penman


def test_the_papers_two_linearizations_verbatim():
    for focus, printed in (("z3", PAPER_AT_Z3), ("z4", PAPER_AT_Z4)):
        out = amr.refocus(PAPER_AMR, focus, oneline=True, linearization="penman")
        assert out == f"# ::focus {focus}\n{printed}"
    # ours writes the paper's z4 graph with another branch order (same triples)
    assert amr.refocus(PAPER_AMR, "z4", oneline=True).splitlines()[-1] != PAPER_AT_Z4


def test_the_two_linearizations_differ_where_docs_say():
    """The figures of docs/generate.md: over the hand-written graphs, how many variants the two
    write alike, how many of penman's name a node before defining it, and how many of those
    penman reads back as another graph (a node written twice, once without its concept)."""
    from collections import Counter

    from amr_checks import mentions_before_definition

    every = amr.FOCI_RULES["every-node"]
    pairs = [
        (ours.penman, theirs.penman, penman.decode(text, model=model).triples)
        for text in HAND_WRITTEN.values()
        for ours, theirs in zip(
            amr.variants(text, exclude=every, oneline=True),
            amr.variants(text, exclude=every, oneline=True, linearization="penman"),
            strict=True,
        )
    ]
    assert len(HAND_WRITTEN) == 21 and len(pairs) == 80
    assert sum(a == b for a, b, _ in pairs) == 45
    assert sum(bool(mentions_before_definition(b)) for _, b, _ in pairs) == 14
    assert not any(mentions_before_definition(a) for a, _, _ in pairs)
    extra = [
        Counter(penman.decode(b, model=model).triples) - Counter(source)
        for _, b, source in pairs
        if Counter(penman.decode(b, model=model).triples) != Counter(source)
    ]
    assert [[(r, t) for _, r, t in e] for e in extra] == [
        [(":instance", None)]
    ] * 2  # (b2 :ARG1 ...) ... (b2 / x)
    assert all(Counter(penman.decode(a, model=model).triples) == Counter(source) for a, _, source in pairs)


def test_the_foci_rules():
    every = amr.candidate_foci(STRUCTURAL, exclude=amr.FOCI_RULES["every-node"])
    skip = amr.candidate_foci(STRUCTURAL, exclude=amr.FOCI_RULES["skip-structural"])
    concepts = {v: c for v, _, c in penman.decode(STRUCTURAL).instances()}
    assert every == [v for v in concepts if v != "m"]
    assert {concepts[v] for v in set(every) - set(skip)} == {"or", "name", "amr-unknown"}
    assert amr.FOCI_RULES["skip-structural"] == amr.DEFAULT_EXCLUDED


def test_penman_linearization_takes_no_mod_as_domain():
    with pytest.raises(ValueError, match="mod_as_domain needs linearization='paraamr'"):
        amr.variants(GRAPHS["mod-domain"], linearization="penman", mod_as_domain=True)
    with pytest.raises(ValueError, match="linearization must be one of"):
        amr.variants(GRAPHS["mod-domain"], linearization="amrlib")


@pytest.mark.parametrize("linearization", ["paraamr", "penman"])
def test_a_tree_with_a_variable_defined_twice_is_refused_by_both_linearizations(linearization):
    tree = penman.parse("(a / x :ARG0 (a / y))")
    with pytest.raises(amr.AMRError, match="variable a is defined more than once"):
        amr.refocus(tree, "a", linearization=linearization)
