"""Publish a dataset folder to the Hugging Face Hub as it is (``paraamr push``, ``--push-to-hub``).

Hidden files are left out, a symbolic link out of the folder stops the push, the token is never
printed; a large folder goes up with ``upload_large_folder`` where huggingface_hub has it.

>>> IGNORED
('.*', '*/.*', '.*/**')
>>> check_folder("/nonexistent")
Traceback (most recent call last):
...
paraamr.errors.InputError: /nonexistent: no such folder
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from paraamr.errors import HubError, InputError, ParaAMRError, UsageError
from paraamr.layout import OWN_FILES
from paraamr.network import bound_hub_requests, network_problem
from paraamr.report import redact

__all__ = ["check_folder", "check_push", "push_folder"]

#: Ignore patterns: hidden files and folders at any depth (resume state, temporary files).
IGNORED = (".*", "*/.*", ".*/**")
#: The layout's files a push replaces whole: one the folder no longer has is deleted from the repo
#: (a re-cut into other shards, which the card's globs would load beside the new ones; an
#: ``evaluation.json`` or plot of an earlier run, which would describe another dataset).
REPLACED = (
    "data/*/*-?????-of-?????.parquet",
    "failures/failures-?????-of-?????.jsonl",
    *OWN_FILES,
    "plots/*.png",
)
#: Folders with more bytes than this (or more files than :data:`LARGE_FILES`) use upload_large_folder
#: where it exists.
LARGE_FOLDER = 5 * 10**9
LARGE_FILES = 100


def check_folder(folder: str | os.PathLike) -> Path:
    """``folder`` as a Path, checked to be a dataset folder that can be uploaded: a card and whole
    ``data/`` shard sets (:func:`~paraamr.layout.check_shards`), no link outside it (:func:`check_links`)."""
    from paraamr.layout import CARD, check_shards, list_shards

    path = Path(folder)
    if not path.is_dir():
        raise InputError(f"{folder}: {'not a folder' if path.exists() else 'no such folder'}")
    if not (path / CARD).is_file() or not (shards := list_shards(path)):
        raise InputError(
            f"{folder}: not a dataset folder (needs README.md and data/<config>/<split>-*-of-*.parquet; "
            "is the run finished?)"
        )
    check_shards(shards)
    check_links(path)
    return path


def check_links(folder: str | os.PathLike) -> None:
    """Refuse a folder with a symbolic link (hidden ones aside) that resolves outside it: the upload
    would send the target's content.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> (d / "notes.txt").symlink_to("/etc/hostname")
    >>> check_links(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: .../notes.txt: a symbolic link to /etc/hostname, outside the folder: ...
    """
    root = Path(folder).resolve()
    for top, dirs, files in os.walk(folder):  # links to folders are not followed
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in [*dirs, *files]:
            link = Path(top) / name
            if name.startswith(".") or not link.is_symlink():
                continue
            target = link.resolve()
            if not target.is_relative_to(root):
                raise InputError(
                    f"{link}: a symbolic link to {target}, outside the folder: refusing to upload "
                    "anything (replace the link by a copy, or remove it)"
                )


def check_push(push: Any, command: str = "paraamr") -> None:
    """Refuse the upload ``push`` (None: none) before any work when it cannot succeed: while
    huggingface_hub is offline, without a token, with a token the Hub rejects or that may only
    read, and with ``--private`` onto a public repo. A Hub that does not answer now only warns
    (as ``command``): the upload comes at the end (a compute node may have no network; ``paraamr
    push`` later)."""
    from huggingface_hub import HfApi, constants
    from huggingface_hub.errors import LocalTokenNotFoundError

    if push is None:
        return
    if constants.HF_HUB_OFFLINE:
        raise UsageError(
            "--push-to-hub: HF_HUB_OFFLINE is set, so nothing can be uploaded; unset it, or push the "
            "folder later with `paraamr push`"
        )
    bound_hub_requests()
    api = HfApi(token=push.token)
    where = f"--push-to-hub {push.repo_id}"
    login = "log in with `hf auth login`, set HF_TOKEN or pass --token"
    try:
        role = api.whoami(cache=True).get("auth", {}).get("accessToken", {}).get("role")
        public = push.private and _public(api, push.repo_id)
    except LocalTokenNotFoundError:
        raise HubError(f"{where}: no Hub token ({login})") from None
    except Exception as err:
        problem = redact(" ".join(network_problem(err).split()), secrets=[push.token])
        if getattr(getattr(err, "response", None), "status_code", None) == 401:
            raise HubError(f"{where}: the Hub rejects the token (401); {login}") from None
        if not _unanswered(err):  # an answer that is no: the upload at the end would fail alike
            raise HubError(f"{where}: {problem}") from None
        print(
            f"{command}: warning: {where}: the Hub could not be asked now ({problem}); "
            "the upload at the end may fail",
            file=sys.stderr,
        )
        return
    if role == "read":
        raise HubError(f"{where}: the token may only read; use a write token ({login})")
    if public:
        raise HubError(_PUBLIC.format(repo_id=push.repo_id))


def _unanswered(err: BaseException) -> bool:
    """Whether ``err`` says the Hub did not answer (no connection, a timeout, a busy or failing
    server), which may pass by the end of a run, rather than an answer or a request it cannot take.

    >>> _unanswered(TimeoutError()), _unanswered(ValueError("Illegal header value"))
    (True, False)
    """
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status is not None:
        return status == 429 or status >= 500
    chain = [e for e in (err, err.__cause__, err.__context__) if e is not None]
    names = {c.__name__ for e in chain for c in type(e).__mro__}  # (httpx's, without importing it)
    return bool(names & {"OSError", "TimeoutException", "NetworkError", "RemoteProtocolError"})


#: Why ``--private`` is refused for an existing public repo.
_PUBLIC = (
    "{repo_id}: exists and is public; --private does not change that (make it private on the Hub "
    "first, or push without --private)"
)


def push_folder(
    folder: str | os.PathLike,
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    token: str | None = None,
    commit_message: str | None = None,
) -> str:
    """Create the dataset repo ``repo_id`` (if missing) and upload ``folder`` to its branch ``revision``;
    returns the URL of the dataset or commit. Errors become :class:`HubError`, tokens redacted."""
    from huggingface_hub import HfApi

    path = check_folder(folder)
    bound_hub_requests()
    api = HfApi(token=token)
    files = [p for p in path.rglob("*") if p.is_file()]
    files = [p for p in files if not any(s.startswith(".") for s in p.relative_to(path).parts)]  # sent
    large = sum(p.stat().st_size for p in files) > LARGE_FOLDER or len(files) > LARGE_FILES
    try:
        if private and _public(api, repo_id):
            raise HubError(_PUBLIC.format(repo_id=repo_id))
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if revision is not None:
            api.create_branch(repo_id, repo_type="dataset", branch=revision, exist_ok=True)
        upload = {"repo_id": repo_id, "folder_path": str(path), "repo_type": "dataset", "revision": revision}
        upload["ignore_patterns"] = list(IGNORED)  # a new list: huggingface_hub extends the one it is given
        message = commit_message or f"Upload {path.name} with paraamr"
        if large and hasattr(api, "upload_large_folder"):
            api.upload_large_folder(**upload, private=private)
            _delete_replaced(api, path, repo_id, revision, message)
            return f"{api.endpoint}/datasets/{repo_id}"
        info: Any = api.upload_folder(**upload, commit_message=message, delete_patterns=list(REPLACED))
    except ParaAMRError:
        raise
    except Exception as err:  # huggingface_hub's HTTP and validation errors: their text, never a token
        message = redact(" ".join(network_problem(err).split()), secrets=[token])
        raise HubError(f"upload of {folder} to {repo_id} failed: {message}") from None
    return getattr(info, "commit_url", None) or str(info)


def _public(api: Any, repo_id: str) -> bool:
    """Whether the dataset repo ``repo_id`` exists and is public (one request)."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        return not api.repo_info(repo_id, repo_type="dataset").private
    except RepositoryNotFoundError:
        return False


def _delete_replaced(api: Any, path: Path, repo_id: str, revision: str | None, message: str) -> None:
    """Delete, in one commit, the repo's :data:`REPLACED` files that ``path`` no longer has."""
    from huggingface_hub import CommitOperationDelete
    from huggingface_hub.utils import filter_repo_objects

    remote = api.list_repo_files(repo_id, repo_type="dataset", revision=revision)
    gone = [f for f in filter_repo_objects(remote, allow_patterns=list(REPLACED)) if not (path / f).is_file()]
    if gone:
        operations = [CommitOperationDelete(path_in_repo=f) for f in gone]
        api.create_commit(repo_id, operations, commit_message=message, repo_type="dataset", revision=revision)
