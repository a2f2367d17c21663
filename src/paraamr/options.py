"""Command-line parsing shared by ``generate.py`` and the ``paraamr`` commands: the parser with
one-line usage errors, and value types of options."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn

from paraamr.report import redact

__all__ = ["ArgumentParser", "optional_float", "positive"]


class ArgumentParser(argparse.ArgumentParser):
    """argparse with usage errors on ONE line: ``<prog>: <message> (see <prog> --help)``, exit 2.

    Subparsers inherit the class. ``paraamr`` (:mod:`paraamr.cli`) and ``generate.py``
    (:mod:`paraamr.generate`) both use it.

    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     try:
    ...         ArgumentParser(prog="paraamr demo").parse_args(["--nope"])
    ...     except SystemExit as stop:
    ...         print(stop.code)
    2
    >>> err.getvalue()
    'paraamr demo: unrecognized arguments: --nope (see paraamr demo --help)\\n'
    """

    def error(self, message: str) -> NoReturn:
        self.exit(2, redact(f"{self.prog}: {message} (see {self.prog} --help)") + "\n")


def positive(kind: type = int) -> Callable[[str], int | float]:
    """An argparse ``type``: a number of ``kind`` above zero, else argparse's one-line error naming
    the option.

    >>> positive()("3"), positive(float)("0.5")
    (3, 0.5)
    >>> positive()("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be above 0, got 0
    """

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
        return value

    return parse


def optional_float(text: str) -> float | None:
    """A number, or ``none``/``off`` for no limit (``--max-perplexity none``).

    >>> optional_float("120"), optional_float("none")
    (120.0, None)
    """
    if text.lower() in ("none", "off"):
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number or 'none'") from None
