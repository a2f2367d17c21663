"""``paraamr stats PATH``: Table 1's columns, perplexity quantiles and PNG histograms of a corpus."""

from __future__ import annotations

import argparse
import json


def register(subparsers) -> None:
    """Add the ``stats`` command."""
    p = subparsers.add_parser(
        "stats",
        help="Table 1 statistics (+ perplexity quantiles, histograms) of a release file or a dataset folder",
        description="Print the number of instances (source sentences), the average number of paraphrases "
        "per source, the average paraphrase length in tokens (whitespace-separated words) and perplexity "
        "quantiles of PATH: a ParaAMR release file (JSON lines, zipped or not), our Parquet dataset "
        "folder or a folder of such files. Writes perplexity.png and paraphrases_per_source.png.",
    )
    p.add_argument(
        "path", metavar="PATH", help="release file (.json/.jsonl/.zip/.gz), Parquet file or folder"
    )
    p.add_argument(
        "--max-perplexity",
        type=float,
        default=None,
        help="count only paraphrases with perplexity <= this (as the loader's max_perplexity)",
    )
    p.add_argument(
        "--plots",
        metavar="DIR",
        default="paraamr-stats",
        help="folder for the PNG histograms (default: %(default)s)",
    )
    p.add_argument("--no-plots", action="store_true", help="write no histograms")
    p.add_argument("--overwrite", action="store_true", help="replace PNGs of the same names in --plots")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.add_argument("--skip-invalid", action="store_true", help="count malformed lines instead of failing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compute, print and plot."""
    import sys

    from paraamr.errors import ParaAMRError
    from paraamr.stats import compute_stats, format_stats

    try:
        stats = compute_stats(
            args.path,
            max_perplexity=args.max_perplexity,
            skip_invalid=args.skip_invalid,
            plot_dir=None if args.no_plots else args.plots,
            overwrite=args.overwrite,
        )
    except ParaAMRError as err:
        print(f"paraamr stats: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        print(format_stats(stats))
        print(f"\ntokens: {stats['tokens']}")
        for path in stats.get("plots", []):
            print(f"wrote {path}")
    if stats["skipped_lines"]:
        print(f"paraamr stats: skipped {stats['skipped_lines']} invalid lines", file=sys.stderr)
    return 0
