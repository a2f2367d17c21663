"""The run of the corpus builder: checks, partition, resume state and lock, commits, summary.

:func:`execute` is the whole run of one process. The main process first checks everything cheap
(input paths and formats, the output folder, the resume state, the models) before any model loads
and before anything is written; the other processes wait for its verdict, so an error is printed
once. Each process then keeps the input rows whose id hashes to it, runs the stages of
:class:`paraamr.builder.pipeline.Generator` on its own device and writes its own shards; nothing is
gathered. Work is committed in chunks: the chunk's shards are renamed into place, then the process's
state file under ``DIR/.paraamr/`` (never uploaded) records how many of its rows are done. A killed
run started again with the same command deletes shards written after the last commit and goes on,
so its records are exactly those of an uninterrupted run. Every process holds an OS lock on a file
of the resume state for as long as it runs, so a second run on the same folder refuses at once.
After ``wait_for_everyone()`` the main process writes ``summary.json`` and the card ``README.md``,
and uploads the folder when asked.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraamr.builder.folder import CARD, STATE_DIR, SUMMARY, _atomic_write
from paraamr.builder.pipeline import Stats
from paraamr.builder.settings import RecordSettings, RunSettings
from paraamr.builder.stages import make_generator, quiet_libraries
from paraamr.errors import InputError, ParaAMRError, UsageError

__all__ = [
    "STATE_DIR",
    "SUMMARY",
    "FolderLocked",
    "Push",
    "RunFolder",
    "check_run",
    "execute",
    "format_summary",
    "input_identity",
    "launch_warning",
    "read_rows",
    "summarize",
]

#: Inputs up to this size are hashed whole for their identity; larger ones by head, tail and size.
FULL_HASH_BYTES = 64 << 20
_EDGE_BYTES = 1 << 20


class FolderLocked(ParaAMRError):
    """The output folder is being written by another run (the message names its PID and host)."""


@dataclass(frozen=True)
class Push:
    """Where a finished run is uploaded (``--push-to-hub``): see :func:`paraamr.builder.hub.push_folder`."""

    repo_id: str
    private: bool = False
    revision: str | None = None
    token: str | None = None


# -- inputs ---------------------------------------------------------------------------------------
def read_rows(r: RecordSettings) -> Iterator:
    """All input rows of a run, in order (see :mod:`paraamr.builder.readers`)."""
    from paraamr.builder import readers

    if r.amr_input:
        return readers.read_input(r.amr_input, fmt="amr")
    if r.dataset:
        return readers.read_dataset(
            r.dataset, split=r.dataset_split or r.split, column=r.text_column, config=r.dataset_config
        )
    return readers.read_input(r.input, column=r.text_column, fmt=r.input_format)


def input_identity(path: str | Path) -> dict[str, Any]:
    """What identifies an input file's content: size, mtime and sha1 of the whole file when it is
    small (<= :data:`FULL_HASH_BYTES`), else of its first and last MiB.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "in.txt"
    >>> _ = p.write_text("a\\nb\\n")
    >>> ident = input_identity(p)
    >>> ident["size"], ident["sha1"]  # sha1sum of the same bytes
    (4, '05dec960e24d918b8a73a1c53bcbbaac2ee5c2e0')
    """
    import hashlib

    path = Path(path)
    st = path.stat()
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        if st.st_size <= FULL_HASH_BYTES:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
            return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha1": digest.hexdigest()}
        digest.update(f.read(_EDGE_BYTES))
        f.seek(st.st_size - _EDGE_BYTES)
        digest.update(f.read(_EDGE_BYTES))
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "edges_sha1": digest.hexdigest()}


def _identity_changed(saved: dict[str, Any] | None, now: dict[str, Any] | None) -> str | None:
    """Why the input is not the one a run started with (None when it is)."""
    if saved == now or saved is None or now is None:
        return None if saved == now else "the input's identity was not recorded"
    if saved.get("size") != now.get("size"):
        return f"its size was {saved.get('size')} bytes, now {now.get('size')}"
    if "sha1" in saved and "sha1" in now:
        return None if saved["sha1"] == now["sha1"] else "its content changed (sha1)"
    if saved.get("edges_sha1") != now.get("edges_sha1"):
        return "its content changed (first or last MiB)"
    return "it was modified (mtime) since the run started"


def _input_file(record: RecordSettings) -> str | None:
    path = record.amr_input or record.input
    return None if path in (None, "-") else path


def _check_input(record: RecordSettings, num_processes: int) -> None:
    """Input problems found without reading more than a file's first row."""
    from paraamr.builder import readers

    if not record.source:
        raise UsageError("give one of --input, --dataset, --amr-input")
    if record.input == "-" and num_processes > 1:
        raise UsageError("--input - (stdin) needs a single process")
    path = _input_file(record)
    if path is None:
        if record.input == "-":
            readers.input_format("-", record.input_format)
        return
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{path}: is a directory, not an input file")
    if not p.is_file():
        raise InputError(f"{path}: no such file")
    if not os.access(p, os.R_OK):
        raise InputError(f"{path}: not readable")
    fmt = "amr" if record.amr_input else readers.input_format(path, record.input_format)
    if fmt != "amr":
        next(iter(readers.read_input(path, column=record.text_column, fmt=fmt)), None)


