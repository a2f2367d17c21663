"""``paraamr evaluate PATH``: Table 2's row (similarity, 1-BLEU, 1-∩/∪, TED-3, TED-F) of a corpus.

Print semantic similarity (embedding cosine ×100), 1-BLEU, 1-∩/∪ (×100), TED-3 and TED-F over the
(source, paraphrase) pairs of PATH: a ParaAMR release file (JSON lines, zipped or not), our dataset
folder, or a two-column file (.tsv/.txt tab-separated, .csv: source, paraphrase). Writes nothing;
--plots DIR writes one PNG histogram per measure there. For several processes or nodes: accelerate
launch -m paraamr.evaluate ... (same options); for independent jobs (Slurm arrays): --shard I/N,
then --merge.

This module reads options, the input and the resume state, and hands the work to
:mod:`paraamr.metrics.scale`; the measures live in :mod:`paraamr.metrics`.

>>> args = build_parser().parse_args(["pairs.tsv", "--shard", "1/3", "--state-dir", "st"])
>>> args.shard, args.chunk_pairs, args.max_chars
((1, 3), 1000, 2000)
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from pathlib import Path
from typing import Any

from paraamr.errors import InputError, UsageError
from paraamr.extras import require
from paraamr.metrics.parsers import add_parser_options
from paraamr.metrics.scoring import MAX_CHARS
from paraamr.metrics.table2 import Paths, add_table2_options
from paraamr.options import ArgumentParser, add_plot_options, positive, shard_spec
from paraamr.progress import add_progress_options
from paraamr.report import json_text
from paraamr.signals import Interrupted

__all__ = ["add_arguments", "build_parser", "run"]

#: ``owner/name``: read from the Hub when no such local path exists.
HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")
#: Options the row depends on (a state folder refuses others than those it started with).
_ROW_OPTIONS = (
    "config", "split", "sample", "seed", "chunk_pairs", "max_chars", "parser", "no_pos",
    "similarity_model", "pooling", "batch_size", "ted_height", "ted_convention", "max_perplexity",
    "backend", "compute_type",
)  # fmt: skip


def add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add evaluate's options to ``p`` (shared by ``paraamr evaluate`` and ``python -m paraamr.evaluate``)."""
    p.add_argument(
        "path",
        metavar="PATH",
        nargs="*",
        action=Paths,
        help="release file, dataset folder, pair file (two columns, ParaNMT's or ParaBank's layout) or Hub "
        "dataset id; several: one row each over the sources all of them share (Table 2's protocol)",
    )
    p.add_argument("--config", default=None, help="config of a Hub dataset (default: its default)")
    p.add_argument("--split", default="train", help="split of a Hub dataset (default: %(default)s)")
    p.add_argument(
        "--write-card",
        action="store_true",
        help="put the row and its signatures into the card of PATH (a dataset folder)",
    )
    p.add_argument(
        "--sample",
        type=positive(),
        metavar="N",
        default=None,
        help="evaluate N SOURCES drawn at random, each with all its pairs (N pairs when every source has "
        "one paraphrase), and print each measure's 95%% interval (cluster bootstrap over sources)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed of --sample and its bootstrap (default: %(default)s)"
    )
    p.add_argument(
        "--max-chars",
        type=positive(),
        default=MAX_CHARS,
        metavar="N",
        help="a pair with a longer text is a failure row (default: %(default)s; link-grammar refuses "
        "sentences over ~2,046 characters)",
    )
    models = p.add_argument_group("parser and embedder")
    add_parser_options(
        models,
        cache="keep parses in DIR across runs (keyed by parser signature and sentence), and the resume "
        "state (DIR/evaluate/<run>) unless --state-dir",
    )
    add_table2_options(p, models)
    _reference_options(models)
    models.add_argument(
        "--similarity-model",
        default="all-MiniLM-L6-v2",
        help="sentence-transformers model or SimCSE checkpoint (default: %(default)s)",
    )
    models.add_argument(
        "--pooling",
        default=None,
        choices=("cls", "cls_before_pooler", "mean"),
        help="embedding pooling (default: the model's own; SimCSE's rule for other encoders)",
    )
    models.add_argument(
        "--device", default=None, help="torch device of the embedder (default: cuda if available)"
    )
    models.add_argument(
        "--batch-size", type=positive(), default=64, help="embedder batch size (default: %(default)s)"
    )
    models.add_argument(
        "--backend",
        default="auto",
        choices=("auto", "transformers", "ctranslate2"),
        help="embedder engine (default auto: ctranslate2 when installed, else transformers)",
    )
    models.add_argument(
        "--compute-type",
        default="auto",
        choices=("auto", "int8", "float32", "float16", "bfloat16", "int8_float16"),
        help="ctranslate2 compute type (default auto: float32, the same embeddings; int8 drifts)",
    )
    _scale_options(p.add_argument_group("at scale: resume, shards, merge"))
    out = p.add_argument_group("output")
    add_plot_options(out)
    out.add_argument("--json", action="store_true", help="print the row as JSON")
    add_progress_options(out)
    return p


