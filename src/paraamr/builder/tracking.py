"""What a run shows while it works: the models it loads, then sources done, moved per model batch
(:func:`paraamr.models.base.batch_listener`) and summed over the run's processes."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from paraamr.builder.pipeline import Stats
from paraamr.progress import Progress, SharedCount
from paraamr.settings import RecordSettings

__all__ = ["RunProgress", "batch_stages", "model_line"]


def batch_stages(record: RecordSettings) -> list[str]:
    """The model stages of ``record`` whose batches move the count (those that batch through
    :func:`paraamr.models.base.run_batched`).

    >>> batch_stages(RecordSettings())
    ['parse', 'realize', 'perplexity']
    """
    parse = [] if record.amr_input else ["parse"]
    return [*parse, "realize", *(["perplexity"] if record.lm_model else [])]


def model_line(models: Mapping[str, str], paths: Mapping[str, str] | None = None) -> str:
    """``loading models: parser NAME (SIZE), ...``, with the size on disk when it is there (at
    ``paths[kind]`` when given).

    >>> model_line({"lm": "/nowhere/lm"})  # not on disk: no size
    'loading models: lm /nowhere/lm'
    """
    from pathlib import Path

    from paraamr.models.resolve import disk_size, resolve

    paths = paths or {}
    parts = []
    for kind, name in models.items():
        try:
            found = Path(paths[kind]) if kind in paths else resolve(name, kind)
            size = f" ({disk_size(found) / 1e6:,.1f} MB)"
        except Exception:  # not on disk (yet): named without a size
            size = ""
        shown = Path(name).name if "/" in name and Path(name).exists() else name
        parts.append(f"{kind} {shown}{size}")
    return "loading models: " + ", ".join(parts)


class RunProgress:
    """One process's progress in sources, moved per model batch, its count shared with the run's other
    processes in ``count``; shown as ``desc`` by the main process."""

    def __init__(
        self,
        count: SharedCount,
        *,
        desc: str,
        mode: str,
        main: bool,
        window: int,
        stages: list[str],
        total: int,
        initial: int = 0,
    ):
        self.count, self.window = count, window
        self.stats = Stats()  # of the windows written in this launch
        self.done = 0.0
        self._calls = dict.fromkeys(stages, 0.0)  # per stage, calls done (a window's call = 1)
        self._windows = 0  # windows written by this process since it started
        self._taken = 0  # rows taken from the input since it started
        self._lock = threading.Lock()
        self._initial = initial
        self.display = Progress(
            desc,
            unit="src",
            total=total,
            mode=mode if main else "none",
            initial=initial,
            tick=self.show if main else None,
        )
        count.save(0.0, now=True)

    def taken(self, rows: Iterable[Any]) -> Iterator[Any]:
        """``rows``, counted as the windows take them."""
        for row in rows:
            with self._lock:
                self._taken += 1
            yield row

    def on_batch(self, stage: str, items: int, call_items: int) -> None:
        """A model stage finished a batch of ``items`` of its ``call_items`` (one window's call)."""
        if call_items and stage in self._calls:
            with self._lock:
                first = not any(self._calls.values())
                self._calls[stage] += items / call_items
            if first:
                self.display.phase("running")
            self.show()

    def window_done(self, rows: int, stats: Stats) -> None:
        """A window of ``rows`` rows is written: its count replaces its batches' share."""
        with self._lock:
            self.stats.merge(stats)
            self.done += rows
            self._windows += 1
            for stage, calls in self._calls.items():  # a stage with nothing to do in a window
                self._calls[stage] = max(calls, self._windows)
        self.show(save=True)

    def now(self) -> float:
        """Rows done by this writer: those written, and the in-flight window's share by batches."""
        with self._lock:
            flight = min(self._taken - self.done, self.window)
            if flight <= 0:
                return self.done
            share = sum(min(max(c - self._windows, 0.0), 1.0) for c in self._calls.values())
            return self.done + flight * share / max(len(self._calls), 1)

    def show(self, *, save: bool = False) -> None:
        """Save this process's count (at most every half second, or ``save``: now) and show the sum
        over the launch's processes."""
        self.count.save(self.now(), now=save)
        if self.display.mode == "none":
            return
        elapsed = max(self.display.elapsed(), 1e-9)
        self.display.update(
            self._initial + self.count.sum()["done"],
            **{
                "para/s": self.stats.paraphrases / elapsed,
                "failures": sum(self.stats.failures.values()),
            },
        )

    def close(self) -> None:
        """The last count saved, the display ended."""
        self.show(save=True)
        self.display.close()
