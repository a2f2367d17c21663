"""``accelerate launch generate.py`` / ``python -m paraamr.generate`` / ``paraamr generate``: build a
ParaAMR-style corpus folder (a Hub dataset repo) from text or AMR graphs.

This module parses options into settings and hands them to :func:`paraamr.builder.run.execute`.

>>> args = build_parser().parse_args(["--input", "in.txt", "--max-perplexity", "50", "--foci", "3"])
>>> s = settings_from_args(args)
>>> s.max_perplexity, s.foci, s.lm_model
(50.0, 3, 'gpt2')
>>> settings_from_args(build_parser().parse_args(["--input", "x", "--max-perplexity", "none"])).max_perplexity
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paraamr.builder.run import STATE_DIR, read_rows, splits_of
from paraamr.builder.settings import PAPER_PRESET, SETTING_NAMES, GeneratorSettings
from paraamr.errors import InputError, ModelNotFoundError, ParaAMRError

#: Settings of the run folder (besides the model settings) that change its records.
_RUN_OPTIONS = (
    "input",
    "input_format",
    "text_column",
    "dataset",
    "dataset_config",
    "dataset_split",
    "amr_input",
    "split",
    "validation_fraction",
    "test_fraction",
    "num_processes",
)


def _optional_float(text: str) -> float | None:
    return None if text.lower() in ("none", "off") else float(text)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the generator's options to ``parser`` (shared by ``generate.py`` and ``paraamr generate``)."""
    d = GeneratorSettings()
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
    src.add_argument("--text-column", default="text", help="text field of jsonl/json/csv/parquet/dataset")
    src.add_argument("--dataset-config", help="config name of --dataset")
    src.add_argument("--dataset-split", help="split of --dataset to read (default: --split)")
    out = parser.add_argument_group("output")
    out.add_argument("--output", default="paraamr", metavar="DIR", help="output folder (default: ./paraamr)")
    out.add_argument("--split", default="train", help="name of the split written (default: train)")
    out.add_argument("--validation-fraction", type=float, default=0.0, help="fraction to 'validation', by id")
    out.add_argument("--test-fraction", type=float, default=0.0, help="fraction to 'test', by id")
    out.add_argument(
        "--rows-per-shard",
        type=int,
        default=10000,
        help="rows per Parquet shard (shards are cut at the end of a window)",
    )
    out.add_argument("--license", help="license of the card (default: unknown)")
    out.add_argument("--overwrite", action="store_true", help="start over, deleting an earlier run in DIR")
    models = parser.add_argument_group("models (registry name, Hub id or local dir)")
    models.add_argument("--preset", choices=["paper"], help="the paper's settings (Huang et al. 2023)")
    models.add_argument("--parser-model", default=d.parser_model)
    models.add_argument("--generator-model", default=d.generator_model)
    models.add_argument("--lm-model", default=d.lm_model)
    models.add_argument("--similarity-model", help="score similarity to the source (e.g. all-MiniLM-L6-v2)")
    models.add_argument("--quality-model", metavar="DIR", help="paraphrase-quality model (paraamr quality)")
    filt = parser.add_argument_group("stages and filters")
    filt.add_argument("--foci", default="all", help="'all' or k foci per graph, chosen with --seed")
    filt.add_argument("--seed", type=int, default=d.seed)
    filt.add_argument(
        "--heuristic-foci",
        dest="heuristic",
        action="store_true",
        help="only foci without incoming edges (amrlib's heuristic)",
    )
    filt.add_argument("--mod-as-domain", action="store_true", help="write an inverted :mod as :domain")
    filt.add_argument(
        "--max-perplexity",
        type=_optional_float,
        default=d.max_perplexity,
        help="drop candidates above this perplexity (default 120; 'none' keeps all)",
    )
    filt.add_argument(
        "--max-relative-perplexity",
        type=_optional_float,
        help="drop candidates above this ratio to the source's own perplexity",
    )
    filt.add_argument("--min-similarity", type=float, help="drop candidates below this similarity")
    filt.add_argument("--min-quality", type=float, help="drop candidates below this quality score")
    filt.add_argument("--max-chars", type=int, default=d.max_chars, help="longer sources are failures")
    run = parser.add_argument_group("execution")
    run.add_argument("--device", help="device of the models (default: the process's accelerator, else cpu)")
    run.add_argument("--dtype", choices=["float32", "bfloat16", "float16"], help="model dtype (GPU: bf16)")
    run.add_argument("--num-beams", type=int, help="parser beams (default: the model's)")
    run.add_argument("--parse-batch-size", type=int, default=d.parse_batch_size)
    run.add_argument("--generate-batch-size", type=int, default=d.generate_batch_size)
    run.add_argument("--lm-batch-size", type=int, default=d.lm_batch_size)
    run.add_argument("--window", type=int, default=d.window, help="rows per processing window")
    run.add_argument(
        "--no-pipeline",
        dest="pipelined",
        action="store_false",
        help="do not overlap CPU stages with model stages",
    )
    run.add_argument("--commit-seconds", type=float, default=600.0, help="commit at least this often")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--dry-run", action="store_true", help="print the plan; load no model")
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The option parser of ``generate.py``."""
    return add_arguments(
        argparse.ArgumentParser(
            prog="generate.py", description="Generate a ParaAMR-style paraphrase corpus folder."
        )
    )


def settings_from_args(args: argparse.Namespace) -> GeneratorSettings:
    """The :class:`GeneratorSettings` of parsed options (``--preset paper`` checked against them)."""
    values = {name: getattr(args, name) for name in SETTING_NAMES if hasattr(args, name)}
    values["amr_input"] = bool(args.amr_input)
    if args.preset == "paper":
        clash = [k for k, v in PAPER_PRESET.items() if values.get(k) != v]
        if clash:
            raise InputError(
                "--preset paper sets "
                + ", ".join(f"--{k.replace('_', '-')} {PAPER_PRESET[k]}" for k in clash)
                + "; drop those options"
            )
    try:
        return GeneratorSettings(**values)
    except ValueError as err:
        raise InputError(str(err)) from err


def _input_spec(args: argparse.Namespace) -> dict[str, Any]:
    given = [n for n in ("input", "dataset", "amr_input") if getattr(args, n)]
    if len(given) != 1:
        got = f" (got {', '.join('--' + g.replace('_', '-') for g in given)})" if given else ""
        raise InputError("give exactly one of --input, --dataset, --amr-input" + got)
    spec = {n: getattr(args, n) for n in _RUN_OPTIONS if n != "num_processes" and hasattr(args, n)}
    for key in ("input", "amr_input"):
        if spec.get(key) and spec[key] != "-":
            spec[key] = str(Path(spec[key]).resolve())
    if args.dataset and not args.dataset_split:
        spec["dataset_split"] = args.split
    for name in ("validation_fraction", "test_fraction"):
        if not 0.0 <= spec[name] <= 1.0:
            raise InputError(f"--{name.replace('_', '-')} must be in [0, 1], got {spec[name]}")
    if spec["validation_fraction"] + spec["test_fraction"] > 1.0:
        raise InputError("--validation-fraction + --test-fraction exceed 1")
    return spec


def missing_models(settings: GeneratorSettings) -> dict[str, str]:
    """``{kind: message}`` for each model the run needs that is not on disk (checked before anything
    heavy is imported or loaded)."""
    from paraamr.models import registry

    messages = {}
    for kind, name in settings.models().items():
        try:
            if kind == "quality":
                from paraamr.quality.scorer import resolve_model

                resolve_model(name)
            else:
                registry.resolve(name, kind)
        except ModelNotFoundError as err:
            messages[kind] = str(err)
    return messages


def _num_processes() -> tuple[int, int]:
    return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))


def dry_run(args: argparse.Namespace, settings: GeneratorSettings, spec: dict[str, Any]) -> int:
    """Print the plan: input rows found, processes, models (and whether they are on disk), output."""
    from itertools import islice

    rank, n = _num_processes()
    if rank != 0:
        return 0
    src = spec.get("input") or spec.get("amr_input") or f"dataset {spec['dataset']}"
    if src == "-":
        found = "stdin (not counted)"
    else:
        limit = 10_000_000
        count = sum(1 for _ in islice(read_rows(spec), limit))
        found = f"{count}{'+' if count == limit else ''} rows"
    print(f"input:     {src}: {found}")
    print(f"processes: {n}")
    missing = missing_models(settings)
    for kind, name in settings.models().items():
        print(f"{kind + ':':<10} {name}{'  (MISSING)' if kind in missing else ''}")
    print(
        f"filters:   max perplexity {settings.max_perplexity}, "
        f"relative {settings.max_relative_perplexity}, "
        f"foci {settings.foci} (seed {settings.seed})"
    )
    out = Path(args.output)
    state = out / STATE_DIR / "settings.json"
    print(
        f"output:    {out.resolve()}  splits {', '.join(splits_of(spec))}"
        + ("  (resumes an earlier run)" if state.is_file() else "")
    )
    for message in missing.values():
        print(message, file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the generator for parsed options; return the exit status."""
    try:
        settings = settings_from_args(args)
        spec = _input_spec(args)
        if args.dry_run:
            return dry_run(args, settings, spec)
        missing = missing_models(settings)
        if missing:
            print(
                "paraamr generate: cannot start, models missing:\n  " + "\n  ".join(missing.values()),
                file=sys.stderr,
            )
            return 2
        from paraamr.builder.run import execute

        execute(
            settings,
            spec,
            output=args.output,
            overwrite=args.overwrite,
            license=args.license,
            commit_rows=args.rows_per_shard,
            commit_seconds=args.commit_seconds,
            progress=not args.no_progress,
        )
        return 0
    except ParaAMRError as err:
        print(f"paraamr generate: {err}", file=sys.stderr)
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``generate.py`` and ``python -m paraamr.generate``."""
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