def _reference_options(g: argparse._ArgumentGroup) -> None:
    g.add_argument(
        "--references",
        metavar="FILE",
        default=None,
        help="one reference paraphrase per line, one per pair in input order: adds AESOP's BLEU, "
        "ROUGE-1/2/L, METEOR and TED-R",
    )
    g.add_argument(
        "--templates",
        metavar="FILE",
        default=None,
        help="one syntactic template (exemplar sentence) per line, one per pair: adds TED-E "
        "(needs --references)",
    )
    g.add_argument(
        "--ted-height",
        default="5",
        metavar="H",
        help="height of TED-R/TED-E, or 'full' (AESOP's eval.py compares full trees; default: %(default)s)",
    )


def _scale_options(g: argparse._ArgumentGroup) -> None:
    g.add_argument(
        "--state-dir",
        metavar="DIR",
        default=None,
        help="commit the statistics of each chunk in DIR/.paraamr/evaluate/; a killed run started again "
        "resumes there and gives the same row (a changed input is refused)",
    )
    g.add_argument(
        "--chunk-pairs",
        type=positive(),
        default=1000,
        metavar="N",
        help="pairs of a chunk (whole sources), the unit of work and of commits (default: %(default)s)",
    )
    g.add_argument(
        "--shard",
        type=shard_spec,
        default=(0, 1),
        metavar="I/N|slurm",
        help="score shard I of N (from 0; 'slurm': the task of a Slurm job array) into --state-dir, with no "
        "process group; then combine the shards' state folders with --merge (default: 0/1, all pairs)",
    )
    g.add_argument(
        "--merge",
        nargs="+",
        metavar="DIR",
        default=None,
        help="print the row of the statistics the shards committed in these state folders (PATH optional: "
        "given, it must be the input they scored)",
    )


def build_parser() -> ArgumentParser:
    """The option parser of ``python -m paraamr.evaluate``."""
    return add_arguments(
        ArgumentParser(
            prog="python -m paraamr.evaluate",
            description="The Table-2 row of a corpus "
            "(accelerate launch -m paraamr.evaluate ... for several processes or nodes).",
        )
    )


def _check(args: argparse.Namespace) -> int | None:
    """UsageError for options that do not go together; the TED height."""
    if args.templates and not args.references:
        raise UsageError("--templates needs --references")
    if args.path is None and not args.merge:
        raise UsageError("give PATH (or --merge DIR...)")
    if args.write_card and not (args.path and Path(args.path).is_dir()):
        raise UsageError(f"--write-card: {args.path} is not a dataset folder")
    if args.shard != (0, 1) and not (args.state_dir or args.cache_dir):
        raise UsageError("--shard needs --state-dir (or --cache-dir) to keep its statistics for --merge")
    if args.merge and args.shard != (0, 1):
        raise UsageError("--merge combines shards; it is no shard itself")
    if args.ted_height == "full":
        return None  # the whole tree
    with contextlib.suppress(ValueError):
        return int(args.ted_height)
    raise UsageError(f"--ted-height: expected a number or 'full', got {args.ted_height!r}")


def _local(args: argparse.Namespace) -> bool:
    return Path(args.path).exists() or not HUB_ID.match(args.path)


def _identity(args: argparse.Namespace) -> dict[str, Any]:
    """What identifies the input: each file's identity (:func:`paraamr.builder.state.input_identity`)."""
    from paraamr.builder.state import input_identity
    from paraamr.sources import split_files

    if not _local(args):
        found: dict[str, Any] = {"hub": {"repo": args.path, "config": args.config, "split": args.split}}
    elif Path(args.path).is_file():
        found = {str(Path(args.path).resolve()): input_identity(args.path)}
    else:
        found = {
            str(Path(f).resolve()): input_identity(f) for fs in split_files(args.path).values() for f in fs
        }
    for extra in (args.references, args.templates):
        if extra:
            found[str(Path(extra).resolve())] = input_identity(extra)
    return found


