"""``paraamr augment --dataset D --method paraamr|reda|reda-ng --n K``: augment a dataset."""

from __future__ import annotations

import argparse
import sys


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def register(subparsers) -> None:
    """Add the ``augment`` command."""
    p = subparsers.add_parser(
        "augment",
        help="augment a dataset with ParaAMR paraphrases, REDA or REDA+NG (Hub-ready output folder)",
        description="Add up to K new versions of each text of a dataset (one text column, or a sentence "
        "pair crossed with the other side), labels kept, and write a Hub-ready folder: "
        "data/{split}-*.parquet, README.md (card) and failures/augment.jsonl for bad rows.",
    )
    p.add_argument("--dataset", required=True, help="local file/folder or Hub dataset id")
    p.add_argument("--dataset-config", default=None, help="config name of a Hub dataset (e.g. mrpc)")
    p.add_argument("--method", required=True, choices=("paraamr", "reda", "reda-ng"))
    p.add_argument(
        "--n", type=_positive, default=2, help="new texts per text column and row (default: %(default)s)"
    )
    p.add_argument(
        "--split",
        action="append",
        default=None,
        help="split to augment (repeatable; default: train, else every split); others are copied",
    )
    p.add_argument(
        "--columns", nargs="+", default=None, help="the one or two text columns (default: guessed)"
    )
    p.add_argument("--output", default=None, help="output folder (default: augmented-METHOD)")
    p.add_argument("--overwrite", action="store_true", help="replace a non-empty output folder")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-proc", type=int, default=None, help="processes for datasets.map")
    p.add_argument("--rows-per-shard", type=_positive, default=100_000)
    p.add_argument(
        "--max-chars",
        type=_positive,
        default=None,
        help="longer texts are kept but not augmented, and listed as failures (default: no limit)",
    )
    g = p.add_argument_group("paraamr method")
    g.add_argument("--paraphrases", default=None, help="ParaAMR release JSONL (.zip/.gz) or dataset folder")
    g.add_argument(
        "--max-perplexity",
        type=float,
        default=110.0,
        help="skip paraphrases above this perplexity (default: %(default)s, the paper's few-shot setting; "
        "inf keeps all)",
    )
    g.add_argument("--generate", action="store_true", help="generate paraphrases on the fly instead")
    g.add_argument("--parser-model", default="parse_xfm_bart_large")
    g.add_argument("--generator-model", default="generate_t5wtense")
    g.add_argument("--lm-model", default="gpt2", help="perplexity LM of the generator")
    g.add_argument("--device", default=None)
    g = p.add_argument_group("reda / reda-ng methods")
    g.add_argument(
        "--draws", type=_positive, default=20, help="tries per operator behind the pool (default: 20)"
    )
    g.add_argument("--lm", default=None, help="n-gram LM saved with --save-lm (default: train on the data)")
    g.add_argument("--save-lm", default=None, help="write the n-gram LM used by reda-ng here (Parquet)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load, augment each chosen split, write the folder; 1 on bad input."""
    from paraamr.errors import ParaAMRError

    try:
        return _run(args)
    except ParaAMRError as err:
        print(f"paraamr augment: {err}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    from paraamr.augment.folder import render_card, write_folder
    from paraamr.augment.inputs import load_splits
    from paraamr.augment.ngram import NgramLM
    from paraamr.augment.reda import REDA
    from paraamr.augment.runner import augment, check_columns, detect_columns, train_lm
    from paraamr.errors import InputError

    if args.method == "paraamr" and bool(args.paraphrases) == bool(args.generate):
        raise InputError("--method paraamr needs exactly one of --paraphrases PATH and --generate")
    splits = load_splits(args.dataset, args.dataset_config)
    chosen = args.split or (["train"] if "train" in splits else list(splits))
    unknown = [s for s in chosen if s not in splits]
    if unknown:
        raise InputError(f"no split {unknown} in {args.dataset} (splits: {list(splits)})")
    names = splits[chosen[0]].column_names
    columns = check_columns(names, args.columns or detect_columns(names))
    reda = REDA(seed=args.seed, draws=args.draws)
    lm = index = None
    if args.method == "reda-ng":
        lm = NgramLM.load(args.lm) if args.lm else train_lm([splits[s] for s in chosen], columns)
        if args.save_lm:
            lm.save(args.save_lm)
    elif args.method == "paraamr":
        index = _paraphrases(args, [splits[s] for s in chosen], columns)
    out, stats, failures = {}, {}, []
    for split, data in splits.items():
        if split not in chosen:
            out[split] = data
            continue
        result = augment(
            data,
            method=args.method,
            n=args.n,
            columns=columns,
            seed=args.seed,
            reda=reda,
            lm=lm,
            paraphrases=index,
            num_proc=args.num_proc,
            max_chars=args.max_chars,
        )
        out[split], stats[split] = result.dataset, result.stats
        failures += [{"split": split, **f} for f in result.failures]
        print(
            f"{split}: {result.stats['input_rows']} rows + {result.stats['added_rows']} added "
            f"({result.stats['repeats_removed']} repeats removed, {result.stats['bad_rows']} bad rows)"
        )
    for f in failures[:20]:
        print(
            f"bad row: {f['split']} index {f['index']}, column {f['column']}: {f['reason']}", file=sys.stderr
        )
    if len(failures) > 20:
        print(f"... and {len(failures) - 20} more in failures/augment.jsonl", file=sys.stderr)
    card = render_card(
        method=args.method,
        n=args.n,
        seed=args.seed,
        source=args.dataset,
        columns=columns,
        rows={s: len(d) for s, d in out.items()},
        augmented_splits=chosen,
        stats=stats,
        signature=lm.signature() if lm else None,
    )
    output = args.output or f"augmented-{args.method}"
    write_folder(
        out,
        output,
        card=card,
        failures=failures,
        rows_per_shard=args.rows_per_shard,
        overwrite=args.overwrite,
    )
    print(f"wrote {output}")
    return 0


def _paraphrases(args: argparse.Namespace, datasets, columns):
    """The ParaphraseIndex of the texts to augment: from --paraphrases, or generated now."""
    from paraamr.augment.runner import problem
    from paraamr.augment.source import ParaphraseIndex
    from paraamr.records import normalize

    texts = {}
    for data in datasets:
        for col in columns:
            for text in data[col]:
                if problem(text, args.max_chars) is None:
                    texts.setdefault(normalize(text), text)
    if args.paraphrases:
        index = ParaphraseIndex.from_path(
            args.paraphrases, keys=set(texts), max_perplexity=args.max_perplexity
        )
    else:
        from paraamr.augment.source import generate_index

        index, failures = generate_index(
            texts.values(),
            parser_model=args.parser_model,
            generator_model=args.generator_model,
            lm_model=args.lm_model,
            max_perplexity=args.max_perplexity,
            device=args.device,
            seed=args.seed,
        )
        for failure in failures:
            print(
                f"generator: no paraphrases for {failure['text']!r}: {failure['stage']}: {failure['reason']}",
                file=sys.stderr,
            )
    print(f"paraphrases found for {len(index)} of {len(texts)} distinct texts")
    return index
