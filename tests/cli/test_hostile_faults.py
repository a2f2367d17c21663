"""Issue 41's cases that need a fault or two steps: a Hub that accepts and never answers (a silent
socket on loopback), an input edited between a run and its resume or between two shards, a disk
that fills up mid-write (a small tmpfs), an evaluation cache over an edited input, numbers from
numpy and a triplet cap. The one-command cases are rows of the hostile table
(``test_hostile.py``, :func:`value_and_state_cases`)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from paraamr.cli import main

ROOT = Path(__file__).resolve().parents[2]
SENTENCES = ["The cat sat on the mat .", "A dog ran in the park .", "She reads a good book ."]


class SilentHub:
    """A server on loopback that accepts every connection and never sends a byte."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed: the test is over
                return
            self.conns.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.conns:
            conn.close()
        self.thread.join(timeout=5)


@pytest.fixture
def silent_hub():
    hub = SilentHub()
    yield hub
    hub.close()


def run(args: list[str], cwd: Path, timeout: float, **extra: str) -> tuple[int, str, str, float]:
    """``python -m paraamr ARGS`` in ``cwd``: exit status, stdout, stderr, seconds; a hang fails."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1", **extra}
    start = time.monotonic()
    command = [sys.executable, "-m", "paraamr", *args]
    proc = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"paraamr {' '.join(args)}: no exit within {timeout} s (a hang)")
    return proc.returncode, out, err, time.monotonic() - start


def release_lines(n: int, width: int = 0) -> bytes:
    paraphrases = [{"para_text": "again", "perplexity": 20.0}]
    rows = [{"text": f"{SENTENCES[i % 3]} {i} " + "x" * width, "paraphrases": paraphrases} for i in range(n)]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


# --- a Hub that accepts and never answers ------------------------------------------------------


@pytest.mark.slow  # waits out the Hub bound and the client's retries
def test_push_to_a_silent_hub_ends_in_one_line_within_its_bound(tmp_path, silent_hub, capsys):
    """Before: ``push`` still running after 180 s (huggingface_hub's client has no timeout)."""
    (tmp_path / "in.jsonl").write_bytes(release_lines(6))
    assert main(["convert", str(tmp_path / "in.jsonl"), str(tmp_path / "d")]) == 0
    hub = {"HF_ENDPOINT": silent_hub.url, "HF_HUB_OFFLINE": "0", "HF_HOME": str(tmp_path / "hf")}
    token = {"HF_TOKEN": "hf_SilentHubToken1234", "PARAAMR_HUB_TIMEOUT": "2"}
    code, out, err, seconds = run(["push", "org/name", "d"], tmp_path, timeout=120, **hub, **token)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1, err
    assert lines[0].startswith("paraamr push: upload of d to org/name failed: no answer within 2 s"), err
    assert "hf_SilentHubToken1234" not in out + err
    assert silent_hub.conns and seconds < 100  # it reached the silent server, and gave up


@pytest.mark.slow  # waits out the Hub bound and the client's retries
def test_model_download_from_a_silent_hub_ends_in_one_line(tmp_path, silent_hub):
    """Before: ``models download gpt2`` still running after 100 s."""
    code, _, err, _ = run(
        ["models", "download", "gpt2", "--cache-dir", "cache", "--quiet"], tmp_path, timeout=120,
        HF_ENDPOINT=silent_hub.url, HF_HUB_OFFLINE="0", HF_HOME=str(tmp_path / "hf"), PARAAMR_HUB_TIMEOUT="2",
    )  # fmt: skip
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1, err
    assert "'gpt2' could not be fetched from the Hub" in lines[0] and "no answer within 2 s" in lines[0], err


def test_a_bad_hub_timeout_is_one_usage_line(tmp_path):
    code, _, err, _ = run(["push", "org/name", "d"], tmp_path, timeout=60, PARAAMR_HUB_TIMEOUT="nan")
    assert code == 2 and err.strip() == (
        "paraamr push: PARAAMR_HUB_TIMEOUT='nan': must be a finite number of seconds > 0"
    ), err


# --- an input edited between a run and its resume, or between two shards ----------------------


def _generate(tiny_models, *argv: str) -> list[str]:
    models = [
        "--parser-model",
        str(tiny_models["parser"]),
        "--realizer-model",
        str(tiny_models["realizer"]),
    ]
    return ["generate", *models, "--lm-model", str(tiny_models["lm"]), "--no-progress", *argv]


def _dataset_folder(path: Path, texts: list[str]) -> Path:
    path.mkdir(exist_ok=True)
    (path / "train.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    return path


@pytest.mark.slow
def test_a_dataset_folder_edited_before_a_resume_is_refused(tmp_path, tiny_models, capsys):
    """Before: ``"input_identity": null``; a resume after the edit skipped rows by count, exit 0."""
    data = _dataset_folder(tmp_path / "ds", SENTENCES)
    argv = _generate(tiny_models, "--dataset", str(data), "--output", str(tmp_path / "out"))
    assert main(argv) == 0, capsys.readouterr().err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert list(summary["run"]["input_identity"]["files"]) == ["train.jsonl"]
    assert main(argv) == 0  # unchanged: nothing left to do
    capsys.readouterr()
    _dataset_folder(data, ["An edited sentence .", *SENTENCES])
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("paraamr generate: ") and "the input changed: train.jsonl: its size was" in err, err
    (data / "more.jsonl").write_text('{"text": "A new file ."}\n')
    assert main(argv) == 1 and "more.jsonl was added" in capsys.readouterr().err


def test_a_dataset_folder_edited_between_two_shards_is_refused(tmp_path, tiny_models, capsys):
    """Before: shard 1 mixed both inputs (15 of 29 records from the edit), exit 0 everywhere."""
    data = _dataset_folder(tmp_path / "ds", [f"{s} {i}" for i, s in enumerate(SENTENCES * 4)])
    out = tmp_path / "out"
    first = _generate(tiny_models, "--dataset", str(data), "--output", str(out), "--shard", "0/2")
    assert main(first) == 0, capsys.readouterr().err
    _dataset_folder(data, [f"Edited {i} ." for i in range(12)])
    capsys.readouterr()
    second = _generate(tiny_models, "--dataset", str(data), "--output", str(out), "--shard", "1/2")
    assert main(second) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the input changed: train.jsonl: its size was" in err[0], err
    parts = [int(p.name[1:7]) for p in out.glob(".paraamr/parts/*/*/t*")]
    assert parts and all(task % 2 == 0 for task in parts)  # shard 1 (the odd tasks) wrote nothing


def test_hub_dataset_identity_is_its_revision_and_a_new_one_is_a_change():
    from paraamr.tasks import identity_changed

    old, new = {"hub": "org/d", "revision": "a" * 40}, {"hub": "org/d", "revision": "b" * 40}
    assert identity_changed(old, new) == "the Hub dataset's revision was aaaaaaaaaaaa, now bbbbbbbbbbbb"
    assert identity_changed(old, {"hub": "org/d", "revision": None}) is None  # offline: not checkable


# --- a disk that fills up mid-write -------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs (root only), grown by calling the fixture's value with a size."""
    target = tmp_path / "small"
    target.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(target)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.decode().strip()}")

    def grow(size: str) -> None:
        subprocess.run(["mount", "-o", f"remount,size={size}", str(target)], check=True, capture_output=True)

    try:
        yield target, grow
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def test_convert_that_fills_the_disk_names_the_path_and_leaves_no_folder(tmp_path, small_disk, capsys):
    """Before: ``data/`` left without a card, and the rerun refused without ``--overwrite``."""
    disk, grow = small_disk
    (tmp_path / "in.jsonl").write_bytes(release_lines(20000, width=40))  # ~2 MiB of Parquet
    out = disk / "new" / "out"
    assert main(["convert", str(tmp_path / "in.jsonl"), str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no space left on device" in err[0] and str(disk) in err[0], err
    assert list(disk.iterdir()) == []  # the folders it made are gone
    grow("64m")
    assert main(["convert", str(tmp_path / "in.jsonl"), str(out)]) == 0  # no --overwrite needed
    assert "wrote 20,000 records" in capsys.readouterr().out


def test_a_full_disk_under_a_write_is_named_where_the_command_writes(tmp_path, small_disk, capsys):
    """A write refused by a full disk carries no file name: before, `export` said only "no space
    left on device", and `augment` "internal error: ValueError: I/O operation on closed file"
    (datasets' writer, cleaned up after the disk's error)."""
    disk, _ = small_disk
    (tmp_path / "in.jsonl").write_bytes(release_lines(20000, width=40))
    out = disk / "out.csv"
    assert main(["export", "simcse", str(tmp_path / "in.jsonl"), str(out)]) == 1
    assert capsys.readouterr().err.endswith(f"paraamr export simcse: {out}: no space left on device\n")
    text = "the man number {} said many things to the woman in the park"
    rows = [{"text": text.format(i), "label": i % 2} for i in range(9000)]
    (tmp_path / "aug.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["augment", "--dataset", str(tmp_path / "aug.jsonl"), "--method", "reda"]
    assert main([*argv, "--output", str(disk / "aug"), "-q"]) == 1
    assert capsys.readouterr().err == f"paraamr augment: {disk / 'aug'}: no space left on device\n"


def test_a_model_unpacked_onto_a_full_disk_keeps_its_download(tmp_path, small_disk, tiny_models, capsys):
    """Before: the disk's error was "archive ... is corrupt or incomplete", and the complete
    download was deleted (1.5 GB fetched again)."""
    import tarfile

    disk, grow = small_disk
    archive = tmp_path / "mymodel.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tiny_models["parser"], arcname="mymodel")
    grow(f"{archive.stat().st_size // 1024 + 24}k")  # the download fits, its content does not
    argv = ["models", "download", "mymodel", "--url", archive.as_uri(), "--no-tokenizer"]
    argv += ["--cache-dir", str(disk)]
    assert main([*argv, "-q"]) == 1
    assert capsys.readouterr().err == f"paraamr models download: {disk / 'models'}: no space left on device\n"
    (kept,) = (disk / "models" / ".downloads").iterdir()
    assert kept.read_bytes() == archive.read_bytes()
    grow("64m")
    assert main([*argv, "-q"]) == 0 and (disk / "models" / "mymodel" / "amrlib_meta.json").is_file()


def test_a_lock_taken_on_a_full_disk_is_not_left_behind(small_disk):
    """Before: the lock file stayed when the holder's name could not be written into it."""
    from paraamr import layout
    from paraamr.locks import file_lock, folder_lock

    disk, _ = small_disk
    (disk / "ds" / layout.LOCKS).mkdir(parents=True)
    fd = os.open(disk / "fill", os.O_WRONLY | os.O_CREAT)
    with contextlib.suppress(OSError):  # the disk full to its last byte
        while os.write(fd, b"x" * 512):
            pass
    os.close(fd)
    with pytest.raises(OSError, match="No space left on device"):
        folder_lock(disk / "ds", command="evaluate --write-card")
    with pytest.raises(OSError, match="No space left on device"):
        file_lock(disk / ".model.lock", command="models download")
    assert not (disk / "ds" / layout.LOCKS / "folder.lock").exists() and not (disk / ".model.lock").exists()


# --- evaluate's cache over an edited input ------------------------------------------------------


@pytest.mark.slow
def test_evaluate_cache_dir_recomputes_an_edited_input(tmp_path, capsys):
    """Before: "holds the statistics of another evaluation ... give another --state-dir" for good."""
    pairs = tmp_path / "in.tsv"
    pairs.write_text("The cat sat .\tA cat was sitting .\nA dog ran .\tA dog was running .\n")
    argv = [
        "evaluate",
        str(pairs),
        "--cache-dir",
        str(tmp_path / "c"),
        "--no-plots",
        "--no-progress",
        "--json",
    ]
    assert main(argv) == 0, capsys.readouterr().err
    first = json.loads(capsys.readouterr().out)
    pairs.write_text("The cat sat .\tThe cat sat .\nA dog ran .\tA dog ran .\n")
    assert main(argv) == 0, capsys.readouterr().err
    second = json.loads(capsys.readouterr().out)
    assert first != second and len(list((tmp_path / "c" / "evaluate").iterdir())) == 2


# --- numbers from numpy, and batch sizes, in filter_records -------------------------------------


def test_filter_records_takes_numpy_numbers_and_checks_each_number():
    import datasets
    import numpy as np

    from paraamr import filter_records

    ds = datasets.Dataset.from_list(
        [
            {
                "id": "a",
                "text": "t",
                "paraphrases": [{"para_text": "p", "perplexity": p} for p in (50.0, 150.0)],
            }
        ]
    )
    kept = filter_records(ds, max_perplexity=np.float32(110), min_paraphrases=np.int64(1))
    assert [p["perplexity"] for p in kept[0]["paraphrases"]] == [50.0]
    for kwargs, message in (
        ({"batch_size": 0}, "batch_size must be an integer > 0, got 0"),
        ({"batch_size": 2.5}, "batch_size must be an integer > 0, got 2.5"),
        ({"max_perplexity": np.float64("nan")}, "max_perplexity must be a finite number >= 0 or None"),
        (
            {"min_similarity": float("inf")},
            "min_similarity must be a finite number in [-1, 1] or None, got inf",
        ),
        ({"max_paraphrases": np.int32(0)}, "max_paraphrases must be an integer >= 1 or None"),
    ):
        with pytest.raises(ValueError) as caught:
            filter_records(ds, **kwargs)
        assert str(caught.value).startswith(message), caught.value


# --- quality train: --max-triplets bounds the natural pairs too ----------------------------------


@pytest.mark.slow
def test_quality_train_max_triplets_bounds_the_natural_pairs(tmp_path):
    """Before: 2,683 triplets (the natural pairs') and over 15 minutes for ``--max-triplets 8``."""
    (tmp_path / "in.txt").write_text("".join(f"{SENTENCES[i % 3]} Number {i} .\n" for i in range(30)))
    code, _, err, _ = run(
        ["quality", "train", "--input", "in.txt", "--output", "model", "--max-triplets", "8", "--epochs", "1",
         "--save-triplets", "t.jsonl", "--no-progress"],
        tmp_path, timeout=300,
    )  # fmt: skip
    assert code == 0, err
    triplets = (tmp_path / "t.jsonl").read_text().splitlines()
    assert 8 < len(triplets) <= 16, len(triplets)  # 8 of the sentences', at most 8 of the natural pairs'
