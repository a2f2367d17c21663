"""``paraamr generate``: the corpus generator (the same options as ``accelerate launch generate.py``)."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    """Add ``generate`` to the ``paraamr`` command line."""
    from paraamr.generate import add_arguments

    parser = subparsers.add_parser(
        "generate",
        help="build a ParaAMR-style corpus folder from text or AMR graphs",
        description="Build a ParaAMR-style corpus folder (a Hub dataset repo) from text or AMR graphs. "
        "For several processes or GPUs: accelerate launch -m paraamr.generate ... (same options).",
    )
    add_arguments(parser)
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from paraamr.generate import run

    return run(args)
