"""An n-gram language model with stupid backoff, for REDA+NG.

Each line, cut by the run's tokenizer (:mod:`paraamr.augment.languages`) and wrapped in
``<START>`` ... ``<END>``, adds its 1- to ``order``-grams. A word scores ``count(context + word) /
count(context)`` for the longest context (up to ``order - 1`` tokens) seen before it, backing off
without discount (``alpha = 1``; Brants et al. 2007 use 0.4) down to ``count(word) / N``; an unseen
word gets ``1 / N``. A text's log-probability sums the natural-log scores of its tokens and
``<END>``. Seen words score as nltk's ``StupidBackoff(alpha, order)`` does, much faster. ``source``
(signature field ``train``) says what the counts came from: ``in-sample`` (the texts whose edits it
ranks) or ``corpus:<name>`` (:func:`read_corpus`, independent, as the paper's LM was).

>>> lm = NgramLM.train(["the cat sat", "the dog sat", "a cat ran"])
>>> lm.score("cat", ("<START>", "the"))   # count(<START> the cat) / count(<START> the)
0.5
>>> lm.score("sat", ("dog", "cat")) == lm.score("sat", ("cat",)) == 0.5  # 3-gram unseen: backs off
True
>>> lm.score("zebra", ()) == 1 / lm.total
True
>>> lm.logprob("the cat sat") > lm.logprob("sat cat the")
True
>>> lm.signature()
'ngram|order:4|backoff:stupid|alpha:1.0|unk:1/N|tok:normalize+split|lines:3|tokens:15'
"""

from __future__ import annotations

import gzip
import json
import math
import os
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from paraamr.atomic import atomic_file
from paraamr.augment.languages import TOKENIZERS, Tokenizer, Whitespace
from paraamr.errors import InputError, check_input_file

__all__ = ["END", "IN_SAMPLE", "START", "NgramLM", "corpus_files", "installed_lm", "lm_tokens", "read_corpus"]

START, END = "<START>", "<END>"
_META_KEY = b"paraamr.ngram"
#: ``source`` of an LM trained on the texts it is used on.
IN_SAMPLE = "in-sample"


def lm_tokens(text: str) -> list[str]:
    """The default LM tokens of ``text`` (whitespace tokenizer): ``normalize(text).split()``."""
    return Whitespace().lm_tokens(text)


