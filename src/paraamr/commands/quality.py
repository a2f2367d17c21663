"""``paraamr quality train|score``: train a paraphrase-quality model, score pairs with it.

``train`` builds triplets from plain sentences, ParaAMR records and the natural pairs' training
part, and trains and calibrates a cross-encoder (default) or bi-encoder; ``score`` adds a
``quality`` score to each ``text``/``para_text`` row of a JSON-lines file and, when the rows carry
a ``label``, prints the separation and P/R/F1 (with 95% intervals by source) to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import sys
from pathlib import Path

from paraamr.atomic import atomic_dir, atomic_write
from paraamr.errors import InputError, UsageError, refuse_pipes
from paraamr.errors import about as naming
from paraamr.extras import require
from paraamr.options import add_settings, given_settings, number, path_text, positive
from paraamr.outputs import check_not_input, check_writable_file, claim_file
from paraamr.progress import Progress, add_progress_options
from paraamr.report import json_text
from paraamr.texts import printable, text_problem

#: ``--max-chars`` of ``quality train``: longer sentences become failure rows, never triplets.
TRAIN_MAX_CHARS = 1000
#: Default ``--max-triplets``: sized so the default run trains in minutes on 2 cores.
DEFAULT_TRIPLETS = 5000
#: Default ``--natural-operator-triplets``: operator negatives of the natural sources.
DEFAULT_NATURAL_OPERATOR_TRIPLETS = 1000
#: ``quality score`` scores its pairs this many batches at a time: its display moves as each is done.
SCORE_BATCHES = 4


def register(subparsers) -> None:
    """Add ``quality`` with its ``train`` and ``score`` subcommands."""
    from paraamr.quality.data import TRAINING_FILES
    from paraamr.quality.gate import SYNONYM_MIN_SIMILARITY
    from paraamr.quality.scorer import BASE_MODEL, DEFAULT_MODEL
    from paraamr.quality.settings import TrainSettings

    parser = subparsers.add_parser("quality", help="paraphrase quality (ParaQD): train a scorer, score pairs")
    sub = parser.add_subparsers(dest="quality_command", metavar="SUBCOMMAND", required=True)

    train = sub.add_parser("train", help="train a quality model on operator triplets (CPU, minutes)")
    train.add_argument(
        "--input",
        nargs="+",
        type=Path,
        default=list(TRAINING_FILES),
        help="text files, one sentence a line (default: the bundled sentences.txt and wordnet_sentences.txt)",
    )
    train.add_argument(
        "--records",
        type=Path,
        nargs="*",
        default=[],
        help="ParaAMR records (JSON lines or a dataset folder): paraphrases become positives",
    )
    natural = train.add_mutually_exclusive_group()
    natural.add_argument(
        "--natural",
        type=Path,
        default=None,
        help="labelled pairs to train on (TSV: source, candidate, label, kind; default: the bundled "
        "natural pairs but set C)",
    )
    natural.add_argument("--no-natural", action="store_true", help="train on no natural pairs")
    train.add_argument(
        "--natural-operator-triplets",
        type=number(int, low=0),
        default=DEFAULT_NATURAL_OPERATOR_TRIPLETS,
        help="operator negatives of the natural sources, each with one of their rewordings "
        f"(default: {DEFAULT_NATURAL_OPERATOR_TRIPLETS})",
    )
    for kind, what in (
        ("unrelated", "an unrelated input sentence of about the anchor's length"),
        ("fragment", "a piece of the anchor (a third to two thirds of its words)"),
        ("topic-shift", "the anchor's frame with other content words"),
    ):
        train.add_argument(
            f"--{kind}-triplets",
            type=number(int, low=0),
            default=0,
            metavar="N",
            help=f"N more triplets, outside the operators' equal shares, whose negative is {what} "
            "(default: 0)",
        )
    train.add_argument(
        "--phrase-synonyms",
        action="store_true",
        help="also draw positives that put a multi-word synonym in a word's place (gated like synonyms)",
    )
    train.add_argument(
        "--synonym-min-similarity",
        type=number(float, low=0, high=1),
        default=SYNONYM_MIN_SIMILARITY,
        help="keep a synonym positive only where all-MiniLM-L6-v2 gives it this cosine with its "
        "sentence or more; 0 keeps all (default: %(default)s)",
    )
    train.add_argument("--output", type=Path, required=True, help="folder for the trained model")
    train.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a model already in --output, the folder whole (and --save-triplets)",
    )
    train.add_argument(
        "--max-triplets",
        type=positive(int),
        default=DEFAULT_TRIPLETS,
        help="cap on the operator triplets of --input and --records, and apart from them on the natural "
        "pairs' triplets (their operator triplets first capped at it, then a seeded sample of all of "
        f"them when more); at most twice it in all (default: {DEFAULT_TRIPLETS})",
    )
    train.add_argument(
        "--max-chars",
        type=positive(int),
        default=TRAIN_MAX_CHARS,
        help="longer sentences are skipped, each a row in OUTPUT/failures.jsonl (default: %(default)s)",
    )
    train.add_argument(
        "--save-triplets", type=Path, default=None, help="also write the triplets (JSON lines)"
    )
    train.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_settings({"train": train.add_argument_group("training (the model's settings)")}, TrainSettings)
    train.set_defaults(func=run_train)

    score = sub.add_parser(
        "score",
        help="score (source, paraphrase) pairs: JSON lines, a .tsv/.csv or a dataset folder",
        description="Score each (source, paraphrase) pair from 0 (not a paraphrase) to 1 and write the "
        "rows as JSON lines with 'quality' added; rows with a 'label' (1 valid, 0 invalid) also give "
        "separation, precision, recall and F1 on stderr.",
    )
    score.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help=f"a trained model folder, {DEFAULT_MODEL!r} (shipped, default), {BASE_MODEL!r} or "
        "'all-mpnet-base-v2' (untuned: raw cosines)",
    )
    score.add_argument(
        "--input",
        type=path_text,
        default="-",
        help="JSON lines with text and para_text (and label), a labelled .tsv as --natural reads it, a "
        ".tsv/.csv of (source, paraphrase) pairs, or a release file or dataset folder, as evaluate "
        "reads them (default: '-', stdin)",
    )
    score.add_argument(
        "--output",
        type=path_text,
        default="-",
        help="where the rows go, with 'quality' added (default: '-', stdout)",
    )
    score.add_argument("--overwrite", action="store_true", help="replace an existing --output file")
    score.add_argument(
        "--threshold",
        type=number(float, low=-1, high=1),
        default=0.5,
        help="valid when quality >= threshold (default: %(default)s)",
    )
    score.add_argument(
        "--batch-size", type=positive(int), default=64, help="pairs per batch (default: %(default)s)"
    )
    score.add_argument(
        "--max-chars",
        type=positive(int),
        default=None,
        help="rows with a longer text are not scored (nor those with a NUL or a lone surrogate): quality "
        "null and a 'failure' field (default: no limit)",
    )
    add_progress_options(score)
    score.set_defaults(func=run_score)


def _triplets(args: argparse.Namespace, sentences: list[str]) -> tuple[list, dict]:
    """The operator triplets of ``sentences`` and ``--records`` (synonyms gated) plus those of the
    natural pairs' training part, and what the card says of the gate and the natural pairs."""
    from paraamr.quality.data import NATURAL_PAIRS, SET_C, natural_pairs, read_pairs, set_c_sources
    from paraamr.quality.gate import SimilarityGate
    from paraamr.quality.natural import natural_training
    from paraamr.quality.operators import EXTRA, POSITIVE
    from paraamr.quality.scorer import BASE_MODEL, QualityScorer
    from paraamr.quality.triplets import build_triplets, read_paraphrases

    rows = read_pairs(args.natural) if args.natural else [] if args.no_natural else natural_pairs("train")
    paraphrases: dict[str, list[str]] = {}
    for path in args.records:
        for key, paras in read_paraphrases(path).items():
            if len(key) <= args.max_chars:
                paraphrases.setdefault(key, []).extend(p for p in paras if len(p) <= args.max_chars)
    sentences = sentences + list(paraphrases)  # the records' sources are anchors too
    if not sentences:
        raise InputError(f"{', '.join(map(str, args.input))}: no sentences to train on")
    progress = not args.no_progress
    positives, about = dict(POSITIVE), {}
    if args.phrase_synonyms:
        positives["phrase_synonym"] = EXTRA["phrase_synonym"]
    minimum = args.synonym_min_similarity
    gate = SimilarityGate(QualityScorer(BASE_MODEL).encode, minimum) if minimum else None
    if gate:
        gate.prime(sentences)
    triplets = build_triplets(
        sentences, seed=args.seed, max_triplets=args.max_triplets, paraphrases=paraphrases,
        positives=positives, gate=gate, progress=progress,
    )  # fmt: skip
    if gate:
        about["synonym_gate"] = {"model": BASE_MODEL, "min_similarity": gate.minimum, **gate.counts}
    if rows:
        cap = args.max_triplets  # bounds the natural pairs' triplets too
        operators = min(args.natural_operator_triplets, cap)
        found = natural_training(rows, seed=args.seed, operator_triplets=operators, progress=progress)
        if len(found) > cap:  # a seeded sample, in their order
            found = [found[i] for i in sorted(random.Random(args.seed).sample(range(len(found)), cap))]
        triplets += found
    triplets += _extra_triplets(args, triplets, sentences + [r["text"] for r in rows])
    if not rows:
        return triplets, about
    natural = {"file": (args.natural or NATURAL_PAIRS).name, "sources": len({r["text"] for r in rows})}
    if args.natural is None:
        natural |= {"held_out_file": SET_C.name, "held_out": sorted(set_c_sources())}
    return triplets, about | {"natural": natural}


