"""Table 2 as the paper ran it: ``paraamr evaluate A B`` scores only the sources both corpora
share, one row each; ``--max-perplexity``; ParaNMT's and ParaBank's pair files; ``--preset paper``.

The rows of two corpora are checked against single-corpus runs (the chunked, resumable path) on
files holding only the shared sources' pairs: the same pairs must give the same values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paraamr.cli import main
from paraamr.commands.evaluate import build_parser, settings_from_args
from paraamr.metrics.report import read_pairs
from paraamr.metrics.settings import PAPER_SIMILARITY

MEASURES = ("semantic_similarity", "bleu_diversity", "jaccard_diversity", "ted3", "tedf")
#: Corpus A (a two-column file): sources 1-3; corpus B (release format, lowercased): sources 2-4.
A = [
    ("The cat sat on the mat.", "On the mat sat the cat."),
    ("The cat sat on the mat.", "The mat was where the cat sat."),
    ("He left early because he was tired.", "Because he was tired, he left early."),
    ("The meeting was postponed until Friday.", "They postponed the meeting until Friday."),
    ("The meeting was postponed until Friday.", "Until Friday, the meeting was postponed."),
]
B = {
    "he left early because he was tired.": [
        ("being tired, he left early.", 80.0),
        ("he was tired so he left.", 130.0),
    ],
    "the meeting was postponed until friday.": [("until friday the meeting was put off.", 95.0)],
    "prices rose sharply last year.": [("last year, prices rose sharply.", 70.0)],
}


def write_tsv(path: Path, pairs) -> Path:
    path.write_text("source\tparaphrase\n" + "".join(f"{s}\t{p}\n" for s, p in pairs), encoding="utf-8")
    return path


def write_release(path: Path, records: dict) -> Path:
    lines = [
        json.dumps({"text": t, "paraphrases": [{"para_text": p, "perplexity": x} for p, x in paras]})
        for t, paras in records.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_json(capsys, *args) -> dict:
    assert main(["evaluate", *map(str, args), "--json", "--no-progress", "--no-plots"]) == 0
    return json.loads(capsys.readouterr().out)


def check_row(row: dict, alone: dict) -> None:
    assert row["pairs"] == alone["pairs"]
    for key in MEASURES[1:]:
        assert row[key] == alone[key], key
    assert row["semantic_similarity"] == pytest.approx(alone["semantic_similarity"], abs=1e-4)


@pytest.mark.slow
def test_two_corpora_are_scored_on_their_shared_sources_only(capsys, tmp_path):
    a, b = write_tsv(tmp_path / "a.tsv", A), write_release(tmp_path / "b.jsonl", B)
    both = run_json(capsys, a, b)
    assert both["common_sources"] == 2
    row_a, row_b = both["corpora"]
    assert (row_a["input"], row_a["sources"], row_a["pairs"]) == (str(a), 2, 3)  # cat pairs left out
    assert (row_b["input"], row_b["sources"], row_b["pairs"]) == (str(b), 2, 3)  # prices left out
    assert row_a["selection"] == {"input_pairs": 5, "dropped": 0, "without_perplexity": 5}
    protocol = both["signatures"]["protocol"]
    assert protocol == "table2:not-paper|differs:similarity-model,parser|sources:common-of-2|max-ppl:none"
    assert both["signatures"]["ted"].startswith("convention:paper|")
    # the same pairs alone, through the single-corpus path, give the same row
    alone_a = run_json(capsys, write_tsv(tmp_path / "a2.tsv", A[2:]))
    shared_b = {k: v for k, v in B.items() if not k.startswith("prices")}
    alone_b = run_json(capsys, write_release(tmp_path / "b2.jsonl", shared_b))
    check_row(row_a, alone_a)
    check_row(row_b, alone_b)
    assert alone_a["signatures"]["protocol"].endswith("|sources:all|max-ppl:none")
    # the perplexity filter: B's paraphrase at 130 goes; the sources stay shared
    filtered = run_json(capsys, a, b, "--max-perplexity", "120")
    row_b = filtered["corpora"][1]
    assert row_b["pairs"] == 2 and row_b["selection"]["dropped"] == 1
    assert filtered["signatures"]["protocol"].endswith("|max-ppl:120")
    assert filtered["corpora"][0]["selection"]["without_perplexity"] == 5  # a pair file has none: kept
    alone_b = run_json(capsys, write_release(tmp_path / "b2.jsonl", shared_b), "--max-perplexity", "120")
    check_row(row_b, alone_b)
    # one input says what the filter left out as several do (before: the pair was gone, not a word)
    assert alone_b["selection"] == {"input_pairs": 3, "dropped": 1, "without_perplexity": 0}
    # a shared sample of sources: the same sources in each corpus
    sampled = run_json(capsys, a, b, "--sample", "1", "--seed", "3")
    assert sampled["common_sources"] == 1
    assert [row["sources"] for row in sampled["corpora"]] == [1, 1]
    # a sampled row says so (before: nothing told it from a row over every shared source)
    assert (sampled["sample"], sampled["seed"]) == (1, 3)
    assert sampled["signatures"]["protocol"].endswith("|max-ppl:none|sample:1-of-2-seed-3")
    every = run_json(capsys, a, b, "--sample", "50")
    assert "sample:" not in every["signatures"]["protocol"] and every["common_sources"] == 2
    # all the shared sources drawn: the rows keep their intervals, and no 'exceeds' (before: no
    # intervals, and '--sample 2 exceeds the 2 shared sources')
    assert all(row["intervals"] is not None for row in every["corpora"])
    assert main(["evaluate", str(a), str(b), "--sample", "2", "--json", "--no-progress", "--no-plots"]) == 0
    assert "exceeds" not in capsys.readouterr().err
    # a sample of several shared sources: each row with its intervals, as one input's (before: none)
    prices = ("Prices rose sharply last year.", "Last year prices rose a lot.")
    c = write_tsv(tmp_path / "c.tsv", [*A, prices])
    drawn = run_json(capsys, c, b, "--sample", "2", "--seed", "0")
    assert drawn["signatures"]["protocol"].endswith("|sample:2-of-3-seed-0")
    for row in drawn["corpora"]:
        assert row["sources"] == 2 and row["intervals"] is not None
        low, high = row["intervals"]["bleu_diversity"]
        assert low <= row["bleu_diversity"] <= high
    # the table shows them too, under each row (before: only --json had them)
    argv = ["evaluate", str(c), str(b), "--sample", "2", "--seed", "0", "--no-progress", "--no-plots"]
    assert main(argv) == 0
    table = capsys.readouterr().out.splitlines()
    ci = [i for i, line in enumerate(table) if line.startswith("| 95% CI | | | ")]
    assert [table[i - 1].split(" | ")[0] for i in ci] == [f"| {c}", f"| {b}"]
    low, high = drawn["corpora"][0]["intervals"]["bleu_diversity"]
    assert f" {low:.2f}–{high:.2f} " in table[ci[0]]
    assert table[-1].startswith("95% CI: cluster bootstrap over each corpus's pairs of the sources drawn")


def test_the_api_signature_records_the_filter_the_selection_applied(tmp_path):
    """Through the Python API the perplexity limit travels with the selection (``Shared``), so a
    row's protocol signature names the filter its pairs went through: it cannot be given apart."""
    from paraamr.metrics.scale import process_models
    from paraamr.metrics.table2 import evaluate_corpora, shared_pairs

    a = read_pairs(write_tsv(tmp_path / "a.tsv", A))
    b = read_pairs(write_release(tmp_path / "b.jsonl", B))
    shared = shared_pairs([("a", a), ("b", b)], max_perplexity=120)
    assert (shared.sources, shared.max_perplexity) == (2, 120)
    assert [len(pairs) for _, pairs, _ in shared.corpora] == [3, 2]  # b's 130 dropped
    settings = settings_from_args(build_parser().parse_args(["a", "--no-progress"]))
    parser, embedder = process_models(settings)()
    try:
        result = evaluate_corpora(shared, parser=parser, embedder=embedder)
    finally:
        parser.close()
    assert result["signatures"]["protocol"].endswith("|sources:common-of-2|max-ppl:120")
    assert [row["pairs"] for row in result["corpora"]] == [3, 2] and result["common_sources"] == 2


