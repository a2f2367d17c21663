"""``paraamr <command>``: argparse front end.

Each module in :mod:`paraamr.commands` is one command: ``add_arguments(parser)`` and ``run(args)``
(the parsed namespace in, the exit status out), its help and description the first two paragraphs
of its docstring (:func:`command_texts`); a command with subcommands defines
``register(subparsers)``. Command modules import heavy libraries inside their functions, so
``paraamr --help`` stays instant. Commands raise
:class:`paraamr.errors.ParaAMRError` (or let any other error through): :func:`main` reports every
error as one line on stderr through :func:`paraamr.report.run_command`; ``--debug`` (anywhere on
the command line before ``--``) prints the traceback too. Ctrl-C, SIGTERM and SIGHUP end a
command with one line and their exit status (:mod:`paraamr.signals`).

>>> build_parser().parse_args(["--debug", "stats", "corpus"]).command
'stats'
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import pkgutil
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from paraamr import __version__, commands
from paraamr.network import with_hub_bounds
from paraamr.options import ArgumentParser
from paraamr.report import report, run_command, run_process
from paraamr.signals import handled

__all__ = ["build_parser", "entry", "main"]

#: Namespace attributes that hold a command's input paths (named in errors about file contents).
INPUT_OPTIONS = ("input", "path", "file", "dataset", "amr_input", "folder", "paraphrases", "records")


def build_parser() -> ArgumentParser:
    """The top-level parser with every command of :mod:`paraamr.commands` registered."""
    parser = ArgumentParser(
        prog="paraamr",
        description="Build, load, publish and measure ParaAMR-style paraphrase corpora.",
    )
    parser.add_argument("--version", action="version", version=f"paraamr {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="print the traceback of an error (also after the command)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            try:
                _register(subparsers, info.name, importlib.import_module(f"{commands.__name__}.{info.name}"))
            except Exception as err:  # one broken command must not take the others down
                _unavailable(subparsers, info.name, err)
    return parser


def command_texts(doc: str) -> tuple[str, str]:
    """``(help, description)`` of a command from its module's docstring: the first paragraph is
    ``USAGE: help.``, the second the description ``--help`` prints.

    >>> command_texts('``paraamr stats PATH``: Table 1 of a corpus.\\n\\nPrint the ``instances``.\\n\\nMore.')
    ('Table 1 of a corpus', 'Print the `instances`.')
    """
    paragraphs = [" ".join(p.split()) for p in inspect.cleandoc(doc).split("\n\n")]
    summary = paragraphs[0].split(": ", 1)[-1].removesuffix(".")
    return summary.replace("``", "`"), paragraphs[1].replace("``", "`")


def _register(subparsers: argparse._SubParsersAction, name: str, module: Any) -> None:
    """Add the command of ``module``: its own ``register(subparsers)`` (commands with subcommands),
    else a parser from its docstring (:func:`command_texts`), its ``add_arguments`` and ``run``."""
    if hasattr(module, "register"):
        module.register(subparsers)
        return
    summary, description = command_texts(module.__doc__)
    parser = subparsers.add_parser(name, help=summary, description=description)
    module.add_arguments(parser)
    parser.set_defaults(func=module.run)


def _unavailable(subparsers: argparse._SubParsersAction, name: str, err: Exception) -> None:
    """Register ``name`` as a command that reports ``err`` (why it could not be loaded) when run."""

    def fail(_args: argparse.Namespace) -> int:
        raise err

    if name not in subparsers.choices:
        subparsers.add_parser(name, help=f"(unavailable: {type(err).__name__})", add_help=False)
    subparsers.choices[name].set_defaults(func=fail, unavailable=True)


def _inputs(args: argparse.Namespace) -> list[Any]:
    found: list[Any] = []
    for name in INPUT_OPTIONS:
        value = getattr(args, name, None)
        found += value if isinstance(value, (list, tuple)) else [value]
    return [v for v in found if v not in (None, "", "-")]


def _command(args: argparse.Namespace) -> str:
    sub = getattr(args, f"{args.command}_command", None)
    return f"{args.command} {sub}" if isinstance(sub, str) else args.command


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``paraamr`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    end = argv.index("--") if "--" in argv else len(argv)
    debug = "--debug" in argv[:end]
    if debug:
        argv = [a for a in argv[:end] if a != "--debug"] + argv[end:]
    try:
        parser = build_parser()
    except Exception as err:  # a command module that does not import: one line too
        return report("", err, debug=debug)
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "unavailable", False):
        prog = f"paraamr {_command(args)}" if args.command else "paraamr"
        ArgumentParser(prog=prog).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    with handled(f"paraamr {_command(args)}"):
        return run_command(
            _command(args),
            with_hub_bounds(args.func),
            args,
            debug=debug,
            inputs=_inputs(args),
            secrets=[getattr(args, "token", None)],
        )


def entry() -> NoReturn:
    """The ``paraamr`` console script and ``python -m paraamr``: :func:`main`, then the process ends
    (at once after an error or a signal, when a thread may still be inside a model). ``--debug``
    reaches the command's worker processes too (link-grammar's side of an error)."""
    argv = sys.argv[1:]
    if "--debug" in argv[: argv.index("--") if "--" in argv else len(argv)]:
        os.environ["PARAAMR_DEBUG"] = "1"
    run_process(main, next((a for a in argv if not a.startswith("-")), ""))  # the command, as typed


if __name__ == "__main__":
    entry()
