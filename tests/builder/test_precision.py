"""One run's records come from one precision: each task's marker records what its models ran at
(backend and compute type or dtype, resolved on its device), a launch that would run them at
another is refused, finalize refuses a run whose tasks ran at several, and the summary and card
say the one they ran at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from entries import generate as main
from tinyargs import model_args

from paraamr.builder.counts import Stats
from paraamr.builder.state import RunFolder

FLOAT32 = {kind: "transformers float32" for kind in ("parser", "realizer", "lm")}


@pytest.fixture
def sentences(tmp_path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text("".join(f"the man said {i} things to the woman .\n" for i in range(6)))
    return path


def _args(tiny_models, sentences: Path, out: Path, *more: str) -> list[str]:
    base = ["--input", str(sentences), "--output", str(out), "--task-rows", "2", "--no-progress"]
    return [*base, *model_args(tiny_models), "--backend", "transformers", *more]


def _markers(out: Path) -> list[Path]:
    return sorted((out / ".paraamr" / "generate").glob("task-*.json"))


@pytest.mark.slow
def test_a_launch_at_another_precision_is_refused_and_one_at_the_same_resumes(
    tiny_models, sentences, tmp_path, capsys
):
    """Shard 0 runs at the CPU's default (float32); shard 1 with ``--dtype bfloat16`` is refused
    before it loads a model, naming both precisions; with ``--dtype float32`` (another value of the
    option, the same precision) it runs and finalizes. The summary and card say float32."""
    out = tmp_path / "out"
    assert main(_args(tiny_models, sentences, out, "--shard", "0/2")) == 0
    assert {json.loads(p.read_text())["precision"] == FLOAT32 for p in _markers(out)} == {True}
    capsys.readouterr()
    assert main(_args(tiny_models, sentences, out, "--shard", "1/2", "--dtype", "bfloat16")) == 1
    err = capsys.readouterr().err
    said = "its done tasks ran the models at transformers float32, this launch would run them at "
    assert said + "transformers bfloat16 (cpu)" in err and "loading models" not in err
    assert len(err.strip().splitlines()) == 1
    last = ["--shard", "1/2", "--dtype", "float32", "--finalize", "auto"]
    assert main(_args(tiny_models, sentences, out, *last)) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["precision"] == FLOAT32 and summary["counts"]["records"] == 6
    assert "| precision | `transformers float32` |" in (out / "README.md").read_text()


def test_finalize_refuses_tasks_made_at_several_precisions_naming_them(
    tiny_models, sentences, tmp_path, capsys
):
    """Two shards whose tasks ran at different precisions (one as a GPU node's task would have:
    its marker edited) are not merged: finalize names the tasks of each precision."""
    from paraamr.cli import main as paraamr

    out = tmp_path / "out"
    assert main(_args(tiny_models, sentences, out, "--shard", "0/2")) == 0
    assert main(_args(tiny_models, sentences, out, "--shard", "1/2")) == 0
    gpu = _markers(out)[1]
    marker = json.loads(gpu.read_text())
    gpu.write_text(json.dumps({**marker, "precision": {**FLOAT32, "realizer": "ctranslate2 bfloat16"}}))
    capsys.readouterr()
    assert paraamr(["finalize", str(out)]) == 1
    err = capsys.readouterr().err
    k = int(gpu.stem[len("task-") :])
    others = ", ".join(str(int(p.stem[len("task-") :])) for p in _markers(out) if p != gpu)
    said = f"tasks {others} at realizer transformers float32; tasks {k} at realizer ctranslate2 bfloat16"
    assert said in err
    assert not (out / "summary.json").exists()


def test_a_process_whose_models_run_otherwise_is_refused_before_its_first_task(tmp_path):
    """The check each process makes once its models are loaded (a process of another node, the
    same settings): it compares what they run at with what the done tasks ran at."""
    folder = RunFolder(tmp_path, device="cuda:1")
    folder.complete(0, {}, Stats().as_dict(), FLOAT32)
    folder.check_precision(FLOAT32)
    with pytest.raises(Exception, match=r"ran the models at transformers float32, this launch would run "
                       r"them at transformers bfloat16 \(cuda:1\); the records of one run"):
        folder.check_precision({kind: "transformers bfloat16" for kind in FLOAT32})


def test_a_launcher_whose_node_runs_no_model_leaves_the_comparison_to_the_tasks(tmp_path):
    """An executor's Slurm launcher (a CPU login node) and its partition job compared the GPU
    tasks' precision with their own node's, and refused the relaunch of a run cut short ("give a
    new --output", the done tasks lost); the tasks compare on their own nodes."""
    from paraamr.settings import RecordSettings

    record = RecordSettings(backend="transformers")
    saved = {"record": record.as_dict()}
    gpu = {kind: "transformers bfloat16" for kind in FLOAT32}
    here = RunFolder(tmp_path, device="cpu")
    here.complete(0, {}, Stats().as_dict(), gpu)
    said = "its done tasks ran the models at transformers bfloat16, this launch would run them at "
    assert here.differences(saved, record, None) == [said + "transformers float32 (cpu)"]
    assert RunFolder(tmp_path, runs_models=False).differences(saved, record, None) == []


def test_a_run_with_tasks_of_an_earlier_paraamr_says_no_precision(tmp_path):
    """Markers that do not say what their models ran at (an earlier paraamr's) beside ones that do:
    the summary and card said the known one for every record."""
    from paraamr.builder.status import RunStatus

    done = {0: {"precision": FLOAT32}, 1: {}, 2: {"precision": FLOAT32}}
    assert RunStatus({}, 1, None, done, {}).precision(tmp_path) is None
    assert RunStatus({}, 1, None, {0: done[0], 2: done[2]}, {}).precision(tmp_path) == FLOAT32
