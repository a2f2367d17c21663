"""THE dataset-folder layout (its files are written by :mod:`paraamr.atomic`).

A dataset folder is a Hub dataset repository::

    README.md                                          the card (:mod:`paraamr.card`)
    summary.json                                       the run's settings and counts
    evaluation.json                                    Table 2's row (``paraamr evaluate DIR --write-card``)
    plots/*.png                                        the statistics' histograms, shown in the card
    data/{config}/{split}-{i:05d}-of-{n:05d}.parquet   shards, named as ``datasets``' push_to_hub names them
    failures/failures-{i:05d}-of-{n:05d}.jsonl         rows that did not become records
    .paraamr/                                          state (hidden: never uploaded nor loaded)

Every file a command keeps under ``.paraamr/`` is named here (:data:`STATE_FILES`), so a reset
(:func:`remove_layout`, what ``--overwrite`` removes) knows them all and removes nothing else.

>>> shard_name("train", 0, 2), parse_shard_name("my-split-00001-of-00002.parquet")
('train-00000-of-00002.parquet', ('my-split', 1, 2))
>>> data_files("pairs", "train")
'data/pairs/train-?????-of-?????.parquet'
>>> writer_id(1, 2), writer_id(3, 4, shard=(5, 8))
('00001-of-00002', 's00005-of-00008.00003-of-00004')
"""

from __future__ import annotations

import contextlib
import glob as _glob
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from paraamr.errors import InputError

__all__ = [
    "CARD",
    "DATA",
    "EVALUATION",
    "FAILURES",
    "LOCKS",
    "MAX_ROW_GROUP_SIZE",
    "MAX_SHARD_SIZE",
    "NBYTES",
    "OWN_FILES",
    "PARTS",
    "PLOTS",
    "PLOT_FILES",
    "SPLIT_RULE",
    "STATE_DIR",
    "STATE_FILES",
    "SUMMARY",
    "arrow_bytes",
    "check_name",
    "check_shards",
    "data_files",
    "dataset_inside",
    "failure_files",
    "holds_dataset",
    "is_empty",
    "layout_info",
    "list_shards",
    "open_parquet",
    "parse_shard_name",
    "parse_size",
    "remove_layout",
    "remove_state",
    "shard_name",
    "state_path",
    "unchanged",
    "writer_id",
]

DATA, FAILURES, PLOTS = "data", "failures", "plots"
CARD, SUMMARY, EVALUATION = "README.md", "summary.json", "evaluation.json"
#: The statistics' histograms under ``plots/`` (``paraamr stats``, the card).
PLOT_FILES = ("perplexity.png", "paraphrases_per_source.png")
#: Files at the top of a folder that paraamr writes (besides data/, failures/, plots/ and the state).
OWN_FILES = (CARD, SUMMARY, EVALUATION)
#: State: hidden, so never uploaded nor loaded.
STATE_DIR = ".paraamr"
#: Every file and folder a command keeps under :data:`STATE_DIR`: name pattern -> what it is.
#: ``{writer}`` is a :func:`writer_id`. :func:`state_path` builds the paths.
STATE_FILES = {
    "settings.json": "generate: the run's record settings, shards and input identity (resume)",
    "input/": (
        "generate: the input cut into tasks, task-{k}.jsonl (deleted when the run is finalized), and the "
        "plan of the cut, plan.json"
    ),
    "generate/": "generate: task-{k}.json, a completed task's counts and parts (its completion marker)",
    "progress-{writer}.json": "generate: rows one process has handled so far (progress, not a commit)",
    "parts/{config}/{split}/{writer}-{k}.parquet": "generate (t{task}), convert, augment: shard parts",
    "parts/failures/{writer}-{k}.jsonl": "generate, convert, augment: committed failure parts",
    "final/": "finalize: shards being staged",
    "finalize.json": "finalize: the plan of renames (crash-safe finalize)",
    "pushed.json": "generate, finalize: the repos (and revisions) the finished folder was uploaded to",
    "writing.json": "convert, augment: the folder is new and being written (gone once its card is)",
    "augment/": "augment: the Arrow files of its datasets map (never beside the input)",
    "locks/": "every writer: the folder lock and one lock per writer, with their holders (paraamr.locks)",
    "evaluate/": "evaluate --state-dir DIR (or per run under --cache-dir): settings.json (input identity, "
    "options of the row), chunk-{k}.json (committed statistics of chunk k; resume, --merge)",
}
PARTS = f"{STATE_DIR}/parts"
LOCKS = f"{STATE_DIR}/locks"
#: push_to_hub's default shard size (uncompressed Arrow bytes) and the viewer's row-group bound.
MAX_SHARD_SIZE = "500MB"
MAX_ROW_GROUP_SIZE = "100MB"
#: The Parquet key-value metadata a shard's uncompressed Arrow bytes are kept in.
NBYTES = b"paraamr:nbytes"
_SHARD = re.compile(r"^(?P<split>.+)-(?P<index>\d{5,})-of-(?P<count>\d{5,})\.parquet$")
_FAILURE = re.compile(r"^failures-(?P<index>\d{5,})-of-(?P<count>\d{5,})\.jsonl$")


