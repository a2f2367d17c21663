"""``paraamr.filter_records`` gives the ``ParaAMR`` builder's rows on the same options: on the
release sample, on our folders (written by the folder writers, by ``paraamr convert`` and by the
generator), loaded locally and from the loopback Hub, as ``Dataset``, ``DatasetDict`` and streamed
``IterableDataset``; ``min_similarity`` against hand counts."""

from __future__ import annotations

import math
import shutil
import warnings

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dataset_samples import FOLDER_RECORDS
from huggingface_hub import DatasetCard

import paraamr
from paraamr.card import render_card, write_card
from paraamr.cli import main
from paraamr.dataset import ParaAMR
from paraamr.records import PAIRS_SCHEMA, to_pairs

#: Options compared with the builder (the release sample's hand counts are in test_dataset_builder.py).
OPTIONS = [
    {},
    {"max_perplexity": 120},
    {"max_perplexity": 110, "min_paraphrases": 1},
    {"max_perplexity": 85, "min_paraphrases": 2},
    {"max_paraphrases": 1, "min_paraphrases": 1},
    {"max_perplexity": 120, "max_paraphrases": 2, "min_paraphrases": 2, "order": "perplexity"},
    {"order": "perplexity"},
    {"min_similarity": 0.8},
    {"min_similarity": 0.875, "max_perplexity": 100, "min_paraphrases": 1},
]
_BUILT: dict = {}


def _builder_rows(tmp_path_factory, config, options, **data):
    """``{split: rows}`` the builder gives (cached across tests: the same data and options)."""
    key = (config, repr(sorted(options.items())), repr(sorted(data.items())))
    if key not in _BUILT:
        cache = tmp_path_factory.mktemp("builder")
        builder = ParaAMR(config_name=config, cache_dir=str(cache), **data, **options)
        builder.download_and_prepare()
        _BUILT[key] = {split: ds.to_list() for split, ds in builder.as_dataset().items()}
    return _BUILT[key]


def _rows(ds):
    if isinstance(ds, (datasets.DatasetDict, datasets.IterableDatasetDict)):
        return {split: list(part) for split, part in ds.items()}
    return list(ds)


@pytest.fixture(scope="module")
def folder(parquet_folder, tmp_path_factory):
    """The writers' folder (every field, similarity scores, two splits) with its card."""
    root = tmp_path_factory.mktemp("carded") / "paraamr"
    shutil.copytree(parquet_folder, root)
    write_card(root, summary=None, license="cc-by-4.0")
    return root


@pytest.fixture(scope="module")
def converted(release_jsonl, tmp_path_factory):
    """The release sample converted to our folder (``paraamr convert``, several shards)."""
    root = tmp_path_factory.mktemp("converted") / "paraamr"
    assert main(["convert", str(release_jsonl), str(root), "--max-shard-size", "1KB"]) == 0
    return root


@pytest.mark.filterwarnings("ignore:min_similarity")  # the release has no similarity scores
@pytest.mark.parametrize("config", ["default", "pairs"])
def test_release_sample_filtered_equals_the_builder(tmp_path_factory, release_jsonl, config):
    files = {"data_files": {"train": str(release_jsonl)}}
    everything = datasets.Dataset.from_list(_builder_rows(tmp_path_factory, config, {}, **files)["train"])
    for options in OPTIONS:
        expected = _builder_rows(tmp_path_factory, config, options, **files)["train"]
        assert paraamr.filter_records(everything, **options).to_list() == expected, options


@pytest.mark.filterwarnings("ignore:min_similarity")  # `converted` is the release's: unscored
@pytest.mark.parametrize("config", ["default", "pairs"])
@pytest.mark.parametrize("which", ["folder", "converted"])
def test_our_folders_loaded_by_path_filtered_equal_the_builder(tmp_path_factory, request, which, config):
    root = request.getfixturevalue(which)
    loaded = datasets.load_dataset(str(root), config, cache_dir=str(tmp_path_factory.mktemp("hf")))
    for options in OPTIONS:
        expected = _builder_rows(tmp_path_factory, config, options, data_dir=str(root))
        filtered = paraamr.filter_records(loaded, **options)  # a DatasetDict: every split
        assert isinstance(filtered, datasets.DatasetDict)
        assert _rows(filtered) == expected, options
        streamed = datasets.load_dataset(str(root), config, streaming=True)
        if config == "pairs" and paraamr.filters.Filters(**options).grouped:
            continue  # refused when streamed: test_streamed_pairs_refuse_what_needs_a_whole_source
        assert _rows(paraamr.filter_records(streamed, **options)) == expected, options


