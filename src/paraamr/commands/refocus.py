"""``paraamr refocus [FILE|-]``: re-root AMR graphs at each candidate focus (PENMAN in, PENMAN out).

Read PENMAN graphs (blank-line separated, metadata allowed) from FILE or stdin and write every
re-rooted variant as PENMAN with # ::id and # ::focus metadata, each followed by a blank line. Bad
graphs are reported on stderr by position and skipped (exit status 1).

``# ::id`` is the graph's own, else the record id of its ``# ::snt``, else of its PENMAN lines.
Exit status: 0, 1 when a graph failed, 2 when the input cannot be opened.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys

from paraamr.errors import refuse_packed
from paraamr.options import SEED, number, positive
from paraamr.report import counted

#: ``paraamr.amr.DEFAULT_EXCLUDED`` for the help, which does not import penman (a test checks both agree).
EXCLUDED_HELP = "amr-unknown, and, multi-sentence, name, or"


def _foci(value: str) -> str | int:
    if value == "all":
        return value
    try:
        count = int(value)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"must be 'all' or a count >= 0, not {value!r}")
    return count


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``paraamr refocus``."""
    parser.add_argument("file", nargs="?", default="-", metavar="FILE|-", help="PENMAN file (default: stdin)")
    parser.add_argument(
        "--foci",
        type=_foci,
        metavar="all|N",
        default="all",
        help="'all' candidate foci of each graph, or N of them at random (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=number(**SEED), default=0, help="seed of the random foci (default: %(default)s)"
    )
    parser.add_argument("--oneline", action="store_true", help="write each graph on one line")
    parser.add_argument(
        "--exclude",
        default=None,
        metavar="CONCEPTS",
        help=f"comma-separated concepts never used as foci (default: {EXCLUDED_HELP}); '' keeps all",
    )
    parser.add_argument(
        "--heuristic",
        action="store_true",
        help="amrlib's heuristic: only variables without incoming edges become foci",
    )
    parser.add_argument(
        "--mod-as-domain",
        action="store_true",
        help="write an inverted :mod as :domain (penman then reads another role) instead of :mod-of",
    )
    parser.add_argument(
        "--max-amr-nodes",
        type=positive(),
        default=500,
        help="a graph with more nodes is refused, before it is parsed (default: %(default)s)",
    )
    parser.add_argument(
        "--max-amr-depth",
        type=positive(),
        default=100,
        help="a graph nested deeper is refused, before it is parsed (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    """Re-root every graph of the input; report failures; return the exit status."""
    if args.file != "-":  # (a packed file read as text: every graph a failure)
        refuse_packed(args.file, "refocus reads plain files", "paraamr refocus - ...")
    with contextlib.ExitStack() as stack:
        try:
            if args.file != "-":
                stream = stack.enter_context(open(args.file, encoding="utf-8-sig", errors="surrogateescape"))
            elif hasattr(sys.stdin, "buffer"):  # invalid bytes reach _check_utf8 instead of raising
                stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", errors="surrogateescape")
            else:
                stream = sys.stdin
        except OSError as e:
            print(f"paraamr refocus: cannot read {args.file}: {e.strerror}", file=sys.stderr)
            return 2
        read, failed, written = _refocus(stream, args)
    summary = f"{counted(read, 'graph')} read, {failed:,} failed, {counted(written, 'variant')} written"
    print(f"paraamr refocus: {summary}", file=sys.stderr)
    return 1 if failed else 0


def _refocus(stream, args: argparse.Namespace) -> tuple[int, int, int]:
    from paraamr import amr
    from paraamr.builder.rows import graph_id
    from paraamr.errors import AMRError

    exclude = (
        amr.DEFAULT_EXCLUDED
        if args.exclude is None
        else {c.strip() for c in args.exclude.split(",") if c.strip()}
    )
    read = failed = written = 0
    for position, block in amr.read_graphs(stream):
        read += 1
        where = f"graph {position}"
        try:
            _check_utf8(block, where)
            tree = amr.parse(block, where=where, max_nodes=args.max_amr_nodes, max_depth=args.max_amr_depth)
            others = {k: v for k, v in tree.metadata.items() if k != "id"}
            tree.metadata = {"id": graph_id(block), **others}  # generate's record id
            variants = amr.iter_variants(
                tree,
                foci=args.foci,
                seed=args.seed,
                exclude=exclude,
                heuristic=args.heuristic,
                oneline=args.oneline,
                mod_as_domain=args.mod_as_domain,
                where=where,
            )
            for variant in variants:  # written as made
                sys.stdout.write(f"{variant.penman}\n\n")
                written += 1
        except AMRError as e:
            failed += 1
            print(f"paraamr refocus: {e}", file=sys.stderr)
    return read, failed, written


def _check_utf8(block: str, where: str) -> None:
    from paraamr.errors import AMRError

    try:
        block.encode("utf-8")
    except UnicodeEncodeError as e:
        line = block[: e.start].count("\n") + 1
        raise AMRError(f"{where}: invalid UTF-8 (line {line} of the graph)") from None