def writer_id(rank: int = 0, num_processes: int = 1, *, shard: tuple[int, int] = (0, 1)) -> str:
    """The name of process ``rank`` of ``num_processes`` (of shard ``i`` of ``n``) of a run; names
    its progress file and lock."""
    name = f"{rank:05d}-of-{num_processes:05d}"
    return name if shard == (0, 1) else f"s{shard[0]:05d}-of-{shard[1]:05d}.{name}"


def state_path(folder: str | os.PathLike, name: str, **fields: Any) -> Path:
    """The path of one state file of :data:`STATE_FILES` in ``folder``.

    >>> state_path("d", "progress-{writer}.json", writer="00000-of-00001").as_posix()
    'd/.paraamr/progress-00000-of-00001.json'
    """
    if name not in STATE_FILES:
        raise KeyError(f"{name!r} is not a state file of the layout (paraamr.layout.STATE_FILES)")
    return Path(folder) / STATE_DIR / name.format(**fields).rstrip("/")


def parse_size(size: int | str) -> int:
    """Bytes of ``500MB``, ``1GiB`` or an int, as ``datasets`` reads ``max_shard_size``.

    >>> parse_size("500MB"), parse_size(1024)
    (500000000, 1024)
    """
    from datasets.utils.py_utils import convert_file_size_to_int

    try:
        value = convert_file_size_to_int(size)
    except ValueError as err:
        raise ValueError(f"not a size: {size!r} (e.g. 500MB, 1GB, 2GiB)") from err
    if value < 1:
        raise ValueError(f"a size must be positive, got {size!r}")
    return value


#: datasets' rule for a split name (``datasets.naming._split_re``), matched whole.
SPLIT_RULE = r"\w+(\.\w+)*"
#: Characters datasets refuses in a config name (``datasets.naming.INVALID_WINDOWS_CHARACTERS_IN_PATH``).
CONFIG_BAD = "<>:/\\|?*"


def check_name(kind: str, name: str) -> str:
    """``name`` when it is a valid ``split`` name (letters, digits and ``_``, in parts joined by
    ``.``), ``config`` name (a file name: not empty, no leading ``.``, no control character nor one
    of :data:`CONFIG_BAD`) or Hub ``repo id`` (``validate_repo_id``); else ValueError, one line
    naming the rule.

    >>> check_name("split", "train"), check_name("config", "pairs")
    ('train', 'pairs')
    >>> check_name("split", "../x")
    Traceback (most recent call last):
    ...
    ValueError: split name '../x' breaks datasets' rule: letters, digits and _, in parts joined by '.'
    >>> check_name("split", "train\\n")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: split name 'train\\n' breaks datasets' rule: ...
    """
    if not isinstance(name, str):
        raise ValueError(f"{kind} name {name!r} is not a string")
    if kind == "split":
        if not re.fullmatch(SPLIT_RULE, name):
            raise ValueError(
                f"{kind} name {name!r} breaks datasets' rule: letters, digits and _, in parts joined by '.'"
            )
    elif kind == "repo id":
        from huggingface_hub.errors import HFValidationError
        from huggingface_hub.utils import validate_repo_id

        try:
            validate_repo_id(name)
        except HFValidationError as err:
            why = str(err).removesuffix(" Use `repo_type` argument if needed.")  # it names no option here
            raise ValueError(f"{name!r}: not a repo id (org/name): {why}") from None
    elif not name or name.startswith(".") or any(c in CONFIG_BAD or not c.isprintable() for c in name):
        raise ValueError(
            f"{kind} name {name!r} cannot name a folder: empty, a leading '.', a control "
            f"character or one of datasets' bad characters {CONFIG_BAD}"
        )
    return name


def shard_name(split: str, index: int, count: int) -> str:
    """The file name of shard ``index`` of ``count`` of ``split`` (push_to_hub's)."""
    return f"{split}-{index:05d}-of-{count:05d}.parquet"


def parse_shard_name(name: str) -> tuple[str, int, int] | None:
    """``(split, index, count)`` of a shard file name, or None; a ``-`` in the split is kept."""
    m = _SHARD.match(name)
    return (m["split"], int(m["index"]), int(m["count"])) if m else None


def data_files(config: str, split: str) -> str:
    """The card's ``data_files`` pattern of one (config, split): matches its shards and no others."""
    return f"{DATA}/{config}/{_glob.escape(split)}-?????-of-?????.parquet"


