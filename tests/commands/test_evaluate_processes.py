"""``paraamr evaluate`` in two processes (``torchrun --nproc_per_node 2`` on the CPU), with a Hub
embedder fetched on first use from the loopback Hub (tests/support/hubserver.py):

- the main process's progress lines count the pairs of both processes, up to the total of all
  pairs, not the main process's share;
- the embedder is resolved once a run: every request the fetch makes reaches the Hub once (two
  processes that each resolved it would each ask the Hub for it);
- the row is the row of one process;
- a state folder that holds another evaluation with no chunk committed starts over, said once (by
  the main process), not once a process.

One launch serves every test of the module (each process loads torch and the models: slow).
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from hubserver import HubServer, client_env
from tinybert import make_tiny_bert

from paraamr.cli import main
from paraamr.metrics.report import read_pairs
from paraamr.metrics.resume import StateFolder
from paraamr.metrics.scale import make_plan

PAIRS = Path(__file__).parents[1] / "metrics" / "data" / "pairs_sample.tsv"
SRC = str(Path(__file__).parents[2] / "src")
REPO = "org/tiny-bert"
OPTIONS = ["--parser", "link-grammar:no-pos", "--backend", "transformers", "--chunk-pairs", "2", "--no-plots"]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def launched(tmp_path_factory) -> tuple[subprocess.CompletedProcess, list[tuple[str, str]], Path]:
    """The two-process run (``--progress log --json``), the Hub's request log, the fetched model."""
    root = tmp_path_factory.mktemp("processes")
    StateFolder(root / "state").start({"identity": {}, "options": {"seed": 9}, "chunks": 1})
    model = make_tiny_bert(root / "tiny-bert")
    with HubServer() as hub:
        hub.add_model_repo(REPO, model)
        env = {**os.environ, **client_env(hub.url, root / "hf-home"), "PYTHONPATH": SRC}
        command = ["torchrun", "--standalone", "--nproc_per_node", "2", "-m", "paraamr.evaluate", str(PAIRS)]
        command += ["--similarity-model", REPO, *OPTIONS, "--state-dir", "state", "--progress", "log"]
        command += ["--json"]
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=root, timeout=300)
        requests = [(method, path) for method, path, _ in hub.log]
    assert done.returncode == 0, done.stderr[-3000:]
    return done, requests, model


def test_the_progress_lines_count_the_pairs_of_every_process(launched):
    done, _, _ = launched
    pairs = len(read_pairs(PAIRS))
    plan = make_plan(read_pairs(PAIRS), sample=None, seed=0, chunk_pairs=2)
    assert 0 < plan.size(plan.owned(processes=2)) < pairs  # the main process alone would stop there
    shown = re.findall(r"^evaluate \(2 processes\): (\d+)/(\d+) pairs \((\d+)%\)", done.stderr, re.MULTILINE)
    assert shown and shown[-1] == (str(pairs), str(pairs), "100"), done.stderr[-3000:]


def test_the_embedder_is_fetched_once_a_run(launched):
    _, requests, _ = launched
    assert (("GET", f"/api/models/{REPO}") in requests) and any("model.safetensors" in p for _, p in requests)
    repeated = {request: n for request, n in collections.Counter(requests).items() if n > 1}
    assert not repeated, repeated


def test_the_row_is_the_row_of_one_process(launched):
    done, _, model = launched
    args = ["evaluate", str(PAIRS), "--similarity-model", str(model), *OPTIONS, "--no-progress", "--json"]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(args) == 0
    one, two = json.loads(out.getvalue()), json.loads(done.stdout)
    assert two["pairs"] == one["pairs"] == len(read_pairs(PAIRS)) and two["failures"] == one["failures"] == []
    assert two["semantic_similarity"] == pytest.approx(one["semantic_similarity"], abs=1e-4)
    for key in ("bleu_diversity", "jaccard_diversity", "ted3", "tedf"):
        assert two[key] == one[key], key


def test_a_start_over_is_said_once(launched):
    done, _, _ = launched
    assert done.stderr.count("no chunk was committed; it starts over: ") == 1, done.stderr[-3000:]
