"""paraamr's work as datatrove pipeline steps, run by datatrove's executors.

``generate --executor local|slurm --tasks T`` runs :class:`PartitionTask` once, then T jobs of
:class:`GenerateTask` (job ``I`` is ``--shard I/T``; datatrove's logs and markers under
``DIR/.paraamr/tasks/``), then :class:`FinalizeTask`; on Slurm, as jobs that depend on each other.
:class:`ParaphraseDocuments` puts paraphrases in the ``metadata`` of a datatrove pipeline's documents.

>>> from paraamr.builder.pipeline import Stages
>>> class Parse:
...     def parse(self, texts):
...         return ["(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))" for _ in texts]
>>> class Realize:
...     def realize(self, graphs):
...         return [g.split("/")[1].split()[0] + " first." for g in graphs]
>>> from datatrove.data import Document
>>> step = ParaphraseDocuments(stages=Stages(realizer=Realize(), parser=Parse()))
>>> docs = list(step.run([Document(text="The boy wants to go.", id="d0")]))
>>> [p["para_text"] for p in docs[0].metadata["paraphrases"]]
['boy first.', 'go-02 first.']
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import itertools
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from datatrove.data import Document
from datatrove.pipeline.base import PipelineStep

from paraamr import layout
from paraamr.errors import ParaAMRError
from paraamr.options import EXECUTOR_DEFAULTS

__all__ = [
    "FinalizeTask",
    "GenerateTask",
    "ParaphraseDocuments",
    "PartitionTask",
    "document_schema",
    "launch",
]


class ParaphraseDocuments(PipelineStep):
    """Paraphrase each document's text (parse, re-focus, realize, score; the record settings as
    :func:`~paraamr.builder.stages.make_generator` takes them by name, checked here, or loaded
    ``stages``, which cannot cross processes: run those with one worker). Every document gets the
    same three ``metadata`` keys: ``amr`` and ``paraphrases`` as in a record, and
    ``paraamr_failure``, None unless the text could not be paraphrased (then ``amr`` is None and
    ``paraphrases`` empty); for a Parquet writer, :func:`document_schema`."""

    name = "🔁 ParaAMR paraphrases"
    type = "🦜 - PARAPHRASE"

    def __init__(self, *, batch_size: int = 256, stages: Any = None, **settings: Any):
        super().__init__()
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if settings:
            from paraamr.settings import split_settings

            split_settings(**settings)  # an unknown or bad setting: here, not in the log of every task
        self.batch_size, self.settings = batch_size, settings
        self.stages = _Loaded(stages) if stages is not None else None  # (kept out of datatrove's JSON)

    def _generator(self) -> Any:
        from paraamr.builder.pipeline import Generator
        from paraamr.builder.stages import make_generator
        from paraamr.settings import RecordSettings

        stages = self.stages.stages if self.stages is not None else None
        if self.settings or stages is None:
            return make_generator(stages=stages, **self.settings)
        return Generator(stages, RecordSettings(), window=self.batch_size)

    def run(self, data: Iterable[Document], rank: int = 0, world_size: int = 1) -> Iterator[Document]:
        """Paraphrase ``data`` batch by batch; the models load once, in the first batch (its time)."""
        from paraamr.builder.rows import text_row

        generator = None
        docs = iter(data)
        while batch := list(itertools.islice(docs, self.batch_size)):
            failed: list[dict] = []
            with self.track_time(unit="batch"):  # the models' time too: they load in the first batch
                generator = generator or self._generator()
                texts = [d.text for d in batch]
                records = {r["id"]: r for r in generator.generate(texts, on_failure=failed.append)}
            failures = {f["id"]: f["reason"] for f in reversed(failed)}
            for item in batch:
                key = text_row(0, item.text).id  # as the generator names it, whatever the text
                record = records.get(key)
                paraphrases = copy.deepcopy(record["paraphrases"]) if record else []  # (a repeat's own)
                failure = None if record else failures.get(key, "failed")
                amr = record["amr"] if record else None
                item.metadata.update(amr=amr, paraphrases=paraphrases, paraamr_failure=failure)
                self.stat_update("failed" if failure else "paraphrased")
                if record:
                    self.stat_update("paraphrases", value=len(paraphrases))
                yield item


def document_schema(**metadata: Any):
    """The Arrow schema of the documents :class:`ParaphraseDocuments` yields, for datatrove's
    ``ParquetWriter(..., schema=...)``, which otherwise takes the types of the first document (a
    failure's None, a paraphrase without a similarity score: later documents then do not fit):
    ``text``, ``id`` and ``metadata`` with ``amr``, ``paraphrases``, ``paraamr_failure`` and the
    documents' other metadata, given as ``name=pyarrow type``.

    >>> import pyarrow as pa
    >>> document_schema(lang=pa.string()).field("metadata").type.names
    ['amr', 'paraphrases', 'paraamr_failure', 'lang']
    """
    import pyarrow as pa

    from paraamr.records import PARAPHRASE_TYPE

    ours = {"amr": pa.string(), "paraphrases": pa.list_(PARAPHRASE_TYPE), "paraamr_failure": pa.string()}
    metadata = pa.struct([*ours.items(), *metadata.items()])
    return pa.schema([("text", pa.string()), ("id", pa.string()), ("metadata", metadata)])


class _Loaded:
    """Loaded model stages, shared, never copied: datatrove's executors copy the pipeline for each
    task and its JSON copies a dataclass whole, and a CTranslate2 model cannot be copied."""

    def __init__(self, stages: Any) -> None:
        self.stages = stages

    def __deepcopy__(self, memo: dict) -> _Loaded:
        return self

    def __repr__(self) -> str:
        return "<loaded stages>"


class PartitionTask(PipelineStep):
    """The start of a generate run into ``output`` cut into ``shard.count`` jobs
    (:func:`paraamr.builder.run.prepare`); a no-op once done. Its state is pickled for Slurm."""

    name = "🦜 ParaAMR partition"
    type = "🦜 - GENERATE"

    def __init__(self, output: str, record: Any, settings: Any, shard: Any, origin: dict[str, Any]):
        super().__init__()
        self.output, self.record, self.settings = output, record, settings
        self.shard, self.origin = shard, origin

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> None:
        from paraamr.builder.run import prepare
        from paraamr.builder.state import RunFolder

        folder = RunFolder(self.output, shard=self.shard, origin=self.origin, runs_models=False)
        try:
            prepare(self.record, self.settings, folder)
        finally:
            folder.unlock()

    def busy(self) -> set[int]:
        """The jobs (shards) that got rows to paraphrase, once :meth:`run` cut the input."""
        from paraamr.builder.partition import Plan

        return {k % self.shard.count for k in Plan.load(self.output).rows}


class GenerateTask(PipelineStep):
    """One task of a generate run: ``--shard RANK/TASKS`` of the parsed options ``args``, run by
    ``run`` (:func:`paraamr.commands.generate.run`), without the executor or the upload; raises
    when the shard fails, so that datatrove leaves the task incomplete."""

    name = "🦜 ParaAMR generate (one task)"
    type = "🦜 - GENERATE"

    def __init__(
        self, args: argparse.Namespace, run: Callable[[argparse.Namespace], int], *, workers: int = 1
    ):
        from paraamr.builder.shards import shard_command

        super().__init__()
        self.args, self.generate, self.workers = copy.copy(args), run, workers
        self.args.executor, self.args.push_to_hub, self.args.finalize = "none", None, "no"
        self.args.private, self.args.revision, self.args.token = False, None, None
        self.args.executor_task = True  # its shard is a task of the executor's (--tasks), which finalizes
        if getattr(args, "argv", None):  # datatrove writes the step into executor.json: no --token
            self.args.argv = shard_command(args.argv)
        for name in EXECUTOR_DEFAULTS:
            setattr(self.args, name, None)

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> None:
        """Run shard ``rank`` of ``world_size``, its share of the cores when tasks run side by side."""
        if self.workers > 1:
            from paraamr.tasks import share_cores

            share_cores(self.workers)
        args = copy.copy(self.args)
        args.shard = (rank, world_size)
        with self.track_time(unit="task"):
            status = self.generate(args)
        if status:
            raise ParaAMRError(f"task {rank} of {world_size} ended with status {status}")
        self._count(args.output, rank, world_size)

    def _count(self, output: str, rank: int, world_size: int) -> None:
        """datatrove's statistics of the task: the counts of the run's tasks it ran (its markers')."""
        from paraamr.builder.counts import Stats
        from paraamr.builder.partition import Plan
        from paraamr.builder.state import RunFolder
        from paraamr.tasks import owned

        folder, plan = RunFolder(output), Plan.load(output)
        for k in plan.rows if plan is not None else ():
            if owned(k, shard=(rank, world_size)) and (marker := folder.marker(k)) is not None:
                counts = Stats.from_dict(marker["stats"]).as_dict()
                for name in ("inputs", "records", "failures", "paraphrases"):
                    self.stat_update(name, value=counts[name])


class FinalizeTask(PipelineStep):
    """Finalize the run in ``output`` once every task is done (summary, shards, card; the upload)."""

    name = "🦜 ParaAMR finalize"
    type = "🦜 - GENERATE"

    def __init__(
        self,
        output: str,
        *,
        license: str | None = None,
        push: Any = None,
        started: float | None = None,
        run: Any = None,
        again: bool = False,
    ):
        super().__init__()
        self.output, self.license, self.push, self.started = output, license, push, started
        self.settings, self.again = run, again  # (``run`` is the step's method)

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> None:
        """:func:`~paraamr.builder.shards.finalize_run` (``started``: the monotonic time the run
        started, in this process): without ``again``, a requeued job redoes only what is left; with
        it, a finished run is finalized again with these options (a local launch, as a run in one
        process is)."""
        from paraamr.builder.shards import finalize_run

        options = {"license": self.license, "push": self.push, "run": self.settings}
        finalize_run(self.output, again=self.again, started=self.started, **options)


#: datatrove's line on the terminal (``{exception}`` left out: a failed task's traceback goes to its
#: log file, and the command ends with the error's one line).
_LINE = (
    "{time:YYYY-MM-DD HH:mm:ss.SSS} | <level>{level: <8}</level> | {name}:{function}:{line} - "
    "<level>{message}</level>"
)


#: The process that watches its launcher (:func:`_end_with`): a pool worker runs many tasks.
_watching = {"pid": 0}


def _end_with(launcher: int) -> None:
    """Send this process SIGTERM once process ``launcher`` has ended (checked each second, in a
    thread, one a process): a launcher killed with -9 leaves no worker in the middle of a task, nor
    datatrove's manager and the fork server waiting."""
    import threading

    if _watching["pid"] == os.getpid():
        return
    _watching["pid"] = os.getpid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            try:
                os.kill(launcher, 0)
            except (ProcessLookupError, PermissionError):  # (another user's process under its id)
                os.kill(os.getpid(), signal.SIGTERM)
                return

    threading.Thread(target=watch, name="paraamr-launcher-watch", daemon=True).start()


def _local_executor(busy: Iterable[int], **options: Any) -> Any:
    """datatrove's ``LocalPipelineExecutor`` that runs only the jobs ``busy`` (the others have no
    rows: done as they are), whose tasks log to the terminal without tracebacks and without errors
    (a task's log file keeps both), in workers that leave Ctrl-C to the launcher."""
    import datatrove.executor.base as base
    from datatrove.executor import LocalPipelineExecutor

    task_logger = base.add_task_logger

    def quiet_task_logger(logging_dir: Any, rank: int, local_rank: int = 0, node_rank: int = -1) -> Any:
        from loguru import logger  # here: a worker process gets a copy of what the closure holds

        logfile = task_logger(logging_dir, rank, local_rank, node_rank=node_rank)
        logger.remove()  # datatrove's two sinks again, the terminal's (the first worker's) without errors
        if local_rank == 0:
            below_errors = lambda record: record["level"].no < 40  # noqa: E731
            logger.add(sys.stderr, level="INFO", format=lambda _: _LINE + "\n", filter=below_errors)
        logger.add(logfile, level="DEBUG", format=_LINE)
        return logfile

    quiet = "ignore::UserWarning:multiprocess.resource_tracker"  # "leaked semaphores" after a failed task
    if quiet not in sys.warnoptions:  # the options the resource tracker's process starts with
        sys.warnoptions.append(quiet)

    launcher = os.getpid()

    busy = frozenset(busy)

    def manager() -> Any:  # datatrove's, in a process that ends with the launcher
        import multiprocess.managers

        made = multiprocess.managers.SyncManager(ctx=multiprocess.get_context())
        made.start(_end_with, (launcher,))
        return made

    class Executor(LocalPipelineExecutor):
        def run(self) -> Any:
            import multiprocess

            default, multiprocess.Manager = multiprocess.Manager, manager
            try:
                return super().run()
            finally:
                multiprocess.Manager = default

        def is_rank_completed(self, rank: int) -> bool:
            return rank not in busy or super().is_rank_completed(rank)

        def get_incomplete_ranks(self, ranks: Any = None, skip_completed: Any = None) -> list[int]:
            mine = sorted(busy if ranks is None else busy.intersection(ranks))
            return super().get_incomplete_ranks(mine, skip_completed)

        def _run_for_rank(self, rank: int, local_rank: int = 0, node_rank: int = -1) -> Any:
            if os.getpid() != launcher:  # a worker: Ctrl-C is the launcher's to handle (it ends the pool)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                _end_with(launcher)
            base.add_task_logger = quiet_task_logger
            try:
                return super()._run_for_rank(rank, local_rank, node_rank)
            finally:
                base.add_task_logger = task_logger

    return Executor(**options)


def launch(
    args: argparse.Namespace,
    record: Any,
    run: Any,
    generate: Callable[[argparse.Namespace], int],
    push: Any = None,
    origin: dict[str, Any] | None = None,
) -> int:
    """Run the generate command ``args`` (its ``record`` and ``run`` settings; ``origin``, see
    :class:`~paraamr.builder.state.RunFolder`) as datatrove jobs that each call ``generate``,
    between the partition and the finalize (``push``: the upload). Everything is checked first."""
    from paraamr.builder.checks import check_run
    from paraamr.builder.state import RunFolder, Shard

    tasks = args.tasks  # options checked (and filled in) by the command
    started, shard = time.monotonic(), Shard(0, tasks, executor=True)
    local = args.executor == "local"  # its tasks run here; Slurm's, on other nodes
    folder = RunFolder(args.output, shard=shard, origin=origin, device=run.device, runs_models=local)
    check_run(record, folder, download=run.download, trust_remote_code=run.trust_remote_code, push=push)
    logs = Path(args.output) / layout.STATE_DIR / "tasks"
    start = PartitionTask(str(args.output), record, run, shard, origin or {})
    step = GenerateTask(args, generate)
    if local:  # the finalize runs in this process, as a run in one process finishes: again on a
        # finished run (this launch's --license and --max-shard-size), with the run's whole time
        options = {"license": args.license, "push": push, "run": run, "started": started}
        finalize = FinalizeTask(str(args.output), **options, again=True)
        start.run()
        busy = start.busy()
        step.workers = workers = max(1, min(args.workers, len(busy)))  # side by side: a share of the cores
        tasks_log = str(logs / "generate")
        _local_executor(busy, pipeline=[step], tasks=tasks, workers=workers, logging_dir=tasks_log).run()
        finalize.run()
        return 0
    if push is not None and push.token:  # never in the jobs' files: in the environment sbatch exports
        os.environ["HF_TOKEN"], push = push.token, dataclasses.replace(push, token=None)
    finalize = FinalizeTask(str(args.output), license=args.license, push=push, run=run)
    from datatrove.executor import SlurmPipelineExecutor

    venv = Path(os.environ.get("VIRTUAL_ENV", "")) / "bin" / "activate"  # for the jobs to activate

    def job(name: str, task: PipelineStep, **options: Any) -> SlurmPipelineExecutor:
        return SlurmPipelineExecutor(
            [task],
            job_name=f"paraamr-{name}",
            logging_dir=str(logs / name),
            time=args.slurm_time,
            partition=args.slurm_partition,
            venv_path=str(venv) if os.environ.get("VIRTUAL_ENV") and venv.is_file() else None,
            **options,
        )

    first = job("partition", start, tasks=1, cpus_per_task=1)
    cpus, gpus = args.slurm_cpus, args.slurm_gpus
    array = job("generate", step, tasks=tasks, depends=first, cpus_per_task=cpus, gpus_per_task=gpus)
    job("finalize", finalize, tasks=1, depends=array).run()
    return 0