# -- the folder: layout, state, lock --------------------------------------------------------------
class RunFolder:
    """The output folder of a run and its resume state (``DIR/.paraamr/``).

    >>> import tempfile
    >>> f = RunFolder(tempfile.mkdtemp(), rank=1, num_processes=2)
    >>> f.prefix, f.state_path.name
    ('00001-of-00002-', 'state-00001-of-00002.json')
    """

    def __init__(self, folder: str | Path, *, rank: int, num_processes: int):
        self.path = Path(folder)
        self.rank, self.num_processes = rank, num_processes
        self.prefix = f"{rank:05d}-of-{num_processes:05d}-"
        self.state_dir = self.path / STATE_DIR
        self.state_path = self.state_dir / f"state-{self.prefix[:-1]}.json"
        self.progress_path = self.state_dir / f"progress-{self.prefix[:-1]}.json"
        self.settings_path = self.state_dir / "settings.json"
        self._lock_file = None

    def read_settings(self) -> dict | None:
        """The saved run (``record``, ``num_processes``, ``input_identity``), or None."""
        return json.loads(self.settings_path.read_text()) if self.settings_path.is_file() else None

    def check(self, record: RecordSettings, identity: dict[str, Any] | None, *, overwrite: bool) -> str:
        """Refuse to mix runs or to touch files that are not ours; return what will happen
        (``new``, ``resume`` or ``overwrite``). Writes nothing."""
        if self.path.exists() and not self.path.is_dir():
            raise InputError(f"{self.path}: exists and is not a folder")
        if not self.path.exists():
            parent = next(p for p in self.path.absolute().parents if p.exists())
            if not os.access(parent, os.W_OK):
                raise InputError(f"{self.path}: cannot be created ({parent} is not writable)")
            return "new"
        if not os.access(self.path, os.W_OK):
            raise InputError(f"{self.path}: not writable")
        self.check_lock()
        saved = self.read_settings()
        if saved is None:
            if any(p.name != STATE_DIR for p in self.path.iterdir()):
                raise InputError(
                    f"{self.path}: exists and holds no paraamr run; "
                    + ("refusing to delete its files even with --overwrite" if overwrite else "")
                    + ("" if overwrite else "give an empty or new folder")
                )
            return "new"
        if overwrite:
            return "overwrite"
        if "record" not in saved:
            raise InputError(f"{self.path} holds a run of an older paraamr; pass --overwrite to start over")
        diffs = RecordSettings.from_dict(saved["record"]).differences(record)
        if saved.get("num_processes") != self.num_processes:
            diffs.append(f"processes were {saved.get('num_processes')}, now {self.num_processes}")
        changed = _identity_changed(saved.get("input_identity"), identity)
        if changed:
            diffs.append(f"the input changed: {changed}")
        if diffs:
            raise InputError(
                f"{self.path} holds a run with other settings ({'; '.join(diffs)}); "
                "pass --overwrite to start over"
            )
        return "resume"

    def _lock_paths(self) -> list[Path]:
        return sorted(self.state_dir.glob("lock-*")) if self.state_dir.is_dir() else []

    def check_lock(self) -> None:
        """Raise :class:`FolderLocked` when a process of another run holds a lock of this folder."""
        import fcntl

        for path in self._lock_paths():
            with open(path, "a+") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    f.seek(0)
                    holder = f.read().strip() or "unknown"
                    raise FolderLocked(
                        f"{self.path}: another run is writing this folder ({holder}); "
                        "wait for it to finish or stop it"
                    ) from None
                fcntl.flock(f, fcntl.LOCK_UN)

    def lock(self) -> None:
        """Take this process's lock (``.paraamr/lock-RANK``, holding ``pid P on host H``); the OS
        releases it when the process ends, however it ends."""
        import fcntl

        self.state_dir.mkdir(parents=True, exist_ok=True)
        f = open(self.state_dir / f"lock-{self.rank:05d}", "a+")  # noqa: SIM115 (held until exit)
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "unknown"
            f.close()
            raise FolderLocked(f"{self.path}: another run is writing this folder ({holder})") from None
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()} on host {socket.gethostname()}")
        f.flush()
        self._lock_file = f

    def unlock(self) -> None:
        """Release this process's lock."""
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def reset(self, saved: dict[str, Any], *, overwrite: bool) -> None:
        """(Main process, lock held) with ``overwrite``, delete the earlier run's files, only those of
        the project's layout (:mod:`paraamr.builder.folder`), keeping the locks; save the settings."""
        import shutil

        from paraamr.builder import folder as layout

        if overwrite:
            for name in (CARD, SUMMARY):
                (self.path / name).unlink(missing_ok=True)
            for p in self.state_dir.iterdir():
                if not p.name.startswith("lock-"):
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
            # shards and failure files as the layout names them; never a user's file
            shards = [p for s in layout.list_shards(self.path).values() for ps in s.values() for p in ps]
            for path in [*shards, *layout.failure_files(self.path)]:
                path.unlink()
            for sub in (layout.DATA, layout.FAILURES):
                for d in sorted((self.path / sub).glob("**/"), reverse=True):
                    if not any(d.iterdir()):
                        d.rmdir()
        if not self.settings_path.is_file():
            _atomic_write(self.settings_path, json.dumps(saved, indent=1, sort_keys=True))

    def load_state(self) -> dict:
        """This process's committed state (fresh when none)."""
        if self.state_path.is_file():
            return json.loads(self.state_path.read_text())
        return {"consumed": 0, "next": {}, "stats": Stats().as_dict(), "done": False}

    def save_state(self, state: dict) -> None:
        """Commit: the state file is replaced atomically."""
        _atomic_write(self.state_path, json.dumps(state, sort_keys=True))

    def save_progress(self, inputs: int) -> None:
        """Rows this process has handled so far (for the main process's bar; not a commit)."""
        tmp = self.progress_path.with_name(f".{self.progress_path.name}.tmp")
        tmp.write_text(str(inputs))
        os.replace(tmp, self.progress_path)

    def progress(self) -> int:
        """Rows handled so far by every process of the run."""
        total = 0
        for path in self.state_dir.glob(f"progress-*-of-{self.num_processes:05d}.json"):
            with contextlib.suppress(OSError, ValueError):  # being replaced right now
                total += int(path.read_text() or 0)
        return total

    def clean(self, state: dict) -> int:
        """Delete this process's parts written after its last commit (and temporary ones); return how many."""
        from paraamr.builder.folder import clean_parts

        return clean_parts(
            self.path, rank=self.rank, num_processes=self.num_processes, committed=state["next"]
        )


