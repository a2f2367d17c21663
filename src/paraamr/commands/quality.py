"""``paraamr quality train|score``: fine-tune a paraphrase-quality encoder, score pairs with it.

``train`` builds (anchor, positive, negative) triplets from plain sentences (plus ParaAMR records)
and fine-tunes all-MiniLM-L6-v2 with triplet loss; ``score`` adds a ``quality`` score to each pair
of a JSON-lines file (``text`` and ``para_text`` fields, as in the ``pairs`` config) and, when the
rows carry a ``label``, prints the separation and P/R/F1 to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import nullcontext
from pathlib import Path


def register(subparsers) -> None:
    """Add ``quality`` with its ``train`` and ``score`` subcommands."""
    parser = subparsers.add_parser("quality", help="paraphrase quality (ParaQD): train a scorer, score pairs")
    sub = parser.add_subparsers(dest="quality_command", metavar="SUBCOMMAND", required=True)

    train = sub.add_parser("train", help="fine-tune a sentence encoder on operator triplets")
    train.add_argument("--input", nargs="+", type=Path, required=True, help="text files, one sentence a line")
    train.add_argument(
        "--records",
        type=Path,
        nargs="*",
        default=[],
        help="ParaAMR records (JSON lines or a dataset folder): paraphrases become positives",
    )
    train.add_argument("--output", type=Path, required=True, help="folder for the trained model")
    train.add_argument("--base", default="all-MiniLM-L6-v2", help="encoder to fine-tune (name or folder)")
    train.add_argument("--margin", type=float, default=0.5, help="triplet margin α (cosine distance)")
    train.add_argument("--epochs", type=int, default=1)
    train.add_argument("--batch-size", type=int, default=16)
    train.add_argument("--lr", type=float, default=2e-5, help="learning rate")
    train.add_argument("--max-triplets", type=int, default=None, help="cap on the number of triplets")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--threads", type=int, default=2, help="torch CPU threads (0: torch's default)")
    train.add_argument(
        "--save-triplets", type=Path, default=None, help="also write the triplets (JSON lines)"
    )
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.set_defaults(func=run_train)

    score = sub.add_parser("score", help="score (text, para_text) pairs of a JSON-lines file")
    score.add_argument("--model", default="all-MiniLM-L6-v2", help="a trained model folder, or the base name")
    score.add_argument("--input", default="-", help="JSON lines with text and para_text ('-': stdin)")
    score.add_argument("--output", default="-", help="where the rows go, with 'quality' added ('-': stdout)")
    score.add_argument("--threshold", type=float, default=0.5, help="valid when quality >= threshold")
    score.add_argument("--batch-size", type=int, default=64)
    score.set_defaults(func=run_score)


def run_train(args: argparse.Namespace) -> int:
    """Build triplets from ``--input`` (and ``--records``) and train the model in ``--output``."""
    from paraamr.quality.train import INFO_FILE, TrainSettings, train
    from paraamr.quality.triplets import build_triplets, read_paraphrases, read_sentences, write_triplets

    sentences = [s for path in args.input for s in read_sentences(path)]
    paraphrases: dict[str, list[str]] = {}
    for path in args.records:
        for key, paras in read_paraphrases(path).items():
            paraphrases.setdefault(key, []).extend(paras)
    sentences += list(paraphrases)  # the records' sources are anchors too
    triplets = build_triplets(
        sentences, seed=args.seed, max_triplets=args.max_triplets, paraphrases=paraphrases
    )
    print(f"{len(triplets)} triplets from {len(sentences)} sentences", file=sys.stderr)
    if args.save_triplets:
        write_triplets(triplets, args.save_triplets)
    settings = TrainSettings(
        base=args.base,
        margin=args.margin,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        seed=args.seed,
        threads=args.threads or None,
    )
    summary = train(
        triplets, args.output, settings, progress=not args.no_progress, sources=[*args.input, *args.records]
    )
    print(
        f"model written to {args.output} ({summary['triplets']} triplets, {summary['train_seconds']} s; "
        f"how it was trained: {args.output}/README.md, {args.output}/{INFO_FILE})",
        file=sys.stderr,
    )
    return 0


def run_score(args: argparse.Namespace) -> int:
    """Score each row of ``--input``; summary figures go to stderr when rows carry labels."""
    from paraamr.quality import QualityScorer
    from paraamr.quality.evaluation import classify, separation
    from paraamr.quality.triplets import json_lines

    stream = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")  # noqa: SIM115
    name = "<stdin>" if args.input == "-" else args.input
    with stream:
        rows = list(json_lines(stream, name, ("text", "para_text")))
    scorer = QualityScorer(args.model, batch_size=args.batch_size)
    scores = scorer.score([r["text"] for r in rows], [r["para_text"] for r in rows])
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")  # noqa: SIM115
    with out if out is not sys.stdout else nullcontext(out):
        for row, value in zip(rows, scores, strict=True):
            out.write(json.dumps({**row, "quality": round(value, 6)}, ensure_ascii=False) + "\n")
    labelled = [(s, r["label"]) for s, r in zip(scores, rows, strict=True) if "label" in r]
    if labelled and len(labelled) == len(rows):
        values, labels = zip(*labelled, strict=True)
        figures = {"separation": separation(values, labels), **classify(values, labels, args.threshold)}
        figures["signature"] = f"{scorer.signature}|threshold:{args.threshold}"
        print(json.dumps(figures), file=sys.stderr)
    return 0
