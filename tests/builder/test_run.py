"""End-to-end runs of ``generate.py`` on tiny random models: one process in-process, two CPU processes
under ``torchrun``, runs killed with SIGKILL and resumed, hostile input, the folder read back with
``load_dataset``, and CPU processes sharing the cores they may use. The expensive runs are module
fixtures shared between assertions."""

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

import pytest
from entries import generate as main
from oracle import assert_same
from oracle import failures as read_failures
from oracle import records as read_records
from tinyargs import model_args

from paraamr.builder.partition import Plan, partition
from paraamr.builder.readers import read_input
from paraamr.builder.rows import row_task

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


CHUNKS = ["--task-rows", "2", "--window", "2"]  # a task of two rows: many kill points


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


@pytest.mark.slow
def test_the_progress_bar_counts_the_rows_of_both_processes(two_proc):
    log = (two_proc.parent / "log.txt").read_text()
    assert "generate (2 processes)" in log and f"{len(HOSTILE)}/{len(HOSTILE)} [" in log and "100%" in log


@pytest.mark.slow
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


@pytest.mark.slow
def test_two_processes_give_the_records_of_one(one_proc, two_proc):
    records = assert_same(one_proc, two_proc).records
    assert any(r["paraphrases"] for r in records.values())  # the paper sentence parses to a real graph


@pytest.mark.slow
def test_each_task_holds_the_rows_its_ids_hash_to_and_ran_once(hostile, two_proc, tmp_path):
    plan = Plan.load(two_proc)
    ids = Counter(row.id for row in read_input(hostile))
    assert plan.count == 12 and sum(plan.rows.values()) == len(HOSTILE)  # 24 rows, 2 a task
    assert [p.name for p in (two_proc / ".paraamr" / "input").iterdir()] == ["plan.json"]  # finalized
    assert not list((two_proc / ".paraamr").glob("progress-*"))  # both processes' counts
    cut = partition(tmp_path, read_input(hostile), task_rows=2, at_least=2)  # the same cut again
    assert (cut.count, cut.rows, cut.digest) == (plan.count, plan.rows, plan.digest)
    for task, rows in plan.rows.items():
        mine = [row.id for row in cut.read(task)]
        assert len(mine) == rows and {row_task(i) % plan.count for i in mine} == {task}
        assert all(mine.count(i) == ids[i] for i in mine)  # repeats meet in one task
        marker = json.loads((two_proc / ".paraamr" / "generate" / f"task-{task:06d}.json").read_text())
        assert marker["stats"]["inputs"] == rows


@pytest.mark.slow
def test_counts_reconcile_and_hostile_lines_are_failures(hostile, two_proc):
    summary = json.loads((two_proc / "summary.json").read_text())
    counts = summary["counts"]
    assert counts["inputs"] == len(HOSTILE) == counts["records"] + counts["failures"]
    assert summary["reconciles"] and summary["complete"]
    assert counts["records"] == len(read_records(two_proc))
    assert counts["failures"] == len(read_failures(two_proc))
    assert summary["settings"]["max_perplexity"] is None and summary["run"]["tasks"] == 12
    by_reason = Counter((f["stage"], f["reason"].split(" (")[0]) for f in read_failures(two_proc))
    assert by_reason[("input", "duplicate")] == 2  # the dog line and the paper sentence, once each
    assert by_reason[("input", "empty or whitespace-only")] == 2
    assert by_reason[("input", "longer than 1000 characters")] == 1
    (bad,) = [f for f in read_failures(two_proc) if f["raw_b64"]]
    assert "invalid UTF-8" in bad["reason"] and "\ufffd" in bad["text"]
    # each failure names its line (before: nothing did; two blank lines were two equal rows), by
    # the file's name only (the folders are the machine's, and the failures are published)
    lines = {f["where"] for f in read_failures(two_proc)}
    every = {f"hostile.txt:{n}" for n in range(1, len(HOSTILE) + 1)}
    assert len(lines) == counts["failures"] and lines <= every
    assert f"hostile.txt:{HOSTILE.index(b'') + 1}" in lines
    texts = {r["text"] for r in read_records(two_proc)} | {f["text"] for f in read_failures(two_proc)}
    assert "ctrl\x00\x07\x1b chars in the line" in texts and "Ceci n'est pas anglais. 这不是英语。" in texts


