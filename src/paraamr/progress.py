"""Progress of long commands (``generate``, ``evaluate``, ``augment``), as people can read it.

One :class:`Progress` per command, on stderr, in one of four modes (``--progress``):

- ``bar``: a tqdm bar, redrawn in place, with the rate, an ETA and the command's own figures;
- ``log``: one plain line every ``interval`` seconds (for logs, Slurm and CI, where a redrawn bar
  is a mess), and a last line when the work ends, unless it would repeat the one before;
- ``none`` (``-q/--quiet``, ``--no-progress``): nothing;
- ``auto`` (the default): ``bar`` on a terminal, ``log`` elsewhere.

A command may show a *phase* first (``loading models: parser tiny/parser (12.1 MB), ...``), so
something moves from the first second.

>>> import io
>>> out = io.StringIO()
>>> p = Progress("generate", total=3000, unit="src", mode="log", stream=out, interval=0)
>>> p.phase("loading models: lm gpt2 (548.0 MB)")
>>> p.update(1234, failures=2)
>>> p.close()
>>> print(out.getvalue().replace("\\r", ""), end="")  # doctest: +ELLIPSIS
generate: loading models: lm gpt2 (548.0 MB)
generate: 1,234/3,000 src (41%), ... src/s, ETA ..., failures 2
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import IO, Any

__all__ = ["MODES", "Progress", "add_progress_options", "progress_mode"]

MODES = ("auto", "bar", "log", "none")
#: Seconds between two lines in ``log`` mode.
LOG_INTERVAL = 30.0


def add_progress_options(parser: argparse.ArgumentParser) -> None:
    """``--progress {auto,bar,log,none}``, ``-q/--quiet`` and ``--no-progress`` (``dest="progress"``)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--progress",
        choices=MODES,
        default="auto",
        help="how progress is shown on stderr: a bar on a terminal and a line every "
        f"{LOG_INTERVAL:g} s in a log (auto), always a bar, always lines, or nothing (default: %(default)s)",
    )
    group.add_argument(
        "-q",
        "--quiet",
        "--no-progress",
        dest="progress",
        action="store_const",
        const="none",
        help="show no progress (= --progress none)",
    )


def progress_mode(mode: str | bool | None, stream: IO[str] | None = None) -> str:
    """``bar``, ``log`` or ``none`` for a ``--progress`` value (True/False: auto/none).

    >>> progress_mode(False), progress_mode("log"), progress_mode("auto", stream=open("/dev/null", "w"))
    ('none', 'log', 'log')
    """
    if mode is None or mode is True:
        mode = "auto"
    if mode is False:
        return "none"
    if mode not in MODES:
        raise ValueError(f"progress must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "auto":
        stream = stream or sys.stderr
        return "bar" if hasattr(stream, "isatty") and stream.isatty() else "log"
    return mode


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else (
        f"{seconds // 60}:{seconds % 60:02d}"
    )


class Progress:
    """The progress of one command: ``update(done, **figures)`` sets how much is done (and the
    command's own figures: paraphrases/s, failures, ...), ``close()`` ends the display."""

    def __init__(
        self,
        desc: str,
        *,
        total: float | None = None,
        unit: str = "it",
        mode: str | bool | None = "auto",
        stream: IO[str] | None = None,
        interval: float = LOG_INTERVAL,
        initial: float = 0,
    ):
        self.desc, self.total, self.unit = desc, total, unit
        self.stream = stream or sys.stderr
        self.mode = progress_mode(mode, self.stream)
        self.interval = interval
        self.done, self.figures = float(initial), {}
        self._initial, self._started = float(initial), time.monotonic()
        self._last_key, self._last_time = None, -float("inf")
        self._bar = None
        self._lock = threading.RLock()
        self._ticking = threading.Event()
        if self.mode == "bar":  # drawn now, and its clock kept moving while nothing else does
            self._draw()
            threading.Thread(target=self._tick, daemon=True, name="paraamr-progress").start()

    # -- what the command says ----------------------------------------------------------------------
    def phase(self, text: str) -> None:
        """A step before the counted work (loading models): one line in either mode."""
        if self.mode != "none":
            self._write(f"{self.desc}: {text}")

    def set_total(self, total: float | None) -> None:
        """The total, once known (counted in the background)."""
        with self._lock:
            self.total = total
            if self._bar is not None and total is not None:
                self._bar.total = total
                self._bar.refresh()

    def update(self, done: float, **figures: Any) -> None:
        """``done`` units so far (absolute, not an increment), and figures to show beside them."""
        with self._lock:
            self.done = done
            self.figures.update(figures)
            if self.mode == "bar":
                self._draw()
            elif self.mode == "log" and time.monotonic() - self._last_time >= self.interval:
                self._log()

    def close(self) -> None:
        """End the display: the bar's last state, or the last line (unless it repeats)."""
        self._ticking.set()
        with self._lock:
            if self.mode == "bar" and self._bar is not None:
                self._draw()
                self._bar.close()
                self._bar = None
            elif self.mode == "log":
                self._log()

    def _tick(self) -> None:
        while not self._ticking.wait(1.0):
            with self._lock:
                if self._bar is not None:
                    self._bar.refresh()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- drawing ------------------------------------------------------------------------------------
    def elapsed(self) -> float:
        """Seconds since this display started."""
        return time.monotonic() - self._started

    def rate(self) -> float:
        """Units per second since this display started."""
        return (self.done - self._initial) / max(self.elapsed(), 1e-9)

    def _text_figures(self) -> str:
        parts = []
        for name, value in self.figures.items():
            shown = f"{value:,.1f}" if isinstance(value, float) else f"{value:,}"
            parts.append(f"{name} {shown}")
        return ", ".join(parts)

    def _draw(self) -> None:
        from tqdm.auto import tqdm

        if self._bar is None:
            self._bar = tqdm(
                desc=self.desc,
                total=self.total,
                unit=f" {self.unit}",
                initial=int(self._initial),
                file=self.stream,
                dynamic_ncols=True,
            )
        self._bar.n = int(self.done)
        self._bar.set_postfix_str(self._text_figures(), refresh=False)
        self._bar.refresh()

    def _log(self) -> None:
        rate = self.rate()
        done = f"{int(self.done):,}"
        if self.total:
            left = (self.total - self.done) / rate if rate > 0 else None
            eta = _clock(left) if left is not None else "?"
            done += f"/{int(self.total):,} {self.unit} ({100 * self.done / self.total:.0f}%)"
            done += f", {rate:,.1f} {self.unit}/s, ETA {eta}"
        else:
            done += f" {self.unit}, {rate:,.1f} {self.unit}/s"
        figures = self._text_figures()
        key = (int(self.done), figures)
        if key != self._last_key:  # the same count again (the final line after the last one): not repeated
            self._write(f"{self.desc}: {done}" + (f", {figures}" if figures else ""))
            self._last_key = key
        self._last_time = time.monotonic()

    def _write(self, line: str) -> None:
        with self._lock:
            self._write_now(line)

    def _write_now(self, line: str) -> None:
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()
