"""``paraamr export simcse|scpn``: the paper's uses as CSV files that ``load_dataset("csv")`` reads,
at the paper's thresholds, streamed, from a release file, a folder or a Hub dataset (the loopback
Hub of tests/support/hubserver.py), with deterministic negatives and clear refusals."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
from datasets import load_dataset

from paraamr.cli import main
from paraamr.exports import SIMCSE_COLUMNS, Row, linearize, scpn_rows, simcse_rows, write_csv
from paraamr.metrics.parsers import CallableParser
from paraamr.metrics.trees import read_tree
from paraamr.records import normalize

RELEASE = Path(__file__).parent / "dataset" / "data" / "release_sample.jsonl"
RECORDS = [json.loads(line) for line in RELEASE.read_text(encoding="utf-8").splitlines()]


def _pairs(threshold: float | None) -> list[tuple[str, str]]:
    """The (source, paraphrase) pairs of the release sample at a threshold, read here directly."""
    return [
        (r["text"], p["para_text"])
        for r in RECORDS
        for p in r["paraphrases"]
        if threshold is None or (p["perplexity"] is not None and p["perplexity"] <= threshold)
    ]


def _csv(path: Path) -> list[dict]:
    return list(load_dataset("csv", data_files=str(path), split="train"))


@pytest.fixture
def release(tmp_path):
    return Path(shutil.copy(RELEASE, tmp_path / "release.jsonl"))


def test_simcse_keeps_the_threshold_and_draws_negatives_from_other_sources(release, tmp_path, capsys):
    out = tmp_path / "simcse.csv"
    assert main(["export", "simcse", str(release), str(out)]) == 0
    assert "wrote 7 rows" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8").splitlines()[0] == "sent0,sent1,hard_neg"
    rows = _csv(out)
    assert [(r["sent0"], r["sent1"]) for r in rows] == _pairs(110) and len(rows) == 7
    sources = {r["text"] for r in RECORDS}
    for row in rows:
        assert row["hard_neg"] in sources
        assert normalize(row["hard_neg"]) not in {normalize(row["sent0"]), normalize(row["sent1"])}
    # the same seed gives the same file; another seed other negatives
    again = tmp_path / "again.csv"
    assert main(["export", "simcse", str(release), str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()
    twice = tmp_path / "twice.csv"  # a split named twice is read once (before: every row twice)
    assert main(["export", "simcse", str(release), str(twice), "--split", "train", "--split", "train"]) == 0
    assert twice.read_bytes() == out.read_bytes()
    other = tmp_path / "other.csv"
    assert main(["export", "simcse", str(release), str(other), "--seed", "1"]) == 0
    assert [r["hard_neg"] for r in _csv(other)] != [r["hard_neg"] for r in rows]
    # other thresholds
    assert main(["export", "simcse", str(release), str(out), "--overwrite", "--max-perplexity", "85"]) == 0
    assert [(r["sent0"], r["sent1"]) for r in _csv(out)] == _pairs(85)


def test_skip_invalid_writes_the_other_lines_and_counts_the_bad_ones(tmp_path, capsys):
    """One malformed line stopped the whole export (convert and stats had --skip-invalid)."""
    lines = RELEASE.read_text(encoding="utf-8").splitlines()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join([*lines[:2], "{bad", *lines[2:]]) + "\n", encoding="utf-8")
    out = tmp_path / "simcse.csv"
    assert main(["export", "simcse", str(mixed), str(out)]) == 1 and not out.exists()
    capsys.readouterr()
    assert main(["export", "simcse", str(mixed), str(out), "--skip-invalid"]) == 0
    assert f"skipped 1 invalid line; first: {mixed}, line 3: not JSON" in capsys.readouterr().err
    assert [(r["sent0"], r["sent1"]) for r in _csv(out)] == _pairs(110)


def test_scpn_writes_the_paraphrase_parse_without_words(release, tmp_path, capsys):
    out = tmp_path / "scpn.csv"
    assert main(["export", "scpn", str(release), str(out), "--parser", "link-grammar:no-pos"]) == 0
    assert "wrote 4 rows" in capsys.readouterr().out
    rows = _csv(out)
    assert list(rows[0]) == ["source", "target_parse", "paraphrase"]
    assert [(r["source"], r["paraphrase"]) for r in rows] == _pairs(85)
    for row in rows:
        tree = read_tree(row["target_parse"])
        assert tree.labels[0] == "ROOT" and linearize(tree) == row["target_parse"]
        words = {w.strip("().,").lower() for w in row["paraphrase"].split()} - {""}
        assert not words & set(row["target_parse"].replace("(", " ").replace(")", " ").lower().split())


def test_scpn_rows_with_a_parser_and_its_failures(tmp_path):
    def parse(sentence: str) -> str:
        if "fail" in sentence:
            raise RuntimeError("no parse")
        return f"(ROOT (S (NP (NN {sentence.split()[0]})) (VP (VBZ is))))"

    records = [
        ("r1", {"text": "a", "paraphrases": [{"para_text": "cats sleep", "perplexity": 10.0}]}),
        ("r2", {"text": "b", "paraphrases": [{"para_text": "please fail", "perplexity": 20.0},
                                             {"para_text": "dogs run", "perplexity": 90.0}]}),
    ]  # fmt: skip
    failures: list[dict] = []
    rows = scpn_rows(records, CallableParser(parse, name="t"), max_perplexity=85, batch_size=1)
    assert (
        write_csv(rows, tmp_path / "o.csv", ("source", "target_parse", "paraphrase"), failures=failures) == 1
    )
    assert _csv(tmp_path / "o.csv") == [
        {"source": "a", "target_parse": "(ROOT (S (NP (NN)) (VP (VBZ))))", "paraphrase": "cats sleep"}
    ]
    assert [(f["where"], f["stage"]) for f in failures] == [("r2, paraphrase 1", "parse")]
    assert "no parse" in failures[0]["reason"] and "r2" not in failures[0]["reason"]  # (said once)


def test_rows_are_streamed_and_memory_stays_flat():
    """An endless input gives its first rows; parses are kept one batch at a time."""
    read = itertools.count()

    def endless():
        for i in read:
            yield (
                f"r{i}",
                {"text": f"source {i}", "paraphrases": [{"para_text": f"para {i}", "perplexity": 1.0}]},
            )

    rows = list(itertools.islice(simcse_rows(endless(), pool_size=8, ahead=5), 20))
    assert [r.values[:2] for r in rows] == [(f"source {i}", f"para {i}") for i in range(20)]
    assert next(read) <= 20 + 5 + 1000  # ahead by 5 records and the filter's batch of 1,000: not to the end
    assert len({r.values[2] for r in rows}) > 5  # negatives from the whole (sampled) pool
    parser = CallableParser(lambda s: "(ROOT (NN x))", name="t")
    scpn = list(itertools.islice(scpn_rows(endless(), parser, batch_size=4), 10))
    assert len(scpn) == 10 and len(parser._cache) == 0  # forgotten after each batch


def test_a_value_csv_reads_as_missing_is_a_failure_not_a_null(tmp_path):
    texts = [
        ("NA", "not available"),
        ("He left.", "He went away."),
        ('She\nstayed, "yes".', "She did not go."),
    ]
    records = [
        (f"r{i}", {"text": t, "paraphrases": [{"para_text": p, "perplexity": 1.0}]})
        for i, (t, p) in enumerate(texts, start=1)
    ]
    failures: list[dict] = []
    written = write_csv(
        simcse_rows(records), tmp_path / "s.csv", ("sent0", "sent1", "hard_neg"), failures=failures
    )
    rows = _csv(tmp_path / "s.csv")
    assert written == len(rows) == 2 and all(None not in r.values() for r in rows)
    assert rows[1]["sent0"] == 'She\nstayed, "yes".'  # quoted, read back exactly
    assert [(f["where"], f["stage"]) for f in failures] == [("r1, paraphrase 1", "csv")]


def test_a_lone_carriage_return_is_quoted_and_reads_back_whole(tmp_path):
    """Before: csv quotes only the writer's line end ("\\n"), so a text with a lone "\\r" went
    out bare: "wrote 2 rows", and every CSV reader read 4, the text cut in two."""
    import csv

    records = [
        ("r1", {"text": "First\rline.", "paraphrases": [{"para_text": "A para.", "perplexity": 1.0}]}),
        ("r2", {"text": "Second.", "paraphrases": [{"para_text": "B\r", "perplexity": 1.0}]}),
    ]
    path = tmp_path / "s.csv"
    assert write_csv(simcse_rows(records), path, SIMCSE_COLUMNS, failures=[]) == 2
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    assert [r[:2] for r in rows] == [["First\rline.", "A para."], ["Second.", "B\r"]]
    assert [list(r.values())[:2] for r in _csv(path)] == [r[:2] for r in rows]


def test_a_pool_of_mostly_one_source_still_gives_each_pair_the_other(tmp_path):
    """Before: 64 random draws, then the pair was a failure ("no other source to draw a negative
    from"): 149 of 201 pairs, while one other source was in the pool every time."""
    def record(text: str, para: str) -> dict:
        return {"text": text, "paraphrases": [{"para_text": para, "perplexity": 1.0}]}

    same = [(f"r{i}", record("Same source.", f"Para {i}.")) for i in range(200)]
    rows = list(simcse_rows([*same, ("x", record("Other source.", "Other para."))]))
    assert all(r.values is not None for r in rows)
    assert [r.values[2] for r in rows] == ["Other source."] * 200 + ["Same source."]


def test_an_empty_field_is_a_csv_failure_with_its_reason(tmp_path):
    records = [
        ("r1", {"text": "He left.", "paraphrases": [{"para_text": "", "perplexity": 1.0}]}),
        ("r2", {"text": "She stayed.", "paraphrases": [{"para_text": "She did not go.", "perplexity": 1.0}]}),
        ("r3", {"text": "A b.", "paraphrases": [{"para_text": "B a.", "perplexity": 1.0}]}),
    ]
    failures: list[dict] = []
    write_csv(simcse_rows(records), tmp_path / "s.csv", ("sent0", "sent1", "hard_neg"), failures=failures)
    assert [(f["where"], f["stage"], f["reason"]) for f in failures] == [
        ("r1, paraphrase 1", "csv", "'' reads back as a missing value")
    ]
    # a None from the API is written as an empty field too: a failure, not a row that reads back missing
    rows = [Row("r4", "a", "b", values=("a", None, "c")), Row("r5", "d", "e", values=("d", "e", "f"))]
    assert write_csv(rows, tmp_path / "n.csv", ("sent0", "sent1", "hard_neg"), failures=failures) == 1
    assert failures[-1]["reason"] == "None reads back as a missing value"
    assert [r["sent0"] for r in _csv(tmp_path / "n.csv")] == ["d"]


def test_rows_that_do_not_fit_the_header_are_refused_and_nothing_is_written(tmp_path):
    """Before: a row of fewer or more values than ``columns`` was written as it was, a CSV whose rows
    do not fit its header, without a word. Now a ValueError naming the row and the mismatch, the
    output as it was and no temporary file left; a header given as one string is refused too (its
    letters became the columns)."""
    out = tmp_path / "o.csv"
    out.write_text("mine\n")
    for values in (("a", "b"), ("a", "b", "c", "d"), "abc"):
        rows = [Row("r1", "a", "b", ("a", "b", "c")), Row("r2", "a", "b", values)]
        error = TypeError if isinstance(values, str) else ValueError
        with pytest.raises(error) as refused:
            write_csv(rows, out, SIMCSE_COLUMNS, failures=[])
        assert str(refused.value) == (
            "r2: values is one string; give a list of them (or any iterable)"
            if isinstance(values, str)
            else f"r2: {len(values)} values for the 3 columns sent0, sent1, hard_neg; nothing written"
        )
        assert out.read_text() == "mine\n" and list(tmp_path.iterdir()) == [out]
    with pytest.raises(TypeError, match=r"^columns is one string"):
        write_csv([Row("r1", "a", "b", ("a", "b", "c"))], out, "abc", failures=[])
    assert write_csv([Row("r1", "a", "b", ("a", "b", "c"))], out, SIMCSE_COLUMNS, failures=[]) == 1
    assert _csv(out) == [{"sent0": "a", "sent1": "b", "hard_neg": "c"}]


def test_output_is_never_replaced_without_overwrite_and_bad_input_is_one_line(release, tmp_path, capsys):
    out = tmp_path / "out.csv"
    out.write_text("mine\n")
    assert main(["export", "simcse", str(release), str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "exists (pass --overwrite" in err and out.read_text() == "mine\n"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok", "paraphrases": []}\n{"text": 3}\n')
    new = tmp_path / "new.csv"
    cases = [
        (["export", "simcse", str(bad), str(new)], "bad.jsonl, line 2"),
        (["export", "scpn", str(tmp_path / "missing.jsonl"), str(new)], "no such file or folder"),
        (["export", "simcse", "no-such-org/no-such-data", str(new)], "no-such-org/no-such-data"),
        (["export", "simcse", str(release), str(tmp_path)], "is a folder"),
        (["export", "simcse", str(release), str(release), "--overwrite"], "is the input"),
        (["export", "simcse", str(release), str(new), "--split", "test"], "no split test (splits: train)"),
    ]
    assert main(["export", "simcse", str(release), str(new), "--config", "pairs"]) == 2
    assert "--config pairs: only for a Hub dataset" in capsys.readouterr().err
    for argv, expected in cases:
        assert main(argv) == 1, argv
        lines = capsys.readouterr().err.splitlines()  # a progress line may come first, never an error
        assert [x for x in lines if x.startswith("paraamr export")] == lines[-1:] and expected in lines[-1], (
            lines
        )
        assert not new.exists() and not list(tmp_path.glob(".*tmp"))


@pytest.mark.slow
def test_from_a_hub_dataset_in_both_configs(release, tmp_path, hub, capsys):
    folder = tmp_path / "folder"
    assert main(["convert", str(release), str(folder)]) == 0
    hub.add_dataset_repo("org/paraamr-sample", folder)
    for config in ("default", "pairs"):
        out = tmp_path / f"{config}.csv"
        assert main(["export", "simcse", "org/paraamr-sample", str(out), "--config", config]) == 0
        assert [(r["sent0"], r["sent1"]) for r in _csv(out)] == _pairs(110)
    assert hub.requests("GET", "/datasets/org/paraamr-sample/resolve/")
    capsys.readouterr()
    assert main(["export", "simcse", "org/paraamr-sample", str(tmp_path / "x.csv"), "--config", "nope"]) == 1
    assert "org/paraamr-sample" in capsys.readouterr().err


def test_failures_go_to_their_file_and_a_clean_rerun_removes_it(release, tmp_path, capsys):
    long = {"text": "A long one.", "paraphrases": [{"para_text": "word " * 2000, "perplexity": 1.0}]}
    data = tmp_path / "with_long.jsonl"
    data.write_text(release.read_text(encoding="utf-8") + json.dumps(long) + "\n", encoding="utf-8")
    out = tmp_path / "scpn.csv"
    argv = ["export", "scpn", str(data), str(out), "--parser", "link-grammar:no-pos", "--no-progress"]
    assert main(argv) == 0
    failed = tmp_path / "scpn.csv.failures.jsonl"
    rows = [json.loads(line) for line in failed.read_text(encoding="utf-8").splitlines()]
    assert [(r["text"], r["stage"]) for r in rows] == [("A long one.", "parse")]
    assert "wrote 4 rows" in capsys.readouterr().out and len(_csv(out)) == 4
    assert main([*argv[:2], str(release), *argv[3:]]) == 1  # the failures file is output too
    assert main([*argv[:2], str(release), *argv[3:], "--overwrite"]) == 0
    assert not failed.exists() and len(_csv(out)) == 4


def test_one_split_name_is_a_split_and_pool_sizes_are_checked():
    """``splits="train"`` was read as the splits t, r, a, i, n; ``pool_size=0`` made every row a
    "no other source" failure."""
    from paraamr.exports import records

    assert sum(1 for _ in records(str(RELEASE), splits="train")) == sum(1 for _ in records(str(RELEASE)))
    for option, value in (("pool_size", 0), ("ahead", -1)):
        with pytest.raises(ValueError, match=f"^{option} must be an integer"):
            next(simcse_rows(records(str(RELEASE)), **{option: value}))
