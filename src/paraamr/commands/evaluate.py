"""``paraamr evaluate PATH``: Table 2's row (similarity, 1-BLEU, 1-∩/∪, TED-3, TED-F) of a corpus.

Print semantic similarity (embedding cosine ×100), 1-BLEU, 1-∩/∪ (×100), TED-3 and TED-F over the
(source, paraphrase) pairs of PATH: a ParaAMR release file (JSON lines, zipped or not), our dataset
folder, or a two-column file (.tsv/.txt tab-separated, .csv: source, paraphrase). Writes nothing;
--plots DIR writes one PNG histogram per measure there. For several processes or nodes: accelerate
launch -m paraamr.evaluate ... (same options); for independent jobs (Slurm arrays): --shard I/N,
then --merge.

>>> args = build_parser().parse_args(["pairs.tsv", "--shard", "1/3", "--state-dir", "st"])
>>> args.shard, args.chunk_pairs, args.max_chars
((1, 3), 1000, 2000)
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any

from paraamr.errors import InputError, UsageError
from paraamr.extras import require
from paraamr.metrics.settings import EvaluateSettings
from paraamr.options import ArgumentParser, add_settings, check_folder, given_settings, option_flag
from paraamr.progress import Progress, SharedCount
from paraamr.report import json_text
from paraamr.signals import Interrupted
from paraamr.tasks import Launch

__all__ = ["add_arguments", "build_parser", "run", "settings_from_args"]


def add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add evaluate's options to ``p`` (shared by ``paraamr evaluate`` and ``python -m paraamr.evaluate``):
    PATH and the settings' own (:class:`~paraamr.metrics.settings.EvaluateSettings`)."""
    p.add_argument(
        "path",
        metavar="PATH",
        nargs="*",
        help="release file, dataset folder, pair file (two columns, ParaNMT's or ParaBank's layout) or Hub "
        "dataset id; several: one row each over the sources all of them share (Table 2's protocol)",
    )
    titles = {"models": "parser and embedder", "scale": "at scale: resume, shards, merge", "output": "output"}
    add_settings(
        {"main": p} | {key: p.add_argument_group(title) for key, title in titles.items()}, EvaluateSettings
    )
    return p


def settings_from_args(args: argparse.Namespace) -> EvaluateSettings:
    """The settings of parsed options (``--preset`` applied; PATH: None, one path or a list)."""
    values = given_settings(EvaluateSettings, args)
    paths = values.pop("path", None) or [None]
    return EvaluateSettings(path=paths[0] if len(paths) == 1 else paths, **values)


def build_parser() -> ArgumentParser:
    """The option parser of ``python -m paraamr.evaluate``."""
    return add_arguments(
        ArgumentParser(
            prog="python -m paraamr.evaluate",
            description="The Table-2 row of a corpus "
            "(accelerate launch -m paraamr.evaluate ... for several processes or nodes).",
        )
    )


def _check(s: EvaluateSettings) -> int | None:
    """UsageError for options that do not go together; the TED height."""
    if s.templates and not s.references:
        raise UsageError("--templates needs --references")
    if s.path is None and not s.merge:
        raise UsageError("give PATH (or --merge DIR...)")
    if s.write_card and not (s.path and Path(s.path).is_dir()):
        raise UsageError(f"--write-card: {s.path} is not a dataset folder")
    if s.shard != (0, 1) and not (s.state_dir or s.cache_dir):
        raise UsageError("--shard needs --state-dir (or --cache-dir) to keep its statistics for --merge")
    if s.merge and s.shard != (0, 1):
        raise UsageError("--merge combines shards; it is no shard itself")
    if s.overwrite and not s.plots:
        raise UsageError("--overwrite: only with --plots DIR (it replaces the PNGs there)")
    if s.shard != (0, 1) and (s.write_card or s.plots):  # a shard prints no row
        raise UsageError("--write-card and --plots go with the whole row: give them to --merge")
    if s.merge and (s.references or s.templates):
        raise UsageError("--references, --templates: --merge takes the row as its shards computed it")
    from paraamr.metrics.parsers import parser_spec

    check_folder("--state-dir", s.state_dir)
    check_folder("--cache-dir", s.cache_dir)
    parser_spec(s.parser, s.no_pos)  # --no-pos with another parser than link-grammar: refused now
    return s.height