@pytest.mark.slow
@pytest.mark.parametrize("config", ["default", "pairs"])
def test_a_generated_folder_filtered_equals_the_builder(generated, tmp_path_factory, config):
    loaded = datasets.load_dataset(str(generated), config, cache_dir=str(tmp_path_factory.mktemp("hf")))
    perplexities = sorted(p for split in loaded.values() for p in _perplexities(split))
    middle = perplexities[len(perplexities) // 2]  # the tiny models give one paraphrase per source
    totals = set()
    for options in (
        {"max_perplexity": middle},
        {"max_perplexity": math.nextafter(middle, 0), "min_paraphrases": 1},
        {"order": "perplexity", "min_paraphrases": 1},
    ):
        expected = _builder_rows(tmp_path_factory, config, options, data_dir=str(generated))
        assert _rows(paraamr.filter_records(loaded, **options)) == expected, options
        totals.add(sum(map(len, expected.values())))
    assert len(totals) > 1  # the thresholds changed something


def _perplexities(split):
    if "perplexity" in split.column_names:
        return split["perplexity"]
    return [p["perplexity"] for paras in split["paraphrases"] for p in paras]


def test_min_similarity_against_hand_counts(folder, tmp_path):
    cache = str(tmp_path / "hf")
    default = datasets.load_dataset(str(folder), cache_dir=cache)
    pairs = datasets.load_dataset(str(folder), "pairs", cache_dir=cache)
    # FOLDER_RECORDS' similarities: know 0.875, 0.75 | rain none | cat null, 0.9375, null | dog 0.8125
    kept = paraamr.filter_records(pairs, min_similarity=0.8)
    assert list(kept["train"]["para_text"]) == ["They need it, I know.", "The cat was sitting."]
    assert list(kept["validation"]["para_text"]) == ["Barking is what dogs do."]
    at = paraamr.filter_records(default, min_similarity=0.875, min_paraphrases=1)  # 0.875 itself is kept
    assert list(at["train"]["id"]) == ["id-know", "id-cat"] and at["validation"].num_rows == 0
    assert [len(p) for p in paraamr.filter_records(default, min_similarity=0.8)["train"]["paraphrases"]] == [
        1,
        0,
        1,
    ]
    both = paraamr.filter_records(pairs, min_similarity=0.8, max_perplexity=30)
    assert list(both["train"]["para_text"]) == ["The cat was sitting."]  # 20.0 and 0.9375


@pytest.mark.parametrize("threshold", [0.7, 0.69999998])
def test_similarity_is_compared_as_stored_from_json_lines_too(tmp_path_factory, tmp_path, threshold):
    """Read from JSON lines, a similarity of 0.7 was compared as a float64 (kept at 0.7) and then
    returned as stored, 0.699999988: a row that fails the filter it passed; from the folder it went."""
    import json

    line = {"text": "A b c.", "paraphrases": [{"para_text": "C b a.", "perplexity": 50.0, "similarity": 0.7}]}
    (tmp_path / "sim.jsonl").write_text(json.dumps(line) + "\n")
    assert main(["convert", str(tmp_path / "sim.jsonl"), str(tmp_path / "sim")]) == 0
    options = {"min_similarity": threshold}
    from_lines = _builder_rows(tmp_path_factory, "pairs", options, data_files=str(tmp_path / "sim.jsonl"))
    from_folder = _builder_rows(tmp_path_factory, "pairs", options, data_dir=str(tmp_path / "sim"))
    assert from_lines == from_folder and len(from_lines.get("train", [])) == (threshold < 0.7)


@pytest.mark.slow
def test_loaded_from_the_hub_and_streamed_equal_the_builder(hub, folder, converted, tmp_path_factory):
    hub.add_dataset_repo("org/paraamr", folder)
    hub.add_dataset_repo("org/paraamr-small", converted)
    for repo, root in (("org/paraamr", folder), ("org/paraamr-small", converted)):
        for config in ("default", "pairs"):
            loaded = datasets.load_dataset(repo, config)
            streamed = datasets.load_dataset(repo, config, streaming=True)
            for options in ({"max_perplexity": 110}, {"max_perplexity": 85, "min_paraphrases": 1}):
                expected = _builder_rows(tmp_path_factory, config, options, data_dir=str(root))
                assert _rows(paraamr.filter_records(loaded, **options)) == expected, (repo, options)
                if config == "default" or not options.get("min_paraphrases"):
                    assert _rows(paraamr.filter_records(streamed, **options)) == expected, (repo, options)
    assert hub.requests("GET", "/datasets/org/paraamr-small/resolve/")


def test_min_similarity_on_an_unscored_corpus_says_so(converted, tmp_path):
    """The release's records have no similarity scores (null): min_similarity keeps none of them,
    which before came back as an empty dataset and nothing said."""
    pairs = datasets.load_dataset(str(converted), "pairs", split="train", cache_dir=str(tmp_path))
    said = r"min_similarity=0.5: none of 11 paraphrases has a similarity score"
    with pytest.warns(UserWarning, match=said):
        assert paraamr.filter_records(pairs, min_similarity=0.5).num_rows == 0
    with warnings.catch_warnings():  # no min_similarity: nothing to say
        warnings.simplefilter("error")
        paraamr.filter_records(pairs, max_perplexity=100)


def test_a_source_split_over_two_files_is_counted_whole(tmp_path):
    """``pairs`` rows of one source in two shards: min_paraphrases counts them together."""
    rows = [row for record in FOLDER_RECORDS["train"] for row in to_pairs(record)]
    for name, part in (("a", rows[:1]), ("b", rows[1:])):  # id-know's two pairs: one in each file
        pq.write_table(pa.Table.from_pylist(part, schema=PAIRS_SCHEMA), tmp_path / f"{name}.parquet")
    files = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    pairs = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=str(tmp_path / "c"))
    kept = paraamr.filter_records(pairs, min_paraphrases=2, max_paraphrases=2, order="perplexity")
    assert list(kept["para_text"]) == [
        "They need it, I know.",  # 40.5, then 130.0: id-know, across the files
        "What they need, I know, is it.",
        "The cat was sitting.",  # 20.0, 80.0 of id-cat's three (99.0 is cut by max_paraphrases)
        "A cat sat.",
    ]


