"""What every run of tasks shares: a process's place in a launch (from the launcher's environment,
without importing torch), its share of the cores and tasks, and the folder of completed tasks.

>>> launch({"RANK": "1", "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "2"})
Launch(rank=1, processes=4, local=2)
>>> [k for k in range(8) if owned(k, rank=1, processes=2, shard=(0, 2))]
[2, 6]
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from paraamr import layout
from paraamr.atomic import atomic_write, remove_temps
from paraamr.errors import InputError
from paraamr.locks import Lock, writer_lock
from paraamr.signals import critical

__all__ = [
    "FULL_HASH_BYTES",
    "Launch",
    "TaskFolder",
    "broadcast",
    "core_share",
    "cpu_only",
    "dataset_identity",
    "feed",
    "file_digest",
    "gather",
    "identity_changed",
    "in_threads",
    "input_identity",
    "launch",
    "model_changes",
    "owned",
    "process_group",
    "read_json",
    "share_cores",
]

#: Inputs up to this size are hashed whole for their identity; larger ones by head, tail and size.
FULL_HASH_BYTES = 64 << 20
_EDGE_BYTES = 1 << 20


@dataclass(frozen=True)
class Launch:
    """This process's place: ``rank`` of ``processes``, ``local`` of them on this machine."""

    rank: int = 0
    processes: int = 1
    local: int = 1

    @property
    def main(self) -> bool:
        return self.rank == 0


def launch(environ: Mapping[str, str] | None = None) -> Launch:
    """This process's :class:`Launch` from ``RANK``, ``WORLD_SIZE`` and ``LOCAL_WORLD_SIZE`` (none: one
    process)."""
    env = os.environ if environ is None else environ
    world = int(env.get("WORLD_SIZE", 1))
    return Launch(int(env.get("RANK", 0)), world, int(env.get("LOCAL_WORLD_SIZE") or world))


def cpu_only() -> bool:
    """Whether this launch has no accelerator to use (none, or ``accelerate launch --cpu``)."""
    with critical():  # a signal inside torch's first import leaves it half made: the next one fails
        import torch

    return not torch.cuda.is_available() or os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true")


