"""The loading-script route: ``load_dataset("paraamr_dataset.py", trust_remote_code=True)``.

datasets 4.x dropped loading scripts, so the load_dataset tests run only on datasets 3.x:
``scripts/test-datasets3.sh`` makes a datasets 3.x environment and runs ``-k script`` there (CI).
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import datasets
import pytest
from dataset_samples import FOLDER_RECORDS, SENTENCES

SCRIPT = Path(__file__).parents[2] / "paraamr_dataset.py"
DATASETS_3 = int(datasets.__version__.split(".")[0]) == 3
needs_3 = pytest.mark.skipif(
    not DATASETS_3, reason="loading scripts need datasets 3.x (scripts/test-datasets3.sh)"
)


def test_script_reexports_the_package_builder():
    from paraamr.dataset import ParaAMR, ParaAMRConfig

    names = runpy.run_path(str(SCRIPT))
    assert names["ParaAMR"] is ParaAMR and names["ParaAMRConfig"] is ParaAMRConfig


def _load(tmp_path, *args, **kwargs):
    return datasets.load_dataset(
        str(SCRIPT), *args, trust_remote_code=True, cache_dir=str(tmp_path / "c"), **kwargs
    )


@needs_3
def test_script_route_configs_and_thresholds(tmp_path, release_zip):
    files = {"train": str(release_zip)}
    # hand counts as in test_dataset_builder.HAND_COUNTS
    assert _load(tmp_path / "a", data_files=files, split="train").num_rows == 6
    assert _load(tmp_path / "b", "pairs", data_files=files, split="train").num_rows == 11
    at_120 = _load(tmp_path / "c", "pairs", data_files=files, split="train", max_perplexity=120)
    assert at_120.num_rows == 8 and max(at_120["perplexity"]) == 119.9
    kept = _load(tmp_path / "d", data_files=files, split="train", max_perplexity=85, min_paraphrases=1)
    assert kept.num_rows == 3 and isinstance(kept[0]["paraphrases"], list)


@needs_3
def test_script_route_parquet_folder_and_streaming(tmp_path, parquet_folder):
    ds = _load(tmp_path, data_dir=str(parquet_folder))
    assert ds["train"].to_list() == FOLDER_RECORDS["train"]
    streamed = _load(
        tmp_path / "s", "pairs", data_dir=str(parquet_folder), split="validation", streaming=True
    )
    assert [row["para_text"] for row in streamed] == ["Barking is what dogs do."]


@needs_3
def test_script_route_malformed_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a", "paraphrases": []}\n{"text": 5, "paraphrases": []}\n', encoding="utf-8")
    with pytest.raises(Exception) as info:
        _load(tmp_path, data_files=str(bad), split="train")
    assert f'{bad}, line 2: "text" must be a string, got int' in str(info.value.__cause__)


@needs_3
@pytest.mark.slow
def test_script_route_generated_folder(tmp_path, generated):
    ds = _load(tmp_path, data_dir=str(generated))
    assert sorted(r["text"] for split in ds.values() for r in split) == sorted(SENTENCES)
    pairs = _load(tmp_path / "p", "pairs", data_dir=str(generated))
    summary = json.loads((generated / "summary.json").read_text())
    assert sum(split.num_rows for split in pairs.values()) == summary["counts"]["paraphrases"]
