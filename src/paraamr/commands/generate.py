"""``paraamr generate``: build a ParaAMR-style corpus folder from text or AMR graphs.

Build a ParaAMR-style corpus folder (a Hub dataset repo) from text or AMR graphs. For several
processes or GPUs: accelerate launch -m paraamr.generate ... (same options).

This module only parses options into settings (:class:`~paraamr.builder.settings.RecordSettings`,
:class:`~paraamr.builder.settings.RunSettings`) and hands them to :func:`paraamr.builder.run.execute`.

>>> args = build_parser().parse_args(["--input", "in.txt", "--max-perplexity", "50", "--foci", "3"])
>>> record, run = settings_from_args(args)
>>> record.max_perplexity, record.foci, record.lm_model, run.window
(50.0, 3, 'gpt2', 256)
>>> parse = lambda *argv: settings_from_args(build_parser().parse_args(["--input", "x", *argv]))[0]
>>> parse("--max-perplexity", "none").max_perplexity
>>> parse("--realizer-model", "g").realizer_model
'g'
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from paraamr.amr import FOCI_RULES, LINEARIZATIONS
from paraamr.builder.settings import TAGGINGS, RecordSettings, RunSettings
from paraamr.errors import UsageError
from paraamr.extras import require
from paraamr.network import HELP as HUB_HELP
from paraamr.options import SHARD_HELP, ArgumentParser, number, optional_float, positive, shard_spec
from paraamr.progress import add_progress_options
from paraamr.signals import Interrupted

__all__ = ["add_arguments", "build_parser", "dry_run", "run", "settings_from_args"]

_INPUTS = ("input", "input_format", "text_column", "dataset", "dataset_config", "dataset_split", "amr_input")
_SPLITS = ("split", "validation_fraction", "test_fraction")
#: Record settings given as options (besides inputs and splits); absent from the namespace unless given.
_RECORD_OPTIONS = tuple(f.name for f in fields(RecordSettings) if f.name not in _INPUTS + _SPLITS)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the generator's options to ``parser`` (shared by ``generate.py`` and ``paraamr generate``)."""
    d, r = RecordSettings(), RunSettings()
    given = {"default": argparse.SUPPRESS}  # record options: absent unless given (see --preset)
    src = parser.add_argument_group("input (one of)")
    src.add_argument(
        "--input",
        metavar="PATH|-",
        help="sentences: .txt (one a line; - is stdin), .jsonl, .json, .csv or .parquet",
    )
    src.add_argument("--dataset", metavar="NAME", help="a local or Hub dataset (datasets.load_dataset)")
    src.add_argument("--amr-input", metavar="PATH", help="PENMAN AMR graphs (the parser is skipped)")
    src.add_argument(
        "--input-format",
        choices=["txt", "jsonl", "json", "csv", "parquet"],
        help="format of --input (default: from the suffix)",
    )
    src.add_argument(
        "--text-column",
        default="text",
        help="text field of jsonl/json/csv/parquet/dataset (default: %(default)s)",
    )
    src.add_argument("--dataset-config", help="config name of --dataset")
    src.add_argument("--dataset-split", help="split of --dataset to read (default: --split)")
    out = parser.add_argument_group("output")
    out.add_argument("--output", default="paraamr", metavar="DIR", help="output folder (default: ./paraamr)")
    out.add_argument("--split", default="train", help="name of the split written (default: train)")
    out.add_argument(
        "--validation-fraction",
        type=number(float, low=0, high=1),
        default=0.0,
        help="fraction to 'validation', by id",
    )
    out.add_argument(
        "--test-fraction", type=number(float, low=0, high=1), default=0.0, help="fraction to 'test', by id"
    )
    out.add_argument(
        "--max-shard-size",
        default=r.max_shard_size,
        metavar="SIZE",
        help="size of the finished Parquet shards, as push_to_hub's (default: %(default)s)",
    )
    out.add_argument(
        "--commit-every",
        type=positive(),
        default=r.commit_every,
        metavar="N",
        help="commit (make resumable) every N input rows of each process: windows end there, so a "
        "kill or Ctrl-C loses at most N rows' work whatever --window is (default: %(default)s)",
    )
    out.add_argument("--license", help="license of the card (default: unknown)")
    out.add_argument(
        "--overwrite",
        action="store_true",
        help="start over, deleting an earlier run's files in DIR (with --shard: this shard's only)",
    )
    cluster = parser.add_argument_group(
        "cluster (independent shards, e.g. a Slurm array; see docs/generate.md)"
    )
    cluster.add_argument("--shard", metavar="I/N|slurm", type=shard_spec, help=SHARD_HELP)
    cluster.add_argument(
        "--finalize",
        choices=["no", "auto"],
        default="no",
        help="with --shard: 'auto' lets the last shard to finish write the summary, shards and card "
        "(and push); 'no' (default) leaves that to `paraamr finalize DIR`",
    )
    add_executor_options(parser)
    hub = parser.add_argument_group("publish")
    hub.add_argument(
        "--push-to-hub",
        metavar="REPO_ID",
        help=f"upload the finished folder to this dataset repo ({HUB_HELP})",
    )
    hub.add_argument("--private", action="store_true", help="create the repo private")
    hub.add_argument("--revision", help="branch to upload to (created when missing)")
    hub.add_argument("--token", help="Hub token (default: HF_TOKEN or `hf auth login`); never printed")
    models = parser.add_argument_group("models (registry name, Hub id or local dir)")
    models.add_argument("--preset", choices=["paper"], help="the paper's settings (Huang et al. 2023)")
    models.add_argument("--parser-model", **given, help=f"default: {d.parser_model}")
    models.add_argument(
        "--realizer-model",
        **given,
        help=f"AMR-to-text model (default: {d.realizer_model})",
    )
    models.add_argument("--lm-model", **given, help=f"perplexity LM (default: {d.lm_model})")
    models.add_argument(
        "--similarity-model",
        **given,
        help="score similarity to the source with this embedder, e.g. all-MiniLM-L6-v2 (default: none)",
    )
    models.add_argument(
        "--quality-model", metavar="DIR", **given, help="paraphrase-quality model (default: none, not scored)"
    )
    models.add_argument(
        "--no-download", dest="download", action="store_false", help="never fetch a missing model"
    )
    models.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="let an amrlib model folder run code other than amrlib's own inference classes",
    )
    filt = parser.add_argument_group("stages and filters")
    filt.add_argument("--foci", **given, help="'all' (default) or k foci per graph, chosen with --seed")
    filt.add_argument("--seed", type=int, **given, help=f"default: {d.seed}")
    filt.add_argument(
        "--heuristic-foci",
        dest="heuristic",
        action="store_true",
        **given,
        help="only foci without incoming edges (amrlib's heuristic)",
    )
    filt.add_argument(
        "--mod-as-domain", action="store_true", **given, help="write an inverted :mod as :domain"
    )
    filt.add_argument(
        "--foci-rule",
        choices=list(FOCI_RULES),
        **given,
        help=f"which nodes may be foci: every-node (the paper's: all but the root) or skip-structural "
        f"(also not {', '.join(sorted(FOCI_RULES['skip-structural']))}; default: {d.foci_rule})",
    )
    filt.add_argument(
        "--linearization",
        choices=LINEARIZATIONS,
        **given,
        help="how a re-rooted graph is written: penman (penman.encode, the paper's) or paraamr "
        f"(ours: each node defined at its first mention, faster; default: {d.linearization})",
    )
    filt.add_argument(
        "--tagging",
        choices=TAGGINGS,
        **given,
        help="realizer input: tagged with the source sentence's POS tags (needs a spaCy English model) "
        "or untagged (the graph alone, as the paper); auto (default): tagged when a spaCy model is "
        "installed. Recorded; a resume with the other is refused",
    )
    filt.add_argument(
        "--max-perplexity",
        type=optional_float,
        **given,
        help="drop candidates above this perplexity at generation, a space saver (default: none: every "
        "candidate is kept with its perplexity, as in the ParaAMR release; the paper filters at 120 / "
        "110 / 85 where the data is used)",
    )
    filt.add_argument(
        "--max-relative-perplexity",
        type=optional_float,
        **given,
        help="drop candidates above this ratio to the source's own perplexity (default: none)",
    )
    filt.add_argument(
        "--min-similarity",
        type=number(float, low=-1, high=1),
        **given,
        help="drop candidates below this similarity (default: none)",
    )
    filt.add_argument(
        "--min-quality",
        type=number(float, low=-1, high=1),
        **given,
        help="drop candidates below this quality score (default: none)",
    )
    filt.add_argument(
        "--max-chars", type=positive(), **given, help=f"longer sources are failures (default {d.max_chars})"
    )
    filt.add_argument(
        "--max-amr-nodes",
        type=int,
        **given,
        help=f"a graph (given or parsed) with more nodes is a failure, seen before it is parsed "
        f"(default {d.max_amr_nodes})",
    )
    filt.add_argument(
        "--max-amr-depth",
        type=int,
        **given,
        help=f"a graph nested deeper is a failure, seen before it is parsed (default {d.max_amr_depth})",
    )
    filt.add_argument(
        "--dtype",
        choices=["float32", "bfloat16", "float16"],
        **given,
        help="model dtype (default: float32 on the CPU, bfloat16 on a GPU that has it, else float16)",
    )
    filt.add_argument(
        "--backend",
        choices=["auto", "transformers", "ctranslate2"],
        **given,
        help="inference engine of the models (default auto: ctranslate2 when installed, else transformers)",
    )
    filt.add_argument(
        "--compute-type",
        choices=["auto", "int8", "float32", "float16", "bfloat16", "int8_float16"],
        **given,
        help="ctranslate2 compute type (default auto: float32 on the CPU, the same outputs as "
        "transformers; bfloat16 or float16 on a GPU; int8 changes outputs a little, see docs/models.md)",
    )
    filt.add_argument("--num-beams", type=positive(), **given, help="parser beams (default: the model's)")
    run = parser.add_argument_group("execution")
    run.add_argument("--device", help="device of the models (default: the process's accelerator, else cpu)")
    for stage, old_name, what in (
        ("parse", None, "sentences"),
        ("realize", "generate", "graphs"),
        ("lm", None, "paraphrases"),
    ):
        names = [f"--{stage}-batch-size", *([f"--{old_name}-batch-size"] if old_name else [])]
        dest = f"{stage}_batch_size"
        run.add_argument(
            *names,
            dest=dest,
            type=positive(),
            default=getattr(r, dest),
            help=f"{what} a batch (default: %(default)s)",
        )
    run.add_argument(
        "--window",
        type=positive(),
        default=r.window,
        help="rows per processing window (default: %(default)s)",
    )
    run.add_argument(
        "--no-pipeline",
        dest="pipelined",
        action="store_false",
        help="do not overlap CPU stages with model stages",
    )
    run.add_argument(
        "--commit-seconds",
        type=positive(float),
        default=r.commit_seconds,
        metavar="S",
        help="also commit at the end of the first window that ends S seconds after the last commit "
        "(a window is at most --window rows: lower it for finer time-based commits; default: %(default)s)",
    )
    add_progress_options(run)
    run.add_argument("--verbose", action="store_true", help="let the libraries log and draw their bars")
    run.add_argument("--dry-run", action="store_true", help="print the plan; load no model")
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The option parser of ``generate.py``."""
    return add_arguments(
        ArgumentParser(prog="generate.py", description="Generate a ParaAMR-style paraphrase corpus folder.")
    )


def settings_from_args(args: argparse.Namespace) -> tuple[RecordSettings, RunSettings]:
    """The settings of parsed options: ``--preset paper`` is :meth:`RecordSettings.paper`, and an
    option given with another value than the paper's is refused."""
    inputs: dict[str, Any] = {n: getattr(args, n, None) for n in _INPUTS + _SPLITS}
    for key in ("input", "amr_input"):
        if inputs[key] and inputs[key] != "-":
            inputs[key] = str(Path(inputs[key]).resolve())
    given = {n: getattr(args, n) for n in _RECORD_OPTIONS if hasattr(args, n)}
    if getattr(args, "preset", None) == "paper":
        paper = RecordSettings.paper(**inputs)
        clash = [k for k, v in given.items() if v != getattr(paper, k) and not _paper_allows(k, v)]
        if clash:
            raise UsageError(
                "--preset paper sets "
                + ", ".join(f"--{k.replace('_', '-')} {getattr(paper, k)}" for k in clash)
                + "; drop those options"
            )
        record = RecordSettings.paper(**inputs, **given)
    else:
        record = RecordSettings(**inputs, **given)
    run = RunSettings(**{f.name: getattr(args, f.name) for f in fields(RunSettings) if hasattr(args, f.name)})
    return record, run


