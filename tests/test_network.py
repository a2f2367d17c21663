"""Hub datasets with no network: loaded from the cache, or refused in one line, at once (where
huggingface_hub alone retries for about half a minute, a warning a try, before it gives up)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from paraamr.errors import InputError
from paraamr.network import hub_unreachable, load_hub_dataset

NOWHERE = "http://hub.invalid"  # .invalid never resolves (RFC 2606), network or not


def test_a_hub_dataset_with_no_network_is_one_line_at_once(tmp_path):
    env = {**os.environ, "HF_ENDPOINT": NOWHERE, "HF_HUB_OFFLINE": "0", "HF_HOME": str(tmp_path / "hf")}
    for argv in (["export", "simcse", "org/none", str(tmp_path / "out.csv")], ["evaluate", "org/none"]):
        done = subprocess.run(
            [sys.executable, "-m", "paraamr", *argv], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 1
        assert done.stderr.count("\n") == 1, done.stderr  # before: 'Retrying in 1s [Retry 1/5]' ... 8s
        assert "org/none" in done.stderr and "hub.invalid cannot be resolved: no network" in done.stderr


def test_a_cached_hub_dataset_loads_with_no_network(hub, tmp_path, monkeypatch):
    import huggingface_hub.constants

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "train.csv").write_text("text,label\na b c,0\nd e f,1\n")
    hub.add_dataset_repo("org/d", tmp_path / "d")
    online = load_hub_dataset("org/d", split="train")
    assert hub_unreachable() is None  # the loopback Hub resolves
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", NOWHERE)
    assert hub_unreachable() == "hub.invalid cannot be resolved: no network"
    with monkeypatch.context() as proxied:  # a proxy resolves names itself: the request tells
        proxied.setenv("HTTPS_PROXY", "http://proxy.example:3128")
        assert hub_unreachable() is None
    assert load_hub_dataset("org/d", split="train").to_list() == online.to_list() == [
        {"text": "a b c", "label": 0},
        {"text": "d e f", "label": 1},
    ]
    assert huggingface_hub.constants.HF_HUB_OFFLINE is False  # offline for the load only
    with pytest.raises(InputError, match=r"^org/other \(split x\): not here, .*\(hub\.invalid cannot be"):
        load_hub_dataset("org/other", detail=" (split x)")
    with pytest.raises(InputError, match=r"^org/d: cannot be loaded \(") as refused:  # not the network's
        load_hub_dataset("org/d", "no-such-config")
    assert "hub.invalid" not in str(refused.value)
