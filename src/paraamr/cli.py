"""``paraamr <command>``: argparse front end.

Each module in :mod:`paraamr.commands` is one command: ``add_arguments(parser)`` and ``run(args)``,
its help and description from its docstring (:func:`command_texts`), or ``register(subparsers)``
for subcommands. Errors are one line on stderr (:func:`paraamr.report.run_command`); ``--debug``
before ``--`` prints the traceback too.

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
from paraamr.network import bound_hub_requests
from paraamr.options import ArgumentParser, named_as_options
from paraamr.progress import add_quiet_option, quieted, silence_library_bars
from paraamr.report import report, run_command, run_process
from paraamr.signals import handled

__all__ = ["build_parser", "entry", "main"]

#: Namespace attributes that hold a command's input paths (named in errors about file contents).
INPUT_OPTIONS = ("input", "path", "file", "dataset", "amr_input", "folder", "paraphrases", "records")
#: Those that hold where it writes (named in a full disk's errors that name no file).
OUTPUT_OPTIONS = ("output", "state_dir", "plots", "cache_dir", "folder", "dir")


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
    parser.add_argument(
        "-q", "--quiet", dest="quiet_all", action="store_true", help="errors only: the command's -q"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            try:
                _register(subparsers, info.name, importlib.import_module(f"{commands.__name__}.{info.name}"))
            except Exception as err:  # one broken command must not take the others down
                _unavailable(subparsers, info.name, err)
    _add_quiet(subparsers)
    return parser


#: Commands whose standard output is their result: ``-q`` keeps it (and silences the rest).
RESULT_COMMANDS = frozenset(
    {"stats", "evaluate", "env", "refocus", "quality score", "models list", "models path", "models download"}
)


def _add_quiet(subparsers: argparse._SubParsersAction) -> None:
    """``-q/--quiet`` on every command and subcommand that has no ``-q`` of its own."""
    for parser in subparsers.choices.values():
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        for action in nested:
            _add_quiet(action)
        if nested or "-q" in parser._option_string_actions:
            continue
        if "--quiet" in parser._option_string_actions:  # the command's own --quiet: -q names it too
            parser.add_argument("-q", dest="quiet", action="store_true", help=argparse.SUPPRESS)
        else:
            add_quiet_option(parser)


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


def _given(args: argparse.Namespace, names: Sequence[str]) -> list[Any]:
    found: list[Any] = []
    for name in names:
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
    args.quiet = getattr(args, "quiet", False) or args.quiet_all  # `paraamr -q X` = `paraamr X -q`
    args.argv = ["paraamr", *argv]  # the command as a user runs it again (a shard's, for finalize)
    command = _command(args)
    if command != "push":  # (push keeps huggingface_hub's upload display)
        silence_library_bars()
    with handled(f"paraamr {command}"), named_as_options():
        return run_command(
            command,
            _quietly,
            args,
            debug=debug,
            inputs=_given(args, INPUT_OPTIONS),
            outputs=_given(args, OUTPUT_OPTIONS),
            secrets=[getattr(args, "token", None)],
        )


def _quietly(args: argparse.Namespace) -> int | None:
    """The command, its Hub requests bounded and under ``-q`` quieted (:func:`paraamr.progress.quieted`);
    its errors are reported outside, on the real stderr."""
    bound_hub_requests()
    with quieted(args, keep_stdout=_command(args) in RESULT_COMMANDS):
        return args.func(args)


def entry(command: str | None = None) -> NoReturn:
    """The ``paraamr`` console script and ``python -m paraamr`` (and, with ``command``, the shims
    ``generate.py``, ``python -m paraamr.generate`` and ``python -m paraamr.evaluate``, each
    ``paraamr COMMAND``): :func:`main`, then the process ends (at once after an error or a signal,
    when a thread may still be inside a model). ``--debug`` reaches the command's worker processes
    too (link-grammar's side of an error)."""
    argv = [command, *sys.argv[1:]] if command else sys.argv[1:]
    if "--debug" in argv[: argv.index("--") if "--" in argv else len(argv)]:
        os.environ["PARAAMR_DEBUG"] = "1"
    run_process(lambda: main(argv), next((a for a in argv if not a.startswith("-")), ""))  # as typed


if __name__ == "__main__":
    entry()
