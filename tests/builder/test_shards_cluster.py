"""Eight independent shards of one input, run on one machine as a cluster runs them.

``generate.py --shard I/8`` as separate processes, at most two at a time, in a random order: two
killed with SIGKILL after their first task and run again, one started twice at once (one of the
two is refused), one given as ``--shard slurm`` with the array's variables set by hand, the last
two started at once with ``--finalize auto``. ``paraamr finalize`` refuses while shards are not
done (naming their tasks and printing the command of each shard), then the folder equals a one-process run's:
records compared by id, text, graph and paraphrases, failures by id and reason, perplexities
within 1e-6 relative, the summary's counts and the card's statistics the same. Tiny random models,
AMR input (no parser): about a minute."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from entries import generate
from oracle import failures as read_failures
from oracle import records as read_records
from tinyargs import model_args

from paraamr.builder.readers import read_input
from paraamr.builder.rows import shard_of
from paraamr.builder.shards import run_statuses
from paraamr.cli import main as paraamr

#: Every test reads the eight-shard cluster run (module fixture ``cluster``, minutes on 2 cores).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
N = 8
#: The order is random; the seed is printed with any failure (set PARAAMR_SHARD_SEED to replay).
SEED = int(os.environ.get("PARAAMR_SHARD_SEED", random.SystemRandom().randrange(10**6)))
SHAPES = (
    "(s / say-01 :ARG0 (m / man) :ARG1 (t / thing :quant {i}) :ARG2 (w / woman))",
    "(w / want-01 :ARG0 (b / boy :quant {i}) :ARG1 (g / go-02 :ARG0 b))",
    "(k / know-01 :ARG0 (i / i) :ARG1 (n / need-01 :ARG0 (t / they) :ARG1 (d / document :quant {i})))",
)


def _graphs() -> str:
    blocks = [f"# ::id g{i}\n# ::snt Sentence {i}.\n{SHAPES[i % len(SHAPES)].format(i=i)}" for i in range(48)]
    blocks += [blocks[5], "# ::id broken\n(b / broken :ARG0"]  # a repeated id and a graph that is no graph
    return "\n\n".join(blocks) + "\n"


@pytest.fixture(scope="module")
def graphs(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("input") / "graphs.amr"
    path.write_text(_graphs())
    return path


#: A task of one row: many points to be killed at.
CHUNKS = ("--window", "1", "--task-rows", "1")


def _args(tiny: dict, graphs: Path, out: Path) -> list[str]:
    return ["--amr-input", str(graphs), "--output", str(out), *model_args(tiny), "--no-progress", *CHUNKS]


@pytest.fixture(scope="module")
def one_proc(tiny_models, graphs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("one") / "out"
    with contextlib.redirect_stderr(io.StringIO()):
        assert generate(_args(tiny_models, graphs, out)) == 0
    return out


class Cluster:
    """Shards as separate processes; what each printed and how it ended."""

    def __init__(self, tiny: dict, graphs: Path, out: Path):
        self.args, self.out, self.logs = _args(tiny, graphs, out), out, out.parent / "logs"
        self.logs.mkdir()
        self.count = 0

    def start(self, shard: str, *extra: str, env: dict | None = None) -> subprocess.Popen:
        self.count += 1
        log = (self.logs / f"{self.count:02d}-{shard.replace('/', 'of')}.txt").open("w")
        environ = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", **(env or {})}
        cmd = [sys.executable, str(ROOT / "generate.py"), *self.args, "--shard", shard, *extra]
        proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, env=environ, start_new_session=True
        )
        proc.log = Path(log.name)  # type: ignore[attr-defined]
        return proc

    def run(self, shards: list[str], *extra: str, slots: int = 2) -> None:
        """Run shards to the end, ``slots`` at a time, each one ending with status 0."""
        for k in range(0, len(shards), slots):
            procs = [self.start(s, *extra) for s in shards[k : k + slots]]
            for proc in procs:
                assert proc.wait(timeout=300) == 0, proc.log.read_text()[-3000:]

    def done(self, i: int) -> int:
        """The completed tasks of shard ``i``."""
        markers = (self.out / ".paraamr" / "generate").glob("task-*.json")
        return sum(1 for p in markers if int(p.stem[len("task-") :]) % N == i)


def _running(cluster: Cluster, i: int, wait: float = 5.0) -> str:
    """``"running"`` once :func:`run_statuses` says a task of shard ``i`` runs (between two tasks the
    shard holds no task's lock for a moment), "" if it never does within ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if any(w.startswith("running") for k, w in run_statuses(cluster.out).todo.items() if k % N == i):
            return "running"
        time.sleep(0.005)
    return ""


def _kill_after_first_task(cluster: Cluster, victims: list[int]) -> dict[int, str]:
    """Start the victims, SIGKILL each once it completed a task (before it is done); return what
    :func:`run_statuses` said of its tasks while it ran."""
    procs = {i: cluster.start(f"{i}/{N}") for i in victims}
    seen: dict[int, str] = {}
    deadline = time.monotonic() + 300
    while procs and time.monotonic() < deadline:
        for i, proc in list(procs.items()):
            if cluster.done(i) >= 1:
                seen[i] = _running(cluster, i)
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                del procs[i]
            elif proc.poll() is not None:
                pytest.fail(f"shard {i} ended before it could be killed: {proc.log.read_text()[-2000:]}")
        time.sleep(0.005)
    assert not procs, "a victim never completed a task"
    return seen


@pytest.fixture(scope="module")
def cluster(tiny_models, graphs, tmp_path_factory) -> dict:
    """The whole scenario; what was seen on the way, for the tests below."""
    rng = random.Random(SEED)
    ids = [row.id for row in read_input(graphs, fmt="amr")]
    rows = Counter(shard_of(i, N) for i in ids)
    by_size = sorted(range(N), key=lambda i: (-rows[i], i))
    victims, rest = by_size[:2], by_size[2:]  # the largest shards: the most tasks to be killed at
    rng.shuffle(rest)
    double, last, others = rest[0], rest[1:3], rest[3:]
    c = Cluster(tiny_models, graphs, tmp_path_factory.mktemp("cluster") / "out")
    seen: dict = {"seed": SEED, "victims": victims, "double": double, "last": last, "rows": rows}

    seen["running"] = _kill_after_first_task(c, victims)
    seen["killed_done"] = {i: c.done(i) for i in victims}

    twins = [c.start(f"{double}/{N}"), c.start(f"{double}/{N}")]
    seen["double"] = (double, [p.wait(timeout=300) for p in twins], [p.log.read_text() for p in twins])

    slurm, plain = others[0], others[1:]
    env = {"SLURM_ARRAY_TASK_ID": str(slurm + 1), "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": str(N)}
    proc = c.start("slurm", env=env)
    assert proc.wait(timeout=300) == 0, proc.log.read_text()[-3000:]
    c.run([f"{i}/{N}" for i in plain])

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        seen["early_finalize"] = (paraamr(["finalize", str(c.out)]), out.getvalue(), err.getvalue())
    seen["early_files"] = sorted(p.name for p in c.out.iterdir())

    c.run([f"{i}/{N}" for i in victims])  # rerun: each does the tasks it had not completed
    pair = [c.start(f"{i}/{N}", "--finalize", "auto") for i in last]  # the last two, at once
    seen["last_runs"] = [(p.wait(timeout=300), p.log.read_text()) for p in pair]
    seen["out"] = c.out
    return seen


def _by_id(folder: Path) -> tuple[dict, dict]:
    """``{id: (text, amr, paraphrases without perplexity)}`` and ``{id: perplexities}``."""
    content, ppl = {}, {}
    for r in read_records(folder):
        assert r["id"] not in content, f"record {r['id']} twice"
        paras = r["paraphrases"]
        content[r["id"]] = (r["text"], r["amr"], [(p["para_text"], p["focus"], p["amr"]) for p in paras])
        ppl[r["id"]] = [p["perplexity"] for p in paras]
    return content, ppl


def _failures(folder: Path) -> list[tuple]:
    return sorted((f["id"], f["stage"], f["reason"]) for f in read_failures(folder))


def test_killed_shards_were_running_and_unfinished(cluster):
    assert set(cluster["running"].values()) == {"running"}, cluster["seed"]
    for i, done in cluster["killed_done"].items():
        assert 1 <= done < cluster["rows"][i]  # one row a task


def test_a_shard_started_twice_at_once_runs_once(cluster):
    double, codes, logs = cluster["double"]
    assert sorted(codes) == [0, 1], (cluster["seed"], logs)
    line = logs[codes.index(1)].strip().splitlines()[-1]
    # (before, when the other had its writer's lock first: "writer s00002-of-00004.00000-of-00001 is ...")
    assert line.startswith("paraamr generate: ") and f"shard {double}/{N} is running already" in line, line
    assert line.endswith("wait for it to finish or stop it"), line


def test_finalize_refuses_while_shards_are_not_done(cluster):
    code, stdout, stderr = cluster["early_finalize"]
    victims, last = sorted(cluster["victims"]), sorted(cluster["last"])
    assert code == 1 and len(stderr.strip().splitlines()) == 1, stderr
    assert "tasks not done (not run: " in stderr and "shards to run again: " in stderr
    commands = [line.split() for line in stdout.splitlines() if not line.startswith("#")]
    assert sorted(c[c.index("--shard") + 1] for c in commands) == [f"{i}/{N}" for i in sorted(victims + last)]
    assert all(c[:2] == ["paraamr", "generate"] and "--overwrite" not in c for c in commands)  # to paste
    assert cluster["early_files"] == [".paraamr"]  # nothing written


def test_the_last_shard_to_finish_finalizes_once(cluster):
    runs = cluster["last_runs"]
    assert [code for code, _ in runs] == [0, 0]
    wrote = [log for _, log in runs if f"wrote {cluster['out']}" in log]
    assert len(wrote) == 1, [log[-1500:] for _, log in runs]


def test_eight_shards_equal_one_process(cluster, one_proc):
    out = cluster["out"]
    (content, ppl), (expected, expected_ppl) = _by_id(out), _by_id(one_proc)
    assert content == expected and any(paras for *_, paras in expected.values())
    assert ppl.keys() == expected_ppl.keys()
    for key, values in ppl.items():
        assert values == pytest.approx(expected_ppl[key], rel=1e-6)
    assert _failures(out) == _failures(one_proc) and {s for _, s, _ in _failures(out)} == {"input"}
    assert not list(out.rglob("*.tmp")) and not (out / ".paraamr" / "parts").exists()


def test_summary_and_card_statistics_equal_one_process(cluster, one_proc):
    out = cluster["out"]
    summary, expected = (json.loads((d / "summary.json").read_text()) for d in (out, one_proc))
    for counts in (summary["counts"], expected["counts"]):
        counts.pop("seconds_by_stage")
    assert summary["counts"] == expected["counts"] and summary["complete"] and summary["reconciles"]
    assert summary["run"]["shards"] == N and summary["run"]["tasks"] == N * 7  # 50 rows, one a task

    def statistics(folder: Path) -> str:
        card = (folder / "README.md").read_text(encoding="utf-8")
        return card.split("## Statistics", 1)[1].split("## Evaluation", 1)[0]

    assert statistics(out) == statistics(one_proc)
    names = lambda d: sorted(str(p.relative_to(d)) for p in d.rglob("*") if ".paraamr" not in p.parts)  # noqa: E731
    assert names(out) == names(one_proc)  # the same files: shards named over the whole run


def test_finalize_again_changes_no_record(cluster):
    out = cluster["out"]
    before = _by_id(out)
    with contextlib.redirect_stderr(io.StringIO()):
        assert paraamr(["finalize", str(out)]) == 0
    assert _by_id(out) == before
