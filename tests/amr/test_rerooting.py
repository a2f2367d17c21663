"""Hand-written graphs: re-entrancies, inverted roles, :domain/:mod, attributes, metadata, cycles."""

from __future__ import annotations

import re

import penman
import pytest
from amr_checks import assert_invariants, mentions_before_definition, written_edges
from penman import surface
from penman.models.amr import model

from paraamr import amr
from paraamr.errors import AMRError
from paraamr.failures import Failure

GRAPHS = {
    "reentrancy": "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))",
    "inverted": "(s / see-01 :ARG0 (g / girl :ARG0-of (l / like-01 :ARG1 (d / dog))) :ARG1 d)",
    "mod-domain": "(h / happy :domain (b / boy :mod (l / little) :poss-of (t / toy :mod-of b)))",
    "consist-of": "(g / group :consist-of (p / person :ARG0-of (v / vote-01)) :subevent-of (e / elect-01))",
    "attributes": (
        '(c / city :wiki "New_York_City" :name (n / name :op1 "New" :op2 "York") :polarity - '
        ":quant 5 :time (d / date-entity :month 5 :day 3) :ARG1-of (v / visit-01 :mode imperative))"
    ),
    "triangle": "(a / alpha :ARG0 (b / beta :ARG1 (c / gamma)) :ARG2 c)",
    "two-cycles": (
        "(a / alpha :ARG0 (b / beta :ARG1 (c / gamma :ARG2 (d / delta :ARG0 a))) "
        ":ARG1-of (e / eps :ARG0 c :mod b))"
    ),
    "self-loop": "(a / alpha :ARG0 a :ARG1 (b / beta))",
    "reference-first": "(a / alpha :ARG0 c :ARG1 (b / beta :ARG2 (c / gamma)))",
    "no-concept": "(a :ARG0 (b / beta) :ARG1 (c))",
    "prep-and-op": "(a / and :op1 (x / run-01 :prep-with (y / dog)) :op2 (z / sleep-01 :ARG0 y))",
    "metadata": (
        "# ::id g7\n# ::date 2024-01-01\n# ::snt The boy wants to go.\n# ::tok The boy wants to go .\n"
        "# ::flag\n# ::focus w\n(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"
    ),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("oneline", [False, True])
def test_every_focus_keeps_the_invariants(name, oneline):
    text = GRAPHS[name]
    graph = penman.decode(text, model=model)
    variants = amr.variants(text, exclude=(), oneline=oneline)
    order = dict.fromkeys(s for s, _, _ in graph.triples)
    assert [v.focus for v in variants] == [v for v in order if v != graph.top]
    for variant in variants:
        assert variant.concept == (dict((s, t) for s, r, t in graph.instances()).get(variant.focus) or "")
        assert_invariants(text, variant.penman, variant.focus)
    # re-rooting at the current top gives back penman's own layout of the source, unless the
    # source mentions a node before defining it: then the definition moves to the first mention
    same = amr.refocus(text, graph.top, oneline=oneline)
    assert_invariants(text, same, graph.top)
    graph.metadata["focus"] = graph.top
    if mentions_before_definition(text):
        assert name == "reference-first"
    else:
        assert same == penman.encode(graph, model=model, indent=None if oneline else -1)


def test_inverted_edges_are_written_through_the_amr_model():
    out = amr.refocus(GRAPHS["consist-of"], "p", oneline=True)
    assert written_edges(out)["p", ":consist-of-of", "g"] == 1  # :consist-of is a role, not an inverse
    assert written_edges(amr.refocus(GRAPHS["inverted"], "l", oneline=True))["l", ":ARG0", "g"] == 1
    out = amr.refocus(GRAPHS["consist-of"], "e", oneline=True)
    assert written_edges(out)["e", ":subevent", "g"] == 1


def test_mod_is_inverted_as_mod_of_by_default_and_as_domain_on_request():
    text = GRAPHS["mod-domain"]
    plain = amr.refocus(text, "l", oneline=True)
    assert written_edges(plain)["l", ":mod-of", "b"] == 1
    assert written_edges(plain)["b", ":domain-of", "h"] == 1
    swapped = amr.refocus(text, "l", oneline=True, mod_as_domain=True)
    assert written_edges(swapped)["l", ":domain", "b"] == 1
    assert written_edges(swapped)["b", ":mod", "h"] == 1
    assert_invariants(text, swapped, "l", mod_as_domain=True)
    # penman reads :domain as another role: the triples are not the same any more
    triples = penman.decode(text, model=model).triples
    assert sorted(penman.decode(swapped, model=model).triples) != sorted(triples)


def test_attributes_stay_with_their_node():
    out = amr.refocus(GRAPHS["attributes"], "d", oneline=True)
    edges = written_edges(out)
    assert edges["d", ":month", "5"] == edges["c", ":polarity", "-"] == edges["v", ":mode", "imperative"] == 1
    assert edges["n", ":op1", '"New"'] == edges["c", ":wiki", '"New_York_City"'] == 1


def test_metadata_is_kept_and_focus_replaced():
    out = amr.refocus(GRAPHS["metadata"], "g")
    lines = out.splitlines()
    assert lines[:6] == [
        "# ::id g7",
        "# ::date 2024-01-01",
        "# ::snt The boy wants to go.",
        "# ::tok The boy wants to go .",
        "# ::flag",
        "# ::focus g",
    ]
    assert amr.refocus(out, "b").count("# ::focus") == 1


def test_surface_alignments_are_kept():
    text = "(w / want-01~e.2 :ARG0~e.1 (b / boy~e.0) :ARG1 (g / go-02~e.4 :ARG0 b))"
    out = amr.refocus(text, "b", oneline=True)
    assert out.endswith("(b / boy~e.0 :ARG0-of~e.1 (w / want-01~e.2 :ARG1 (g / go-02~e.4 :ARG0 b)))")
    assert_invariants(text, out, "b")
    assert [v.concept for v in amr.variants(text)] == ["boy", "go-02"]
    assert amr.candidate_foci(text, exclude={"boy"}) == ["g"]
    for kind in (surface.alignments, surface.role_alignments):
        expected = {t: str(a) for t, a in kind(penman.decode(text, model=model)).items()}
        assert {t: str(a) for t, a in kind(penman.decode(out, model=model)).items()} == expected != {}


def test_graph_objects_without_layout_are_laid_out_by_penman():
    graph = penman.Graph(
        [("a", ":instance", "x"), ("b", ":ARG0", "a"), ("b", ":instance", "y"), ("a", ":mod", "c"),
         ("c", ":instance", "z"), ("c", ":ARG1", "b")],
        top="a",
    )  # fmt: skip
    for variant in amr.variants(graph, exclude=()):
        assert_invariants(graph, variant.penman, variant.focus)


def test_graph_objects_and_text_give_the_same_variants():
    for text in GRAPHS.values():
        assert amr.variants(penman.decode(text, model=model)) == amr.variants(text)
        assert amr.variants(amr.decode(text)) == amr.variants(text)


def test_decoded_graph_edited_afterwards_is_laid_out_again():
    graph = amr.decode("# ::snt Hi.\n(w / want-01 :ARG0 (b / boy))")
    graph.metadata["id"] = "new-id"  # metadata edits are seen too
    assert (
        amr.refocus(graph, "b", oneline=True)
        == "# ::snt Hi.\n# ::id new-id\n# ::focus b\n(b / boy :ARG0-of (w / want-01))"
    )
    graph.triples.append(("b", ":mod", "w"))
    out = amr.refocus(graph, "b", oneline=True)
    assert_invariants(graph, out, "b")
    graph.triples.pop()
    graph.top = "b"
    assert amr.refocus(graph, "w", oneline=True).endswith("(w / want-01 :ARG0 (b / boy))")


def test_deterministic_and_long_chains():
    chain = "(a / x" + "".join(f" :ARG0 (b{i} / y :ARG1-of (c{i} / z))" for i in range(150)) + ")"
    first = amr.variants(chain)
    assert first == amr.variants(chain)
    assert len(first) == 300
    assert_invariants(chain, first[-1].penman, first[-1].focus)


# --- candidate foci ---------------------------------------------------------------------------


def test_default_exclusions_and_configurable_exclusions():
    text = '(a / and :op1 (r / run-01 :ARG0 (p / person :name (n / name :op1 "Al"))) :op2 (s / sleep-01))'
    text = text.replace("(s / sleep-01)", "(s / sleep-01 :ARG0 p)")
    assert amr.candidate_foci(text) == ["r", "p", "s"]
    assert amr.candidate_foci(text, exclude=()) == ["r", "p", "n", "s"]
    assert amr.candidate_foci(text, exclude={"person", "run-01"}) == ["n", "s"]
    assert {"name", "and", "multi-sentence", "amr-unknown", "or"} == amr.DEFAULT_EXCLUDED
    assert [v.focus for v in amr.variants(text, exclude={"sleep-01"})] == ["r", "p", "n"]


def _amrlib_candidates(text):
    """amrlib's scripts/41_Model_Generate_T5wtense/30_Paraphrasing_Example.py heuristic."""
    graph = penman.decode(text, model=model)
    tops = [v for v in dict.fromkeys(s for s, _, _ in graph.triples) if v != graph.top]
    return [v for v in tops if not [e for e in graph.edges() if e.target == v]]


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_heuristic_matches_amrlib(name):
    assert amr.candidate_foci(GRAPHS[name], exclude=(), heuristic=True) == _amrlib_candidates(GRAPHS[name])


def test_random_foci_are_seeded_and_reproducible():
    text = "(a / x" + "".join(f" :ARG{i % 3} (b{i} / y{i})" for i in range(12)) + ")"
    every = amr.candidate_foci(text)
    picks = {tuple(amr.candidate_foci(text, foci=4, seed=seed)) for seed in range(20)}
    assert len(picks) > 10
    for pick in picks:
        assert len(pick) == 4 and list(pick) == [v for v in every if v in pick]
    assert amr.candidate_foci(text, foci=4, seed=3) == amr.candidate_foci(text, foci=4, seed=3)
    assert amr.candidate_foci(text, foci=0) == []
    assert amr.candidate_foci(text, foci=50) == every
    with pytest.raises(ValueError, match="foci"):
        amr.candidate_foci(text, foci=-1)
    with pytest.raises(ValueError, match="foci"):
        amr.candidate_foci(text, foci="some")


def test_random_foci_depend_on_the_graph_not_only_the_seed():
    picks = set()
    for concept in ("y", "w", "v", "u", "t", "s"):
        text = "(a / x" + "".join(f" :ARG{i % 3} (b{i} / {concept}{i})" for i in range(12)) + ")"
        picks.add(tuple(amr.candidate_foci(text, foci=3, seed=0)))
    assert len(picks) > 1


# --- reading and errors -----------------------------------------------------------------------


def test_read_graphs_splits_blocks():
    lines = ["# AMR release; corpus: test\r\n", "\r\n", "# ::id a\n", "(x / xx\n", "   :ARG0 (y / yy))\n",
             "\n", "\n", "   \n", "# ::id b\n", "\n", "(z / zz)"]  # fmt: skip
    assert list(amr.read_graphs(lines)) == [(1, "# ::id a\n(x / xx\n   :ARG0 (y / yy))"), (2, "# ::id b"),
                                            (3, "(z / zz)")]  # fmt: skip
    assert list(amr.read_graphs("(a / b)\n\n(c / d)\n")) == [(1, "(a / b)"), (2, "(c / d)")]
    assert list(amr.read_graphs([])) == []


def test_read_graphs_parts_graphs_as_penman_does():
    """A comment after a finished graph and before more PENMAN starts a graph, and a lone carriage
    return ends a line, as penman reads a file: before, only a blank line parted graphs (the two
    graphs were one block) and a CR-only file was one line."""
    text = "(x / xx)\n# ::id b\n(y / yy) # ::id not b\n# c\n(z / zz\n# in z\n:ARG0 (w / ww))\n# after z"
    want = [(1, "(x / xx)"), (2, "# ::id b\n(y / yy) # ::id not b"),
            (3, "# c\n(z / zz\n# in z\n:ARG0 (w / ww))\n# after z")]  # fmt: skip
    assert list(amr.read_graphs(text)) == want
    assert list(amr.read_graphs([text.replace("\n", "\r")])) == want
    assert list(amr.read_graphs(["(x / xx)\r\r", "(y / yy)\r\n"])) == [(1, "(x / xx)"), (2, "(y / yy)")]


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("hello", "not valid PENMAN: Expected: LPAREN"),
        ("(a / b :ARG0 (c / d)", "not valid PENMAN: Unexpected end of input"),
        ("", "empty graph"),
        ("# ::id x\n# ::snt Hi.", "empty graph"),
        ("(a / b)\n(c / d)", "more than one graph"),
        ("(a / b :ARG0 (a / c))", "variable a is defined more than once"),
        ("(a / b :ARG0 ())", r"empty node \(\) in the graph"),
        ("(a / (b / c))", "not valid PENMAN: Expected: ROLE"),
        ("(a / alpha :instance beta :ARG0 (b / b1))", "variable a has two concepts, alpha and beta"),
        ("(b / bark-01 :ARG0-of-of (d / dog))", "role :ARG0-of-of is inverted twice"),
    ],
)
def test_bad_text_raises_amr_error_naming_graph_and_cause(text, cause):
    with pytest.raises(AMRError, match=cause) as raised:
        amr.decode(text, where="graph 4")
    assert str(raised.value).startswith("graph 4")
    out = amr.refocus_batch(["(o / ok :ARG0 (k / fine))", text, "(o / ok :ARG1 (k / fine))"])
    assert [len(x) for x in (out[0], out[2])] == [1, 1]
    assert isinstance(out[1], Failure) and out[1].stage == "refocus"
    assert out[1].reason.startswith(("graph 2: ", "graph 2 (id x): "))
    assert re.search(cause, out[1].reason)


