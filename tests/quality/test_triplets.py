"""Triplet building: determinism, caps, ParaAMR positives, record readers and their errors."""

from __future__ import annotations

import json
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paraamr.errors import InputError
from paraamr.quality.triplets import Triplet, _in_turns, build_triplets, read_paraphrases, read_sentences
from paraamr.records import normalize

SENTENCES = [
    "John ate 5 apples in the park yesterday.",
    "The dog chased the cat.",
    "Mary gave John three books on Monday.",
    "The river is 40 miles long and very cold.",
]


@pytest.fixture(scope="module")
def triplets():
    return build_triplets(SENTENCES, seed=3, max_triplets=60)


def test_triplets_are_deterministic_and_seeded(triplets):
    assert triplets == build_triplets(SENTENCES, seed=3, max_triplets=60)
    assert triplets != build_triplets(SENTENCES, seed=4, max_triplets=60)


def test_triplets_are_well_formed(triplets):
    assert 0 < len(triplets) <= 60
    assert len(set(triplets)) == len(triplets)
    for t in triplets:
        assert t.anchor in SENTENCES
        assert normalize(t.negative) not in (normalize(t.anchor), normalize(t.positive))
    ops = {t.negative_op for t in triplets}
    assert {"number", "negation", "role_swap", "unit", "deletion"} <= ops


def test_more_rounds_give_more_triplets_until_the_cap():
    one = build_triplets(SENTENCES, seed=0, rounds=1)
    many = build_triplets(SENTENCES, seed=0, rounds=6)
    assert len(many) > len(one)
    assert len(build_triplets(SENTENCES, seed=0, max_triplets=7)) == 7


def test_no_negative_kind_dominates():
    """Kinds are taken in turns: a common kind gets no more than a rare one until the rare one runs out."""
    found = {
        k: [Triplet(f"{k}{i}", "p", "n", "typo", k) for i in range(n)]
        for k, n in {"a": 10, "b": 2, "c": 10}.items()
    }
    chosen = _in_turns(found, seed=0, total=12)
    assert Counter(t.negative_op for t in chosen) == {"a": 5, "b": 2, "c": 5}


def test_a_gate_judging_a_round_at_once_draws_what_an_operator_judging_each_output_draws():
    """The gate sees a round's positives in one call, yet the triplets are those of an operator that
    drops the same outputs as it draws them (one anchor at a time, the rng untouched by the gate):
    the anchors' random draws stay in order."""
    from paraamr.quality.gate import SimilarityGate
    from paraamr.quality.operators import POSITIVE

    def drop(name: str, text: str, out: str) -> bool:  # any rule of the texts
        return name == "synonym" and sum(map(ord, out)) % 2 == 1

    calls = []

    def gate(rows):
        calls.append(sum(drop(*row) for row in rows))
        return [not drop(*row) for row in rows]

    def one_by_one(text, rng):
        out = POSITIVE["synonym"](text, rng)
        return None if out is None or drop("synonym", text, out) else out

    batched = build_triplets(SENTENCES, seed=1, rounds=4, gate=gate)
    single = build_triplets(SENTENCES, seed=1, rounds=4, positives={**POSITIVE, "synonym": one_by_one})
    assert batched == single and any(t.positive_op == "synonym" for t in batched)
    assert 1 < len(calls) <= 4 and sum(calls)  # one call a round, and some outputs dropped
    assert not any(t.positive_op == "synonym" and drop("synonym", t.anchor, t.positive) for t in batched)
    assert SimilarityGate(lambda texts: None, 0.9)([("typo", "a", "b")]) == [True]  # not gated: no encode


def test_blank_and_repeated_sentences_are_skipped():
    ts = build_triplets(["", "  ", "The dog chased the cat.", "The dog chased the cat."], seed=0, rounds=1)
    assert {t.anchor for t in ts} == {"The dog chased the cat."}


def test_paraamr_paraphrases_become_positives():
    paras = {"The dog chased the cat.": ["The cat was pursued by the dog."]}
    ts = build_triplets(["The dog chased the cat."], seed=0, rounds=3, paraphrases=paras)
    assert any(t.positive_op == "paraamr" and t.positive == "The cat was pursued by the dog." for t in ts)


def test_read_paraphrases_from_jsonl_and_dataset_folder(tmp_path):
    row = {"id": "x", "text": "He left.", "paraphrases": [{"para_text": "He departed."}, {"para_text": ""}]}
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(row) + "\n\n" + json.dumps({"text": "Alone.", "paraphrases": []}) + "\n")
    assert read_paraphrases(path) == {"He left.": ["He departed."]}
    folder = tmp_path / "ds"
    (folder / "data" / "default").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([row]), folder / "data" / "default" / "train-00000.parquet")
    assert read_paraphrases(folder) == {"He left.": ["He departed."]}


def test_read_errors_name_the_place(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok", "paraphrases": []}\n{not json\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:2: not JSON"):
        read_paraphrases(bad)
    bad.write_text('{"paraphrases": []}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1: a row needs string 'text' field"):
        read_paraphrases(bad)
    with pytest.raises(InputError, match="no data/default"):
        read_paraphrases(tmp_path)
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"caf\xe9\n")
    with pytest.raises(InputError, match=r"latin\.txt: not valid UTF-8 at line 1 \(byte 0xe9 at offset 3\)"):
        list(read_sentences(latin))


def test_bad_utf8_is_placed_in_the_file_not_in_a_read_buffer(tmp_path):
    """The place of a bad byte past the first 8 KiB (before, quality score said "at byte 7217" of a
    byte at 31,793: the offset in Python's read buffer)."""
    from paraamr.quality.data import score_rows

    rows = [json.dumps({"text": f"The fox {i}.", "para_text": f"A fox {i}."}).encode() for i in range(600)]
    rows[500] = b'{"text": "caf\xe9", "para_text": "b"}'
    data = b"\n".join(rows) + b"\n"
    (tmp_path / "big.jsonl").write_bytes(data)
    at = data.index(b"\xe9")
    place = rf"big\.jsonl: not valid UTF-8 at line 501 \(byte 0xe9 at offset {at}\)"
    with pytest.raises(InputError, match=place):
        score_rows(str(tmp_path / "big.jsonl"))