def list_shards(folder: str | os.PathLike, config: str | None = None) -> dict[str, dict[str, list[Path]]]:
    """``{config: {split: [shard paths in order]}}`` of a folder's final shards (one config or all)."""
    root = Path(folder) / DATA
    out: dict[str, dict[str, list[tuple[int, Path]]]] = {}
    configs = [root / config] if config is not None else sorted(p for p in root.glob("*") if p.is_dir())
    for cdir in configs:
        for path in sorted(cdir.glob("*.parquet")):
            parsed = parse_shard_name(path.name)
            if parsed:
                out.setdefault(cdir.name, {}).setdefault(parsed[0], []).append((parsed[1], path))
    return {c: {s: [p for _, p in sorted(v)] for s, v in splits.items()} for c, splits in out.items()}


def check_shards(shards: dict[str, dict[str, list[Path]]]) -> None:
    """InputError unless each split of ``shards`` (:func:`list_shards`) is one whole cut, ``0..n-1``
    of one ``n``: a shard deleted, or the shards of two cuts side by side, would lose or repeat records.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); (d / DATA / "default").mkdir(parents=True)
    >>> for name in ("train-00000-of-00002.parquet", "train-00000-of-00001.parquet"):
    ...     _ = (d / DATA / "default" / name).write_bytes(b"")
    >>> check_shards(list_shards(d))
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: .../default: split 'train' has shards of 2 cuts (into 1 and 2 shards), ...
    """
    for splits in shards.values():
        for split, paths in splits.items():
            parsed = [parse_shard_name(p.name) for p in paths]  # (split, index, count) each
            counts = sorted({count for _, _, count in parsed})
            where = f"{paths[0].parent}: split {split!r}"
            if len(counts) > 1:
                cuts = " and ".join(map(str, counts))
                raise InputError(
                    f"{where} has shards of {len(counts)} cuts (into {cuts} shards), whose records would "
                    "be read twice: keep one cut"
                )
            if missing := sorted(set(range(counts[0])) - {index for _, index, _ in parsed}):
                first = f"{split}-{missing[0]:05d}-of-{counts[0]:05d}.parquet"
                raise InputError(
                    f"{where} lacks {len(missing)} of its {counts[0]} shards ({first} first): its records "
                    "would be missing"
                )


def dataset_inside(root: Path, files: Sequence[str | os.PathLike]) -> Path | None:
    """A dataset folder below ``root`` that holds some of ``files`` (as ``data/...``), or None."""
    for name in files:
        parts = Path(name).relative_to(root).parts
        for k in range(1, len(parts) - 1):
            if parts[k] == DATA and list_shards(folder := root.joinpath(*parts[:k])):
                return folder
    return None


def failure_files(folder: str | os.PathLike) -> list[Path]:
    """The folder's failure files, in order."""
    return sorted(p for p in (Path(folder) / FAILURES).glob("*.jsonl") if _FAILURE.match(p.name))


