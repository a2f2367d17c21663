"""``finalize`` checks each task's files against its counts before it consumes them, works for
any shard count at the cost of the run's tasks, and redoes on a requeue what a
failed finish left undone (the upload, the card)."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import time
import tracemalloc

import pytest
from shard_runs import by_shard, records, write_run

from paraamr import layout
from paraamr.atomic import atomic_write
from paraamr.builder.partition import Plan
from paraamr.builder.shards import finalize_run, run_statuses
from paraamr.builder.state import RunFolder
from paraamr.builder.summary import Push
from paraamr.errors import InputError

TOKEN = "hf_loopbackSECRETtoken123"


def _quiet(fn, *args, **kwargs):
    with contextlib.redirect_stderr(io.StringIO()):
        return fn(*args, **kwargs)


def _parts(out, task: int, kind: str = "default/train"):
    return sorted((out / layout.PARTS / kind).glob(f"t{task:06d}-*"))


def _marker(out, task: int):
    return RunFolder(out).tasks.path(task)


def test_a_lost_part_makes_finalize_refuse_naming_the_task_and_its_shards_command(tmp_path, capsys):
    out = tmp_path / "out"
    write_run(out, by_shard(records(400), 4), 4, part_rows=20)
    lost = _parts(out, 2)[1]
    lost.unlink()  # a part of a completed task lost (a disk, a cleanup script)
    with pytest.raises(InputError) as err:
        finalize_run(out)
    assert f"1 of 4 tasks not done (broken: 2 ({lost.relative_to(out)} is missing" in str(err.value)
    assert "shards to run again: 2;" in str(err.value)
    printed = capsys.readouterr().out.splitlines()
    assert printed[1:] == ["generate.py --amr-input input.amr --shard 2/4"]
    assert not (out / layout.SUMMARY).exists() and not (out / "data").exists()  # nothing consumed
    assert len(_parts(out, 0)) > 1  # the other tasks' parts are kept
    assert not _marker(out, 2).exists() and _marker(out, 1).exists()  # running shard 2 again redoes it


def test_a_part_cut_short_or_a_marker_cut_short_is_named(tmp_path):
    out = tmp_path / "out"
    write_run(out, by_shard(records(200), 2), 2, part_rows=30)
    part = _parts(out, 1, "pairs/train")[0]
    part.write_bytes(part.read_bytes()[:-100])
    with pytest.raises(InputError, match=rf"broken: 1 \({part.relative_to(out)}: not a whole Parquet file"):
        _quiet(finalize_run, out)
    marker = _marker(out, 0)
    marker.write_text(marker.read_text()[:40])  # cut short: the task is not done
    with pytest.raises(InputError, match=r"unreadable: 0 \(cannot read the statistics of a completed task"):
        _quiet(finalize_run, out)


def test_rows_that_do_not_add_up_to_the_counts_are_refused(tmp_path):
    out = tmp_path / "out"
    write_run(out, by_shard(records(100), 2), 2)
    marker = _marker(out, 1)
    saved = json.loads(marker.read_text())
    saved["stats"]["records"] += 1
    marker.write_text(json.dumps(saved))
    with pytest.raises(InputError, match=r"broken: 1 \(its parts hold \d+ default rows, its counts say \d+"):
        _quiet(finalize_run, out)


def test_a_run_of_a_trillion_shards_costs_what_its_tasks_cost(tmp_path, capsys):
    n = 10**12
    out = tmp_path / "out"
    rows = list(records(30))
    write_run(out, lambda i: rows if i == 5 else [], 6, done=[5])
    settings = layout.state_path(out, "settings.json")
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "shards": n}))
    Plan(out, n, {3: 10, 5: 30, n - 1: 10}).save()  # rows in tasks 3 and n - 1, never run
    tracemalloc.start()
    status = run_statuses(out)
    with pytest.raises(InputError, match=rf"2 of 3 tasks not done \(not run: 3, {n - 1}\)"):
        finalize_run(out)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sorted(status.todo) == [3, n - 1] and status.shards_to_run() == [(3, 3), (n - 1, n - 1)]
    assert peak < 20 * 2**20  # a list over range(N) would need terabytes
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].endswith(f"--array=3,{n - 1}") and printed[2].endswith(f"--shard {n - 1}/{n}")


def test_a_requeued_finalize_redoes_the_upload_and_the_card_that_failed(tmp_path, hub):
    out = tmp_path / "out"
    write_run(out, by_shard(records(50), 2), 2)
    _quiet(finalize_run, out)  # finalized, but its upload failed (none recorded)
    push = Push("me/corpus", token=TOKEN)
    summary = _quiet(finalize_run, out, push=push, again=False)
    assert summary is not None and summary["counts"]["records"] == 50
    assert "data/default/train-00000-of-00001.parquet" in hub.dataset("me/corpus").files("main")
    assert _quiet(finalize_run, out, push=push, again=False) is None  # uploaded: nothing left to do
    (out / layout.CARD).unlink()  # the card failed to be written
    assert _quiet(finalize_run, out, again=False) is not None and (out / layout.CARD).is_file()


def test_a_finalize_during_an_upload_neither_uploads_again_nor_rewrites_it(tmp_path, hub, monkeypatch):
    """Before: the upload ran after the folder's lock was let go, so a second shard finishing then
    (or `paraamr finalize`) uploaded the folder again, or rewrote its card under the upload."""
    import paraamr.builder.summary as summary
    from paraamr.errors import FolderLocked

    out = tmp_path / "out"
    write_run(out, by_shard(records(50), 2), 2)
    push = Push("me/corpus", token=TOKEN)
    upload, meanwhile = summary.push_folder, []

    def upload_while_others_finalize(*args, **kwargs):
        for again in (False, True):  # a shard that finished now; `paraamr finalize`
            try:
                meanwhile.append(finalize_run(out, push=push if not again else None, again=again))
            except FolderLocked as err:
                meanwhile.append(str(err))
        return upload(*args, **kwargs)

    monkeypatch.setattr(summary, "push_folder", upload_while_others_finalize)
    _quiet(finalize_run, out, push=push, command="generate --finalize auto, shard 1/2")
    assert all("paraamr generate --finalize auto, shard 1/2" in str(m) for m in meanwhile), meanwhile
    assert len(hub.requests("POST", "/commit/")) == 1
    monkeypatch.undo()
    assert _quiet(finalize_run, out, push=push, again=False) is None  # uploaded, and recorded


def test_finalized_files_are_checked_against_the_counts_when_finalized_again(tmp_path):
    out = tmp_path / "out"
    write_run(out, by_shard(records(60), 2), 2)
    _quiet(finalize_run, out)
    assert _quiet(finalize_run, out)["counts"]["records"] == 60  # idempotent
    (out / "data" / "pairs" / "train-00000-of-00001.parquet").unlink()
    wrong = r"the finished run's files do not match its counts \(the finished files hold 0 pairs rows"
    with pytest.raises(InputError, match=wrong):
        _quiet(finalize_run, out)


@pytest.mark.parametrize("content", ["[1]", "{}", '{"next": {"default/train": "x"}, "stats": {}}', "null"])
def test_a_marker_that_is_json_but_no_marker_is_named_not_an_internal_error(tmp_path, content):
    out = tmp_path / "out"
    write_run(out, by_shard(records(40), 2), 2)
    _marker(out, 1).write_text(content)
    with pytest.raises(InputError, match=r"(not done|unreadable).*1"):
        _quiet(finalize_run, out)
    assert not (out / layout.SUMMARY).exists()


@pytest.mark.parametrize(
    "content", ["[1]", "{}", '{"tasks": "x", "rows": {}}', '{"tasks": 2, "rows": {"7": 1}}']
)
def test_a_plan_that_is_json_but_no_plan_is_named(tmp_path, content):
    out = tmp_path / "out"
    write_run(out, by_shard(records(40), 2), 2)
    (out / layout.STATE_DIR / "input" / "plan.json").write_text(content)
    with pytest.raises(InputError, match=r"plan\.json: not the plan of the run's tasks"):
        _quiet(finalize_run, out)


@pytest.mark.parametrize("damage", ["lost", "not-a-marker"])
def test_a_finalized_run_that_lost_a_marker_is_refused_and_keeps_its_shards(tmp_path, damage):
    out = tmp_path / "out"
    write_run(out, by_shard(records(60), 2), 2)
    _quiet(finalize_run, out)
    shards = sorted(p.relative_to(out) for p in (out / "data").rglob("*.parquet"))
    if damage == "lost":
        _marker(out, 1).unlink()
    else:
        _marker(out, 1).write_text("[]")
    with pytest.raises(InputError, match=r"task-000001\.json: .*the run is finalized"):
        _quiet(finalize_run, out)
    folder = RunFolder(out)
    with pytest.raises(InputError, match=r"task-000001\.json: .*the run is finalized"):
        folder.check_finished()  # what a resumed generate checks before it takes a task
    assert _marker(out, 0).exists()  # no other task's marker removed
    assert sorted(p.relative_to(out) for p in (out / "data").rglob("*.parquet")) == shards


def test_a_part_beside_a_tasks_committed_ones_is_named_not_merged(tmp_path):
    """A copy of a part under the next number (a restore script, a sync tool) was merged: its rows
    twice in the shards, while the summary said 'reconciles'."""
    import shutil

    out = tmp_path / "out"
    write_run(out, by_shard(records(100), 2), 2)
    part = _parts(out, 1)[-1]
    extra = part.with_name(part.name.replace("-00000.", "-00001."))
    shutil.copy(part, extra)
    with pytest.raises(InputError, match=rf"broken: 1 \({extra.relative_to(out)} is not one of its"):
        _quiet(finalize_run, out)


def test_a_part_of_no_task_of_the_run_is_named_not_merged(tmp_path):
    """A part of a task the run does not have (folders merged by hand): finalize merged its rows,
    wrote exit 0, and its summary and card gave other counts than the shards."""
    import shutil

    out = tmp_path / "out"
    write_run(out, by_shard(records(100), 2), 2)
    stray = _parts(out, 1)[0].with_name("t000099-00000.parquet")
    shutil.copy(_parts(out, 1)[0], stray)
    with pytest.raises(InputError, match=rf"{stray.relative_to(out)}: a part of no task of this run"):
        _quiet(finalize_run, out)
    assert not (out / layout.SUMMARY).exists() and not (out / "data").exists()  # nothing consumed
    stray.unlink()
    _quiet(finalize_run, out)
    assert (out / layout.SUMMARY).exists()


def test_a_shard_still_running_is_not_named_to_run_again(tmp_path, capsys):
    """Shard 1 of 4 runs task 1 (its lock held by another process) and has task 5 still to do:
    it was named among the shards to run again, beside shard 2, which did not run."""
    out = tmp_path / "out"
    write_run(out, by_shard(records(800), 8), 8, part_rows=50, done=[0, 3, 4, 6, 7])
    code = "import sys; from paraamr.locks import writer_lock as w; lock = w(*sys.argv[1:]); input()"
    argv = [sys.executable, "-c", code, str(out), "task-000001"]  # as a shard holds the task it runs
    with subprocess.Popen(argv, stdin=subprocess.PIPE, text=True) as holder:
        try:
            for _ in range(100):
                status = run_statuses(out)
                if 1 in status.todo and status.todo[1].startswith("running"):
                    break
                time.sleep(0.1)
            status.shards = 4  # a run of 4 shards over 8 tasks: shard 1 does tasks 1 and 5, shard 2 2 and 6
            assert status.shards_to_run() == [(2, 2)] and status.shards_to_run(running=True) == [(1, 2)]
        finally:
            holder.communicate("\n", timeout=30)


def test_an_executor_runs_command_is_printed_once(tmp_path, capsys):
    """An ``--executor`` run's command has no ``{shard}``: it was printed once per shard to run."""
    out = tmp_path / "out"
    write_run(out, by_shard(records(400), 4), 4, part_rows=20, done=[0, 3])
    path = layout.state_path(out, "settings.json")
    command = ["paraamr", "generate", "--amr-input", "input.amr", "--executor", "local", "--tasks", "4"]
    atomic_write(path, json.dumps({**json.loads(path.read_text()), "command": command}))
    with pytest.raises(InputError, match=r"2 of 4 tasks not done \(not run: 1-2\); run the same command to"):
        finalize_run(out)
    assert capsys.readouterr().out.splitlines()[1:] == [" ".join(command)]


HOLD_WRITER = """
import sys, time
from paraamr.locks import writer_lock
lock = writer_lock(sys.argv[1], sys.argv[2])
print("held", flush=True)
time.sleep(120)
"""


def test_a_shard_whose_process_is_at_work_is_waited_for_not_run_again(tmp_path):
    """Finalize while a shard's process holds its lock between two tasks (loading its models, or
    done with one): its tasks not done are queued in it, and finalize says to wait, not to run
    the shard again (it printed that shard's command); once the process is gone, it does."""
    out = tmp_path / "out"
    write_run(out, by_shard(records(400), 4), 4, part_rows=20)
    _marker(out, 2).unlink()  # task 2 (of shard 2) not done yet
    writer = layout.writer_id(0, 1, shard=(2, 4))
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_WRITER, str(out), writer], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(InputError) as err:
            _quiet(finalize_run, out)
        assert f"1 of 4 tasks not done (queued: 2 (pid {proc.pid} on" in str(err.value)
        assert str(err.value).endswith("; wait for them")
    finally:
        proc.kill()
        proc.wait()
    with pytest.raises(InputError, match="not run: 2\\); shards to run again: 2;"):
        _quiet(finalize_run, out)
