"""``paraamr augment --dataset D --method paraamr|reda|reda-ng --n K``: augment a dataset with ParaAMR
paraphrases, REDA or REDA+NG (Hub-ready output folder).

Add up to K new versions of each text of a dataset (one text column, or a sentence pair crossed with
the other side), labels kept, and write a Hub-ready folder: data/default/{split}-*.parquet, README.md
(card) and failures/failures-*.jsonl for bad rows."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from paraamr.extras import require
from paraamr.filters import PAPER_USES
from paraamr.models.catalog import DEFAULTS
from paraamr.options import SEED, license_id, number, optional_float, path_text, positive
from paraamr.outputs import check_not_input, check_writable_file
from paraamr.progress import Progress, add_progress_options, progress_mode
from paraamr.report import counted
from paraamr.signals import check

#: ``--n`` when neither it nor ``--recipe`` is given.
DEFAULT_N = 2


def _size(value: str) -> int:
    from paraamr.layout import parse_size

    try:
        return parse_size(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


#: The paraamr method's options that have a default: one of another value is an option given.
PARAAMR_DEFAULTS = {
    "max_perplexity": PAPER_USES["few-shot"],
    "parser_model": DEFAULTS["parser"],
    "realizer_model": DEFAULTS["realizer"],
    "lm_model": DEFAULTS["lm"],
}
#: The most ``--draws`` (REDA+NG scores every one of a text's tries with its LM).
MAX_DRAWS = 1000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``paraamr augment``."""
    parser.add_argument(
        "--dataset", required=True, type=path_text, help="local file/folder or Hub dataset id"
    )
    parser.add_argument("--dataset-config", default=None, help="config name of a Hub dataset (e.g. mrpc)")
    parser.add_argument("--method", required=True, choices=("paraamr", "reda", "reda-ng"))
    parser.add_argument(
        "--n",
        type=positive(),
        default=None,
        help=f"new texts per text column and row (default: {DEFAULT_N}; not with --recipe)",
    )
    parser.add_argument(
        "--split",
        action="append",
        default=None,
        help="split to augment (repeatable; default: train, else every split); others are copied",
    )
    parser.add_argument(
        "--columns", nargs="+", default=None, help="the one or two text columns (default: guessed)"
    )
    parser.add_argument(
        "--output", type=path_text, default=None, help="output folder (default: augmented-METHOD)"
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace a non-empty output folder (and a --save-lm file)"
    )
    parser.add_argument("--seed", type=number(**SEED), default=0, help="random seed (default: %(default)s)")
    parser.add_argument("--num-proc", type=positive(), default=None, help="processes for datasets.map")
    add_progress_options(parser)
    parser.add_argument(
        "--max-shard-size",
        type=_size,
        default="500MB",
        metavar="SIZE",
        help="largest shard, in Arrow bytes as push_to_hub counts them (default: %(default)s)",
    )
    parser.add_argument("--license", type=license_id, help="license id for the card (default: unknown)")
    from paraamr.commands.push import add_hub_options

    add_hub_options(parser)
    parser.add_argument(
        "--max-chars",
        type=positive(),
        default=None,
        help="longer texts are kept but not augmented, and listed as failures (default: no limit)",
    )
    g = parser.add_argument_group("paraamr method")
    g.add_argument("--paraphrases", default=None, help="ParaAMR release JSONL (.zip/.gz) or dataset folder")
    g.add_argument(
        "--max-perplexity",
        type=optional_float,
        default=PARAAMR_DEFAULTS["max_perplexity"],
        help="skip paraphrases above this perplexity (default: %(default)s, the paper's few-shot setting; "
        "'none' keeps all)",
    )
    g.add_argument("--generate", action="store_true", help="generate paraphrases on the fly instead")
    for kind, about in (("parser", ""), ("realizer", ""), ("lm", "perplexity LM of the generator; ")):
        default = PARAAMR_DEFAULTS[f"{kind}_model"]
        g.add_argument(f"--{kind}-model", default=default, help=f"{about}default: %(default)s")
    g.add_argument("--device", default=None)
    g.add_argument(
        "--no-download",
        action="store_true",
        help="never fetch a missing model (as HF_HUB_OFFLINE=1): stop with what to fetch",
    )
    g.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="let a model folder run code other than amrlib's own inference classes",
    )
    from paraamr.commands.stats import add_archive_options

    add_archive_options(parser)
    g = parser.add_argument_group("reda / reda-ng methods")
    g.add_argument(
        "--draws",
        type=number(int, low=1, high=MAX_DRAWS),
        default=None,
        help="tries per operator behind the pool (default: 20; with --recipe paper the paper's: 20, 50, "
        f"100 for 1, 2, 3 edits, 50 per edit above, at most 200; RM 50; at most {MAX_DRAWS:,}: "
        "reda-ng scores every try)",
    )
    g.add_argument(
        "--recipe",
        choices=("paper",),  # paraamr.augment.runner.RECIPES (not imported: --help stays instant)
        default=None,
        help="paper: the paper's outputs per operator by the split's size instead of --n: 2 SR + 2 RS + "
        "1 RI + 1 RD + 1 RM below 50,000 rows (its 5k/10k sets), one of each from 50,000 (default: none)",
    )
    g.add_argument(
        "--mix",
        choices=("2", "2-4"),
        default=None,
        help="operators RM applies, one edit each: 2, or 2-4 drawn each time as REDA's code (default: 2)",
    )
    g.add_argument(
        "--language",
        choices=("en", "zh"),
        default="en",
        help="en: whitespace tokens + WordNet synonyms; zh: jieba + HIT Tongyici Cilin, tokens joined "
        "without spaces (default: %(default)s; the card's language)",
    )
    g.add_argument(
        "--tokenizer",
        choices=("whitespace", "jieba"),
        default=None,
        help="how texts are cut into the tokens REDA edits and the LM counts (default: the language's)",
    )
    g.add_argument(
        "--synonyms",
        metavar="FILE",
        default=None,
        help="your synonym dictionary instead of the language's: one word and its synonyms per line "
        "(tab- or space-separated), or JSON {word: [synonyms]}",
    )
    g.add_argument(
        "--lm-corpus",
        metavar="PATH",
        default=None,
        help="train the n-gram LM on this independent corpus: a text file (plain or gzip), one sentence "
        "a line, or a folder of them (default: the installed LM, else the augmented texts: in-sample)",
    )
    g.add_argument(
        "--lm",
        default=None,
        help="n-gram LM saved with --save-lm (default: the one installed at "
        "$PARAAMR_CACHE/ngram/<tokenizer>.parquet, else trained on the augmented texts)",
    )
    g.add_argument("--save-lm", default=None, help="write the n-gram LM used by reda-ng here (Parquet)")


