"""REDA as the paper ran it: the recipe of outputs per operator by training-set size, RM over 2-4
operators, and the n-gram LM of REDA+NG trained on an independent corpus (given, or installed)
rather than on the texts it augments."""

from __future__ import annotations

import gzip
import json

import pytest
from huggingface_hub import DatasetCard

from paraamr.augment.ngram import IN_SAMPLE, NgramLM, installed_lm, read_corpus
from paraamr.augment.reda import PAPER_DRAWS, REDA, paper_draws, paper_recipe
from paraamr.cli import main
from paraamr.errors import InputError
from paraamr.records import normalize

TABLE = {w: (w.upper() + "X",) for w in ("quick", "brown", "fox", "jumps", "lazy", "dog", "over")}
TEXT = "the quick brown fox jumps over the lazy dog near the river bank today"


def _reda(**kwargs) -> REDA:
    return REDA(synonyms=lambda w: TABLE.get(w.lower(), ()), seed=3, **kwargs)


@pytest.mark.parametrize(
    ("rows", "each"), [(5_000, (2, 2, 1, 1, 1)), (49_999, (2, 2, 1, 1, 1)), (50_000, (1,) * 5)]
)
def test_paper_recipe_by_training_set_size(rows, each):
    assert tuple(paper_recipe(rows).values()) == each
    assert list(paper_recipe(rows)) == ["SR", "RS", "RI", "RD", "RM"]


def test_quota_takes_each_operators_first_outputs_in_the_papers_order():
    """Each operator gives its quota, the first distinct outputs of its own pool (draw order);
    an output another operator already gave does not count."""
    reda = _reda(draws=PAPER_DRAWS)
    quota = paper_recipe(5_000)
    pool = reda.pool(TEXT)
    expected, seen = [], {normalize(TEXT)}
    for op, k in quota.items():
        fresh = [c for c in pool[op] if normalize(c) not in seen][:k]
        seen.update(map(normalize, fresh))
        expected += fresh
    got = reda.augment(TEXT, 7, quota=quota)
    assert got == expected and len(got) == 7
    # REDA+NG: each operator's most probable outputs first
    lm = NgramLM.train([TEXT, "the dog sat near the river"])
    ranked = reda.augment(TEXT, 7, lm=lm, quota=quota)
    best_sr = max(pool["SR"], key=lambda c: lm.logprob(c))
    assert ranked[0] == best_sr and len(ranked) == 7


def test_paper_draws_follow_the_edit_count():
    """20/50/100 draws for 1/2/3 edits (the paper's code), 50 a further edit, capped; RM 50."""
    assert [paper_draws("RS", k) for k in (1, 2, 3, 4, 5)] == [20, 50, 100, 200, 200]
    reda = _reda(draws=PAPER_DRAWS)  # TEXT has 14 tokens: RS makes round(2.8) = 3 swaps, 100 draws
    assert reda.signature()["draws"] == "paper"
    small = _reda(draws=20)
    assert len(reda.pool(TEXT)["RS"]) > len(small.pool(TEXT)["RS"]) == 20


class CountingREDA(REDA):
    """REDA that records how many operators each RM draw applied."""

    def __init__(self, **kwargs) -> None:
        super().__init__(synonyms=lambda w: TABLE.get(w.lower(), ()), seed=1, **kwargs)
        self.applied: list[int] = []
        self._inside = 0

    def mix(self, tokens, rng):
        self._inside = 0
        out = super().mix(tokens, rng)
        self.applied.append(self._inside)
        return out

    def _apply(self, op, tokens, n, rng):
        self._inside += 1
        return super()._apply(op, tokens, n, rng)


def test_mix_two_to_four_applies_that_many_operators():
    two, wide = CountingREDA(), CountingREDA(mix=(2, 4))
    for reda in (two, wide):
        reda.pool(TEXT, draws=200)
    assert set(two.applied) == {2}
    assert set(wide.applied) == {2, 3, 4}  # drawn uniformly: each seen in 200 draws
    assert str(wide.signature()).endswith("|mix:2-4") and "mix" not in str(two.signature())
    with pytest.raises(ValueError, match="mix"):
        REDA(mix=(1, 3))


def test_lm_records_its_source_and_keeps_it_saved(tmp_path):
    lm = NgramLM.train(["a b c"], source="corpus:news.txt")
    assert lm.signature().endswith("|train:corpus:news.txt")
    again = NgramLM.load(lm.save(tmp_path / "lm.parquet"))
    assert again.source == "corpus:news.txt" and again.signature() == lm.signature()


def test_read_corpus_streams_files_of_a_folder_and_names_bad_bytes(tmp_path):
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("one two\nthree\n", encoding="utf-8")
    (folder / "sub" / "b.gz").write_bytes(gzip.compress(b"four five\r\n"))
    (folder / ".hidden").write_text("never\n")
    assert list(read_corpus(folder)) == ["one two", "three", "four five"]
    (folder / "c.txt").write_bytes(b"ok\nbad \xff\n")
    with pytest.raises(InputError, match=r"c.txt, line 2: not valid UTF-8"):
        list(read_corpus(folder))
    with pytest.raises(InputError, match="no such file or folder"):
        list(read_corpus(tmp_path / "nope"))


