"""Publish a dataset folder to the Hugging Face Hub as it is (``paraamr push``).

The folder written by the generator is already a Hub dataset repository: its ``README.md`` card,
``data/`` shards and ``failures/`` go up unchanged; hidden files and folders (the resume state
under ``.paraamr/``, temporary shards) are left out. The token comes from the usual places
(``HF_TOKEN``, ``huggingface-cli login``) and is never printed.

>>> IGNORED
['.*', '*/.*']
>>> check_folder("/nonexistent")
Traceback (most recent call last):
...
paraamr.errors.InputError: /nonexistent: no such folder
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paraamr.errors import InputError

#: ``upload_folder`` ignore patterns: hidden files and folders at any depth (resume state, temp files).
IGNORED = [".*", "*/.*"]


def check_folder(folder: str | Path) -> Path:
    """``folder`` as a Path, checked to look like a dataset folder (a card and ``data/`` shards)."""
    path = Path(folder)
    if not path.is_dir():
        raise InputError(f"{folder}: no such folder")
    if not (path / "README.md").is_file() or not any(path.glob("data/*/*.parquet")):
        raise InputError(
            f"{folder}: not a dataset folder (needs README.md and data/<config>/*.parquet; "
            "is the run finished?)"
        )
    return path


def push(
    folder: str | Path,
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    commit_message: str | None = None,
    token: str | None = None,
    endpoint: str | None = None,
) -> Any:
    """Create the dataset repo ``repo_id`` (if missing) and upload ``folder`` in one commit; returns
    huggingface_hub's ``CommitInfo``. ``revision`` names a branch (created when missing)."""
    from huggingface_hub import HfApi

    path = check_folder(folder)
    api = HfApi(endpoint=endpoint, token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    if revision is not None:
        api.create_branch(repo_id, repo_type="dataset", branch=revision, exist_ok=True)
    return api.upload_folder(
        folder_path=str(path),
        repo_id=repo_id,
        repo_type="dataset",
        revision=revision,
        ignore_patterns=IGNORED,
        commit_message=commit_message or f"Upload {path.name} with paraamr",
    )