def _state(args: argparse.Namespace, settings: dict[str, Any]):
    """The state folder of this run (``--state-dir``, or one per run under ``--cache-dir``), its
    saved settings checked; None without either option."""
    from paraamr.metrics.resume import StateFolder, cache_key

    if args.state_dir:
        folder = Path(args.state_dir)
    elif args.cache_dir:
        folder = Path(args.cache_dir) / "evaluate" / cache_key(settings)
    else:
        return None
    from paraamr.builder.state import identity_changed

    state = StateFolder(folder)
    state.open(settings, changed=identity_changed)
    return state


def _prepare(args: argparse.Namespace) -> tuple[Any, dict[str, Any], Any]:
    """The plan of the pairs, the settings of the row, and the state folder (None without one)."""
    from paraamr.metrics.report import with_references
    from paraamr.metrics.scale import make_plan
    from paraamr.metrics.table2 import filter_perplexity, read_corpus

    pairs = read_corpus(args.path, config=args.config, split=args.split, local=_local(args))
    pairs = with_references(filter_perplexity(pairs, args.max_perplexity)[0], args.references, args.templates)
    plan = make_plan(pairs, sample=args.sample, seed=args.seed, chunk_pairs=args.chunk_pairs)
    if args.sample is not None and args.sample > len(plan.groups):
        print(
            f"paraamr evaluate: warning: --sample {args.sample:,} exceeds the {len(plan.groups):,} "
            f"{plan.unit} of {args.path}; evaluating all of them",
            file=sys.stderr,
        )
    options = {k: getattr(args, k) for k in _ROW_OPTIONS}
    options["input"] = str(Path(args.path).resolve()) if _local(args) else args.path
    settings = {
        "options": options,
        "identity": _identity(args),
        "chunks": len(plan.chunks),
        "unit": plan.unit,
        "sources": plan.sources,
        "clusters": args.sample is not None,
    }
    return plan, settings, _state(args, settings)


def run(args: argparse.Namespace) -> int:
    """Evaluate for parsed options; return the exit status (errors are raised)."""
    require("metrics")
    from paraamr.metrics.sample import owned
    from paraamr.metrics.scale import combine, gather, launch

    rank, world, _ = launch()
    if args.preset is not None:
        from paraamr.metrics.table2 import apply_preset

        apply_preset(args, build_parser().parse_args([]))
    if isinstance(args.path, list):
        from paraamr.metrics.table2 import run_corpora

        return run_corpora(args, world, local=lambda path: _local(argparse.Namespace(path=path)))
    height = _check(args)
    if args.merge:
        from paraamr.builder.state import identity_changed
        from paraamr.metrics.resume import files_changed, merge_folders

        stats, settings = merge_folders(args.merge)
        if args.path and files_changed(settings["identity"], _identity(args), changed=identity_changed):
            raise InputError(f"{args.path}: not the input the merged statistics were computed from")
        return _finish(args, stats, settings)
    try:
        if rank == 0:
            _check_outputs(args, world)
        plan, settings, state = _prepare(args)
    except Exception:
        if rank != 0:
            raise SystemExit(1) from None  # the main process reports it
        raise
    try:
        outcome = _work(args, plan, state, height, settings)
    except Interrupted as err:
        if rank != 0:
            return err.status  # the main process says it, once
        raise
    gathered = gather(outcome, rank=rank, processes=world)
    if gathered is None:
        return 0 if outcome[0] == "ok" else 1
    stats = combine(gathered, {k for k in range(settings["chunks"]) if owned(k, shard=args.shard)})
    if args.shard != (0, 1):
        return _shard_summary(args, stats, state)
    return _finish(args, stats, settings)


def _check_outputs(args: argparse.Namespace, world: int) -> None:
    """Refuse now, not after the run: plot files that exist (without --overwrite), a card folder
    another process owns."""
    from paraamr.metrics.report import check_plots

    if args.plots and args.shard == (0, 1):
        check_plots(args.plots, overwrite=args.overwrite)
    if args.write_card and world == 1:
        from paraamr.locks import folder_lock

        folder_lock(args.path, command="evaluate --write-card").release()