def run(args: argparse.Namespace) -> int:
    """Load, augment each chosen split, write the folder, holding the output folder's lock throughout."""
    from paraamr.augment.folder import claim_output
    from paraamr.errors import UsageError

    _check_options(args)
    output = args.output or f"augmented-{args.method}"
    if Path(args.dataset).is_dir() and Path(output).resolve().is_relative_to(Path(args.dataset).resolve()):
        raise UsageError(f"--output {output}: inside --dataset {args.dataset}, read as its input next time")
    with claim_output(Path(output), args.overwrite):
        return _run(args, output)


def _run(args: argparse.Namespace, output: str) -> int:
    from paraamr.atomic import atomic_file, remove_temps
    from paraamr.augment.folder import CACHE, augment_card, write_folder
    from paraamr.augment.inputs import load_splits
    from paraamr.augment.reda import paper_recipe
    from paraamr.augment.runner import augment, check_columns, detect_columns, unaugmented
    from paraamr.errors import about, check_splits

    language = None
    if args.method != "paraamr":  # a bad synonym file, before any work too
        from paraamr.augment.languages import setup

        language = setup(args.language, args.tokenizer, args.synonyms)
    mode = progress_mode(args.progress)
    with _library_bars(mode == "bar"):  # datasets' bars: only where the display is a bar
        splits = load_splits(args.dataset, args.dataset_config)
    chosen = list(dict.fromkeys(args.split or ())) or (["train"] if "train" in splits else list(splits))
    check_splits(args.dataset, chosen, list(splits))
    names = splits[chosen[0]].column_names
    with about(args.dataset):
        columns = check_columns(splits[chosen[0]].features, args.columns or detect_columns(names))
    reda = lm = index = None
    if args.method == "paraamr":
        index = _paraphrases(args, [splits[s] for s in chosen], columns)
    else:
        reda, lm = _reda(args, *language, [splits[s] for s in chosen], columns)
    out, stats, failures = {}, {}, []
    display = Progress(  # lines in a log; a bar is datasets' own (it counts the rows of every process)
        f"augment ({args.method})",
        total=sum(len(splits[s]) for s in chosen),
        unit="rows",
        mode="log" if mode == "log" else "none",
    )
    cache = Path(output) / CACHE  # in the output's state: gone with it, or with a killed run's
    cache.mkdir(parents=True, exist_ok=True)
    for split, data in splits.items():
        if split not in chosen:
            out[split] = unaugmented(data)
            continue
        check()  # a signal Python dropped (datasets' weakref callbacks) stops the run here
        with _library_bars(mode == "bar"):
            result = augment(
                data,
                method=args.method,
                n=args.n or DEFAULT_N,
                recipe=args.recipe,
                columns=columns,
                seed=args.seed,
                reda=reda,
                lm=lm,
                paraphrases=index,
                num_proc=args.num_proc,
                max_chars=args.max_chars,
                cache_dir=cache,  # never beside the input (a save_to_disk folder is the user's)
            )
        out[split], stats[split] = result.dataset, result.stats
        display.update(display.done + len(data), added=sum(v["added_rows"] for v in stats.values()))
        told = ""
        if args.recipe:
            told = "; recipe paper: " + " + ".join(f"{c} {op}" for op, c in paper_recipe(len(data)).items())
        failures += [{"split": split, **f} for f in result.failures]
        print(
            f"{split}: {counted(result.stats['input_rows'], 'row')} + {result.stats['added_rows']:,} added "
            f"({counted(result.stats['repeats_removed'], 'repeat')} removed, "
            f"{counted(result.stats['bad_rows'], 'bad row')})" + told
        )
    display.close()
    for f in failures[:20]:
        print(
            f"bad row: {f['split']} index {f['index']}, column {f['column']}: {f['reason']}", file=sys.stderr
        )
    if len(failures) > 20:
        print(f"... and {len(failures) - 20} more under {output}/failures/", file=sys.stderr)
    check()  # ... or here, before anything is written
    recipe = {"recipe": args.recipe} if args.recipe else {}
    most = max(sum(paper_recipe(len(splits[s])).values()) for s in chosen) if args.recipe else None
    card = augment_card(
        method=args.method,
        n=most or args.n or DEFAULT_N,
        recipe=args.recipe,
        seed=args.seed,
        source=_public(args.dataset),
        columns=columns,
        rows={s: len(d) for s, d in out.items()},
        augmented_splits=chosen,
        stats=stats,
        signature=lm.signature() if lm else None,
        method_signature=str(reda.signature(args.method).extend(**recipe)) if reda else None,
        paraphrases=_paraphrase_source(args) if args.method == "paraamr" else None,
        language=args.language,
        license=args.license,
        labelled=_labelled(splits[chosen[0]]),
        repo_id=args.push_to_hub,
    )
    with contextlib.ExitStack() as stack:
        if args.save_lm:  # written before the folder (a full disk stops the run there), in place after it
            remove_temps(args.save_lm)  # what a killed run left
            staged = stack.enter_context(atomic_file(args.save_lm))  # a run stopped leaves no file to refuse
            with about(args.save_lm):
                lm.save(staged, atomic=False)
        write_folder(
            out,
            output,
            card=card,
            failures=failures,
            max_shard_size=args.max_shard_size,
            overwrite=args.overwrite,
        )
        print(f"wrote {output}")
    if args.push_to_hub:
        from paraamr.commands.push import push_with_options

        return push_with_options(output, args.push_to_hub, args, written=True)
    return 0