def _extra_triplets(args: argparse.Namespace, triplets: list, pool: list[str]) -> list:
    """The triplets of ``--unrelated-triplets``, ``--fragment-triplets`` and ``--topic-shift-triplets``."""
    from paraamr.quality.operators import EXTRA
    from paraamr.quality.triplets import extra_triplets, unrelated_sentence

    kinds = {
        "unrelated": (unrelated_sentence(pool), args.unrelated_triplets),
        "fragment": (EXTRA["fragment"], args.fragment_triplets),
        "topic_shift": (EXTRA["topic_shift"], args.topic_shift_triplets),
    }
    return [
        t
        for name, (op, n) in kinds.items()
        for t in extra_triplets(triplets, op, n, name=name, seed=args.seed)
    ]


def _default_run(args: argparse.Namespace, settings) -> bool:
    """Whether ``args`` are the defaults of ``paraamr quality train`` (but --output and progress)."""
    from paraamr.quality.data import TRAINING_FILES
    from paraamr.quality.gate import SYNONYM_MIN_SIMILARITY
    from paraamr.quality.settings import TrainSettings

    return (
        list(args.input) == list(TRAINING_FILES)
        and not args.records
        and not args.no_natural
        and args.natural is None
        and args.max_triplets == DEFAULT_TRIPLETS
        and args.natural_operator_triplets == DEFAULT_NATURAL_OPERATOR_TRIPLETS
        and args.synonym_min_similarity == SYNONYM_MIN_SIMILARITY
        and not (args.unrelated_triplets or args.fragment_triplets or args.topic_shift_triplets)
        and not args.phrase_synonyms
        and args.max_chars == TRAIN_MAX_CHARS
        and settings == TrainSettings()
    )