def holds_dataset(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds a dataset of this layout or a run writing one: shards, failure
    files, a summary, or state other than locks (a README.md alone is no dataset). ``--overwrite``
    replaces only a folder for which this is true (``generate`` asks more: a run of its own).

    >>> import tempfile
    >>> from paraamr.atomic import atomic_write
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = atomic_write(d / CARD, "# my notes"); holds_dataset(d)
    False
    >>> _ = atomic_write(d / DATA / "default" / shard_name("train", 0, 1), b"PAR1"); holds_dataset(d)
    True
    """
    root = Path(folder)
    found = list_shards(root) or failure_files(root) or (root / SUMMARY).is_file()
    return bool(found or _state_entries(root))


def is_empty(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds nothing but the locks under :data:`STATE_DIR` (a writer that took
    the folder's lock on a new folder made those).

    >>> import tempfile
    >>> from paraamr.atomic import atomic_write
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = atomic_write(d / LOCKS / "folder.lock", ""); is_empty(d)
    True
    """
    root, state = Path(folder), Path(folder) / STATE_DIR
    if any(entry != state for entry in root.iterdir()):
        return False
    if not state.exists() and not state.is_symlink():
        return True
    return state.is_dir() and not state.is_symlink() and not _state_entries(root)


def remove_layout(folder: str | os.PathLike, *, state: bool = True, card: bool = True) -> int:
    """Delete every file of this layout in ``folder`` (card, summary, Table-2 row, plots paraamr
    wrote, shards, failure files, the state) and nothing else; return how many. The locks stay (a
    lock file removed while held would stop locking); ``state=False`` keeps the state too,
    ``card=False`` the card (which the caller replaces next: never a folder without one).

    >>> import tempfile
    >>> from paraamr.atomic import atomic_write
    >>> d = Path(tempfile.mkdtemp())
    >>> names = ("README.md", "evaluation.json", "notes.txt", ".paraamr/settings.json", ".paraamr/locks/x")
    >>> for name in names:
    ...     _ = atomic_write(d / name, "x")
    >>> remove_layout(d), sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file())
    (3, ['.paraamr/locks/x', 'notes.txt'])
    """
    root = Path(folder)
    shards = [p for splits in list_shards(root).values() for paths in splits.values() for p in paths]
    own = [root / name for name in OWN_FILES if card or name != CARD] + [root / PLOTS / n for n in PLOT_FILES]
    removed = 0
    for path in [*own, *shards, *failure_files(root)]:
        if path.is_file() or path.is_symlink():
            path.unlink()
            removed += 1
    removed += remove_state(root) if state else 0
    for sub in (DATA, FAILURES, PLOTS):  # folders this layout emptied, deepest first
        top = root / sub
        if top.is_dir() and not top.is_symlink():
            for d in [*sorted(top.rglob("*"), reverse=True), top]:
                if d.is_dir() and not d.is_symlink() and not any(d.iterdir()):
                    d.rmdir()
    return removed


def remove_state(folder: str | os.PathLike) -> int:
    """Delete the state under ``folder/.paraamr/`` but the locks; return how many files were deleted."""
    removed = 0
    for entry in _state_entries(Path(folder)):
        if entry.is_dir() and not entry.is_symlink():
            removed += sum(1 for p in entry.rglob("*") if not p.is_dir())
            shutil.rmtree(entry)
        else:
            entry.unlink()
            removed += 1
    return removed


def _state_entries(root: Path) -> list[Path]:
    """The entries of ``root``'s state folder but the locks, in order (none unless a real folder)."""
    state = root / STATE_DIR
    if not state.is_dir() or state.is_symlink():
        return []
    return sorted(entry for entry in state.iterdir() if entry.name != Path(LOCKS).name)


def arrow_bytes(meta) -> int:
    """Uncompressed Arrow bytes of a shard (recorded by the writer; Parquet's own count otherwise)."""
    recorded = (meta.metadata or {}).get(NBYTES)
    if recorded is not None:
        return int(recorded)
    return sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))


def open_parquet(path: str | os.PathLike):
    """``pyarrow.parquet.ParquetFile(path)``; InputError naming ``path`` for a file that is not one.

    >>> import tempfile
    >>> open_parquet(Path(tempfile.mkdtemp(), "x.parquet"))
    Traceback (most recent call last):
    paraamr.errors.InputError: ...x.parquet: not a readable Parquet file (...)
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as err:
        raise InputError(f"{path}: not a readable Parquet file ({err})") from err


def layout_info(folder: str | os.PathLike) -> dict[str, Any]:
    """Rows and bytes of every (config, split) of ``folder`` from the shards' Parquet metadata:
    ``{config: {split: {"num_examples", "num_bytes" (uncompressed), "download_size" (files)}}}``."""
    out: dict[str, Any] = {}
    for config, splits in list_shards(folder).items():
        for split, paths in splits.items():
            metas = [open_parquet(path).metadata for path in paths]
            out.setdefault(config, {})[split] = {
                "num_examples": sum(meta.num_rows for meta in metas),
                "num_bytes": sum(arrow_bytes(meta) for meta in metas),
                "download_size": sum(path.stat().st_size for path in paths),
            }
    return out


def _shards_now(root: Path) -> dict[str, tuple[int, int, int]] | None:
    """``{shard: (inode, mtime_ns, size)}`` of a dataset folder's shards; None for anything else."""
    if not root.is_dir():
        return None
    shards = [p for splits in list_shards(root).values() for ps in splits.values() for p in ps]
    out = {}
    for p in shards:
        with contextlib.suppress(FileNotFoundError):  # (gone since the listing: a change too)
            st = p.stat()
            out[str(p)] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return out or None


@contextlib.contextmanager
def unchanged(path: str | os.PathLike) -> Iterator[None]:
    """Read the dataset folder ``path`` within the block: on leaving it, InputError when its shards
    were replaced meanwhile (a run finalized there, ``generate --overwrite``): records of two runs,
    or a shard gone, would be read as one dataset. Nothing is checked for a file or another folder.

    >>> import tempfile
    >>> with unchanged(tempfile.mkdtemp()):
    ...     pass
    """
    root = Path(path)
    before = _shards_now(root)
    replaced = InputError(
        f"{root}: its dataset was replaced while it was read (a run finalized there); run the command again"
    )
    try:
        yield
    except FileNotFoundError:
        if before is not None and _shards_now(root) != before:
            raise replaced from None
        raise
    if before is not None and _shards_now(root) != before:
        raise replaced
