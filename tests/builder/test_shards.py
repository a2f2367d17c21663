"""Shards without models: ``--shard`` and the Slurm array variables, the tasks taken by the
processes of shards, what a shard refuses (another N, another run's settings, a shard running
already) and what ``--overwrite`` resets, and finalize on synthetic runs: refused while a task is
not done, two finalizers at once, the shards named over the run."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from shard_runs import by_shard, records, write_run

from paraamr import layout
from paraamr.builder.counts import Stats
from paraamr.builder.partition import partition
from paraamr.builder.rows import decode_bytes
from paraamr.builder.shards import Shard, finalize_run, run_statuses, shard_done
from paraamr.builder.state import RunFolder
from paraamr.commands.generate import build_parser
from paraamr.errors import FolderLocked, InputError
from paraamr.settings import RecordSettings

ROOT = Path(__file__).resolve().parents[2]
SLURM = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX")


def _parse_shard(monkeypatch, capsys, value: str, **env: str):
    for name in SLURM:
        monkeypatch.delenv(name, raising=False)
    for name, v in env.items():
        monkeypatch.setenv(f"SLURM_ARRAY_TASK_{name}", v)
    try:
        return build_parser().parse_args(["--amr-input", "x", "--shard", value]).shard
    except SystemExit as stop:
        err = capsys.readouterr().err
        assert stop.code == 2 and len(err.strip().splitlines()) == 1, err
        return err


@pytest.mark.parametrize(
    ("value", "env", "expected"),
    [
        ("3/8", {}, (3, 8)),
        ("slurm", {"ID": "3", "COUNT": "8"}, (3, 8)),  # --array=0-7
        ("slurm", {"ID": "4", "MIN": "1", "MAX": "8"}, (3, 8)),  # --array=1-8
        ("slurm", {"ID": "12", "MIN": "10", "MAX": "17", "COUNT": "8"}, (2, 8)),  # --array=10-17%2
        ("8/8", {}, "I must be in 0..7"),
        ("3", {}, "is not I/N"),
        ("slurm", {}, "SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT"),
        ("slurm", {"ID": "4", "MIN": "0", "MAX": "14", "COUNT": "8", "STEP": "2"}, (2, 8)),  # 0-14:2
        ("slurm", {"ID": "5", "MIN": "1", "MAX": "9", "COUNT": "3"}, "not 3 evenly spaced tasks"),  # 1,5,9
        ("slurm", {"ID": "9", "COUNT": "8"}, "outside the array's 0..7"),
    ],
)
def test_shard_option_reads_i_of_n_and_the_slurm_array(monkeypatch, capsys, value, env, expected):
    got = _parse_shard(monkeypatch, capsys, value, **env)
    assert got == expected if isinstance(expected, tuple) else expected in got


def test_processes_of_shards_take_each_task_once_and_only_their_shards_tasks(tmp_path):
    """Four shards run by 1, 2, 3 and 1 processes, taking tasks in turn: each task is taken
    exactly once, by a process of its shard, and no process is left without work."""
    out = tmp_path / "out"
    plan = partition(out, [decode_bytes(f"row {i}".encode()) for i in range(300)], task_rows=10, shards=4)
    assert plan.count == 32 and sum(plan.rows.values()) == 300
    ks = {0: 1, 1: 2, 2: 3, 3: 1}
    folders = [
        RunFolder(out, rank=r, num_processes=k, shard=Shard(i, 4)) for i, k in ks.items() for r in range(k)
    ]
    taken: dict[str, list[int]] = {f.writer: [] for f in folders}
    active = [(f, f.claim(plan)) for f in folders]
    while active:
        for f, claims in list(active):
            task = next(claims, None)
            if task is None:
                active.remove((f, claims))
                continue
            taken[f.writer].append(task)
            f.complete(task, {}, Stats().as_dict())
    assert sorted(t for ts in taken.values() for t in ts) == sorted(plan.rows)
    assert all(t % 4 == f.shard[0] for f in folders for t in taken[f.writer])
    assert all(taken.values())


def test_a_task_held_by_one_process_is_left_to_it(tmp_path):
    out = tmp_path / "out"
    plan = partition(out, [decode_bytes(f"row {i}".encode()) for i in range(40)], task_rows=5)
    first, second = (RunFolder(out, rank=r, num_processes=2) for r in (0, 1))
    running = first.claim(plan)
    held = next(running)  # running it: its lock held
    rest = list(second.claim(plan))
    assert held not in rest and sorted([held, *rest]) == sorted(plan.rows)


def _record(tmp_path: Path, **changes) -> RecordSettings:
    return RecordSettings(amr_input=str(tmp_path / "input.amr"), max_perplexity=None, **changes)


def _shard(tmp_path: Path, i: int, n: int = 8, k: int = 1, rank: int = 0) -> RunFolder:
    return RunFolder(tmp_path / "out", rank=rank, num_processes=k, shard=Shard(i, n))


def _start(folder: RunFolder, record: RecordSettings, *, overwrite: bool = False) -> str:
    """What a shard's main process does before its tasks: check, lock, save the settings, cut the input."""
    mode = folder.check(record, None, overwrite=overwrite)
    folder.lock(alone=True)
    folder.prepare(folder.resume_record(record, None), lambda: [], mode=mode, task_rows=10)
    return mode


