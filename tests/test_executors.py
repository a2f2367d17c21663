"""A generate run handed to datatrove's executors (``--executor local|slurm``): its tasks are the
run's shards, datatrove marks each complete, and the finalized folder holds exactly what a run in
one process holds. The Slurm executor runs against stand-ins on PATH: an ``sbatch`` that runs each
array task in turn, as Slurm would (dependencies first), with ``srun`` and ``scontrol``. Tiny
models, AMR input."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from oracle import assert_same
from pausing import pause_env
from terminal import Terminal
from tinyargs import model_args

from paraamr.cli import main

GRAPHS = [
    f"# ::id g{i}\n(s / say-01 :ARG0 (m / man) :ARG1 (t / thing :quant {i}) :ARG2 (w / woman))"
    for i in range(6)
] + ["# ::id g2\n(x / repeat-01)", "# ::id bad\n(x / broken :ARG0"]
pytest.importorskip("datatrove", reason="the optional extra paraamr[cluster]")


@pytest.fixture(scope="module")
def graphs(tmp_path_factory) -> Path:
    """GRAPHS in one file, every run's input (a failure row names it)."""
    path = tmp_path_factory.mktemp("input") / "graphs.amr"
    path.write_text("\n\n".join(GRAPHS) + "\n")
    return path