def test_shuffled_pairs_count_each_source_whole(folder, tmp_path):
    pairs = datasets.load_dataset(str(folder), "pairs", split="train", cache_dir=str(tmp_path))
    options = {"max_perplexity": 100, "min_paraphrases": 2, "max_paraphrases": 2, "order": "perplexity"}
    expected = paraamr.filter_records(pairs, **options).to_list()
    assert [r["para_text"] for r in expected] == ["The cat was sitting.", "A cat sat."]  # id-cat: 20.0, 80.0
    for seed in range(5):
        shuffled = paraamr.filter_records(pairs.shuffle(seed=seed), **options)
        assert shuffled.to_list() == expected, seed


def test_pairs_without_ids_are_a_source_per_text():
    """Rows without an ``id`` (a user's own pairs) are a source per ``text``, as the readers group
    them; they were all one source, so max_paraphrases=1 kept one row of the whole table."""
    rows = {"id": [None, "b", None, None, "b"], "text": ["a", "b", "b", "a", "b"]}
    rows |= {"para_text": ["x", "y", "z", "w", "v"], "perplexity": [1.0, 2.0, 3.0, 4.0, 0.5]}
    kept = paraamr.filter_records(datasets.Dataset.from_dict(rows), max_paraphrases=1, order="perplexity")
    assert kept["para_text"] == ["x", "v", "z"]  # source "a", id "b", then the text "b" without an id
    no_ids = {"id": [None] * 3, "text": ["a", "b", "a"], "para_text": list("xyz"), "perplexity": [1.0] * 3}
    kept = paraamr.filter_records(datasets.Dataset.from_dict(no_ids), min_paraphrases=2)
    assert kept["para_text"] == ["x", "z"]


