"""paraamr's work as datatrove pipeline steps, run by datatrove's executors.

``generate --executor local|slurm --tasks T`` hands a run to datatrove as T jobs, job ``I`` being
``--shard I/T`` of the run (its tasks ``k mod T = I``; :mod:`paraamr.builder.shards`). First
:class:`PartitionTask` saves the settings and cuts the input into tasks, once (on Slurm, a job the
array depends on); :class:`GenerateTask` is the one step of each job, whose completion marker,
logs and statistics are datatrove's (under ``DIR/.paraamr/tasks/``, never uploaded): a job run
again after a kill redoes only its tasks without a completion marker, a completed job is skipped;
and :class:`FinalizeTask` finalizes the run once every task is done (on Slurm, a job that depends
on the array). A datatrove user puts :class:`ParaphraseDocuments` in a pipeline of their own:
documents in, each with its paraphrases in ``metadata``.

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
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from datatrove.data import Document
from datatrove.pipeline.base import PipelineStep

from paraamr import layout
from paraamr.errors import ParaAMRError, UsageError

__all__ = ["FinalizeTask", "GenerateTask", "ParaphraseDocuments", "PartitionTask", "launch"]


class ParaphraseDocuments(PipelineStep):
    """Paraphrase each document's text (parse, re-focus, realize, score; the record settings as
    :func:`~paraamr.builder.stages.make_generator` takes them by name, or loaded ``stages``):
    ``metadata["paraphrases"]`` and ``metadata["amr"]`` as in a record; a text that cannot be
    paraphrased keeps its document, with ``metadata["paraamr_failure"]`` saying why."""

    name = "🔁 ParaAMR paraphrases"
    type = "🦜 - PARAPHRASE"

    def __init__(self, *, batch_size: int = 256, stages: Any = None, **settings: Any):
        super().__init__()
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.batch_size, self.stages, self.settings = batch_size, stages, settings

    def run(self, data: Iterable[Document], rank: int = 0, world_size: int = 1) -> Iterator[Document]:
        """Paraphrase ``data`` batch by batch; the models load once, on the first batch."""
        from paraamr.builder.pipeline import Generator
        from paraamr.builder.stages import make_generator
        from paraamr.records import text_id
        from paraamr.settings import RecordSettings

        if self.settings or self.stages is None:
            generator = make_generator(stages=self.stages, **self.settings)
        else:
            generator = Generator(self.stages, RecordSettings(), window=self.batch_size)
        batch: list[Document] = []
        for doc in [*data, None]:
            if doc is not None:
                batch.append(doc)
                if len(batch) < self.batch_size:
                    continue
            failed: list[dict] = []
            records = {
                r["id"]: r for r in generator.generate([d.text for d in batch], on_failure=failed.append)
            }
            failures = {f["id"]: f["reason"] for f in reversed(failed)}
            for item in batch:
                record = records.get(text_id(item.text))
                with self.track_time():
                    if record is None:
                        item.metadata["paraamr_failure"] = failures.get(text_id(item.text), "failed")
                        self.stat_update("failed")
                    else:
                        item.metadata["amr"] = record["amr"]
                        item.metadata["paraphrases"] = record["paraphrases"]
                        self.stat_update("paraphrased")
                        self.stat_update("paraphrases", value=len(record["paraphrases"]))
                yield item
            batch = []


class PartitionTask(PipelineStep):
    """The start of a generate run into ``output`` cut into ``shard.count`` jobs: everything
    checked, the settings saved (with ``origin``, :class:`~paraamr.builder.state.RunFolder`) and
    the input cut into tasks (:func:`paraamr.builder.run.prepare`); a no-op once done. Its state
    is plain values: a Slurm job gets it pickled."""

    name = "🦜 ParaAMR partition"
    type = "🦜 - GENERATE"

    def __init__(self, output: str, record: Any, settings: Any, shard: Any, origin: dict[str, Any]):
        super().__init__()
        self.output, self.record, self.settings = output, record, settings
        self.shard, self.origin = shard, origin

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> None:
        from paraamr.builder.run import prepare
        from paraamr.builder.state import RunFolder

        folder = RunFolder(self.output, shard=self.shard, origin=self.origin)
        try:
            prepare(self.record, self.settings, folder)
        finally:
            folder.unlock()


class GenerateTask(PipelineStep):
    """One task of a generate run: ``--shard RANK/TASKS`` of its command (``args``, the parsed
    options, run by ``run``: :func:`paraamr.commands.generate.run`); raises when the shard fails, so that
    datatrove leaves the task incomplete."""

    name = "🦜 ParaAMR generate (one task)"
    type = "🦜 - GENERATE"

    def __init__(
        self, args: argparse.Namespace, run: Callable[[argparse.Namespace], int], *, workers: int = 1
    ):
        super().__init__()
        self.args, self.generate = _task_args(args), run
        self.workers = workers

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> None:
        """Run shard ``rank`` of ``world_size``, its share of the cores when tasks run side by side."""
        if self.workers > 1:
            from paraamr.tasks import share_cores

            share_cores(self.workers)
        args = copy.copy(self.args)
        args.shard = (rank, world_size)
        status = self.generate(args)
        if status:
            raise ParaAMRError(f"task {rank} of {world_size} ended with status {status}")


class FinalizeTask(PipelineStep):
    """Finalize the run in ``output`` once every task is done (summary, shards, card; the upload)."""

    name = "🦜 ParaAMR finalize"
    type = "🦜 - GENERATE"

    def __init__(self, output: str, *, license: str | None = None, push: Any = None):
        super().__init__()
        self.output, self.license, self.push = output, license, push

    def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> None:
        """:func:`~paraamr.builder.shards.finalize_run`, once: a requeued job redoes only what is left."""
        from paraamr.builder.shards import finalize_run

        finalize_run(self.output, license=self.license, push=self.push, again=False)


def _task_args(args: argparse.Namespace) -> argparse.Namespace:
    """A task's options: the run's, without the executor (a task runs in place) or the upload (the
    finalize task uploads)."""
    task = copy.copy(args)
    task.executor, task.push_to_hub, task.finalize = "none", None, "no"
    task.private, task.revision, task.token = False, None, None
    return task


def launch(
    args: argparse.Namespace,
    record: Any,
    run: Any,
    generate: Callable[[argparse.Namespace], int],
    push: Any = None,
    origin: dict[str, Any] | None = None,
) -> int:
    """Run the generate command ``args`` (its ``record`` and ``run`` settings; ``origin``: what it
    records beside them, :class:`~paraamr.builder.state.RunFolder`) as datatrove jobs
    (``args.executor``; each job calls ``generate``), after the partition and before the finalize
    (``push``: the upload): at once on this machine, or as Slurm jobs that depend on each other.
    The input, the folder and the models are checked first, once, before any job starts."""
    from paraamr.builder.checks import check_run
    from paraamr.builder.state import RunFolder, Shard

    tasks = args.workers if args.tasks is None else args.tasks
    if tasks < 1 or args.workers < 1:
        raise UsageError("--tasks and --workers must be positive")
    if args.shard is not None:
        raise UsageError("--executor cuts the run into --tasks itself: leave out --shard")
    if args.overwrite:
        raise UsageError("--overwrite does not go with --executor: remove the folder, or give a new --output")
    if args.executor == "slurm" and not args.slurm_partition:
        raise UsageError("--executor slurm needs --slurm-partition")
    shard = Shard(0, tasks)
    folder = RunFolder(args.output, shard=shard, origin=origin)
    check_run(record, folder, download=run.download, trust_remote_code=run.trust_remote_code)
    logs = Path(args.output) / layout.STATE_DIR / "tasks"
    start = PartitionTask(str(args.output), record, run, shard, origin or {})
    step = GenerateTask(args, generate, workers=min(args.workers, tasks))
    finalize = FinalizeTask(str(args.output), license=args.license, push=push)
    if args.executor == "local":
        from datatrove.executor import LocalPipelineExecutor

        start.run()
        executor = LocalPipelineExecutor(
            [step], tasks=tasks, workers=args.workers, logging_dir=str(logs / "generate")
        )
        executor.run()
        finalize.run()
        return 0
    from datatrove.executor import SlurmPipelineExecutor

    common = {"time": args.slurm_time, "partition": args.slurm_partition, "venv_path": _venv()}
    first = SlurmPipelineExecutor(
        [start],
        tasks=1,
        cpus_per_task=1,
        job_name="paraamr-partition",
        logging_dir=str(logs / "partition"),
        **common,
    )
    array = SlurmPipelineExecutor(
        [step],
        tasks=tasks,
        depends=first,
        cpus_per_task=args.slurm_cpus,
        gpus_per_task=args.slurm_gpus,
        job_name="paraamr-generate",
        logging_dir=str(logs / "generate"),
        **common,
    )
    after = SlurmPipelineExecutor(
        [finalize],
        tasks=1,
        depends=array,
        job_name="paraamr-finalize",
        logging_dir=str(logs / "finalize"),
        **common,
    )
    after.run()
    return 0


def _venv() -> str | None:
    """The activate script of the virtual environment this runs in, for the Slurm jobs."""
    activate = Path(os.environ.get("VIRTUAL_ENV", "")) / "bin" / "activate"
    return str(activate) if os.environ.get("VIRTUAL_ENV") and activate.is_file() else None
