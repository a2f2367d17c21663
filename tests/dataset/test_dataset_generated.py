"""Loading, statistics and the card of a folder written by the generator (tiny random models)."""

from __future__ import annotations

import json

import datasets
import pyarrow.parquet as pq
import pytest
from dataset_samples import SENTENCES
from huggingface_hub import DatasetCard

from paraamr import sources
from paraamr.dataset import ParaAMR
from paraamr.records import DEFAULT_SCHEMA, text_id
from paraamr.stats import compute_stats

pytestmark = pytest.mark.slow


def _shard_rows(folder, config):
    """The rows of every shard of a config, read with pyarrow alone (the independent count)."""
    return [
        row
        for p in sorted((folder / "data" / config).glob("*.parquet"))
        for row in pq.read_table(p).to_pylist()
    ]


def test_builder_loads_the_generated_folder(generated, tmp_path):
    summary = json.loads((generated / "summary.json").read_text())
    builder = ParaAMR(data_dir=str(generated), cache_dir=str(tmp_path / "d"))
    builder.download_and_prepare()
    ds = builder.as_dataset()
    rows = [row for split in ds.values() for row in split]
    assert len(rows) == summary["counts"]["records"] == len(SENTENCES)
    assert sorted(r["id"] for r in rows) == sorted(text_id(s) for s in SENTENCES)
    assert sorted(r["id"] for r in rows) == sorted(r["id"] for r in _shard_rows(generated, "default"))
    assert ds["train"].features.arrow_schema.remove_metadata() == DEFAULT_SCHEMA
    assert all(r["amr"] for r in rows)  # the generator's records carry the parsed graph
    pairs = ParaAMR(config_name="pairs", data_dir=str(generated), cache_dir=str(tmp_path / "p"))
    pairs.download_and_prepare()
    n_pairs = sum(split.num_rows for split in pairs.as_dataset().values())
    assert n_pairs == summary["counts"]["paraphrases"] == len(_shard_rows(generated, "pairs"))
    # the folder as data_files: the option to use (before: datasets said "Unable to find" the folder)
    with pytest.raises(ValueError, match=r"data_files '.*' is a folder; pass it as data_dir="):
        ParaAMR(data_files=str(generated), cache_dir=str(tmp_path / "f"))


def test_threshold_on_generated_perplexities(generated, tmp_path):
    ppl = sorted(r["perplexity"] for r in _shard_rows(generated, "pairs"))
    if not ppl:
        pytest.fail("the tiny generator produced no paraphrases: nothing to threshold")
    cut = ppl[len(ppl) // 2]
    expected = sum(1 for p in ppl if p <= cut)  # hand count over the raw shards
    builder = ParaAMR(
        config_name="pairs", data_dir=str(generated), cache_dir=str(tmp_path), max_perplexity=cut
    )
    builder.download_and_prepare()
    assert sum(split.num_rows for split in builder.as_dataset().values()) == expected


def test_hub_route_reads_the_generated_card(generated, tmp_path):
    card = DatasetCard((generated / "README.md").read_text(encoding="utf-8"))
    assert [c["config_name"] for c in card.data.configs] == ["default", "pairs"]
    splits = [f["split"] for f in card.data.configs[0]["data_files"]]
    assert set(splits) == set(sources.split_files(generated))
    default = datasets.load_dataset(str(generated), cache_dir=str(tmp_path))
    assert sorted(default) == sorted(splits)
    assert sum(d.num_rows for d in default.values()) == len(SENTENCES)


def test_stats_of_the_generated_folder(generated):
    summary = json.loads((generated / "summary.json").read_text())
    s = compute_stats(generated)
    assert s["instances"] == summary["counts"]["records"]
    assert s["pairs"] == summary["counts"]["paraphrases"]
    assert sum(s["splits"].values()) == len(SENTENCES)


def test_generated_card_statistics_come_from_the_shards(generated):
    # regression: the generator wrote its card with stats=None ("run `paraamr stats`")
    text = (generated / "README.md").read_text(encoding="utf-8")
    statistics = text.split("## Statistics", 1)[1].split("\n## ", 1)[0]
    rows = _shard_rows(generated, "default")
    per_source = sum(len(r["paraphrases"]) for r in rows) / len(rows)
    assert f"| {len(rows)} | {per_source:.2f} |" in statistics  # Table 1's first columns, from pyarrow
    assert (
        "![perplexity](plots/perplexity.png)" in statistics
        and (generated / "plots" / "perplexity.png").is_file()
    )
    assert "run `paraamr stats`" not in statistics
    assert str(generated.parent) not in text and "/tmp" not in text  # no local path in the card
