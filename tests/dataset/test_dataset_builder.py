"""The ParaAMR builder used as a class (the datasets 4.x/5.x route; also valid on 3.x)."""

from __future__ import annotations

import logging

import datasets
import pytest
from dataset_samples import FOLDER_RECORDS

from paraamr.dataset import ParaAMR
from paraamr.errors import InputError
from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, text_id


def _build(tmp_path, config="default", **kwargs):
    builder = ParaAMR(config_name=config, cache_dir=str(tmp_path / "cache"), **kwargs)
    builder.download_and_prepare()
    return builder.as_dataset()


# Hand counts on tests/dataset/data/release_sample.jsonl (6 sources, 11 paraphrases with perplexities
# S1: 125.03, 96.62, 91.92 | S2: 84.5, 110.0, 119.9, 140.25 | S3: 60.25, 85.0 | S4: none | S5: 300.5 |
# S6: 70.0); (config kwargs) -> (default rows, pairs rows).
HAND_COUNTS = [
    ({}, 6, 11),
    ({"max_perplexity": 120}, 6, 8),
    ({"max_perplexity": 120, "min_paraphrases": 1}, 4, 8),
    ({"max_perplexity": 110, "min_paraphrases": 1}, 4, 7),  # 110.0 itself is kept (<=)
    ({"max_perplexity": 85, "min_paraphrases": 1}, 3, 4),  # 85.0 itself is kept
    ({"max_perplexity": 85, "min_paraphrases": 2}, 1, 2),
    ({"max_paraphrases": 1, "min_paraphrases": 1}, 5, 5),
    ({"max_perplexity": 120, "max_paraphrases": 2, "min_paraphrases": 2, "order": "perplexity"}, 3, 6),
]


@pytest.mark.parametrize(("kwargs", "n_default", "n_pairs"), HAND_COUNTS)
def test_thresholds_and_configs_give_the_hand_counts(tmp_path, release_jsonl, kwargs, n_default, n_pairs):
    files = {"train": str(release_jsonl)}
    default = _build(tmp_path / "d", data_files=files, **kwargs)["train"]
    pairs = _build(tmp_path / "p", "pairs", data_files=files, **kwargs)["train"]
    assert (default.num_rows, pairs.num_rows) == (n_default, n_pairs)
    assert sum(len(p) for p in default["paraphrases"]) == n_pairs


def test_features_are_typed_from_the_record_schema(tmp_path, release_jsonl):
    ds = _build(tmp_path, data_files=str(release_jsonl))["train"]
    assert ds.features.arrow_schema.remove_metadata() == DEFAULT_SCHEMA
    assert isinstance(ds[0]["paraphrases"], list)  # a list of structs, not a dict of lists
    assert ds[0]["id"] == text_id(
        "all of these men can confirm that cheryl was not here when harry was killed."
    )
    assert ds[0]["paraphrases"][0]["perplexity"] == 125.02737280513969  # above 120, kept by default
    pairs = _build(tmp_path / "p", "pairs", data_files=str(release_jsonl))["train"]
    assert pairs.features.arrow_schema.remove_metadata() == PAIRS_SCHEMA
    assert pairs[0]["para_amr"] is None and pairs[0]["focus"] is None


def test_order_chooses_which_paraphrases_max_paraphrases_keeps(tmp_path, release_jsonl):
    given = _build(tmp_path / "g", "pairs", data_files=str(release_jsonl), max_paraphrases=1)["train"]
    lowest = _build(
        tmp_path / "l", "pairs", data_files=str(release_jsonl), max_paraphrases=1, order="perplexity"
    )
    assert given[0]["perplexity"] == 125.02737280513969
    assert lowest["train"][0]["perplexity"] == 91.92300008948598
    assert lowest["train"]["perplexity"][:3] == [91.92300008948598, 84.5, 60.25]


def test_zipped_release_loads_like_the_plain_file(tmp_path, release_zip, release_jsonl):
    zipped = _build(tmp_path / "z", data_files=str(release_zip), max_perplexity=120)["train"]
    plain = _build(tmp_path / "j", data_files=str(release_jsonl), max_perplexity=120)["train"]
    assert zipped.to_list() == plain.to_list()


