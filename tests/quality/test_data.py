"""The shipped data: held-out sets A, B and C, the natural pairs and the recorded set-C split."""

from __future__ import annotations

from collections import Counter

import pytest

from paraamr.quality.data import (
    HELDOUT_SETS,
    SET_C,
    TRAINING_FILES,
    heldout,
    natural_pairs,
    set_c_sources,
    split_sources,
)
from paraamr.quality.triplets import read_sentences
from paraamr.records import normalize


def texts(rows) -> set[str]:
    return {normalize(r[f]) for r in rows for f in ("text", "para_text")}


@pytest.mark.parametrize("name", sorted(HELDOUT_SETS))
def test_heldout_set_is_large_balanced_and_disjoint_from_training(name):
    rows = heldout(name)
    assert len(rows) >= 200
    assert {r["label"] for r in rows} == {0, 1}
    assert len({(r["text"], r["para_text"]) for r in rows}) == len(rows)
    held = texts(rows)
    for path, least in zip(TRAINING_FILES, (250, 5000), strict=True):
        training = {normalize(s) for s in read_sentences(path)}
        assert len(training) >= least
        assert not training & held, f"set {name} shares sentences with {path}"


@pytest.mark.parametrize("name", ["A", "B"])
def test_everyday_sets_have_every_kind(name):
    rows = heldout(name)
    assert abs(sum(r["label"] for r in rows) - len(rows) / 2) <= len(rows) * 0.1
    bad = Counter(r["kind"] for r in rows if r["label"] == 0)
    good = Counter(r["kind"] for r in rows if r["label"] == 1)
    kinds = {"role", "scramble", "antonym", "date_time", "unit", "noun", "number", "negation", "entity"}
    assert set(bad) == kinds and min(bad.values()) >= 7
    assert set(good) == {"paraphrase", "typo", "surface", "contraction", "number_format"}
    assert good["paraphrase"] >= 50 and good["typo"] >= 10


def test_heldout_sets_and_natural_training_pairs_share_no_sentence():
    a, b, c = (texts(heldout(name)) for name in "ABC")
    train = texts(natural_pairs("train"))
    assert not a & b and not a & c and not b & c
    assert not train & (a | b), "a natural training pair is in set A or B"
    # set C and the training part share no source (a source is in one part only)
    assert not {r["text"] for r in heldout("C")} & {r["text"] for r in natural_pairs("train")}


def test_natural_pairs_are_two_valid_and_one_invalid_per_source():
    rows = natural_pairs()
    by_source = Counter((r["text"], r["label"]) for r in rows)
    sources = {r["text"] for r in rows}
    assert len(rows) == 1401 and len(sources) == 467
    assert all(by_source[s, 1] == 2 and by_source[s, 0] == 1 for s in sources)


def test_set_c_is_the_recorded_stratified_quarter():
    """The file lists what split_sources draws; each kind of invalid pair gives a quarter of its
    sources (counted here from the file: role_swap 137 -> 34, shuffle 116 -> 29, ...)."""
    rows = natural_pairs()
    held = set_c_sources()
    assert sorted(held) == split_sources(rows)
    assert len(held) == round(467 / 4)
    per_kind = Counter(r["kind"] for r in rows if r["label"] == 0)
    in_c = Counter(r["kind"] for r in rows if r["label"] == 0 and r["text"] in held)
    assert in_c == {kind: round(n / 4) for kind, n in per_kind.items()}
    assert in_c["role_swap"] == 34 and in_c["shuffle"] == 29
    c = heldout("C")
    assert {r["text"] for r in c} == held and len(c) == 3 * len(held)
    assert len(natural_pairs("train")) + len(c) == len(rows)
    assert SET_C.read_text().startswith("# Set C")


def test_files_with_a_byte_order_mark_read_as_without(tmp_path):
    """Sentences and labelled pairs saved with a UTF-8 BOM (Notepad, Excel): no BOM in the first
    sentence, and the pairs' header is still their header."""
    from paraamr.quality.data import read_pairs
    from paraamr.quality.triplets import read_sentences

    sentences = tmp_path / "s.txt"
    sentences.write_bytes(b"\xef\xbb\xbfThe boy left.\nA cat sat.\n")
    assert list(read_sentences(sentences)) == ["The boy left.", "A cat sat."]
    pairs = tmp_path / "p.tsv"
    rows = "source\tcandidate\tlabel\tkind\nThe boy left.\tThe boy went away.\t1\tsynonym\n"
    pairs.write_bytes(b"\xef\xbb\xbf" + rows.encode())
    assert [r["text"] for r in read_pairs(pairs)] == ["The boy left."]
