"""Holds a test's subprocess at a named moment of a run until a signal arrives.

Put this folder on ``PYTHONPATH`` and name the moments in ``PARAAMR_TEST_PAUSE_AT`` (comma
separated): Python imports this file at start-up, and it wraps the functions the run calls at those
moments, from outside the package. At a moment the process says ``paraamr: paused at NAME`` on
stderr and waits for a (new) signal, so a test can send one exactly there.

- ``models``: before the generator's models load;
- ``window``: after a batch of realizations, in the middle of a window;
- ``commit``: inside the completion of one of generate's tasks, before its marker is written;
- ``stopping``: after a first signal, while the run turns it into its one line;
- ``card``: after the summary, before the card is written;
- ``chunk``: inside the commit of one of evaluate's chunks;
- ``plots``: in ``paraamr stats --plots DIR``, after the records are counted, before the histograms
  are written;
- ``staged``: in convert and augment, the shards staged as parts, before they move into place;
- ``new-card``: in convert and augment, the shards in place, before the card is written.
"""

from __future__ import annotations

import os
import sys
import time

MOMENTS = [m for m in os.environ.get("PARAAMR_TEST_PAUSE_AT", "").split(",") if m]


def _pause(name: str) -> None:
    from paraamr import signals

    if name not in MOMENTS:
        return
    seen = signals._state.count  # before saying so: a signal sent at once must not be missed
    sys.stderr.write(f"paraamr: paused at {name}\n")
    sys.stderr.flush()
    while signals._state.count == seen:
        time.sleep(0.02)


def _before(owner, attr: str, moment) -> None:
    """Call ``_pause(moment())`` before each call of ``owner.attr``."""
    original = getattr(owner, attr)

    def paused(*args, **kwargs):
        _pause(moment())
        return original(*args, **kwargs)

    setattr(owner, attr, paused)


def _install() -> None:
    from paraamr import card, stats
    from paraamr.builder import folder, run, summary
    from paraamr.builder.state import RunFolder
    from paraamr.metrics.resume import StateFolder
    from paraamr.signals import Interrupted

    _before(run, "make_generator", lambda: "models")
    _before(summary, "write_card", lambda: "card")
    _before(RunFolder, "complete", lambda: "commit")
    _before(Interrupted, "with_detail", lambda: "stopping")
    _before(StateFolder, "commit", lambda: "chunk")
    _before(stats, "plot_histograms", lambda: "plots")
    _before(folder, "finalize", lambda: "staged")  # convert's and augment's (both import it when they run)
    _before(card, "write_card", lambda: "new-card")  # convert's (generate's summary holds its own)
    _before(card, "with_dataset_info", lambda: "new-card")  # augment's
    listen = run.batch_listener

    def batch_listener(callback):
        def heard(stage: str, items: int, call_items: int) -> None:
            callback(stage, items, call_items)
            if stage == "realize":
                _pause("window")

        return listen(heard)

    run.batch_listener = batch_listener


if MOMENTS:
    _install()
