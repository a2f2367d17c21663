"""``python -m paraamr``."""

from paraamr.cli import entry

entry()
