"""A new user's first run, end to end, against the loopback "internet" (issue 12).

From empty caches, ``generate.py --input examples/sentences.txt --push-to-hub org/paraamr`` must
fetch every default model (two amrlib release tarballs, their base tokenizers and GPT-2, all tiny
but in the real formats: ``tests/support/tinyhub.py``), generate, and push; the corpus then loads
back by its Hub id with ``datasets`` (both configs, also streaming) exactly as written, and
``paraamr evaluate`` takes the Hub id. A download cut off midway resumes on the next run; offline,
the same command stops once, clearly, having written nothing.

Everything runs as a user runs it: subprocesses with only environment variables pointing the real
clients at the server (``HF_ENDPOINT``, ``PARAAMR_RELEASE_URL``) and empty ``HF_HOME`` /
``PARAAMR_CACHE``. The online journey runs once per module (:func:`journey`); each test checks one
part of it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPO_ID = "org/paraamr"
#: The README's first command, pushing (the tiny LM is random: keep every candidate, as the
#: README's offline route does, so that both configs have rows).
COMMAND = [
    str(ROOT / "generate.py"),
    "--input",
    str(ROOT / "examples" / "sentences.txt"),
    "--push-to-hub",
    REPO_ID,
    "--max-perplexity",
    "none",
]


def _run(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def _world(hub, tiny_models, tmp: Path) -> tuple[object, Path, dict[str, str]]:
    """Serve the default models; a user's empty working dir, caches and environment."""
    from hubserver import client_env
    from tinyhub import publish_defaults

    published = publish_defaults(hub, tiny_models)
    work = tmp / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "PYTEST_"))}
    env |= client_env(hub.url, tmp / "hf-home") | published.env | published.checksum_env(tmp / "site")
    env["PARAAMR_CACHE"] = str(tmp / "paraamr-cache")
    return published, work, env


@dataclass
class Journey:
    hub: object
    published: object
    work: Path
    env: dict[str, str]
    cut: subprocess.CompletedProcess
    partial: list[tuple[Path, int]]
    run: subprocess.CompletedProcess
    ranges: list[tuple[str, str | None]]  # release-host GETs of the second run


@pytest.fixture(scope="module")
def journey(tiny_models, tmp_path_factory):
    """Run the first command twice from empty caches: once with the parser's tarball cut off midway
    on every try, then again with the network whole."""
    from hubserver import HubServer

    tmp = tmp_path_factory.mktemp("journey")
    with HubServer() as hub:
        published, work, env = _world(hub, tiny_models, tmp)
        tarball = published.tarballs["parse_xfm_bart_large"]
        hub.cut_downloads(tarball, after=published.sizes["parse_xfm_bart_large"] // 20, times=20)
        cut = _run(COMMAND, env, work)
        partial = [(p, p.stat().st_size) for p in (tmp / "paraamr-cache").rglob("*.tar.gz*") if p.is_file()]
        hub._cuts.clear()
        before = len(hub.ranges)
        run = _run(COMMAND, env, work)
        yield Journey(hub, published, work, env, cut, partial, run, hub.ranges[before:])


@pytest.mark.slow
def test_a_download_cut_off_midway_stops_cleanly_and_resumes_on_the_next_run(journey):
    cut, size = journey.cut, journey.published.sizes["parse_xfm_bart_large"]
    assert cut.returncode == 1, cut.stderr
    assert "Traceback" not in cut.stderr and "parse_xfm_bart_large" in cut.stderr
    assert journey.partial and all(0 < n < size for _, n in journey.partial)
    tarball = journey.published.tarballs["parse_xfm_bart_large"]
    resumed = [r for p, r in journey.ranges if p == f"/files/{tarball}"]
    assert resumed and (resumed[0] or "").startswith("bytes=") and resumed[0] != "bytes=0-"
    assert int(resumed[0][6:-1]) == max(n for _, n in journey.partial)  # from where the last run stopped


@pytest.mark.slow
def test_the_first_run_fetches_every_default_model(journey):
    assert journey.run.returncode == 0, journey.run.stderr
    cache = Path(journey.env["PARAAMR_CACHE"])
    for name in ("parse_xfm_bart_large", "generate_t5wtense"):
        assert (cache / "models" / name / "amrlib_meta.json").is_file(), name
    hub = journey.hub
    for repo in journey.published.repos:  # the two base tokenizers and GPT-2 came from the Hub
        assert hub.requests("GET", f"/{repo}/resolve/"), repo
    assert not hub.requests("GET", "/facebook/bart-large/resolve/main/model.safetensors")  # tokenizer only
    assert journey.env["HF_TOKEN"] not in journey.run.stdout + journey.run.stderr
    assert "model_parse_xfm_bart_large-v0_1_0.tar.gz" in journey.run.stderr  # its progress bar, resumed


@pytest.mark.slow
def test_the_pushed_repo_is_the_folder_with_a_card_naming_it(journey):
    assert journey.run.returncode == 0, journey.run.stderr
    assert f"to {REPO_ID}: {journey.hub.url}/datasets/{REPO_ID}" in journey.run.stderr  # where it went
    out = journey.work / "paraamr"
    local = {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(out).parts)
    }
    pushed = journey.hub.dataset(REPO_ID).files()
    assert {k: v for k, v in pushed.items() if k != ".gitattributes"} == local
    assert f'load_dataset("{REPO_ID}"' in local["README.md"].decode()


