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
