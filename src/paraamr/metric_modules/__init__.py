"""The evaluate modules of paraamr, one folder each (``evaluate.load(paraamr.metric_path(name))``;
each folder is also a Hub Space), and what they share.

Under ``evaluate.combine([...])`` every module receives every keyword argument of the call, so each
module's ``_compute`` names the options of all four modules as explicit parameters and ignores
those that are not its own (evaluate's module test forbids ``**kwargs``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence, Sized
from contextlib import contextmanager

__all__ = ["check_per_pair", "quiet_loading"]


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Load models without transformers' progress bars ("Loading weights") or sentence-transformers'
    load notes, both put back as they were afterwards. A download still shows its bar
    (:mod:`paraamr.models.download` turns the Hub's on while it fetches)."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    notes = logging.getLogger("sentence_transformers")
    level = notes.level
    hf_logging.disable_progress_bar()
    notes.setLevel(logging.ERROR)
    try:
        yield
    finally:
        notes.setLevel(level)
        if bars:
            hf_logging.enable_progress_bar()


def check_per_pair(module, option: str, values: Sized | None, predictions: Sequence[object]) -> None:
    """ValueError unless the per-pair option ``values`` (``targets``, ``labels``, ...) has one item per
    prediction. In evaluate's distributed mode rank 0 computes over every process's pairs but gets
    only its own keyword arguments: the message says so."""
    if values is None or len(values) == len(predictions):
        return
    hint = ""
    if module.num_process > 1:
        hint = (
            f" (with num_process={module.num_process} the process with process_id 0 computes over"
            f" every process's pairs: give it {option} for all of them, in process order)"
        )
    raise ValueError(f"{module.name}: {len(values)} {option} for {len(predictions)} pairs{hint}")
