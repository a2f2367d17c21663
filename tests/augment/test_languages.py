"""Languages as plug-ins (issue 32): jieba tokens joined without spaces, Cilin synonyms, a user's
synonym file with its bad lines named, the LM cutting texts as REDA does, and Chinese question
pairs (LCQMC's ``text_a``, ``text_b``, ``label``) through ``paraamr augment --language zh``."""

from __future__ import annotations

import json
from collections import Counter

import jieba
import pytest
from datasets import load_dataset
from huggingface_hub import DatasetCard

from paraamr.augment.languages import LANGUAGES, Jieba, Whitespace, setup, tokenizer
from paraamr.augment.ngram import NgramLM
from paraamr.augment.reda import REDA
from paraamr.augment.synonyms import cilin, read_synonyms
from paraamr.cli import main
from paraamr.errors import InputError
from paraamr.records import normalize

#: LCQMC-shaped pairs (written for this test): question pairs, 1 when they ask the same thing.
PAIRS = [
    ("苹果手机怎么截图？", "iPhone怎么截屏？", 1),
    ("怎样才能快速减肥？", "怎么减肥最快？", 1),
    ("哪里可以买到便宜的机票？", "去哪里买机票比较便宜？", 1),
    ("手机没电了怎么办？", "手机充不进电怎么办？", 0),
    ("这个游戏好玩吗？", "这部电影好看吗？", 0),
    ("学习英语有什么好方法？", "怎样才能学好英语？", 1),
    ("北京今天的天气怎么样？", "上海明天会下雨吗？", 0),
    ("为什么我的电脑开机很慢？", "电脑开机速度慢怎么解决？", 1),
]