def run_train(args: argparse.Namespace) -> int:
    """Build triplets and train the model in ``--output``."""
    require("quality")
    from paraamr.quality.train import INFO_FILE, TrainSettings, check_output, train
    from paraamr.quality.triplets import training_sentences, write_triplets

    natural = {"--natural-repeat": args.natural_repeat != TrainSettings.natural_repeat}
    natural["--natural-operator-triplets"] = (
        args.natural_operator_triplets != DEFAULT_NATURAL_OPERATOR_TRIPLETS
    )
    if args.no_natural and any(natural.values()):  # they would do nothing
        raise UsageError(f"{', '.join(f for f, on in natural.items() if on)}: not used with --no-natural")
    inputs = [*args.input, *args.records, *([args.natural] if args.natural else [])]
    refuse_pipes(*inputs)
    check_output(args.output, args.overwrite)
    if args.save_triplets:  # never an input (it was overwritten), nor inside the model's folder
        check_not_input(args.save_triplets, *inputs, name="--save-triplets")
        if args.save_triplets.resolve().is_relative_to(args.output.resolve()):
            raise UsageError(f"--save-triplets {args.save_triplets}: inside --output (the model's folder)")
    if args.save_triplets and args.save_triplets.exists() and not args.overwrite:
        raise UsageError(f"--save-triplets {args.save_triplets}: exists; pass --overwrite to replace it")
    settings = TrainSettings(**given_settings(TrainSettings, args))
    sentences, failures = training_sentences(args.input, args.max_chars)
    settings.check()  # the models, before minutes of triplet building
    triplets, about = _triplets(args, sentences)
    natural = "" if args.no_natural else " and the natural pairs"
    print(f"{len(triplets)} triplets from {len(sentences)} sentences{natural}", file=sys.stderr)
    if _default_run(args, settings):
        about["command"] = "paraamr quality train --output DIR"
    options = {"progress": not args.no_progress, "sources": [*args.input, *args.records], "about": about}
    with claim_file(args.output, overwrite=True, command="quality train", name="--output"):  # one run at once
        check_output(args.output, args.overwrite)  # again: another run may have written it meanwhile
        with atomic_dir(args.output, replace=True) as folder:  # never part of a model, nor two mixed
            summary = train(triplets, folder, settings, **options)
            if failures:
                lines = (json.dumps(row, ensure_ascii=False) + "\n" for row in failures)
                (folder / "failures.jsonl").write_text("".join(lines), encoding="utf-8")
    if args.save_triplets:  # once the model is in place: a run stopped before leaves no file to refuse
        with naming(args.save_triplets):
            write_triplets(triplets, args.save_triplets)
    if failures:
        print(f"{len(failures)} sentence(s) skipped: see {args.output}/failures.jsonl", file=sys.stderr)
    cal = summary["calibration"]
    print(
        f"model written to {args.output} ({args.mode}; {summary['triplets']} triplets, "
        f"{summary['steps_done']} steps in {summary['train_seconds']} s; "
        f"threshold {cal['threshold']:.4g} -> 0.5, "
        f"validation macro F1 {cal['macro_f1']:.3f}; how it was trained: {args.output}/README.md, "
        f"{args.output}/{INFO_FILE})",
        file=sys.stderr,
    )
    return 0


