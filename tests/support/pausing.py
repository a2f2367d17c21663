"""The environment of a subprocess that pauses at named moments of its run (``pause/sitecustomize.py``)."""

from __future__ import annotations

import os
from pathlib import Path

PAUSE = Path(__file__).resolve().parent / "pause"


def pause_env(moments: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with ``moments`` (comma separated) to pause at."""
    env = dict(os.environ if base is None else base)
    paths = [str(PAUSE), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {**env, "PARAAMR_TEST_PAUSE_AT": moments, "PYTHONPATH": os.pathsep.join(paths)}
