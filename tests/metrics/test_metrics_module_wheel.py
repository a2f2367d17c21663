"""The metric modules from a built wheel: what a Space (or any user) that installs ``paraamr`` gets.

A wheel is built from this repository's files (those git tracks or would track, copied elsewhere
so no ``build/`` of the checkout leaks in) with ``pip wheel --no-deps --no-build-isolation``, and
installed with ``pip install --no-index --no-deps`` from the file into a new venv. The venv is made
with ``--system-site-packages``: paraamr's dependencies (torch, transformers, spaCy, ...) are
several GB from the index, too much for a test, so they come from the interpreter that runs the
tests, while paraamr itself comes only from the wheel (asserted: the venv's copy shadows any other,
and ``PYTHONPATH`` is cleared). There, each module folder's ``requirements.txt`` resolves with no
index but the wheel's folder, and evaluate's own module test (``test_metrics_module_evaluate.py``)
passes on the four installed folders, loaded with ``evaluate.load(path)``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_metrics_module_evaluate import NAMES

REPO = Path(__file__).resolve().parents[2]


def _run(*command: str | Path, cwd: Path | None = None, env: dict | None = None) -> str:
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _copy_sources(target: Path) -> None:
    """The files git tracks or would track (not ignored), as they are in the working tree."""
    listed = _run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO)
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_symlink() or source.is_file():  # a tracked file deleted in the tree is left out
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name, follow_symlinks=False)


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> tuple[Path, Path, dict]:
    """(the venv's python, the folder holding the built wheel, the environment to run it in)."""
    root = tmp_path_factory.mktemp("wheel")
    _copy_sources(root / "src")
    _run(sys.executable, "-m", "pip", "--isolated", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", root / "src", "-w", root / "dist")  # fmt: skip
    (wheel,) = (root / "dist").glob("paraamr-*.whl")
    _run(sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", root / "venv")
    python = root / "venv" / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env |= {"PYTHONNOUSERSITE": "1", "HF_MODULES_CACHE": str(root / "modules")}
    _run(python, "-m", "pip", "--isolated", "install", "--no-index", "--no-deps", "--ignore-installed", wheel,
         env=env)  # fmt: skip
    return python, root / "dist", env


@pytest.mark.slow
def test_the_installed_package_is_the_wheel(venv, tmp_path):
    python, _, env = venv
    found = _run(python, "-c", "import paraamr; print(paraamr.__file__)", cwd=tmp_path, env=env)
    assert Path(found.strip()).is_relative_to(python.parents[1])


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_space_requirements_resolve_with_the_wheel(name, venv):
    python, dist, env = venv
    folder = python.parents[1] / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    requirements = folder / "site-packages" / "paraamr" / "metric_modules" / name / "requirements.txt"
    out = _run(python, "-m", "pip", "--isolated", "install", "--dry-run", "--no-index", "--find-links", dist,
               "-r", requirements, env=env)  # fmt: skip
    assert f"paraamr=={_wheel_version(dist)} in {folder / 'site-packages'}" in out


def _wheel_version(dist: Path) -> str:
    (wheel,) = dist.glob("paraamr-*.whl")
    return wheel.name.split("-")[1]


@pytest.mark.slow
def test_evaluate_module_test_passes_on_the_installed_modules(venv, tmp_path):
    python, _, env = venv
    installed = _run(python, "-c", "import paraamr; print(paraamr.metric_path('ted_diversity'))", env=env)
    (tmp_path / "metrics").symlink_to(Path(installed.strip()).parent)  # as evaluate's repository has it
    test = Path(__file__).with_name("test_metrics_module_evaluate.py")
    out = _run(python, test, *NAMES, cwd=tmp_path, env=env)
    assert [line for line in out.splitlines() if line.startswith("test_load passed")] == [
        f"test_load passed: {name}" for name in NAMES
    ]
    assert f"paraamr from: {python.parents[1]}" in out
