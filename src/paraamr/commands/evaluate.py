"""``paraamr evaluate PATH``: the Table-2 row (semantic similarity, 1-BLEU, 1-∩/∪, TED-3, TED-F)."""

from __future__ import annotations

import argparse
import json


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
    p.add_argument("path", metavar="PATH", help="release file, dataset folder or two-column file")
    p.add_argument("--sample", type=int, metavar="N", default=None, help="evaluate N pairs drawn at random")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample (default: %(default)s)")
    p.add_argument(
        "--parser",
        default="link-grammar",
        help="link-grammar (offline; not the paper's scale), corenlp, or a CoreNLP server URL "
        "(default: %(default)s)",
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
    p.add_argument("--batch-size", type=int, default=64, help="embedder batch size (default: %(default)s)")
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

    from paraamr.errors import ParaAMRError
    from paraamr.metrics.parsers import get_parser
    from paraamr.metrics.report import evaluate_pairs, format_row, plot_histograms, read_pairs, sample
    from paraamr.models.embedder import Embedder

    parser = None
    try:
        pairs = sample(read_pairs(args.path), args.sample, seed=args.seed)
        parser = get_parser(args.parser)
        embedder = Embedder(
            args.similarity_model, pooling=args.pooling, device=args.device, batch_size=args.batch_size
        )
        with tqdm(total=len(pairs), unit="pair", disable=args.no_progress, file=sys.stderr) as bar:
            result = evaluate_pairs(pairs, embedder=embedder, parser=parser, progress=bar.update)
    except (ParaAMRError, ValueError, OSError) as err:
        print(f"paraamr evaluate: {err}", file=sys.stderr)
        return 1
    finally:
        if parser is not None:
            parser.close()
    scores = result.pop("scores")
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
    for failure in result["failures"]:
        print(f"paraamr evaluate: left out {failure['where']}: {failure['reason']}", file=sys.stderr)
    return 0
