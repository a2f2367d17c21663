"""The end of a run: its summary (settings, counts, time), the card, and the upload.

Once every writer of a run is done, the main process merges the writers' committed counts into
``summary.json``, names the shards (:func:`paraamr.builder.folder.finalize`), writes the card
(:func:`paraamr.card.write_card`) and, with ``--push-to-hub``, uploads the folder.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraamr import layout
from paraamr.builder.folder import finalize
from paraamr.builder.hub import push_folder
from paraamr.builder.pipeline import Stats
from paraamr.builder.settings import RunSettings
from paraamr.builder.state import RunFolder
from paraamr.card import write_card
from paraamr.locks import folder_lock

__all__ = ["Push", "finish", "format_summary", "summarize"]


@dataclass(frozen=True)
class Push:
    """Where a finished run is uploaded (``--push-to-hub``): see :func:`paraamr.builder.hub.push_folder`."""

    repo_id: str
    private: bool = False
    revision: str | None = None
    token: str | None = None


def _portable(value: Any, base: Path) -> Any:
    """A setting as the summary shows it: a local path relative to the run folder, names as given."""
    if isinstance(value, str) and value not in ("-", "") and (os.path.isabs(value) or Path(value).exists()):
        return os.path.relpath(os.path.abspath(value), os.path.abspath(base))
    return value


def summarize(folder: RunFolder, saved: dict[str, Any], run: RunSettings, seconds: float) -> dict[str, Any]:
    """The run summary: settings (local paths relative to the folder), counts of all processes (from
    their state files), time."""
    total, per_process = Stats(), []
    for writer, state in folder.states():
        total.merge(Stats.from_dict(state["stats"]))
        per_process.append({"process": writer, "done": state["done"], **state["stats"]})
    counts = total.as_dict()
    settings = {k: _portable(v, folder.path) for k, v in saved["record"].items()}
    run_info = {"num_processes": saved["num_processes"], "input_identity": saved["input_identity"]}
    return {
        "settings": {**settings, **run.as_dict()},
        "run": run_info,
        "counts": counts,
        "reconciles": counts["inputs"] == counts["records"] + counts["failures"],
        "complete": bool(per_process) and all(p["done"] for p in per_process),
        "processes": per_process,
        "seconds_this_session": round(seconds, 3),
    }


def format_summary(summary: dict[str, Any]) -> str:
    """The summary table printed at the end.

    >>> c = Stats(inputs=3, records=2, failures={"input": 1}).as_dict()
    >>> print(format_summary({"counts": c, "reconciles": True, "seconds_this_session": 1.0}).splitlines()[0])
    inputs                        3  = records 2 + failures 1 (reconciles)
    """
    c = summary["counts"]
    lines = [
        f"{'inputs':<24}{c['inputs']:>7}  = records {c['records']} + failures {c['failures']}"
        f" ({'reconciles' if summary['reconciles'] else 'DOES NOT RECONCILE'})",
        f"{'candidates':<24}{c['candidates']:>7}",
        f"{'paraphrases kept':<24}{c['paraphrases']:>7}",
    ]
    lines += [f"  failed at {stage:<14}{n:>7}" for stage, n in sorted(c["failures_by_stage"].items())]
    lines += [f"  dropped: {reason:<14}{n:>7}" for reason, n in sorted(c["dropped_by_reason"].items())]
    lines += [f"  seconds in {stage:<12}{t:>9.1f}" for stage, t in sorted(c["seconds_by_stage"].items())]
    lines.append(f"{'wall seconds':<24}{summary['seconds_this_session']:>9.1f}")
    return "\n".join(lines)


def finish(
    folder: RunFolder,
    saved: dict[str, Any],
    run: RunSettings,
    seconds: float,
    *,
    license: str | None = None,
    push: Push | None = None,
) -> dict[str, Any]:
    """(Main process, every other writer done and its lock let go) under the folder's own lock,
    write ``summary.json``, name the shards (crash-safe, a no-op once done) and write the card for
    the repo a push goes to (its load snippets name it); then print the summary and upload the
    folder with ``push``. Returns the summary."""
    with folder_lock(folder.path, command="generate (finish)"):
        for name in (layout.SUMMARY, layout.CARD, layout.EVALUATION):
            layout.remove_temps(folder.path / name)  # an earlier finish killed mid-write
        summary = summarize(folder, saved, run, seconds)
        layout.atomic_write(folder.path / layout.SUMMARY, json.dumps(summary, indent=1, sort_keys=True))
        size = summary["settings"]["max_shard_size"]
        if finalize(folder.path, max_shard_size=size):  # new shards: an earlier Table-2 row no longer holds
            (folder.path / layout.EVALUATION).unlink(missing_ok=True)
        repo_id = push.repo_id if push is not None else None
        write_card(folder.path, summary=summary, license=license, repo_id=repo_id, max_shard_size=size)
    print(format_summary(summary), file=sys.stderr)
    print(f"wrote {folder.path}", file=sys.stderr)
    if push is not None:
        url = push_folder(
            folder.path, push.repo_id, private=push.private, revision=push.revision, token=push.token
        )
        print(f"pushed {folder.path} to {push.repo_id}: {url}", file=sys.stderr)
    return summary