def test_parquet_folder_by_data_dir_keeps_splits_and_every_field(tmp_path, parquet_folder):
    ds = _build(tmp_path, data_dir=str(parquet_folder))
    assert sorted(ds) == ["train", "validation"]
    assert ds["train"].to_list() == FOLDER_RECORDS["train"]
    assert ds["validation"].to_list() == FOLDER_RECORDS["validation"]
    pairs = _build(tmp_path / "p", "pairs", data_dir=str(parquet_folder), max_perplexity=100)
    # hand count: train 40.5, 20.0, 80.0 (130.0 and 99.0? 99.0 <= 100 kept) -> 4; validation 115.0 -> 0
    assert pairs["train"]["perplexity"] == [40.5, 99.0, 20.0, 80.0]
    assert pairs["validation"].num_rows == 0
    assert pairs["train"][0]["para_amr"] == "(f / need-01)" and pairs["train"][0]["similarity"] == 0.875


def test_a_folder_rewritten_in_place_is_read_again(tmp_path, release_jsonl):
    """data_dir: datasets keys its cache on the path alone, so the same cache_dir served the rows of
    the folder's earlier files (a re-run, a convert --overwrite); an unchanged folder is not read again."""
    folder = tmp_path / "folder"
    folder.mkdir()
    lines = release_jsonl.read_text(encoding="utf-8").splitlines(keepends=True)
    (folder / "part.jsonl").write_text("".join(lines[:2]), encoding="utf-8")
    first = _build(tmp_path, data_dir=str(folder))["train"]
    unchanged = _build(tmp_path, data_dir=str(folder))["train"]
    assert first.num_rows == 2 and unchanged.cache_files == first.cache_files
    (folder / "part.jsonl").write_text("".join(lines[2:]), encoding="utf-8")
    again = _build(tmp_path, data_dir=str(folder))["train"]
    assert again.num_rows == len(lines) - 2 and again["text"][0] != first["text"][0]


def test_streaming_gives_the_prepared_rows(tmp_path, release_zip, parquet_folder):
    builder = ParaAMR(
        config_name="pairs", cache_dir=str(tmp_path), data_files=str(release_zip), max_perplexity=85
    )
    streamed = list(builder.as_streaming_dataset(split="train"))
    assert [row["perplexity"] for row in streamed] == [84.5, 60.25, 85.0, 70.0]
    folder = ParaAMR(cache_dir=str(tmp_path / "f"), data_dir=str(parquet_folder))
    assert list(folder.as_streaming_dataset(split="validation")) == FOLDER_RECORDS["validation"]


def test_malformed_line_errors_naming_file_and_line(tmp_path, release_jsonl):
    bad = tmp_path / "bad.jsonl"
    lines = release_jsonl.read_text(encoding="utf-8").splitlines()
    bad.write_text(
        "\n".join([lines[0], '{"text": "x", "paraphrases": "none"}', lines[1]]) + "\n", encoding="utf-8"
    )
    with pytest.raises(datasets.exceptions.DatasetGenerationError) as info:  # datasets wraps our error
        _build(tmp_path / "a", data_files=str(bad))
    assert isinstance(info.value.__cause__, InputError)
    assert str(info.value.__cause__) == f'{bad}, line 2: "paraphrases" must be a list, got str'


def test_skip_invalid_counts_and_logs(tmp_path, release_jsonl, caplog):
    bad = tmp_path / "bad.jsonl"
    lines = release_jsonl.read_text(encoding="utf-8").splitlines()
    bad.write_text("\n".join([lines[0], "{oops", lines[1], "[]"]) + "\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="paraamr.dataset"):
        ds = _build(tmp_path, data_files=str(bad), skip_invalid=True)["train"]
    assert ds.num_rows == 2
    assert "skipped 2 invalid lines" in caplog.text and "line 2:" in caplog.text and "line 4:" in caplog.text


def test_no_data_offline_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    with pytest.raises(ConnectionError, match=r"ParaAMR_small\.zip.*data_files="):
        _build(tmp_path)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_perplexity": -1}, "max_perplexity"),
        ({"max_perplexity": "120"}, "max_perplexity"),
        ({"min_paraphrases": -1}, "min_paraphrases"),
        ({"max_paraphrases": 0}, "max_paraphrases"),
        ({"order": "random"}, "order"),
    ],
)
def test_bad_parameters_are_refused(tmp_path, release_jsonl, kwargs, message):
    with pytest.raises(ValueError, match=message):
        ParaAMR(cache_dir=str(tmp_path), data_files=str(release_jsonl), **kwargs)
