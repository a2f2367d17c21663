"""The dataset to augment: a local file or folder, a ``save_to_disk`` folder, or a Hub dataset.

:func:`load_splits` gives a ``datasets.DatasetDict``: a single file (CSV, TSV, JSON, JSON lines,
Parquet) becomes split ``train``; a folder goes through ``load_dataset`` (a Hub-style folder with
its card or data files) unless ``save_to_disk`` wrote it; any other name is a Hub id, loaded from
the local cache when offline. A failure raises :class:`~paraamr.errors.InputError` saying what to
fetch.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from paraamr.errors import InputError

if TYPE_CHECKING:
    from datasets import DatasetDict

_BUILDERS = {".csv": "csv", ".tsv": "csv", ".json": "json", ".jsonl": "json", ".parquet": "parquet"}


def load_splits(spec: str, config: str | None = None) -> DatasetDict:
    """Every split of the dataset ``spec`` (path or Hub id), with ``config`` for Hub datasets."""
    import datasets

    path = Path(spec)
    if path.is_file():
        builder = _BUILDERS.get(path.suffix.lower())
        if builder is None:
            raise InputError(f"{path}: unknown data file type (use {', '.join(sorted(_BUILDERS))})")
        extra = {"delimiter": "\t"} if path.suffix.lower() == ".tsv" else {}
        return datasets.load_dataset(builder, data_files={"train": str(path)}, **extra)
    if path.is_dir():
        if (path / "dataset_dict.json").is_file():
            return datasets.load_from_disk(str(path))
        if (path / "state.json").is_file():
            return datasets.DatasetDict({"train": datasets.load_from_disk(str(path))})
        return datasets.load_dataset(str(path), config)
    try:
        return datasets.load_dataset(spec, config)
    except (ConnectionError, FileNotFoundError, ValueError, datasets.exceptions.DatasetNotFoundError) as err:
        raise InputError(
            f"dataset {spec!r} is neither a local file or folder nor in the Hugging Face cache ({err}); "
            f"fetch it first with `huggingface-cli download --repo-type dataset {spec}` on a machine "
            "with network access, or pass a local path"
        ) from err
