"""The resume state of an evaluation: chunks as the tasks of a :class:`~paraamr.tasks.TaskFolder`
under ``DIR/.paraamr/evaluate/``, ``settings.json`` (input identity, options, model digests) and a
``chunk-{k:06d}.json`` of :class:`~paraamr.metrics.stats.RowStats` per committed chunk.

>>> import tempfile
>>> from paraamr.metrics.stats import RowStats
>>> state = StateFolder(tempfile.mkdtemp())
>>> stats = RowStats(["x"]); stats.update({"x": [1.0, 2.0]}, chunk=3)
>>> _ = state.commit(3, stats)
>>> state.completed(), state.stats(3).mean("x")
([3], 1.5)
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from paraamr.atomic import atomic_write
from paraamr.errors import InputError
from paraamr.locks import busy_writers
from paraamr.metrics.settings import EvaluateSettings
from paraamr.metrics.stats import RowStats
from paraamr.options import option_flag
from paraamr.tasks import TaskFolder, model_changes

__all__ = ["StateFolder", "cache_key", "files_changed", "merge_folders"]


def _option_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``--flag was X, now Y`` for each option of a row (:class:`EvaluateSettings`' fields) that differs.

    >>> _option_changes({"seed": 0, "ted_convention": "paper"}, {"seed": 0, "ted_convention": "aesop"})
    ["--ted-convention was 'paper', now 'aesop'"]
    """
    flags = {f.name: option_flag(f) for f in fields(EvaluateSettings)}
    differ = sorted(k for k in {*old, *new} if old.get(k) != new.get(k))
    return [f"{flags.get(k, k)} was {old.get(k)!r}, now {new.get(k)!r}" for k in differ]


class StateFolder(TaskFolder):
    """The evaluation state under ``folder/.paraamr/evaluate/``: chunks of pairs as tasks."""

    def __init__(self, folder: str | os.PathLike) -> None:
        super().__init__(folder, "evaluate", unit="chunk", what="an evaluation")

    def open(
        self,
        settings: Mapping[str, Any],
        *,
        changed: Callable[[Any, Any], str | None],
        alone: bool = False,
        say: bool = True,
    ) -> None:
        """:meth:`~paraamr.tasks.TaskFolder.start` with ``settings``; InputError for another input
        (:func:`files_changed`), options or chunks, unless ``alone`` and no chunk is committed (then
        it starts over, said when ``say``)."""
        saved = self.start(settings)
        if saved is None:
            return
        why = files_changed(saved.get("identity", {}), settings["identity"], changed=changed)
        if why:
            why = f"the input changed ({why})"
        elif saved.get("options") != settings["options"] or saved.get("chunks") != settings["chunks"]:
            differ = "; ".join(_option_changes(saved.get("options", {}), settings["options"])) or "the chunks"
            why = f"other options ({differ})"
        if why and not (alone and self._restart(why, say)):
            raise self._another(why)
        if why:
            atomic_write(self.settings_path, json.dumps(settings, indent=1, sort_keys=True))

    def _another(self, why: str) -> InputError:
        return InputError(
            f"{self.root} holds the statistics of another evaluation: {why}; give another --state-dir, "
            f"or delete {self.root} to start over"
        )

    def _restart(self, why: str, say: bool = True) -> bool:
        """Whether no chunk is committed and no process at work (said on stderr when ``say``)."""
        if self.completed() or busy_writers(self.folder):
            return False
        if say:
            said = f"{self.root}: no chunk was committed; it starts over: {why}"
            print(f"paraamr evaluate: {said}", file=sys.stderr)
        return True

    def check_models(
        self, models: Mapping[str, str], names: Mapping[str, Any], *, cache: bool = False, alone: bool = False
    ) -> bool:
        """Save the models' digests on the first run; refuse a later one with other model files (as
        :meth:`open`), or with ``cache`` (a ``--cache-dir`` folder) delete the stale chunks and
        return True."""
        saved = self.saved() or {}
        changed = model_changes(saved.get("models"), models, names)
        if changed and not cache and not (alone and self._restart("; ".join(changed))):
            raise self._another("; ".join(changed))
        if changed and cache:
            for chunk in self.completed():
                self.path(chunk).unlink(missing_ok=True)
        if "models" not in saved or changed:
            saved["models"] = dict(models)
            atomic_write(self.settings_path, json.dumps(saved, indent=1, sort_keys=True))
        return bool(changed) and cache

    def stats(self, chunk: int) -> RowStats | None:
        """The committed statistics of ``chunk``, or None."""
        data = self.load(chunk)
        try:
            return None if data is None else RowStats.from_dict(data)
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(f"{self.path(chunk)}: unreadable committed statistics ({err})") from err

    def commit(self, chunk: int, stats: RowStats) -> Path:  # type: ignore[override]
        """Write the statistics of ``chunk`` (atomically: all of it, or nothing)."""
        return super().commit(chunk, stats.to_dict())