def _reda(args: argparse.Namespace, tokenizer, synonyms, datasets, columns):
    """REDA with the run's tokenizer and synonyms, and for reda-ng its n-gram LM (loaded or trained);
    the input is segmented here, once, before any worker process starts."""
    from paraamr.augment.ngram import IN_SAMPLE, NgramLM, installed_lm, read_corpus
    from paraamr.augment.reda import DEFAULT_DRAWS, PAPER_DRAWS, REDA
    from paraamr.errors import InputError

    draws = args.draws or (PAPER_DRAWS if args.recipe else DEFAULT_DRAWS)
    mix = (2, 4) if args.mix == "2-4" else (2, 2)
    reda = REDA(seed=args.seed, draws=draws, synonyms=synonyms, tokenizer=tokenizer, mix=mix)
    texts = [text for data in datasets for col in columns for text in data[col] if isinstance(text, str)]
    tokenizer.segment_all(texts)
    if args.method != "reda-ng":
        return reda, None
    installed = installed_lm(tokenizer)
    path = args.lm or (None if args.lm_corpus or not installed.is_file() else installed)
    if path:
        lm = NgramLM.load(path)
        if lm.tokenizer.lm_name != tokenizer.lm_name:
            raise InputError(
                f"{path}: this n-gram LM tokenizes with {lm.tokenizer.lm_name}, the run with "
                f"{tokenizer.lm_name} (--language/--tokenizer)"
            )
        told = f"loaded from {path}" + ("" if args.lm else " (installed)")
    elif args.lm_corpus:
        name = re.sub(r"[|:\s]", "_", Path(args.lm_corpus).resolve().name)
        corpus = read_corpus(args.lm_corpus)
        lm = NgramLM.train(corpus, tokenizer=tokenizer, source=f"corpus:{name}", once=True)
        if not lm.total:  # (before --save-lm: an LM of no counts would break every later run)
            raise InputError(f"--lm-corpus {args.lm_corpus}: no text to train the n-gram LM on")
        told = f"trained on {args.lm_corpus} ({lm.lines:,} lines, {lm.total:,} tokens)"
    else:
        lm = NgramLM.train(texts, tokenizer=tokenizer, source=IN_SAMPLE)
        told = (
            "trained on the texts it augments (in-sample: it favours edits that restore them, see "
            f"docs/augment.md); give --lm-corpus, or install an LM at {installed}"
        )
    print(f"reda-ng: n-gram LM {told}", file=sys.stderr)
    return reda, lm