@pytest.mark.slow
def test_load_dataset_reads_both_configs(two_proc, tmp_path):
    from datasets import load_dataset

    # A fresh cache: datasets 5 served a stale cached copy of an earlier folder of the same name.
    cache = str(tmp_path / "hf-cache")
    default = load_dataset(str(two_proc), split="train", cache_dir=cache)
    pairs = load_dataset(str(two_proc), "pairs", split="train", cache_dir=cache)
    records = read_records(two_proc)
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


@pytest.mark.slow
def test_kill_9_and_resume_equals_an_uninterrupted_run(tiny_models, hostile, two_proc, tmp_path):
    out = tmp_path / "out"
    args = ["--input", str(hostile), "--output", str(out), *CHUNKS, *_models(tiny_models)]
    markers = out / ".paraamr" / "generate"

    def done() -> int:  # completed tasks (the final shards are named when the run completes)
        return len(list(markers.glob("task-*.json")))

    # kill 1: as soon as a first task is done; kill 2: after more tasks of the second session
    for target in (lambda: done() >= 1, lambda: done() >= 6):
        proc = _torchrun(args, tmp_path / "log.txt", start_new_session=True)
        hit = _wait_for(target, proc)
        _kill_tree(proc)  # torchrun and its workers: a worker left alive would hold the folder's lock
        assert hit, (tmp_path / "log.txt").read_text()[-3000:]
        assert done() < len(Plan.load(out).rows)  # really interrupted
    proc = _torchrun(args, tmp_path / "log.txt")
    assert proc.wait(timeout=400) == 0, (tmp_path / "log.txt").read_text()[-3000:]
    assert_same(out, two_proc, exact=True)  # same windows: bit for bit
    assert not list(out.rglob("*.tmp"))


def test_a_complete_run_started_again_changes_nothing(tiny_models, hostile, one_proc):
    before = sorted(p.name for p in one_proc.rglob("*.parquet"))
    assert main(["--input", str(hostile), "--output", str(one_proc), *CHUNKS, *_models(tiny_models)]) == 0
    assert sorted(p.name for p in one_proc.rglob("*.parquet")) == before


def test_finalize_of_a_run_with_lost_files_names_each_task_and_the_rerun_restores_it(
    tiny_models, hostile, one_proc, tmp_path, capsys
):
    """A run left for ``paraamr finalize`` (``--shard 0/1``), then a marker cut short and a part
    of another task deleted: finalize refuses naming both tasks and printing the run's command
    (exit 1, nothing finalized); the same command does those two tasks again, and the finalized
    folder equals an uninterrupted run's."""
    from paraamr.cli import main as paraamr

    out = tmp_path / "out"
    args = ["--input", str(hostile), "--output", str(out), *CHUNKS, *_models(tiny_models), "--shard", "0/1"]
    assert main(args) == 0
    markers = sorted((out / ".paraamr" / "generate").glob("task-*.json"))
    markers[0].write_text(markers[0].read_text()[:20])
    cut, lost = (int(p.stem[len("task-") :]) for p in markers[:2])
    (part,) = (out / ".paraamr" / "parts" / "pairs" / "train").glob(f"t{lost:06d}-*")
    part.unlink()
    capsys.readouterr()
    assert paraamr(["finalize", str(out)]) == 1
    captured = capsys.readouterr()
    assert f"2 of {len(Plan.load(out).rows)} tasks not done (unreadable: {cut} (" in captured.err
    assert f"broken: {lost} ({part.relative_to(out)} is missing)" in captured.err
    assert "run the same command to do them" in captured.err and not (out / "summary.json").exists()
    assert captured.out.splitlines()[1].startswith("paraamr generate --input ")
    assert main(args) == 0 and paraamr(["finalize", str(out)]) == 0
    assert_same(out, one_proc)


def test_max_shard_size_cuts_the_finished_shards(tiny_models, hostile, one_proc, tmp_path):
    out = tmp_path / "out"
    args = ["--input", str(hostile), "--output", str(out), "--max-shard-size", "1KB", *_models(tiny_models)]
    assert main(args) == 0
    shards = sorted(p.name for p in (out / "data" / "pairs").glob("*.parquet"))
    assert len(shards) > 1 and shards == [
        f"train-{i:05d}-of-{len(shards):05d}.parquet" for i in range(len(shards))
    ]
    assert_same(out, one_proc)  # the same records, cut differently
    assert json.loads((out / "summary.json").read_text())["settings"]["max_shard_size"] == "1KB"


