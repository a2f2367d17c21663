"""``paraamr generate``: build a ParaAMR-style corpus folder from text or AMR graphs.

Build a ParaAMR-style corpus folder (a Hub dataset repo) from text or AMR graphs. For several
processes or GPUs: accelerate launch -m paraamr.generate ... (same options).

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

from paraamr.commands.push import add_hub_options, push_of
from paraamr.errors import UsageError
from paraamr.extras import require
from paraamr.options import (
    EXECUTOR_DEFAULTS,
    SHARD_HELP,
    ArgumentParser,
    add_settings,
    given_settings,
    license_id,
    number,
    option_flag,
    positive,
    shard_spec,
)
from paraamr.report import counted
from paraamr.settings import PAPER, RecordSettings, RunSettings
from paraamr.signals import Interrupted

__all__ = ["GROUPS", "add_arguments", "build_parser", "dry_run", "run", "settings_from_args"]

#: The option groups of ``generate``, in the order ``--help`` shows them; a settings field
#: (:mod:`paraamr.settings`) names its group by key.
GROUPS = {
    "input": "input (one of)",
    "output": "output",
    "cluster": "cluster (independent shards, e.g. a Slurm array; see docs/generate.md)",
    "executors": "executors (datatrove: the run cut into tasks, each --shard I/TASKS; see docs/generate.md)",
    "publish": "publish",
    "models": "models (registry name, Hub id or local dir)",
    "filters": "stages and filters",
    "execution": "execution",
}


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the generator's options to ``parser`` (shared by ``generate.py`` and ``paraamr generate``):
    the settings' own (:func:`paraamr.options.add_settings`) and those of the command."""
    groups = {key: parser.add_argument_group(title) for key, title in GROUPS.items()}

    def settings(*keys: str) -> None:
        for key in keys:
            add_settings({key: groups[key]}, RecordSettings)
            add_settings({key: groups[key]}, RunSettings)

    settings("input")
    out = groups["output"]
    out.add_argument("--output", default="paraamr", metavar="DIR", help="output folder (default: ./paraamr)")
    settings("output")
    out.add_argument("--license", type=license_id, help="license of the card (default: unknown)")
    out.add_argument(
        "--overwrite",
        action="store_true",
        help="start over, deleting an earlier run's files in DIR (with --shard: this shard's only)",
    )
    cluster = groups["cluster"]
    cluster.add_argument("--shard", metavar="I/N|slurm", type=shard_spec, help=SHARD_HELP)
    cluster.add_argument(
        "--finalize",
        choices=["no", "auto"],
        default="no",
        help="with --shard: 'auto' lets the last shard to finish write the summary, shards and card "
        "(and push); 'no' (default) leaves that to `paraamr finalize DIR`",
    )
    add_executor_options(groups["executors"])
    add_hub_options(groups["publish"])
    groups["models"].add_argument(
        "--preset", choices=["paper"], help="the paper's settings (Huang et al. 2023)"
    )
    settings("models", "filters", "execution")
    groups["execution"].add_argument("--dry-run", action="store_true", help="print the plan; load no model")
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The option parser of ``generate.py``."""
    return add_arguments(
        ArgumentParser(prog="generate.py", description="Generate a ParaAMR-style paraphrase corpus folder.")
    )


def settings_from_args(args: argparse.Namespace) -> tuple[RecordSettings, RunSettings]:
    """The settings of parsed options (local paths, model folders too, made absolute): ``--preset paper`` is
    :meth:`RecordSettings.paper`, and an option given with another value than the paper's is refused."""
    values = given_settings(RecordSettings, args)
    for f in fields(RecordSettings):
        model = "model" in f.metadata  # a local folder (it wins, as models.resolve reads it), or a name
        if (f.metadata.get("path") or model) and values.get(f.name) not in (None, "-"):
            path = Path(values[f.name]).expanduser()  # a pipe's link (/dev/fd/N) resolves to no path: kept
            if model and not path.exists():
                continue
            special = path.exists() and not (path.is_file() or path.is_dir())
            values[f.name] = str(path.absolute() if special else path.resolve())
    if getattr(args, "preset", None) == "paper":
        clash = [
            k for k, v in PAPER.items() if k in values and values[k] != v and not _paper_allows(k, values[k])
        ]
        if clash:
            flags = {f.name: option_flag(f) for f in fields(RecordSettings)}
            sets = [
                f"{flags[k]} {PAPER[k]}" if PAPER[k] not in (None, False) else f"no {flags[k]}" for k in clash
            ]
            those = "those options" if len(sets) > 1 else "that option"
            raise UsageError(f"--preset paper sets {', '.join(sets)}; drop {those}")
        record = RecordSettings.paper(**values)
    else:
        record = RecordSettings(**values)
    return record, RunSettings(**given_settings(RunSettings, args))


