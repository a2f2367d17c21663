"""``evaluate --merge`` over state folders that were damaged by hand: a one-line error naming the
file, never an internal error, never a row over fewer chunks than the evaluation has."""

from __future__ import annotations

import json

import pytest

from paraamr.errors import InputError
from paraamr.metrics.resume import StateFolder, merge_folders
from paraamr.metrics.stats import RowStats

SETTINGS = {"identity": {}, "options": {"seed": 0}, "chunks": 2}


def _state(tmp_path) -> StateFolder:
    state = StateFolder(tmp_path)
    assert state.start(SETTINGS) is None
    for chunk in range(2):
        stats = RowStats(["x"])
        stats.update({"x": [1.0 + chunk, 2.0]}, chunk=chunk)
        state.commit(chunk, stats)
    return state


def test_a_whole_state_merges(tmp_path):
    merged, settings = merge_folders([_state(tmp_path).folder])
    assert merged.mean("x") == (1 + 2 + 2 + 2) / 4 and settings == SETTINGS


def test_merging_another_evaluation_names_the_options_that_differ(tmp_path):
    """It said 'another evaluation than A (options differ)', not which option."""
    first, second = _state(tmp_path / "a"), StateFolder(tmp_path / "b")
    second.start({**SETTINGS, "options": {"seed": 0, "ted_convention": "aesop"}})
    refusal = r"b: another evaluation than .*a \(--ted-convention was None, now 'aesop'\)"
    with pytest.raises(InputError, match=refusal):
        merge_folders([first.folder, second.folder])


@pytest.mark.parametrize("content", ["null", "[1]", "{}", '{"measures": "x"}'])
def test_a_chunk_file_that_is_json_but_no_statistics_is_named(tmp_path, content):
    state = _state(tmp_path)
    state.path(1).write_text(content)
    with pytest.raises(InputError, match=r"chunk-000001\.json: "):
        merge_folders([state.folder])


@pytest.mark.parametrize("chunks", [None, "x", 0])
def test_settings_without_a_chunk_count_are_named(tmp_path, chunks):
    state = _state(tmp_path)
    saved = {**SETTINGS, "chunks": chunks} if chunks is not None else {"identity": {}}
    state.settings_path.write_text(json.dumps(saved))
    with pytest.raises(InputError, match="not an evaluation state"):
        merge_folders([state.folder])


def _changed(saved, now):
    return None if saved == now else "other"


def test_an_evaluation_that_committed_no_chunk_starts_over_when_alone(tmp_path, capsys):
    """A run that stopped before its first chunk (a similarity model that would not load) binds
    nothing: other options or a model with other files start it over, said in one line; a shard
    (not alone) or a committed chunk keep the refusal."""
    state = StateFolder(tmp_path)
    state.open(SETTINGS, changed=_changed)
    state.check_models({"similarity": "a"}, {"similarity": "m"})
    other = {**SETTINGS, "options": {"seed": 1}}
    with pytest.raises(InputError, match="another evaluation: other options"):
        state.open(other, changed=_changed)
    state.open(other, changed=_changed, alone=True)
    # the option as typed, with both values (before: the field's name, 'other options (seed)')
    said = capsys.readouterr().err
    assert "no chunk was committed; it starts over: other options (--seed was 0, now 1)" in said
    assert state.saved() == other  # the models' digests went with the old settings
    third = {**SETTINGS, "options": {"seed": 2}}
    state.open(third, changed=_changed, alone=True, say=False)  # another process of the same launch
    assert state.saved() == third and capsys.readouterr().err == ""
    state.open(other, changed=_changed, alone=True)
    capsys.readouterr()
    state.check_models({"similarity": "b"}, {"similarity": "m"})
    with pytest.raises(InputError, match="another evaluation: the similarity model 'm' has other files"):
        state.check_models({"similarity": "c"}, {"similarity": "m"})
    state.check_models({"similarity": "c"}, {"similarity": "m"}, alone=True)
    assert "it starts over: the similarity model 'm' has other files" in capsys.readouterr().err
    assert state.saved()["models"] == {"similarity": "c"}
    state.commit(0, RowStats(["x"]))
    with pytest.raises(InputError, match="another evaluation: the similarity model 'm' has other files"):
        state.check_models({"similarity": "d"}, {"similarity": "m"}, alone=True)
    with pytest.raises(InputError, match="another evaluation: other options"):
        state.open(SETTINGS, changed=_changed, alone=True)
