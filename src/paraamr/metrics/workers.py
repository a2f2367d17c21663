"""Supervised ``link-parser`` workers, restarted when they crash, hang or close their pipe.

The sentence a failed worker was parsing becomes a :class:`~paraamr.failures.Failure` with
link-grammar's messages (its stderr is merged into its answers); the others still get theirs.
``PARAAMR_DEBUG=1`` also writes every worker event to stderr.

>>> link_grammar_problem("The cat sat."), link_grammar_problem("a\\x00b")
(None, 'a NUL character at character 2')
>>> link_grammar_problem("\\u200b\\u200b"), link_grammar_problem("x" * 3000)
('no visible character', "3,002 bytes as link-parser's input line, over its limit of 2,046")
>>> link_grammar_problem("bad \\x1b[31m escape")
'a control character (U+001B) at character 5'
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import queue
import select
import signal
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence

from paraamr.failures import Failure
from paraamr.metrics.trees import _short
from paraamr.tasks import in_threads
from paraamr.texts import text_problem

__all__ = ["MAX_LINE_BYTES", "LinkParserProcess", "WorkerPool", "link_grammar_problem"]

#: The longest input line ``link-parser`` reads (bytes, with its newline); a longer one ends it.
MAX_LINE_BYTES = 2046
#: A command whose reply marks the end of each answer: link-parser answers every input line.
SENTINEL = b"!width=4321\n"
SENTINEL_REPLY = b"width set to 4321"
#: Its diagnostics (stderr, merged into stdout) start with this.
MESSAGE = b"link-grammar:"

logger = logging.getLogger(__name__)


def link_grammar_problem(sentence: str) -> str | None:
    """Why ``link-parser`` cannot take ``sentence`` (whitespace collapsed), or None."""
    if (problem := text_problem(sentence)) is not None:
        return problem
    for i, ch in enumerate(sentence):
        if unicodedata.category(ch) == "Cc":
            return f"a control character (U+{ord(ch):04X}) at character {i + 1}"
    if not any(unicodedata.category(ch)[0] in "LMNPS" for ch in sentence):
        return "no visible character"
    size = len(sentence.encode("utf-8")) + 2  # a leading space (see LinkParserProcess.send), a newline
    if size > MAX_LINE_BYTES:
        return f"{size:,} bytes as link-parser's input line, over its limit of {MAX_LINE_BYTES:,}"
    return None


def _debug(message: str) -> None:
    logger.debug(message)
    if os.environ.get("PARAAMR_DEBUG", "") not in ("", "0"):
        with contextlib.suppress(OSError, ValueError):  # stderr closed: the log has it
            sys.stderr.write(message + "\n")
            sys.stderr.flush()


class LinkParserProcess:
    """One ``link-parser`` process (stderr merged into stdout, 120 s to start; not thread-safe):
    :meth:`send` a sentence, then :meth:`answer` by a deadline or raise a :class:`WorkerError`."""

    def __init__(self, command: Sequence[str]) -> None:
        self.process = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0
        )
        self.pid = self.process.pid
        assert self.process.stdout is not None
        self._fd = self.process.stdout.fileno()
        os.set_blocking(self._fd, False)
        self._buffer = bytearray()
        self._send_line(b"")  # the start-up messages end with the first sentinel reply
        try:
            _, messages = self.answer(time.monotonic() + 120)
        except WorkerError as err:
            self.kill()
            raise OSError(f"link-parser did not start ({err}): {' '.join(command)}") from None
        _debug(f"link-grammar worker {self.pid}: started ({' '.join(command)})")
        for message in messages:
            _debug(f"link-grammar worker {self.pid}: {message}")

    def alive(self) -> bool:
        return self.process.poll() is None

    def _send_line(self, line: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        # died or closed its stdin: the reader sees end of file and says why
        with contextlib.suppress(OSError, ValueError):
            stdin.write(line + SENTINEL)
            stdin.flush()

    def send(self, sentence: str) -> None:
        """Ask for ``sentence``'s parse (a leading space keeps ``!...`` from being a command)."""
        self._send_line(b" " + sentence.encode("utf-8") + b"\n")

    def answer(self, deadline: float) -> tuple[str, list[str]]:
        """The output of the next answer and link-grammar's messages in it."""
        while True:
            end = self._reply_end()
            if end is not None:
                chunk = bytes(self._buffer[: end - len(SENTINEL_REPLY) - 1])
                del self._buffer[:end]
                return _split_messages(chunk)
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerTimeout("no answer in time")
            ready, _, _ = select.select([self._fd], [], [], left)
            if not ready:
                continue
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                continue
            if not data:
                raise WorkerDied(self._exit_status(), _split_messages(bytes(self._buffer))[1])
            self._buffer += data

    def _reply_end(self) -> int | None:
        """The end of the first line of the buffer that is the sentinel's reply, or None."""
        line = b"\n" + SENTINEL_REPLY + b"\n"
        at = (b"\n" + self._buffer).find(line)  # its start in the buffer (a line at 0 included)
        return None if at < 0 else at + len(line) - 1

    def _exit_status(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:  # closed its output but runs on
            self.kill()
            return "closed its output"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exited with status {code}"

    def kill(self) -> None:
        """End the process now."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def close(self) -> None:
        """End the process gracefully (end of input), killing it after 5 s."""
        if self.process.poll() is None:
            assert self.process.stdin is not None
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                self.process.stdin.close()
                self.process.wait(timeout=5)
        self.kill()


def _split_messages(chunk: bytes) -> tuple[str, list[str]]:
    """(output without link-grammar's message lines, those messages)."""
    out, messages = [], []
    for line in chunk.decode("utf-8", errors="replace").splitlines(keepends=True):
        if line.encode("utf-8").startswith(MESSAGE):
            messages.append(line.strip())
        else:
            out.append(line)
    return "".join(out), messages


class WorkerError(Exception):
    """A worker gave no answer."""


class WorkerDied(WorkerError):
    def __init__(self, status: str, messages: list[str]) -> None:
        said = f"; it said: {' / '.join(messages)}" if messages else ""
        super().__init__(f"link-parser {status}{said}")


class WorkerTimeout(WorkerError):
    pass


class WorkerPool:
    """``size`` workers with ``ahead`` sentences queued each and ``timeout`` seconds per sentence;
    ``read(sentence, output, messages)`` makes an answer's tree or raises ValueError (a failure)."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        size: int,
        read: Callable[[str, str, list[str]], str],
        timeout: float = 120,
        ahead: int = 8,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.command = list(command)
        self.size = size
        self.read = read
        self.timeout = timeout
        self.ahead = max(1, ahead)
        self.restarts = 0
        self.workers: list[LinkParserProcess] = []

    def _start(self, n: int) -> list[LinkParserProcess]:
        self.workers = [w for w in self.workers if w.alive()]
        while len(self.workers) < n:
            self.workers.append(LinkParserProcess(self.command))
        return self.workers[:n]

    def run(self, sentences: Sequence[str]) -> list[str | Failure]:
        """One tree or :class:`Failure` per sentence, in order."""
        results: list[str | Failure] = [Failure("parse", "not parsed")] * len(sentences)
        if not sentences:
            return results
        todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(len(sentences)):
            todo.put(i)
        workers = self._start(min(self.size, len(sentences)))
        in_threads(self._serve, [(slot, sentences, todo, results) for slot in range(len(workers))])
        return results

    def _serve(self, slot: int, sentences: Sequence[str], todo: queue.SimpleQueue, results: list) -> None:
        """Worker ``slot``'s loop: keep ``ahead`` sentences in flight, take answers in order."""
        flight: collections.deque[int] = collections.deque()
        since = time.monotonic()  # when the head of ``flight`` became the one being parsed
        while True:
            while len(flight) < self.ahead:
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    break
                self.workers[slot].send(sentences[i])
                flight.append(i)
            if not flight:
                return
            worker = self.workers[slot]
            try:
                output, messages = worker.answer(since + self.timeout)
            except WorkerError as err:
                i = flight.popleft()
                reason = str(err) if isinstance(err, WorkerDied) else f"no answer within {self.timeout:g} s"
                results[i] = Failure("parse", f"link-grammar: {reason}")
                said = f"{reason} on {_short(sentences[i], 60)}"
                _debug(f"link-grammar worker {worker.pid}: {said}; restarting")
                worker.kill()
                self.workers[slot] = LinkParserProcess(self.command)
                self.restarts += 1
                for k in flight:  # sent to the dead worker: ask the new one
                    self.workers[slot].send(sentences[k])
                since = time.monotonic()
                continue
            since = time.monotonic()
            i = flight.popleft()
            for message in messages:
                _debug(f"link-grammar worker {worker.pid}: {message} (on {_short(sentences[i], 60)})")
            try:
                results[i] = self.read(sentences[i], output, messages)
            except ValueError as err:
                said = "; ".join(m.removeprefix("link-grammar: ") for m in messages)
                results[i] = Failure("parse", f"link-grammar: {said or err}")

    def close(self) -> None:
        """End every worker."""
        workers, self.workers = self.workers, []
        for worker in workers:
            worker.close()