class NgramLM:
    """Counts of 1- to ``order``-grams and stupid-backoff scores over them (see the module doc)."""

    def __init__(
        self,
        order: int = 4,
        *,
        alpha: float = 1.0,
        tokenizer: Tokenizer | None = None,
        source: str | None = None,
    ) -> None:
        if order < 1:
            raise ValueError(f"order must be at least 1, got {order}")
        self.order = order
        self.alpha = alpha
        self.tokenizer = tokenizer or Whitespace()
        self.source = source  # what the counts came from (module docstring); None: not said
        self.counts: dict[tuple[str, ...], int] = {}
        self.total = 0  # N: unigram tokens, <START> and <END> included
        self.lines = 0
        self._table: dict[tuple[str, ...], float] | None = None  # log scores, built by logprob
        self._log_alpha = self._log_unknown = 0.0

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        order: int = 4,
        *,
        alpha: float = 1.0,
        tokenizer: Tokenizer | None = None,
        source: str | None = None,
        once: bool = False,
    ) -> NgramLM:
        """A model counted over ``texts`` (any iterable of strings, e.g. a dataset column, or
        :func:`read_corpus`'s lines), cut by ``tokenizer`` (default: whitespace); ``once``: see
        :meth:`update`."""
        lm = cls(order, alpha=alpha, tokenizer=tokenizer, source=source)
        lm.update(texts, once=once)
        return lm

    def update(self, texts: Iterable[str], *, once: bool = False) -> None:
        """Add the n-grams of each text of ``texts`` (one line each; empty texts are skipped).
        ``once``: texts seen only here (a corpus), cut without keeping their segmentation
        (:meth:`~paraamr.augment.languages.Tokenizer.lm_tokens_once`)."""
        counts, order = self.counts, self.order
        cut = self.tokenizer.lm_tokens_once if once else self.tokenizer.lm_tokens
        self._table = None
        for text in texts:
            tokens = cut(text)
            if not tokens:
                continue
            padded = (START, *tokens, END)
            self.lines += 1
            self.total += len(padded)
            for i in range(len(padded)):
                for n in range(1, min(order, len(padded) - i) + 1):
                    gram = padded[i : i + n]
                    counts[gram] = counts.get(gram, 0) + 1

    def score(self, word: str, context: Sequence[str] = ()) -> float:
        """Stupid-backoff score of ``word`` after ``context`` (tokens; only the last ``order-1`` count)."""
        counts = self.counts
        context = tuple(context)[max(0, len(context) - self.order + 1) :]
        weight = 1.0
        for start in range(len(context)):
            ctx = context[start:]
            hits = counts.get((*ctx, word))
            if hits:
                return weight * hits / counts[ctx]
            weight *= self.alpha
        return weight * counts.get((word,), 1) / self.total

    def logprob(self, text: str | Sequence[str]) -> float:
        """Natural-log probability of a text (string, cut by the LM's tokenizer, or its LM tokens),
        ``<END>`` included: the sum of ``log(score(...))``, from a table of log scores built once."""
        tokens = self.tokenizer.lm_tokens(text) if isinstance(text, str) else list(text)
        if not self.total:
            raise ValueError("the n-gram LM has no counts: train it on some text first")
        table = self._table if self._table is not None else self._build_table()
        padded = (START, *tokens, END)
        keep, log_alpha, unknown = self.order - 1, self._log_alpha, self._log_unknown
        total = 0.0
        for i in range(1, len(padded)):
            first = i - keep if i > keep else 0
            for start in range(first, i + 1):
                found = table.get(padded[start : i + 1])
                if found is not None:
                    total += found + (start - first) * log_alpha
                    break
            else:
                total += unknown + (i - first) * log_alpha
        return total

    def _build_table(self) -> dict[tuple[str, ...], float]:
        counts, log = self.counts, math.log
        log_total = log(self.total)
        self._table = {
            gram: log(count) - (log(counts[gram[:-1]]) if len(gram) > 1 else log_total)
            for gram, count in self.counts.items()
        }
        self._log_alpha = log(self.alpha) if self.alpha > 0 else -math.inf
        self._log_unknown = -log_total
        return self._table

    def signature(self) -> str:
        """What produced the scores, sacrebleu style."""
        return (
            f"ngram|order:{self.order}|backoff:stupid|alpha:{self.alpha}|unk:1/N|tok:{self.tokenizer.lm_name}"
            f"|lines:{self.lines}|tokens:{self.total}" + (f"|train:{self.source}" if self.source else "")
        )

    def save(self, path: str | Path, *, atomic: bool = True) -> Path:
        """Write the model as one Parquet file at ``path``; returns the path. ValueError for a model
        with no counts (which no later run could use). ``atomic=False`` writes ``path`` itself (a
        temporary file of the caller's, renamed later)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self.total:
            raise ValueError("the n-gram LM has no counts: train it on some text first")

        meta = {"order": self.order, "alpha": self.alpha, "total": self.total, "lines": self.lines}
        meta["tokenizer"] = self.tokenizer.key
        meta["source"] = self.source
        table = pa.table(
            {
                "ngram": pa.array([list(gram) for gram in self.counts], pa.list_(pa.string())),
                "count": pa.array(list(self.counts.values()), pa.int64()),
            }
        ).replace_schema_metadata({_META_KEY: json.dumps(meta).encode()})
        path = Path(path)
        if not atomic:
            pq.write_table(table, path)
            return path
        with atomic_file(path) as tmp:  # a killed run leaves the old file, never a part
            pq.write_table(table, tmp)
        return path

    @classmethod
    def load(cls, path: str | Path) -> NgramLM:
        """Read a model written by :meth:`save`; :class:`InputError` when ``path`` is not one."""
        import pyarrow.parquet as pq

        check_input_file(path)  # (pyarrow says a missing file is not Parquet)
        try:
            table = pq.read_table(path)
            meta = json.loads((table.schema.metadata or {})[_META_KEY])
        except (OSError, KeyError, ValueError) as err:
            why = f"no {_META_KEY.decode()} metadata" if isinstance(err, KeyError) else err
            raise InputError(f"{path}: not an n-gram LM saved by paraamr ({why})") from err
        whole = isinstance(meta, dict) and all(type(meta.get(k)) is int for k in ("order", "total", "lines"))
        if whole and meta["total"] <= 0:  # saved by an earlier version from a corpus of no text
            raise InputError(f"{path}: an n-gram LM with no counts (trained on no text): remove it")
        if not whole or type(meta.get("alpha")) not in (int, float):
            raise InputError(
                f"{path}: not an n-gram LM saved by paraamr (its {_META_KEY.decode()} metadata lacks a "
                "whole order, total or line count, or its alpha)"
            )
        kind = meta.get("tokenizer", "whitespace")  # models saved before tokenizers were plug-ins
        if kind not in TOKENIZERS:
            raise InputError(
                f"{path}: n-gram LM of an unknown tokenizer {kind!r} (known: {', '.join(TOKENIZERS)})"
            )
        try:
            tokenizer, source = TOKENIZERS[kind](), meta.get("source")
            lm = cls(meta["order"], alpha=meta["alpha"], tokenizer=tokenizer, source=source)
            lm.total, lm.lines = meta["total"], meta["lines"]
            grams = map(tuple, table.column("ngram").to_pylist())
            lm.counts = dict(zip(grams, table.column("count").to_pylist(), strict=True))
        except (KeyError, TypeError, ValueError) as err:  # order 0; no ngram or count column
            raise InputError(f"{path}: not an n-gram LM saved by paraamr ({err})") from err
        return lm


def installed_lm(tokenizer: Tokenizer, root: str | os.PathLike | None = None) -> Path:
    """Where the LM installed for ``tokenizer`` lives: ``ngram/<tokenizer key>.parquet`` under the
    paraamr cache (``$PARAAMR_CACHE``, else ``~/.cache/paraamr``). Install one with ``--save-lm``."""
    from paraamr.models.resolve import cache_root

    return cache_root(root) / "ngram" / f"{tokenizer.key}.parquet"


def corpus_files(path: str | os.PathLike) -> list[Path]:
    """The files of an LM corpus: ``path`` itself, or every file under the folder ``path``
    (recursively, hidden ones skipped), sorted; :class:`InputError` when there are none."""
    root = Path(path)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise InputError(f"{root}: no such file or folder (the n-gram LM corpus)")
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    if not files:
        raise InputError(f"{root}: no files in the n-gram LM corpus folder")
    return files


def read_corpus(path: str | os.PathLike) -> Iterator[str]:
    """The lines of an LM corpus (:func:`corpus_files`), one sentence each, streamed: plain or
    gzip text (told by content), UTF-8. A line that is not valid UTF-8 raises :class:`InputError`
    naming the file and line.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("The cat sat .\\nA dog ran .\\n")
    >>> _ = (folder / "b.txt.gz").write_bytes(gzip.compress("Birds fly .\\n".encode()))
    >>> list(read_corpus(folder))
    ['The cat sat .', 'A dog ran .', 'Birds fly .']
    """
    for file in corpus_files(path):
        with open(file, "rb") as raw:
            gzipped = raw.read(2) == b"\x1f\x8b"
        with gzip.open(file, "rb") if gzipped else open(file, "rb") as stream:
            number = 0
            try:
                for number, line in enumerate(stream, start=1):
                    yield line.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError as err:
                raise InputError(f"{file}, line {number}: not valid UTF-8 (byte {err.start})") from None
            except (EOFError, gzip.BadGzipFile, zlib.error) as err:  # it named the dataset
                raise InputError(f"{file}: a broken gzip file after line {number} ({err})") from None