def _paper_allows(name: str, value: Any) -> bool:
    """Whether ``--preset paper`` takes option ``name`` with ``value``: any ``--max-perplexity``, and a
    model option naming a local copy."""
    if name == "max_perplexity":
        return True
    local = isinstance(value, str) and Path(value).expanduser().exists()
    return name in ("parser_model", "realizer_model", "lm_model") and local


#: What ``--dry-run`` says of the output folder, by :func:`~paraamr.builder.checks.check_run`'s mode.
_MODE_NOTE = {
    "new": "",
    "resume": "  (resumes an earlier run)",
    "overwrite": "  (replaces an earlier run)",
    "restart": "  (starts over a run that finished no task)",
}


def dry_run(
    record: RecordSettings,
    output: str | Path,
    shard: tuple[int, int] | None = None,
    *,
    overwrite: bool = False,
    download: bool = True,
    device: str | None = None,
    push: Any = None,
    trust_remote_code: bool = False,
) -> int:
    """Print the plan (input, processes, models, output) after the run's own checks (``device``:
    the run's; ``push``: the upload's; each model folder found checked as the run checks it); load
    and write nothing. 1 when a model is missing and ``download`` is off."""
    from paraamr.builder import readers
    from paraamr.builder.checks import check_run
    from paraamr.builder.run import launch_warning
    from paraamr.builder.state import RunFolder, Shard
    from paraamr.errors import ModelNotFoundError
    from paraamr.models.download import check_amrlib_folder
    from paraamr.models.fast import model_digest
    from paraamr.models.resolve import resolve
    from paraamr.tasks import launch

    where = launch()
    rank, n = where.rank, where.processes
    if rank != 0:
        return 0
    folder = RunFolder(output, num_processes=n, shard=None if shard is None else Shard(*shard), device=device)
    _, mode, _ = check_run(record, folder, overwrite=overwrite, models=False, push=push)
    on_disk, missing = {}, []
    for kind, name in record.models().items():
        try:
            on_disk[kind] = resolve(name, kind)
        except ModelNotFoundError as err:
            missing.append(str(err))
            continue
        check_amrlib_folder(on_disk[kind], kind, name, trust_remote_code=trust_remote_code)
    if mode == "resume":  # a model on disk with other files than the run's is refused as the run would
        mode = folder.check_models(record, {kind: model_digest(path) for kind, path in on_disk.items()})
    warning = launch_warning()
    if warning:
        print(f"paraamr generate: warning: {warning}", file=sys.stderr)
    if "-" in (record.input, record.amr_input):
        found = "stdin (not counted)"
    elif record.dataset:
        found = "a dataset (not counted)"
    else:
        fmt = "amr" if record.amr_input else record.input_format
        found = counted(readers.count_rows(record.amr_input or record.input, fmt=fmt), "row")
    print(f"input:     {record.source}: {found}")
    print(f"processes: {n}")
    if shard is not None:
        i, n = shard
        print(f"shard:     {i} of {n} (the run's tasks k mod {n} = {i}; no rendezvous)")
    for kind, name in record.models().items():
        fetch = "fetched on first use when online" if download else "--no-download: the run would fail"
        note = "" if kind in on_disk else f"  (MISSING: {fetch})"
        print(f"{kind + ':':<10} {name}{note}")
    kept = "none (each paraphrase kept with its perplexity)" if record.max_perplexity is None else ""
    print(
        f"filters:   max perplexity {kept or f'{record.max_perplexity:g}'}, relative "
        f"{'none' if record.max_relative_perplexity is None else f'{record.max_relative_perplexity:g}'}, "
        f"foci {record.foci} (seed {record.seed}, rule {record.foci_rule})"
    )
    print(f"method:    linearization {record.linearization}, realizer input {record.tagging}")
    print(f"output:    {folder.path}  splits {', '.join(record.splits())}" + _MODE_NOTE[mode])
    if mode == "restart":
        print(f"paraamr generate: {folder.restarting}", file=sys.stderr)
    for message in missing:
        print(message, file=sys.stderr)
    return 1 if missing and not download else 0


#: The most ``--tasks``: far more than a run needs (15.5M sources are 15,540 tasks of 1,000 rows).
MAX_JOBS = 100_000


