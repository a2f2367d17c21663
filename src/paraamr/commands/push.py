"""``paraamr push REPO_ID DIR``: upload a dataset folder to the Hugging Face Hub.

Upload a dataset folder (as written by `paraamr generate` or `convert`) to the Hub as the dataset
repo REPO_ID (created when missing). Log in first with `hf auth login` (or set HF_TOKEN);
HF_ENDPOINT picks the Hub. Hidden files (the resume state) are not uploaded. The folder's
card is written again for REPO_ID first, so its snippets load the repo, not the folder (and put back
when the upload fails). Hub requests
give up after PARAAMR_HUB_TIMEOUT seconds without an answer (default 30; transfers are retried up to
5 times), so a Hub that stops answering ends the push with an error.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from paraamr.errors import UsageError
from paraamr.network import HELP as HUB_HELP

__all__ = ["add_arguments", "add_hub_options", "check_repo_id", "push_of", "push_with_options", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``paraamr push``."""
    parser.add_argument("repo_id", metavar="REPO_ID", help="org/name")
    parser.add_argument("folder", metavar="PATH", help="the dataset folder")
    _options(parser)
    parser.add_argument("--message", "--commit-message", dest="message", help="commit message")


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--private", action="store_true", help="create the repo private")
    parser.add_argument("--revision", help="branch to push to (created when missing)")
    parser.add_argument("--token", help="Hub token (default: HF_TOKEN or `hf auth login`'s); never printed")


def add_hub_options(parser: argparse.ArgumentParser) -> None:
    """``--push-to-hub REPO_ID`` with ``--private``, ``--revision`` and ``--token``."""
    parser.add_argument(
        "--push-to-hub",
        metavar="REPO_ID",
        help="upload the finished folder to this Hub dataset repo (the id, the token and --private are "
        f"checked first; {HUB_HELP})",
    )
    _options(parser)


def check_repo_id(repo_id: str | None, option: str = "--push-to-hub") -> None:
    """A usage error (exit 2) unless ``repo_id`` is None or a Hub repo id ``ORG/NAME``."""
    from paraamr.layout import check_name

    if repo_id is not None:
        try:
            check_name("repo id", repo_id)
        except ValueError as err:
            raise UsageError(f"{option} {err}") from None
        if "/" not in repo_id:
            raise UsageError(f"{option} {repo_id!r}: give ORG/NAME (your user name or an organization's)")


def push_of(args: argparse.Namespace):
    """The :class:`~paraamr.builder.summary.Push` that ``--push-to-hub`` asks for, or None."""
    from paraamr.builder.summary import Push

    check_repo_id(args.push_to_hub)
    if args.token is not None and not args.token.strip():  # --token "$UNSET": the request is refused
        raise UsageError("--token is empty (leave it out to use HF_TOKEN or `hf auth login`'s)")
    if args.push_to_hub:
        return Push(args.push_to_hub, private=args.private, revision=args.revision, token=args.token)
    if args.private or args.revision or args.token:
        raise UsageError("--private, --revision and --token go with --push-to-hub")
    return None


def push_with_options(
    folder: str | Path, repo_id: str, args: argparse.Namespace, *, written: bool = False
) -> int:
    """Upload ``folder`` as the options in ``args`` say; print where it went; return the exit status.
    ``written``: the command wrote the folder just now (a failed upload says how to upload it alone:
    the same command again would refuse the folder it wrote)."""
    from paraamr.builder.hub import push_folder
    from paraamr.errors import HubError

    try:
        url = push_folder(
            folder,
            repo_id,
            private=args.private,
            revision=args.revision,
            token=args.token,
            commit_message=getattr(args, "message", None),
        )
    except HubError as err:
        if not written:
            raise
        again = f"paraamr push {repo_id} {folder}" + f" --revision {args.revision}" * bool(args.revision)
        again += " --private" * bool(args.private)
        raise HubError(f"{err}; {folder} is written: upload it with `{again}`") from None
    print(f"pushed {folder} to {repo_id}: {url}")
    return 0


def run(args: argparse.Namespace) -> int:
    repo_id, folder = args.repo_id, args.folder
    if Path(repo_id).is_dir() and not Path(folder).is_dir():
        raise UsageError(f"REPO_ID comes first, as in `hf upload`: paraamr push {folder} {repo_id}")
    check_repo_id(repo_id, "REPO_ID")
    from paraamr.atomic import atomic_write
    from paraamr.builder.hub import check_folder
    from paraamr.card import card_for_repo
    from paraamr.errors import FolderLocked
    from paraamr.layout import CARD
    from paraamr.locks import folder_lock

    path = check_folder(folder)
    with folder_lock(path, command="push"):  # no run writes the folder meanwhile
        before = (path / CARD).read_bytes()
        if not card_for_repo(folder, repo_id, args.revision) and b"\nconfigs:" not in before:
            print(
                f"paraamr push: warning: {path / CARD} is not paraamr's card and lists no `configs:`: "
                "the Hub will read the records and pairs shards as one table, which does not load",
                file=sys.stderr,
            )
        written = (path / CARD).read_bytes()
    try:
        return push_with_options(folder, repo_id, args)
    except BaseException:  # not published: the folder's card again, unless a run holds or changed it
        with contextlib.suppress(FolderLocked), folder_lock(path, command="push"):
            if (path / CARD).read_bytes() == written:
                atomic_write(path / CARD, before)
        raise