def test_a_comment_after_the_graph_is_a_comment():
    """penman's reader fails on a comment after a graph on its line ("Unexpected end of input"), though
    PENMAN allows a comment anywhere between tokens; before, such a graph was refused."""
    text = "# ::id c1\n(r / run-01 :ARG0 (d / dog)) # the dog runs\n# a last note"
    assert amr.decode(text) == amr.decode("# ::id c1\n(r / run-01 :ARG0 (d / dog))")
    assert [v.focus for v in amr.variants(text)] == ["d"]
    with pytest.raises(AMRError, match=r"text after the graph: '\)\) extra'"):
        amr.decode("(r / run-01))) extra # two")


def test_the_alignment_of_a_re_entrancy_stays_where_it_is_written():
    """``:ARG0 b~e.5`` lost its ``~e.5`` at every focus, the source's own top too (penman keeps it)."""
    text = "(w / want-01~e.2 :ARG0 (b / boy~e.1) :ARG1 (g / go-02~e.4 :ARG0 b~e.5))"
    source = surface.alignments(penman.decode(text, model=model))
    for focus in "wbg":
        ours = amr.refocus(text, focus, oneline=True)
        assert ":ARG0 b~e.5" in ours
        assert surface.alignments(penman.decode(ours, model=model)) == source
        assert ours == amr.refocus(text, focus, oneline=True, linearization="penman")


