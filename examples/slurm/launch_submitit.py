"""Run ``generate.py`` as N independent shards on a Slurm cluster from Python, with submitit
(``pip install 'paraamr[cluster]'``): the same as ``examples/slurm/generate.sbatch``, without an
sbatch file. Each shard is one array task on one GPU; submitit requeues a task that is preempted
or reaches its time limit, and the shard does again only its tasks a kill cut short; the last shard to finish
finalizes the run (``--finalize auto``). Everything after ``--`` goes to ``generate.py``::

    python examples/slurm/launch_submitit.py --shards 64 --parallel 16 --partition gpu -- \\
        --input sentences.txt --output /shared/paraamr-out --dtype bfloat16

``--cluster local`` runs the shards as processes of this machine (a dry run of the launch);
``--wait`` waits for every shard and says how the run ended.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import submitit

from paraamr.cli import main as paraamr


class ShardJob(submitit.helpers.Checkpointable):
    """One shard: ``generate.py OPTIONS --shard I/N --finalize auto``. Requeued as it is on
    preemption or timeout (:class:`submitit.helpers.Checkpointable`): the run's completed tasks
    are kept, so the shard goes on with the tasks it had not completed."""

    def __call__(self, options: list[str], index: int, count: int) -> int:
        status = paraamr(["generate", *options, "--shard", f"{index}/{count}", "--finalize", "auto"])
        if status:
            raise RuntimeError(f"shard {index}/{count} ended with status {status} (see its log)")
        return status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, required=True, help="N: how many shards (array tasks)")
    parser.add_argument("--parallel", type=int, default=16, help="array tasks running at once (default: 16)")
    parser.add_argument("--partition", help="Slurm partition")
    parser.add_argument("--gpus", type=int, default=1, help="GPUs per shard (default: 1)")
    parser.add_argument("--cpus", type=int, default=8, help="CPU cores per shard (default: 8)")
    parser.add_argument("--hours", type=float, default=12, help="time limit of a task (default: 12)")
    parser.add_argument("--logs", default="paraamr-logs", help="submitit's folder (logs, pickles)")
    parser.add_argument("--cluster", help="submitit's executor: slurm (default when sbatch is here), local")
    parser.add_argument("--wait", action="store_true", help="wait for every shard, then report")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    args, options = build_parser().parse_args(argv[:split]), argv[split + 1 :]
    if "--shard" in options or "--output" not in options:
        sys.exit("launch_submitit.py: give generate.py's options after --, with --output and without --shard")
    executor = submitit.AutoExecutor(folder=args.logs, cluster=args.cluster)
    executor.update_parameters(
        name="paraamr",
        timeout_min=int(args.hours * 60),
        gpus_per_node=args.gpus,
        cpus_per_task=args.cpus,
        slurm_partition=args.partition,
        slurm_array_parallelism=args.parallel,
        slurm_additional_parameters={"requeue": True},
    )
    n = args.shards
    jobs = executor.map_array(ShardJob(), [options] * n, range(n), [n] * n)
    output = options[options.index("--output") + 1]
    print(f"submitted {n} shards ({jobs[0].job_id.split('_')[0]}); the last to finish finalizes {output}")
    if not args.wait:
        return 0
    failed = []
    for index, job in enumerate(jobs):
        try:
            job.result()
        except Exception as err:  # a shard that failed for good: named, the others still count
            failed.append(f"shard {index}/{n}: {str(err).strip().splitlines()[-1]}")
    for line in failed:
        print(line, file=sys.stderr)
    finalized = (Path(output) / "summary.json").is_file()
    then = f"{output} is finalized" if finalized else f"finalize it with: paraamr finalize {output}"
    print(f"{n - len(failed)} of {n} shards done; {then}")
    return 1 if failed or not finalized else 0


if __name__ == "__main__":
    sys.exit(main())