def owned(task: int, *, rank: int = 0, processes: int = 1, shard: tuple[int, int] = (0, 1)) -> bool:
    """Whether process ``rank`` of ``processes`` in shard ``(i, n)`` runs ``task`` (round-robin to
    shards, then to the shard's processes)."""
    i, n = shard
    return task % n == i and (task // n) % processes == rank


def core_share(local: int = 1) -> int:
    """The cores each of ``local`` processes on this machine may use: those this process may run on
    (taskset, cgroups, Slurm) divided among them."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, local))


def in_threads(target: Callable[..., Any], calls: Iterable[tuple[Any, ...]]) -> None:
    """``target(*args)`` for each ``args`` of ``calls``, each in its own thread, waited for; the
    first error raised in one is raised here. The threads are daemons: a signal to the caller never
    waits for them.

    >>> seen = []
    >>> in_threads(seen.append, [(1,), (2,)]); sorted(seen)
    [1, 2]
    """
    import threading

    errors: list[BaseException] = []

    def run(*args: Any) -> None:
        try:
            target(*args)
        except BaseException as err:  # raised in the caller's thread
            errors.append(err)

    threads = [threading.Thread(target=run, args=args, daemon=True) for args in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def share_cores(local: int) -> None:
    """Limit torch's threads (OpenMP and MKL) to this process's :func:`core_share`."""
    import torch

    torch.set_num_threads(min(torch.get_num_threads(), core_share(local)))  # sets MKL's count too


@contextlib.contextmanager
def process_group() -> Iterator[Any]:
    """``torch.distributed`` with a process group: the running one, else a gloo one for the block."""
    from datetime import timedelta

    import torch.distributed as dist

    started = not dist.is_initialized()
    if started:
        dist.init_process_group("gloo", timeout=timedelta(days=7))
    try:
        yield dist
    finally:
        if started:
            dist.destroy_process_group()


def gather(item: Any, where: Launch) -> list[Any] | None:
    """Every process's ``item`` on process 0, in rank order (None on the others)."""
    if where.processes == 1:
        return [item]
    with process_group() as dist:
        out: list[Any] | None = [None] * where.processes if where.main else None
        dist.gather_object(item, out, dst=0)
        return out


def broadcast(item: Any, where: Launch) -> Any:
    """Process 0's ``item``, on every process."""
    if where.processes == 1:
        return item
    with process_group() as dist:
        box = [item]
        dist.broadcast_object_list(box, src=0)
        return box[0]


def read_json(path: Path, what: str, *, fix: str = "") -> dict[str, Any] | None:
    """The JSON object in the state file ``path`` (``what`` it holds), or None when there is none;
    InputError naming the file when it is unreadable or not an object (``fix``: what to do then)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise InputError(f"{path}: cannot read {what} ({err}){fix}") from None
    if not isinstance(data, dict):  # never overwritten: it may be someone's file
        raise InputError(f"{path}: not {what} (a JSON object expected){fix}")
    return data


class TaskFolder:
    """The completed tasks of a run under ``folder/.paraamr/{name}/`` (``what`` it is, for
    messages): ``settings.json`` and one ``{unit}-{k:06d}.json`` of statistics per completed task,
    each written atomically.

    >>> import tempfile
    >>> tasks = TaskFolder(tempfile.mkdtemp(), "evaluate", unit="chunk")
    >>> tasks.start({"seed": 0}) is None  # nothing saved before
    True
    >>> _ = tasks.commit(3, {"pairs": 2})
    >>> tasks.completed(), tasks.load(3), tasks.path(3).name
    ([3], {'pairs': 2}, 'chunk-000003.json')
    """

    def __init__(self, folder: str | os.PathLike, name: str, *, unit: str = "task", what: str = "a run"):
        self.folder = Path(folder)
        self.root = layout.state_path(self.folder, f"{name}/")
        self.settings_path = self.root / "settings.json"
        self.name, self.unit, self.what = name, unit, what
        self._pattern = re.compile(rf"^{re.escape(unit)}-(\d{{6,}})\.json$")

    def path(self, task: int) -> Path:
        return self.root / f"{self.unit}-{task:06d}.json"

    def saved(self) -> dict[str, Any] | None:
        """The saved settings, or None."""
        return read_json(self.settings_path, f"{self.what} state", fix=f"; delete {self.root} to start over")

    def start(self, settings: Mapping[str, Any]) -> dict[str, Any] | None:
        """The saved settings, after saving ``settings`` when there were none."""
        saved = self.saved()
        if saved is None:
            atomic_write(self.settings_path, json.dumps(settings, indent=1, sort_keys=True))
        return saved

    def lock(self, writer: str) -> Lock:
        """This writer's lock (refused while another process holds it)."""
        return writer_lock(self.folder, writer, command=self.name)

    def completed(self) -> list[int]:
        """The completed tasks, in order."""
        if not self.root.is_dir():
            return []
        return sorted(int(m[1]) for p in self.root.iterdir() if (m := self._pattern.match(p.name)))

    def load(self, task: int) -> dict[str, Any] | None:
        """The statistics of a completed ``task``, or None."""
        return read_json(self.path(task), f"the statistics of a completed {self.unit}")

    def commit(self, task: int, stats: Mapping[str, Any]) -> Path:
        """Mark ``task`` completed with its statistics (atomically: all of it, or nothing)."""
        return atomic_write(self.path(task), json.dumps(stats, ensure_ascii=False))

    def clean(self, tasks: Iterable[int]) -> int:
        """Delete the temporary files a killed writer left beside its ``tasks``; how many."""
        return sum(remove_temps(self.path(k)) for k in tasks)


def feed(digest: Any, f: BinaryIO) -> Any:
    """``digest`` (a :mod:`hashlib` object) updated with the rest of the binary file ``f``, read in
    1 MiB blocks (:func:`hashlib.file_digest` of Python 3.11, on 3.10 too).

    >>> import hashlib, io
    >>> feed(hashlib.sha1(), io.BytesIO(b"a\\nb\\n")).hexdigest() == hashlib.sha1(b"a\\nb\\n").hexdigest()
    True
    """
    for block in iter(lambda: f.read(1 << 20), b""):
        digest.update(block)
    return digest


def file_digest(path: str | Path) -> dict[str, Any]:
    """A file's size and the sha1 of the whole file up to :data:`FULL_HASH_BYTES`, else of its first
    and last MiB.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "in.txt"
    >>> _ = p.write_text("a\\nb\\n")
    >>> file_digest(p)  # sha1sum of the same bytes
    {'size': 4, 'sha1': '05dec960e24d918b8a73a1c53bcbbaac2ee5c2e0'}
    """
    import hashlib

    path = Path(path)
    size = path.stat().st_size
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        if size <= FULL_HASH_BYTES:
            return {"size": size, "sha1": feed(digest, f).hexdigest()}
        digest.update(f.read(_EDGE_BYTES))
        f.seek(size - _EDGE_BYTES)
        digest.update(f.read(_EDGE_BYTES))
    return {"size": size, "edges_sha1": digest.hexdigest()}


def input_identity(path: str | Path) -> dict[str, Any]:
    """What identifies an input file: its :func:`file_digest` and modification time."""
    return {**file_digest(path), "mtime_ns": Path(path).stat().st_mtime_ns}


def dataset_identity(name: str) -> dict[str, Any]:
    """What identifies a ``--dataset``: a local file or each visible file of a folder by its
    :func:`input_identity`, a Hub dataset by the revision it resolves to now (None offline).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "train.jsonl").write_text("a\\n")
    >>> sorted(dataset_identity(str(d))["files"])
    ['train.jsonl']
    """
    path = Path(name)
    if path.is_file():
        return input_identity(path)
    if path.is_dir():
        files = {}
        for top, dirs, names in os.walk(path):
            dirs[:] = [d for d in dirs if not d.startswith(".")]  # .cache, a run's state
            for file in (n for n in names if not n.startswith(".")):
                files[(Path(top) / file).relative_to(path).as_posix()] = input_identity(Path(top) / file)
        return {"files": dict(sorted(files.items()))}
    return {"hub": name, "revision": _hub_revision(name)}


def _hub_revision(name: str) -> str | None:
    """The commit a Hub dataset resolves to now; None offline or when the Hub cannot say."""
    from huggingface_hub import HfApi, constants

    from paraamr.network import bound_hub_requests, hub_timeout

    if constants.HF_HUB_OFFLINE:
        return None
    bound_hub_requests()
    try:
        return HfApi().dataset_info(name, timeout=hub_timeout()).sha
    except Exception:  # not a Hub dataset, no network: the load says what is wrong
        return None


def model_changes(
    saved: Mapping[str, str] | None, now: Mapping[str, str] | None, names: Mapping[str, Any]
) -> list[str]:
    """Which models (``names`` by kind) have other files than when the run started (digests by kind,
    :func:`paraamr.models.fast.model_digest`; nothing to compare where either is unknown).

    >>> model_changes({"parser": "a1", "lm": "b2"}, {"parser": "a1", "lm": "c3"}, {"lm": "gpt2"})
    ["the lm model 'gpt2' has other files than when the run started"]
    """
    return [
        f"the {kind} model {names.get(kind)!r} has other files than when the run started"
        for kind in sorted((saved or {}).keys() & (now or {}).keys())
        if saved[kind] != now[kind]
    ]


def identity_changed(saved: dict[str, Any] | None, now: dict[str, Any] | None) -> str | None:
    """Why the input is not the one a run started with (None when it is).

    >>> identity_changed({"size": 4, "sha1": "a"}, {"size": 5, "sha1": "b"})
    'its size was 4 bytes, now 5'
    >>> identity_changed({"files": {"a.csv": {"size": 4, "sha1": "a"}}}, {"files": {}})
    'a.csv was removed'
    """
    if saved is None and now is not None and ("files" in now or "hub" in now):
        return None  # a --dataset run of a paraamr that kept no identity for it: cannot be checked
    if saved == now or saved is None or now is None:
        return None if saved == now else "the input's identity was not recorded"
    if "files" in saved or "files" in now:
        old, new = saved.get("files", {}), now.get("files", {})
        for name in sorted(old.keys() | new.keys()):
            if name not in old or name not in new:
                return f"{name} was {'added' if name in new else 'removed'}"
            changed = identity_changed(old[name], new[name])
            if changed:
                return f"{name}: {changed}"
        return None
    if "revision" in saved or "revision" in now:
        was, is_ = saved.get("revision"), now.get("revision")
        if was and is_ and was != is_:  # offline (None): cannot be checked
            return f"the Hub dataset's revision was {was[:12]}, now {is_[:12]}"
        return None
    if saved.get("size") != now.get("size"):
        return f"its size was {saved.get('size')} bytes, now {now.get('size')}"
    if "sha1" in saved and "sha1" in now:
        return None if saved["sha1"] == now["sha1"] else "its content changed (sha1)"
    if saved.get("edges_sha1") != now.get("edges_sha1"):
        return "its content changed (first or last MiB)"
    return "it was modified (mtime) since the run started"