@pytest.fixture
def pairs_tsv(tmp_path):
    path = tmp_path / "lcqmc.tsv"
    lines = ["text_a\ttext_b\tlabel", *(f"{a}\t{b}\t{label}" for a, b, label in PAIRS)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jieba_tokens_and_chinese_joining():
    tok = tokenizer("jieba")
    assert tok.split("手机没电了 怎么办？") == jieba.lcut("手机没电了怎么办？")  # spaces are not tokens
    assert tok.join(["手机", "没电", "了", "？"]) == "手机没电了？"  # no spaces between Chinese words
    assert tok.join(["买", "iPhone", "6", "还是", "iPad", "？"]) == "买iPhone 6还是iPad？"
    assert tok.join(tok.split("苹果手机怎么截图？")) == "苹果手机怎么截图？"
    # the LM's tokens: normalized (NFKC makes the full-width question mark ASCII)
    assert tok.lm_tokens("苹果手机怎么截图？") == ["苹果", "手机", "怎么", "截图", "?"]


def test_cilin_gives_the_other_words_of_its_synonym_groups():
    # facts read from the cilin package's data/cilin_tree.json by hand: Aa01A02= is
    # 人类 生人 全人类; 妇孺 is only in a group of related words (Aa01C06#), 众学生 only in an
    # independent one (Aa01C05@)
    source = cilin()
    assert {"生人", "全人类"} <= set(source("人类")) and "人类" not in source("人类")
    assert source("妇孺") == source("众学生") == source("不是一个词") == ()
    assert source.name.startswith("cilin-")


def test_setup_and_languages():
    assert set(LANGUAGES) == {"en", "zh"}
    tok, source = setup("en")
    assert isinstance(tok, Whitespace) and source.name == "wordnet-3.0+eda-stop"
    tok, source = setup("zh")
    assert isinstance(tok, Jieba) and tok.name.startswith("jieba-") and source.name.startswith("cilin-")
    with pytest.raises(ValueError, match="unknown tokenizer 'spacy'"):
        setup("en", "spacy")


def test_user_synonym_files(tmp_path):
    text = tmp_path / "syn.txt"
    text.write_text("# my words\n快速\t迅速\t飞快\n\n手机 移动电话 大哥大\n快速 急速\nBig\tlarge\thuge one\n")
    source = read_synonyms(text)
    assert source("快速") == ("迅速", "飞快", "急速")  # a word on two lines: both lines' synonyms
    assert source("手机") == ("移动电话", "大哥大")
    assert source("big") == () and source("Big") == ("large", "huge one")  # tabs: spaces kept
    assert source.name.startswith("file:syn.txt:") and len(source.name.rsplit(":", 1)[1]) == 12
    table = tmp_path / "syn.json"
    table.write_text(json.dumps({"快速": ["迅速"], "big": ["large", "big"]}, ensure_ascii=False))
    assert read_synonyms(table)("快速") == ("迅速",) and read_synonyms(table)("BIG") == ("large",)


def test_bad_synonym_lines_are_named_by_number(tmp_path):
    text = tmp_path / "bad.txt"
    text.write_text("快速\t迅速\n好\n\n快\t\t迅速\n手机 电话\n")
    with pytest.raises(InputError) as err:
        read_synonyms(text)
    message = str(err.value)
    assert message.startswith(f"{text}: 2 bad synonym line(s): ")
    assert "line 2: a word without synonyms ('好')" in message and "line 4: empty field" in message
    table = tmp_path / "bad.json"
    table.write_text('{\n  "快速": ["迅速"],\n  "坏": "糟"\n}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"1 bad synonym line\(s\): line 3: '坏' needs a list"):
        read_synonyms(table)
    table.write_text('{"快速": ["迅速"],\n "坏": }', encoding="utf-8")
    with pytest.raises(InputError, match=r"not valid JSON \(line 2, column 7"):
        read_synonyms(table)
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(InputError, match="no synonyms"):
        read_synonyms(tmp_path / "empty.txt")


def test_lm_cuts_texts_with_the_runs_tokenizer(tmp_path):
    texts = [a for a, _, _ in PAIRS]
    lm = NgramLM.train(texts, tokenizer=Jieba())
    assert "|tok:jieba-" in lm.signature() and lm.lines == len(texts)
    assert lm.counts[("手机",)] == 2  # a jieba word counted as one token
    assert lm.total == sum(len(jieba.lcut(t)) + 2 for t in texts)
    again = NgramLM.load(lm.save(tmp_path / "lm.parquet"))
    assert again.signature() == lm.signature() and again.logprob(texts[0]) == lm.logprob(texts[0])
    reda = REDA(synonyms=cilin(), tokenizer=Jieba())
    with pytest.raises(ValueError, match="n-gram LM tokenizes with normalize\\+split, REDA with jieba"):
        reda.augment(texts[0], 2, lm=NgramLM.train(texts))


def test_python_api_trains_its_default_lm_with_redas_tokenizer():
    """``augment(..., method="reda-ng")`` without ``lm=``: the LM it trains counts jieba words, so
    Chinese REDA+NG runs from Python as from the command (it refused a whitespace LM before)."""
    from datasets import Dataset

    from paraamr.augment.runner import augment

    data = Dataset.from_dict({"text_a": [a for a, _, _ in PAIRS], "text_b": [b for _, b, _ in PAIRS]})
    reda = REDA(synonyms=cilin(), tokenizer=Jieba())
    result = augment(data, method="reda-ng", n=2, reda=reda, columns=["text_a", "text_b"])
    assert result.stats["added_rows"] > 0


def _allowed_characters(text: str, source) -> set[str]:
    """The characters an edit of ``text`` may hold: its own and those of its words' synonyms."""
    allowed = set(text)
    for word in jieba.lcut(text):
        allowed.update(*source(word))
    return allowed


def test_chinese_pairs_end_to_end(tmp_path, pairs_tsv, capsys, monkeypatch):
    calls = Counter()
    lcut = jieba.lcut
    monkeypatch.setattr(jieba, "lcut", lambda text, *a, **k: calls.update([text]) or lcut(text, *a, **k))
    out = tmp_path / "out"
    argv = ["augment", "--language", "zh", "--method", "reda-ng", "--dataset", str(pairs_tsv), "--n", "3"]
    assert main([*argv, "--output", str(out), "--save-lm", str(tmp_path / "lm.parquet")]) == 0
    texts = {t for a, b, _ in PAIRS for t in (a, b)}
    assert all(calls[text] == 1 for text in texts)  # the whole input segmented once per run
    train = load_dataset(str(out))["train"]
    rows = list(train)
    originals = [r for r in rows if not r["augmented"]]
    assert [(r["text_a"], r["text_b"], r["label"]) for r in originals] == PAIRS
    added = [r for r in rows if r["augmented"]]
    assert len(added) > 2 * len(PAIRS)
    source = cilin()
    for row in added:
        a, b, label = PAIRS[row["source_index"]]
        assert row["label"] == label
        # crossed as REDA does: one side new, the other the input's (never both new)
        assert (row["text_a"] == a) != (row["text_b"] == b)
        new, old = (row["text_a"], a) if row["text_b"] == b else (row["text_b"], b)
        assert " " not in new or "iPhone" in new  # Chinese joined without spaces
        assert set(new) <= _allowed_characters(old, source)  # jieba tokens edited with Cilin words
    keys = [(normalize(r["text_a"]), normalize(r["text_b"])) for r in rows]
    assert len(keys) == len(set(keys))  # no duplicate, and never an input row again
    assert any(set(r["text_a"] + r["text_b"]) - set("".join(texts)) for r in added)  # synonyms used
    card = DatasetCard.load(out / "README.md")
    assert card.data.language == ["zh"]
    assert "- Method: `reda-ng|tok:jieba-" in card.text and "|syn:cilin-" in card.text
    assert "|tok:jieba-" in card.text.split("- Language model: ")[1]
    # the LM saved by this run fits a zh run; a whitespace run refuses it, naming the file
    argv = [*argv, "--lm", str(tmp_path / "lm.parquet"), "--output", str(tmp_path / "again")]
    assert main(argv) == 0
    capsys.readouterr()
    assert main([*argv[:-1], str(tmp_path / "again2"), "--tokenizer", "whitespace"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"paraamr augment: {tmp_path / 'lm.parquet'}: this n-gram LM tokenizes with jieba")
    assert len(err.splitlines()) == 1


def test_user_synonyms_through_the_command(tmp_path, pairs_tsv, capsys):
    syn = tmp_path / "my_synonyms.txt"
    syn.write_text("手机\t电话机\n减肥\t瘦身\n便宜\t实惠\n好玩\t有趣\n英语\t英文\n", encoding="utf-8")
    out = tmp_path / "out"
    argv = ["augment", "--language", "zh", "--method", "reda", "--dataset", str(pairs_tsv), "--n", "4"]
    assert main([*argv, "--synonyms", str(syn), "--output", str(out)]) == 0
    added = [r for r in load_dataset(str(out))["train"] if r["augmented"]]
    new_texts = [r["text_a"] if r["text_a"] != PAIRS[r["source_index"]][0] else r["text_b"] for r in added]
    assert any("瘦身" in t or "实惠" in t or "电话机" in t for t in new_texts)
    allowed = set("".join(t for a, b, _ in PAIRS for t in (a, b))) | set("电话机瘦身实惠有趣英文")
    assert all(set(t) <= allowed for t in new_texts)  # only the file's synonyms, no Cilin
    assert "|syn:file:my_synonyms.txt:" in (out / "README.md").read_text(encoding="utf-8")
    syn.write_text("手机\t电话机\n减肥\n\n便宜\t\t实惠\n", encoding="utf-8")
    capsys.readouterr()
    assert main([*argv, "--synonyms", str(syn), "--output", str(tmp_path / "bad")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"paraamr augment: {syn}: 2 bad synonym line(s): line 2: a word without synonyms")
    assert "line 4: empty field" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "bad").exists()


def test_options_only_for_reda(tmp_path, pairs_tsv, capsys):
    base = ["augment", "--dataset", str(pairs_tsv), "--method", "paraamr", "--paraphrases", str(pairs_tsv)]
    assert main([*base, "--language", "zh"]) == 2
    assert "--language zh: only with --method reda or reda-ng" in capsys.readouterr().err
    assert main([*base, "--tokenizer", "jieba"]) == 2
    assert "--tokenizer, --synonyms: only with --method reda or reda-ng" in capsys.readouterr().err


def test_a_chinese_text_with_spaces_never_comes_back_without_them():
    """jieba drops the spaces and the tokens are joined without them: a swap back or an insert and a
    delete that restore the tokens gave the input without its spaces, as a new version of it."""
    tok, source = setup("zh")
    texts = ["怎样 才能 快速 减肥 呢", "我 想 买 一部 手机", "今天 天气 很好 我们 去 公园 散步 吧"]
    for seed in range(4):
        reda = REDA(seed=seed, tokenizer=tok, synonyms=source)
        for text in texts:
            outputs = [o for pool in reda.pool(text).values() for o in pool] + reda.augment(text, 7)
            assert text.replace(" ", "") not in outputs, (seed, text)