def _identity(s: EvaluateSettings) -> dict[str, Any]:
    """What identifies the input: each file's identity (:func:`paraamr.tasks.input_identity`)."""
    from paraamr.metrics.table2 import is_local
    from paraamr.sources import split_files
    from paraamr.tasks import input_identity

    if not is_local(s.path):
        found: dict[str, Any] = {"hub": {"repo": s.path, "config": s.config, "split": s.split}}
    elif Path(s.path).is_file():
        found = {str(Path(s.path).resolve()): input_identity(s.path)}
    else:
        found = {str(Path(f).resolve()): input_identity(f) for fs in split_files(s.path).values() for f in fs}
    for extra in (s.references, s.templates):
        if extra:
            found[str(Path(extra).resolve())] = input_identity(extra)
    return found


def _state(s: EvaluateSettings, settings: dict[str, Any], say: bool = True):
    """The state folder (``--state-dir``, or one per run under ``--cache-dir``) opened, or None."""
    from paraamr.metrics.resume import StateFolder, cache_key

    if s.state_dir:
        folder = Path(s.state_dir)
    elif s.cache_dir:
        folder = Path(s.cache_dir) / "evaluate" / cache_key(settings)
    else:
        return None
    from paraamr.tasks import identity_changed

    state = StateFolder(folder)
    state.open(settings, changed=identity_changed, alone=s.shard == (0, 1), say=say)
    return state


def _plan(s: EvaluateSettings, where: Launch) -> tuple[Any, dict[str, int]]:
    """The plan holding this process's pairs and the ``selection`` counts. The input is read twice,
    its pairs not kept: for the plan of the whole input (sources, sample, chunks), then for the pairs
    of this process's chunks, each with its reference and template."""
    from paraamr.metrics import table2
    from paraamr.metrics.report import attach_references, check_references
    from paraamr.metrics.scale import Plan

    read, selection = table2.corpus_pairs(s.path, config=s.config, split=s.split), table2.selection_counts()
    scanned = table2.keep_perplexity(read(), s.max_perplexity, selection)
    plan = Plan.scan(scanned, sample=s.sample, seed=s.seed, chunk_pairs=s.chunk_pairs)
    if not selection["input_pairs"]:
        raise InputError(f"{s.path}: no pairs to evaluate")
    check_references(selection["input_pairs"], s.references, s.templates)  # one a line of the input, in order
    table2.check_selection(selection, s.max_perplexity, name=s.path)
    mine = plan.owned(shard=s.shard, rank=where.rank, processes=where.processes)
    plan.hold(table2.keep_perplexity(read(), s.max_perplexity, table2.selection_counts()), mine, name=s.path)
    plan.pairs[:] = attach_references(((p.index, p) for p in plan.pairs), s.references, s.templates)
    return plan, selection


def _prepare(s: EvaluateSettings, where: Launch) -> tuple[Any, dict[str, Any], Any]:
    """The plan holding this process's pairs (:func:`_plan`), the settings of the row, and (in the
    main process) the state folder."""
    from paraamr.metrics.table2 import is_local

    plan, selection = _plan(s, where)
    main = where.main
    if main and s.sample is not None and s.sample > len(plan.groups):
        print(
            f"paraamr evaluate: warning: --sample {s.sample:,} exceeds the {len(plan.groups):,} "
            f"{plan.unit} of {s.path}; evaluating all of them",
            file=sys.stderr,
        )
    options = s.row_options()
    options["input"] = str(Path(s.path).resolve()) if is_local(s.path) else s.path
    settings = {
        "options": options,
        "identity": _identity(s),
        "chunks": len(plan.chunks),
        "unit": plan.unit,
        "sources": plan.sources,
        "clusters": s.sample is not None,
    }
    if s.sample is not None and len(plan.groups) < plan.sources:  # the protocol says so, as of several inputs
        settings["sample"] = f"{len(plan.groups)}-of-{plan.sources}-seed-{s.seed}"
    if s.max_perplexity is not None:  # what the filter left out, as several inputs' rows say it
        settings["selection"] = selection
    return plan, settings, _state(s, settings) if main else None