def _generate(
    graphs: Path,
    tiny: dict,
    out: Path,
    *extra: str,
    path: str | None = None,
    code: int = 0,
    command: tuple[str, ...] = ("-m", "paraamr", "generate"),
) -> str:
    env = {"HF_HUB_OFFLINE": "1", **os.environ, "OMP_NUM_THREADS": "1"}  # (online with the hub fixture)
    if path:
        env["PATH"] = f"{path}:{env['PATH']}"
    argv = ["--amr-input", str(graphs), "--output", str(out), *model_args(tiny), "--no-progress", *extra]
    proc = subprocess.run(
        [sys.executable, *command, *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == code, proc.stderr[-3000:]
    return proc.stderr


@pytest.fixture(scope="module")
def one_process(graphs, tiny_models, tmp_path_factory) -> Path:
    """The folder of the run in one process, which every executor's run must equal."""
    out = tmp_path_factory.mktemp("one") / "one"
    _generate(graphs, tiny_models, out)
    return out


@pytest.mark.slow
def test_the_local_executor_runs_the_tasks_and_finalizes_like_one_process(
    graphs, tiny_models, tmp_path, one_process
):
    out = tmp_path / "tasks"
    # more jobs than the 7 sources: only the jobs with rows run (the others were 33 empty runs)
    _generate(graphs, tiny_models, out, "--executor", "local", "--tasks", "40", "--workers", "2")
    assert_same(out, one_process)
    plan = json.loads((out / ".paraamr" / "input" / "plan.json").read_text())
    busy = sorted(f"{int(k) % 40:05d}" for k in plan["rows"])
    completions = out / ".paraamr" / "tasks" / "generate" / "completions"
    assert sorted(p.name for p in completions.iterdir()) == busy and 2 <= len(busy) <= 7
    summary = json.loads((out / "summary.json").read_text())
    # datatrove's statistics of the tasks add up to the run's counts (before: empty, 0 seconds)
    folder = out / ".paraamr" / "tasks" / "generate" / "stats"
    stats = [json.loads(p.read_text())[0] for p in folder.iterdir()]

    def total(value):  # (datatrove writes a count of one as the number itself)
        return value["total"] if isinstance(value, dict) else value

    for name in ("inputs", "records", "failures"):
        assert sum(total(s["stats"].get(name, 0)) for s in stats) == summary["counts"][name], name
    assert all(s["time_stats"]["total"] > 0 for s in stats if s["stats"])
    assert summary["run"]["shards"] == 40
    # the run's time, not the finalize's alone: at least its stages' time over its two workers
    assert summary["seconds_this_session"] >= sum(summary["counts"]["seconds_by_stage"].values()) / 2
    again = ["--executor", "local", "--tasks", "40", "--workers", "2", "--license", "mit"]
    said = _generate(graphs, tiny_models, out, *again)
    assert "all 40 tasks have already been completed" in said.replace("Not doing anything as ", "")
    assert_same(out, one_process)
    # the rerun's license is the card's, as a rerun in one process makes it (it kept the old card)
    assert "\nlicense: mit\n" in (out / "README.md").read_text()


@pytest.mark.slow
def test_a_failed_task_is_one_line_its_traceback_in_its_log_and_a_mended_run_completes(
    graphs, tiny_models, tmp_path, one_process
):
    """A realizer that will not load fails the tasks that have rows: the terminal gets datatrove's
    progress lines and the error's one line (no traceback, no library warning), the task's log file
    keeps the traceback; the run, with the model mended, starts over and completes."""
    import shutil

    broken = shutil.copytree(tiny_models["realizer"], tmp_path / "broken")
    (broken / "model.safetensors").write_bytes(b"")  # cut to nothing: found, then not loaded
    out = tmp_path / "tasks"
    run = ("--executor", "local", "--tasks", "2", "--workers", "2")
    err = _generate(graphs, tiny_models, out, *run, "--realizer-model", str(broken), code=1)
    assert "Traceback" not in err and "Warning" not in err, err
    said = [line for line in err.splitlines() if line.startswith("paraamr")]
    assert len(said) == 1, err
    assert said[0].startswith(f"paraamr generate: realizer model {broken} cannot be loaded ("), err
    logs = (out / ".paraamr" / "tasks" / "generate" / "logs").glob("task_*.log")
    assert any("Traceback" in log.read_text() for log in logs)
    err = _generate(graphs, tiny_models, out, *run)
    assert err.count("the run there finished no task; it starts over") == 1, err
    assert_same(out, one_process)


@pytest.mark.slow
def test_generate_py_runs_the_local_executor_as_paraamr_generate_does(tiny_models, tmp_path):
    """Before: `python generate.py --input ... --executor local --workers 2` never ended: datatrove's
    workers (forkserver) import the main script again, and generate.py ran the whole command in each."""
    text = tmp_path / "in.txt"
    text.write_text("".join(f"the man said {i} things to the woman .\n" for i in range(8)))
    script = str(Path(__file__).resolve().parents[1] / "generate.py")
    run = ("--executor", "local", "--tasks", "2", "--workers", "2", "--task-rows", "3")
    out, argv = tmp_path / "tasks", ["--input", str(text), *model_args(tiny_models), "--no-progress"]
    command = [sys.executable, script, *argv, "--output", str(out), *run]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert main(["generate", *argv, "--output", str(tmp_path / "one")]) == 0
    assert_same(out, tmp_path / "one")


@pytest.mark.slow
def test_ctrl_c_stops_the_workers_with_one_line_and_the_rerun_completes(
    graphs, tiny_models, tmp_path, one_process
):
    """Ctrl-C typed while two workers are each held mid-window: the workers leave it to the
    launcher (a SIGINT sent to them alone changes nothing), which ends the pool; one line, exit
    130, no worker's traceback, no worker left; the rerun equals a run in one process."""
    out = tmp_path / "tasks"
    argv = ["--amr-input", str(graphs), "--output", str(out), *model_args(tiny_models), "--window", "1"]
    run = ["--executor", "local", "--tasks", "2", "--workers", "2"]
    term = Terminal(["-m", "paraamr", "generate", *argv, *run, "--progress", "log"], "window", tmp_path)
    term.read_until("paraamr: paused at window", count=2)  # each worker
    workers = [psutil.Process(p) for p in term.session() if psutil.Process(p).ppid() != term.pid]
    assert len(workers) == 2  # (the launcher's own children: the fork server, its manager, a tracker)
    for worker in workers:
        worker.send_signal(signal.SIGINT)
    time.sleep(2)
    assert all(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in workers), term.output[-3000:]
    term.ctrl_c()
    code, text = term.wait()
    assert code == 130 and "Traceback" not in text, text[-3000:]
    lines = [line.removeprefix("^C") for line in text.splitlines() if "paraamr generate:" in line]
    assert lines == ["paraamr generate: interrupted"], text[-3000:]
    assert not [p for p in psutil.process_iter(["cmdline"]) if str(out) in " ".join(p.info["cmdline"] or [])]
    _generate(graphs, tiny_models, out, *run)
    assert_same(out, one_process)


@pytest.mark.slow
def test_a_launcher_killed_with_9_leaves_no_worker_or_manager_and_the_rerun_completes(
    graphs, tiny_models, tmp_path, one_process
):
    """kill -9 of the launcher while two workers are each mid-window: its workers, datatrove's
    manager, the fork server and the resource tracker all ended within seconds (before: each stayed,
    the workers holding their tasks' locks, so a rerun found the folder 'being written'); the
    rerun equals a run in one process."""
    out = tmp_path / "tasks"
    argv = ["--amr-input", str(graphs), "--output", str(out), *model_args(tiny_models), "--window", "1"]
    run = ["--executor", "local", "--tasks", "2", "--workers", "2"]
    log = tmp_path / "log.txt"
    env = pause_env("window", {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"})
    command = [sys.executable, "-m", "paraamr", "generate", *argv, *run, "--progress", "log"]
    with log.open("w") as stream:
        launcher = subprocess.Popen(command, stdout=stream, stderr=stream, env=env, start_new_session=True)
    end = time.monotonic() + 300
    while log.read_text().count("paused at window") < 2:  # each worker
        assert launcher.poll() is None and time.monotonic() < end, log.read_text()[-3000:]
        time.sleep(0.1)
    family = psutil.Process(launcher.pid).children(recursive=True)
    assert len(family) >= 4  # the manager, the resource tracker, the fork server, two workers
    launcher.kill()
    launcher.wait()
    end = time.monotonic() + 30
    while left := [p for p in family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]:
        if time.monotonic() > end:
            for p in left:
                p.kill()
            pytest.fail(f"left running: {[' '.join(p.cmdline())[:100] for p in left]}")
        time.sleep(0.2)
    _generate(graphs, tiny_models, out, *run)
    assert_same(out, one_process)


SBATCH = """#!/usr/bin/env bash
# A stand-in for Slurm's sbatch: the script from stdin or a file, each task of its array in turn.
script=$(mktemp)
if [ -n "${@: -1}" ] && [ -f "${@: -1}" ]; then cp "${@: -1}" "$script"; else cat > "$script"; fi
echo "$@" >> "$SBATCH_LOG"; grep '^#SBATCH' "$script" >> "$SBATCH_LOG"
range=$(sed -n 's/^#SBATCH --array=\\([0-9]*\\)-\\([0-9]*\\).*/\\1 \\2/p' "$script"); set -- ${range:-0 0}
for i in $(seq "$1" "$2"); do
  SLURM_ARRAY_TASK_ID=$i SLURM_JOB_ID=7 SLURM_NODELIST=localhost bash "$script" >> "$SBATCH_LOG.out" 2>&1
done
echo "Submitted batch job $RANDOM"
"""
SRUN = """#!/usr/bin/env bash
while [[ "$1" == -* ]]; do case "$1" in -n) shift 2;; *) shift;; esac; done; exec "$@"
"""
SCONTROL = """#!/usr/bin/env bash
echo localhost  # scontrol show hostnames: the one node
"""


SECRET = "hf_slurmJobSecret0123456789"


@pytest.mark.slow
def test_the_slurm_executor_submits_an_array_and_a_finalize_job_after_it(
    graphs, tiny_models, tmp_path, one_process, hub
):
    """... and uploads the run from its finalize job, the token written in none of the jobs' files
    (datatrove saves each step, the task's command line and the upload's settings with it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("sbatch", SBATCH), ("srun", SRUN), ("scontrol", SCONTROL)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod((bin_dir / name).stat().st_mode | stat.S_IEXEC)
    os.environ["SBATCH_LOG"] = str(tmp_path / "sbatch.log")
    out = tmp_path / "tasks"
    try:
        _generate(
            graphs,
            tiny_models,
            out,
            *("--executor", "slurm", "--tasks", "2", "--slurm-partition", "cpu", "--slurm-time", "1:00:00"),
            *("--push-to-hub", "me/slurm", "--token", SECRET),
            path=f"{bin_dir}:{Path(sys.executable).parent}",
        )
    finally:
        del os.environ["SBATCH_LOG"]
    assert "data/default/train-00000-of-00001.parquet" in hub.dataset("me/slurm").files("main")
    leaks = [p for p in out.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert not leaks  # before: tasks/generate/executor.json (its argv), tasks/finalize/executor.{json,pik}
    log = (tmp_path / "sbatch.log").read_text()
    assert (
        "#SBATCH --array=0-1" in log and "#SBATCH --partition=cpu" in log and "--dependency=afterok:" in log
    )
    print((tmp_path / "sbatch.log.out").read_text()[-3000:])  # shown when the comparison fails
    assert_same(out, one_process)


def test_executor_options_that_do_not_go_together_are_one_line_errors(tmp_path):
    (tmp_path / "in.txt").write_text("A sentence.\n")
    for extra, message in (
        (["--shard", "0/2"], "--executor cuts the run into --tasks itself: leave out --shard"),
        (
            ["--tasks", "0"],
            "argument --tasks: must be an integer in [1, 100000], got 0 (see paraamr generate --help)",
        ),
        # datatrove lists every job (and, on Slurm, submits arrays of 1,001): this ran for hours
        (
            ["--tasks", "1000000000"],
            "argument --tasks: must be an integer in [1, 100000], got 1000000000 (see paraamr generate --help)",  # noqa: E501  # noqa: E501
        ),
        (
            ["--executor", "none", "--workers", "-1"],
            "argument --workers: must be an integer in [1, 100000], got -1 (see paraamr generate --help)",
        ),
        (
            ["--slurm-gpus", "-1"],
            "argument --slurm-gpus: must be an integer >= 0, got -1 (see paraamr generate --help)",
        ),
        (["--executor", "slurm"], "--executor slurm needs --slurm-partition"),
        (
            ["--overwrite"],
            "--overwrite does not go with --executor: remove the folder, or give a new --output",
        ),
        # a dry run refuses what the run refuses (before: exit 0, and the plan named no executor)
        (["--shard", "0/2", "--dry-run"], "--executor cuts the run into --tasks itself: leave out --shard"),
        (["--executor", "slurm", "--dry-run"], "--executor slurm needs --slurm-partition"),
    ):
        executor = [] if "--executor" in extra else ["--executor", "local"]
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "paraamr",
                "generate",
                "--input",
                "in.txt",
                "--output",
                "o",
                *executor,
                *extra,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2 and proc.stderr.strip().endswith(message), proc.stderr
        assert not (tmp_path / "o").exists()
    executor = ["--dry-run", "--executor", "local", "--tasks", "4", "--workers", "2"]
    plan = subprocess.run(
        [sys.executable, "-m", "paraamr", "generate", "--input", "in.txt", "--output", "o", *executor],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert plan.returncode == 0 and "executor:  local, 4 tasks, 2 at a time" in plan.stdout.splitlines()


def test_paraphrase_documents_in_a_datatrove_pipeline_of_ones_own(tiny_models, tmp_path):
    """A user's own pipeline (reader, our step, writer) on datatrove's local executor: every
    document comes out, paraphrased or with the reason it could not be, and datatrove's statistics
    count the models' time (before: only the metadata's, so the step showed 0 seconds)."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    from paraamr.executors import ParaphraseDocuments

    docs = [("a", "The boy wants to go."), ("b", "x" * 5000), ("c", "The boy wants to go.")]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "docs.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs)
    )
    models = {f"{kind}_model": str(tiny_models[kind]) for kind in ("parser", "realizer", "lm")}
    step = ParaphraseDocuments(batch_size=2, **models, max_perplexity=None)
    LocalPipelineExecutor(
        [JsonlReader(str(tmp_path / "in")), step, JsonlWriter(str(tmp_path / "out"), compression=None)],
        tasks=1,
        logging_dir=str(tmp_path / "logs"),
    ).run()
    rows = {}
    for path in (tmp_path / "out").glob("*.jsonl"):
        rows |= {d["id"]: d["metadata"] for d in map(json.loads, path.read_text().splitlines())}
    assert sorted(rows) == ["a", "b", "c"]
    assert rows["a"]["paraphrases"] and rows["a"]["paraphrases"] == rows["c"]["paraphrases"]
    assert "longer than" in rows["b"]["paraamr_failure"] and rows["b"]["paraphrases"] == []
    stats = json.loads((tmp_path / "logs" / "stats.json").read_text())
    ours = next(s for s in stats if s["name"].endswith(ParaphraseDocuments.name))
    assert ours["stats"] == {"paraphrased": 2, "paraphrases": 2 * len(rows["a"]["paraphrases"]), "failed": 1}
    timed = ours["time_stats"]  # each batch of the models timed (before: each document's metadata)
    assert (timed["unit"], timed["n"]) == ("batch", 2) and timed["total"] > 0


def test_paraphrase_documents_takes_any_text_and_gives_every_document_one_schema(tiny_models, tmp_path):
    """Before: a text that is no string (a list from JSON, None) crashed the task and lost its good
    documents; a document kept the keys of an earlier outcome (old paraphrases beside a new failure);
    failed and paraphrased documents had other metadata keys, so a ParquetWriter after the step
    failed; two repeats shared one paraphrase list; loaded stages could not run under an executor
    (its JSON copied them); a misspelt setting failed in every task's log, not where it was given;
    the models loaded before the first batch's timer, also for a task of no documents."""
    from datatrove.data import Document
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.writers import ParquetWriter

    from paraamr.builder.stages import load_stages
    from paraamr.executors import ParaphraseDocuments, document_schema
    from paraamr.settings import split_settings

    models = {f"{kind}_model": str(tiny_models[kind]) for kind in ("parser", "realizer", "lm")}
    with pytest.raises(TypeError, match="unknown settings: max_perplexty"):
        ParaphraseDocuments(**models, max_perplexty=5)
    stale = {"amr": "(o / old)", "paraphrases": [{"para_text": "old"}], "paraamr_failure": "old"}
    texts = ["The boy wants to go.", ["a", "list"], None, "x" * 5000, "The boy wants to go."]

    def documents():
        return [Document(text=t, id=str(i), metadata=dict(stale)) for i, t in enumerate(texts)]

    step = ParaphraseDocuments(batch_size=8, **models, max_perplexity=None)
    out = list(step.run(documents()))
    assert [set(d.metadata) for d in out] == [set(stale)] * 5
    failures = [d.metadata["paraamr_failure"] for d in out]
    assert failures[0] is None and failures[4] is None
    assert failures[1] == "column 'text' not a string (list)" and failures[2] == "column 'text' missing"
    assert "longer than" in failures[3] and [out[i].metadata["paraphrases"] for i in (1, 2, 3)] == [[]] * 3
    assert out[0].metadata["paraphrases"] == out[4].metadata["paraphrases"] != stale["paraphrases"]
    assert out[0].metadata["paraphrases"] is not out[4].metadata["paraphrases"]
    assert step.stats.time_stats.n == 1  # one batch timed, the models' loading in it
    nowhere = ParaphraseDocuments(**(models | {"parser_model": str(tmp_path / "none")}))
    assert list(nowhere.run([])) == []  # a task of no document loads no model (before: all of them)
    stages = load_stages(*split_settings(**models, max_perplexity=None))
    strings = [d for d in documents() if isinstance(d.text, str)]  # (datatrove writes no other text)
    writer = ParquetWriter(str(tmp_path / "out"), schema=document_schema())
    LocalPipelineExecutor(
        [strings, ParaphraseDocuments(stages=stages), writer],
        tasks=1,
        logging_dir=str(tmp_path / "logs"),
    ).run()
    import pyarrow.parquet as pq

    (written,) = (tmp_path / "out").glob("*.parquet")
    assert pq.read_table(written).num_rows == 3  # a failure among paraphrased documents
