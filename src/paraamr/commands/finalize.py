"""``paraamr finalize DIR``: finish a run cut into shards (generate.py --shard I/N): summary, shards,
card, push.

Finish a run whose shards ran independently (generate.py --shard I/N, a Slurm array): check every
task is done and its files match its counts, then write the summary, name the shards over the whole
run and write the card, under the folder's own lock; with --push-to-hub, upload the folder.

A task that is not done (never run, running, cut short, or whose files do not match its counts) is
named, and the command of each shard to run again is printed; nothing is written. Otherwise, under
the folder's own lock, ``summary.json`` sums the tasks' counts, the shards are named
``{split}-{i:05d}-of-{n:05d}`` over the whole run and the card is written; ``--push-to-hub`` then
uploads the folder (resumable). Idempotent: a second call writes the same files. See
:func:`paraamr.builder.shards.finalize_run`.
"""

from __future__ import annotations

import argparse

from paraamr.commands.push import add_hub_options
from paraamr.options import number

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``paraamr finalize``."""
    parser.add_argument("folder", metavar="DIR", help="the run's output folder (--output of every shard)")
    parser.add_argument("--license", help="license of the card (default: the shards' --license)")
    parser.add_argument(
        "--max-shard-size", metavar="SIZE", help="size of the finished Parquet shards (default: the shards')"
    )
    parser.add_argument(
        "--wait",
        type=number(float, low=0),
        default=0.0,
        metavar="SECONDS",
        help="wait this long for the folder's lock (a shard letting go, another finalize) (default: 0)",
    )
    add_hub_options(parser)


def run(args: argparse.Namespace) -> int:
    from paraamr.builder.shards import finalize_run
    from paraamr.builder.summary import Push
    from paraamr.commands.push import check_repo_id
    from paraamr.errors import UsageError

    check_repo_id(args.push_to_hub)  # before any work: a finalize takes minutes to hours
    push = None
    if args.push_to_hub:
        push = Push(args.push_to_hub, private=args.private, revision=args.revision, token=args.token)
    elif args.private or args.revision or args.token:
        raise UsageError("--private, --revision and --token go with --push-to-hub")
    finalize_run(
        args.folder, wait=args.wait, license=args.license, max_shard_size=args.max_shard_size, push=push
    )
    return 0
