"""The end of a run (:func:`paraamr.builder.shards.finalize_run`): its summary, the card, the upload."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from paraamr import layout
from paraamr.atomic import atomic_write, remove_temps
from paraamr.builder.folder import finalize
from paraamr.builder.hub import push_folder
from paraamr.builder.pipeline import Stats
from paraamr.card import write_card
from paraamr.errors import HubError
from paraamr.settings import RecordSettings, RunSettings

__all__ = ["Push", "format_summary", "publish", "pushed", "summarize", "write_outputs"]


@dataclass(frozen=True)
class Push:
    """Where a finished run is uploaded (``--push-to-hub``): see :func:`paraamr.builder.hub.push_folder`."""

    repo_id: str
    private: bool = False
    revision: str | None = None
    token: str | None = field(default=None, repr=False)


#: The record settings that may name a local file or folder (inputs and models): other strings
#: that happen to name one in the working folder (``--split train`` beside a folder ``train``) stay.
PATHS = frozenset(
    f.name for f in fields(RecordSettings) if f.metadata.get("path") or {"model"} & set(f.metadata)
) | {"dataset"}


def _portable(value: Any, base: Path) -> Any:
    """A setting as the summary shows it: a local path relative to the run folder, names as given."""
    if isinstance(value, str) and value not in ("-", "") and (os.path.isabs(value) or Path(value).exists()):
        return os.path.relpath(os.path.abspath(value), os.path.abspath(base))
    return value


def summarize(path: Path, status: Any, run: RunSettings, seconds: float) -> dict[str, Any]:
    """The run summary: settings (local paths relative to ``path``), the counts summed over the tasks
    of ``status`` (a complete :class:`paraamr.builder.status.RunStatus`), time."""
    total = Stats()
    for marker in status.done.values():
        total.merge(Stats.from_dict(marker["stats"]))
    counts = total.as_dict()
    saved = status.saved
    settings = {k: _portable(v, path) if k in PATHS else v for k, v in saved["record"].items()}
    run_info = {k: saved[k] for k in ("shards", "input_identity") if k in saved}
    if (precision := status.precision(path)) is not None:
        run_info["precision"] = precision
    return {
        "settings": {**settings, **run.replace(task_rows=status.plan.task_rows or run.task_rows).as_dict()},
        "run": {**run_info, "tasks": status.plan.count, "tasks_with_rows": len(status.done)},
        "counts": counts,
        "reconciles": counts["inputs"] == counts["records"] + counts["failures"],
        "complete": status.complete,
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


def write_outputs(
    path: Path,
    status: Any,
    run: RunSettings,
    seconds: float,
    *,
    license: str | None = None,
    repo_id: str | None = None,
    revision: str | None = None,
) -> dict[str, Any]:
    """(Under the folder's own lock, every task done) write ``summary.json`` (:func:`summarize`),
    name the shards and write the card for ``repo_id`` (its branch ``revision``). Returns the summary."""
    for name in (layout.SUMMARY, layout.CARD, layout.EVALUATION):
        remove_temps(path / name)  # an earlier finish killed mid-write
    _pushed_path(path).unlink(missing_ok=True)  # what is written now is not uploaded yet
    summary = summarize(path, status, run, seconds)
    size = summary["settings"]["max_shard_size"]
    # an earlier dataset in the folder (--overwrite keeps it until now) goes as the new shards come
    finalize(path, max_shard_size=size, replacing=lambda: layout.remove_layout(path, state=False))
    atomic_write(path / layout.SUMMARY, json.dumps(summary, indent=1, sort_keys=True))
    card = {"repo_id": repo_id, "revision": revision, "max_shard_size": size}
    write_card(path, summary=summary, license=license, **card)
    return summary


def _pushed_path(path: Path) -> Path:
    return layout.state_path(path, "pushed.json")


def _push_key(push: Push) -> str:
    return f"{push.repo_id}@{push.revision or 'main'}"


def _uploads(path: Path) -> dict[str, str]:
    """The uploads recorded for the finished folder ``path``: ``repo@revision`` -> commit URL."""
    try:
        done = json.loads(_pushed_path(path).read_text())
    except (OSError, ValueError):
        return {}
    return done if isinstance(done, dict) else {}


def pushed(path: Path, push: Push) -> bool:
    """Whether the finished folder ``path`` was uploaded to ``push``'s repo and revision since it
    was last finished."""
    return _push_key(push) in _uploads(path)


def publish(path: Path, summary: dict[str, Any], push: Push | None) -> dict[str, Any]:
    """Print the summary and, with ``push``, upload the folder and record the upload (:func:`pushed`)."""
    print(format_summary(summary), file=sys.stderr)
    print(f"wrote {path}", file=sys.stderr)
    if push is not None:
        where = {"private": push.private, "revision": push.revision, "token": push.token}
        try:
            url = push_folder(path, push.repo_id, **where)
        except HubError as err:
            raise HubError(f"{err}; {path} is finished: run the same command again to upload it") from None
        atomic_write(_pushed_path(path), json.dumps({**_uploads(path), _push_key(push): url}))
        print(f"pushed {path} to {push.repo_id}: {url}", file=sys.stderr)
    return summary