def test_several_corpora_refuse_single_corpus_options(capsys, tmp_path):
    a, b = write_tsv(tmp_path / "a.tsv", A), write_release(tmp_path / "b.jsonl", B)
    assert main(["evaluate", str(a), str(b), "--state-dir", str(tmp_path / "st")]) == 2
    assert "--state-dir takes one corpus" in capsys.readouterr().err
    c = write_tsv(tmp_path / "c.tsv", [("Prices rose sharply last year.", "Last year, prices rose.")])
    assert main(["evaluate", str(a), str(c), "--no-progress"]) == 1
    assert f"no source is in all 2 inputs ({a}, {c})" in capsys.readouterr().err


def test_paranmt_and_parabank_pair_files(tmp_path):
    paranmt = tmp_path / "para-nmt.txt"
    paranmt.write_text(
        "he left .\the went away .\t0.83\nit rains .\tit is raining .\t0.9\n", encoding="utf-8"
    )
    assert [(p.source, p.paraphrase) for p in read_pairs(paranmt)] == [
        ("he left .", "he went away ."),
        ("it rains .", "it is raining ."),
    ]
    parabank = tmp_path / "parabank.tsv"
    parabank.write_text("-0.5\tHe left.\tHe went away.\tHe departed.\n-0.7\tIt rains.\tIt is raining.\n")
    pairs = read_pairs(parabank)
    assert [(p.source, p.paraphrase) for p in pairs] == [
        ("He left.", "He went away."),
        ("He left.", "He departed."),
        ("It rains.", "It is raining."),
    ]
    assert pairs[1].where == f"{parabank}, line 1, paraphrase 2"
    parabank.write_text("-0.5\tHe left.\tHe went away.\nHe left.\tHe went.\n")
    with pytest.raises(Exception, match=r"line 2: expected a score, the source and 1 to 5 paraphrases"):
        read_pairs(parabank)


