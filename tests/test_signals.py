"""Ctrl-C and SIGTERM at every moment of a run (issue 26): a real ``generate.py`` in a pseudo-terminal
gets the signal where ``tests/support/pause`` holds it (model loading, mid-window,
during a commit, during the card); each time one line, the signal's exit status, no traceback, no
abort, and the rerun's records equal to an uninterrupted run's. Then the same through torchrun."""

from __future__ import annotations

import os
import signal
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

ROOT = Path(__file__).resolve().parents[1]
GRAPHS = [
    f"# ::id g{i}\n# ::snt the man said {i} things .\n"
    f"(s / say-01 :ARG0 (m / man) :ARG1 (t / thing :quant {i}) :ARG2 (w / woman))"
    for i in range(8)
]
RUN = ["--window", "2", "--task-rows", "2", "--progress", "log"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def graphs(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("signals") / "in.amr"
    path.write_text("\n\n".join(GRAPHS) + "\n")
    return path


def _args(tiny_models, graphs: Path, out: Path) -> list[str]:
    return ["--amr-input", str(graphs), "--output", str(out), *RUN, *model_args(tiny_models)]


@pytest.fixture(scope="module")
def uninterrupted(tiny_models, graphs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("whole") / "out"
    subprocess.run([sys.executable, str(ROOT / "generate.py"), *_args(tiny_models, graphs, out)], check=True)
    return out


def _one_line(text: str) -> list[str]:
    """The lines of the reporter (the terminal echoes Ctrl-C as ``^C`` before them)."""
    lines = (line.removeprefix("^C") for line in text.splitlines())
    return [line for line in lines if line.startswith("paraamr generate:")]


def _clean(text: str, code: int, expected: int) -> None:
    assert code == expected, text[-2000:]
    for bad in ("Traceback", "terminate called", "Fatal Python error", "Aborted", "core dumped"):
        assert bad not in text, text[-2000:]


@pytest.mark.parametrize(
    ("pause", "how", "status"),
    [
        ("models", "ctrl-c", 130),
        ("window", "ctrl-c", 130),
        ("commit", "ctrl-c", 130),
        ("card", "ctrl-c", 130),
        ("window", "sigterm", 143),
        ("window,stopping", "twice", 130),
    ],
)
def test_a_signal_at_any_moment_stops_cleanly_and_the_rerun_completes(
    tiny_models, graphs, uninterrupted, tmp_path, pause, how, status
):
    out = tmp_path / "out"
    term = Terminal([str(ROOT / "generate.py"), *_args(tiny_models, graphs, out)], pause, tmp_path)
    if how == "twice":  # the first Ctrl-C mid-window; the second while the run stops
        term.read_until("paused at window")
        term.ctrl_c()
        pause = "stopping"
    term.read_until(f"paused at {pause}")
    if how == "sigterm":
        os.kill(term.pid, signal.SIGTERM)
    else:
        term.ctrl_c()
    code, text = term.wait()
    _clean(text, code, status)
    lines = _one_line(text)
    if how == "twice":
        assert lines == ["paraamr generate: interrupted again; exiting now (saved work stands)"], text
    else:
        word = "terminated" if how == "sigterm" else "interrupted"
        assert len(lines) == 1 and lines[0].startswith(f"paraamr generate: {word} "), text
        assert "; run the same command to resume" in lines[0], text
        assert lines[0].endswith(" (SIGTERM)") == (how == "sigterm"), text
    assert not list(tmp_path.glob("core*"))
    rerun = subprocess.run(
        [sys.executable, str(ROOT / "generate.py"), *_args(tiny_models, graphs, out)],
        capture_output=True,
        text=True,
    )
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert_same(out, uninterrupted)  # records, pairs, failures and counts compared
    assert not list(out.rglob("*.tmp"))


def _torchrun(argv: list[str], pause: str, log: Path) -> subprocess.Popen:
    env = pause_env(pause, {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"})
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    return subprocess.Popen(
        [*cmd, str(ROOT / "generate.py"), *argv],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )


def _wait_paused(log: Path, proc: subprocess.Popen, count: int = 2, timeout: float = 300) -> None:
    end = time.monotonic() + timeout
    while log.read_text(errors="replace").count("paused at window") < count:
        assert proc.poll() is None and time.monotonic() < end, log.read_text(errors="replace")[-3000:]
        time.sleep(0.1)


def _workers(proc: subprocess.Popen) -> list[psutil.Process]:
    return [
        p for p in psutil.Process(proc.pid).children(recursive=True) if "generate.py" in " ".join(p.cmdline())
    ]


def test_ctrl_c_to_torchrun_stops_both_ranks_with_one_line(tiny_models, graphs, uninterrupted, tmp_path):
    out, log = tmp_path / "out", tmp_path / "log.txt"
    proc = _torchrun(_args(tiny_models, graphs, out), "window", log)
    _wait_paused(log, proc)
    workers = _workers(proc)
    assert len(workers) == 2
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the launcher's group; torchrun stops its workers
    proc.wait(timeout=120)
    _, alive = psutil.wait_procs(workers, timeout=60)
    text = log.read_text(errors="replace")
    assert not alive, text[-3000:]
    lines = _one_line(text)
    assert len(lines) == 1 and "; run the same command to resume" in lines[0], text[-3000:]
    assert "terminate called" not in text and "Fatal Python error" not in text
    rerun = _torchrun(_args(tiny_models, graphs, out), "none", log)
    assert rerun.wait(timeout=300) == 0, log.read_text(errors="replace")[-3000:]
    assert_same(out, uninterrupted)


def test_torchrun_killed_leaves_workers_that_hold_the_folder_until_they_are_stopped(
    tiny_models, graphs, uninterrupted, tmp_path
):
    """torchrun's workers run in sessions of their own: SIGKILL to torchrun's group orphans them.
    While they live, a new run is refused (their locks); SIGTERM ends them cleanly (one line, their
    completed tasks kept), and the run then completes with the uninterrupted run's records."""
    out, log = tmp_path / "out", tmp_path / "log.txt"
    proc = _torchrun(_args(tiny_models, graphs, out), "window", log)
    _wait_paused(log, proc)
    workers = _workers(proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert all(w.is_running() for w in workers)  # orphaned, not stopped
    second = subprocess.run(
        [sys.executable, str(ROOT / "generate.py"), *_args(tiny_models, graphs, out)],
        capture_output=True,
        text=True,
    )
    assert second.returncode == 1 and "another run is writing this folder (pid " in second.stderr, (
        second.stderr
    )
    for worker in workers:
        worker.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(workers, timeout=60)  # (not our children: no exit status to read)
    text = log.read_text(errors="replace")
    assert not alive, text[-3000:]
    lines = _one_line(text)  # rank 0 says it, once; rank 1 ends silently
    assert len(lines) == 1 and lines[0].startswith("paraamr generate: terminated after "), text[-3000:]
    assert "terminate called" not in text and "Fatal Python error" not in text
    rerun = _torchrun(_args(tiny_models, graphs, out), "none", log)
    assert rerun.wait(timeout=300) == 0, log.read_text(errors="replace")[-3000:]
    assert_same(out, uninterrupted)


def test_an_interrupted_overwrite_keeps_the_finished_dataset_until_the_new_one_replaces_it(
    tiny_models, graphs, uninterrupted, tmp_path
):
    """``--overwrite`` of a finished run deleted its dataset at the start: a kill or Ctrl-C before
    the new run finished left a folder with nothing in it. Now the old shards, failures and card stay
    (loadable; only the summary goes, the run being unfinished) until the new run's finalize
    replaces them all at once."""
    import shutil

    from oracle import records

    out = tmp_path / "out"
    shutil.copytree(uninterrupted, out)
    kept = {
        p.relative_to(out): p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and ".paraamr" not in p.parts
    }
    kept.pop(Path("summary.json"))
    fewer = tmp_path / "fewer.amr"
    fewer.write_text("\n\n".join(GRAPHS[:3]) + "\n")
    argv = [sys.executable, str(ROOT / "generate.py"), *_args(tiny_models, fewer, out), "--overwrite"]
    env = pause_env("window", {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"})
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if "paused at window" in line:
            proc.send_signal(signal.SIGTERM)
            break
    assert proc.wait(timeout=120) == 143
    for name, data in kept.items():
        assert (out / name).read_bytes() == data, name
    assert len(records(out)) == len(records(uninterrupted))
    subprocess.run(argv, env={**os.environ, "HF_HUB_OFFLINE": "1"}, check=True, capture_output=True)
    alone = tmp_path / "alone"
    subprocess.run(
        [sys.executable, str(ROOT / "generate.py"), *_args(tiny_models, fewer, alone)],
        check=True,
        capture_output=True,
    )
    assert_same(out, alone)
    assert sorted(p.relative_to(out) for p in out.rglob("*.parquet") if ".paraamr" not in p.parts) == sorted(
        p.relative_to(alone) for p in alone.rglob("*.parquet") if ".paraamr" not in p.parts
    )  # no shard of the earlier run left beside the new ones


SIGNAL_INSIDE_TORCH = """
import importlib.abc, os, signal, sys
from paraamr.tasks import cpu_only
from paraamr.signals import Interrupted, handled

class Signal(importlib.abc.MetaPathFinder):  # SIGTERM as torch imports torch.nn, its submodule
    def find_spec(self, name, path=None, target=None):
        if name == "torch.nn":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGTERM)

sys.meta_path.insert(0, Signal())
with handled("test"):
    try:
        cpu_only()
    except Interrupted as err:
        import torch
        print(err.status, torch.nn.Module.__name__)
"""


def test_a_signal_inside_torch_s_first_import_stops_the_run_and_leaves_torch_whole():
    """A SIGTERM while a process of a torchrun launch first imported torch left torch half made:
    the next import of it failed, and the stop came out as 'internal error: ImportError: cannot import
    name 'nn' from partially initialized module 'torch'' (or another of torch's errors)."""
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_INSIDE_TORCH], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.split() == ["143", "Module"], done.stderr[-2000:]


#: A finished command whose shutdown takes a while: in an exit callback (torch's and the pools'
#: teardown in a real run), and later, in the teardown of the modules, after the interpreter reset
#: the signal handlers (most of a second with torch).
SLOW_SHUTDOWNS = {
    "exit-callback": "import atexit\nwork = lambda: atexit.register(time.sleep, 30)\n",  # (as a library does)
    "module-teardown": "class Slow:\n    def __del__(self):\n        time.sleep(3)\nwork = Slow\n",
}


@pytest.mark.parametrize("where", SLOW_SHUTDOWNS)
def test_a_signal_while_a_finished_command_shuts_down_ends_it_with_its_status(where):
    """Before: a Ctrl-C in an exit callback printed a KeyboardInterrupt traceback after the
    command's output; one in the modules' teardown killed it by SIGINT (exit 130)."""
    code = (
        f"import time\n{SLOW_SHUTDOWNS[where]}"
        "from paraamr.report import run_process\n"
        "keep = []\n"
        "run_process(lambda: keep.append(work()) or print('wrote out', flush=True) or 0, 'demo')\n"
    )
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    proc = subprocess.Popen([sys.executable, "-c", code], **pipes)
    try:
        assert proc.stdout.readline() == "wrote out\n"
        time.sleep(1)  # in the slow part
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert (proc.returncode, err) == (0, "")