def test_pairs_without_a_needed_column_name_all_their_columns():
    """The message listed only the columns read for the filter, as if the others were missing too."""
    pairs = datasets.Dataset.from_dict({"id": ["a"], "text": ["t"], "para_text": ["p"]})
    with pytest.raises(ValueError, match=r"no column perplexity \(columns: \['id', 'text', 'para_text'\]\)"):
        paraamr.filter_records(pairs, max_perplexity=120)


def test_default_streamed_in_batches_of_one_keeps_the_format(folder):
    streamed = datasets.load_dataset(str(folder), split="train", streaming=True)
    kept = paraamr.filter_records(streamed, max_perplexity=100, min_paraphrases=2, batch_size=1)
    rows = list(kept)
    assert [r["id"] for r in rows] == ["id-cat"] and isinstance(rows[0]["paraphrases"], list)
    assert kept.features == streamed.features


def test_streamed_pairs_refuse_what_needs_a_whole_source(folder):
    streamed = datasets.load_dataset(str(folder), "pairs", split="train", streaming=True)
    with pytest.raises(ValueError) as info:
        paraamr.filter_records(streamed, max_perplexity=110, min_paraphrases=2)
    message = str(info.value)
    assert "\n" not in message and "min_paraphrases=2" in message and "'default'" in message
    assert "max_perplexity" not in message  # a per-row threshold streams fine
    with pytest.raises(ValueError, match=r"order='perplexity' needs all rows"):
        paraamr.filter_records(streamed, order="perplexity")


def test_bad_input_is_refused_in_one_line(folder):
    other = datasets.Dataset.from_dict({"sentence": ["x"]})
    with pytest.raises(
        ValueError, match=r"not a ParaAMR dataset: .*'paraphrases'.*got columns \['sentence'\]"
    ):
        paraamr.filter_records(other, max_perplexity=110)
    with pytest.raises(TypeError, match="got list"):
        paraamr.filter_records([{"paraphrases": []}], max_perplexity=110)
    with pytest.raises(ValueError, match="min_paraphrases must be an integer >= 0, got -1"):
        paraamr.filter_records(datasets.load_dataset(str(folder), split="train"), min_paraphrases=-1)
    no_scores = datasets.Dataset.from_list([{"id": "a", "para_text": "x", "perplexity": 1.0}])
    with pytest.raises(ValueError, match="min_similarity: the paraphrases have no similarity scores"):
        paraamr.filter_records(no_scores, min_similarity=0.5)
    mapped = datasets.load_dataset(str(folder), split="train", streaming=True).map(lambda row: row)
    unknown = r"features are unknown \(as after .map\(\)\).*filter it before mapping"
    with pytest.raises(ValueError, match=unknown):  # before: "not a ParaAMR dataset ... got columns None"
        paraamr.filter_records(mapped, max_perplexity=110)


@pytest.mark.slow
def test_filtered_configs_of_the_card_give_the_builders_pairs(hub, folder, tmp_path_factory, tmp_path):
    """``write_card(thresholds=...)``: ``pairs-ppl{T}`` configs, read with datasets' Parquet filters."""
    root = tmp_path / "paraamr"
    shutil.copytree(folder, root)
    write_card(root, summary=None, license="cc-by-4.0", repo_id="org/filtered", thresholds=[110, 85, 110])
    names = datasets.get_dataset_config_names(str(root))
    assert sorted(names) == ["default", "pairs", "pairs-ppl110", "pairs-ppl85"]
    hub.add_dataset_repo("org/filtered", root)
    for threshold in (110, 85):
        expected = _builder_rows(tmp_path_factory, "pairs", {"max_perplexity": threshold}, data_dir=str(root))
        config = f"pairs-ppl{threshold}"
        local = datasets.load_dataset(str(root), config, cache_dir=str(tmp_path / "hf"))
        assert _rows(local) == {s: rows for s, rows in expected.items() if s in local}, threshold
        assert _rows(datasets.load_dataset("org/filtered", config)) == _rows(local)
        assert _rows(datasets.load_dataset("org/filtered", config, streaming=True)) == _rows(local)
    text = (root / "README.md").read_text(encoding="utf-8")
    assert 'load_dataset("org/filtered", "pairs-ppl110", split="train")' in text
    # validation's one pair has perplexity 115: datasets cannot load a split left without rows
    assert "left out: `pairs-ppl110`/`validation`, `pairs-ppl85`/`validation`." in text
    assert list(datasets.load_dataset(str(root), "pairs-ppl110", cache_dir=str(tmp_path / "hf"))) == ["train"]