def run(args: argparse.Namespace) -> int:
    """Evaluate for parsed options; return the exit status (errors are raised)."""
    require("metrics")
    from paraamr.metrics.scale import combine
    from paraamr.tasks import gather, launch, process_group

    where = launch()
    s = settings_from_args(args)
    if "" in ([s.path] if isinstance(s.path, str) else s.path or []):  # Path("") is the current folder
        raise UsageError("PATH '': an empty path")
    if isinstance(s.path, list):
        from paraamr.metrics.table2 import run_corpora

        return run_corpora(s, where.processes)
    height = _check(s)
    if s.merge:
        from paraamr.metrics.resume import files_changed, merge_folders
        from paraamr.tasks import identity_changed

        stats, settings = merge_folders(s.merge)
        saved = settings["options"]
        other = [f for f in fields(s) if f.metadata.get("row") and f.name in saved]
        other = [f for f in other if getattr(s, f.name) not in (f.default, saved[f.name])]
        if other:  # the row is the shards', computed with their options
            flags = ", ".join(option_flag(f) for f in other)
            raise UsageError(f"{flags}: not what the shards ran with; --merge takes the row they computed")
        if s.path and files_changed(settings["identity"], _identity(s), changed=identity_changed):
            raise InputError(f"{s.path}: not the input the merged statistics were computed from")
        return _finish(s, stats, settings)
    # one process group for a run of several processes: gloo starts no second one in a launch
    with process_group() if where.processes > 1 else contextlib.nullcontext():
        plan, settings, state, ready = _start(s, where)
        count = _count(s, where, ready["progress"])
        try:
            with _display(s, plan, where, count) as shown:
                outcome = _work(s, where, plan, state, height, settings, ready["embedder"], shown, count)
                gathered = gather(outcome, where)
                shown.update(**count.sum())  # every process has saved its last count
        except Interrupted as err:
            if not where.main:
                return err.status  # the main process says it, once
            raise
        finally:
            if where.main and ready["progress"] is not None and state is None:
                shutil.rmtree(ready["progress"], ignore_errors=True)
            elif where.main and ready["progress"] is not None:
                count.clear()
    if gathered is None:
        return 0 if outcome[0] == "ok" else 1
    stats = combine(gathered, set(plan.owned(shard=s.shard)))
    if s.shard != (0, 1):
        from paraamr.metrics.report import shard_summary

        print(shard_summary(stats, shard=s.shard, folder=state.folder, json=s.json))
        return 0
    return _finish(s, stats, settings)


def _start(s: EvaluateSettings, where: Launch) -> tuple[Any, dict[str, Any], Any, dict[str, Any]]:
    """The plan, the settings, the state folder and what the main process finds before the work
    (:func:`_ready`), told to every process; an error stops them all. The other processes open the
    state folder once the main one has checked it."""
    from paraamr.tasks import broadcast

    error, ready = None, None
    try:
        if where.main:
            _check_outputs(s, where.processes)
        plan, settings, state = _prepare(s, where)
        if where.main:
            ready = _ready(s, plan, state, where)
    except Exception as err:
        if where.processes == 1:
            raise
        error = err
    ready = broadcast(ready, where)
    if ready is None and not where.main:
        raise SystemExit(1) from None
    if error is not None:
        raise error
    if not where.main:
        state = _state(s, settings, say=False)
    return plan, settings, state, ready