def _pair_problem(row: dict, max_chars: int | None) -> str | None:
    """Why a row of ``quality score`` cannot be scored (its field named), or None."""
    for field in ("text", "para_text"):
        if not isinstance(row.get(field), str):
            return f"{field}: missing, or not a string"
        problem = text_problem(row[field], max_chars, visible=True)  # (an empty one stopped the run)
        if problem is not None:
            return f"{field}: {problem}"
    return None


def _scored(args: argparse.Namespace, scorer, pairs: list[tuple[str, str]]) -> list[float]:
    """The scores of ``pairs``, :data:`SCORE_BATCHES` batches at a time, shown as ``--progress`` says."""
    from paraamr.builder.tracking import model_line

    step = args.batch_size * SCORE_BATCHES
    values: list[float] = []
    with Progress("quality score", total=len(pairs), unit="pairs", mode=args.progress) as shown:
        if pairs:  # the models load under their own line, not inside the first batches
            shown.phase(model_line({"quality": args.model}, {"quality": str(scorer.path)}))
            _ = scorer.model, scorer.cosine_model
            shown.phase("scoring")
        for start in range(0, len(pairs), step):
            sources, paraphrases = zip(*pairs[start : start + step], strict=True)
            values += scorer.score(sources, paraphrases)
            shown.update(len(values))
    return values