class _Outputs:
    """The writers of one process: ``default`` and ``pairs`` for each split, and failures
    (:mod:`paraamr.builder.folder`); ``flush`` commits them and returns the state's part numbers."""

    def __init__(self, folder: RunFolder, splits: list[str], state: dict, *, max_shard_size: int | str):
        from paraamr.builder.folder import FailureWriter, ShardWriter
        from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA

        nxt = state["next"]
        where = {"rank": folder.rank, "num_processes": folder.num_processes}
        self.writers: dict[str, Any] = {}
        for split in splits:
            for config, schema in (("default", DEFAULT_SCHEMA), ("pairs", PAIRS_SCHEMA)):
                key = f"{config}/{split}"
                self.writers[key] = ShardWriter(
                    folder.path,
                    config,
                    split,
                    schema,
                    max_shard_size=max_shard_size,
                    first_part=nxt.get(key, 0),
                    **where,
                )
        self.writers["failures"] = FailureWriter(folder.path, first_part=nxt.get("failures", 0), **where)
        self.buffered = 0

    def write(self, window, spec: dict[str, Any]) -> None:
        from paraamr.builder.rows import split_of
        from paraamr.records import to_pairs

        for record in window.records:
            split = split_of(
                record["id"],
                validation=spec["validation_fraction"],
                test=spec["test_fraction"],
                train=spec["split"],
            )
            self.writers[f"default/{split}"].write(record)
            self.writers[f"pairs/{split}"].write_rows(to_pairs(record))
        for failure in window.failures:
            self.writers["failures"].write(failure)
        self.buffered += window.rows

    def flush(self, *, final: bool = False) -> dict[str, int]:
        """Commit every writer (``final`` is the same commit: shards are named by ``finalize``)."""
        self.buffered = 0
        return {key: writer.commit() for key, writer in self.writers.items()}


