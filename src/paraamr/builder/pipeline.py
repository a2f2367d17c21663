"""The model stages (:class:`Stages`, handed in) over windows of rows: parse -> re-focus -> realize
-> drop -> perplexity -> filter -> similarity / quality -> records. Windows depend only on the rows,
so a resumed run forms the same batches; the CPU half of the next window runs in a thread meanwhile.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from paraamr.builder.counts import Stats
from paraamr.builder.rows import amr_row, shown_where, text_row
from paraamr.errors import AMRError
from paraamr.failures import Failure, is_failure
from paraamr.records import normalize
from paraamr.settings import MethodSettings
from paraamr.texts import refuse_one_string, text_problem

__all__ = ["Generator", "Stages", "Stats", "Window"]

#: Called with each failure row of a call (by default they go to ``Generator.failures``).
_OnFailure = Callable[[dict], None] | None


@dataclass
class Window:
    """The outcome of one window: ``rows`` inputs consumed, their ``records`` and ``failures`` (rows
    with ``id``, ``text``, ``raw_b64``, ``stage``, ``reason`` and ``where``: the input and its line or
    row), in input order, and its ``stats``."""

    rows: int
    records: list[dict]
    failures: list[dict]
    stats: Stats


@dataclass
class _Item:
    row: Any
    graph_text: str | None = None
    variants: list = field(default_factory=list)
    failure: Failure | None = None
    source_ppl: float | None = None
    paras: list[dict] = field(default_factory=list)  # the paraphrases kept


def _call(fn: Callable[[list], list], items: list) -> list:
    """``fn(items)`` (a model stage: it batches by length itself), checked to give one result per item."""
    out = fn(items) if items else []
    if len(out) != len(items):
        raise RuntimeError(f"stage returned {len(out)} results for {len(items)} inputs")
    return out


@dataclass
class Stages:
    """The model stages of a :class:`Generator`: objects with ``realize(graphs)``, ``parse(texts)``,
    ``perplexity(texts)``, ``similarity(a, b)``, ``score(a, b)``, each returning one result (or a
    :class:`~paraamr.failures.Failure`) per input; a stage left ``None`` is skipped."""

    realizer: Any
    parser: Any = None
    lm: Any = None
    embedder: Any = None
    quality: Any = None


class Generator:
    """The corpus generator: ``generate(texts)`` / ``generate_from_amr(graphs)`` yield records lazily,
    in input order; an input that does not become a record is a failure row, passed to
    ``on_failure`` or appended to :attr:`failures`; :attr:`stats` holds the counts so far.

    >>> class Upper:  # any object with the batch method is a stage
    ...     def realize(self, graphs):
    ...         return [g.split("/")[1].split()[0].upper() + "!" for g in graphs]
    >>> gen = Generator(Stages(realizer=Upper()), MethodSettings(), window=2)
    >>> [(p["focus"], p["para_text"]) for r in gen.generate_from_amr(["(w / want-01 :ARG0 (b / boy))"])
    ...  for p in r["paraphrases"]]
    [('boy', 'BOY!')]
    >>> gen.stats.inputs, gen.stats.records, gen.stats.paraphrases
    (1, 1, 1)
    """

    def __init__(
        self,
        stages: Stages | dict[str, Any],
        settings: MethodSettings | None = None,
        *,
        window: int = 256,
        pipelined: bool = True,
    ):
        self.stages = stages if isinstance(stages, Stages) else Stages(**stages)
        self.settings = settings if settings is not None else MethodSettings()
        if window < 1:
            raise ValueError(f"window must be positive, got {window}")
        self.window, self.pipelined = window, pipelined
        self.stats = Stats()
        self.failures: list[dict] = []

    def generate(
        self, texts: Iterable[str], *, on_failure: _OnFailure = None, dedup: bool = True
    ) -> Iterator[dict]:
        """Records for source sentences ``texts`` (any iterable of str, or bytes taken as one UTF-8
        line; one string alone is refused); a text that cannot enter a run is a failure. With
        ``dedup``, a repeat of a sentence earlier in ``texts`` is a ``duplicate`` failure."""
        refuse_one_string(texts, "texts")
        rows = (text_row(number, text) for number, text in enumerate(texts, 1))
        yield from self._records(rows, on_failure, dedup)

    def generate_from_amr(
        self, graphs: Iterable[str], *, on_failure: _OnFailure = None, dedup: bool = True
    ) -> Iterator[dict]:
        """Records for PENMAN graphs (the parser is skipped); ids and texts from ``# ::id``/``# ::snt``;
        ``on_failure`` and ``dedup`` as in :meth:`generate` (a repeat is a graph of the same id)."""
        refuse_one_string(graphs, "graphs")
        rows = (amr_row(g, where=f"<graph {i}>") for i, g in enumerate(graphs, 1))
        yield from self._records(rows, on_failure, dedup)

    def _records(self, rows: Iterable[Any], on_failure: _OnFailure, dedup: bool) -> Iterator[dict]:
        report = on_failure or self.failures.append
        for window in self.windows(rows, seen=set() if dedup else None):
            for failure in window.failures:
                report(failure)
            yield from window.records

    def windows(self, rows: Iterable[Any], *, seen: set | None) -> Iterator[Window]:
        """Process :class:`paraamr.builder.rows.InputRow` objects window by window, in order. Repeats
        of an id are ``duplicate`` failures against ``seen`` (a fresh set per call or task), or never
        (None)."""
        chunks = _chunks(rows, self.window)
        fronts = (self._front(c, seen) for c in chunks)
        if self.pipelined:
            fronts = _prefetch(fronts)
        for items, stats in fronts:
            window = self._back(items, stats)
            self.stats.merge(window.stats)
            yield window

    def _front(self, rows: list, seen: set | None) -> tuple[list[_Item], Stats]:
        """Dedup, input checks, parse, decode and re-focus one window."""
        from paraamr import amr

        s, stats = self.settings, Stats(inputs=len(rows))
        items = [_Item(row, failure=row.failure) for row in rows]
        for item in items:
            if item.failure is None and item.row.amr is None:
                if not item.row.text.strip():
                    item.failure = Failure("input", "empty or whitespace-only")
                elif len(item.row.text) > s.max_chars:
                    item.failure = Failure(
                        "input", f"longer than {s.max_chars} characters ({len(item.row.text)})"
                    )
                elif problem := text_problem(item.row.text, visible=True):  # e.g. zero-width spaces only
                    item.failure = Failure("input", problem)
            if seen is not None and item.failure is None:  # a repeated blank line is empty, each time
                key = _key(item.row.id)
                if key in seen:
                    item.failure = Failure("input", "duplicate")
                seen.add(key)
        to_parse = [it for it in items if it.failure is None and it.row.amr is None]
        if to_parse:
            t0 = time.perf_counter()
            if self.stages.parser is None:
                raise ValueError("text input needs a parser stage (Stages(parser=...))")
            parsed = _call(self.stages.parser.parse, [it.row.text for it in to_parse])
            stats.seconds["parse"] += time.perf_counter() - t0
            for it, out in zip(to_parse, parsed, strict=True):
                if is_failure(out):
                    it.failure = out
                else:
                    it.graph_text = out
        t0 = time.perf_counter()
        for it in items:
            if it.failure is not None:
                continue
            if it.row.amr is not None:
                it.graph_text = it.row.amr
            stage = "input" if it.row.amr is not None else "parse"
            try:
                graph = amr.decode(
                    it.graph_text,
                    where=shown_where(it.row.where) or it.row.id,
                    max_nodes=s.max_amr_nodes,
                    max_depth=s.max_amr_depth,
                )
            except AMRError as err:
                it.failure = Failure(stage, str(err))
                continue
            try:
                it.variants = amr.variants(
                    graph,
                    foci=s.foci,
                    seed=s.seed,
                    exclude=amr.FOCI_RULES[s.foci_rule],
                    heuristic=s.heuristic,
                    oneline=True,
                    mod_as_domain=s.mod_as_domain,
                    linearization=s.linearization,
                )
            except AMRError as err:
                it.failure = Failure("refocus", str(err))
        stats.seconds["refocus"] += time.perf_counter() - t0
        return items, stats

    def _back(self, items: list[_Item], stats: Stats) -> Window:
        """Realize, drop, score and filter the candidates of one window; build its records."""
        s, m = self.settings, self.stages
        live = [it for it in items if it.failure is None]
        cands = [(it, v) for it in live for v in it.variants]
        stats.candidates += len(cands)
        t0 = time.perf_counter()
        texts = self._realize([v.penman for _, v in cands], stats)
        stats.seconds["realize"] += time.perf_counter() - t0
        seen_norm: dict[int, set[str]] = {id(it): {normalize(it.row.text)} for it in live}
        pending = []
        for (it, v), out in zip(cands, texts, strict=True):
            if is_failure(out):
                stats.dropped["realize failed"] += 1
                continue
            norm = normalize(out)
            if not norm:
                stats.dropped["empty"] += 1
            elif it.row.text and norm == normalize(it.row.text):
                stats.dropped["same as source"] += 1
            elif norm in seen_norm[id(it)]:
                stats.dropped["duplicate"] += 1
            else:
                seen_norm[id(it)].add(norm)
                para = {"para_text": out, "perplexity": None, "focus": v.concept, "amr": v.penman}
                pending.append((it, para | {"similarity": None, "quality": None}))
        pending = self._perplexity(live, pending, stats)
        pending = self._score(
            pending,
            stats,
            "similarity",
            m.embedder and m.embedder.similarity,
            s.min_similarity,
        )
        pending = self._score(pending, stats, "quality", m.quality and m.quality.score, s.min_quality)
        for it, para in pending:
            it.paras.append(para)
        records, failures = [], []
        for it in items:
            row = {"id": it.row.id, "text": it.row.text}
            if it.failure is not None:
                where = {"where": shown_where(it.row.where)}  # the input and its line or row
                failures.append(row | {"raw_b64": it.row.raw_b64} | asdict(it.failure) | where)
                stats.failures[it.failure.stage] += 1
            else:
                stats.paraphrases += len(it.paras)
                records.append(row | {"amr": it.graph_text, "paraphrases": it.paras})
        stats.records = len(records)
        return Window(len(items), records, failures, stats)

    def _realize(self, graphs: list[str], stats: Stats) -> list:
        """The realizer's sentence (or Failure) per graph; how many went in tagged is counted when
        the realizer says (``realize_items``)."""
        items = getattr(self.stages.realizer, "realize_items", None)
        if items is None:
            return _call(self.stages.realizer.realize, graphs)
        out = _call(items, graphs)
        stats.realized.update("tagged" if item.tagged else "untagged" for item in out if not is_failure(item))
        return [item if is_failure(item) else item.text for item in out]

    def _perplexity(self, live: list[_Item], pending: list, stats: Stats) -> list:
        s = self.settings
        if self.stages.lm is None:
            return pending
        t0 = time.perf_counter()
        texts = [p["para_text"] for _, p in pending]
        with_sources = s.max_relative_perplexity is not None
        sources = [it for it in live if it.row.text] if with_sources else []
        scores = _call(self.stages.lm.perplexity, texts + [it.row.text for it in sources])
        for it, ppl in zip(sources, scores[len(texts) :], strict=True):
            it.source_ppl = None if is_failure(ppl) else float(ppl)
        out = _keep(pending, scores[: len(texts)], stats, "perplexity", None, s.max_perplexity)
        if with_sources:
            ratio, before = s.max_relative_perplexity, len(out)
            out = [
                (it, p)
                for it, p in out
                if it.source_ppl is not None and p["perplexity"] <= ratio * it.source_ppl
            ]
            if len(out) < before:
                stats.dropped["relative perplexity"] += before - len(out)
        stats.seconds["perplexity"] += time.perf_counter() - t0
        return out

    def _score(
        self,
        pending: list,
        stats: Stats,
        name: str,
        fn: Callable[[list[str], list[str]], list] | None,
        minimum: float | None,
    ) -> list:
        if fn is None or not pending:
            return pending
        t0 = time.perf_counter()
        scored = [(it, p) for it, p in pending if it.row.text]  # a graph given without its sentence: no
        unscored = [(it, p) for it, p in pending if not it.row.text]  # source to compare, its score None
        scores = fn([it.row.text for it, _ in scored], [p["para_text"] for _, p in scored]) if scored else []
        out = _keep(scored, scores, stats, name, minimum, None)
        if minimum is not None and unscored:  # no score cannot pass the minimum
            stats.dropped[f"{name} failed"] += len(unscored)
        elif unscored:
            out += unscored
        stats.seconds[name] += time.perf_counter() - t0
        return out


def _keep(
    pending: list, scores: list, stats: Stats, name: str, low: float | None, high: float | None
) -> list:
    """The ``(item, paraphrase)`` pairs of ``pending`` whose score ``name`` (set in each) is within
    ``low`` and ``high``; the others are counted in ``stats.dropped``, as is a failed score."""
    out = []
    for (it, para), score in zip(pending, scores, strict=True):
        if is_failure(score):
            stats.dropped[f"{name} failed"] += 1
        elif (low is not None and not score >= low) or (high is not None and not score <= high):
            stats.dropped[name] += 1
        else:
            para[name] = float(score)
            out.append((it, para))
    return out


def _key(row_id: str) -> int | str:
    """A compact exact key of an id: the 64-bit integer of a 16-digit hex id, else the id itself."""
    if len(row_id) == 16:
        try:
            return int(row_id, 16)
        except ValueError:
            pass
    return row_id


def _chunks(rows: Iterable[Any], size: int) -> Iterator[list]:
    """Lists of at most ``size`` rows.

    >>> [len(c) for c in _chunks(range(10), 4)]
    [4, 4, 2]
    """
    rows = iter(rows)
    return iter(lambda: list(itertools.islice(rows, size)), [])


_DONE = object()


def _prefetch(iterator: Iterator[Any], depth: int = 1) -> Iterator[Any]:
    """Run ``iterator`` in a background thread, ``depth`` items ahead; exceptions re-raise here."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def work() -> None:
        try:
            for item in iterator:
                while not stop.is_set():
                    try:
                        q.put((item, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
        except BaseException as err:  # handed to the consumer
            q.put((None, err))
            return
        q.put((_DONE, None))

    thread = threading.Thread(target=work, daemon=True, name="paraamr-prefetch")
    thread.start()
    try:
        while True:
            item, err = q.get()
            if err is not None:
                raise err
            if item is _DONE:
                return
            yield item
    finally:
        stop.set()