def add_executor_options(group: argparse._ActionsContainer) -> None:
    """The options that hand a generate run to a datatrove executor."""
    group.add_argument(
        "--executor",
        choices=("none", "local", "slurm"),
        default="none",
        help="'local': the tasks on this machine, --workers at a time; 'slurm': a Slurm job array of the "
        "tasks and a finalize job after it; 'none' (default): this process (or launcher) runs the whole run",
    )
    group.add_argument(
        "--tasks",
        type=number(int, low=1, high=MAX_JOBS),
        metavar="T",
        help=f"number of tasks, at most {MAX_JOBS:,} (default: --workers)",
    )
    group.add_argument(
        "--workers",
        type=number(int, low=1, high=MAX_JOBS),
        metavar="K",
        help=f"tasks at once (default: {EXECUTOR_DEFAULTS['workers']})",
    )
    group.add_argument("--slurm-partition", metavar="P", help="Slurm partition (for --executor slurm)")
    group.add_argument(
        "--slurm-time",
        metavar="HH:MM:SS",
        help=f"time limit per task (default: {EXECUTOR_DEFAULTS['slurm_time']})",
    )
    group.add_argument(
        "--slurm-cpus",
        type=positive(),
        metavar="N",
        help=f"CPUs per task (default: {EXECUTOR_DEFAULTS['slurm_cpus']})",
    )
    group.add_argument(
        "--slurm-gpus",
        type=number(int, low=0),
        metavar="N",
        help=f"GPUs per task (default: {EXECUTOR_DEFAULTS['slurm_gpus']})",
    )


def run(args: argparse.Namespace) -> int:
    """Run the generator for parsed options; return the exit status (errors are raised)."""
    require("generate")
    from paraamr.builder.run import execute
    from paraamr.tasks import launch

    record, settings = settings_from_args(args)
    if not record.source:
        raise UsageError("give one of --input, --dataset, --amr-input")
    if settings.device is not None:  # refused before the output folder is made
        from paraamr.models.base import resolve_device

        resolve_device(settings.device)
    push = push_of(args)  # refused now, not after the run (nor only when the run is not a dry one)
    shard = _shard(args, record, push)
    _check_executor(args)
    if args.dry_run:
        code = dry_run(
            record, args.output, args.shard, overwrite=args.overwrite, download=settings.download,
            device=settings.device, push=push, trust_remote_code=settings.trust_remote_code,
        )  # fmt: skip
        if args.executor != "none" and launch().main:
            tasks, workers = args.tasks, min(args.workers, args.tasks)
            print(f"executor:  {args.executor}, {tasks:,} tasks, {workers:,} at a time")
        return code
    if args.executor != "none":
        require("cluster")
        from paraamr import executors

        return executors.launch(args, record, settings, run, push, origin(args, settings))
    try:
        execute(
            record,
            settings,
            output=args.output,
            overwrite=args.overwrite,
            license=args.license,
            push=push,
            shard=shard,
            origin=origin(args, settings),
        )
    except Interrupted as err:
        if not launch().main:
            return err.status  # the main process says it, once
        raise
    return 0


def _check_executor(args: argparse.Namespace) -> None:
    """Refuse ``--executor`` options that do not go together or do nothing; fill in those not given."""
    given = [name for name in EXECUTOR_DEFAULTS if getattr(args, name) is not None]
    slurm = [name for name in given if name.startswith("slurm_")]
    wrong = given if args.executor == "none" else slurm if args.executor != "slurm" else []
    if wrong:
        flags = ", ".join("--" + name.replace("_", "-") for name in wrong)
        which = "--executor local or slurm" if args.executor == "none" else "--executor slurm"
        raise UsageError(f"{flags}: only with {which}")
    for name, default in EXECUTOR_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    args.tasks = args.tasks or args.workers
    if args.executor == "none":
        return
    if args.shard is not None:
        raise UsageError("--executor cuts the run into --tasks itself: leave out --shard")
    if args.overwrite:
        raise UsageError("--overwrite does not go with --executor: remove the folder, or give a new --output")
    if args.executor == "slurm" and not args.slurm_partition:
        raise UsageError("--executor slurm needs --slurm-partition")


def origin(args: argparse.Namespace, settings: RunSettings) -> dict[str, Any]:
    """What a run records beside its settings: its command line, folder, run settings and license."""
    from paraamr.builder.shards import shard_command

    argv = getattr(args, "argv", None) or [Path(sys.argv[0]).name, *sys.argv[1:]]
    return {
        "command": shard_command(argv),
        "cwd": os.getcwd(),
        "run": settings.as_dict(),
        "license": args.license,
    }


def _shard(args: argparse.Namespace, record: RecordSettings, push: Any):
    """This invocation's :class:`~paraamr.builder.shards.Shard` (None without ``--shard``)."""
    from paraamr.builder.shards import Shard

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
    executor = getattr(args, "executor_task", False)  # (a task of --executor's run: GenerateTask)
    return Shard(*args.shard, finalize=args.finalize == "auto", executor=executor)
