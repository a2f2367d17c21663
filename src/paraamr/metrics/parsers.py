"""Constituency parsers for TED: link-grammar (offline), a CoreNLP server, or any callable.

Every parser maps sentences to PTB bracket strings, has a :class:`~paraamr.signature.Signature`
and parses each distinct :func:`sentence_key` once (cached in memory and, with ``cache_dir``, on
disk: :class:`TreeCache`). Link-grammar's trees are wrapped in ``(ROOT ...)``, get spaCy's Penn
preterminals (:mod:`paraamr.metrics.pos`) unless ``pos=None`` and have a lowercase pronoun ``i``
written ``I`` first (link-grammar breaks the clause around it); their values are not CoreNLP's,
the paper's parser (``scale:not-paper``).

>>> clean_link_grammar_word("sat.v-d"), clean_link_grammar_word("xx{?}.n"), clean_link_grammar_word("{the}")
('sat', 'xx', 'the')
>>> clean_link_grammar_word(":.p"), clean_link_grammar_word("."), clean_link_grammar_word("{{}")
(':', '.', '-LRB-')
>>> upper_i("i know i'm right, said pi. i.e. yes, i")
"I know I'm right, said pi. i.e. yes, I"
>>> p = CallableParser(lambda s: f"(ROOT (S (NN {s})))", name="demo")
>>> p.parse(["a", "b", " a "]), p.calls, str(p.signature)
(['(ROOT (S (NN a)))', '(ROOT (S (NN b)))', '(ROOT (S (NN a)))'], 2, 'parser:callable:demo')
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
import weakref
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

from paraamr.failures import Failure
from paraamr.metrics.pos import PosTagger, add_preterminals
from paraamr.metrics.trees import TOKEN, join_tokens, read_tree
from paraamr.metrics.workers import WorkerPool, link_grammar_problem
from paraamr.options import check_number, positive
from paraamr.signature import Signature
from paraamr.tasks import core_share

__all__ = [
    *("CallableParser", "CoreNLPParser", "LinkGrammarParser", "TreeCache", "TreeParser"),
    *("add_parser_options", "clean_link_grammar_word", "get_parser", "link_grammar_tree", "parser_spec"),
    *("sentence_key", "upper_i"),
]

_SPACES = re.compile(r"\s+")
_MARK = re.compile(r"\{[?!~&*]\}|\[[?!~&*]\]")
_SUBSCRIPT = re.compile(r"(?<=[^.])\.[a-z#][\w#*-]*$")
_NULL_WORD = re.compile(r"^\{(.+)\}$")
_BRACKETS = {"{": "-LRB-", "}": "-RRB-"}
#: A lowercase pronoun "i", alone or with its contraction ("i'm", "i’ll"), not "i.e.".
_LOWER_I = re.compile(r"(?<![\w'’.-])i(?=(?:['’](?:m|d|ll|ve))?(?![\w'’-])(?!\.\w))")


def add_parser_options(group: Any, *, cache: str) -> None:
    """``--parser``, ``--no-pos``, ``--processes`` and ``--cache-dir`` (``cache``: its help)."""
    group.add_argument(
        "--parser",
        default="link-grammar",
        type=_parser_option,
        help="link-grammar (offline), corenlp, or a CoreNLP server URL (default: %(default)s)",
    )
    group.add_argument(
        "--no-pos", action="store_true", help="link-grammar trees without spaCy's part-of-speech layer"
    )
    group.add_argument(
        "--processes",
        type=positive(),
        default=None,
        metavar="N",
        help="link-grammar processes / concurrent CoreNLP requests (default: this machine's cores over its "
        "launched processes)",
    )
    group.add_argument("--cache-dir", metavar="DIR", default=None, help=cache)


#: The link-grammar specs :func:`get_parser` takes.
_LINK_GRAMMAR = ("link-grammar", "link-grammar:no-pos")


def parser_spec(parser: str, no_pos: bool) -> str:
    """The :func:`get_parser` spec of the options ``--parser`` and ``--no-pos``; UsageError for
    ``--no-pos`` with another parser (CoreNLP's trees carry their own tags).

    >>> parser_spec("link-grammar", True), parser_spec("corenlp", False)
    ('link-grammar:no-pos', 'corenlp')
    """
    from paraamr.errors import UsageError

    if no_pos and parser != "link-grammar":
        raise UsageError(f"--no-pos: only with --parser link-grammar (the trees of {parser} keep its tags)")
    return "link-grammar:no-pos" if no_pos else parser


def _corenlp_url(spec: str) -> str | None:
    """The CoreNLP server URL of a ``corenlp`` / ``corenlp:URL`` / ``URL`` spec, else None."""
    url = "http://localhost:9000" if spec == "corenlp" else spec.removeprefix("corenlp:")
    return url if url.startswith(("http://", "https://")) else None


def _parser_option(text: str) -> str:
    """``--parser``'s value (an argparse ``type``); a URL needs a host and a valid port.

    >>> _parser_option("http://127.0.0.1:abc")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'http://127.0.0.1:abc': not a server URL (Port could not be cast ...)
    """
    if text in _LINK_GRAMMAR:
        return text
    url = _corenlp_url(text)
    if url is None:
        raise argparse.ArgumentTypeError(
            f"expected link-grammar, corenlp or a CoreNLP server URL, got {text!r}"
        )
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port  # a ValueError when it is not a number in 0..65535
        problem = "no host" if not parts.hostname else "a space in it" if " " in url else None
        if problem or port == 0:
            raise ValueError(problem or "port 0")
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{text!r}: not a server URL ({err})") from None
    return text


def upper_i(sentence: str) -> str:
    """``sentence`` with each lowercase pronoun ``i`` written ``I`` (same length)."""
    return _LOWER_I.sub("I", sentence)


def sentence_key(sentence: str) -> str:
    """What a parser receives and the caches key by: ``sentence`` with whitespace collapsed.

    >>> sentence_key("  I   know\tit. ")
    'I know it.'
    """
    return _SPACES.sub(" ", sentence).strip()


class TreeCache:
    """Trees in ``<cache_dir>/trees.sqlite`` by parser signature and sentence key; one transaction
    per batch (a killed run keeps the batches it finished), shared by processes."""

    def __init__(self, cache_dir: str | os.PathLike) -> None:
        self.path = Path(cache_dir) / "trees.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with self._connect() as db:
                db.execute(
                    "CREATE TABLE IF NOT EXISTS trees (signature TEXT, sentence TEXT, tree TEXT, "
                    "PRIMARY KEY (signature, sentence))"
                )
        except sqlite3.DatabaseError as err:
            raise OSError(f"parse cache {self.path}: {err}") from err

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60)

    def get(self, signature: Signature | str, sentences: Sequence[str]) -> dict[str, str]:
        """The cached trees of ``sentences`` (keys) under ``signature``."""
        found: dict[str, str] = {}
        with contextlib.closing(self._connect()) as db:
            for start in range(0, len(sentences), 500):
                chunk = list(sentences[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT sentence, tree FROM trees WHERE signature = ? AND sentence IN ({marks})",
                    [str(signature), *chunk],
                )
                found.update(rows)
        return found

    def put(self, signature: Signature | str, trees: Iterable[tuple[str, str]]) -> None:
        """Store (sentence key, tree) pairs under ``signature``."""
        with contextlib.closing(self._connect()) as db, db:
            db.executemany(
                "INSERT OR REPLACE INTO trees VALUES (?, ?, ?)",
                ((str(signature), sentence, tree) for sentence, tree in trees),
            )


class TreeParser:
    """Base class: ``parse(sentences)`` with the per-sentence caches around ``_parse_batch``."""

    name = "parser"

    def __init__(self, *, cache_dir: str | os.PathLike | None = None) -> None:
        self._cache: dict[str, str | Failure] = {}
        self.disk = TreeCache(cache_dir) if cache_dir is not None else None
        self.calls = 0  # sentences actually parsed (in neither cache)

    @property
    def signature(self) -> Signature:
        """How trees are made: parser, version, settings."""
        return Signature(parser=self.name)

    def parse(self, sentences: Sequence[str]) -> list[str | Failure]:
        """One PTB bracket string per sentence, or a :class:`~paraamr.failures.Failure` for one that
        cannot be parsed (cached in memory only)."""
        for i, sentence in enumerate(sentences):
            if not isinstance(sentence, str):
                raise ValueError(f"sentence {i}: expected str, got {type(sentence).__name__}")
        keys = [sentence_key(s) for s in sentences]
        todo = [k for k in dict.fromkeys(keys) if k not in self._cache]
        if todo and self.disk is not None:
            self._cache.update(self.disk.get(self.signature, todo))
            todo = [k for k in todo if k not in self._cache]
        refused = {k: Failure("parse", why) for k in todo if (why := self.problem(k))}
        self._cache.update(refused)
        todo = [k for k in todo if k not in refused]
        if todo:
            trees = self._parse_batch(todo)
            if len(trees) != len(todo):
                raise RuntimeError(f"{self.name}: {len(trees)} trees for {len(todo)} sentences")
            self._cache.update(zip(todo, trees, strict=True))
            if self.disk is not None:
                good = [(k, t) for k, t in zip(todo, trees, strict=True) if isinstance(t, str)]
                self.disk.put(self.signature, good)
            self.calls += len(todo)
        return [self._cache[k] for k in keys]

    def clear(self) -> None:
        """Forget the parses kept in memory (the disk cache keeps them)."""
        self._cache.clear()

    def problem(self, sentence: str) -> str | None:
        """Why this parser cannot take ``sentence`` (a :func:`sentence_key`), or None."""
        return "empty sentence" if not sentence else None

    def _parse_batch(self, sentences: list[str]) -> list[str | Failure]:
        """Trees (or failures) of distinct, whitespace-collapsed sentences :meth:`problem` accepts."""
        raise NotImplementedError

    def close(self) -> None:
        """Free what the parser holds (processes, connections); it restarts when used again."""

    def __enter__(self) -> TreeParser:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


class CallableParser(TreeParser):
    """Trees from ``fn(sentence) -> bracket string``."""

    def __init__(self, fn: Callable[[str], str], *, name: str | None = None, cache_dir=None) -> None:
        super().__init__(cache_dir=cache_dir)
        self.fn = fn
        self.name = f"callable:{name or getattr(fn, '__name__', type(fn).__name__)}"

    def _parse_batch(self, sentences: list[str]) -> list[str | Failure]:
        trees: list[str | Failure] = []
        for sentence in sentences:
            try:
                tree = self.fn(sentence)
                read_tree(tree, where="its tree")  # a malformed one fails here, not the whole score
                trees.append(tree)
            except Exception as err:  # one sentence's failure, not the batch's
                trees.append(Failure("parse", f"{self.name}: {type(err).__name__}: {err}"))
        return trees


def clean_link_grammar_word(word: str) -> str:
    """A link-grammar word without subscript, unknown-word mark or null-link braces."""
    word = _MARK.sub("", _NULL_WORD.sub(r"\1", word))
    word = _SUBSCRIPT.sub("", word) or word
    return _BRACKETS.get(word, word)


def link_grammar_tree(output: str, *, where: str = "link-grammar output") -> str:
    """The first tree of ``link-parser -constituents=1`` output, cleaned, as ``(ROOT ...)`` on one line."""
    parts: list[str] = []
    depth = 0
    for token in TOKEN.findall(output):
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
    return f"(ROOT {join_tokens(parts)})"


class LinkGrammarParser(TreeParser):
    """Debian's ``link-parser en -constituents=1`` in ``processes`` supervised workers
    (:class:`~paraamr.metrics.workers.WorkerPool`: ``timeout`` seconds a sentence, ``ahead``
    queued), started on first use."""

    def __init__(
        self,
        *,
        executable: str = "link-parser",
        processes: int | None = None,
        pos: str | None = "spacy",
        case: str | None = "upper-i",
        timeout: float = 120,
        ahead: int = 8,
        cache_dir: str | os.PathLike | None = None,
    ) -> None:
        path = shutil.which(executable)
        if path is None:
            raise FileNotFoundError(
                f"{executable!r} is not on PATH: install link-grammar (Debian/Ubuntu: "
                "apt-get install link-grammar link-grammar-dictionaries-en)"
            )
        if pos not in (None, "spacy"):
            raise ValueError(f"unknown POS layer {pos!r}; expected 'spacy' or None")
        if case not in ("upper-i", None):
            raise ValueError(f"unknown case step {case!r}; expected 'upper-i' or None")
        self.case = case
        processes = check_number(processes, "processes", kind=int, low=1, none=True)
        self.version = _link_grammar_version(path)
        self.name = f"link-grammar:{self.version}"
        self.processes = processes or core_share()
        self.tagger = PosTagger() if pos == "spacy" else None
        command = [path, "en", "-constituents=1", "-graphics=0", "-verbosity=0"]
        stdbuf = shutil.which("stdbuf")  # line-buffered output, else answers wait for the next line
        self._lock = threading.Lock()
        self.workers = WorkerPool(
            [stdbuf, "-oL", *command] if stdbuf else command,
            size=self.processes,
            read=lambda s, out, _: link_grammar_tree(out, where=f"link-grammar on {s[:80]!r}"),
            timeout=timeout,
            ahead=ahead,
        )
        # the processes end with the parser, or at exit while the modules still stand (a __del__
        # at the interpreter's shutdown printed "Exception ignored in ... __del__")
        weakref.finalize(self, self.workers.close)
        super().__init__(cache_dir=cache_dir)

    @property
    def signature(self) -> Signature:
        tree = f"ROOT+POS:{self.tagger.name}" if self.tagger is not None else "ROOT,no-POS"
        return Signature(
            parser=self.name, lang="en", constituents=1, tree=tree, case=self.case or "as-given",
            scale="not-paper",
        )  # fmt: skip

    def problem(self, sentence: str) -> str | None:
        return super().problem(sentence) or link_grammar_problem(sentence)

    def _parse_batch(self, sentences: list[str]) -> list[str | Failure]:
        if self.case == "upper-i":
            sentences = [upper_i(s) for s in sentences]
        with self._lock, ThreadPoolExecutor(1) as pool:
            running = pool.submit(self.workers.run, sentences)
            tags = self.tagger.tag(sentences) if self.tagger is not None else None  # meanwhile
            trees = running.result()
        if tags is None:
            return trees
        return [
            add_preterminals(t, s, k) if isinstance(t, str) else t
            for t, s, k in zip(trees, sentences, tags, strict=True)
        ]

    def close(self) -> None:
        """End the link-parser processes."""
        with self._lock:
            self.workers.close()  # (again after a parse that followed a close: the pool starts anew)


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
        self,
        url: str = "http://localhost:9000",
        *,
        batch_size: int = 64,
        timeout: float = 300,
        workers: int | None = None,
        cache_dir: str | os.PathLike | None = None,
    ) -> None:
        super().__init__(cache_dir=cache_dir)
        self.url = url.rstrip("/")
        self.batch_size = batch_size
        self.timeout = timeout
        self.workers = workers or core_share()
        self.name = "corenlp"

    @property
    def signature(self) -> Signature:
        return Signature(parser="corenlp", annotators=self.PROPERTIES["annotators"])

    def _request(self, sentences: list[str]) -> list[str]:
        query = urllib.parse.urlencode({"properties": json.dumps(self.PROPERTIES)})
        body = "\n".join(sentences).encode("utf-8")
        request = urllib.request.Request(f"{self.url}/?{query}", data=body, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as err:  # it answered: the batch's fault (halved down to its sentence)
            refused = f"HTTP {err.code} {err.reason}"
            raise ValueError(f"CoreNLP server {self.url} refused the sentences: {refused}") from err
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
        batches = [sentences[i : i + self.batch_size] for i in range(0, len(sentences), self.batch_size)]
        with ThreadPoolExecutor(min(self.workers, len(batches))) as pool:
            return [tree for trees in pool.map(self._request, batches) for tree in trees]


def get_parser(
    spec: str | Callable[[str], str] | TreeParser = "link-grammar",
    *,
    processes: int | None = None,
    cache_dir: str | os.PathLike | None = None,
) -> TreeParser:
    """The parser of ``spec``: ``link-grammar`` (``:no-pos``: no POS layer), ``corenlp``
    (localhost:9000), a CoreNLP URL (``corenlp:`` optional), a callable or a :class:`TreeParser`."""
    if isinstance(spec, TreeParser):
        return spec
    if callable(spec):
        return CallableParser(spec, cache_dir=cache_dir)
    if spec in _LINK_GRAMMAR:
        pos = None if spec.endswith(":no-pos") else "spacy"
        return LinkGrammarParser(pos=pos, processes=processes, cache_dir=cache_dir)
    url = _corenlp_url(spec) if isinstance(spec, str) else None
    if url:
        return CoreNLPParser(url, workers=processes, cache_dir=cache_dir)
    raise ValueError(f"unknown parser {spec!r}; expected link-grammar, corenlp, a CoreNLP URL or a callable")
