"""``pip install paraamr`` with no extra: a light core that loads, filters, converts and describes
corpora, and one line naming the extra for everything else.

The wheel is built from this repository and installed, with its declared dependencies from the
package index, into a new venv that does not see the test interpreter's packages; so what the
core needs is exactly what ``setup.cfg`` declares."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from wheel_build import build_wheel, run

RELEASE = Path(__file__).parent / "dataset" / "data" / "release_sample.jsonl"
HEAVY = ("torch", "transformers", "amrlib", "spacy", "sentence-transformers", "matplotlib", "scikit-learn")


@pytest.fixture(scope="module")
def core(tmp_path_factory) -> tuple[Path, dict]:
    """(the venv's bin folder, the environment to run it in)."""
    root = tmp_path_factory.mktemp("core")
    wheel = build_wheel(root)
    run(sys.executable, "-m", "venv", root / "venv")
    bin_dir = root / "venv" / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"PYTHONNOUSERSITE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(root / "hf")}
    run(bin_dir / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel, env=env)
    return bin_dir, env


@pytest.mark.slow
def test_the_core_installs_none_of_the_heavy_packages(core):
    bin_dir, env = core
    listed = run(bin_dir / "python", "-m", "pip", "list", "--format=freeze", env=env).lower()
    names = {line.split("==")[0].replace("_", "-") for line in listed.splitlines()}
    assert {"paraamr", "datasets", "pyarrow", "huggingface-hub", "penman"} <= names
    assert not names & set(HEAVY)


@pytest.mark.slow
def test_the_core_converts_loads_filters_and_describes_a_corpus(core, tmp_path):
    bin_dir, env = core
    done = subprocess.run(
        [bin_dir / "paraamr", "convert", RELEASE, tmp_path / "corpus"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    # no matplotlib: no plots/, and the command says why the card has no histograms
    assert "pip install 'paraamr[plots]'" in done.stderr and not (tmp_path / "corpus" / "plots").exists()
    code = (
        "import sys; from datasets import load_dataset; import paraamr\n"
        "pairs = load_dataset(sys.argv[1], 'pairs', split='train')\n"
        "kept = paraamr.filter_records(pairs, max_perplexity=110)\n"
        "print(len(pairs), len(kept), all(p <= 110 for p in kept['perplexity']))\n"
    )
    out = run(bin_dir / "python", "-c", code, tmp_path / "corpus", cwd=tmp_path, env=env).split()
    assert out[0] == "11" and int(out[1]) < 11 and out[2] == "True"  # the sample's 11 pairs
    stats = run(bin_dir / "paraamr", "stats", tmp_path / "corpus", env=env)
    assert "instances (source sentences) | 6" in stats
    graphs = Path(__file__).parents[1] / "examples" / "graphs.amr"
    variants = run(bin_dir / "paraamr", "refocus", graphs, env=env)  # penman alone: the core's
    assert variants.count("# ::focus") >= 2


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "extra"),
    [
        (["generate", "--input", "in.txt", "--output", "out"], "generate"),
        (["evaluate", "corpus"], "metrics"),
        (["quality", "score", "--input", "in.txt"], "quality"),
        # before: "parser model ... cannot be loaded (ModuleNotFoundError: No module named 'amrlib')"
        (["augment", "--dataset", "in.txt", "--method", "paraamr", "--generate"], "generate"),
        # before: the input read and the n-gram LM trained (and --save-lm written), then two lines
        (["augment", "--dataset", "in.txt", "--method", "reda-ng", "--save-lm", "out"], "augment"),
    ],
)
def test_a_command_of_an_extra_names_the_pip_install_that_brings_it(core, tmp_path, argv, extra):
    bin_dir, env = core
    (tmp_path / "in.txt").write_text("A sentence.\n")
    done = subprocess.run(
        [bin_dir / "paraamr", *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr  # one line, no traceback
    assert f"needs the '{extra}' extra" in done.stderr and f"pip install 'paraamr[{extra}]'" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_an_api_class_of_an_extra_names_the_pip_install_that_brings_it(core):
    """Before: ``paraamr.Parser()`` raised a bare ``No module named 'amrlib'``."""
    bin_dir, env = core
    code = (
        "import paraamr\n"
        "for name in ('Parser', 'Realizer', 'PerplexityScorer', 'Embedder', 'QualityScorer'):\n"
        "    try:\n"
        "        getattr(paraamr, name)()\n"
        "    except ModuleNotFoundError as err:\n"
        "        print(type(err).__name__, err)\n"
    )
    lines = run(bin_dir / "python", "-c", code, env=env).splitlines()
    assert len(lines) == 5, lines
    for line, extra in zip(lines, ["generate", "generate", "generate", "metrics", "quality"], strict=True):
        assert line.startswith("MissingExtra ") and line.endswith(f"pip install 'paraamr[{extra}]'"), line
    assert lines[0].startswith("MissingExtra Parser: amrlib is not installed")


@pytest.mark.slow
def test_the_core_downloads_the_release_over_http(core, tmp_path):
    """The builder fetches a release zip by URL (its default is the GitHub one): datasets reads
    http through fsspec's HTTPFileSystem, which needs aiohttp (datasets 5 no longer brings it).
    Before: 'HTTPFileSystem requires "requests" and "aiohttp" to be installed', online too."""
    import functools
    import threading
    import zipfile
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    with zipfile.ZipFile(tmp_path / "ParaAMR_small.zip", "w") as z:
        z.write(RELEASE, "ParaAMR_small.jsonl")
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/ParaAMR_small.zip"
        code = (
            "import sys; from paraamr import ParaAMR\n"
            "builder = ParaAMR(data_files={'train': sys.argv[1]}, cache_dir=sys.argv[2])\n"
            "builder.download_and_prepare()\n"
            "print(len(builder.as_dataset(split='train')))\n"
        )
        bin_dir, env = core
        online = {k: v for k, v in env.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
        out = run(bin_dir / "python", "-c", code, url, tmp_path / "cache", cwd=tmp_path, env=online)
    finally:
        server.shutdown()
        server.server_close()
    assert out.split()[-1] == "6"  # the sample's 6 sources
