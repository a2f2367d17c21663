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
import sys
from pathlib import Path

import pytest
from test_metrics_module_evaluate import NAMES
from wheel_build import build_wheel, run


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> tuple[Path, Path, dict]:
    """(the venv's python, the folder holding the built wheel, the environment to run it in)."""
    root = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(root)
    run(sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", root / "venv")
    python = root / "venv" / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env |= {"PYTHONNOUSERSITE": "1", "HF_MODULES_CACHE": str(root / "modules")}
    run(python, "-m", "pip", "--isolated", "install", "--no-index", "--no-deps", "--ignore-installed", wheel,
         env=env)  # fmt: skip
    return python, root / "dist", env


@pytest.mark.slow
def test_the_installed_package_is_the_wheel(venv, tmp_path):
    python, _, env = venv
    found = run(python, "-c", "import paraamr; print(paraamr.__file__)", cwd=tmp_path, env=env)
    assert Path(found.strip()).is_relative_to(python.parents[1])


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_space_requirements_resolve_with_the_wheel(name, venv):
    python, dist, env = venv
    folder = python.parents[1] / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    requirements = folder / "site-packages" / "paraamr" / "metric_modules" / name / "requirements.txt"
    out = run(python, "-m", "pip", "--isolated", "install", "--dry-run", "--no-index", "--find-links", dist,
               "-r", requirements, env=env)  # fmt: skip
    extras = "[metrics,quality]" if name == "paraphrase_quality" else "[metrics]"  # what its measure needs
    assert f"paraamr{extras}=={_wheel_version(dist)} in {folder / 'site-packages'}" in out


def _wheel_version(dist: Path) -> str:
    (wheel,) = dist.glob("paraamr-*.whl")
    return wheel.name.split("-")[1]


@pytest.mark.slow
def test_evaluate_module_test_passes_on_the_installed_modules(venv, tmp_path):
    python, _, env = venv
    installed = run(python, "-c", "import paraamr; print(paraamr.metric_path('ted_diversity'))", env=env)
    (tmp_path / "metrics").symlink_to(Path(installed.strip()).parent)  # as evaluate's repository has it
    test = Path(__file__).with_name("test_metrics_module_evaluate.py")
    out = run(python, test, *NAMES, cwd=tmp_path, env=env)
    assert [line for line in out.splitlines() if line.startswith("test_load passed")] == [
        f"test_load passed: {name}" for name in NAMES
    ]
    assert f"paraamr from: {python.parents[1]}" in out
