"""``paraamr push DIR REPO_ID``: upload a dataset folder to the Hugging Face Hub (resume state left out)."""

from __future__ import annotations

import argparse
import sys


def register(subparsers) -> None:
    """Add ``push`` to the ``paraamr`` command line."""
    parser = subparsers.add_parser(
        "push",
        help="upload a dataset folder to the Hugging Face Hub",
        description="Upload a dataset folder (as written by `paraamr generate`) to the Hub as a dataset "
        "repo. The token comes from HF_TOKEN or `huggingface-cli login`; HF_ENDPOINT picks the Hub.",
    )
    parser.add_argument("folder", metavar="DIR")
    parser.add_argument("repo_id", metavar="REPO_ID", help="org/name")
    parser.add_argument("--private", action="store_true", help="create the repo private")
    parser.add_argument("--revision", help="branch to push to (created when missing)")
    parser.add_argument("--message", help="commit message")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from paraamr.builder.hub import push
    from paraamr.errors import ParaAMRError

    try:
        info = push(
            args.folder,
            args.repo_id,
            private=args.private,
            revision=args.revision,
            commit_message=args.message,
        )
    except ParaAMRError as err:
        print(f"paraamr push: {err}", file=sys.stderr)
        return 2
    except Exception as err:  # huggingface_hub's HTTP errors: the message, never the token
        print(
            f"paraamr push: upload of {args.folder} to {args.repo_id} failed: {type(err).__name__}: {err}",
            file=sys.stderr,
        )
        return 1
    print(f"pushed {args.folder} to {args.repo_id}: commit {info.oid} ({info.commit_url})")
    return 0
