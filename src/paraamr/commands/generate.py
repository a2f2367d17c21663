"""``paraamr generate``: build a ParaAMR-style corpus folder from text or AMR graphs.

Build a ParaAMR-style corpus folder (a Hub dataset repo) from text or AMR graphs. For several
processes or GPUs: accelerate launch -m paraamr.generate ... (same options)."""

from __future__ import annotations

from paraamr.generate import add_arguments, run  # the same options and run as ``python -m paraamr.generate``

__all__ = ["add_arguments", "run"]
