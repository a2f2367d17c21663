"""Property tests (hypothesis) on generated connected graphs with re-entrancies, inverted roles
and attributes: every re-rooted variant keeps the invariants of issue 2."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import penman
from amr_checks import assert_invariants, mentions_before_definition
from amr_graphs import random_penman, random_triples
from hypothesis import given, settings
from hypothesis import strategies as st
from penman.models.amr import model

from paraamr import amr
from paraamr.amr import reading, rerooting

SETTINGS = settings(max_examples=40, deadline=None)
graphs = st.builds(
    random_penman,
    st.randoms(use_true_random=False),
    st.integers(1, 18),
    reentrancies=st.integers(0, 5),
    attributes=st.integers(0, 4),
    local=st.booleans(),
)


@SETTINGS
@given(graphs, st.booleans(), st.booleans())
def test_every_variant_keeps_the_invariants(text, oneline, mod_as_domain):
    variants = amr.variants(text, exclude=(), oneline=oneline, mod_as_domain=mod_as_domain)
    graph = penman.decode(text, model=model)
    assert len(variants) == len(graph.variables()) - 1
    for variant in variants:
        assert_invariants(text, variant.penman, variant.focus, mod_as_domain=mod_as_domain)
    assert amr.variants(text, exclude=(), oneline=oneline, mod_as_domain=mod_as_domain) == variants


@settings(max_examples=150, deadline=None)
@given(graphs, st.booleans(), st.booleans())
def test_reused_subtree_texts_change_nothing(text, oneline, mod_as_domain):
    """variants() reuses subtree texts across foci; a fresh refocus() per focus reuses none."""
    options = {"oneline": oneline, "mod_as_domain": mod_as_domain}
    together = amr.variants(text, exclude=(), **options)
    assert [v.penman for v in together] == [amr.refocus(text, v.focus, **options) for v in together]
    for foci in (sorted(penman.decode(text, model=model).variables()), [v.focus for v in reversed(together)]):
        index = rerooting._writer(text, "paraamr", "<graph>")  # other orders of rendering on one index
        assert [index.render(v, **options) for v in foci] == [amr.refocus(text, v, **options) for v in foci]


@SETTINGS
@given(graphs)
def test_rerooting_at_the_top_is_penmans_layout(text):
    graph = penman.decode(text, model=model)
    out = amr.refocus(text, graph.top)
    assert_invariants(text, out, graph.top)
    if not mentions_before_definition(penman.encode(graph, model=model)):
        graph.metadata["focus"] = graph.top
        assert out == penman.encode(graph, model=model)


@SETTINGS
@given(st.randoms(use_true_random=False), st.integers(2, 15), st.integers(0, 4))
def test_graph_objects_without_layout(rng, nodes, reentrancies):
    triples, top = random_triples(rng, nodes, reentrancies=reentrancies)
    graph = penman.Graph(triples, top=top)
    for variant in amr.variants(graph, exclude=()):
        assert_invariants(graph, variant.penman, variant.focus)


@SETTINGS
@given(graphs, st.integers(0, 6), st.integers(0, 3))
def test_random_foci_are_a_reproducible_subset(text, k, seed):
    every = amr.candidate_foci(text)
    chosen = amr.candidate_foci(text, foci=k, seed=seed)
    assert chosen == amr.candidate_foci(text, foci=k, seed=seed)
    assert len(chosen) == min(k, len(every))
    assert chosen == [v for v in every if v in chosen]
    concepts = dict((s, t) for s, _, t in penman.decode(text, model=model).instances())
    assert not {concepts[v] for v in every} & amr.DEFAULT_EXCLUDED


def test_same_output_in_another_process():
    """Outputs depend on nothing but the input and the seed (not on hash randomization)."""
    texts = [random_penman(random.Random(i), 12, reentrancies=3) for i in range(5)]
    script = (
        "import sys, json; from paraamr import amr; "
        "texts = json.load(sys.stdin); "
        "print(json.dumps([[v.penman for v in amr.variants(t, foci=4, seed=7)] for t in texts]))"
    )
    expected = [[v.penman for v in amr.variants(t, foci=4, seed=7)] for t in texts]
    for hashseed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        run = subprocess.run([sys.executable, "-c", script], input=json.dumps(texts), env=env,
                             capture_output=True, text=True, check=True)  # fmt: skip
        assert json.loads(run.stdout) == expected


@given(graphs, st.sampled_from(["", "# ::id g1\n", "# ::id a ::date 2023\n# ::snt Hi :: there.\n"]))
def test_fast_tree_reader_equals_penmans_parse(text, header):
    text = header + text
    tree = reading._fast_tree(text)
    if tree is not None:  # None: penman reads it
        assert tree == penman.parse(text)
        assert tree.metadata == penman.parse(text).metadata
    assert amr.parse(text) == penman.parse(text)


def test_fast_tree_reader_leaves_the_rest_to_penman():
    for text in ["(a / b~e.1)", "(a / b) (c / d)", "(a / b :ARG0)", "(a / )", "(a / b # c\n)", '(a / "x)']:
        assert reading._fast_tree(text) is None
    assert reading._fast_tree('(a / b :op1 "New York" :ARG0 (c / d))') == penman.parse(
        '(a / b :op1 "New York" :ARG0 (c / d))'
    )