def test_a_later_task_rows_changes_nothing_and_says_so(tiny_models, hostile, one_proc, tmp_path, capsys):
    """The input is cut into tasks once: a later shard's --task-rows is said to change nothing, and
    the summary gives the --task-rows the run was cut with (it gave the last invocation's)."""
    out = tmp_path / "out"
    args = ["--input", str(hostile), "--output", str(out), "--window", "2", *_models(tiny_models)]
    assert main([*args, "--task-rows", "2", "--shard", "0/2"]) == 0
    count = Plan.load(out).count
    capsys.readouterr()
    assert main([*args, "--task-rows", "5", "--shard", "1/2", "--finalize", "auto"]) == 0
    said = f"--task-rows 5 changes nothing: the run was cut into {count} tasks of 2 rows at its start"
    assert said in capsys.readouterr().err
    assert json.loads((out / "summary.json").read_text())["settings"]["task_rows"] == 2
    assert_same(out, one_proc)


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


def test_a_run_that_failed_as_it_started_takes_a_mended_model_without_overwrite(
    tiny_models, hostile, tmp_path, capsys
):
    """A realizer that will not load stops the run before any task: the next run, with the
    model mended, starts over in that folder and says so; the folder then binds its settings."""
    import shutil

    broken = shutil.copytree(tiny_models["realizer"], tmp_path / "broken")
    (broken / "model.safetensors").write_bytes(b"")  # cut to nothing: found, then not loaded
    out = tmp_path / "out"
    args = ["--input", str(hostile), "--output", str(out), *_models(tiny_models)]
    assert main([*args, "--realizer-model", str(broken)]) == 1
    assert (out / ".paraamr" / "settings.json").is_file()
    capsys.readouterr()
    assert main(args) == 0
    assert capsys.readouterr().err.count(f"{out}: the run there finished no task; it starts over") == 1
    assert main([*args, "--realizer-model", str(broken)]) == 1
    assert "holds a run with other settings" in capsys.readouterr().err


def test_folder_with_foreign_files_is_refused(tiny_models, hostile, tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["--input", str(hostile), "--output", str(tmp_path), *_models(tiny_models)]) == 1
    assert "holds no paraamr run" in capsys.readouterr().err and (tmp_path / "notes.txt").exists()


@pytest.mark.parametrize(
    ("kind", "file", "damage"),
    [
        ("parser", "model.safetensors", b""),  # cut to nothing
        ("parser", "tokenizer.json", b'{"truncated'),
        ("lm", "config.json", b"{}"),  # no model_type
        ("realizer", "generation_config.json", b"[1]"),
    ],
)
def test_a_damaged_model_folder_is_one_line_naming_it(tiny_models, tmp_path, capsys, kind, file, damage):
    import shutil

    models = {k: tmp_path / k for k in tiny_models}
    for k, path in tiny_models.items():
        shutil.copytree(path, models[k])
    (models[kind] / file).write_bytes(damage)
    text = ROOT / "examples" / "sentences.txt"
    args = ["--input", str(text), "--output", str(tmp_path / "out"), *_models(models)]
    assert main(args) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{kind} model {models[kind]} cannot be loaded (" in err, err
    assert "internal error" not in err and str(text) not in err


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
    assert "max perplexity none (each paraphrase kept with its perplexity), relative none," in proc.stdout
    assert _heavy_imports(proc.stderr) == set() and not (tmp_path / "out").exists()


def test_dry_run_of_graphs_on_stdin_says_so(tiny_models, tmp_path, monkeypatch, capsys):
    """Before: ``--amr-input - --dry-run`` was an internal error (it counted the rows of no file)."""
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"(b / boy)\n")))
    argv = ["--amr-input", "-", "--output", str(tmp_path / "out"), *_models(tiny_models), "--dry-run"]
    assert main(argv) == 0
    assert "input:     -: stdin (not counted)" in capsys.readouterr().out


