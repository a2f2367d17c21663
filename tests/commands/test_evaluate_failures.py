"""``paraamr evaluate`` with pairs it cannot score (issue 28): each becomes a failure row naming the
file and line, the record's id, the stage and the reason, and the other pairs give the row they give
alone; never "internal error", never a silent exit. Plots never replace a file without
``--overwrite`` and never write through a link; ``--write-card`` takes the folder's own lock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paraamr.cli import main
from paraamr.records import text_id

GOOD = [
    ("The cat sat on the mat.", "On the mat sat the cat."),
    ("He left early because he was tired.", "Because he was tired, he left early."),
    ("He left early because he was tired.", "Being tired, he left early."),
]
#: (paraphrase, stage, reason start) of pairs that cannot be scored.
BAD = [
    ("A lone \ud800 surrogate.", "input", "paraphrase: a lone surrogate (U+D800) at character 8"),
    ("A NUL\x00 inside.", "input", "paraphrase: a NUL character at character 6"),
    ("\u200b\u200b\u200b", "input", "paraphrase: no visible character"),
    ("x" * 100_000, "input", "paraphrase: longer than --max-chars 3000 (100000 characters)"),
    # link-grammar refuses these (255+ words; a line over 2,046 bytes): the parser's own reason
    ("word " * 300 + "end.", "parse", "paraphrase: "),
    ("abcdefghij" * 250 + ".", "parse", "paraphrase: "),
]
MEASURES = ("semantic_similarity", "bleu_diversity", "jaccard_diversity", "ted3", "tedf")


def release(path: Path, pairs) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for source, para in pairs:
            f.write(
                json.dumps({"text": source, "paraphrases": [{"para_text": para, "perplexity": 1.0}]}) + "\n"
            )
    return path


def run_json(capsys, *args) -> tuple[int, dict, str]:
    status = main(["evaluate", *map(str, args), "--json", "--no-progress", "--no-plots"])
    out = capsys.readouterr()
    return status, json.loads(out.out) if out.out.strip() else {}, out.err


def test_unscorable_pairs_are_failure_rows_and_the_rest_goes_on(capsys, tmp_path):
    mixed = [GOOD[0], *((GOOD[1][0], bad) for bad, _, _ in BAD), *GOOD[1:]]
    path = release(tmp_path / "mixed.jsonl", mixed)
    status, result, err = run_json(capsys, path, "--max-chars", 3000)
    assert status == 0 and "internal error" not in err
    assert len(result["failures"]) == len(BAD)
    found = [(f["stage"], f["reason"]) for f in result["failures"]]
    assert [(stage, why[: len(r)]) for (stage, why), (_, _, r) in zip(found, BAD, strict=True)] == [
        (stage, reason) for _, stage, reason in BAD
    ]
    for line, failure in enumerate(result["failures"], start=2):
        assert failure["where"] == f"{path}, line {line}, paraphrase 1"  # from 1, as input errors count
        assert failure["id"] == text_id(GOOD[1][0]) and failure["index"] == line - 1
        assert f"left out {path}, line {line}, paraphrase 1: {failure['stage']}: " in err
    _, alone, _ = run_json(capsys, release(tmp_path / "good.jsonl", GOOD))
    assert result["pairs"] == alone["pairs"] == len(GOOD)
    for key in MEASURES:
        assert result[key] == pytest.approx(alone[key], abs=1e-4 if key == "semantic_similarity" else 0), key


def test_default_max_chars_keeps_long_texts_from_the_parser(capsys, tmp_path):
    path = release(tmp_path / "long.jsonl", [GOOD[0], ("A long one.", "y" * 2500)])
    status, result, _ = run_json(capsys, path)
    assert status == 0 and result["pairs"] == 1
    assert result["failures"][0]["reason"] == "paraphrase: longer than --max-chars 2000 (2500 characters)"


def test_plots_never_replace_a_file_without_overwrite_nor_write_through_a_link(capsys, tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{s}\t{p}\n" for s, p in GOOD))
    plots = tmp_path / "plots"
    plots.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("keep me")
    (plots / "ted3.png").symlink_to(secret)
    (plots / "mine.png").write_bytes(b"my own plot")
    args = ["evaluate", str(pairs), "--plots", str(plots), "--no-progress"]
    assert main(args) == 1  # refused before the run, not after it
    assert "ted3.png exists (1 of the plots): pass --overwrite" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0
    assert secret.read_text() == "keep me" and not (plots / "ted3.png").is_symlink()
    assert (plots / "ted3.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (plots / "mine.png").read_bytes() == b"my own plot"  # a file it does not name stays
    assert sorted(p.name for p in plots.iterdir()) == sorted([*(f"{m}.png" for m in MEASURES), "mine.png"])


def test_write_card_refuses_a_folder_another_process_is_writing(capsys, tmp_path):
    import subprocess
    import sys

    folder = tmp_path / "corpus"
    folder.mkdir()
    code = (
        "import sys, time; from paraamr.locks import writer_lock; "
        "lock = writer_lock(sys.argv[1], '00000-of-00001'); print('held', flush=True); time.sleep(120)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(folder)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"  # a generator writing the folder
        assert main(["evaluate", str(folder), "--write-card", "--no-plots", "--no-progress"]) == 1
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err
    assert f"paraamr evaluate: {folder}: being written (writer 00000-of-00001) by pid {holder.pid}" in err


def test_plots_a_stats_or_evaluate_run_is_writing_are_left_to_it(capsys, tmp_path):
    """evaluate wrote its plots without the folder's hold that stats takes: two runs that both
    passed the check before their runs each wrote there."""
    import subprocess
    import sys

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{s}\t{p}\n" for s, p in GOOD))
    plots = tmp_path / "plots"
    plots.mkdir()
    code = (
        "import sys, time; from paraamr.locks import file_lock; "
        "lock = file_lock(sys.argv[1], command='stats', wait=0); print('held', flush=True); time.sleep(120)"
    )
    argv = [sys.executable, "-c", code, str(plots / ".plots.lock")]
    holder = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        assert main(["evaluate", str(pairs), "--plots", str(plots), "--no-progress", "--json"]) == 1
    finally:
        holder.kill()
        holder.wait()
    out, err = capsys.readouterr()
    assert err.startswith(f"paraamr evaluate: --plots {plots}: being written by pid {holder.pid}"), err
    assert not list(plots.glob("*.png")) and out == ""


def test_no_pair_left_is_one_line_and_exit_1_not_a_row_of_nothing(capsys, tmp_path):
    """Every pair a failure row: each said, then one line (before: a row of nan or null, exit 0,
    where --max-perplexity leaving no pair already exited 1)."""
    path = tmp_path / "bad.tsv"
    path.write_text("A source.\t\nAnother.\t\u200b\n")
    status, result, err = run_json(capsys, path, "--sample", "1")
    assert status == 1 and result == {} and "internal error" not in err
    lines = err.strip().splitlines()
    said = f"paraamr evaluate: {path}: no pair could be scored; all 1 were left out (the lines above say why)"
    assert lines[-1] == said
    assert lines[-2].startswith("paraamr evaluate: left out ")


def test_outputs_that_cannot_be_written_are_refused_before_the_run(capsys, tmp_path):
    """A card paraamr did not write, a plots folder that cannot be written: found after every pair
    was scored, and the row was lost (the log had reached 100%). Now refused before the work."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    release(folder / "data.jsonl", GOOD)
    assert main(["evaluate", str(folder), "--write-card", "--no-plots", "--progress", "log"]) == 1
    out = capsys.readouterr()
    card = folder / "README.md"
    assert out.err.splitlines() == [
        f"paraamr evaluate: {card}: not a card written by paraamr (no Evaluation section to update)"
    ]
    plots = "/proc/self/paraamr-plots"  # a folder no one, root included, may make
    assert main(["evaluate", str(folder / "data.jsonl"), "--plots", plots, "--progress", "log"]) == 1
    out = capsys.readouterr()
    assert out.err.splitlines() == [
        f"paraamr evaluate: --plots {plots}: /proc/self cannot be written (read-only or not yours)"
    ]