def _labelled(dataset) -> bool:
    """Whether rows carry a label (a ``label``/``labels`` column or a ClassLabel feature)."""
    from datasets import ClassLabel

    names = dataset.column_names
    return any(n in ("label", "labels") for n in names) or any(
        isinstance(f, ClassLabel) for f in dataset.features.values()
    )


def _check_options(args: argparse.Namespace) -> None:
    """Options that do not go with the method, or names that break datasets' rules
    (:func:`paraamr.layout.check_name`): a usage error (exit 2), before anything is read."""
    from paraamr.builder.hub import check_push
    from paraamr.commands.push import push_of
    from paraamr.commands.stats import ARCHIVE_DEFAULTS, archive_limits
    from paraamr.errors import InputError, UsageError
    from paraamr.layout import check_name

    push = push_of(args)  # a bad repo id, or --private, --revision, --token without --push-to-hub
    archive_limits(args)
    for split in args.split or ():
        try:
            check_name("split", split)
        except ValueError as err:
            raise UsageError(f"--split: {err}") from None

    if args.recipe and args.n is not None:
        raise UsageError("--recipe paper sets the outputs per operator: not with --n")
    if args.lm and args.lm_corpus:
        raise UsageError("--lm, --lm-corpus: give one n-gram LM, loaded or trained (not both)")
    if args.method == "paraamr" and bool(args.paraphrases) == bool(args.generate):
        raise UsageError("--method paraamr needs exactly one of --paraphrases PATH and --generate")
    if args.generate:  # the models' libraries, before any work
        require("generate")
    if args.method == "paraamr" and args.language != "en":
        raise UsageError(
            f"--language {args.language}: only with --method reda or reda-ng (ParaAMR is English)"
        )
    # options that go with some methods only: the message names the whole group, or those given
    for names, methods, whole in (
        (("tokenizer", "synonyms"), ("reda", "reda-ng"), True),
        (("recipe", "mix", "draws"), ("reda", "reda-ng"), True),
        (("paraphrases", "generate", "device", "no_download", "trust_remote_code"), ("paraamr",), False),
        (tuple(PARAAMR_DEFAULTS), ("paraamr",), False),
        (("lm", "lm_corpus", "save_lm"), ("reda-ng",), False),
    ):
        values = {n: getattr(args, n) for n in names}  # with a default: any other value ('none', 0 too)
        given = [n for n, v in values.items() if (v != PARAAMR_DEFAULTS[n] if n in PARAAMR_DEFAULTS else v)]
        if given and args.method not in methods:
            options = ", ".join("--" + n.replace("_", "-") for n in (names if whole else given))
            raise UsageError(f"{options}: only with --method {' or '.join(methods)} (not {args.method})")
    given = [f"--{n.replace('_', '-')}" for n, d in ARCHIVE_DEFAULTS.items() if getattr(args, n) != d]
    if given and not args.paraphrases:  # the only archive augment reads
        raise UsageError(f"{', '.join(given)}: only with --paraphrases (the archive they bound)")
    if args.dataset_config and Path(args.dataset).is_file():
        raise UsageError(f"--dataset-config: only with a Hub dataset or a folder ({args.dataset} is a file)")
    if args.save_lm:  # neither a file of the user's nor one the run reads
        reads = [p for p in (args.dataset, args.lm, args.lm_corpus) if p]
        check_not_input(args.save_lm, *reads, name="--save-lm")
        if Path(args.save_lm).is_dir():
            raise UsageError(f"--save-lm {args.save_lm}: is a folder (the LM is one Parquet file)")
        if os.path.lexists(args.save_lm) and not args.overwrite:  # a link to nowhere too
            raise UsageError(f"--save-lm {args.save_lm}: exists (pass --overwrite to replace it)")
        try:  # it is written after the folder: a place it cannot go is said first
            check_writable_file(args.save_lm)
        except InputError as err:
            raise UsageError(f"--save-lm {err}") from None
    check_push(push, "paraamr augment")