def test_a_shard_refuses_another_shard_count_or_run_and_takes_any_process_count(tmp_path):
    record = _record(tmp_path)
    first = _shard(tmp_path, 3)
    assert _start(first, record) == "new"
    first.complete(3, {}, Stats().as_dict())
    first.unlock()
    with pytest.raises(InputError, match=r"shards were 8 \(--shard I/8\), now 4"):
        _shard(tmp_path, 1, n=4).check(record, None, overwrite=False)
    assert _shard(tmp_path, 3, k=2).check(record, None, overwrite=False) == "resume"  # tasks, not processes
    with pytest.raises(InputError, match="--foci was 'all', now 2"):
        _shard(tmp_path, 5).check(_record(tmp_path, foci=2), None, overwrite=False)
    with pytest.raises(InputError, match=r"cut into 8 shards .*now no --shard"):
        RunFolder(tmp_path / "out").check(record, None, overwrite=False)
    plain = RunFolder(tmp_path / "plain", num_processes=2)
    plain.prepare(plain.resume_record(record, None), lambda: [], mode="new", task_rows=10)
    plain.complete(0, {}, Stats().as_dict())
    with pytest.raises(InputError, match=r"the run is not cut into shards, now shard 0/8"):
        RunFolder(plain.path, shard=Shard(0, 8)).check(record, None, overwrite=False)
    # --executor's cut is its --tasks, and it refuses --overwrite: before, both refusals named --shard
    # and said to pass --overwrite
    with pytest.raises(InputError, match=r"not cut into tasks, now --tasks 8\); give a new --output to"):
        RunFolder(plain.path, shard=Shard(0, 8, executor=True)).check(record, None, overwrite=False)
    with pytest.raises(InputError, match=r"tasks were 8 \(--tasks 8\), now 4\); give a new --output to"):
        RunFolder(tmp_path / "out", shard=Shard(0, 4, executor=True)).check(record, None, overwrite=False)


def test_a_run_that_finished_no_task_starts_over_with_other_settings(tmp_path, capsys):
    """A run that failed as it started (a model that would not load) binds nothing: another
    --shard count or other settings start it over, said in one line; once a task is done they
    are refused."""
    record = _record(tmp_path)
    first = _shard(tmp_path, 3)
    assert _start(first, record) == "new"
    first.unlock()
    other = _record(tmp_path, foci=2)
    again = _shard(tmp_path, 1, n=4)
    assert again.check(other, None, overwrite=False) == "restart"
    assert not capsys.readouterr().err  # said once, as it starts over
    assert _start(again, other) == "restart"
    assert "finished no task; it starts over with these settings (--foci was 'all', now 2; shards were 8" in (
        capsys.readouterr().err
    )
    saved = json.loads(again.settings_path.read_text())
    assert (saved["record"]["foci"], saved["shards"]) == (2, 4)
    again.complete(1, {}, Stats().as_dict())
    again.unlock()
    with pytest.raises(InputError, match=r"other settings \(--foci was 2, now 'all'.*; give a new --output"):
        _shard(tmp_path, 1, n=4).check(record, None, overwrite=False)  # (before: "pass --overwrite", refused)
    # a task completed between the check and the start: nothing is deleted
    late = RunFolder(tmp_path / "late")
    assert _start(late, record) == "new"
    late.unlock()
    assert late.check(other, None, overwrite=False) == "restart"
    late.complete(0, {}, Stats().as_dict())
    late.lock(alone=True)
    with pytest.raises(InputError, match="completed tasks meanwhile"):
        late.prepare(late.resume_record(other, None), lambda: [], mode="restart", task_rows=10)
    late.unlock()
    assert late.completed(0) and late.read_settings()["record"]["foci"] == "all"