def _paper_allows(name: str, value: Any) -> bool:
    """Whether ``--preset paper`` takes option ``name`` with ``value``: a ``--max-perplexity`` (a
    space saver) and a model option naming a local folder or file (a copy of the preset's model, for
    offline use)."""
    if name == "max_perplexity":
        return True
    local = isinstance(value, str) and Path(value).expanduser().exists()
    return name in ("parser_model", "realizer_model", "lm_model") and local


#: What ``--dry-run`` says of the output folder, by :func:`~paraamr.builder.checks.check_run`'s mode.
_MODE_NOTE = {"new": "", "resume": "  (resumes an earlier run)", "overwrite": "  (replaces an earlier run)"}


def dry_run(
    record: RecordSettings,
    output: str | Path,
    shard: tuple[int, int] | None = None,
    *,
    overwrite: bool = False,
) -> int:
    """Print the plan: input rows found, processes (and shard), models (and whether they are on
    disk), output; fetches, loads and writes nothing. Runs the run's own checks of the input and
    the output folder (:func:`~paraamr.builder.checks.check_run`): refused here as it would be there."""
    from paraamr.builder import readers
    from paraamr.builder.checks import check_run
    from paraamr.builder.run import launch_info, launch_warning
    from paraamr.builder.state import RunFolder
    from paraamr.errors import ModelNotFoundError
    from paraamr.models.resolve import resolve

    rank, n = launch_info()
    if rank != 0:
        return 0
    folder = RunFolder(output, rank=0, num_processes=n)
    _, mode = check_run(record, folder, overwrite=overwrite, models=False)
    warning = launch_warning()
    if warning:
        print(f"paraamr generate: warning: {warning}", file=sys.stderr)
    if record.input == "-":
        found = "stdin (not counted)"
    elif record.dataset:
        found = "a dataset (not counted)"
    else:
        path = record.amr_input or record.input
        found = f"{readers.count_rows(path, fmt='amr' if record.amr_input else record.input_format)} rows"
    print(f"input:     {record.source}: {found}")
    print(f"processes: {n}")
    if shard is not None:
        print(f"shard:     {shard[0]} of {shard[1]} (the rows whose id falls to it; no rendezvous)")
    missing = []
    for kind, name in record.models().items():
        try:
            resolve(name, kind)
            note = ""
        except ModelNotFoundError as err:
            note, _ = "  (MISSING: fetched on first use when online)", missing.append(str(err))
        print(f"{kind + ':':<10} {name}{note}")
    print(
        f"filters:   max perplexity {record.max_perplexity}, relative {record.max_relative_perplexity}, "
        f"foci {record.foci} (seed {record.seed}, rule {record.foci_rule})"
    )
    print(f"method:    linearization {record.linearization}, realizer input {record.tagging}")
    print(
        f"output:    {folder.path}  splits {', '.join(record.splits())}"
        + _MODE_NOTE[mode]
    )
    for message in missing:
        print(message, file=sys.stderr)
    return 0


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    """The options that hand a generate run to a datatrove executor."""
    group = parser.add_argument_group(
        "executors (datatrove: the run cut into tasks, each --shard I/TASKS; see docs/scale.md)"
    )
    group.add_argument(
        "--executor",
        choices=("none", "local", "slurm"),
        default="none",
        help="'local': the tasks on this machine, --workers at a time; 'slurm': a Slurm job array of the "
        "tasks and a finalize job after it; 'none' (default): this process (or launcher) runs the whole run",
    )
    group.add_argument("--tasks", type=int, metavar="T", help="number of tasks (default: --workers)")
    group.add_argument("--workers", type=int, default=1, metavar="K", help="tasks at once (default: 1)")
    group.add_argument("--slurm-partition", metavar="P", help="Slurm partition (for --executor slurm)")
    group.add_argument(
        "--slurm-time", default="24:00:00", metavar="T", help="time limit per task (default: %(default)s)"
    )
    group.add_argument("--slurm-cpus", type=int, default=4, metavar="N", help="CPUs per task (default: 4)")
    group.add_argument("--slurm-gpus", type=int, default=0, metavar="N", help="GPUs per task (default: 0)")


