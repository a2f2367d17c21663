"""The n-gram LM: the same scores as nltk.lm's StupidBackoff (the independent reference), unseen
words at the frequency of a one-off unigram, save/load, training from a dataset column."""

from __future__ import annotations

import math
import random

import pytest
from datasets import Dataset
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.lm import StupidBackoff
from nltk.util import everygrams

from paraamr.augment.ngram import END, START, NgramLM, lm_tokens
from paraamr.errors import InputError

WORDS = [f"w{i}" for i in range(40)]


def corpus(seed: int = 0, lines: int = 300) -> list[str]:
    rng = random.Random(seed)
    return [
        " ".join(rng.choice(WORDS[: rng.randint(3, 40)]) for _ in range(rng.randint(1, 15)))
        for _ in range(lines)
    ]


def nltk_model(texts: list[str], alpha: float, order: int = 4) -> StupidBackoff:
    padded = [[START, *lm_tokens(t), END] for t in texts if lm_tokens(t)]
    ref = StupidBackoff(alpha=alpha, order=order)
    ref.fit(
        [list(everygrams(p, max_len=order)) for p in padded], vocabulary_text=[w for p in padded for w in p]
    )
    return ref


def nltk_logprob(ref: StupidBackoff, text: str, order: int = 4) -> float:
    p = [START, *lm_tokens(text), END]
    return sum(math.log(ref.score(p[i], p[max(0, i - order + 1) : i])) for i in range(1, len(p)))


TEXTS = corpus()
MODELS = {alpha: (NgramLM.train(TEXTS, alpha=alpha), nltk_model(TEXTS, alpha)) for alpha in (1.0, 0.4)}
sentences = st.lists(st.sampled_from(WORDS), min_size=0, max_size=20).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(sentences, st.sampled_from([1.0, 0.4]))
def test_scores_equal_nltk_stupid_backoff(text, alpha):
    mine, ref = MODELS[alpha]
    assert mine.logprob(text) == pytest.approx(nltk_logprob(ref, text), rel=1e-12, abs=1e-12)
    tokens = [START, *lm_tokens(text), END]
    for i in range(1, len(tokens)):
        context = tokens[max(0, i - 3) : i]
        assert mine.score(tokens[i], context) == pytest.approx(ref.score(tokens[i], context), rel=1e-12)


def test_unseen_word_gets_one_off_unigram_frequency():
    lm = NgramLM.train(["a b", "a c"])  # N = 8 tokens with <START>/<END>
    assert lm.total == 8
    assert lm.score("zebra", ("a",)) == 1 / 8
    assert lm.score("b", ("a",)) == 1 / 2  # count(a b) / count(a)
    assert lm.score("b", ("zebra",)) == 1 / 8  # context unseen: unigram count(b) / N
    # <START> zebra <END>: zebra unseen (1/8), then <END> after "zebra" backs off to count(<END>) / N
    assert lm.logprob("zebra") == pytest.approx(math.log(1 / 8) + math.log(2 / 8))


def test_most_probable_is_the_fluent_order():
    lm = NgramLM.train(["the cat sat on the mat", "the dog sat on the rug", "a cat sat"])
    assert lm.logprob("the cat sat on the rug") > lm.logprob("rug the on sat cat the")


def test_save_load_round_trip(tmp_path):
    lm = MODELS[0.4][0]
    path = lm.save(tmp_path / "lm" / "model.parquet")
    again = NgramLM.load(path)
    assert (again.order, again.alpha, again.total, again.lines) == (lm.order, lm.alpha, lm.total, lm.lines)
    assert again.counts == lm.counts
    assert again.signature() == lm.signature()
    for text in TEXTS[:20]:
        assert again.logprob(text) == lm.logprob(text)


def test_load_rejects_other_files(tmp_path):
    bad = tmp_path / "x.parquet"
    bad.write_text("not parquet")
    with pytest.raises(InputError, match=r"x\.parquet"):
        NgramLM.load(bad)


@pytest.mark.parametrize(
    "meta",
    [
        b"[1]",
        b"{}",
        b'{"order": "x", "alpha": 1.0, "total": 3, "lines": 1}',
        b'{"order": 0, "alpha": 1.0, "total": 3, "lines": 1}',
    ],
)
def test_load_names_a_file_whose_metadata_is_no_lm(tmp_path, meta):
    import pyarrow.parquet as pq

    path = MODELS[0.4][0].save(tmp_path / "model.parquet")
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({b"paraamr.ngram": meta}), path)
    with pytest.raises(InputError, match=r"model\.parquet: not an n-gram LM saved by paraamr"):
        NgramLM.load(path)
    with pytest.raises(InputError, match=r"other\.parquet: no such file$"):  # was 'not an n-gram LM'
        NgramLM.load(tmp_path / "other.parquet")


def test_train_from_a_dataset_column_and_update_invalidates_table():
    data = Dataset.from_dict({"text": ["the cat sat", "", "the cat ran"]})
    lm = NgramLM.train(data["text"])
    assert lm.lines == 2 and lm.score("cat", ("<START>", "the")) == 1.0
    before = lm.logprob("the dog sat")
    lm.update(["the dog sat"])
    assert lm.logprob("the dog sat") > before


def test_untrained_model_refuses_to_score():
    with pytest.raises(ValueError, match="no counts"):
        NgramLM().logprob("a")


def test_a_corpus_file_starting_with_a_byte_order_mark_reads_as_without(tmp_path):
    """An LM corpus file saved with a UTF-8 BOM gives its first line without it (a '\\ufeffThe'
    token before)."""
    from paraamr.augment.ngram import read_corpus

    (tmp_path / "a.txt").write_bytes(b"\xef\xbb\xbfThe cat sat .\nA dog ran .\n")
    assert list(read_corpus(tmp_path)) == ["The cat sat .", "A dog ran ."]


def test_an_lm_of_no_counts_is_never_saved_and_one_saved_before_is_refused_by_name(tmp_path):
    """An LM trained on blank lines was saved with --save-lm (installed, it broke every later
    reda-ng run with an internal error naming no file)."""
    import json

    import pyarrow.parquet as pq

    from paraamr.errors import InputError

    empty = NgramLM.train(["", "  "])
    with pytest.raises(ValueError, match="no counts"):
        empty.save(tmp_path / "lm.parquet")
    good = NgramLM.train(["The cat sat ."]).save(tmp_path / "good.parquet")
    table = pq.read_table(good)  # as an earlier version saved an LM of no counts
    meta = json.loads(table.schema.metadata[b"paraamr.ngram"]) | {"total": 0, "lines": 0}
    old = table.replace_schema_metadata({b"paraamr.ngram": json.dumps(meta)})
    pq.write_table(old, tmp_path / "old.parquet")
    with pytest.raises(InputError, match=r"old.parquet: an n-gram LM with no counts"):
        NgramLM.load(tmp_path / "old.parquet")