def test_shards_starting_at_once_with_other_settings_the_second_is_refused(tmp_path):
    """Both find a new folder (no settings yet); the first to save them wins, the other refuses."""
    a, b = _shard(tmp_path, 0), _shard(tmp_path, 1)
    one, other = _record(tmp_path), _record(tmp_path, foci=2)
    assert a.check(one, None, overwrite=False) == b.check(other, None, overwrite=False) == "new"
    a.lock(alone=True), b.lock(alone=True)
    a.prepare(a.resume_record(one, None), lambda: [], mode="new", task_rows=10)
    with pytest.raises(InputError, match=r"a shard started with other settings .*--foci was 'all', now 2"):
        b.prepare(b.resume_record(other, None), lambda: [], mode="new", task_rows=10)
    a.unlock(), b.unlock()
    assert json.loads(a.settings_path.read_text())["record"]["foci"] == "all"


def test_two_claims_of_one_shard_are_refused_other_shards_share_the_folder(tmp_path):
    record = _record(tmp_path)
    a = _shard(tmp_path, 3, k=2)
    _start(a, record)
    b = _shard(tmp_path, 4)
    assert _start(b, record) == "resume"  # another shard: welcome while shard 3 runs
    for k in (2, 1):  # the same shard, also under another process count
        with pytest.raises(FolderLocked, match=r"shard 3/8 is running already \(pid \d+ on host"):
            _start(_shard(tmp_path, 3, k=k), record)
    with pytest.raises(FolderLocked, match="another run is writing this folder"):
        RunFolder(tmp_path / "out").check_lock()
    a.unlock(), b.unlock()


def test_a_shard_that_passed_its_check_beside_itself_is_refused_as_the_shard(tmp_path):
    """Two starts of one shard both pass the check; the second to take the shard's lock was told
    "writer s00003-of-00008.00000-of-00001 is running already", not the shard and what to do."""
    import subprocess
    import sys

    folder = _shard(tmp_path, 3)
    folder.path.mkdir()
    hold = "import sys; from paraamr.locks import writer_lock; k = writer_lock(*sys.argv[1:]); print(1)"
    other = subprocess.Popen(
        [sys.executable, "-c", hold + "; sys.stdin.read()", str(folder.path), folder.writer],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert other.stdout.readline() == "1\n"
        with pytest.raises(FolderLocked, match=r"shard 3/8 is running already \(pid \d+ .*wait for it"):
            folder.lock(alone=True)
    finally:
        other.communicate("")


def test_overwrite_with_shard_resets_that_shard_only(tmp_path):
    record = _record(tmp_path)
    out = tmp_path / "out"
    write_run(out, by_shard(records(200), 8), 8, part_rows=5)
    before = {p for p in out.rglob("*") if p.is_file()}
    mine = {p for p in before if p.name.startswith(("t000003-", "task-000003"))}
    assert any("parts" in p.parts for p in mine) and any(p.name == "task-000003.json" for p in mine)
    folder = _shard(tmp_path, 3, k=2)  # started over, with another process count
    assert _start(folder, record, overwrite=True) == "overwrite"
    folder.unlock()
    assert {p for p in out.rglob("*") if p.is_file()} == before - mine  # the other shards untouched
    status = run_statuses(out)
    assert sorted(status.done) == [0, 1, 2, 4, 5, 6, 7] and status.todo == {3: "not run"}
    with pytest.raises(InputError, match=r"other shards use other settings .*--foci"):
        _shard(tmp_path, 3).check(_record(tmp_path, foci=2), None, overwrite=True)


def test_finalize_refuses_until_every_task_is_done_then_names_shards_over_the_run(tmp_path, capsys):
    out = tmp_path / "out"
    counts = write_run(out, by_shard(records(3000), 8), 8, part_rows=50, done=[0, 1, 2, 3, 5, 6])
    with pytest.raises(
        InputError, match=r"2 of 8 tasks not done \(not run: 4, 7\); shards to run again: 4, 7;"
    ):
        finalize_run(out)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].endswith("on Slurm: --array=4,7")
    assert printed[1:] == [f"generate.py --amr-input input.amr --shard {i}/8" for i in (4, 7)]
    assert sorted(p.name for p in out.iterdir()) == [".paraamr"]
    write_run(out, by_shard(records(3000), 8), 8, part_rows=50)  # shards 4 and 7 run again: all done
    with contextlib.redirect_stderr(io.StringIO()):
        summary = finalize_run(out, max_shard_size="100KB")
    assert summary["counts"]["records"] == sum(counts.values()) == 3000 and summary["complete"]
    shards = sorted(p.name for p in (out / "data" / "pairs").iterdir())
    assert len(shards) > 1 and shards == [
        f"train-{i:05d}-of-{len(shards):05d}.parquet" for i in range(len(shards))
    ]
    from datasets import load_dataset

    ids = load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache"))["id"]
    assert sorted(ids) == sorted(r["id"] for r in records(3000))  # each record once


