"""Fixtures shared across the test suite: tiny random-weight models, the paper's graph and ``hub``,
a loopback Hugging Face Hub + release host (``tests/support/hubserver.py``)."""

from __future__ import annotations

import os

import pytest

#: Fixtures every area shares, kept in tests/support/ (on ``pythonpath``).
pytest_plugins = ["dataset_fixtures", "hostile_report", "slow_report"]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

if os.environ.get("PYTEST_XDIST_WORKER"):
    # A pytest-xdist worker runs execnet's thread beside its tests: a fork of it (datasets' worker
    # pools) may copy a lock that thread holds and hang on it (a filter_records doctest did, once
    # in three runs). Pools of tests there start from a fork server, a process without it.
    import multiprocess

    multiprocess.set_start_method("forkserver", force=True)

#: Figure 1 of the ParaAMR paper: "I know for them to approve this price, they'll need statistical
#: documentation.", in the paper's notation.
PAPER_AMR = (
    "(z1 / know :ARG0 (z2 / i) :ARG1 (z3 / need :ARG0 (z4 / they) :ARG1 (z5 / documentation "
    ":mod (z6 / statistic)) :purpose (z7 / approve :ARG0 z4 :ARG1 (z8 / thing :ARG2-of "
    "(z9 / price) :mod (z10 / this)))))"
)
PAPER_TEXT = "I know for them to approve this price, they'll need statistical documentation."


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """A loopback Hub (``hubserver.HubServer``) for one test, with the real clients pointed at it:
    ``HF_ENDPOINT`` = ``hub.url``, ``HF_HUB_OFFLINE=0`` and a fresh ``HF_HOME`` (``hub.home``),
    in the environment (for subprocesses, ``hub.env``) and in the already imported modules.
    Stopped when the test ends; the global default stays ``HF_HUB_OFFLINE=1``."""
    from hubserver import HubServer, patch_clients

    server = HubServer().start()
    server.home = tmp_path / "hf-home"
    server.env = patch_clients(monkeypatch, server.url, server.home)
    _clear_hffs()
    yield server
    server.stop()
    _clear_hffs()


def _clear_hffs() -> None:
    """Forget fsspec's cached HfFileSystem (it keeps the endpoint and listings of the last test)."""
    import sys

    if "huggingface_hub" in sys.modules:
        from huggingface_hub import HfFileSystem

        HfFileSystem.clear_instance_cache()


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """``{"parser": dir, "realizer": dir, "lm": dir}``: tiny random models in the real formats."""
    from paraamr.models.tiny import make_tiny

    return make_tiny(tmp_path_factory.mktemp("tiny-models"))