ROWS = [
    {"sentence": "the quick brown fox jumps over the lazy dog near the river", "label": 1},
    {"sentence": "a lazy dog sleeps in the warm sun by the old brown barn", "label": 0},
]


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def _lm_line(out) -> str:
    return next(line for line in (out / "README.md").read_text().splitlines() if "Language model" in line)


def test_command_lm_corpus_installed_lm_and_in_sample(tmp_path, data, capsys, monkeypatch):
    monkeypatch.setenv("PARAAMR_CACHE", str(tmp_path / "cache"))
    base = ["augment", "--dataset", str(data), "--method", "reda-ng", "--n", "2"]
    # nothing given or installed: in-sample, said on stderr and in the card
    assert main([*base, "--output", str(tmp_path / "a")]) == 0
    assert "in-sample" in capsys.readouterr().err
    assert "|train:in-sample" in _lm_line(tmp_path / "a") and "|lines:2|" in _lm_line(tmp_path / "a")
    # an independent corpus
    corpus = tmp_path / "news.txt"
    corpus.write_text("the dog ran over the hill\nthe fox sat\nrivers run to the sea\n", encoding="utf-8")
    installed = installed_lm(REDA().tokenizer)
    assert installed == tmp_path / "cache" / "ngram" / "whitespace.parquet"
    argv = [*base, "--output", str(tmp_path / "b"), "--lm-corpus", str(corpus), "--save-lm", str(installed)]
    assert main(argv) == 0
    assert "trained on " + str(corpus) in capsys.readouterr().err
    assert "|lines:3|" in _lm_line(tmp_path / "b") and "|train:corpus:news.txt" in _lm_line(tmp_path / "b")
    # installed (saved there above): the default now
    assert main([*base, "--output", str(tmp_path / "c")]) == 0
    assert "(installed)" in capsys.readouterr().err
    assert _lm_line(tmp_path / "c") == _lm_line(tmp_path / "b")
    # the corpus LM ranks differently from the in-sample one: other rows for the same seed
    rows = [(tmp_path / x / "data" / "default").glob("*.parquet") for x in "ab"]
    import pyarrow.parquet as pq

    a, b = ([pq.read_table(p).column("sentence").to_pylist() for p in files] for files in rows)
    assert a != b


def test_command_recipe_paper(tmp_path, data, capsys):
    out = tmp_path / "out"
    argv = ["augment", "--dataset", str(data), "--method", "reda", "--recipe", "paper", "--output", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "recipe paper: 2 SR + 2 RS + 1 RI + 1 RD + 1 RM" in printed
    card = DatasetCard.load(out / "README.md").text
    assert "|draws:paper|" in card and "|recipe:paper" in card
    # before: 'up to 2 new version(s)' and '--n 2', --n's default, which --recipe refuses
    assert "up to 7 new version(s)" in card and "--method reda --recipe paper`" in card
    import pyarrow.parquet as pq

    rows = pq.read_table(next((out / "data" / "default").glob("*.parquet"))).to_pylist()
    added = [r for r in rows if r["augmented"]]
    reda = REDA(seed=0, draws=PAPER_DRAWS)
    expected = [t for r in ROWS for t in reda.augment(r["sentence"], 7, quota=paper_recipe(2))]
    assert [r["sentence"] for r in added] == expected and len(expected) == 14
    assert main([*argv[:-1], str(tmp_path / "o2"), "--n", "3"]) == 2
    assert "not with --n" in capsys.readouterr().err
    assert main([*argv[:-1], str(tmp_path / "o3"), "--lm-corpus", "x.txt"]) == 2
    assert "--lm-corpus: only with --method reda-ng" in capsys.readouterr().err
    missing = ["augment", "--dataset", str(data), "--method", "reda-ng", "--output", str(tmp_path / "o4")]
    assert main([*missing, "--lm-corpus", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file or folder" in err
    assert not (tmp_path / "o4").exists()


def test_in_sample_is_the_signature_of_train_lm():
    from datasets import Dataset

    from paraamr.augment.runner import train_lm

    lm = train_lm([Dataset.from_dict({"t": ["a b"]})], ["t"])
    assert lm.source == IN_SAMPLE


def test_a_corpus_lm_keeps_no_segmentation_per_line():
    """Training on a corpus streams: jieba's segmentations of its lines are not kept (they are
    for the texts REDA edits), and the counts are those of the kept path."""
    from paraamr.augment.languages import tokenizer

    lines = ["苹果手机怎么截图", "今天天气很好", "我想买一部手机"]
    tok = tokenizer("jieba")
    streamed = NgramLM.train(iter(lines), tokenizer=tok, once=True)
    assert tok._texts == {}
    kept = NgramLM.train(lines, tokenizer=tokenizer("jieba"))
    assert streamed.counts == kept.counts and streamed.total == kept.total
