"""``paraamr stats PATH``: Table 1 statistics (+ perplexity quantiles, histograms) of a release file or
a dataset folder.

Print the number of instances (source sentences), the average number of paraphrases per source, the
average paraphrase length in tokens (whitespace-separated words) and perplexity quantiles of PATH: a
ParaAMR release file (JSON lines, zipped or not), our Parquet dataset folder or a folder of such
files. Writes nothing; with ``--plots DIR``, perplexity.png and paraphrases_per_source.png there."""

from __future__ import annotations

import argparse

from paraamr.options import add_plot_options, number
from paraamr.report import counted, json_text

__all__ = ["ARCHIVE_DEFAULTS", "add_archive_options", "add_arguments", "archive_limits", "run"]

#: The defaults of ``--max-unpacked``, ``--max-unpack-ratio`` and ``--max-line-bytes``.
ARCHIVE_DEFAULTS = {"max_unpacked": "64GB", "max_unpack_ratio": 100.0, "max_line_bytes": "32MiB"}


def add_archive_options(parser: argparse.ArgumentParser) -> None:
    """The limits on what reading gz/zip input may unpack (:class:`paraamr.sources.Limits`)."""
    g = parser.add_argument_group(
        "archive limits", "gz and zip input is unpacked as it streams, one archive level deep"
    )
    g.add_argument(
        "--max-unpacked",
        metavar="SIZE",
        default=ARCHIVE_DEFAULTS["max_unpacked"],
        help="refuse input that unpacks to more than this in all (default: %(default)s)",
    )
    g.add_argument(
        "--max-unpack-ratio",
        metavar="N",
        type=number(float, above=0),
        default=ARCHIVE_DEFAULTS["max_unpack_ratio"],
        help="refuse an archive that unpacks to more than N times its size, past 16 MiB: a "
        "decompression bomb (default: %(default)g; release JSON lines pack about 3 times)",
    )
    g.add_argument(
        "--max-line-bytes",
        metavar="SIZE",
        default=ARCHIVE_DEFAULTS["max_line_bytes"],
        help="a longer JSON line is invalid, read past without being held (default: %(default)s)",
    )


def archive_limits(args: argparse.Namespace):
    """The :class:`paraamr.sources.Limits` of the options; a bad value is a usage error (exit 2)."""
    from paraamr.errors import UsageError
    from paraamr.layout import parse_size
    from paraamr.sources import Limits

    sizes = {}
    for flag, value in (("--max-unpacked", args.max_unpacked), ("--max-line-bytes", args.max_line_bytes)):
        try:
            sizes[flag] = parse_size(value)
        except ValueError as err:
            raise UsageError(f"{flag}: {err}") from None
    return Limits(
        max_bytes=sizes["--max-unpacked"], max_ratio=args.max_unpack_ratio, max_line=sizes["--max-line-bytes"]
    )


def check_finished(path: str) -> None:
    """Refuse a run's folder whose records still wait in parts (unfinished, or killed)."""
    from pathlib import Path

    from paraamr.builder.folder import pending
    from paraamr.errors import InputError
    from paraamr.outputs import left_unfinished

    if Path(path).is_dir() and left_unfinished(path):
        raise InputError(f"{path}: what a killed convert or augment left (no card): run it again")
    if Path(path).is_dir() and pending(path):
        raise InputError(
            f"{path}: a run that is not finished (its records wait in parts): finish it, or run "
            f"`paraamr finalize {path}` for a run cut into shards"
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``paraamr stats``."""
    parser.add_argument(
        "path", metavar="PATH", help="release file (.json/.jsonl/.zip/.gz), Parquet file or folder"
    )
    parser.add_argument(
        "--max-perplexity",
        type=number(float, low=0),
        default=None,
        help="count only paraphrases with perplexity <= this (as the loader's max_perplexity)",
    )
    add_plot_options(parser)
    parser.add_argument("--json", action="store_true", help="print the statistics as JSON")
    parser.add_argument(
        "--skip-invalid", action="store_true", help="count malformed lines instead of failing"
    )
    add_archive_options(parser)


def run(args: argparse.Namespace) -> int:
    """Compute, print and plot."""
    import sys

    from paraamr.errors import UsageError
    from paraamr.stats import compute_stats, format_stats

    limits = archive_limits(args)  # a usage error (exit 2) before anything is read
    if args.overwrite and not args.plots:
        raise UsageError("--overwrite: only with --plots DIR (it replaces the PNGs there)")
    check_finished(args.path)
    stats = compute_stats(
        args.path,
        max_perplexity=args.max_perplexity,
        skip_invalid=args.skip_invalid,
        plot_dir=args.plots,
        overwrite=args.overwrite,
        limits=limits,
    )
    if args.json:
        print(json_text(stats, indent=2))
    else:
        print(format_stats(stats))
        print(f"\ntokens: {stats['tokens']}")
        for path in stats.get("plots", []):
            print(f"wrote {path}")
    if stats["skipped_lines"]:
        print(f"paraamr stats: skipped {counted(stats['skipped_lines'], 'invalid line')}", file=sys.stderr)
    return 0
