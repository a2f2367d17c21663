"""Constituency parsers for TED: link-grammar (offline), a CoreNLP server, or any callable.

Every parser maps sentences to PTB bracket strings, caches parses by sentence (each distinct
sentence is parsed once per parser), and has a ``signature``.

* :class:`LinkGrammarParser`: Debian's ``link-parser en -constituents=1`` (packages
  ``link-grammar`` and ``link-grammar-dictionaries-en``), ONE long-lived process fed a line per
  sentence. Its word subscripts (``cat.n``, ``sat.v-d``), unknown/guessed-word marks (``xx{?}``,
  ``5.50{!}``, ``green{~}``) and null-link braces (``{the}``) are stripped, its ``{``/``}`` (how
  it prints brackets in words) become ``-LRB-``/``-RRB-``, and the tree is wrapped in
  ``(ROOT ...)`` so that height 3 means ROOT, S, S's children as on CoreNLP trees. link-grammar
  trees have no part-of-speech layer, so TED values over them are not on the paper's scale.
* :class:`CoreNLPParser`: a Stanford CoreNLP server (the paper's parser), e.g. started with
  ``java -mx4g -cp "*" edu.stanford.nlp.pipeline.StanfordCoreNLPServer -port 9000``; sentences are
  sent in batches, one per line (``ssplit.eolonly``), annotators ``tokenize,ssplit,pos,parse``.
* :class:`CallableParser`: any function from a sentence to a bracket string.

>>> clean_link_grammar_word("sat.v-d"), clean_link_grammar_word("xx{?}.n"), clean_link_grammar_word("{the}")
('sat', 'xx', 'the')
>>> clean_link_grammar_word(":.p"), clean_link_grammar_word("."), clean_link_grammar_word("{{}")
(':', '.', '-LRB-')
>>> p = CallableParser(lambda s: f"(ROOT (S (NN {s})))")
>>> p.parse(["a", "b", "a"]), p.calls
(['(ROOT (S (NN a)))', '(ROOT (S (NN b)))', '(ROOT (S (NN a)))'], 2)
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

_SPACES = re.compile(r"\s+")
_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_MARK = re.compile(r"\{[?!~&*]\}|\[[?!~&*]\]")
_SUBSCRIPT = re.compile(r"(?<=[^.])\.[a-z#][\w#*-]*$")
_NULL_WORD = re.compile(r"^\{(.+)\}$")
_BRACKETS = {"{": "-LRB-", "}": "-RRB-"}


class TreeParser:
    """Base class: ``parse(sentences)`` with a per-sentence cache around ``_parse_batch``."""

    name = "parser"

    def __init__(self) -> None:
        self._cache: dict[str, str] = {}
        self.calls = 0  # sentences actually parsed (cache misses)

    @property
    def signature(self) -> str:
        """How trees are made: parser, version, settings (``k:v|...`` fields, no leading key)."""
        return self.name

    def parse(self, sentences: Sequence[str]) -> list[str]:
        """One PTB bracket string per sentence, in order."""
        for i, sentence in enumerate(sentences):
            if not isinstance(sentence, str):
                raise ValueError(f"sentence {i}: expected str, got {type(sentence).__name__}")
        todo = [s for s in dict.fromkeys(sentences) if s not in self._cache]
        if todo:
            trees = self._parse_batch(todo)
            if len(trees) != len(todo):
                raise RuntimeError(f"{self.name}: {len(trees)} trees for {len(todo)} sentences")
            self._cache.update(zip(todo, trees, strict=True))
            self.calls += len(todo)
        return [self._cache[s] for s in sentences]

    def _parse_batch(self, sentences: list[str]) -> list[str]:
        raise NotImplementedError

    def close(self) -> None:
        """Free what the parser holds (a process, a connection); it restarts when used again."""


class CallableParser(TreeParser):
    """Trees from ``fn(sentence) -> bracket string``."""

    def __init__(self, fn: Callable[[str], str], *, name: str | None = None) -> None:
        super().__init__()
        self.fn = fn
        self.name = f"callable:{name or getattr(fn, '__name__', type(fn).__name__)}"

    def _parse_batch(self, sentences: list[str]) -> list[str]:
        return [self.fn(s) for s in sentences]


def clean_link_grammar_word(word: str) -> str:
    """A link-grammar word without subscript, unknown-word mark or null-link braces."""
    null = _NULL_WORD.match(word)
    if null:
        word = null.group(1)
    word = _MARK.sub("", word)
    word = _SUBSCRIPT.sub("", word) or word
    return _BRACKETS.get(word, word)


def link_grammar_tree(output: str, *, where: str = "link-grammar output") -> str:
    """The first tree of ``link-parser -constituents=1`` output, cleaned, as ``(ROOT ...)`` on one line."""
    parts: list[str] = []
    depth = 0
    for token in _TOKEN.findall(output):
        if token == "(":
            depth += 1
            parts.append("(")
        elif token == ")":
            depth -= 1
            parts.append(")")
            if depth == 0:
                break
        elif depth > 0:
            label = parts[-1] == "("
            parts.append(token if label else clean_link_grammar_word(token))
    if not parts or depth != 0:
        raise ValueError(f"{where}: no complete tree in {output[:200]!r}")
    text = " ".join(parts).replace("( ", "(").replace(" )", ")")
    return f"(ROOT {text})"


class LinkGrammarParser(TreeParser):
    """One long-lived ``link-parser`` process (thread-safe; closed by :meth:`close` or on exit)."""

    #: A command whose reply marks the end of each answer: link-parser answers every input line.
    _SENTINEL = "!width=4321"
    _SENTINEL_REPLY = "width set to 4321"

    def __init__(self, language: str = "en", *, executable: str = "link-parser") -> None:
        super().__init__()
        path = shutil.which(executable)
        if path is None:
            raise FileNotFoundError(
                f"{executable!r} is not on PATH: install link-grammar (Debian/Ubuntu: "
                "apt-get install link-grammar link-grammar-dictionaries-en)"
            )
        self.language = language
        self.version = _link_grammar_version(path)
        self.name = f"link-grammar:{self.version}"
        command = [path, language, "-constituents=1", "-graphics=0", "-verbosity=0"]
        stdbuf = shutil.which("stdbuf")  # line-buffered output, else answers wait for the next line
        self._command = [stdbuf, "-oL", *command] if stdbuf else command
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None

    @property
    def signature(self) -> str:
        return f"{self.name}:{self.language}:constituents=1|tree:ROOT-wrapped,no-POS|scale:not-paper"

    def _start(self) -> subprocess.Popen:
        process = subprocess.Popen(
            self._command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        )
        self._process = process
        self._ask("")  # skip the start-up messages
        return process

    def _ask(self, line: str) -> str:
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        process.stdin.write(f"{line}\n{self._SENTINEL}\n" if line else f"{self._SENTINEL}\n")
        process.stdin.flush()
        lines = []
        while True:
            reply = process.stdout.readline()
            if not reply:
                status = process.poll()
                raise RuntimeError(f"link-parser exited (status {status}) while parsing {line[:100]!r}")
            if reply.strip() == self._SENTINEL_REPLY:
                return "".join(lines)
            lines.append(reply)

    def _parse_batch(self, sentences: list[str]) -> list[str]:
        trees = []
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._start()
            for sentence in sentences:
                line = _SPACES.sub(" ", sentence).strip()
                if not line:
                    raise ValueError("link-grammar: cannot parse an empty sentence")
                # a leading space keeps a sentence starting with "!" from being read as a command
                trees.append(link_grammar_tree(self._ask(" " + line), where=f"link-grammar on {line[:80]!r}"))
        return trees

    def close(self) -> None:
        """End the link-parser process."""
        with self._lock:
            process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def __enter__(self) -> LinkGrammarParser:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown
            self.close()


def _link_grammar_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    found = re.search(r"link-grammar-([\w.]+)", out.stdout + out.stderr)
    return found.group(1) if found else "unknown"


class CoreNLPParser(TreeParser):
    """Trees from a CoreNLP server at ``url``, ``batch_size`` sentences a request."""

    PROPERTIES: ClassVar[dict[str, str]] = {
        "annotators": "tokenize,ssplit,pos,parse",
        "outputFormat": "json",
        "ssplit.eolonly": "true",
    }

    def __init__(
        self, url: str = "http://localhost:9000", *, batch_size: int = 64, timeout: float = 300
    ) -> None:
        super().__init__()
        self.url = url.rstrip("/")
        self.batch_size = batch_size
        self.timeout = timeout
        self.name = "corenlp"

    @property
    def signature(self) -> str:
        return "corenlp|annotators:tokenize,ssplit,pos,parse"

    def _request(self, sentences: list[str]) -> list[str]:
        query = urllib.parse.urlencode({"properties": json.dumps(self.PROPERTIES)})
        body = "\n".join(_SPACES.sub(" ", s).strip() for s in sentences).encode("utf-8")
        request = urllib.request.Request(f"{self.url}/?{query}", data=body, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = json.loads(response.read().decode("utf-8"))
        except OSError as err:
            raise ConnectionError(
                f"CoreNLP server {self.url} did not answer ({err}); start one with: java -mx4g -cp '*' "
                "edu.stanford.nlp.pipeline.StanfordCoreNLPServer -port 9000"
            ) from err
        parsed = answer.get("sentences", []) if isinstance(answer, dict) else []
        if len(parsed) != len(sentences):
            raise ValueError(
                f"CoreNLP server {self.url} returned {len(parsed)} sentences for {len(sentences)} lines"
            )
        return [" ".join(s["parse"].split()) for s in parsed]

    def _parse_batch(self, sentences: list[str]) -> list[str]:
        for i, s in enumerate(sentences):
            if not s.strip():
                raise ValueError(f"CoreNLP: cannot parse an empty sentence (distinct sentence {i})")
        trees: list[str] = []
        for start in range(0, len(sentences), self.batch_size):
            trees.extend(self._request(sentences[start : start + self.batch_size]))
        return trees


def get_parser(spec: str | Callable[[str], str] | TreeParser = "link-grammar") -> TreeParser:
    """A parser from ``link-grammar``, ``corenlp`` (``http://localhost:9000``), a CoreNLP URL
    (``http://host:port`` or ``corenlp:http://host:port``), a callable, or a :class:`TreeParser`."""
    if isinstance(spec, TreeParser):
        return spec
    if callable(spec):
        return CallableParser(spec)
    if spec == "link-grammar":
        return LinkGrammarParser()
    if spec == "corenlp":
        return CoreNLPParser()
    url = spec.removeprefix("corenlp:")
    if url.startswith(("http://", "https://")):
        return CoreNLPParser(url)
    raise ValueError(f"unknown parser {spec!r}; expected link-grammar, corenlp, a CoreNLP URL or a callable")