def test_a_hash_inside_a_symbol_is_the_symbol_s_for_the_size_caps():
    """penman reads ``root#1`` as one symbol; the caps took the ``#`` for a comment and counted none
    of the rest of its line."""
    deep = "(r / root#1 :ARG0 (a / b :ARG0 (c / d :ARG0 (e / f))))"
    with pytest.raises(AMRError, match="nested more than 2 deep"):
        amr.check_size(deep, max_depth=2)
    amr.check_size('(r / root :name (n / name :op1 "#((((")) # ((((', max_depth=2)  # a string, a comment


def test_other_unicode_spaces_are_read_as_penman_reads_them():
    """penman parts tokens at ASCII whitespace only: the fast reader took a no-break space for one,
    so ``linearization="penman"`` was not penman's own text."""
    text = "(a / alpha\u00a0:ARG0 (b / beta))"
    ours = amr.refocus(text, "b", linearization="penman").split("\n", 1)[1]
    assert ours == penman.encode(penman.decode(text, model=model), top="b", model=model)


def test_errors_name_the_graph_id():
    with pytest.raises(AMRError, match=r"^graph q9: not valid PENMAN"):
        amr.decode("# ::id q9\n(a / b :ARG0")
    [failure] = amr.refocus_batch(["# ::id q9\n(a / b :ARG0 (a / c))"])
    assert failure.reason == "graph 1 (id q9): variable a is defined more than once"