def _sorted(rows) -> list[dict]:
    return sorted(rows, key=lambda r: (r["id"], r.get("para_text") or ""))


@pytest.mark.slow
def test_load_dataset_by_hub_id_returns_exactly_the_records_written(journey, monkeypatch, tmp_path):
    import pyarrow.parquet as pq
    from hubserver import patch_clients

    assert journey.run.returncode == 0, journey.run.stderr
    patch_clients(monkeypatch, journey.hub.url, tmp_path / "reader-home")  # empty caches again
    from huggingface_hub import HfFileSystem

    HfFileSystem.clear_instance_cache()
    import datasets

    out = journey.work / "paraamr"
    for config in ("default", "pairs"):
        shards = sorted((out / "data" / config).glob("*.parquet"))
        written = _sorted(row for f in shards for row in pq.read_table(f).to_pylist())
        assert written, config
        assert _sorted(datasets.load_dataset(REPO_ID, config, split="train").to_list()) == written
        assert _sorted(datasets.load_dataset(REPO_ID, config, split="train", streaming=True)) == written
    assert journey.hub.requests("GET", f"/datasets/{REPO_ID}/resolve/")


@pytest.mark.slow
def test_evaluate_accepts_the_hub_id(journey):
    assert journey.run.returncode == 0, journey.run.stderr
    before = len(journey.hub.log)
    evaluate = _run(["-m", "paraamr", "evaluate", REPO_ID], journey.env, journey.work)
    assert evaluate.returncode == 0, evaluate.stderr
    assert evaluate.stdout.strip() and "Traceback" not in evaluate.stderr
    assert journey.hub.requests("GET", f"/datasets/{REPO_ID}/")[-1:] and len(journey.hub.log) > before


def test_offline_first_run_stops_once_and_writes_nothing(hub, tiny_models, tmp_path):
    _, work, env = _world(hub, tiny_models, tmp_path)
    run = _run(COMMAND, {**env, "HF_HUB_OFFLINE": "1"}, work)
    assert run.returncode == 1
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("paraamr generate: ") and "HF_HUB_OFFLINE" in lines[0]
    assert "parse_xfm_bart_large" in lines[0]
    assert hub.log == []  # not one request
    assert list(work.iterdir()) == []
    cache = Path(env["PARAAMR_CACHE"])
    assert not cache.exists() or not [p for p in cache.rglob("*") if p.is_file()]


def test_unreachable_hosts_stop_the_first_run_once_without_retrying_for_long(tmp_path, tiny_models):
    """No network at all (nothing listens at the endpoints): one line naming the models and the
    hosts' failure, nothing written where the user runs it."""
    from hubserver import HubServer

    with HubServer() as gone:
        _, work, env = _world(gone, tiny_models, tmp_path)
    run = _run(COMMAND, env, work, timeout=120)  # the server is stopped: connections are refused
    assert run.returncode == 1
    lines = [line for line in run.stderr.splitlines() if line.strip() and "%|" not in line]
    assert len(lines) == 1 and lines[0].startswith("paraamr generate: "), run.stderr
    assert "parse_xfm_bart_large" in lines[0] and "Traceback" not in run.stderr
    assert list(work.iterdir()) == []
