"""``paraamr generate`` / ``paraamr evaluate`` in-process, as the shims (``generate.py``,
``python -m paraamr.generate``) run them: through the one entry point, :func:`paraamr.cli.main`."""

from __future__ import annotations

from collections.abc import Sequence

from paraamr.cli import main


def generate(argv: Sequence[str]) -> int:
    """``paraamr generate ARGV``; its exit status."""
    return main(["generate", *argv])


def evaluate(argv: Sequence[str]) -> int:
    """``paraamr evaluate ARGV``; its exit status."""
    return main(["evaluate", *argv])
