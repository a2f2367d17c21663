"""``paraamr evaluate PATH``: the Table-2 row (semantic similarity, 1-BLEU, 1-∩/∪, TED-3, TED-F)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from paraamr.options import positive

#: ``owner/name``: read from the Hub when no such local path exists.
HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


def register(subparsers) -> None:
    """Add the ``evaluate`` command."""
    p = subparsers.add_parser(
        "evaluate",
        help="Table 2's row (similarity, 1-BLEU, 1-∩/∪, TED-3, TED-F) of a corpus",
        description="Print semantic similarity (embedding cosine ×100), 1-BLEU, 1-∩/∪ (×100), TED-3 and "
        "TED-F over the (source, paraphrase) pairs of PATH: a ParaAMR release file (JSON lines, zipped "
        "or not), our dataset folder, or a two-column file (.tsv/.txt tab-separated, .csv: source, "
        "paraphrase). Writes one PNG histogram per measure.",
    )
    p.add_argument(
        "path", metavar="PATH", help="release file, dataset folder, two-column file or Hub dataset id"
    )
    p.add_argument("--config", default=None, help="config of a Hub dataset (default: its default)")
    p.add_argument("--split", default="train", help="split of a Hub dataset (default: %(default)s)")
    p.add_argument(
        "--write-card",
        action="store_true",
        help="put the row and its signatures into the card of PATH (a dataset folder)",
    )
    p.add_argument(
        "--sample", type=positive(), metavar="N", default=None, help="evaluate N pairs drawn at random"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of --sample (default: %(default)s)")
    p.add_argument(
        "--parser",
        default="link-grammar",
        help="link-grammar (offline; not the paper's scale), corenlp, or a CoreNLP server URL "
        "(default: %(default)s)",
    )
    p.add_argument(
        "--no-pos",
        action="store_true",
        help="link-grammar trees without the part-of-speech layer (spaCy's Penn tags; on by default)",
    )
    p.add_argument(
        "--processes",
        type=positive(),
        default=None,
        metavar="N",
        help="link-grammar processes / concurrent CoreNLP requests (default: one per core)",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        default=None,
        help="keep parses on disk in DIR across runs (keyed by parser signature and sentence)",
    )
    p.add_argument(
        "--references",
        metavar="FILE",
        default=None,
        help="one reference paraphrase per line, one per pair in input order: adds AESOP's BLEU, "
        "ROUGE-1/2/L, METEOR and TED-R",
    )
    p.add_argument(
        "--templates",
        metavar="FILE",
        default=None,
        help="one syntactic template (exemplar sentence) per line, one per pair: adds TED-E "
        "(needs --references)",
    )
    p.add_argument(
        "--ted-height",
        default="5",
        metavar="H",
        help="height of TED-R/TED-E, or 'full' (AESOP's eval.py compares full trees; default: %(default)s)",
    )
    p.add_argument(
        "--similarity-model",
        default="all-MiniLM-L6-v2",
        help="sentence-transformers model or SimCSE checkpoint (default: %(default)s)",
    )
    p.add_argument(
        "--pooling",
        default=None,
        choices=("cls", "cls_before_pooler", "mean"),
        help="embedding pooling (default: the model's own; SimCSE's rule for other encoders)",
    )
    p.add_argument("--device", default=None, help="torch device of the embedder (default: cuda if available)")
    p.add_argument(
        "--batch-size", type=positive(), default=64, help="embedder batch size (default: %(default)s)"
    )
    p.add_argument(
        "--plots",
        metavar="DIR",
        default="paraamr-evaluate",
        help="folder for the PNG histograms (default: %(default)s)",
    )
    p.add_argument("--no-plots", action="store_true", help="write no histograms")
    p.add_argument("--json", action="store_true", help="print the row as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read the pairs, score them, print the row, plot."""
    import sys

    from tqdm import tqdm

    from paraamr.errors import InputError
    from paraamr.metrics.parsers import get_parser
    from paraamr.metrics.report import (
        card_row,
        evaluate_pairs,
        format_row,
        plot_histograms,
        read_hub_pairs,
        read_pairs,
        sample,
        with_references,
    )
    from paraamr.models.embedder import Embedder

    parser = None
    try:
        height = None if args.ted_height == "full" else int(args.ted_height)
    except ValueError:
        print(
            f"paraamr evaluate: --ted-height: expected a number or 'full', got {args.ted_height!r}",
            file=sys.stderr,
        )
        return 2
    if args.templates and not args.references:
        print("paraamr evaluate: --templates needs --references", file=sys.stderr)
        return 2
    if args.write_card and not Path(args.path).is_dir():
        print(f"paraamr evaluate: --write-card: {args.path} is not a dataset folder", file=sys.stderr)
        return 2
    try:
        local = Path(args.path).exists() or not HUB_ID.match(args.path)
        pairs = read_pairs(args.path) if local else read_hub_pairs(args.path, args.config, args.split)
        if not pairs:
            raise InputError(f"{args.path}: no pairs to evaluate")
        pairs = with_references(pairs, args.references, args.templates)
        if args.sample is not None and args.sample > len(pairs):
            print(
                f"paraamr evaluate: warning: --sample {args.sample:,} exceeds the {len(pairs):,} pairs of "
                f"{args.path}; evaluating all of them",
                file=sys.stderr,
            )
        pairs = sample(pairs, args.sample, seed=args.seed)
        spec = "link-grammar:no-pos" if args.no_pos and args.parser == "link-grammar" else args.parser
        parser = get_parser(spec, processes=args.processes, cache_dir=args.cache_dir)
        embedder = Embedder(
            args.similarity_model, pooling=args.pooling, device=args.device, batch_size=args.batch_size
        )
        with tqdm(unit="sentence", disable=args.no_progress, file=sys.stderr, desc="parse") as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            result = evaluate_pairs(
                pairs, embedder=embedder, parser=parser, ted_height=height, progress=progress
            )
    finally:  # errors go to paraamr.report.report, which names the input and the problem
        if parser is not None:
            parser.close()
    scores = result.pop("scores")
    if args.write_card:
        from paraamr.card import update_card_metrics

        drawn = f", {args.sample:,} pairs drawn with seed {args.seed}" if args.sample else ""
        note = (
            f"Computed with `paraamr evaluate` over {result['pairs']:,} pairs{drawn} "
            "(scores ×100, TED unnormalized)."
        )
        result["card"] = str(
            update_card_metrics(args.path, card_row(result), result["signatures"], note=note)
        )
    if not args.no_plots:
        result["plots"] = [str(p) for p in plot_histograms(scores, args.plots)]
    result.update(input=str(args.path), sample=args.sample, seed=args.seed)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(format_row(result))
        print()
        for key, signature in result["signatures"].items():
            print(f"{key}: {signature}")
        print("scale: similarity, 1-BLEU and 1-∩/∪ ×100; TED unnormalized")
        for path in result.get("plots", []):
            print(f"wrote {path}")
        if "card" in result:
            print(f"wrote the row into {result['card']}")
    for failure in result["failures"]:
        print(f"paraamr evaluate: left out {failure['where']}: {failure['reason']}", file=sys.stderr)
    return 0
