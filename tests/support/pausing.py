"""The environment of a subprocess that pauses at named moments of its run (``pause/sitecustomize.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
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