def run_score(args: argparse.Namespace) -> int:
    """Score each row of ``--input``; summary figures go to stderr when rows carry labels."""
    require("quality")
    with contextlib.ExitStack() as stack:
        if args.output != "-":
            check_not_input(args.output, *([args.input] if args.input != "-" else []), name="--output")
            check_writable_file(args.output)
            if Path(args.output).is_dir():  # (--overwrite scored every row, then failed to replace it)
                raise InputError(f"--output {args.output}: is a folder (the scores go to a file)")
            held = claim_file(args.output, overwrite=args.overwrite, command="quality score", name="--output")
            stack.enter_context(held)  # while it scores: a second run into the file is refused
        return _score(args)


def _score(args: argparse.Namespace) -> int:
    from paraamr.metrics.sample import interval_signature
    from paraamr.quality import QualityScorer
    from paraamr.quality.data import score_rows
    from paraamr.quality.evaluation import classify, intervals_by_source, separation

    rows = score_rows(args.input)
    if not rows:  # (it wrote nothing, exit 0)
        raise InputError(f"--input {args.input}: no pairs to score")
    problems = [_pair_problem(row, args.max_chars) for row in rows]
    keep = [i for i, problem in enumerate(problems) if problem is None]
    scorer = QualityScorer(args.model, batch_size=args.batch_size)
    values = iter(_scored(args, scorer, [(rows[i]["text"], rows[i]["para_text"]) for i in keep]))
    # the figures count what the threshold meets; the rows hold 6 decimals
    scores = [next(values) if problem is None else None for problem in problems]
    lines = []
    for row, value, problem in zip(rows, scores, problems, strict=True):
        # any field, but an earlier run's failure (a row scored again)
        printed = {k: printable(v) if isinstance(v, str) else v for k, v in row.items() if k != "failure"}
        written = {"quality": None if value is None else round(value, 6)}
        written |= {} if problem is None else {"failure": problem}
        lines.append(json.dumps({**printed, **written}, ensure_ascii=False) + "\n")
    if args.output == "-":
        sys.stdout.writelines(lines)
    else:  # whole or not at all, and a link replaced by the file, never written through
        atomic_write(args.output, "".join(lines))
    failed = scores.count(None)  # failure rows, and rows without a label, are left out of the figures
    scored = [(s, r) for s, r in zip(scores, rows, strict=True) if s is not None and "label" in r]
    unlabelled = len(rows) - failed - len(scored)
    if scored:
        values_, labels, texts = zip(*((s, r["label"], r["text"]) for s, r in scored), strict=True)
        both = len(set(labels)) == 2  # one class (or one row): no separation, null; not an error
        figures = {
            "separation": separation(values_, labels) if both else None,
            **classify(values_, labels, args.threshold),
        }
        if failed:  # (they were left out of the figures silently)
            figures["failure_rows_left_out"] = failed
        if unlabelled:
            figures["unlabelled_rows_left_out"] = unlabelled
        found = intervals_by_source(values_, labels, texts, args.threshold) if both else {}
        figures["interval_95"] = {  # null where one source (or one class) gives no interval
            name: [None if math.isnan(x) else x for x in found.get(name, (math.nan, math.nan))]
            for name in ("separation", "f1_macro")
        }
        signature = scorer.signature.extend(
            interval_signature("sources", 0), threshold=args.threshold, scale=1
        )
        figures["signature"] = str(signature)
        print(json_text(figures), file=sys.stderr)
    return 0
