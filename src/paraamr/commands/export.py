"""``paraamr export simcse|scpn PATH OUTPUT``: a corpus as the training file of one of the paper's uses.

``simcse`` writes (source, paraphrase, random negative from another source) rows at perplexity <= 110
as SimCSE's supervised CSV (sent0,sent1,hard_neg); ``scpn`` writes (source, target parse of the
paraphrase, paraphrase) rows at perplexity <= 85 (source,target_parse,paraphrase). PATH is a release
file, a dataset folder or a Hub dataset id; rows are streamed. Both files load with
load_dataset("csv", data_files=OUTPUT).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

from paraamr.metrics.parsers import add_parser_options
from paraamr.options import SEED, check_folder, number, optional_float, positive
from paraamr.progress import Progress, add_progress_options
from paraamr.report import counted


def register(subparsers) -> None:
    """Add ``export`` with its ``simcse`` and ``scpn`` subcommands."""
    from paraamr.commands.stats import add_archive_options

    parser = subparsers.add_parser(
        "export",
        help="a corpus as the training file of one of the paper's uses (SimCSE, SCPN)",
        description=" ".join(__doc__.split("\n\n")[1].split()).replace("``", "`"),
    )
    sub = parser.add_subparsers(dest="export_command", metavar="SUBCOMMAND", required=True)
    simcse = sub.add_parser(
        "simcse",
        help="(source, paraphrase, random negative) rows as SimCSE's CSV: sent0,sent1,hard_neg",
        description="Rows of (source, paraphrase, a source of another record drawn at random) for "
        "SimCSE's supervised training, at the paper's perplexity threshold for sentence embeddings.",
    )
    scpn = sub.add_parser(
        "scpn",
        help="(source, target parse, paraphrase) rows for syntactically controlled generation",
        description="Rows of (source, constituency parse of the paraphrase without its words, "
        "paraphrase) for SCPN, at the paper's perplexity threshold for controlled generation.",
    )
    for name, p in (("simcse", simcse), ("scpn", scpn)):
        p.add_argument("path", metavar="PATH", help="release file, dataset folder or Hub dataset id")
        p.add_argument("output", metavar="OUTPUT", help="the CSV file to write")
        p.add_argument(
            "--max-perplexity",
            type=optional_float,
            default=110.0 if name == "simcse" else 85.0,
            help="keep paraphrases at or below this perplexity (default: %(default)s, the paper's for "
            + ("sentence embeddings" if name == "simcse" else "controlled generation")
            + "; 'none' keeps all)",
        )
        p.add_argument("--config", default=None, help="config of a Hub dataset (default: its default)")
        p.add_argument(
            "--split", action="append", default=None, help="split to export (repeatable; default: all)"
        )
        p.add_argument("--overwrite", action="store_true", help="replace OUTPUT (and its failures file)")
        p.add_argument(
            "--skip-invalid", action="store_true", help="count malformed input lines instead of failing"
        )
        add_archive_options(p)
        add_progress_options(p)
        p.set_defaults(func=run)
    simcse.add_argument(
        "--seed", type=number(**SEED), default=0, help="seed of the random negatives (default: %(default)s)"
    )
    g = scpn.add_argument_group("parser")
    add_parser_options(g, cache="keep parses in this folder across runs")
    g.add_argument(
        "--batch-size", type=positive(), default=256, help="pairs parsed at a time (default: %(default)s)"
    )


def run(args: argparse.Namespace) -> int:
    """Check the output, stream the rows into it, write the failures, say what was written."""
    from paraamr import exports
    from paraamr.atomic import atomic_file, remove_temps
    from paraamr.commands.stats import archive_limits
    from paraamr.errors import InputError, UsageError
    from paraamr.outputs import check_not_input, check_writable_file, claim_file
    from paraamr.sources import Skipped

    limits = archive_limits(args)
    if args.config and Path(args.path).exists():
        raise UsageError(f"--config {args.config}: only for a Hub dataset ({args.path} is a local path)")
    check_folder("--cache-dir", getattr(args, "cache_dir", None))  # scpn's
    if not args.output.strip() or args.output == "-" or args.output.endswith(("/", os.sep)):
        raise UsageError(f"OUTPUT {args.output!r}: not a file name (the CSV file to write)")
    if args.export_command == "scpn":
        from paraamr.metrics.parsers import parser_spec

        spec = parser_spec(args.parser, args.no_pos)  # before any work
    output = Path(args.output)
    if output.is_dir():  # (".", which has no name to put the failures file beside)
        raise InputError(f"{output}: is a folder (OUTPUT is the CSV file to write)")
    failed = output.with_name(output.name + ".failures.jsonl")  # the pairs that could not be written
    check_not_input(output, args.path)
    for path in (output, failed):
        if os.path.lexists(path) and not args.overwrite:  # a link to nowhere is the user's too
            raise InputError(f"{path}: exists (pass --overwrite to replace it)")
    check_writable_file(output)
    splits = list(dict.fromkeys(args.split)) if args.split else None  # a split named twice: once
    skipped = Skipped() if args.skip_invalid else None
    items = exports.records(args.path, config=args.config, splits=splits, limits=limits, skipped=skipped)
    counts: dict[str, int] = {}
    threshold = "no threshold" if args.max_perplexity is None else f"perplexity <= {args.max_perplexity:g}"

    def left_out() -> str:
        pairs = counts.get("pairs", 0)
        return f"{threshold}: {pairs - counts.get('kept', 0):,} of {counted(pairs, 'pair')} left out"

    with contextlib.ExitStack() as stack:
        stack.enter_context(
            claim_file(output, overwrite=args.overwrite, command=f"export {args.export_command}")
        )
        remove_temps(failed)  # a killed run's, beside the failures file
        failures = _Failures(stack.enter_context(open(stack.enter_context(atomic_file(failed)), "w")))

        def empty() -> str:
            why = f"{left_out()}; {counted(failures.count, 'failure')}{failures.first}"
            return f"{args.path}: no pairs to write ({why}); nothing written"

        shown = stack.enter_context(
            Progress(f"export {args.export_command}", unit="pairs", mode=args.progress)
        )
        if args.export_command == "simcse":
            rows = exports.simcse_rows(
                items, max_perplexity=args.max_perplexity, seed=args.seed, counts=counts
            )
            columns = exports.SIMCSE_COLUMNS
        else:
            from paraamr.metrics.parsers import get_parser

            parser = get_parser(spec, processes=args.processes, cache_dir=args.cache_dir)
            stack.callback(parser.close)
            rows = exports.scpn_rows(
                items, parser, max_perplexity=args.max_perplexity, batch_size=args.batch_size, counts=counts
            )
            columns = exports.SCPN_COLUMNS
        written = exports.write_csv(_shown(rows, shown), output, columns, failures=failures, empty=empty)
    if skipped is not None and skipped.count:
        lines = counted(skipped.count, "invalid line")
        print(f"paraamr export: skipped {lines}; first: {skipped.messages[0]}", file=sys.stderr)
    if not failures.count:
        failed.unlink()  # none: no file (an earlier run's went with --overwrite)
    print(
        f"wrote {counted(written, 'row')} to {output} ({left_out()}; {counted(failures.count, 'failure')}"
        + (f" in {failed})" if failures.count else ")")
    )
    return 0


class _Failures:
    """The failure rows, written as JSON lines as they come, the first five also on stderr."""

    def __init__(self, stream) -> None:
        self.stream, self.count, self.first = stream, 0, ""

    def append(self, failure: dict[str, str]) -> None:
        self.stream.write(json.dumps(failure, ensure_ascii=False) + "\n")
        self.count += 1
        if self.count == 1:
            self.first = f": {failure['stage']}: {failure['reason']}"
        if self.count <= 5:
            print(f"failure: {failure['where']}: {failure['stage']}: {failure['reason']}", file=sys.stderr)


def _shown(rows, shown: Progress):
    """``rows``, passed on as they are, counted on the display every 256 (and at the end)."""
    done = 0
    for done, row in enumerate(rows, start=1):
        if done % 256 == 0:
            shown.update(done)
        yield row
    shown.update(done)
