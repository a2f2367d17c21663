"""Fixtures of the model-stage tests: one torch thread (the machine is shared), paper constants."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _one_thread():
    """Run each test on one torch thread, restoring the count afterwards."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