def _state():
    """accelerate's process state: on the CPU (gloo between processes) when there is no GPU."""
    from datetime import timedelta

    import torch
    from accelerate import PartialState

    cpu = not torch.cuda.is_available() or os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true")
    return PartialState(cpu=cpu, timeout=timedelta(days=7))


def launch_info() -> tuple[int, int]:
    """``(rank, number of processes)`` of this process, from the launcher's environment (torchrun and
    ``accelerate launch`` set ``RANK`` and ``WORLD_SIZE``), without importing torch."""
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def launch_warning(environ: dict[str, str] | None = None) -> str | None:
    """What to say when ``accelerate launch`` was asked for several processes but started one:
    with ``--cpu`` it runs a single process and only sets ``MASTER_ADDR`` (no ``WORLD_SIZE``).

    >>> launch_warning({"ACCELERATE_USE_CPU": "True", "MASTER_ADDR": "127.0.0.1"})[:45]
    'accelerate launch started ONE process, not th'
    >>> launch_warning({"ACCELERATE_USE_CPU": "True"}) is None  # one process asked for
    True
    """
    env = os.environ if environ is None else environ
    launched = any(k in env for k in ("ACCELERATE_USE_CPU", "ACCELERATE_MIXED_PRECISION"))
    if not launched or "WORLD_SIZE" in env or "MASTER_ADDR" not in env:
        return None
    return (
        "accelerate launch started ONE process, not the number asked for (with --cpu it always runs "
        "one); for N processes on the CPU use `accelerate launch --multi_gpu --num_processes N ...` "
        "(works without a GPU) or `torchrun --nproc_per_node N ...`"
    )


