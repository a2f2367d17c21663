"""The paper's Figure 1 graph: re-rooted at z3 and z4 it gives the paper's linearizations."""

from __future__ import annotations

import penman
import pytest
from amr_checks import (
    PAPER_AMR,
    PAPER_AT_Z3,
    PAPER_AT_Z4,
    PAPER_TEXT,
    assert_invariants,
    mentions_before_definition,
    written_edges,
)
from penman.models.amr import model

from paraamr import amr

SOURCE = f"# ::id paper-fig1\n# ::snt {PAPER_TEXT}\n{PAPER_AMR}"


def graph_part(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("#"))


def test_z3_is_the_papers_linearization_verbatim():
    out = amr.refocus(SOURCE, "z3", oneline=True)
    assert graph_part(out) == PAPER_AT_Z3
    assert_invariants(SOURCE, out, "z3")


def test_z4_has_the_papers_top_triples_and_written_roles():
    out = amr.refocus(SOURCE, "z4", oneline=True)
    expected = penman.decode(PAPER_AT_Z4, model=model)
    got = penman.decode(out, model=model)
    assert got.top == expected.top == "z4"
    assert sorted(got.triples) == sorted(expected.triples)
    assert written_edges(out) == written_edges(PAPER_AT_Z4)  # branch order may differ
    assert_invariants(SOURCE, out, "z4")


@pytest.mark.parametrize("oneline", [False, True])
def test_every_focus_keeps_the_invariants(oneline):
    foci = amr.candidate_foci(SOURCE, exclude=())
    assert foci == [f"z{i}" for i in range(2, 11)]
    for variant in amr.variants(SOURCE, exclude=(), oneline=oneline):
        assert_invariants(SOURCE, variant.penman, variant.focus)
        assert f"# ::snt {PAPER_TEXT}" in variant.penman.splitlines()


def test_reentrant_node_is_defined_at_its_first_mention_unlike_penman():
    # penman's reconfigure keeps (z4 / they) where the old triple order put it, after ":ARG0 z4"
    graph = penman.decode(PAPER_AMR, model=model)
    reconfigured = penman.format(penman.layout.reconfigure(graph, top="z10", model=model))
    assert mentions_before_definition(reconfigured) == ["z4"]
    out = amr.refocus(PAPER_AMR, "z10", oneline=True)
    assert mentions_before_definition(out) == []
    assert "(z4 / they)" in out and ":ARG0 z4)" in out
    assert_invariants(PAPER_AMR, out, "z10")


def test_indented_output_is_penmans_default_layout():
    out = amr.refocus(PAPER_AMR, "z3")
    assert out == "# ::focus z3\n" + penman.encode(penman.decode(PAPER_AT_Z3, model=model), model=model)