def cache_key(settings: Mapping[str, Any]) -> str:
    """The state folder's name under ``--cache-dir``: a digest of the options and input identity.

    >>> a = cache_key({"options": {"seed": 0}, "identity": {"in.jsonl": {"sha1": "a"}}})
    >>> a == cache_key({"options": {"seed": 0}, "identity": {"in.jsonl": {"sha1": "b"}}}), len(a)
    (False, 16)
    """
    key = json.dumps([settings["options"], settings["identity"]], sort_keys=True)
    return hashlib.sha1(key.encode()).hexdigest()[:16]


def files_changed(
    saved: Mapping[str, Any], now: Mapping[str, Any], *, changed: Callable[[Any, Any], str | None]
) -> str | None:
    """Why the input files ``{path: identity}`` (``hub``: a Hub dataset) are not the saved ones, by
    ``changed(saved, now)`` per file; None when they are.

    >>> files_changed({"a": 1}, {"a": 2}, changed=lambda x, y: None if x == y else "it changed")
    'a: it changed'
    """
    if set(saved) != set(now):
        return f"its files were {', '.join(sorted(saved))}, now {', '.join(sorted(now))}"
    for name in sorted(now):
        why = changed(saved[name], now[name]) if name != "hub" else None
        if why or (name == "hub" and saved[name] != now[name]):
            return f"{name}: {why or 'another Hub dataset'}"
    return None


def _comparable(stats: RowStats) -> dict[str, Any]:
    return {key: value for key, value in stats.to_dict().items() if key != "timings"}


def merge_folders(folders: Sequence[str | os.PathLike]) -> tuple[RowStats, dict[str, Any]]:
    """The statistics of every chunk in the shards' state ``folders``, and their shared settings;
    InputError naming the folder for other settings, a missing chunk or two differing statistics."""
    settings: dict[str, Any] | None = None
    models: dict[str, str] = {}  # a shard that owned no chunk saved none
    found: dict[int, tuple[RowStats, Path]] = {}
    for folder in folders:
        if not Path(folder).is_dir():
            problem = "not a folder" if Path(folder).exists() else "no such folder"
            raise InputError(f"--merge {folder}: {problem}")
        state = StateFolder(folder)
        saved = state.saved()
        if saved is None:
            raise InputError(f"{folder}: no evaluation state ({state.settings_path} is missing)")
        saved_models = saved.pop("models", None) or {}
        if settings is None:
            settings = saved
        if saved != settings or model_changes(models, saved_models, {}):
            differ = _option_changes(settings.get("options", {}), saved.get("options", {}))  # first: was
            others = sorted({*saved, *settings} - {"options"})
            differ += [f"{k} differ" for k in others if saved.get(k) != settings.get(k)]
            raise InputError(
                f"{folder}: another evaluation than {folders[0]} ({'; '.join(differ) or 'models differ'})"
            )
        models.update(saved_models)
        for chunk in state.completed():
            stats = state.stats(chunk)
            if chunk in found and _comparable(found[chunk][0]) != _comparable(stats):
                raise InputError(f"chunk {chunk} differs between {found[chunk][1]} and {folder}")
            found.setdefault(chunk, (stats, Path(folder)))
    assert settings is not None
    total = settings.get("chunks")
    if type(total) is not int or total < 1:
        raise InputError(
            f"{folders[0]}: not an evaluation state (its settings.json gives no chunk count); "
            "evaluate again into a new --state-dir"
        )
    missing = [k for k in range(total) if k not in found]
    if missing:
        shown = ", ".join(map(str, missing[:8])) + (", ..." if len(missing) > 8 else "")
        raise InputError(
            f"{len(missing)} of {total} chunks are not committed in {', '.join(map(str, folders))} "
            f"(chunk {shown}; chunk k is done by shard k mod N of --shard I/N runs): run the shards "
            "that did not finish again, then merge"
        )
    merged = RowStats(found[0][0].measures, clusters=found[0][0].clusters is not None)
    for k in range(total):
        merged.merge(found[k][0])
    return merged, settings
