"""Progress of long commands on stderr: ``--progress`` ``bar`` (tqdm), ``log`` (a line every
``interval`` seconds, and a last one unless it repeats), ``none``, or ``auto`` (a bar on a
terminal, lines elsewhere). The processes of one run add up their work through :class:`SharedCount`.

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
import contextlib
import io
import json
import logging
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "MODES",
    "Progress",
    "SharedCount",
    "add_progress_options",
    "add_quiet_option",
    "progress_mode",
    "quiet_output",
    "quieted",
    "silence_library_bars",
]

MODES = ("auto", "bar", "log", "none")
#: Seconds between two lines in ``log`` mode.
LOG_INTERVAL = 30.0
#: Seconds between two writes of a process's count (:class:`SharedCount`).
SAVE_SECONDS = 0.5


def add_progress_options(parser: argparse.ArgumentParser) -> None:
    """``--progress {auto,bar,log,none}``, ``--no-progress`` (``dest="progress"``) and ``-q/--quiet``
    (``dest="quiet"``: errors only, :func:`quiet_output`; it hides progress whatever ``--progress``
    says, so ``-q --no-progress`` is allowed, as both say the same)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--progress",
        choices=MODES,
        default="auto",
        help="how progress is shown on stderr: a bar on a terminal (the launcher's, under accelerate "
        f"launch or torchrun) and a line every {LOG_INTERVAL:g} s in a log (auto), always a bar, "
        "always lines, or nothing (default: %(default)s)",
    )
    group.add_argument(
        "--no-progress", dest="progress", action="store_const", const="none", help="= --progress none"
    )
    add_quiet_option(parser)


def add_quiet_option(parser: argparse._ActionsContainer) -> None:
    """``-q/--quiet`` (``dest="quiet"``), the same on every command."""
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print errors only (and the result itself, where the output is the result): no progress, "
        "summary or warnings",
    )


@contextlib.contextmanager
def quiet_output(keep_stdout: bool = False) -> Iterator[None]:
    """``-q``: within the block, nothing on stderr but the house's error lines and, unless
    ``keep_stdout`` (a command whose output is its result), nothing on stdout.

    >>> with quiet_output():
    ...     print("a summary")
    >>> with quiet_output(keep_stdout=True):
    ...     print("0.75")
    0.75
    """
    from huggingface_hub.utils import are_progress_bars_disabled, enable_progress_bars

    hub_bars = not are_progress_bars_disabled()
    env = os.environ.get("HF_DATASETS_DISABLE_PROGRESS_BARS")
    silence_library_bars()
    os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] = "1"
    datasets = sys.modules.get("datasets")  # imported in the block, it reads the variable
    datasets_bars = datasets is not None and datasets.is_progress_bar_enabled()
    if datasets is not None:
        datasets.disable_progress_bars()
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings(), contextlib.ExitStack() as stack:
            warnings.simplefilter("ignore")
            stack.enter_context(contextlib.redirect_stderr(_ErrorsOnly(sys.stderr)))
            if not keep_stdout:
                sink = stack.enter_context(open(os.devnull, "w"))
                stack.enter_context(contextlib.redirect_stdout(sink))
            yield
    finally:  # the libraries' bars as they were, for what the process does next
        logging.disable(previous)
        if env is None:
            os.environ.pop("HF_DATASETS_DISABLE_PROGRESS_BARS", None)
        else:
            os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] = env
        if datasets_bars and env is None:  # (datasets imported in the block keeps them off)
            datasets.enable_progress_bars()
        if hub_bars:
            enable_progress_bars()


def quieted(args: argparse.Namespace, *, keep_stdout: bool = False) -> contextlib.AbstractContextManager:
    """:func:`quiet_output` (and no progress display) with ``-q``, else nothing."""
    if not getattr(args, "quiet", False):
        return contextlib.nullcontext()
    if hasattr(args, "progress"):
        args.progress = "none"
    return quiet_output(keep_stdout)