def test_preset_paper_sets_what_was_not_given():
    def parse(*argv: str):
        return settings_from_args(build_parser().parse_args(["a.tsv", *argv]))

    paper = parse("--preset", "paper")
    assert (paper.similarity_model, paper.ted_convention) == (PAPER_SIMILARITY, "paper")
    paper = parse("--preset", "paper", "--ted-convention", "aesop")
    assert (paper.similarity_model, paper.ted_convention) == (PAPER_SIMILARITY, "aesop")
    assert parse().similarity_model == "all-MiniLM-L6-v2"


@pytest.mark.slow
def test_preset_paper_offline_names_the_model_in_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache: the model is not on disk
    a = write_tsv(tmp_path / "a.tsv", A)
    assert main(["evaluate", str(a), "--preset", "paper", "--no-plots", "--no-progress"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and PAPER_SIMILARITY in err[0], err


def test_a_row_counts_the_sources_it_scored_and_every_pair_without_a_perplexity(capsys, tmp_path):
    """Before: a row counted a shared source none of whose pairs could be scored ("sources 2,
    pairs 1"); ``without_perplexity`` was 0 unless --max-perplexity was given; a ``|`` in a
    corpus's name split its cell; --plots was taken and did nothing."""
    a, b = tmp_path / "a|x.tsv", tmp_path / "b.tsv"
    a.write_text("The cat sat.\t\nI ran home.\tI went home.\n")  # its first shared pair: no paraphrase
    b.write_text("The cat sat.\tA cat sat.\nI ran home.\tHome I ran.\n")
    result = run_json(capsys, b, a)
    rows = {row["input"]: row for row in result["corpora"]}
    assert (rows[str(a)]["sources"], rows[str(a)]["pairs"]) == (1, 1) and rows[str(b)]["sources"] == 2
    assert [row["selection"]["without_perplexity"] for row in result["corpora"]] == [2, 2]
    assert main(["evaluate", str(b), str(a), "--no-progress", "--no-plots"]) == 0
    table = capsys.readouterr().out
    assert f"| {str(a).replace('|', chr(92) + '|')} | 1 | 1 |" in table
    assert main(["evaluate", str(b), str(a), "--plots", str(tmp_path / "p")]) == 2
    assert "--plots takes one corpus" in capsys.readouterr().err and not (tmp_path / "p").exists()


def test_a_corpus_with_no_pair_scored_is_no_row_and_exit_1(capsys, tmp_path):
    """As for one input, a row of nothing is no result (before: 'nan' in every column, exit 0)."""
    a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
    a.write_text("The cat sat.\t\nI ran home.\tI went home.\n")  # its shared pair has no paraphrase
    b.write_text("The cat sat.\tA cat sat.\n")
    assert main(["evaluate", str(b), str(a), "--no-progress", "--no-plots"]) == 1
    out = capsys.readouterr()
    assert out.out == ""  # no table either (before: printed whole, a row of n/a, then exit 1)
    assert out.err.splitlines()[-1] == (
        f"paraamr evaluate: {a}: no pair could be scored of the shared sources (the lines above say why)"
    )


def test_an_unreadable_corpus_among_several_is_named_alone(capsys, tmp_path):
    """Before: 'a.tsv, b.tsv: not valid UTF-8 ...', every input named for one file's bytes."""
    a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
    a.write_text("The cat sat.\tA cat sat.\n")
    b.write_bytes(b"The cat sat.\tA cat\x80 sat.\n")
    assert main(["evaluate", str(a), str(b), "--no-progress", "--no-plots"]) == 1
    assert capsys.readouterr().err == f"paraamr evaluate: {b}: not valid UTF-8 (byte 0x80 at offset 18)\n"
