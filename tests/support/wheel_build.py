"""A wheel of this repository as a user would get it: built from the files git tracks or would
track (copied elsewhere, so no ``build/`` of the checkout leaks in), with no index and no deps."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(*command: str | Path, cwd: Path | None = None, env: dict | None = None) -> str:
    """Run ``command``; its stdout (the test fails with its output when it fails)."""
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _copy_sources(target: Path) -> None:
    """The files git tracks or would track (not ignored), as they are in the working tree."""
    listed = run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO)
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_symlink() or source.is_file():  # a tracked file deleted in the tree is left out
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name, follow_symlinks=False)


def build_wheel(root: Path) -> Path:
    """Build paraamr's wheel under ``root`` (sources in ``root/src``, the wheel in ``root/dist``)."""
    _copy_sources(root / "src")
    run(sys.executable, "-m", "pip", "--isolated", "wheel", "--no-deps", "--no-build-isolation",
        "--no-index", root / "src", "-w", root / "dist")  # fmt: skip
    (wheel,) = (root / "dist").glob("paraamr-*.whl")
    return wheel
