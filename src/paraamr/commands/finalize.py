"""``paraamr finalize DIR``: finish a run cut into shards (generate.py --shard I/N): summary, shards,
card, push.

Finish a run whose shards ran independently (generate.py --shard I/N, a Slurm array): check every
task is done and its files match its counts, then write the summary, name the shards over the whole
run and write the card, under the folder's own lock; with --push-to-hub, upload the folder.

See :func:`paraamr.builder.shards.finalize_run`.
"""

from __future__ import annotations

import argparse

from paraamr.commands.push import add_hub_options
from paraamr.options import license_id, number

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``paraamr finalize``."""
    parser.add_argument("folder", metavar="DIR", help="the run's output folder (--output of every shard)")
    parser.add_argument(
        "--license", type=license_id, help="license of the card (default: the shards' --license)"
    )
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
    from paraamr.builder.hub import check_push
    from paraamr.builder.shards import finalize_run
    from paraamr.commands.push import push_of

    push = push_of(args)  # before any work: a finalize takes minutes to hours
    check_push(push, "paraamr finalize")
    finalize_run(
        args.folder, wait=args.wait, license=args.license, max_shard_size=args.max_shard_size, push=push
    )
    return 0