class _ErrorsOnly(io.TextIOBase):
    """A stderr that lets through only error lines (``paraamr CMD: problem``, not warnings)."""

    def __init__(self, stream: IO[str]):
        self.stream, self._line = stream, ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        *lines, self._line = (self._line + text).split("\n")
        for line in lines:
            if line.startswith("paraamr ") and ": warning: " not in line:
                self.stream.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def silence_library_bars() -> None:
    """No progress bars of transformers and huggingface_hub. Switched off in huggingface_hub's
    state, not by ``HF_HUB_DISABLE_PROGRESS_BARS``, which would also silence a model's download
    (:func:`paraamr.models.download.fetch_release` turns its bar on while it runs)."""
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()
    if "transformers" in sys.modules:
        sys.modules["transformers"].utils.logging.disable_progress_bar()


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
        return "bar" if _terminal(stream or sys.stderr) else "log"
    return mode


def _terminal(stream: IO[str]) -> bool:
    """Whether ``stream`` is a terminal, or stderr piped to one by a launcher (``accelerate launch``)."""
    if hasattr(stream, "isatty") and stream.isatty():
        return True
    try:
        return stream is sys.stderr and _pipe_to_terminal(os.getpid(), stream.fileno())
    except (OSError, ValueError, AttributeError):  # no /proc, a stream without a descriptor
        return False


def _pipe_to_terminal(pid: int, fd: int, depth: int = 3) -> bool:
    """Whether ``fd`` of ``pid`` is a pipe read by a parent (up to ``depth`` up) whose stderr is a
    terminal (Linux ``/proc``)."""
    pipe = os.readlink(f"/proc/{pid}/fd/{fd}")
    if not pipe.startswith("pipe:") or depth == 0:
        return False
    with open(f"/proc/{pid}/stat") as f:
        parent = int(f.read().rsplit(")", 1)[1].split()[1])
    if parent <= 1 or pipe not in _links(parent):
        return False
    err = os.readlink(f"/proc/{parent}/fd/2")
    return err.startswith(("/dev/pts/", "/dev/tty")) or _pipe_to_terminal(parent, 2, depth - 1)


def _links(pid: int) -> set[str]:
    """What the open descriptors of process ``pid`` point at."""
    folder, found = f"/proc/{pid}/fd", set()
    for name in os.listdir(folder):
        with contextlib.suppress(OSError):
            found.add(os.readlink(f"{folder}/{name}"))
    return found


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress(contextlib.AbstractContextManager):
    """The progress of one command: ``update(done, **figures)``, ``phase(text)``, ``close()``.
    ``tick`` is called every second from a thread (to show other processes' work)."""

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
        tick: Callable[[], None] | None = None,
    ):
        self.desc, self.total, self.unit = desc, total, unit
        self.stream = stream or sys.stderr
        self.mode = progress_mode(mode, self.stream)
        self.interval = interval
        self.done, self.figures = float(initial), {}
        self._initial, self._started = float(initial), time.monotonic()
        self._last_key, self._last_time = None, -float("inf")
        self._phase = ""
        self._bar = None
        self._lock = threading.RLock()
        self._ticking = threading.Event()
        self._tick_fn = tick
        if self.mode == "bar":
            self._draw()
        if self.mode == "bar" or (self.mode == "log" and tick is not None):  # moving while nothing else does
            threading.Thread(target=self._tick, daemon=True, name="paraamr-progress").start()

    def phase(self, text: str) -> None:
        """The step under way, ``NAME`` or ``NAME: detail`` (``loading models: parser x (1 MB)``):
        the bar shows NAME beside it and the detail as a line above; a log gets the line."""
        name, _, detail = text.partition(": ")
        with self._lock:
            self._phase = name
            if self.mode == "log" or (self.mode == "bar" and detail):
                self._write(f"{self.desc}: {text}")
            if self.mode == "bar":
                self._draw()

    def update(self, done: float, **figures: Any) -> None:
        """``done`` units so far (absolute, not an increment), and figures to show beside them. The
        count kept is never below an earlier one nor above the total."""
        with self._lock:
            if self.total is not None:
                done = min(done, float(self.total))
            self.done = max(self.done, done)
            self.figures.update(figures)
            if self.mode == "bar":
                self._draw()
            elif self.mode == "log" and time.monotonic() - self._last_time >= self.interval:
                self._log()

    def close(self, *, failed: bool = False) -> None:
        """End the display: the bar's last state, or the last line (unless it repeats, or the command
        ``failed`` before any work: its error is the line to read)."""
        self._ticking.set()
        with self._lock:
            self._phase = ""
            if self.mode == "bar" and self._bar is not None:
                self._draw()
                self._bar.close()
                self._bar = None
            elif self.mode == "log" and not (failed and self.done == self._initial):
                self._log()

    def _tick(self) -> None:
        while not self._ticking.wait(1.0):
            if self._tick_fn is not None:
                with contextlib.suppress(Exception):  # a display never stops the work
                    self._tick_fn()
            with self._lock:
                if self._bar is not None:
                    self._bar.refresh()

    def __exit__(self, kind: type[BaseException] | None, *_) -> None:
        self.close(failed=kind is not None)

    def elapsed(self) -> float:
        """Seconds since this display started."""
        return time.monotonic() - self._started

    def _text_figures(self) -> str:
        return ", ".join(
            f"{k} {v:,.1f}" if isinstance(v, float) else f"{k} {v:,}" for k, v in self.figures.items()
        )

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
        shown = f"{self.desc} ({self._phase})" if self._phase else self.desc
        self._bar.set_description_str(shown, refresh=False)
        self._bar.set_postfix_str(self._text_figures(), refresh=False)
        self._bar.refresh()

    def _log(self) -> None:
        rate = (self.done - self._initial) / max(self.elapsed(), 1e-9)
        done = f"{int(self.done):,}"
        if self.total:
            left = max(self.total - self.done, 0) / rate if rate > 0 else None
            eta = _clock(left) if left is not None else "?"
            done += f"/{int(self.total):,} {self.unit} ({100 * int(self.done) // int(self.total)}%)"
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
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()


