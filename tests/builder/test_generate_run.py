"""End-to-end runs of ``generate.py`` on tiny random models: one process in-process, two CPU processes
under ``torchrun``, runs killed with SIGKILL and resumed, hostile input, the folder read back with
``load_dataset``. The expensive runs are module fixtures shared between assertions."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from entries import generate as main
from tinyargs import model_args

from paraamr.builder.readers import read_input
from paraamr.builder.rows import owner

ROOT = Path(__file__).resolve().parents[2]
PAPER_TEXT = "I know for them to approve this price, they'll need statistical documentation."
HOSTILE = [
    PAPER_TEXT.encode(),
    b"The dog saw the cat.",
    b"",
    b"   \t  ",
    b"x" * 100_000,
    b"ctrl\x00\x07\x1b chars in the line",
    b"caf\xe9 \xff invalid bytes",
    "Ceci n'est pas anglais. 这不是英语。".encode(),
    b"The dog saw the cat.",
    b"colorless green ideas sleep furiously",
    PAPER_TEXT.encode(),
] + [f"the man said {i} things to the woman .".encode() for i in range(13)]


CHUNKS = ["--commit-every", "2", "--window", "2"]  # a commit after every window: many kill points


def _models(tiny: dict) -> list[str]:
    return [*model_args(tiny), "--no-progress"]


def _torchrun(args: list[str], log: Path, **kw) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        str(ROOT / "generate.py"),
        *args,
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(cmd, stdout=log.open("ab"), stderr=subprocess.STDOUT, env=env, cwd=ROOT, **kw)


def _records(folder: Path, config: str = "default") -> list[dict]:
    files = sorted((folder / "data" / config).glob("*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def _failures(folder: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((folder / "failures").glob("*.jsonl")) for line in f.open()]


def _comparable(folder: Path) -> tuple[dict, list, list]:
    """Records by id without perplexities, failures sorted, perplexities in id order (compared with a
    tolerance: batches differ between process counts, so float sums differ in the last bits)."""
    records, ppl = {}, []
    for r in sorted(_records(folder), key=lambda r: r["id"]):
        assert r["id"] not in records, f"duplicate record {r['id']}"
        records[r["id"]] = (
            r["text"],
            r["amr"],
            [(p["para_text"], p["focus"], p["amr"]) for p in r["paraphrases"]],
        )
        ppl += [p["perplexity"] for p in r["paraphrases"]]
    failures = sorted((f["id"], f["stage"], f["reason"], f["raw_b64"]) for f in _failures(folder))
    return records, failures, ppl


def _assert_same(a: Path, b: Path) -> None:
    records_a, failures_a, ppl_a = _comparable(a)
    records_b, failures_b, ppl_b = _comparable(b)
    assert records_a == records_b
    assert failures_a == failures_b
    assert ppl_a == pytest.approx(ppl_b, rel=1e-4)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("input") / "hostile.txt"
    path.write_bytes(b"\n".join(HOSTILE) + b"\n")
    return path


@pytest.fixture(scope="module")
def one_proc(tiny_models, hostile, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("one") / "out"
    assert main(["--input", str(hostile), "--output", str(out), *CHUNKS, *_models(tiny_models)]) == 0
    return out


@pytest.fixture(scope="module")
def two_proc(tiny_models, hostile, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("two") / "out"
    log = out.parent / "log.txt"
    models = [a for a in _models(tiny_models) if a != "--no-progress"]  # the bar: see the test below
    args = ["--input", str(hostile), "--output", str(out), *CHUNKS, *models, "--progress", "bar"]
    proc = _torchrun(args, log)
    assert proc.wait(timeout=400) == 0, log.read_text()[-3000:]
    return out


def test_the_progress_bar_counts_the_rows_of_both_processes(two_proc):
    log = (two_proc.parent / "log.txt").read_text()
    assert "generate (2 processes)" in log and f"{len(HOSTILE)}/{len(HOSTILE)} [" in log and "100%" in log


def test_a_log_gets_lines_of_both_processes_not_a_bar(tiny_models, hostile, tmp_path):
    """Where stderr is no terminal (a log, Slurm, CI), ``--progress auto`` writes plain lines: the
    models first, then counts summed over both processes, and no line twice in a row."""
    out, log = tmp_path / "out", tmp_path / "log.txt"
    models = [a for a in _models(tiny_models) if a != "--no-progress"]
    proc = _torchrun(["--input", str(hostile), "--output", str(out), *CHUNKS, *models], log)
    assert proc.wait(timeout=400) == 0, log.read_text()[-3000:]
    lines = [line for line in log.read_text().splitlines() if line.startswith("generate (2 processes): ")]
    assert lines[0].startswith("generate (2 processes): loading models: parser ")
    assert lines[-1].startswith(f"generate (2 processes): {len(HOSTILE)}/{len(HOSTILE)} src (100%)")
    assert "\r" not in log.read_text() and all(a != b for a, b in itertools.pairwise(lines))


def test_two_processes_give_the_records_of_one(one_proc, two_proc):
    _assert_same(one_proc, two_proc)
    records = _comparable(one_proc)[0]
    assert any(paras for _, _, paras in records.values())  # the paper sentence parses to a real graph


def test_each_process_handles_only_its_slice(hostile, two_proc):
    ids = [row.id for row in read_input(hostile)]
    for rank in (0, 1):
        state = json.loads((two_proc / ".paraamr" / f"state-{rank:05d}-of-00002.json").read_text())
        mine = [i for i in ids if owner(i, 2) == rank]
        assert state["done"] and state["stats"]["inputs"] == len(mine) > 0


def test_counts_reconcile_and_hostile_lines_are_failures(hostile, two_proc):
    summary = json.loads((two_proc / "summary.json").read_text())
    counts = summary["counts"]
    assert counts["inputs"] == len(HOSTILE) == counts["records"] + counts["failures"]
    assert summary["reconciles"] and summary["complete"]
    assert counts["records"] == len(_records(two_proc)) and counts["failures"] == len(_failures(two_proc))
    assert summary["settings"]["max_perplexity"] is None and summary["run"]["num_processes"] == 2
    by_reason = Counter((f["stage"], f["reason"].split(" (")[0]) for f in _failures(two_proc))
    assert by_reason[("input", "duplicate")] == 2  # the dog line and the paper sentence, once each
    assert by_reason[("input", "empty or whitespace-only")] == 2
    assert by_reason[("input", "longer than 1000 characters")] == 1
    (bad,) = [f for f in _failures(two_proc) if f["raw_b64"]]
    assert "invalid UTF-8" in bad["reason"] and "\ufffd" in bad["text"]
    texts = {r["text"] for r in _records(two_proc)} | {f["text"] for f in _failures(two_proc)}
    assert "ctrl\x00\x07\x1b chars in the line" in texts and "Ceci n'est pas anglais. 这不是英语。" in texts


def test_load_dataset_reads_both_configs(two_proc, tmp_path):
    from datasets import load_dataset

    # A fresh cache: datasets 5 served a stale cached copy of an earlier folder of the same name.
    cache = str(tmp_path / "hf-cache")
    default = load_dataset(str(two_proc), split="train", cache_dir=cache)
    pairs = load_dataset(str(two_proc), "pairs", split="train", cache_dir=cache)
    records = _records(two_proc)
    assert sorted(default["id"]) == sorted(r["id"] for r in records)
    assert len(pairs) == sum(len(r["paraphrases"]) for r in records)
    card = (two_proc / "README.md").read_text()
    assert "config_name: pairs" in card and "data/default/train-?????-of-?????.parquet" in card


def _kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL torchrun and its workers (they run in sessions of their own, out of its group)."""
    import psutil

    workers = psutil.Process(proc.pid).children(recursive=True)
    os.killpg(proc.pid, signal.SIGKILL)
    for worker in workers:
        with contextlib.suppress(psutil.NoSuchProcess):
            worker.kill()
    proc.wait()
    psutil.wait_procs(workers, timeout=30)


