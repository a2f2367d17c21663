"""A command in a pseudo-terminal, to type Ctrl-C into it as a person would (a background job of a
non-interactive shell ignores SIGINT, so a plain subprocess cannot be interrupted so)."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import sys
import time
from pathlib import Path

import psutil
from pausing import pause_env


class Terminal:
    """``python ARGV`` in a pseudo-terminal (its own session, the pty its controlling terminal),
    paused at ``pause`` (see ``pause/sitecustomize.py``): ``ctrl_c()`` types Ctrl-C, as a person
    would."""

    def __init__(self, argv: list[str], pause: str | None, cwd: Path):
        env = pause_env(pause or "", {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"})
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the pty's session leader
            os.chdir(cwd)
            os.execve(sys.executable, [sys.executable, *argv], env)
        self.output = b""

    def read_until(self, text: str, timeout: float = 240, *, count: int = 1) -> None:
        """Read the output until ``text`` is in it (``count`` times)."""
        end = time.monotonic() + timeout
        while self.output.count(text.encode()) < count:
            assert time.monotonic() < end, self.output.decode(errors="replace")[-2000:]
            if select.select([self.fd], [], [], 0.1)[0]:
                try:
                    self.output += os.read(self.fd, 65536)
                except OSError:  # the child is gone
                    break
        assert self.output.count(text.encode()) >= count, self.output.decode(errors="replace")[-2000:]

    def ctrl_c(self) -> None:
        os.write(self.fd, b"\x03")

    def session(self) -> list[int]:
        """The other processes still in the terminal's session (a launcher's workers)."""
        found = []
        for pid in psutil.pids():
            with contextlib.suppress(OSError):
                if pid != self.pid and os.getsid(pid) == self.pid:
                    found.append(pid)
        return found

    def wait(self, timeout: float = 120) -> tuple[int, str]:
        """The exit status and output, once the command and every process of its session ended
        (what a worker prints as it dies is read too)."""
        end = time.monotonic() + timeout
        done = False
        while not done or self.session():
            if not done:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            assert time.monotonic() < end, "the run did not stop"
            if select.select([self.fd], [], [], 0.1)[0]:
                with contextlib.suppress(OSError):
                    self.output += os.read(self.fd, 65536)
        while True:  # what is left in the pty
            try:
                chunk = os.read(self.fd, 65536) if select.select([self.fd], [], [], 0.2)[0] else b""
            except OSError:
                chunk = b""
            if not chunk:
                break
            self.output += chunk
        os.close(self.fd)
        code = os.waitstatus_to_exitcode(status)
        return code, self.output.decode(errors="replace").replace("\r\n", "\n")
