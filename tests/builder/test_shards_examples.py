"""What a cluster user copies (issue 27): ``examples/slurm/generate.sbatch`` run as the tasks of a
two-task array (its Slurm variables set by hand, bash in place of sbatch), and
``examples/slurm/launch_submitit.py`` with submitit's local executor; each gives a finalized
folder with every input row accounted for. Tiny models, AMR input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tinyargs import model_args

#: Each test runs a whole two-task array (40-50 s on 2 cores).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GRAPHS = [
    f"# ::id g{i}\n(s / say-01 :ARG0 (m / man) :ARG1 (t / thing :quant {i}) :ARG2 (w / woman))"
    for i in range(8)
]


@pytest.fixture
def graphs(tmp_path) -> Path:
    path = tmp_path / "graphs.amr"
    path.write_text("\n\n".join(GRAPHS) + "\n")
    return path


def _finalized(out: Path) -> dict:
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and summary["counts"]["inputs"] == len(GRAPHS) == summary["counts"]["records"]
    assert (out / "README.md").is_file() and not (out / ".paraamr" / "parts").exists()
    return summary


def test_the_sbatch_script_runs_each_task_as_its_shard(tiny_models, graphs, tmp_path):
    out = tmp_path / "out"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "SOURCE": f"--amr-input {graphs}",
        "OUT": str(out),
        "OPTIONS": " ".join([*model_args(tiny_models), "--no-progress"]),
        "SLURM_ARRAY_TASK_MIN": "0",
        "SLURM_ARRAY_TASK_MAX": "1",
        "SLURM_ARRAY_TASK_COUNT": "2",
    }
    script = ROOT / "examples" / "slurm" / "generate.sbatch"
    tasks = [
        subprocess.Popen(
            ["bash", str(script)],
            env={**env, "SLURM_ARRAY_TASK_ID": str(i)},
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    logs = [task.communicate(timeout=300)[0] for task in tasks]
    assert [task.returncode for task in tasks] == [0, 0], logs
    assert _finalized(out)["run"]["shards"] == 2
    assert sum(f"wrote {out}" in log for log in logs) == 1  # the last task to finish finalized


def test_the_submitit_launcher_runs_and_finalizes_every_shard(tiny_models, graphs, tmp_path):
    pytest.importorskip("submitit", reason="the optional extra paraamr[cluster]")
    out = tmp_path / "out"
    launcher = ROOT / "examples" / "slurm" / "launch_submitit.py"
    argv = ["--shards", "2", "--cluster", "local", "--gpus", "0", "--logs", str(tmp_path / "logs"), "--wait"]
    options = ["--amr-input", str(graphs), "--output", str(out), *model_args(tiny_models), "--no-progress"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, str(launcher), *argv, "--", *options],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and "2 of 2 shards done" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert _finalized(out)["run"]["shards"] == 2