def _generator_settings(args: argparse.Namespace) -> dict:
    """The generator's settings by field name (:func:`paraamr.settings.split_settings`)."""
    models = ("parser_model", "realizer_model", "lm_model")
    names = (*models, "max_perplexity", "device", "seed", "trust_remote_code", "progress")
    return {n: getattr(args, n) for n in names} | {"download": not args.no_download}


def _public(spec: str) -> str:
    """An input as a published card names it: a local file or folder by its name, a Hub id as given."""
    local = Path(spec)
    return local.resolve().name if local.exists() else spec


def _paraphrase_source(args: argparse.Namespace) -> str:
    """The card's words on where the paraamr method's paraphrases came from (never a local path)."""
    from paraamr.card import code
    from paraamr.card.settings import model_name

    kept = "all kept" if args.max_perplexity is None else f"perplexity ≤ {args.max_perplexity:g}"
    if args.paraphrases:
        return f"looked up among the sources of {code(_public(args.paraphrases))} ({kept})"
    kinds = ("parser", "realizer", "lm")
    models = ", ".join(f"{kind} {model_name(getattr(args, f'{kind}_model'), None)}" for kind in kinds)
    return f"generated on the fly by AMR back-translation ({models}; {kept})"


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
        from paraamr.commands.stats import archive_limits

        index = ParaphraseIndex.from_path(
            args.paraphrases, keys=set(texts), max_perplexity=args.max_perplexity, limits=archive_limits(args)
        )
    else:
        from paraamr.augment.source import generate_index

        index, failures = generate_index(texts.values(), **_generator_settings(args))
        for failure in failures:
            print(
                f"generator: no paraphrases for {failure['text']!r}: {failure['stage']}: {failure['reason']}",
                file=sys.stderr,
            )
    print(f"paraphrases found for {len(index)} of {len(texts)} distinct texts")
    return index


@contextlib.contextmanager
def _library_bars(on: bool) -> Iterator[None]:
    """``datasets``' progress bars on (or off) for the block, as they were afterwards."""
    from datasets.utils import logging

    before = logging.is_progress_bar_enabled()
    (logging.enable_progress_bar if on else logging.disable_progress_bar)()
    try:
        yield
    finally:
        (logging.enable_progress_bar if before else logging.disable_progress_bar)()