def _ready(s: EvaluateSettings, plan: Any, state: Any, where: Launch) -> dict[str, Any]:
    """Before the work, once a run: the embedder's folder (fetched when missing; None when every
    chunk is committed), checked against the state folder's, and the folder where several processes
    add up their progress (the state folder, else a new temporary one)."""
    from paraamr.errors import ModelNotFoundError
    from paraamr.models.download import ensure
    from paraamr.models.resolve import resolve

    on_disk = None
    if state is not None:  # checked when on disk, also when every chunk is committed: no stale row
        with contextlib.suppress(ModelNotFoundError):
            on_disk = str(resolve(s.similarity_model, "embedder"))
        if on_disk is not None:
            _check_model(s, state, on_disk)
    done = set(state.completed()) if state is not None else set()
    left = any(k not in done for k in plan.owned(shard=s.shard))
    embedder = (on_disk or str(ensure(s.similarity_model, "embedder"))) if left else None
    if embedder is not None and state is not None and on_disk is None:  # fetched now
        _check_model(s, state, embedder)
    progress = None
    if where.processes > 1:
        progress = str(state.root) if state is not None else tempfile.mkdtemp(prefix="paraamr-evaluate-")
        _count(s, where, progress).clear()  # an earlier run's counts
    return {"embedder": embedder, "progress": progress}


def _check_model(s: EvaluateSettings, state: Any, folder: str) -> None:
    """The similarity model in ``folder`` against the state folder's (saved on a first run)."""
    from paraamr.models.fast import model_digest

    digest, name = {"similarity": model_digest(folder)}, {"similarity": s.similarity_model}
    if state.check_models(digest, name, cache=not s.state_dir, alone=s.shard == (0, 1)):
        print(
            f"paraamr evaluate: the similarity model {s.similarity_model!r} has other files than when "
            f"the statistics in {state.root} were cached: scoring the pairs again",
            file=sys.stderr,
        )


def _count(s: EvaluateSettings, where: Launch, folder: str | None) -> SharedCount:
    """This process's count among the run's processes (alone where ``folder`` is not seen here)."""
    from paraamr.layout import writer_id

    names = [writer_id(rank, where.processes, shard=s.shard) for rank in range(where.processes)]
    seen = folder if folder is not None and Path(folder).is_dir() else None
    return SharedCount(seen, names[where.rank], names=names)


def _check_outputs(s: EvaluateSettings, world: int) -> None:
    """Refuse now, not after the run: plot files that exist, a card folder another process owns."""
    from paraamr.metrics.report import check_plots

    if s.plots:  # (a shard takes neither: _check)
        check_plots(s.plots, overwrite=s.overwrite)
    if s.write_card:
        from paraamr.card import evaluation_card
        from paraamr.locks import folder_lock

        if world == 1:
            folder_lock(s.path, command="evaluate --write-card").release()
        evaluation_card(s.path)  # a card paraamr did not write is refused now, not after the run


def _display(s: EvaluateSettings, plan: Any, where: Launch, count: SharedCount) -> Progress:
    """The main process's display of every process's count, summed again every second."""
    desc = "evaluate" if where.processes == 1 else f"evaluate ({where.processes} processes)"
    mode = s.progress if where.main else "none"
    total = plan.size(plan.owned(shard=s.shard))
    shown = Progress(desc, total=total, unit="pairs", mode=mode, tick=lambda: shown.update(**count.sum()))
    return shown


