"""Table 2 at scale: the pairs cut into chunks of whole sources, shared out to shards and processes
(:func:`paraamr.tasks.owned`), committed, and their statistics reduced to the main process.

The plan depends only on the input and ``--sample``, ``--seed`` and ``--chunk-pairs``, so any split
of the work gives the same statistics.

>>> from paraamr.metrics.report import Pair
>>> pairs = [Pair("x", s, p, index=i) for i, (s, p) in enumerate(["ab", "ac", "bc", "ad"])]
>>> plan = make_plan(pairs, sample=None, seed=0, chunk_pairs=2)
>>> plan.unit, plan.chunks, [p.index for p in plan.chunk_pairs(1)[0]], plan.chunk_pairs(1)[1]
('sources', [range(0, 1), range(1, 2)], [2], [1])
>>> mine = Plan.scan(pairs, sample=None, seed=0, chunk_pairs=2).hold(pairs, [1])  # chunk 1 alone
>>> [p.index for p in mine.pairs], plan.size([0, 1]), mine.size([0])
([2], 4, 3)
"""

from __future__ import annotations

import array
import bisect
import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from paraamr.errors import InputError, ParaAMRError
from paraamr.metrics.parsers import get_parser
from paraamr.metrics.resume import StateFolder
from paraamr.metrics.sample import chunk_plan, pick
from paraamr.metrics.scoring import score_pairs
from paraamr.metrics.stats import RowStats
from paraamr.signals import check, critical
from paraamr.tasks import core_share, owned, share_cores

if TYPE_CHECKING:
    from paraamr.metrics.settings import EvaluateSettings

__all__ = ["Plan", "Scorer", "combine", "make_plan", "process_models", "score_share"]


#: Before the first pair: its source, whatever it is, starts a run.
_START = object()


def _digest(source: Any) -> bytes:
    """A 16-byte key of a source: its exact text, or a key of its own for a source that is not
    text (None, from a Hub row without one: its pairs fail when scored, as one source).

    >>> _digest("None") != _digest(None) and len(_digest(chr(0xDC00))) == 16
    True
    """
    text = isinstance(source, str)
    data = b"s" + source.encode("utf-8", "surrogatepass") if text else b"r" + repr(source).encode()
    return hashlib.blake2b(data, digest_size=16).digest()


@dataclass
class Plan:
    """Where the pairs go, from one reading of the input (:meth:`scan`): the sample's source (its
    ``cluster``, or -1) of each run of consecutive pairs of one source, the pairs of each source
    drawn (``groups``), the sources of each chunk (positions in ``groups``), the sample's ``unit``
    (``sources`` or ``pairs``) and the input's number of sources; then the ``pairs`` of the chunks
    this process scores (:meth:`hold`), in input order, with the cluster of each."""

    runs: np.ndarray
    groups: np.ndarray
    chunks: list[range]
    unit: str
    sources: int
    pairs: list[Any] = field(default_factory=list)
    clusters: list[int] = field(default_factory=list)
    held: dict[int, list[int]] = field(default_factory=dict)  # chunk -> its positions in pairs

    @classmethod
    def scan(cls, pairs: Iterable[Any], *, sample: int | None, seed: int, chunk_pairs: int) -> Plan:
        """The plan of ``pairs`` (read once, none kept): ``sample`` sources drawn (None: all) with
        ``seed``, in chunks of ``chunk_pairs``. Sources are told apart by a 16-byte BLAKE2b digest
        of their exact text, so what stays is a few bytes a source, not the pairs."""
        digests, sizes = bytearray(), array.array("q")
        last: Any = _START
        for pair in pairs:
            if pair.source != last:
                last = pair.source
                digests += _digest(last)
                sizes.append(0)
            sizes[-1] += 1
        keys = np.frombuffer(digests, dtype="V16")
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        del keys
        order = np.argsort(first, kind="stable")  # the sources in order of first appearance
        number = np.empty(len(order), dtype=np.int64)
        number[order] = np.arange(len(order))
        runs = number[inverse.reshape(-1)]  # each run's source
        counts = np.bincount(runs, weights=np.frombuffer(sizes, dtype=np.int64), minlength=len(order))
        counts = counts.astype(np.int64)  # exact below 2**53 pairs a source
        drawn, unit = pick(counts, sample, seed=seed)
        if drawn is not None:  # each source's place in the sample, -1 for one not drawn
            place = np.full(len(counts), -1, dtype=np.int64)
            place[drawn] = np.arange(len(drawn))
            runs, counts = place[runs], counts[drawn]
        chunks = chunk_plan(counts, chunk_pairs=chunk_pairs)
        return cls(runs=runs.astype(np.int32), groups=counts, chunks=chunks, unit=unit, sources=len(order))

    def hold(self, pairs: Iterable[Any], chunks: Iterable[int], *, name: str = "the input") -> Plan:
        """Keep the pairs of ``chunks`` of ``pairs``, the same pairs :meth:`scan` read, read again
        (InputError naming the input ``name`` when they are not)."""
        wanted, starts = set(chunks), [r.start for r in self.chunks]
        run, last, chunk, cluster = -1, _START, -1, -1
        for pair in pairs:
            if pair.source != last:  # a run starts where scan's does
                run, last = run + 1, pair.source
                cluster = int(self.runs[run]) if run < len(self.runs) else -2
                chunk = bisect.bisect_right(starts, cluster) - 1 if cluster >= 0 else -1
            if chunk in wanted:
                self.held.setdefault(chunk, []).append(len(self.pairs))
                self.pairs.append(pair)
                self.clusters.append(cluster)
        if run + 1 != len(self.runs) or cluster == -2:
            raise InputError(f"{name}: changed while it was read (it is read twice: leave it as it is)")
        return self

    def chunk_pairs(self, chunk: int) -> tuple[list[Any], list[int]]:
        """The pairs of ``chunk`` (which :meth:`hold` kept), in input order, and the cluster of each."""
        if chunk not in self.held:
            raise ValueError(f"chunk {chunk}: its pairs are not held")
        at = self.held[chunk]
        return [self.pairs[i] for i in at], [self.clusters[i] for i in at]

    def owned(self, *, shard: tuple[int, int] = (0, 1), rank: int = 0, processes: int = 1) -> list[int]:
        """The chunks of process ``rank`` of ``processes`` in ``shard`` (:func:`paraamr.tasks.owned`)."""
        return [k for k in range(len(self.chunks)) if owned(k, rank=rank, processes=processes, shard=shard)]

    def size(self, chunks: Iterable[int]) -> int:
        """The pairs of ``chunks``."""
        return sum(int(self.groups[self.chunks[k].start : self.chunks[k].stop].sum()) for k in chunks)