class SharedCount:
    """The counts of one run's processes, added up: each writes ``folder/progress-<name>.json`` at
    most every ``every`` seconds (:meth:`save`); :meth:`sum` adds those of ``names`` (None: every
    progress file of the folder) to its own. No ``folder``: this process's counts alone.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> a = SharedCount(folder, "0", names=["0", "1"])
    >>> b = SharedCount(folder, "1", names=["0", "1"])
    >>> a.save(3, failures=1, now=True); b.save(4, failures=0, now=True)
    >>> a.save(5, failures=1)  # written later: within ``every`` seconds of the last write
    >>> a.sum(), b.sum()
    ({'done': 9, 'failures': 1}, {'done': 7, 'failures': 1})
    """

    def __init__(
        self,
        folder: str | os.PathLike | None,
        name: str,
        *,
        names: Iterable[str] | None = None,
        every: float = SAVE_SECONDS,
    ) -> None:
        self.folder = None if folder is None else Path(folder)
        self.name, self.every = name, every
        self.names = None if names is None else list(names)
        self.counts: dict[str, float] = {"done": 0}
        self._saved = -float("inf")
        self._lock = threading.Lock()

    def path(self, name: str | None = None) -> Path:
        """The file of process ``name`` (this one's by default)."""
        assert self.folder is not None
        return self.folder / f"progress-{self.name if name is None else name}.json"

    def save(self, done: float, *, now: bool = False, **counts: float) -> None:
        """Keep this process's counts; write them when ``every`` seconds have passed since the last
        write (or ``now``), unless the folder is gone."""
        from paraamr.atomic import atomic_write

        with self._lock:
            self.counts = {"done": done, **counts}
            due = now or time.monotonic() - self._saved >= self.every
            if self.folder is None or not due or not self.folder.is_dir():
                return
            atomic_write(self.path(), json.dumps(self.counts), durable=False)
            self._saved = time.monotonic()

    def _files(self) -> list[Path]:
        if self.folder is None:
            return []
        if self.names is not None:
            return [self.path(name) for name in self.names]
        return sorted(self.folder.glob("progress-*.json"))

    def sum(self) -> dict[str, float]:
        """Each count summed over the run's processes: this one's latest, the others' last written."""
        with self._lock:
            total = dict(self.counts)
        own = self.path() if self.folder is not None else None
        for path in self._files():
            if path == own:
                continue
            with contextlib.suppress(OSError, ValueError, AttributeError, TypeError):  # not written yet
                counts = json.loads(path.read_text()).items()  # a damaged file adds nothing, not part of it
                total.update({key: total.get(key, 0) + value for key, value in counts})
        return total

    def clear(self) -> None:
        """Delete the run's files (and a killed writer's temporary files): by one process, before
        the others start."""
        from paraamr.atomic import remove_temps

        for path in self._files():
            path.unlink(missing_ok=True)
            remove_temps(path)
