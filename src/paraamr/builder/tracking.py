"""What a run shows while it works: the models it loads, then sources done per batch, across ranks.

A window of rows goes through several model stages (parse, realize, perplexity, ...), each in
batches; :class:`RunProgress` counts each finished batch (:func:`paraamr.models.base.batch_listener`,
from any thread) as its share of the window, so the display moves per batch, not per window, and
every window ends at its exact row count. Each writer keeps its count in its progress file
(:mod:`paraamr.builder.state`); the main process shows the sum over the run's writers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from paraamr.builder.pipeline import Stats
from paraamr.builder.state import RunFolder
from paraamr.progress import Progress

__all__ = ["RunProgress", "model_line"]

#: Seconds between two writes of a writer's progress file (besides the end of each window).
SAVE_SECONDS = 0.5


def model_line(models: Mapping[str, str]) -> str:
    """``loading models: parser NAME (SIZE), ...``: each model of a run by name, with its size on
    disk when it is there.

    >>> model_line({"lm": "/nowhere/lm"})  # not on disk: no size
    'loading models: lm /nowhere/lm'
    """
    from pathlib import Path

    from paraamr.models.resolve import disk_size, resolve

    parts = []
    for kind, name in models.items():
        try:
            size = f" ({disk_size(resolve(name, kind)) / 1e6:,.1f} MB)"
        except Exception:  # not on disk (yet): named without a size
            size = ""
        shown = Path(name).name if "/" in name and Path(name).exists() else name
        parts.append(f"{kind} {shown}{size}")
    return "loading models: " + ", ".join(parts)


class RunProgress:
    """One writer's progress in sources (rows), moved per batch; shown by the main process."""

    def __init__(
        self,
        folder: RunFolder,
        stats: Stats,
        *,
        mode: str,
        main: bool,
        window: int,
        stages: int,
        total: list | None = None,
    ):
        self.folder, self.stats, self.window = folder, stats, window
        self.total = total if total is not None else [None]  # filled by a counting thread
        self.weight = 1.0 / max(stages, 1)  # each model stage's share of a window
        self.done = float(stats.inputs)
        self._partial = 0.0  # the in-flight windows' share, by finished batches
        self._lock = threading.Lock()
        self._saved = 0.0
        self._paras0 = stats.paraphrases
        n = folder.num_processes
        self.display = Progress(
            f"generate ({n} processes)" if n > 1 else "generate",
            unit="src",
            mode=mode if main else "none",
            initial=folder.progress() if main else 0,
        )
        folder.save_progress(self.done)

    def phase(self, text: str) -> None:
        """A step before the counted work (loading models)."""
        self.display.phase(text)

    def on_batch(self, _stage: str, items: int, call_items: int) -> None:
        """A model stage finished a batch of ``items`` of its ``call_items`` (one window's worth)."""
        if call_items:
            with self._lock:
                self._partial += self.window * self.weight * items / call_items
            self.show()

    def window_done(self, rows: int) -> None:
        """A window of ``rows`` rows is written: its exact count replaces its batches' share (a
        whole window's, as the batches counted it)."""
        with self._lock:
            self.done += rows
            self._partial = max(0.0, self._partial - self.window)
        self.show(save=True)

    def now(self) -> float:
        """Rows done by this writer, the in-flight windows' share included."""
        with self._lock:
            return self.done + min(self._partial, self.window)

    def show(self, *, save: bool = False) -> None:
        """Save this writer's count (at most every :data:`SAVE_SECONDS`, and when ``save``) and,
        in the main process, draw the run's sum."""
        mine = self.now()
        if save or time.monotonic() - self._saved >= SAVE_SECONDS:
            self.folder.save_progress(mine)
            self._saved = time.monotonic()
        if self.display.mode == "none":
            return
        if self.total[0] is not None and self.display.total is None:
            self.display.set_total(self.total[0])
        others = self.folder.progress(skip=self.folder.writer) if self.folder.num_processes > 1 else 0.0
        elapsed = max(self.display.elapsed(), 1e-9)
        self.display.update(
            mine + others,
            **{
                "para/s": (self.stats.paraphrases - self._paras0) / elapsed,
                "failures": sum(self.stats.failures.values()),
            },
        )

    def close(self) -> None:
        """The last count saved, the display ended."""
        self.show(save=True)
        self.display.close()
