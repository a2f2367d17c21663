"""What hostile input leaves beyond one line on stderr: what the failure rows hold, that nothing
reaches the Hub, that two writers of one folder never both succeed, memory under a decompression
bomb. The one-line errors of these cases are rows of the hostile table (``test_hostile.py``,
:func:`limit_cases`); the cases of one module are with its tests (the readers' line cap, the
sources' zip members, refocus streaming, cards with a huge line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import psutil
import pytest
from dataset_samples import release_bytes

from paraamr.cli import main

ROOT = Path(__file__).resolve().parents[2]
SENTENCES = ["The cat sat on the mat .", "A dog ran in the park .", "She reads a good book ."]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}


def paraamr(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "paraamr", *args],
        cwd=cwd,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# --- item 2: a row a dataset cannot hold is a failure row, never a lost run ---------------------


def test_generate_makes_a_lone_surrogate_and_a_nul_failure_rows_and_a_rerun_gets_past(
    tmp_path, tiny_models, capsys
):
    """Before: "internal error: UnicodeEncodeError", and the resume stopped at the same row."""
    from paraamr.layout import failure_files, list_shards

    data = tmp_path / "in.jsonl"
    data.write_bytes(
        b'{"text": "The cat sat ."}\n{"text": "A lone \\ud800 here ."}\n'
        b'{"text": "A NUL \\u0000 here ."}\n{"text": "A dog ran ."}\n'
    )
    out = tmp_path / "out"
    argv = ["generate", "--input", str(data), "--output", str(out), "--no-progress", "--task-rows", "1"]
    for option, kind in (
        ("--parser-model", "parser"),
        ("--realizer-model", "realizer"),
        ("--lm-model", "lm"),
    ):
        argv += [option, str(tiny_models[kind])]
    for _ in range(2):  # the second run finds the finished run and gets past the rows as well
        assert main(argv) == 0, capsys.readouterr().err
    failed = [json.loads(line) for f in failure_files(out) for line in f.read_text().splitlines()]
    failed.sort(key=lambda f: f["reason"])  # by task: the order of the ids' hashes
    assert [(f["stage"], f["reason"]) for f in failed] == [
        ("input", "a NUL character at character 7"),
        ("input", "a lone surrogate (U+D800) at character 8; text cannot hold it"),
    ]
    assert failed[1]["text"] == "A lone \ufffd here ."  # writable: the surrogate as U+FFFD
    import pyarrow.parquet as pq

    ids = [
        r for p in list_shards(out)["default"]["train"] for r in pq.read_table(p).column("text").to_pylist()
    ]
    assert sorted(ids) == ["A dog ran .", "The cat sat ."]


def test_convert_names_the_paraphrase_with_and_without_skip_invalid(tmp_path, capsys):
    """Before: "internal error: UnicodeEncodeError" even with --skip-invalid."""
    bad = b'{"text": "A bird .", "paraphrases": [{"para_text": "A \\ud800 bird .", "perplexity": 2}]}\n'
    (tmp_path / "in.jsonl").write_bytes(release_bytes(4, bad))
    assert main(["convert", str(tmp_path / "in.jsonl"), str(tmp_path / "a")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        'in.jsonl, line 5: paraphrase 1: "para_text": a lone surrogate (U+D800) at character 3; '
        "text cannot hold it"
    )
    assert main(["convert", str(tmp_path / "in.jsonl"), str(tmp_path / "b"), "--skip-invalid"]) == 0
    captured = capsys.readouterr()
    assert "wrote 4 records" in captured.out and "skipped 1 invalid line; first: " in captured.err
    import datasets

    assert datasets.load_dataset(str(tmp_path / "b"), split="train").num_rows == 4


# --- item 3: symlinks -----------------------------------------------------------------------


def _dataset(tmp_path: Path) -> Path:
    (tmp_path / "in.jsonl").write_bytes(release_bytes(6))
    folder = tmp_path / "corpus"
    assert main(["convert", str(tmp_path / "in.jsonl"), str(folder)]) == 0
    return folder


def test_push_with_an_outward_link_uploads_nothing(tmp_path, hub, capsys):
    """Before: the secret's content was uploaded as notes.txt."""
    folder = _dataset(tmp_path)
    (tmp_path / "secret.txt").write_text("hf_secret\n")
    (folder / "notes.txt").symlink_to(tmp_path / "secret.txt")
    capsys.readouterr()
    assert main(["push", "me/corpus", str(folder)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{folder}/notes.txt: a symbolic link to " in err[0]
    assert hub.log == []  # not one request: nothing created, nothing sent
    (folder / "notes.txt").unlink()
    (folder / "notes.txt").symlink_to("README.md")  # a link inside the folder is fine
    assert main(["push", "me/corpus", str(folder)]) == 0
    assert hub.dataset("me/corpus").files()["notes.txt"] == (folder / "README.md").read_bytes()


def test_stats_overwrite_replaces_a_plot_link_never_its_target(tmp_path, capsys):
    (tmp_path / "in.jsonl").write_bytes(release_bytes(6))
    (tmp_path / "mine.png").write_bytes(b"my picture")
    plots = tmp_path / "plots"
    plots.mkdir()
    (plots / "perplexity.png").symlink_to(tmp_path / "mine.png")
    (plots / "notes.txt").write_text("mine")
    argv = ["stats", str(tmp_path / "in.jsonl"), "--plots", str(plots)]
    assert main(argv) == 1 and "perplexity.png exists (1 of the plots)" in capsys.readouterr().err
    assert main([*argv, "--overwrite"]) == 0
    assert (tmp_path / "mine.png").read_bytes() == b"my picture"
    assert not (plots / "perplexity.png").is_symlink()
    assert (plots / "perplexity.png").read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in plots.iterdir()) == [
        "notes.txt",
        "paraphrases_per_source.png",
        "perplexity.png",
    ]


def test_an_output_under_a_link_to_nothing_is_named_as_that_link(tmp_path, capsys):
    """Before: ``convert``, ``stats --plots`` and ``models list --cache-dir`` under a broken link said
    ``OUTPUT: already exists`` (or ``is a file``), naming neither the link nor what is wrong with it."""
    (tmp_path / "in.jsonl").write_bytes(release_bytes(6))
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "gone")
    said = f"{link}: a symbolic link to {tmp_path / 'gone'}, which does not exist"
    for argv in (
        ["convert", str(tmp_path / "in.jsonl"), str(link / "x.jsonl")],
        ["convert", str(tmp_path / "in.jsonl"), str(link / "sub" / "corpus")],
        ["stats", str(tmp_path / "in.jsonl"), "--plots", str(link / "plots")],
        ["export", "simcse", str(tmp_path / "in.jsonl"), str(link / "s.csv")],
    ):
        assert main(argv) == 1, argv
        assert capsys.readouterr().err == f"paraamr {' '.join(argv[:1 + (argv[0] == 'export')])}: {said}\n"
    with pytest.raises(SystemExit, match="2"):
        main(["models", "list", "--cache-dir", str(link / "cache")])
    assert f"{link} is {said.split(': ', 1)[1]}" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out"]


