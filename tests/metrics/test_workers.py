"""Supervised link-grammar workers (issue 28, item 2), with real link-parser processes: a worker
killed by a signal, stopped past the time limit or ending its input is restarted, its sentence
fails with the reason, every other sentence of the batch still gets the tree it gets anyway;
sentences link-grammar cannot take are refused with a reason, never an exception."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from paraamr.failures import Failure, is_failure
from paraamr.metrics import parsers, workers

SENTENCES = [f"The {animal} sat on the mat near the door." for animal in ("cat", "dog", "fox", "owl")] + [
    "I know it.",
    "After the storm passed, the villagers returned to their homes.",
    "It was the storm that destroyed the bridge.",
    "Do you know why he left?",
]


@pytest.fixture(scope="module")
def expected():
    with parsers.LinkGrammarParser(pos=None, processes=1, ahead=1) as parser:
        return parser.parse(SENTENCES)


def _parse_in_thread(parser, sentences):
    out: dict[str, list] = {}
    thread = threading.Thread(target=lambda: out.setdefault("trees", parser.parse(sentences)))
    thread.start()
    return thread, out


def test_refused_sentences_are_failures_and_the_rest_parse(expected):
    bad = {
        "x" * 3000: "over its limit of 2,046",
        "a\x00b": "NUL character",
        "\u200b\u200b \u2060": "no visible character",
        "he\x1b[31m said hi": "control character (U+001B)",
        "\ud800 hi": "lone surrogate (U+D800)",
        " ".join(["word"] * 300) + ".": "more than 254 words",  # link-parser's own message
    }
    with parsers.LinkGrammarParser(pos=None, processes=2) as parser:
        out = parser.parse([*bad, *SENTENCES])
        assert parser.workers.restarts == 0
    for (sentence, why), got in zip(bad.items(), out, strict=False):
        assert is_failure(got) and got.stage == "parse" and why in got.reason, (sentence[:20], got)
    assert out[len(bad) :] == expected


def test_line_limit_is_link_parsers():
    """A 2,046-byte line (with its newline) is answered; one byte more and link-parser exits."""
    with parsers.LinkGrammarParser(pos=None, processes=1) as parser:
        command = parser.workers.command
    worker = workers.LinkParserProcess(command)
    try:
        worker.send("x" * (workers.MAX_LINE_BYTES - 2))  # with the leading space and newline: 2,046
        output, _ = worker.answer(time.monotonic() + 60)
        assert "(" in output and worker.alive()
        worker.send("x" * (workers.MAX_LINE_BYTES - 1))
        with pytest.raises(workers.WorkerDied, match=r"Input line too long \(>2046\)"):
            worker.answer(time.monotonic() + 60)
    finally:
        worker.kill()
    assert workers.link_grammar_problem("x" * (workers.MAX_LINE_BYTES - 2)) is None
    assert "2,048 bytes" in workers.link_grammar_problem("é" * 1023)  # bytes, not characters


def test_a_worker_that_ends_its_input_is_restarted(expected):
    """The pool past the refusal: link-parser exits on a too long line; the batch goes on."""
    with parsers.LinkGrammarParser(pos=None, processes=1) as parser:
        long_line = "x" * 3000
        out = parser.workers.run([SENTENCES[0], long_line, *SENTENCES[1:]])
        assert parser.workers.restarts == 1
    assert out[1] == Failure(
        "parse", "link-grammar: link-parser exited with status 0; it said: "
        "link-grammar: Fatal error: Input line too long (>2046).",
    )
    assert [out[0], *out[2:]] == expected


def test_a_killed_worker_is_restarted(expected):
    with parsers.LinkGrammarParser(pos=None, processes=2) as parser:
        parser.parse(["Hello."])  # both workers started
        victim = parser.workers.workers[0]
        os.kill(victim.pid, signal.SIGSTOP)  # it takes sentences but answers none ...
        thread, out = _parse_in_thread(parser, SENTENCES)
        time.sleep(1.0)
        os.kill(victim.pid, signal.SIGKILL)  # ... until it is killed
        thread.join(120)
        trees = out["trees"]
        assert parser.workers.restarts == 1
        pool = parser.workers.workers
        assert len(pool) == 2 and all(w.alive() for w in pool) and victim.pid not in {w.pid for w in pool}
    failed = [i for i, t in enumerate(trees) if is_failure(t)]
    assert len(failed) == 1, trees
    assert trees[failed[0]].reason == "link-grammar: link-parser killed by SIGKILL"
    assert [t for i, t in enumerate(trees) if i not in failed] == [
        t for i, t in enumerate(expected) if i not in failed
    ]


def test_a_hung_worker_is_killed_after_the_time_limit(expected):
    with parsers.LinkGrammarParser(pos=None, processes=1, timeout=2) as parser:
        parser.parse(["Hello."])
        hung = parser.workers.workers[0]
        os.kill(hung.pid, signal.SIGSTOP)
        started = time.monotonic()
        trees = parser.parse(SENTENCES)
        assert time.monotonic() - started < 60
        assert hung.process.poll() == -signal.SIGKILL and parser.workers.restarts == 1
    assert trees[0] == Failure("parse", "link-grammar: no answer within 2 s")
    assert trees[1:] == expected[1:]


def test_failures_are_not_cached_on_disk(tmp_path):
    with parsers.LinkGrammarParser(pos=None, processes=1, cache_dir=tmp_path) as parser:
        parser.parse(["I know it.", "a\x00b"])
    db = parsers.TreeCache(tmp_path)
    assert list(db.get(parser.signature, ["I know it.", "a\x00b"])) == ["I know it."]


def test_callable_parser_failure_is_per_sentence():
    def parse(sentence):
        if "bad" in sentence:
            raise RuntimeError("cannot")
        return "(ROOT (X x))"

    out = parsers.CallableParser(parse, name="picky").parse(["ok", "bad one", "ok too"])
    assert out == ["(ROOT (X x))", Failure("parse", "callable:picky: RuntimeError: cannot"), "(ROOT (X x))"]


def test_debug_shows_the_workers_side():
    code = (
        "from paraamr.metrics.parsers import LinkGrammarParser\n"
        "p = LinkGrammarParser(pos=None, processes=1)\n"
        "print(p.workers.run(['x' * 3000, 'I know it.']))\n"
        "p.close()\n"
    )
    env = {**os.environ, "PARAAMR_DEBUG": "1"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "link-grammar worker" in run.stderr and "started" in run.stderr
    assert "Fatal error: Input line too long" in run.stderr and "restarting" in run.stderr
    quiet = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        env={k: v for k, v in os.environ.items() if k != "PARAAMR_DEBUG"},
    )
    assert "link-grammar worker" not in quiet.stderr
