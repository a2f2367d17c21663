"""Table 2 at scale: the pairs cut into chunks of whole sources, shared out to shards and processes
(:func:`paraamr.tasks.owned`), committed, and their statistics reduced to the main process.

The plan depends only on the input and ``--sample``, ``--seed`` and ``--chunk-pairs``, so any split
of the work gives the same statistics.

>>> from paraamr.metrics.report import Pair
>>> pairs = [Pair("x", s, p, index=i) for i, (s, p) in enumerate(["ab", "ac", "bc", "ad"])]
>>> plan = make_plan(pairs, sample=None, seed=0, chunk_pairs=2)
>>> plan.unit, plan.chunks, [p.index for p in plan.chunk_pairs(1)[0]], plan.chunk_pairs(1)[1]
('sources', [[0], [1]], [2], [1])
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paraamr.errors import ParaAMRError
from paraamr.metrics.parsers import get_parser
from paraamr.metrics.resume import StateFolder
from paraamr.metrics.sample import chunk_plan, draw, source_groups
from paraamr.metrics.scoring import score_pairs
from paraamr.metrics.stats import RowStats
from paraamr.signals import check, critical
from paraamr.tasks import core_share, owned, share_cores

if TYPE_CHECKING:
    from paraamr.metrics.settings import EvaluateSettings

__all__ = ["Plan", "Scorer", "combine", "make_plan", "process_models", "score_share"]


@dataclass
class Plan:
    """The pairs to score, their pair indices per source (``groups``), group indices per chunk, the
    unit of the sample (``sources`` or ``pairs``) and the input's number of sources."""

    pairs: list[Any]
    groups: list[list[int]]
    chunks: list[list[int]]
    unit: str
    sources: int

    def chunk_pairs(self, chunk: int) -> tuple[list[Any], list[int]]:
        """The pairs of ``chunk``, in input order, and the source (cluster) of each."""
        members = sorted((i, g) for g in self.chunks[chunk] for i in self.groups[g])
        return [self.pairs[i] for i, _ in members], [g for _, g in members]

    def owned(self, *, shard: tuple[int, int] = (0, 1), rank: int = 0, processes: int = 1) -> list[int]:
        """The chunks of process ``rank`` of ``processes`` in ``shard`` (:func:`paraamr.tasks.owned`)."""
        return [k for k in range(len(self.chunks)) if owned(k, rank=rank, processes=processes, shard=shard)]

    def size(self, chunks: Sequence[int]) -> int:
        """The pairs of ``chunks``."""
        return sum(len(self.groups[g]) for k in chunks for g in self.chunks[k])


def make_plan(pairs: Sequence[Any], *, sample: int | None, seed: int, chunk_pairs: int) -> Plan:
    """The plan of ``pairs``: ``sample`` sources drawn (None: all), in chunks of ``chunk_pairs``."""
    groups = source_groups([p.source for p in pairs])
    drawn, unit = draw(groups, sample, seed=seed)
    kept = [i for group in drawn for i in group]
    position = {i: j for j, i in enumerate(sorted(kept))}
    new_groups = [[position[i] for i in group] for group in drawn]
    return Plan(
        pairs=[pairs[i] for i in sorted(kept)],
        groups=new_groups,
        chunks=chunk_plan(new_groups, chunk_pairs=chunk_pairs),
        unit=unit,
        sources=len(groups),
    )


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