def test_a_command_that_writes_nothing_leaves_none_of_the_folders_it_made(tmp_path, capsys):
    """Before: ``export`` left the output's new parent folders (made for its lock) when its input
    was missing or bad, and ``augment --output x/y`` left ``x``."""
    (tmp_path / "bad.jsonl").write_text("not json\n")
    for argv in (
        ["export", "simcse", str(tmp_path / "missing.jsonl"), str(tmp_path / "ex" / "new" / "s.csv")],
        ["export", "scpn", str(tmp_path / "bad.jsonl"), str(tmp_path / "ex" / "a" / "b" / "s.csv")],
        ["augment", "--dataset", str(tmp_path / "bad.jsonl"), "--method", "reda", "--n", "2", "--output",
         str(tmp_path / "x" / "y"), "-q"],
    ):  # fmt: skip
        assert main(argv) == 1, argv
        assert len(capsys.readouterr().err.splitlines()) == 1
        assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl"], argv


# --- items 5/6: one writer per folder -----------------------------------------------------------


def test_convert_into_a_folder_another_writer_holds_is_refused_naming_it(tmp_path, capsys):
    from paraamr.locks import folder_lock

    (tmp_path / "in.jsonl").write_bytes(release_bytes(6))
    with folder_lock(tmp_path / "out", command="test"):
        assert main(["convert", str(tmp_path / "in.jsonl"), str(tmp_path / "out")]) == 1
    assert f"locked by pid {os.getpid()} on host " in capsys.readouterr().err