def _wait_for(predicate, proc: subprocess.Popen, timeout: float = 400) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


def test_kill_9_and_resume_equals_an_uninterrupted_run(tiny_models, hostile, two_proc, tmp_path):
    out = tmp_path / "out"
    args = ["--input", str(hostile), "--output", str(out), *CHUNKS, *_models(tiny_models)]
    states = out / ".paraamr"

    def shards() -> int:  # committed parts (the final shards are named when the run completes)
        return len(list((states / "parts" / "default").glob("*/[!.]*.parquet")))

    # kill 1: as soon as a first chunk is committed; kill 2: after more commits of the second session
    for target in (lambda: shards() >= 1, lambda: shards() >= 6):
        proc = _torchrun(args, tmp_path / "log.txt", start_new_session=True)
        hit = _wait_for(target, proc)
        _kill_tree(proc)  # torchrun and its workers: a worker left alive would hold the folder's lock
        assert hit, (tmp_path / "log.txt").read_text()[-3000:]
        done = [json.loads(p.read_text())["done"] for p in states.glob("state-*.json")]
        assert not all(done) or len(done) < 2  # really interrupted
    proc = _torchrun(args, tmp_path / "log.txt")
    assert proc.wait(timeout=400) == 0, (tmp_path / "log.txt").read_text()[-3000:]
    records, failures, ppl = _comparable(out)
    expected = _comparable(two_proc)
    assert (records, failures) == expected[:2] and ppl == expected[2]  # same windows: bit for bit
    counts, expected_counts = (
        json.loads((d / "summary.json").read_text())["counts"] for d in (out, two_proc)
    )
    counts.pop("seconds_by_stage"), expected_counts.pop("seconds_by_stage")
    assert counts == expected_counts
    assert not list(out.rglob("*.tmp"))


