"""``paraamr <command>``: argparse front end.

Each module in :mod:`paraamr.commands` defines ``register(subparsers)``, which adds its subparser
and sets ``func`` (called with the parsed namespace, returning the exit status). Command modules
import heavy libraries inside their functions, so ``paraamr --help`` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from paraamr import __version__, commands


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every command of :mod:`paraamr.commands` registered."""
    parser = argparse.ArgumentParser(
        prog="paraamr",
        description="Build, load, publish and measure ParaAMR-style paraphrase corpora.",
    )
    parser.add_argument("--version", action="version", version=f"paraamr {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{commands.__name__}.{info.name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``paraamr`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