def test_two_converts_into_one_new_folder_never_both_write(tmp_path):
    """Before: both printed "wrote", and the folder lacked the default config."""
    (tmp_path / "in.jsonl").write_bytes(release_bytes(30000))
    runs = [paraamr("convert", "in.jsonl", "out", cwd=tmp_path) for _ in range(2)]
    done = [(p.wait(timeout=300), *p.communicate()) for p in runs]
    codes = sorted(code for code, _, _ in done)
    assert codes == [0, 1], done
    refused = next(err for code, _, err in done if code == 1).strip()
    assert "locked by pid" in refused or "exists and is not empty" in refused, refused
    import datasets

    for config in ("default", "pairs"):
        assert datasets.load_dataset(str(tmp_path / "out"), config, split="train").num_rows == 30000


def _augment(seed: int, *extra: str) -> list[str]:
    base = ["augment", "--dataset", "in.jsonl", "--method", "reda", "--n", "2", "--seed", str(seed)]
    return [*base, "--output", "out", *extra]


@pytest.mark.slow
def test_two_augment_overwrite_runs_never_both_succeed(tmp_path):
    """Before: one result silently lost, or "Parquet file size is 4 bytes" blaming the input."""
    rows = [{"text": f"{SENTENCES[i % 3]} number {i}", "label": i % 2} for i in range(3000)]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    first = paraamr(*_augment(0), cwd=tmp_path)
    assert first.wait(timeout=300) == 0, first.communicate()
    runs = [paraamr(*_augment(seed, "--overwrite"), cwd=tmp_path) for seed in (1, 2)]
    done = [(p.wait(timeout=300), *p.communicate()) for p in runs]
    assert sorted(code for code, _, _ in done) == [0, 1], done
    for code, _out, err in done:
        assert "Parquet" not in err and "internal error" not in err, err
        assert not code or "locked by pid" in err, err
    [won] = [seed for seed, (code, _, _) in zip((1, 2), done, strict=True) if code == 0]
    assert f"- Seed: {won}" in (tmp_path / "out" / "README.md").read_text()  # the winner's, whole
    import datasets

    assert datasets.load_dataset(str(tmp_path / "out"), split="train").num_rows > 3000


def test_a_failed_augment_overwrite_leaves_the_output_as_it_was(tmp_path, capsys, monkeypatch):
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"text": s, "label": 0}) + "\n" for s in SENTENCES))
    monkeypatch.chdir(tmp_path)
    assert main(_augment(0)) == 0
    before = {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    (tmp_path / "lm.parquet").write_bytes(b"garbage")
    assert main([*_augment(1, "--overwrite"), "--method", "reda-ng", "--lm", "lm.parquet"]) == 1
    after = {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert after == before and "lm.parquet" in capsys.readouterr().err


# --- item 7: bombs --------------------------------------------------------------------------


@pytest.mark.slow
def test_stats_on_a_1mb_gzip_of_a_1gb_line_is_refused_in_flat_memory(tmp_path):
    """The issue's measure: refused, or under 300 MB. Before: about 2.3 GB."""
    bomb = tmp_path / "bomb.jsonl.gz"
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip
    chunk = b"x" * 2**20
    with open(bomb, "wb") as f:
        f.write(packer.compress(b'{"text": "'))
        for _ in range(1024):
            f.write(packer.compress(chunk))
        f.write(packer.compress(b'", "paraphrases": []}\n') + packer.flush())
    assert bomb.stat().st_size < 2 * 2**20
    for extra in ([], ["--skip-invalid"], ["--max-unpack-ratio", "100000", "--skip-invalid"]):
        proc = paraamr("stats", str(bomb), "--no-plots", *extra, cwd=tmp_path)
        peak = 0
        while proc.poll() is None:
            try:
                peak = max(peak, psutil.Process(proc.pid).memory_info().rss)
            except psutil.NoSuchProcess:
                break
            time.sleep(0.05)
        out, err = proc.communicate()
        assert peak < 300 * 2**20, (extra, peak)
        if "--max-unpack-ratio" in extra:  # the line read past without being held, then counted
            assert proc.returncode == 0 and '"skipped_lines"' not in out, err
            assert "skipped 1 invalid line" in err
        else:
            assert proc.returncode == 1 and "unpacks to more than 100 times" in err, err
        print(f"stats {' '.join(extra) or '(defaults)'}: peak RSS {peak / 2**20:.0f} MiB")
