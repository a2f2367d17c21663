"""WordNet for nltk (:mod:`paraamr.wordnet`): a machine without it gets the setup step in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MRPC = Path(__file__).parents[1] / "examples" / "mrpc_train.jsonl"


def test_reda_without_wordnet_names_the_setup_step_not_an_internal_error(tmp_path):
    """nltk looks in ~/nltk_data (where the setup step puts it) and system folders: a HOME without
    it is a machine where the step was not run. Before: 'internal error: LookupError: ...'."""
    env = {**os.environ, "HOME": str(tmp_path), "NLTK_DATA": str(tmp_path / "nltk_data")}
    options = ["--method", "reda", "--n", "1", "--output", str(tmp_path / "out"), "--no-progress"]
    proc = subprocess.run(
        [sys.executable, "-m", "paraamr", "augment", "--dataset", str(MRPC), *options],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == 1 and "internal error" not in proc.stderr, proc.stderr
    assert "WordNet is not set up for nltk" in proc.stderr and "python -m paraamr.wordnet" in proc.stderr
    assert not (tmp_path / "out").exists()