def test_a_complete_run_started_again_changes_nothing(tiny_models, hostile, one_proc):
    before = sorted(p.name for p in one_proc.rglob("*.parquet"))
    assert main(["--input", str(hostile), "--output", str(one_proc), *CHUNKS, *_models(tiny_models)]) == 0
    assert sorted(p.name for p in one_proc.rglob("*.parquet")) == before


def test_max_shard_size_cuts_the_finished_shards(tiny_models, hostile, one_proc, tmp_path):
    out = tmp_path / "out"
    args = ["--input", str(hostile), "--output", str(out), "--max-shard-size", "1KB", *_models(tiny_models)]
    assert main(args) == 0
    shards = sorted(p.name for p in (out / "data" / "pairs").glob("*.parquet"))
    assert len(shards) > 1 and shards == [
        f"train-{i:05d}-of-{len(shards):05d}.parquet" for i in range(len(shards))
    ]
    assert _comparable(out)[:2] == _comparable(one_proc)[:2]  # the same records, cut differently
    assert json.loads((out / "summary.json").read_text())["settings"]["max_shard_size"] == "1KB"


def test_options_that_change_results_refuse_without_overwrite(tiny_models, hostile, one_proc, capsys):
    args = [
        "--input",
        str(hostile),
        "--output",
        str(one_proc),
        *_models(tiny_models),
        "--max-perplexity",
        "50",
    ]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "--max-perplexity was None, now 50.0" in err and "--overwrite" in err
    assert main([*args[:-2], "--foci", "2"]) == 1
    assert "--foci was 'all', now 2" in capsys.readouterr().err


def test_folder_with_foreign_files_is_refused(tiny_models, hostile, tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["--input", str(hostile), "--output", str(tmp_path), *_models(tiny_models)]) == 1
    assert "holds no paraamr run" in capsys.readouterr().err and (tmp_path / "notes.txt").exists()


def _heavy_imports(stderr: str) -> set[str]:
    mods = {
        line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")
    }
    return mods & {"torch", "transformers", "amrlib", "accelerate", "datasets"}