def test_the_shard_that_finalizes_the_run_applies_its_license_and_shard_size(tmp_path):
    """``--shard 7/8 --finalize auto --license L --max-shard-size S`` finalized with the first
    shard's license and size, without a word; not given, they are still the first shard's."""
    out = tmp_path / "out"
    write_run(out, by_shard(records(3000), 8), 8, part_rows=50)
    with contextlib.redirect_stderr(io.StringIO()):
        summary = shard_done(RunFolder(out, shard=Shard(7, 8, finalize=True)), license="apache-2.0",
                             max_shard_size="100KB")  # fmt: skip
    assert summary["settings"]["max_shard_size"] == "100KB"
    assert len(list((out / "data" / "pairs").iterdir())) > 1
    assert "\nlicense: apache-2.0\n" in (out / layout.CARD).read_text()


def test_a_shard_run_again_after_a_finalize_cut_short_drops_the_cut_input(tmp_path):
    """A finalize killed after its renames, before it deleted the input cut into tasks: a shard run
    again finds the run finalized and deletes them (before: only `paraamr finalize` or a run in one
    piece did)."""
    out = tmp_path / "out"
    write_run(out, by_shard(records(40), 2), 2)
    with contextlib.redirect_stderr(io.StringIO()):
        finalize_run(out)
    left = layout.state_path(out, "input/") / "task-000001.jsonl"  # as the partition names them
    left.write_text("[]\n")
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert shard_done(RunFolder(out, shard=Shard(0, 2))) is None
    assert "the run is finalized already" in err.getvalue() and not left.exists()


@pytest.mark.slow
def test_two_finalizers_at_once_finalize_once(tmp_path):
    """The race of ``--finalize auto`` (two shards that find every shard done at the same time):
    the folder's lock lets one in; the other waits, then finds the run finalized."""
    out = tmp_path / "out"
    write_run(out, by_shard(records(4000), 16), 16, part_rows=20)
    code = (
        "import sys; from paraamr.builder.shards import finalize_run; "
        f"s = finalize_run({str(out)!r}, wait=120, again=False); print('FINALIZED' if s else 'SKIPPED')"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert sorted(o.strip() for o, _ in results) == ["FINALIZED", "SKIPPED"], results
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["records"] == 4000 and not (out / layout.PARTS).exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--finalize", "auto"], "--finalize goes with --shard"),
        (["--shard", "0/2", "--push-to-hub", "org/name"], "--push-to-hub with --shard needs --finalize auto"),
        (["--shard", "0/2", "--input", "-"], "--input - (stdin) cannot be cut into shards"),
    ],
)
def test_shard_options_that_do_not_go_together_are_usage_errors(tmp_path, capsys, argv, message):
    from entries import generate as main

    source = [] if "--input" in argv else ["--amr-input", str(tmp_path / "in.amr")]
    assert main([*source, "--output", str(tmp_path / "out"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