def _work(args: argparse.Namespace, plan: Any, state: Any, height: int | None, settings: dict) -> tuple:
    """This process's share (:func:`paraamr.metrics.scale.score_share`) as ``("ok", stats dict or
    None)``, or ``("error", message)`` in a run of several processes (one process: raised)."""
    from paraamr.layout import writer_id
    from paraamr.metrics.sample import owned
    from paraamr.metrics.scale import Scorer, launch, process_models, score_share
    from paraamr.report import describe

    rank, world, _ = launch()
    try:
        with contextlib.ExitStack() as stack:
            if state is not None:
                stack.enter_context(state.lock(writer_id(rank, world, shard=args.shard)))
            spec = "link-grammar:no-pos" if args.no_pos and args.parser == "link-grammar" else args.parser
            make = process_models(
                spec, processes=args.processes, cache_dir=args.cache_dir, device=args.device,
                model=args.similarity_model, pooling=args.pooling, batch_size=args.batch_size,
                backend=args.backend, compute_type=args.compute_type,
            )  # fmt: skip

            def mine(k: int) -> bool:
                return owned(k, rank=rank, processes=world, shard=args.shard)

            shown = _progress(args, plan, mine, rank, world, stack)

            def loaded() -> tuple:
                shown.phase(f"loading models: parser {spec}, embedder {args.similarity_model}")
                return make()

            score = Scorer(
                loaded, ted_height=height, ted_convention=args.ted_convention, max_chars=args.max_chars
            )
            stack.callback(score.close)

            def scored(pairs: list) -> Any:  # the display moves per parser batch within a chunk
                base = shown.done
                return score(pairs, lambda done, of: shown.update(base + len(pairs) * done / max(of, 1)))

            stats = score_share(
                plan,
                scored,
                mine=mine,
                state=state,
                clusters=settings["clusters"],
                progress=lambda done, failures: shown.update(done, failures=failures),
            )
            return ("ok", None if stats is None else stats.to_dict())
    except Interrupted as err:
        if state is None:
            raise err.with_detail("(nothing kept: --state-dir makes a run resumable)") from None
        kept = f"{len(state.committed()):,} of {settings['chunks']:,} chunks committed in {state.folder}"
        raise err.with_detail(f"({kept}; the same command resumes)") from None
    except Exception as err:
        if world == 1:
            raise
        return ("error", describe(err)[0])


def _progress(args, plan, mine, rank: int, world: int, stack: contextlib.ExitStack):
    """The display of this process's pairs (:class:`paraamr.progress.Progress`; the main process's only)."""
    from paraamr.progress import Progress

    total = sum(len(plan.chunk_pairs(k)[0]) for k in range(len(plan.chunks)) if mine(k))
    desc = "evaluate" if world == 1 else f"evaluate (process 0 of {world})"
    mode = args.progress if rank == 0 else "none"
    return stack.enter_context(Progress(desc, total=total, unit="pairs", mode=mode))


def _shard_summary(args: argparse.Namespace, stats: Any, state: Any) -> int:
    from paraamr.metrics.report import shard_summary

    summary = shard_summary(stats, shard=args.shard, folder=state.folder)
    line = summary.pop("line")
    print(json_text(summary) if args.json else line)
    return 0


def _finish(args: argparse.Namespace, stats: Any, settings: dict[str, Any]) -> int:
    """Print the row (and write plots, the card) from the merged statistics."""
    from paraamr.metrics.report import check_plots, describe, plot_histograms, row_of
    from paraamr.metrics.table2 import protocol_signature

    result = row_of(stats, seed=settings["options"]["seed"], unit=settings["unit"])
    options = settings["options"]
    result["signatures"]["protocol"] = str(protocol_signature(
        similarity_model=options["similarity_model"], pooling=options["pooling"],
        ted_convention=options.get("ted_convention", "aesop"),
        parser_signature=result["signatures"].get("ted", "parser:none"), corpora=1,
        max_perplexity=options.get("max_perplexity"),
    ))  # fmt: skip
    if args.write_card:
        result["card"] = str(_write_card(args, result, settings))
    if args.plots:
        if args.merge:
            check_plots(args.plots, overwrite=args.overwrite)
        result["plots"] = [str(p) for p in plot_histograms(stats, args.plots)]
    result.update(
        input=options["input"], sample=options["sample"], seed=options["seed"], unit=settings["unit"]
    )
    if args.json:
        print(json_text(result, indent=2, ensure_ascii=False))
    else:
        print(describe(result, sources=settings["sources"]))
    for failure in result["failures"]:
        print(
            f"paraamr evaluate: left out {failure['where']}: {failure['stage']}: {failure['reason']}",
            file=sys.stderr,
        )
    return 0


def _write_card(args: argparse.Namespace, result: dict[str, Any], settings: dict[str, Any]) -> Path:
    """The row into PATH's card, under the folder's own lock."""
    from paraamr.card import update_card_metrics
    from paraamr.locks import folder_lock
    from paraamr.metrics.report import card_note, card_row

    note = card_note(result, settings)
    with folder_lock(args.path, command="evaluate --write-card"):
        return update_card_metrics(args.path, card_row(result), result["signatures"], note=note)