def make_plan(pairs: Sequence[Any], *, sample: int | None, seed: int, chunk_pairs: int) -> Plan:
    """The plan of ``pairs`` holding the pairs of every chunk (:meth:`Plan.scan`, :meth:`Plan.hold`)."""
    plan = Plan.scan(pairs, sample=sample, seed=seed, chunk_pairs=chunk_pairs)
    return plan.hold(pairs, range(len(plan.chunks)))


def score_share(
    plan: Plan,
    score: Callable[[list[Any]], Any],
    *,
    chunks: Sequence[int],
    state: StateFolder | None = None,
    clusters: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> RowStats | None:
    """The statistics of ``chunks`` (None without any): read back from ``state``, or scored with
    ``score(pairs)`` and committed there; ``progress(pairs done, failures)`` after each chunk."""
    total: RowStats | None = None
    seen = 0
    done = set(state.completed()) if state is not None else set()
    if state is not None:
        state.clean(k for k in chunks if k not in done)
    for k in chunks:
        pairs, cluster = plan.chunk_pairs(k)
        stats = state.stats(k) if k in done else None
        if stats is None:
            of = {p.index: c for p, c in zip(pairs, cluster, strict=True)} if clusters else None
            stats = score(pairs).stats(chunk=k, clusters=of)
            if state is not None:
                with critical():
                    state.commit(k, stats)
        total = stats if total is None else total.merge(stats)
        seen += len(pairs)
        if progress is not None:
            progress(seen, len(total.failures))
        check()  # a signal whose exception Python dropped stops here, the chunk scored kept
    return total


class Scorer:
    """``scorer(pairs)`` -> :class:`~paraamr.metrics.scoring.Scored`, with the ``(parser, embedder)``
    of ``make()`` made on first use (a run with every chunk committed loads no model)."""

    def __init__(self, make: Callable[[], tuple[Any, Any]], **options: Any) -> None:
        self.make, self.options, self.models = make, options, None

    def __call__(self, pairs: list[Any], progress: Callable[[int, int], None] | None = None) -> Any:
        """The scores of ``pairs``; ``progress(sentences parsed, sentences)`` after each parser batch."""
        if self.models is None:
            self.models = self.make()
        parser, embedder = self.models
        return score_pairs(pairs, embedder=embedder, parser=parser, progress=progress, **self.options)

    def close(self) -> None:
        if self.models is not None:
            self.models[0].close()


def process_models(s: EvaluateSettings, *, local: int = 1, embedder: str | None = None):
    """``make()`` -> ``(parser, embedder)`` of ``s`` for this process, with its share of the cores
    among the ``local`` processes and the GPU of its local rank; ``embedder``: the model's folder."""

    def make() -> tuple[Any, Any]:
        from paraamr.models.embedder import Embedder

        share, where = core_share(local), s.device
        if local > 1:
            import torch

            share_cores(local)
            if where is None and torch.cuda.is_available():
                where = f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}"
        made = get_parser(s.parser_spec, processes=s.processes or share, cache_dir=s.cache_dir)
        return made, Embedder(
            s.similarity_model, path=embedder, device=where, pooling=s.pooling, batch_size=s.batch_size,
            backend=s.backend, compute_type=s.compute_type,
        )  # fmt: skip

    return make


def combine(gathered: Sequence[tuple[str, Any]], expected: set[int]) -> RowStats:
    """The merged statistics of the processes (``("ok", RowStats dict or None)`` or ``("error",
    message)`` each, by rank); ParaAMRError for a process's error or a chunk of ``expected`` missing."""
    merged = None
    for rank, (status, payload) in enumerate(gathered):
        if status != "ok":
            raise ParaAMRError(f"process {rank} of {len(gathered)}: {payload}")
        if payload is not None:
            stats = RowStats.from_dict(payload)
            merged = stats if merged is None else merged.merge(stats)
    if merged is None and not expected:  # a --shard I/N that owns no chunk (N over the chunks)
        return RowStats(())
    if merged is None or merged.chunks != expected:
        found = sorted(merged.chunks) if merged else []
        raise ParaAMRError(f"the processes scored chunks {found}, not {sorted(expected)}")
    return merged