def run(args: argparse.Namespace) -> int:
    """Run the generator for parsed options; return the exit status (errors are raised)."""
    require("generate")
    from paraamr.builder.run import Push, execute, launch_info

    record, settings = settings_from_args(args)
    if not record.source:
        raise UsageError("give one of --input, --dataset, --amr-input")
    if args.dry_run:
        return dry_run(record, args.output, args.shard, overwrite=args.overwrite)
    push = None
    if args.push_to_hub:
        from paraamr.layout import check_name

        try:  # refused now, not after the run
            check_name("repo id", args.push_to_hub)
        except ValueError as err:
            raise UsageError(f"--push-to-hub {err}") from None
        push = Push(args.push_to_hub, private=args.private, revision=args.revision, token=args.token)
    elif args.private or args.revision or args.token:
        raise UsageError("--private, --revision and --token go with --push-to-hub")
    if args.executor != "none":
        require("cluster")
        from paraamr.executors import launch

        return launch(args, record, settings, run, push)
    shard = _shard(args, record, settings, push)
    try:
        execute(
            record,
            settings,
            output=args.output,
            overwrite=args.overwrite,
            license=args.license,
            push=push,
            shard=shard,
        )
    except Interrupted as err:
        if launch_info()[0] != 0:
            return err.status  # the main process says it, once
        raise
    return 0


def _shard(args: argparse.Namespace, record: RecordSettings, settings: RunSettings, push: Any):
    """This invocation's :class:`~paraamr.builder.shards.Shard` (None without ``--shard``)."""
    from paraamr.builder.shards import Shard, shard_command

    if args.shard is None:
        if args.finalize != "no":
            raise UsageError("--finalize goes with --shard (a run in one piece finalizes itself)")
        return None
    if record.input == "-":
        raise UsageError("--input - (stdin) cannot be cut into shards: every shard reads the whole input")
    if push is not None and args.finalize != "auto":
        raise UsageError(
            "--push-to-hub with --shard needs --finalize auto (the last shard uploads), "
            "or push at the end with `paraamr finalize DIR --push-to-hub REPO_ID`"
        )
    saved = {
        "command": shard_command(getattr(args, "argv", None) or [Path(sys.argv[0]).name, *sys.argv[1:]]),
        "cwd": os.getcwd(),
        "run": settings.as_dict(),
        "license": args.license,
    }
    return Shard(*args.shard, finalize=args.finalize == "auto", saved=saved)