def _work(
    s: EvaluateSettings, where: Launch, plan: Any, state: Any, height: int | None, settings: dict,
    embedder: str | None, shown: Progress, count: SharedCount,
) -> tuple:
    """This process's share (:func:`paraamr.metrics.scale.score_share`) as ``("ok", stats dict or
    None)``, or ``("error", message)`` in a run of several processes (one process: raised)."""
    from paraamr.layout import writer_id
    from paraamr.metrics.scale import Scorer, process_models, score_share
    from paraamr.report import describe

    rank, world = where.rank, where.processes

    def progress(done: float, failures: int | None = None) -> None:
        count.save(done, failures=count.counts.get("failures", 0) if failures is None else failures)
        shown.update(**count.sum())

    try:
        with contextlib.ExitStack() as stack:
            if state is not None:
                stack.enter_context(state.lock(writer_id(rank, world, shard=s.shard)))
            make = process_models(s, local=where.local, embedder=embedder)

            def loaded() -> tuple:
                shown.phase(f"loading models: parser {s.parser_spec}, embedder {s.similarity_model}")
                models = make()
                shown.phase("scoring")
                return models

            score = Scorer(loaded, ted_height=height, ted_convention=s.ted_convention, max_chars=s.max_chars)
            stack.callback(score.close)

            def scored(pairs: list) -> Any:  # the display moves per parser batch within a chunk
                base = count.counts["done"]
                return score(pairs, lambda done, of: progress(base + len(pairs) * done / max(of, 1)))

            chunks = plan.owned(shard=s.shard, rank=rank, processes=world)
            stats = score_share(
                plan, scored, chunks=chunks, state=state, clusters=settings["clusters"], progress=progress
            )
            count.save(**count.counts, now=True)
            return ("ok", None if stats is None else stats.to_dict())
    except Interrupted as err:
        if state is None:
            raise err.with_detail("(nothing kept: --state-dir makes a run resumable)") from None
        kept = f"{len(state.completed()):,} of {settings['chunks']:,} chunks committed in {state.folder}"
        raise err.with_detail(f"({kept}; the same command resumes)") from None
    except Exception as err:
        if world == 1:
            raise
        return ("error", describe(err)[0])


def _finish(s: EvaluateSettings, stats: Any, settings: dict[str, Any]) -> int:
    """Print the row (and write plots, the card) from the merged statistics."""
    from paraamr.card import update_card_metrics
    from paraamr.locks import folder_lock
    from paraamr.metrics.report import card_note, card_row, describe, plot_histograms, row_of, say_failures
    from paraamr.metrics.table2 import protocol_signature

    options = settings["options"]
    result = row_of(stats, seed=options["seed"], unit=settings["unit"])
    if not result["pairs"] and result["failures"]:  # a row of nothing is no result: no card, exit 1
        say_failures(result["failures"])
        raise InputError(
            f"{options['input']}: no pair could be scored; all {len(result['failures']):,} were left out "
            "(the lines above say why)"
        )
    result["signatures"]["protocol"] = str(protocol_signature(
        similarity_model=options["similarity_model"], pooling=options["pooling"],
        ted_convention=options.get("ted_convention", "aesop"),
        parser_signature=result["signatures"].get("ted", "parser:none"), corpora=1,
        max_perplexity=options.get("max_perplexity"), sample=settings.get("sample"),
    ))  # fmt: skip
    if s.plots:  # checked again under the folder's hold: of two runs, one writes them
        result["plots"] = [str(p) for p in plot_histograms(stats, s.plots, overwrite=s.overwrite)]
    if s.write_card:
        note = card_note(result, settings)
        with folder_lock(s.path, command="evaluate --write-card"):  # the row into PATH's card
            card = update_card_metrics(s.path, card_row(result), result["signatures"], note=note)
        result["card"] = str(card)
    result |= {key: options[key] for key in ("input", "sample", "seed")} | {"unit": settings["unit"]}
    selection = settings.get("selection")
    if selection is not None:
        result["selection"] = selection
    shown = json_text(result, indent=2, ensure_ascii=False) if s.json else None
    print(shown or describe(result, sources=settings["sources"]))
    if selection is not None and not s.json:
        print(
            f"paraamr evaluate: --max-perplexity {options['max_perplexity']:g} left out "
            f"{selection['dropped']:,} of {selection['input_pairs']:,} pairs "
            f"({selection['without_perplexity']:,} without a perplexity kept)",
            file=sys.stderr,
        )
    say_failures(result["failures"])
    return 0
