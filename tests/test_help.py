"""Every option of every command says its default in ``--help`` (issue 30 item 4).

The walk covers ``paraamr`` and all its subcommands (nested ones too) and ``generate.py``. An
option needs its default in the help text when argparse holds one (anything but None, False or an
empty list) or holds ``SUPPRESS`` (``generate.py``'s settings options, whose defaults come from the
settings objects: the help must say them in words). Switches (``store_true`` and the like) are
off unless given, which argparse already says by their form.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator

import pytest

from paraamr.cli import build_parser
from paraamr.commands.generate import build_parser as generate_parser

_SWITCHES = (
    argparse._HelpAction,
    argparse._VersionAction,
    argparse._StoreConstAction,  # store_true / store_false are its subclasses
    argparse._CountAction,
    argparse.BooleanOptionalAction,
)


def _options(parser: argparse.ArgumentParser, prog: str) -> Iterator[tuple[str, argparse.Action]]:
    """``(command, action)`` for each option of ``parser`` and of its subcommands, recursively."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{prog} {name}")
        elif action.option_strings and not isinstance(action, _SWITCHES):
            yield prog, action


def _all_options() -> list[tuple[str, argparse.Action]]:
    return [*_options(build_parser(), "paraamr"), *_options(generate_parser(), "generate.py")]


def _needs_default(action: argparse.Action) -> bool:
    return action.default is argparse.SUPPRESS or action.default not in (None, False, [], ())


def test_every_option_with_a_default_says_it():
    missing = [
        f"{prog} {action.option_strings[-1]} (default {action.default!r}): {action.help!r}"
        for prog, action in _all_options()
        if _needs_default(action) and "default" not in (action.help or "")
    ]
    assert missing == []


def test_the_walk_reaches_every_command():
    """The walk is not vacuous: it sees the nested subcommands and the settings options."""
    options = _all_options()
    commands = {prog for prog, _ in options}
    assert {"paraamr models download", "paraamr quality train", "paraamr evaluate", "generate.py"} <= commands
    suppressed = [a for prog, a in options if prog == "generate.py" and a.default is argparse.SUPPRESS]
    assert len(suppressed) >= 10  # the settings options, whose defaults argparse does not know
    assert sum(_needs_default(a) for _, a in options) >= 60


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["paraamr", "generate", "--help"], "default: paraamr)"),  # a settings default, said in words
        (["paraamr", "evaluate", "--help"], "default: 0/1"),
    ],
)
def test_help_prints_the_defaults(args, expected):
    """What a person sees: the rendered help holds the default text (argparse's ``%`` expansion and
    line wrapping included)."""
    done = subprocess.run(
        [sys.executable, "-m", "paraamr", *args[1:]], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert expected in " ".join(done.stdout.split())
