"""The environment of a subprocess that pauses at named moments of its run (``pause/sitecustomize.py``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PAUSE = Path(__file__).resolve().parent / "pause"


def pause_env(moments: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with ``moments`` (comma separated) to pause at."""
    env = dict(os.environ if base is None else base)
    paths = [str(PAUSE), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {**env, "PARAAMR_TEST_PAUSE_AT": moments, "PYTHONPATH": os.pathsep.join(paths)}


def killed_at(moment: str, argv: list[str]) -> None:
    """Run ``paraamr ARGV`` in a process of its own and kill -9 it at ``moment`` (tests/support/pause)."""
    run = subprocess.Popen([sys.executable, "-m", "paraamr", *argv], stderr=subprocess.PIPE, text=True,
                           env=pause_env(moment))  # fmt: skip
    while f"paraamr: paused at {moment}" not in run.stderr.readline():
        assert run.poll() is None, run.stderr.read()[-2000:]
    run.kill()
    run.communicate(timeout=60)


def wait_for_handlers(proc: subprocess.Popen, timeout: float = 120.0) -> None:
    """Wait until ``proc`` catches SIGTERM (Linux ``/proc``): its command's signal handlers are in
    place, as they are a moment after a user starts it (a signal before them ends it as Python does)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the process ended before it installed its signal handlers"
        with open(f"/proc/{proc.pid}/status") as f:
            caught = next(int(line.split()[1], 16) for line in f if line.startswith("SigCgt:"))
        if caught >> (signal.SIGTERM - 1) & 1:
            return
        time.sleep(0.05)
    raise AssertionError(f"no signal handlers after {timeout:g} s")