def test_dry_run_checks_what_the_run_checks_first(tiny_models, tmp_path, monkeypatch, capsys):
    """A bad --push-to-hub id is refused by a dry run as by the run (it printed the plan, exit 0);
    with --no-download a missing model is what the run would fail on (it said "fetched on first use")."""
    sentences = str(ROOT / "examples" / "sentences.txt")
    out = str(tmp_path / "out")
    assert (
        main(
            [
                "--input",
                sentences,
                "--output",
                out,
                *_models(tiny_models),
                "--push-to-hub",
                "bad//id",
                "--dry-run",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "--push-to-hub 'bad//id': not a repo id" in err
    assert "repo_type" not in err  # huggingface_hub's advice names an argument no command has
    assert (
        main(
            ["--input", sentences, "--output", out, *_models(tiny_models), "--finalize", "auto", "--dry-run"]
        )
        == 2
    )
    assert "--finalize goes with --shard" in capsys.readouterr().err
    monkeypatch.setenv("PARAAMR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert main(["--input", sentences, "--output", out, "--no-download", "--dry-run"]) == 1
    printed = capsys.readouterr()
    assert printed.out.count("(MISSING: --no-download: the run would fail)") == 3
    assert "fetch it with: paraamr models download gpt2" in printed.err and not (tmp_path / "out").exists()


def test_preset_paper_is_a_record_settings_value():
    from paraamr.commands.generate import build_parser, settings_from_args
    from paraamr.errors import UsageError
    from paraamr.settings import RecordSettings

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
    with pytest.raises(UsageError, match=r"--preset paper sets --foci-rule every-node; drop that option$"):
        parse("--preset", "paper", "--foci-rule", "skip-structural")
    assert parse("--preset", "paper", "--max-perplexity", "120").max_perplexity == 120.0  # a space saver
    # the paper has no other filter and makes every node but the root a focus: these were taken and
    # recorded (a run with --heuristic-foci made 8 candidates of the paper's every-node ones)
    for argv, told in (
        (["--heuristic-foci"], "no --heuristic-foci"),
        (["--similarity-model", "all-MiniLM-L6-v2", "--min-similarity", "0.5"], "no --similarity-model, no"),
        (["--max-relative-perplexity", "2"], "no --max-relative-perplexity"),
        (["--quality-model", "paraamr-quality"], "no --quality-model"),
    ):
        those = "those options" if ", no" in told else "that option"
        with pytest.raises(UsageError, match=f"^--preset paper sets {told}.*; drop {those}$"):
            parse("--preset", "paper", *argv)


def test_resume_compares_every_record_setting_and_no_run_setting():
    """The fields compared on resume come from the dataclass: a new record field is compared without
    any list to update; run settings (batch sizes, window, ...) never refuse a resume."""
    from dataclasses import fields

    from paraamr.options import option_flag
    from paraamr.settings import RecordSettings, RunSettings

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
        "backend": "transformers" if base.backend == "ctranslate2" else "ctranslate2",
        "compute_type": "int8",
        "input_format": "csv",
    }
    for f in fields(RecordSettings):
        if f.name in ("input", "dataset", "min_similarity", "min_quality"):
            continue  # one input at a time (amr_input stands for them); the minimums need their models
        default = getattr(base, f.name)
        value = special.get(f.name) or {bool: True, int: 7, float: 0.25}.get(type(default), "other")
        changed = base.replace(**{f.name: value})
        assert base.differences(changed) and f"{option_flag(f)} was" in base.differences(changed)[0]
    assert not set(f.name for f in fields(RunSettings)) & set(f.name for f in fields(RecordSettings))


def test_cpu_processes_share_the_cores_they_may_use():
    """Under ``taskset`` (or cgroups, or Slurm) a process may use fewer cores than the machine has:
    its torch threads are its share of those, not of ``os.cpu_count()``."""
    code = (
        "import torch; from paraamr.tasks import share_cores; "
        "torch.set_num_threads(8); share_cores(1); print(torch.get_num_threads())"
    )
    out = subprocess.run(
        ["taskset", "-c", "0", sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "1"


def test_a_finalized_run_keeps_the_plan_of_its_input_not_the_input(tiny_models, tmp_path, capsys):
    """The input cut into tasks is a copy of the whole input: once the run is finalized nothing
    reads it, so it goes; the plan stays, and the same command run again changes nothing. The
    processes' progress counts go too (before: ``progress-00000-of-00001.json`` stayed)."""
    source = tmp_path / "in.txt"
    source.write_text("".join(f"the man said {i} things to the woman .\n" for i in range(4)))
    out = tmp_path / "out"
    args = ["--input", str(source), "--output", str(out), "--task-rows", "2", *_models(tiny_models)]
    assert main(args) == 0
    assert sorted(p.name for p in (out / ".paraamr" / "input").iterdir()) == ["plan.json"]
    assert not list((out / ".paraamr").glob("progress-*"))
    assert sum(Plan.load(out).rows.values()) == 4
    before = read_records(out)
    capsys.readouterr()
    assert main(args) == 0
    assert "reconciles" in capsys.readouterr().err and read_records(out) == before


@pytest.mark.parametrize("option", ["--input", "--amr-input"])
def test_an_input_that_changes_while_it_is_cut_is_refused_and_the_next_run_takes_it(
    option, tiny_models, tmp_path, capsys, monkeypatch
):
    """Before: a line appended (or the file cut short) while the run read it gave a finished run
    of the rows read, under the identity of the file as it was checked; the next run then refused
    the folder ("the input changed"). Now the cut is undone with one line (and the empty folders it
    made), and the next run starts."""
    import paraamr.builder.state as state

    source = tmp_path / "in.txt"
    if option == "--input":
        rows, more = [f"the man said {i} things to the woman .\n" for i in range(4)], "one line more .\n"
    else:
        graph = "# ::id g{}\n(s / say-01 :ARG0 (m / man) :ARG1 (t / thing :quant {}))\n\n"
        rows = [graph.format(i, i) for i in range(4)]
        more = "# ::id g9\n(w / want-01 :ARG0 (b / boy))\n"
    source.write_text("".join(rows))
    before = source.stat().st_size
    cut = state.partition

    def cut_while_written(folder, rows, **kwargs):
        plan = cut(folder, rows, **kwargs)
        with open(source, "a") as f:
            f.write(more)
        return plan

    monkeypatch.setattr(state, "partition", cut_while_written)
    out = tmp_path / "runs" / "out"
    args = [option, str(source), "--output", str(out), *_models(tiny_models)]
    assert main(args) == 1
    err = capsys.readouterr().err
    said = f"{source}: changed while it was read (its size was {before} bytes, now {before + len(more)})"
    assert err == f"paraamr generate: {said}; run again\n"
    assert not out.parent.exists()  # nor the folders the run made for it
    monkeypatch.undo()
    assert main(args) == 0
    assert len(read_records(out)) == 5


def test_damaged_state_of_a_run_cut_in_shards_is_refused_naming_it(tiny_models, tmp_path, capsys):
    """Under DIR/.paraamr, a task's input file cut short or grown, the plan or the settings lost
    while tasks are done: the next shard or a resume read on and finalize said 'reconciles' over
    lost, duplicated or mixed records. Now each is one line naming the file, and the way out."""
    source = tmp_path / "in.txt"
    source.write_text("".join(f"the man said {i} things to the woman .\n" for i in range(12)))
    out = tmp_path / "out"
    args = ["--input", str(source), "--output", str(out), "--task-rows", "2", *_models(tiny_models)]
    assert main([*args, "--shard", "0/2"]) == 0
    capsys.readouterr()
    plan = Plan.load(out)
    odd = next(k for k in plan.of((1, 2)))
    task_file = out / ".paraamr" / "input" / f"task-{odd:06d}.jsonl"
    lines = task_file.read_text().splitlines(keepends=True)
    redo = "run the same command with --overwrite to build the run again"
    for damaged, said in (
        (lines[:-1], f"{task_file}: {len(lines) - 1:,} rows where the plan counts {len(lines):,}; {redo}"),
        ([*lines, lines[0]], f"{task_file}: damaged near line {len(lines) + 1}"),
        ([*lines[:-1], lines[-1][:20]], f"{task_file}: damaged near line {len(lines)}"),
    ):
        task_file.write_text("".join(damaged))
        assert main([*args, "--shard", "1/2"]) == 1
        assert capsys.readouterr().err.startswith(f"paraamr generate: {said}")
    task_file.write_text("".join(lines))
    (out / ".paraamr" / "input" / "plan.json").rename(tmp_path / "plan.json")
    assert main([*args, "--shard", "1/2"]) == 1
    assert "the plan of its tasks is missing" in capsys.readouterr().err
    (tmp_path / "plan.json").rename(out / ".paraamr" / "input" / "plan.json")
    (out / ".paraamr" / "settings.json").unlink()
    assert main([*args, "--shard", "1/2", "--foci", "1"]) == 1
    assert f"{out / '.paraamr' / 'settings.json'}: missing, while" in capsys.readouterr().err


def test_a_cut_that_fails_leaves_none_of_its_files(tmp_path):
    """Before: a full disk (or a read error) while the input was cut left the spool, a copy of the
    whole input, and the tasks' files written so far under ``.paraamr/input/``."""
    import errno

    from paraamr.builder.rows import decode_bytes

    def rows():
        for i in range(50):
            yield decode_bytes(f"sentence {i} .".encode())
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        partition(tmp_path, rows(), task_rows=5)
    assert not (tmp_path / ".paraamr" / "input").exists()
    plan = partition(tmp_path, itertools.islice(rows(), 50), task_rows=5)  # and the next cut is whole
    written = sorted(p.name for p in (tmp_path / ".paraamr" / "input").iterdir())
    assert plan.count == 10 and written == ["plan.json", *(f"task-{k:06d}.jsonl" for k in range(10))]
