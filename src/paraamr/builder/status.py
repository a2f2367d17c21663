"""Where a run's tasks stand: each shard's writers, their committed states, and what is left.

A run in one piece is one shard; a run cut by ``--shard I/N`` has N. Only the shards that have a
writer (a state file or a lock) are looked at: the others are missing, and are counted as index
ranges, never listed one by one, so that a run of millions of shards costs what its started shards
cost.

>>> _ranges([0, 1, 2, 5, 7, 8])
'0-2, 5, 7-8'
>>> parse_writer("s00003-of-00008.00001-of-00002"), parse_writer("00000-of-00001")
((3, 8, 1, 2), (0, 1, 0, 1))
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraamr import layout
from paraamr.errors import InputError
from paraamr.locks import busy_writers

__all__ = ["RunStatus", "ShardStatus", "not_done", "parse_writer", "run_statuses", "span"]

_WRITER = re.compile(r"^s(?P<i>\d{5,})-of-(?P<n>\d{5,})\.(?P<rank>\d{5,})-of-(?P<k>\d{5,})$")
_PLAIN = re.compile(r"^(?P<rank>\d{5,})-of-(?P<k>\d{5,})$")
#: Shards to run whose command is printed one per line (the others: the same with their I).
_SHOWN = 20


def parse_writer(writer: str) -> tuple[int, int, int, int] | None:
    """``(shard, shards, rank, processes)`` of a writer name (a run in one piece: shard 0 of 1)."""
    m = _WRITER.match(writer) or _PLAIN.match(writer)
    if m is None:
        return None
    shard = (int(m["i"]), int(m["n"])) if "i" in m.groupdict() else (0, 1)
    return (*shard, int(m["rank"]), int(m["k"]))


@dataclass
class ShardStatus:
    """Where one shard of a run stands: ``done``, ``missing`` (never committed), ``unfinished``
    (committed, not done, not running), ``running`` (a writer holds its lock) or ``broken`` (done,
    but its committed files do not match its counts); ``detail`` says more."""

    index: int
    state: str
    detail: str = ""


@dataclass
class RunStatus:
    """A run's saved settings and where its shards stand. Only the shards with a writer are listed
    (``statuses``, by index): the others are missing, and are never listed one by one, so that a run
    of millions of shards costs what its started shards cost. ``states``: the committed states of
    the writers of the done shards, in writer order."""

    saved: dict[str, Any]
    shards: int
    statuses: list[ShardStatus]
    states: list[tuple[str, dict]]

    def missing(self) -> list[tuple[int, int]]:
        """The missing shards as ``(first, last)`` index ranges.

        >>> done = [ShardStatus(i, "done") for i in (2, 3, 6)]
        >>> RunStatus({}, 8, done, []).missing()
        [(0, 1), (4, 5), (7, 7)]
        """
        out, start = [], 0
        for status in self.statuses:
            if status.index > start:
                out.append((start, status.index - 1))
            start = status.index + 1
        return out + ([(start, self.shards - 1)] if start < self.shards else [])

    def not_done(self) -> list[ShardStatus]:
        """The listed shards that are not done."""
        return [s for s in self.statuses if s.state != "done"]

    @property
    def complete(self) -> bool:
        """Whether every shard is done."""
        return not self.not_done() and len(self.statuses) == self.shards


def _read_settings(path: Path) -> dict[str, Any]:
    settings = layout.state_path(path, "settings.json")
    if not settings.is_file():
        raise InputError(f"{path}: holds no paraamr generate run (no {layout.STATE_DIR}/settings.json)")
    try:
        return json.loads(settings.read_text())
    except (OSError, ValueError) as err:
        raise InputError(f"{settings}: the run's settings are unreadable ({err})") from None


def _writer_states(path: Path, shards: int) -> dict[int, list[tuple[str, dict | str, int, int]]]:
    """Per shard, ``(writer, committed state, rank, processes)`` of each of its writers; a state
    file that cannot be read (cut short: states are replaced whole, never written in place) is
    given as the reason it cannot."""
    out: dict[int, list[tuple[str, dict | str, int, int]]] = {}
    for state_path in sorted((path / layout.STATE_DIR).glob("state-*.json")):
        writer = state_path.stem[len("state-") :]
        parsed = parse_writer(writer)
        if parsed is None or parsed[1] != shards:
            continue
        try:
            state: dict | str = json.loads(state_path.read_text())
            if not isinstance(state, dict) or not {"next", "stats", "done"} <= state.keys():
                raise ValueError("not a paraamr state")
        except (OSError, ValueError) as err:
            state = f"{state_path.relative_to(path)} is unreadable ({err})"
        out.setdefault(parsed[0], []).append((writer, state, *parsed[2:]))
    return out


def run_statuses(path: str | Path) -> RunStatus:
    """The run's saved settings and the status of each of its shards that has a writer (a run in
    one piece is one shard); the committed states of the writers of the done shards."""
    path = Path(path)
    saved = _read_settings(path)
    shards = saved.get("shards", 1)
    states = _writer_states(path, shards)
    running: dict[int, str] = {}
    for writer, holder in busy_writers(path):
        parsed = parse_writer(writer)
        if parsed and parsed[1] == shards:
            running.setdefault(parsed[0], holder)
    statuses, done = [], []
    for i in sorted(set(states) | set(running)):
        writers = states.get(i, [])
        broken = [state for _, state, *_ in writers if isinstance(state, str)]
        ks = {k for *_, k in writers}
        finished = sum(1 for _, state, *_ in writers if isinstance(state, dict) and state.get("done"))
        if i in running:
            statuses.append(ShardStatus(i, "running", running[i]))
        elif broken:
            statuses.append(ShardStatus(i, "broken", broken[0]))
        elif len(ks) == 1 and finished == len(writers) == ks.pop():
            statuses.append(ShardStatus(i, "done"))
            done += [(writer, state) for writer, state, *_ in writers]
        else:
            statuses.append(ShardStatus(i, "unfinished", f"{finished} of {len(writers)} processes done"))
    return RunStatus(saved, shards, statuses, done)


def span(a: int, b: int) -> str:
    return str(a) if a == b else f"{a}-{b}"


def _ranges(indices: Sequence[int]) -> str:
    """``0-2, 5`` for [0, 1, 2, 5]."""
    spans: list[list[int]] = []
    for i in indices:
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ", ".join(span(a, b) for a, b in spans)


def not_done(path: Path, status: RunStatus) -> InputError:
    """The error naming each shard that is not done; the command of each is printed on stdout."""
    saved, shards, todo = status.saved, status.shards, status.not_done()
    missing = status.missing()
    parts = [f"missing: {', '.join(span(a, b) for a, b in missing)}"] if missing else []
    for state in ("broken", "unfinished", "running"):
        these = [s for s in todo if s.state == state]
        if these:
            detail = f" ({these[0].detail})" if these[0].detail and len(these) == 1 else ""
            parts.append(f"{state}: {_ranges([s.index for s in these])}{detail}")
    rerun = sorted([(a, b) for a, b in missing] + [(s.index, s.index) for s in todo if s.state != "running"])
    count = sum(b - a + 1 for a, b in missing) + len(todo)
    command = saved.get("command")
    if command and rerun:
        overwrite = {s.index for s in todo if s.state == "broken"}
        array = ",".join(span(a, b) for a, b in rerun)
        print(f"# the shards to run (from {saved.get('cwd', '.')}); on Slurm: --array={array}")
        shown = 0
        for a, b in rerun:
            for i in range(a, min(b + 1, a + _SHOWN - shown)):
                extra = ["--overwrite"] if i in overwrite else []
                print(" ".join([*(arg.replace("{shard}", f"{i}/{shards}") for arg in command), *extra]))
                shown += 1
        left = sum(b - a + 1 for a, b in rerun) - shown
        if left > 0:
            print(f"# ... and {left} more: the same with --shard I/{shards}")
    where = "the command of each is printed above" if command and rerun else "run each with --shard I/N"
    return InputError(
        f"{path}: {count} of {shards} shards not done ({'; '.join(parts)}); {where}, then finalize again"
    )


