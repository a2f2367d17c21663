"""``finalize`` checks each task's committed files against its counts before it consumes them,
works for any shard count at the cost of the shards started, and redoes on a requeue what a
failed finish left undone (the upload, the card)."""

from __future__ import annotations

import contextlib
import io
import json
import tracemalloc

import pytest
from shard_runs import by_shard, records, write_run

from paraamr import layout
from paraamr.builder.shards import finalize_run, run_statuses
from paraamr.builder.summary import Push
from paraamr.errors import InputError

TOKEN = "hf_loopbackSECRETtoken123"


def _quiet(fn, *args, **kwargs):
    with contextlib.redirect_stderr(io.StringIO()):
        return fn(*args, **kwargs)


def _parts(out, shard: int, kind: str = "default/train"):
    return sorted((out / layout.PARTS / kind).glob(f"s{shard:05d}-of-*"))


def test_a_lost_part_makes_finalize_refuse_naming_the_shard_and_its_command(tmp_path, capsys):
    out = tmp_path / "out"
    write_run(out, by_shard(records(400), 4), 4, commit_every=20)
    lost = _parts(out, 2)[1]
    lost.unlink()  # a committed part lost (a disk, a cleanup script)
    with pytest.raises(InputError) as err:
        finalize_run(out)
    assert f"broken: 2 ({lost.relative_to(out)} is missing" in str(err.value)
    assert "1 of 4 shards not done" in str(err.value)
    printed = capsys.readouterr().out.splitlines()
    assert printed[1:] == ["generate.py --amr-input input.amr --shard 2/4 --overwrite"]
    assert not (out / layout.SUMMARY).exists() and not (out / "data").exists()  # nothing consumed
    assert len(_parts(out, 0)) > 1  # the other shards' parts are kept


def test_a_part_cut_short_or_a_state_cut_short_is_named(tmp_path):
    out = tmp_path / "out"
    write_run(out, by_shard(records(200), 2), 2, commit_every=30)
    part = _parts(out, 1, "pairs/train")[0]
    part.write_bytes(part.read_bytes()[:-100])
    with pytest.raises(InputError, match=rf"broken: 1 \({part.relative_to(out)}: not a whole Parquet file"):
        _quiet(finalize_run, out)
    state = layout.state_path(out, "state-{writer}.json", writer=layout.writer_id(shard=(0, 2)))
    state.write_text(state.read_text()[:40])  # cut short: the shard is broken, not missing
    unreadable = r"broken: 0 \(\.paraamr/state-s00000-of-00002\.00000-of-00001\.json is unreadable"
    with pytest.raises(InputError, match=unreadable):
        _quiet(finalize_run, out)


def test_rows_that_do_not_add_up_to_the_counts_are_refused(tmp_path):
    out = tmp_path / "out"
    write_run(out, by_shard(records(100), 2), 2)
    state = layout.state_path(out, "state-{writer}.json", writer=layout.writer_id(shard=(1, 2)))
    saved = json.loads(state.read_text())
    saved["stats"]["records"] += 1
    state.write_text(json.dumps(saved))
    with pytest.raises(InputError, match=r"broken: 1 \(its parts hold \d+ default rows, its counts say \d+"):
        _quiet(finalize_run, out)


def test_a_run_of_a_trillion_shards_costs_what_its_started_shards_cost(tmp_path, capsys):
    n = 10**12
    out = tmp_path / "out"
    rows = list(records(30))
    write_run(out, lambda i: rows if i == 5 else [], 6)  # shards 0..5 written, then N made huge
    settings = layout.state_path(out, "settings.json")
    saved = json.loads(settings.read_text())
    for path in (out / layout.STATE_DIR).glob("state-*.json"):
        index = int(path.name[len("state-s") :].split("-", 1)[0])
        path.rename(path.with_name(f"state-{layout.writer_id(shard=(index, n))}.json"))
    settings.write_text(json.dumps({**saved, "shards": n}))
    tracemalloc.start()
    status = run_statuses(out)
    with pytest.raises(InputError, match=rf"{n - 6} of {n} shards not done \(missing: 6-{n - 1}\)"):
        finalize_run(out)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [s.index for s in status.statuses] == list(range(6)) and status.missing() == [(6, n - 1)]
    assert peak < 20 * 2**20  # a list over range(N) would need terabytes
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].endswith(f"--array=6-{n - 1}") and len(printed) == 22  # 20 commands, then "and more"


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


def test_finalized_files_are_checked_against_the_counts_when_finalized_again(tmp_path):
    out = tmp_path / "out"
    write_run(out, by_shard(records(60), 2), 2)
    _quiet(finalize_run, out)
    assert _quiet(finalize_run, out)["counts"]["records"] == 60  # idempotent
    (out / "data" / "pairs" / "train-00000-of-00001.parquet").unlink()
    wrong = r"the finished run's files do not match its counts \(the finished files hold 0 pairs rows"
    with pytest.raises(InputError, match=wrong):
        _quiet(finalize_run, out)
