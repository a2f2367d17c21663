"""``paraamr evaluate PATH``: the Table-2 row (semantic similarity, 1-BLEU, 1-∩/∪, TED-3, TED-F), the
same options as ``accelerate launch -m paraamr.evaluate`` (:mod:`paraamr.evaluate`)."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    """Add the ``evaluate`` command."""
    from paraamr.evaluate import add_arguments

    p = subparsers.add_parser(
        "evaluate",
        help="Table 2's row (similarity, 1-BLEU, 1-∩/∪, TED-3, TED-F) of a corpus",
        description="Print semantic similarity (embedding cosine ×100), 1-BLEU, 1-∩/∪ (×100), TED-3 and "
        "TED-F over the (source, paraphrase) pairs of PATH: a ParaAMR release file (JSON lines, zipped "
        "or not), our dataset folder, or a two-column file (.tsv/.txt tab-separated, .csv: source, "
        "paraphrase). Writes one PNG histogram per measure. For several processes or nodes: "
        "accelerate launch -m paraamr.evaluate ... (same options); for independent jobs (Slurm "
        "arrays): --shard I/N, then --merge.",
    )
    add_arguments(p)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from paraamr.evaluate import run

    return run(args)