def test_focus_must_be_a_variable():
    text = GRAPHS["attributes"]
    for focus in ("zz", '"New"', "5", "-"):
        with pytest.raises(AMRError, match=f"focus '{focus}' is not a variable"):
            amr.refocus(text, focus)


def test_disconnected_and_empty_graph_objects():
    triples = [("a", ":instance", "x"), ("b", ":instance", "y")]
    disconnected = penman.Graph(triples, top="a", metadata={"id": "d1"})
    with pytest.raises(AMRError, match=r"^graph d1: cannot lay out the graph \(possibly disconnected"):
        amr.variants(disconnected)
    with pytest.raises(AMRError, match="empty graph"):
        amr.refocus(penman.Graph(), "a")
    out = amr.refocus_batch([disconnected, GRAPHS["triangle"]])
    assert isinstance(out[0], Failure) and out[0].reason.startswith("graph 1 (id d1): cannot lay out")
    assert len(out[1]) == 2


@pytest.mark.parametrize(
    ("node", "part"),
    [
        (None, "node None"),
        ("a", "node 'a'"),
        ((1, [("/", "x")]), r"node \(1, "),
        (("a", None), r"node \('a', None\)"),
        (("a", [("x",)]), r"branch \('x',\)"),
        (("a", [(3, "x")]), r"branch \(3, 'x'\)"),
        (("a", [("/", 5)]), r"branch \('/', 5\)"),
        (("a", [("/", "x"), (":ARG0", ["b"])]), r"branch \(':ARG0', \['b'\]\)"),
        (("a", [(":ARG0", ("b", [(":ARG1", ("c", [("/", 7)]))]))]), r"branch \('/', 7\)"),
    ],
)
@pytest.mark.parametrize("linearization", ["paraamr", "penman"])
def test_a_hand_built_tree_of_the_wrong_shape_is_an_amr_error(node, part, linearization):
    """A ``penman.Tree`` built by hand, not by penman's parse: an AMRError naming the part (these
    raised Python's own ValueError / TypeError inside the re-rooting before)."""
    tree = penman.Tree(node, metadata={"id": "h1"})
    with pytest.raises(AMRError, match=f"^graph h1: not a penman tree: {part}"):
        amr.refocus(tree, "a", linearization=linearization)
    good = penman.Tree(("a", [("/", "x"), (":ARG0", ("b", [("/", "y")]))]))
    [failure, ok] = amr.refocus_batch([tree, good], linearization=linearization)
    assert isinstance(failure, Failure) and re.search(f"not a penman tree: {part}", failure.reason)
    assert [v.focus for v in ok] == ["b"]