def test_missing_models_stop_at_once_naming_each_and_the_fetch_command(tmp_path):
    """The README's first command on a machine without the AMR models."""
    env = {
        **os.environ,
        "PARAAMR_CACHE": str(tmp_path / "cache"),
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_CACHE": str(tmp_path / "hub"),
    }
    argv = ["generate.py", "--input", "examples/sentences.txt", "--output", str(tmp_path / "out")]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1 + proc.stderr.count(
        "import time:"
    )
    for name in ("parse_xfm_bart_large", "generate_t5wtense", "gpt2"):
        assert f"paraamr models download {name}" in proc.stderr, proc.stderr[-2000:]
    assert _heavy_imports(proc.stderr) == set()  # nothing heavy was imported, let alone loaded
    assert not (tmp_path / "out").exists()


def test_dry_run_prints_the_plan_without_loading_models(tiny_models, hostile, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "generate.py",
            "--dry-run",
            "--input",
            str(hostile),
            "--output",
            str(tmp_path / "out"),
            *_models(tiny_models)[:-3],
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"{len(HOSTILE)} rows" in proc.stdout and "processes: 1" in proc.stdout
    assert str(tiny_models["parser"]) in proc.stdout and "MISSING" not in proc.stdout
    assert _heavy_imports(proc.stderr) == set() and not (tmp_path / "out").exists()


def test_preset_paper_is_a_record_settings_value():
    from paraamr.builder.settings import RecordSettings
    from paraamr.commands.generate import build_parser, settings_from_args
    from paraamr.errors import UsageError

    def parse(*argv):
        return settings_from_args(build_parser().parse_args(["--input", "x", *argv]))[0]

    paper = parse("--preset", "paper")
    assert paper == RecordSettings.paper(input=paper.input)
    # the paper's values (Huang et al. 2023, section 3), stated here independently of the code:
    # every candidate kept with its perplexity (as the release), every node a focus, penman's
    # linearization, the graph alone as the realizer's input
    assert (paper.realizer_model, paper.lm_model, paper.max_perplexity, paper.foci) == (
        "generate_t5wtense",
        "gpt2",
        None,
        "all",
    )
    assert (paper.foci_rule, paper.linearization, paper.tagging) == ("every-node", "penman", "untagged")
    assert parse("--preset", "paper", "--lm-model", "gpt2") == paper  # the same value is no clash
    with pytest.raises(UsageError, match="--preset paper sets --lm-model gpt2"):
        parse("--preset", "paper", "--lm-model", "smollm2")
    with pytest.raises(UsageError, match="--preset paper sets --foci-rule every-node"):
        parse("--preset", "paper", "--foci-rule", "skip-structural")
    assert parse("--preset", "paper", "--max-perplexity", "120").max_perplexity == 120.0  # a space saver


def test_resume_compares_every_record_setting_and_no_run_setting():
    """The fields compared on resume come from the dataclass: a new record field is compared without
    any list to update; run settings (batch sizes, window, ...) never refuse a resume."""
    from dataclasses import fields

    from paraamr.builder.settings import RecordSettings, RunSettings

    base = RecordSettings()
    special = {
        "max_relative_perplexity": 2.0,
        "num_beams": 3,
        "dtype": "float16",
        "amr_input": "g.amr",
        "foci": 2,
        "max_perplexity": 50.0,
        "foci_rule": "every-node",
        "linearization": "penman",
        "tagging": "untagged" if base.tagging == "tagged" else "tagged",
    }
    for f in fields(RecordSettings):
        if f.name in ("input", "dataset", "min_similarity", "min_quality"):
            continue  # one input at a time (amr_input stands for them); the minimums need their models
        default = getattr(base, f.name)
        value = special.get(f.name) or {bool: True, int: 7, float: 0.25}.get(type(default), "other")
        changed = base.replace(**{f.name: value})
        assert (
            base.differences(changed) and f"--{f.name.replace('_', '-')} was" in base.differences(changed)[0]
        )
    assert not set(f.name for f in fields(RunSettings)) & set(f.name for f in fields(RecordSettings))
