"""Command-line parsing shared by ``generate.py`` and the ``paraamr`` commands: the parser with
one-line usage errors, and value types of options."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from typing import NoReturn

from paraamr.report import redact

__all__ = ["ArgumentParser", "optional_float", "positive", "shard_spec"]


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


def shard_spec(text: str, environ: Mapping[str, str] | None = None) -> tuple[int, int]:
    """An argparse ``type`` for ``--shard``: ``I/N`` (shard I of N, counted from 0) as ``(I, N)``, or
    ``slurm``: the task of a Slurm job array, from ``SLURM_ARRAY_TASK_ID`` and
    ``SLURM_ARRAY_TASK_COUNT`` (else ``_MIN``/``_MAX``; ``_STEP`` when the array has one), so
    ``--array=0-7`` or ``--array=1-8`` make tasks 0/8 .. 7/8.

    >>> shard_spec("2/8"), shard_spec("slurm", {"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "1",
    ...                                          "SLURM_ARRAY_TASK_MAX": "8"})
    ((2, 8), (4, 8))
    >>> shard_spec("8/8")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: shard 8 of 8 does not exist: shards count from 0 (0/8 .. 7/8)
    """
    env = os.environ if environ is None else environ
    if text == "slurm":
        task = env.get("SLURM_ARRAY_TASK_ID")
        if task is None:
            raise argparse.ArgumentTypeError("slurm: SLURM_ARRAY_TASK_ID is not set (not a Slurm array task)")
        try:
            first = int(env.get("SLURM_ARRAY_TASK_MIN", 0))
            step = int(env.get("SLURM_ARRAY_TASK_STEP", 1))
            count = env.get("SLURM_ARRAY_TASK_COUNT")
            n = int(count) if count else (int(env["SLURM_ARRAY_TASK_MAX"]) - first) // step + 1
            index, off = divmod(int(task) - first, step)
        except (KeyError, ValueError) as err:
            raise argparse.ArgumentTypeError(f"slurm: cannot read the array's size ({err})") from None
        if off or not 0 <= index < n:
            raise argparse.ArgumentTypeError(
                f"slurm: task {task} is not one of {n} evenly spaced tasks from {first}"
            )
        return index, n
    i, slash, n = text.partition("/")
    if not slash or not i.isdigit() or not n.isdigit():
        raise argparse.ArgumentTypeError(f"expected I/N (e.g. 0/8) or 'slurm', got {text!r}")
    if int(n) < 1:
        raise argparse.ArgumentTypeError(f"a run has at least 1 shard, got {text!r}")
    if int(i) >= int(n):
        raise argparse.ArgumentTypeError(
            f"shard {i} of {n} does not exist: shards count from 0 (0/{n} .. {int(n) - 1}/{n})"
        )
    return int(i), int(n)
