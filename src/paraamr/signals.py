"""Stopping a long command cleanly: Ctrl-C (SIGINT), SIGTERM (Slurm, Kubernetes, ``timeout``) and
SIGHUP end the command with one line and the exit status of the signal (130, 143, 129).

Inside :func:`handled`, the first signal raises :class:`Interrupted` (a ``KeyboardInterrupt``) in
the main thread, except inside a :func:`critical` block, whose end it waits for. A second signal
exits at once (:func:`os._exit`). A process whose threads may be inside native code ends with
:func:`exit_with`, never through the interpreter's shutdown (torch then aborts).

>>> import time
>>> with handled():
...     try:
...         os.kill(os.getpid(), signal.SIGTERM)
...         time.sleep(1)
...     except Interrupted as err:
...         print(err.status, err)
143 terminated (SIGTERM)
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import NoReturn

__all__ = [
    "Interrupted",
    "check",
    "critical",
    "exit_with",
    "handled",
    "ignore_signals",
    "interrupted",
]

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}


class Interrupted(KeyboardInterrupt):
    """A signal asked the command to stop; ``status`` is 128 + the signal number."""

    def __init__(self, signum: int = signal.SIGINT, detail: str | None = None):
        self.signum, self.detail = signum, detail
        word = _WORDS.get(signum, "stopped")
        name = "" if signum == signal.SIGINT else f" ({signal.Signals(signum).name})"
        super().__init__(f"{word}{' ' + detail if detail else ''}{name}")

    @property
    def status(self) -> int:
        return 128 + self.signum

    def with_detail(self, detail: str) -> Interrupted:
        """The same interruption, saying how far the command got."""
        return Interrupted(self.signum, detail)


class _State:
    received: int | None = None  # the first signal, once one came
    count = 0  # signals received
    depth = 0  # open critical() blocks
    pending = False  # a signal came inside a critical block
    command = "paraamr"


_state = _State()


def interrupted() -> int | None:
    """The signal that asked this process to stop, or None."""
    return _state.received


def check() -> None:
    """Raise :class:`Interrupted` when a signal came whose exception Python dropped (in a weakref
    callback or ``__del__``). Call it only on a command's way forward, never after catching
    :class:`Interrupted`; inside a :func:`critical` block the block's end raises it."""
    if _state.received is not None and not _state.depth:
        raise Interrupted(_state.received)


def _handler(signum: int, _frame) -> None:
    _state.count += 1
    if _state.received is not None:  # the second one: out now
        word = _WORDS.get(signum, "stopped")
        with contextlib.suppress(Exception):
            sys.stderr.write(f"\n{_state.command}: {word} again; exiting now (saved work stands)\n")
            sys.stderr.flush()
        os._exit(128 + signum)
    _state.received = signum
    if _state.depth:
        _state.pending = True
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def handled(command: str = "paraamr") -> Iterator[None]:
    """Install the handlers of :data:`SIGNALS` for the block (main thread only); ``command`` names
    the process in the line of a second signal."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.getsignal(s) for s in SIGNALS}
    hook = sys.unraisablehook
    _state.received, _state.depth, _state.pending, _state.command = None, 0, False, command

    def unraisable(info) -> None:  # an Interrupted Python had to drop: check() raises it later
        if not isinstance(info.exc_value, Interrupted):
            hook(info)

    for s in SIGNALS:
        signal.signal(s, _handler)
    sys.unraisablehook = unraisable
    try:
        yield
    finally:
        sys.unraisablehook = hook
        for s, h in before.items():
            signal.signal(s, h)


@contextlib.contextmanager
def critical() -> Iterator[None]:
    """A block a first signal does not cut (a commit): its :class:`Interrupted` comes at the end."""
    _state.depth += 1
    try:
        yield
    finally:
        _state.depth -= 1
        if not _state.depth and _state.pending:
            _state.pending = False
            raise Interrupted(_state.received or signal.SIGINT)


def ignore_signals() -> None:
    """Ignore :data:`SIGNALS` from now on. A console script registers it first as an exit callback,
    so it runs last: the interpreter then resets every handler Python set but an ignored signal's,
    and a signal during its teardown of the modules would kill a finished command (exit 130)."""
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)


def exit_with(status: int) -> NoReturn:
    """End the process with ``status`` (the console scripts' last call): ``sys.exit``, or at once
    (flushed, without the interpreter's shutdown) in a launch of several processes (gloo's native
    threads) or after an error while other threads run. A signal while the interpreter waits for
    threads or runs exit callbacks ends it at once with ``status`` (the command's work is done);
    after a console script's last callback it is ignored (:func:`ignore_signals`)."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1 or (status and threading.active_count() > 1):
        _flushed_exit(status)
    if threading.current_thread() is threading.main_thread():  # the work is done: a signal now ends
        for s in SIGNALS:  # the shutdown at once, with the command's status (not a traceback, not 130)
            signal.signal(s, lambda *_: _flushed_exit(status))
    sys.exit(status)


def _flushed_exit(status: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)