def _share_cores(local_processes: int) -> None:
    """Several processes on one machine's CPU: torch's threads (OpenMP and MKL alike) in each at
    most its share of the cores. torchrun sets only ``OMP_NUM_THREADS``; an ``MKL_NUM_THREADS`` left
    at the core count oversubscribed the cores (2 processes on 2 cores: 72 s instead of 20 s)."""
    import torch

    share = max(1, (os.cpu_count() or 1) // local_processes)
    torch.set_num_threads(min(torch.get_num_threads(), share))  # sets MKL's count too


def _verdict(state_obj, error: BaseException | None) -> bool:
    """(Several processes) share the main process's verdict; True when the run may go on."""
    import torch.distributed as dist

    message = [None if error is None else str(error) or type(error).__name__]
    dist.broadcast_object_list(message, src=0)
    return message[0] is None


def _check_models(
    record: RecordSettings, *, download: bool = True, trust_remote_code: bool = False
) -> dict[str, str]:
    """``{kind: path}`` of every model the records need, fetched when missing and the machine is
    online unless ``download`` is off (:func:`paraamr.models.download.ensure`), amrlib folders
    checked to name only amrlib's own code (unless ``trust_remote_code``); one error naming each
    missing model."""
    from paraamr.errors import ModelNotFoundError
    from paraamr.models.download import ensure
    from paraamr.models.resolve import amrlib_meta

    found, missing = {}, []
    for kind, name in record.models().items():
        try:
            path = ensure(name, kind, download=download)
        except ModelNotFoundError as err:
            missing.append(str(err))
            continue
        found[kind] = str(path)
        if kind in ("parser", "realizer") and (path / "amrlib_meta.json").is_file():
            amrlib_meta(path, kind, trust_remote_code=trust_remote_code)
    if len(missing) == 1:
        raise ModelNotFoundError(missing[0])
    if missing:
        raise ModelNotFoundError(_models_missing(missing))
    return found


def _models_missing(messages: list[str]) -> str:
    """Several missing-model messages as one line: without the paths looked at, the shared reason once.

    >>> _models_missing(["a is not on disk (looked at /x); fetch it with: get a (offline)",
    ...                  "b is not on disk (looked at /y); fetch it with: get b (offline)"])
    'models missing: a is not on disk; fetch it with: get a; b is not on disk; fetch it with: get b (offline)'
    """
    import re

    short = [re.sub(r" \(looked at [^)]*\)", "", m) for m in messages]
    why = {re.search(r" \([^()]*\)$", m).group(0) if re.search(r" \([^()]*\)$", m) else "" for m in short}
    tail = why.pop() if len(why) == 1 else ""
    return "models missing: " + "; ".join(m.removesuffix(tail) for m in short) + tail


def check_run(
    record: RecordSettings,
    folder: RunFolder,
    *,
    overwrite: bool = False,
    models: bool = True,
    download: bool = True,
    trust_remote_code: bool = False,
) -> tuple[dict[str, Any], str]:
    """Everything checked before a model loads or a file is written: the input (paths, format, its
    first row), the output folder (resume state, lock, foreign files) and, with ``models``, that each
    model is on disk (fetched when missing and online). Returns the run's resume record
    (``record``, ``num_processes``, ``input_identity``) and ``new``/``resume``/``overwrite``."""
    _check_input(record, folder.num_processes)
    path = _input_file(record)
    identity = input_identity(path) if path else None
    mode = folder.check(record, identity, overwrite=overwrite)
    if models:
        _check_models(record, download=download, trust_remote_code=trust_remote_code)
    saved = {"record": record.as_dict(), "num_processes": folder.num_processes, "input_identity": identity}
    return saved, mode


def _count_rows(record: RecordSettings, out: list) -> None:
    """Count the input rows (cheaply; None for stdin and datasets) into ``out[0]``."""
    from paraamr.builder import readers

    path = _input_file(record)
    try:
        if path is not None:
            fmt = "amr" if record.amr_input else readers.input_format(path, record.input_format)
            out[0] = readers.count_rows(path, fmt=fmt)
    except Exception:  # a bar without a total is no reason to stop
        out[0] = None


def _process(
    record: RecordSettings,
    run: RunSettings,
    folder: RunFolder,
    state_obj,
    *,
    total: list,
) -> None:
    """One process's share: owned rows after the committed ones, windows, commits."""
    from itertools import islice

    from tqdm.auto import tqdm

    from paraamr.builder.rows import owner

    state = folder.load_state()
    folder.clean(state)
    stats = Stats.from_dict(state["stats"])
    folder.save_progress(stats.inputs)
    if state["done"]:
        return
    generator = make_generator(record, run)
    n, rank = folder.num_processes, folder.rank
    owned = (row for row in read_rows(record) if owner(row.id, n) == rank)
    generator.mark_seen(row.id for row in islice(owned, state["consumed"]))
    outputs = _Outputs(folder, record.splits(), state, max_shard_size=run.max_shard_size)
    main = state_obj.is_main_process
    bar = tqdm(
        desc=f"generate ({n} processes)" if n > 1 else "generate",
        unit=" src",
        total=total[0],
        initial=folder.progress() if main else 0,
        disable=not main or not run.progress,
        dynamic_ncols=True,
    )
    started, last_commit = time.monotonic(), time.monotonic()
    paras0, spec = stats.paraphrases, record.as_dict()

    def commit(final: bool = False) -> None:
        state["next"] = outputs.flush(final=final)
        state["stats"] = stats.as_dict()
        state["done"] = final
        folder.save_state(state)

    def show() -> None:
        if bar.total is None and total[0] is not None:
            bar.total = total[0]
        bar.n = folder.progress()
        elapsed = max(time.monotonic() - started, 1e-9)
        bar.set_postfix(
            para_per_s=f"{(stats.paraphrases - paras0) / elapsed:.1f}",
            failures=sum(stats.failures.values()),
            refresh=False,
        )
        bar.refresh()

    for window in generator.windows(owned):
        outputs.write(window, spec)
        stats.merge(window.stats)
        state["consumed"] += window.rows
        folder.save_progress(stats.inputs)
        if main and run.progress:
            show()
        if outputs.buffered >= run.commit_every or time.monotonic() - last_commit > run.commit_seconds:
            commit()
            last_commit = time.monotonic()
    commit(final=True)
    # the others may still run: keep the bar moving until every process is done
    while main and run.progress and n > 1 and not _all_done(folder):
        show()
        time.sleep(0.5)
    if main and run.progress:
        show()
    bar.close()


def _all_done(folder: RunFolder) -> bool:
    states = list(folder.state_dir.glob(f"state-*-of-{folder.num_processes:05d}.json"))
    try:
        return len(states) == folder.num_processes and all(json.loads(p.read_text())["done"] for p in states)
    except (OSError, ValueError):
        return False


def _portable(value: Any, base: Path) -> Any:
    """A setting as the summary shows it: a local path relative to the run folder, names as given."""
    if isinstance(value, str) and value not in ("-", "") and (os.path.isabs(value) or Path(value).exists()):
        return os.path.relpath(os.path.abspath(value), os.path.abspath(base))
    return value


def summarize(folder: RunFolder, saved: dict[str, Any], run: RunSettings, seconds: float) -> dict[str, Any]:
    """The run summary: settings (local paths relative to the folder), counts of all processes (from
    their state files), time."""
    total, per_process = Stats(), []
    for path in sorted(folder.state_dir.glob("state-*.json")):
        s = json.loads(path.read_text())
        total.merge(Stats.from_dict(s["stats"]))
        per_process.append({"process": path.stem[6:], "done": s["done"], **s["stats"]})
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


def _write_card(
    folder: RunFolder,
    summary: dict[str, Any],
    license: str | None,
    *,
    repo_id: str | None = None,
) -> None:
    """(Main process, every process done) name the shards (:func:`paraamr.builder.folder.finalize`,
    crash-safe and a no-op once done), then write the card from them for ``repo_id`` (the repo a
    push goes to: its load snippets name it)."""
    from paraamr.builder.folder import EVALUATION, finalize
    from paraamr.card import write_card

    size = summary["settings"]["max_shard_size"]  # the run's RunSettings (summarize)
    if finalize(folder.path, max_shard_size=size):  # new shards: an earlier Table-2 row no longer holds
        (folder.path / EVALUATION).unlink(missing_ok=True)
    write_card(folder.path, summary=summary, license=license, repo_id=repo_id, max_shard_size=size)


def execute(
    record: RecordSettings,
    run: RunSettings | None = None,
    *,
    output: str | Path,
    overwrite: bool = False,
    license: str | None = None,
    push: Push | None = None,
) -> dict[str, Any] | None:
    """Run this process's share of the build into ``output``; the main process then writes the
    summary and the card (and uploads the folder with ``push``) and returns the summary.

    The main process checks everything (:func:`check_run`) before a model loads or a file is
    written; the others wait for its verdict and end with status 1, silently, when it fails."""
    run = run or RunSettings()
    t0 = time.monotonic()
    rank, n = launch_info()
    folder = RunFolder(output, rank=rank, num_processes=n)
    error: BaseException | None = None
    if rank == 0:
        warning = launch_warning()
        if warning:
            print(f"paraamr generate: warning: {warning}", file=sys.stderr)
        try:
            saved, mode = check_run(
                record,
                folder,
                overwrite=overwrite,
                download=run.download,
                trust_remote_code=run.trust_remote_code,
            )
            folder.lock()
            folder.reset(saved, overwrite=mode == "overwrite")
        except BaseException as err:  # told to every process, then raised here
            error = err
    if n == 1 and error is not None:
        raise error
    quiet_libraries(run.verbose)
    state_obj = _state()
    if n > 1:
        go = _verdict(state_obj, error)
        if error is not None:
            raise error
        if not go:
            raise SystemExit(1)  # the main process reports it
        if rank != 0:
            folder.lock()
        saved = folder.read_settings()
    try:
        if run.device is None and state_obj.device.type != "cpu":
            run = run.replace(device=str(state_obj.device))
        if n > 1 and (run.device or "cpu") == "cpu":
            _share_cores(int(os.environ.get("LOCAL_WORLD_SIZE") or n))
        total: list = [None]
        if state_obj.is_main_process and run.progress:
            threading.Thread(target=_count_rows, args=(record, total), daemon=True).start()
        _process(record, run, folder, state_obj, total=total)
        state_obj.wait_for_everyone()
        if not state_obj.is_main_process:
            return None
        summary = summarize(folder, saved, run, time.monotonic() - t0)
        _atomic_write(folder.path / SUMMARY, json.dumps(summary, indent=1, sort_keys=True))
        _write_card(folder, summary, license, repo_id=push.repo_id if push is not None else None)
        print(format_summary(summary), file=sys.stderr)
        print(f"wrote {folder.path}", file=sys.stderr)
        if push is not None:
            _push(folder, push)
        return summary
    finally:
        folder.unlock()


def _push(folder: RunFolder, push: Push) -> None:
    """Upload the finished folder (its card already names ``push.repo_id``) and say where."""
    from paraamr.builder.hub import push_folder

    url = push_folder(
        folder.path, push.repo_id, private=push.private, revision=push.revision, token=push.token
    )
    print(f"pushed {folder.path} to {push.repo_id}: {url}", file=sys.stderr)
