"""The dataset to augment: a local file or folder, a ``save_to_disk`` folder, or a Hub dataset.

:func:`load_splits` gives a ``datasets.DatasetDict``: a single file (CSV, TSV, JSON, JSON lines,
Parquet) becomes split ``train``; a folder goes through ``load_dataset`` (a Hub-style folder with
its card or data files) unless ``save_to_disk`` wrote it; any other name is a Hub id, loaded from
the local cache when offline. A failure raises :class:`~paraamr.errors.InputError` saying what to
fetch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from paraamr.errors import InputError, check_utf8, missing_local, refuse_pipes
from paraamr.layout import open_parquet
from paraamr.network import load_hub_dataset
from paraamr.report import reason

if TYPE_CHECKING:
    from datasets import DatasetDict

_BUILDERS = {".csv": "csv", ".tsv": "csv", ".json": "json", ".jsonl": "json", ".parquet": "parquet"}


def load_splits(spec: str, config: str | None = None) -> DatasetDict:
    """Every split of the dataset ``spec`` (path or Hub id), with ``config`` for Hub datasets; one
    that cannot be read raises :class:`InputError` naming it and the problem."""
    import datasets

    path = Path(spec)
    if path.is_file():
        builder = _BUILDERS.get(path.suffix.lower())
        if builder is None:
            raise InputError(f"{path}: unknown data file type (use {', '.join(sorted(_BUILDERS))})")
        size = path.stat().st_size
        if size == 0 or (size < 1 << 20 and not path.read_bytes().strip()):
            raise InputError(f"{path}: empty file, no rows to augment")
        if builder != "parquet":
            check_utf8(path)
        elif open_parquet(path).metadata.num_rows == 0:  # (datasets: "BatchSize must be greater than 0")
            raise InputError(f"{path}: no rows to augment")
        extra = {"delimiter": "\t"} if path.suffix.lower() == ".tsv" else {}
        return _local(path, lambda: datasets.load_dataset(builder, data_files={"train": str(path)}, **extra))
    if path.is_dir():
        if not any(path.iterdir()):
            raise InputError(f"{path}: empty folder, no data files to augment")
        if (path / "dataset_dict.json").is_file():
            return _local(path, lambda: datasets.load_from_disk(str(path)))
        if (path / "state.json").is_file():
            return _local(path, lambda: datasets.DatasetDict({"train": datasets.load_from_disk(str(path))}))
        return _local(path, lambda: datasets.load_dataset(str(path), config))
    refuse_pipes(path)
    problem = missing_local(spec)
    if problem:
        raise InputError(problem)
    return load_hub_dataset(spec, config)


def _local(path: Path, load: Callable[[], DatasetDict]) -> DatasetDict:
    """``load()``, with any failure to read the local ``path`` as an :class:`InputError`."""
    from datasets.utils import logging

    verbosity = logging.get_verbosity()
    logging.set_verbosity(logging.CRITICAL)  # datasets logs the error it then raises: say it once
    try:
        splits = load()
    except (InputError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as err:  # datasets and pyarrow raise many kinds; all mean "cannot read"
        empty = re.search(r'Instruction "(.+)" corresponds to no data', str(err))  # a split of no rows
        if empty:  # a file: a CSV header alone, a JSON []; a folder: datasets loads no split then
            split = "" if path.is_file() else f" in split {empty[1]!r} (remove its file to augment the rest)"
            raise InputError(f"{path}: no rows to augment{split}") from None
        raise InputError(f"{path}: cannot be read as a dataset: {reason(err)}") from err
    finally:
        logging.set_verbosity(verbosity)
    if not any(len(split) for split in splits.values()):
        raise InputError(f"{path}: no rows to augment")
    return splits