@pytest.mark.parametrize("linearization", ["paraamr", "penman"])
def test_a_hand_built_graph_with_a_variable_that_is_not_text_is_an_amr_error(linearization):
    graph = penman.Graph([(1, ":instance", "x"), (1, ":ARG0", "b"), ("b", ":instance", "y")], top=1)
    with pytest.raises(AMRError, match=r"^<graph>: not a penman tree: node \(1, "):
        amr.variants(graph, linearization=linearization)
    for focus in (1, "b"):
        with pytest.raises(AMRError, match=r"^<graph>: not a penman tree: node \(1, "):
            amr.refocus(graph, focus, linearization=linearization)


def test_too_deep_is_an_error_not_a_crash():
    deep = "(a / x" + "".join(f" :ARG0 (b{i} / y" for i in range(3000)) + ")" * 3001
    [failure] = amr.refocus_batch([deep])  # refused by the size caps, before penman reads it
    assert failure.reason == "graph 1: nested more than 100 deep (--max-amr-depth 100)"
    with pytest.raises(amr.AMRError, match="graph too deep"):  # caps lifted: Python's stack
        amr.decode(deep, max_nodes=None, max_depth=None)


def test_an_item_that_is_no_graph_is_named_not_an_attribute_error():
    """None, bytes or a list where a graph goes: an AMRError naming what came (before:
    AttributeError 'NoneType' object has no attribute 'triples'), and in a batch a failure row,
    the other graphs going on."""
    from paraamr.amr.rerooting import refocus_batch

    for item in (None, b"(b / boy)", ["(b / boy)"]):
        expected = f"a PENMAN string, penman.Graph or penman.Tree, not {type(item).__name__}"
        with pytest.raises(AMRError, match=re.escape(expected)):
            amr.variants(item)
    out = refocus_batch(["(w / want-01 :ARG0 (b / boy))", None])
    assert len(out[0]) == 1 and out[1].stage == "refocus" and "graph 2:" in out[1].reason