def test_filtered_configs_need_the_folder_and_numbers(folder):
    with pytest.raises(ValueError, match="need the folder"):
        render_card(summary=None, stats=None, license=None, thresholds=[110])
    with pytest.raises(ValueError, match="must be a number >= 0, got '110'"):
        render_card(summary=None, stats=None, license=None, folder=folder, thresholds=["110"])
    text = render_card(summary=None, stats=None, license=None, folder=folder, thresholds=[10])
    assert "No pair is within" in text and "pairs-ppl10" not in str(DatasetCard(text).data.configs)


def test_arrow_tables_with_large_lists_and_chunks():
    para = pa.struct([("para_text", pa.string()), ("perplexity", pa.float64())])
    paras = [[{"para_text": "x", "perplexity": 10.0}, {"para_text": "y", "perplexity": 200.0}], []]
    table = pa.table({"paraphrases": pa.array(paras, pa.large_list(para))})
    kept = paraamr.filters.Filters(max_perplexity=100).records(table)
    assert kept.schema == table.schema and kept.to_pylist() == [
        {"paraphrases": [paras[0][0]]},
        {"paraphrases": []},
    ]
    pairs = pa.table({"id": pa.chunked_array([["a", "a"], ["b", "a"]]), "perplexity": [1.0, 2.0, 3.0, 4.0]})
    assert paraamr.filters.Filters(min_paraphrases=3).pairs(pairs)["perplexity"].to_pylist() == [
        1.0,
        2.0,
        4.0,
    ]


def test_num_proc_and_desc_as_dataset_filter(folder, tmp_path, capsys):
    """Two processes keep the rows the hand counts give (as in the test above); ``desc`` labels the
    progress bar, as in ``Dataset.filter``."""
    default = datasets.load_dataset(str(folder), split="train", cache_dir=str(tmp_path / "hf"))
    capsys.readouterr()
    shown = datasets.is_progress_bar_enabled()
    datasets.enable_progress_bars()  # another test may have turned them off
    two = paraamr.filter_records(
        default, min_similarity=0.8, min_paraphrases=1, num_proc=2, desc="sim >= 0.8"
    )
    assert list(two["id"]) == ["id-know", "id-cat"]
    assert [p["para_text"] for p in two[1]["paraphrases"]] == ["The cat was sitting."]
    if not shown:
        datasets.disable_progress_bars()
    assert "sim >= 0.8 (num_proc=2)" in capsys.readouterr().err


def test_a_score_column_typed_null_or_text_gets_an_answer_not_an_arrow_error():
    """A column that only held nulls is typed null by datasets: order="perplexity" raised
    ArrowInvalid 'Invalid null value'. Perplexities stored as text raised Arrow's 'no kernel
    matching input types (string, double)'."""
    from datasets import Dataset

    from paraamr import filter_records

    unscored = Dataset.from_list(
        [{"id": "b", "text": "t", "paraphrases": [{"para_text": "x", "perplexity": None}]}]
    )
    assert filter_records(unscored, order="perplexity").to_list() == unscored.to_list()  # nulls last: kept
    assert filter_records(unscored, max_perplexity=100)[0]["paraphrases"] == []  # a null fails any threshold
    text = Dataset.from_list(
        [{"id": "a", "text": "t", "paraphrases": [{"para_text": "x", "perplexity": "50"}]}]
    )
    with pytest.raises(ValueError, match="perplexity is string, not numbers: cast the column first"):
        filter_records(text, max_perplexity=100)
