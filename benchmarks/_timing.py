"""Timing shared by the benchmarks: figures that survive a shared machine (issue 17).

- :func:`pin_threads` before importing torch: one thread count for every library, reported.
- :func:`interleave`: both sides (or more) run in turn, the order rotated each round, after a
  warm-up on other items; each side's wall time and CPU time (this process and its waited-for
  children) per round, reported as best-of-N and median (:class:`Timing`).
- :func:`machine` / :func:`load`: the line printed before and after (date, cores, threads, load).

Use from a benchmark script (``benchmarks/`` is on ``sys.path`` when the script runs)::

    from _timing import interleave, load, machine, pin_threads
    threads = pin_threads(args.threads)        # before ``import torch``
    print(machine(threads))
    times, outputs = interleave({"ours": f, "baseline": g}, rounds=3, warmup=lambda: f_small())
    print(times["ours"].row(), "ratio", times["baseline"].ratio(times["ours"]))
    print("after:", load())
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Timing", "cpu_seconds", "interleave", "load", "machine", "pin_threads"]

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "RAYON_NUM_THREADS")


def add_stage_options(ap: argparse.ArgumentParser) -> None:
    """The options of the stage benchmarks (``bench_stages.py``, ``bench_ct2_layout.py``): model
    sizes, items a call per stage, the foci of a source, threads."""
    ap.add_argument("--small", action="store_true", help="small configs (a quick check of the same code)")
    ap.add_argument(
        "--parse-items", type=int, default=16, help="sentences a call (default 16: the generator's batch)"
    )
    ap.add_argument("--realize-items", type=int, default=32, help="graphs realized a call (default 32)")
    ap.add_argument("--lm-items", type=int, default=64, help="texts scored a call (default 64)")
    ap.add_argument("--foci", type=int, default=6, help="realizations and perplexities per source (6)")
    ap.add_argument("--threads", type=int, default=2, help="CPU threads (default 2)")


def pin_threads(threads: int | None) -> int:
    """Pin the thread count of torch (and the BLAS / OpenMP / tokenizers pools of this process and
    of its children) to ``threads`` (default: 1); return it. Call before importing torch."""
    threads = threads or 1
    for name in _THREAD_VARIABLES:
        os.environ[name] = str(threads)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        torch.set_num_threads(threads)
    return threads


def load() -> str:
    """The 1, 5 and 15 minute load averages, e.g. ``load 1.02 0.87 0.55``."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def machine(threads: int) -> str:
    """Date, host, cores, the pinned thread count and the load average: printed before a run."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{now}; {platform.machine()} {os.cpu_count()} cores; threads pinned to {threads}; "
        f"python {platform.python_version()}; before: {load()}"
    )


def cpu_seconds() -> float:
    """CPU time (user + system) of this process (all threads) and of its waited-for children."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@dataclass
class Timing:
    """Wall and CPU seconds of one side, one entry per round."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @property
    def best(self) -> float:
        return min(self.wall)

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_best(self) -> float:
        return min(self.cpu)

    def ratio(self, other: Timing) -> str:
        """``self`` over ``other`` (how many times faster ``other`` is), best and median of wall time."""
        return f"{self.best / other.best:.2f}x (median {self.median / other.median:.2f}x)"

    def row(self) -> str:
        """``best 1.234 s, median 1.301 s, CPU 2.345 s`` (CPU of the best round's side, all threads)."""
        return f"best {self.best:.3f} s, median {self.median:.3f} s, CPU {self.cpu_best:.3f} s"


def interleave(
    sides: dict[str, Callable[[], Any]],
    *,
    rounds: int = 3,
    warmup: dict[str, Callable[[], Any]] | None = None,
    sync: Callable[[], None] | None = None,
) -> tuple[dict[str, Timing], dict[str, Any]]:
    """Run every side ``rounds`` times, in turn, the order rotated each round (AB, BA, AB ...);
    first each ``warmup`` callable once (other items than the timed ones). ``sync`` (e.g.
    ``torch.cuda.synchronize``) is called before each clock read. Returns the timings and each
    side's output of its first round (for the equality checks)."""
    for warm in (warmup or {}).values():
        warm()
    names = list(sides)
    times = {name: Timing() for name in names}
    outputs: dict[str, Any] = {}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            if sync:
                sync()
            w0, c0 = time.perf_counter(), cpu_seconds()
            out = sides[name]()
            if sync:
                sync()
            times[name].wall.append(time.perf_counter() - w0)
            times[name].cpu.append(cpu_seconds() - c0)
            outputs.setdefault(name, out)
    return times, outputs


def done(workdir: str | None, root: Path) -> int:
    """The end of a benchmark's ``main``: the load after it, its temporary ``root`` removed (kept
    when the user gave ``--workdir``); exit status 0."""
    import shutil

    print(f"after: {load()}")
    if not workdir:
        shutil.rmtree(root, ignore_errors=True)
    return 0
