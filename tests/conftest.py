"""Fixtures shared across the test suite: tiny random-weight models and the paper's graph."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

#: Figure 1 of the ParaAMR paper: "I know for them to approve this price, they'll need statistical
#: documentation.", in the paper's notation.
PAPER_AMR = (
    "(z1 / know :ARG0 (z2 / i) :ARG1 (z3 / need :ARG0 (z4 / they) :ARG1 (z5 / documentation "
    ":mod (z6 / statistic)) :purpose (z7 / approve :ARG0 z4 :ARG1 (z8 / thing :ARG2-of "
    "(z9 / price) :mod (z10 / this)))))"
)
PAPER_TEXT = "I know for them to approve this price, they'll need statistical documentation."


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    """``{"parser": dir, "generator": dir, "lm": dir}``: tiny random models in the real formats."""
    from paraamr.models.registry import make_tiny

    return make_tiny(tmp_path_factory.mktemp("tiny-models"))
