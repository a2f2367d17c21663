"""The one reader of release JSON lines and Parquet folders, and the paraphrase filter."""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile

import pytest
from dataset_samples import FOLDER_RECORDS, release_bytes

from paraamr import sources
from paraamr.errors import InputError
from paraamr.records import text_id


def _records(path, **kw):
    return [record for _key, record in sources.iter_records(path, **kw)]


def test_release_lines_are_read_with_every_field_filled(release_jsonl, release_lines):
    records = _records(release_jsonl)
    assert [r["text"] for r in records] == [line["text"] for line in release_lines]
    assert [r["id"] for r in records] == [text_id(line["text"]) for line in release_lines]
    first = records[0]
    assert first["amr"] is None
    assert first["paraphrases"][0] == {
        "para_text": "all these men can confirm that cheryl wasn't here when harry was killed.",
        "perplexity": 125.02737280513969,
        "focus": None,
        "amr": None,
        "similarity": None,
        "quality": None,
    }
    assert records[3]["paraphrases"] == []


def test_zip_gz_and_plain_give_the_same_records(release_jsonl, release_zip, release_gz):
    plain = _records(release_jsonl)
    assert _records(release_zip) == plain  # the __MACOSX member is skipped
    assert _records(release_gz) == plain
    keys = [key for key, _ in sources.iter_records(release_zip)]
    assert keys[0] == "ParaAMR_small.json, line 1" and len(set(keys)) == len(keys)


def test_parquet_default_and_pairs_shards_read_back_as_written(parquet_folder):
    splits = sources.split_files(parquet_folder)
    assert list(splits) == ["train", "validation"]
    assert [p.rsplit("/", 1)[1] for p in splits["train"]] == [
        "train-00000-of-00002.parquet",
        "train-00001-of-00002.parquet",
    ]
    assert [r for _s, r in sources.read_path(parquet_folder)] == FOLDER_RECORDS["train"] + FOLDER_RECORDS[
        "validation"
    ]
    # pairs shards are regrouped into records by runs of equal id (a source without pairs is absent)
    pairs = sorted((parquet_folder / "data" / "pairs").glob("train-*.parquet"))
    regrouped = [r for p in pairs for r in _records(p)]
    assert regrouped == [r for r in FOLDER_RECORDS["train"] if r["paraphrases"]]


def test_pairs_without_ids_keep_each_rows_source(tmp_path):
    """A pairs Parquet file without an ``id`` column (made by hand or exported) was one run of
    equal ids (all None): every paraphrase was paired with the first row's source, and evaluate
    printed a plausible, wrong row (similarity 8.6 against 86.2)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [("A cat sat.", "A cat was sitting."), ("A cat sat.", "The cat sat."), ("He left.", "He went.")]
    table = pa.Table.from_pylist([{"text": t, "para_text": p} for t, p in rows])
    pq.write_table(table, tmp_path / "pairs.parquet")
    records = [r for _s, r in sources.read_path(tmp_path / "pairs.parquet")]
    pairs = [(r["text"], p["para_text"]) for r in records for p in r["paraphrases"]]
    assert pairs == rows and [r["id"] for r in records] == [text_id("A cat sat."), text_id("He left.")]


def test_malformed_lines_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    good = json.dumps({"text": "a", "paraphrases": []})
    bad.write_bytes(
        "\n".join(
            [
                good,
                "{not json",
                good,
                json.dumps({"text": "b", "paraphrases": [{"perplexity": 3}]}),
                json.dumps({"text": "c", "paraphrases": [{"para_text": "d", "perplexity": "high"}]}),
                json.dumps({"text": "e", "paraphrases": [{"para_text": "f", "perplexity": float("nan")}]}),
                '{"text": "g", "paraphrases": [{"para_text": "h", "similarity": -Infinity}]}',
            ]
        ).encode()
        + b"\n\xff\xfe\n"
    )
    with pytest.raises(InputError, match=r"bad\.jsonl, line 2: not JSON \(Expecting property name"):
        _records(bad)
    skipped = sources.Skipped()
    kept = _records(bad, skip_invalid=True, skipped=skipped)
    assert [r["text"] for r in kept] == ["a", "a"]
    assert skipped.count == 6
    assert skipped.messages[1].endswith('line 4: paraphrase 1: "para_text" must be a string, got NoneType')
    must = "must be a finite number, got"
    positive = "must be a finite number > 0, got"  # a perplexity
    assert skipped.messages[2].endswith(f"line 5: paraphrase 1: \"perplexity\" {positive} 'high'")
    # JSON's NaN and Infinity (Python writes them): quantiles and plots cannot take them (convert failed)
    assert skipped.messages[3].endswith(f'line 6: paraphrase 1: "perplexity" {positive} nan')
    assert skipped.messages[4].endswith(f'line 7: paraphrase 1: "similarity" {must} -inf')
    assert skipped.messages[5].endswith("line 8: invalid UTF-8 at byte 0")


def test_malformed_line_inside_a_zip_names_the_member(tmp_path):
    path = tmp_path / "r.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("r.json", '{"text": "a", "paraphrases": []}\n[1]\n')
    with pytest.raises(InputError, match=r"r\.zip:r\.json, line 2: expected a JSON object, got list"):
        _records(path)


def test_a_parquet_file_of_another_schema_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"sentence": ["x"]}), tmp_path / "other.parquet")
    with pytest.raises(InputError, match=r"other\.parquet: not a ParaAMR Parquet file"):
        _records(tmp_path / "other.parquet")


def test_a_folder_without_data_files_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="no data files"):
        sources.split_files(tmp_path)


def test_a_folder_that_would_give_the_records_twice_is_refused(
    tmp_path, release_jsonl, release_zip, release_gz, parquet_folder
):
    """A release zip unzipped in its folder (or a .gz beside its .jsonl), and the data/ folder of a
    dataset folder (its default and its pairs shards): before, every record was read twice."""
    import shutil

    for archive, unpacked in ((release_zip, "ParaAMR_small.json"), (release_gz, release_gz.stem)):
        folder = tmp_path / archive.name
        folder.mkdir()
        shutil.copy(archive, folder)
        (folder / unpacked).write_bytes(release_jsonl.read_bytes())
        with pytest.raises(InputError, match=rf"holds .*{archive.name} and .*{unpacked}, which it unpacks"):
            sources.split_files(folder)
        (folder / unpacked).rename(folder / f"other-{unpacked}")  # another file: both are read
        assert len(sources.split_files(folder)["train"]) == 2
    data = rf"data: the data folder of the dataset folder .*; give {parquet_folder}"
    with pytest.raises(InputError, match=data):
        sources.split_files(parquet_folder / "data")
    top = tmp_path / "top"  # a folder that holds a dataset folder (a corpus converted beside its release)
    shutil.copytree(parquet_folder, top / "corpus")
    shutil.copy(release_jsonl, top)
    with pytest.raises(InputError, match=rf"top: holds the dataset folder {top / 'corpus'}; give that"):
        sources.split_files(top)


def test_select_orders_and_bounds():
    record = next(
        sources.iter_records(
            io.BytesIO(
                json.dumps(
                    {
                        "text": "t",
                        "paraphrases": [
                            {"para_text": "a", "perplexity": 50.0},
                            {"para_text": "b", "perplexity": None},
                            {"para_text": "c", "perplexity": 10.0},
                        ],
                    }
                ).encode()
            )
        )
    )[1]
    texts = lambda r: [p["para_text"] for p in r["paraphrases"]]  # noqa: E731
    assert texts(sources.select(record)) == ["a", "b", "c"]
    assert texts(sources.select(record, order="perplexity")) == ["c", "a", "b"]  # nulls last
    assert texts(sources.select(record, max_perplexity=1000)) == ["a", "c"]  # null fails any threshold
    assert texts(sources.select(record, max_paraphrases=1)) == ["a"]
    assert sources.select(record, max_perplexity=10, min_paraphrases=2) is None
    with pytest.raises(ValueError, match="order must be one of"):
        sources.select(record, order="random")


@pytest.mark.slow
def test_zip_members_are_refused_by_their_declared_size_before_they_are_opened(tmp_path):
    import zipfile

    from paraamr import sources
    from paraamr.errors import InputError

    archive = tmp_path / "in.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.jsonl", release_bytes(3))
        z.writestr("b.jsonl", b"\n" * 3_000_000)  # 3 MB of blank lines in 3 KB
    small = sources.Limits(grace=2**20)  # the default grace is 16 MiB: 30 MB took 28 s to read through
    with pytest.raises(InputError, match=r"in.zip: unpacks to more than 100 times"):
        list(sources.iter_records(archive, limits=small))
    assert len(list(sources.iter_records(archive, limits=sources.Limits(max_ratio=10**6, grace=2**20)))) == 3


def test_a_control_character_in_a_line_is_named_once(tmp_path):
    """json's message ends in 'at': it read 'Invalid control character at at column 12'."""
    path = tmp_path / "ctl.jsonl"
    path.write_text('{"text": "a\tb", "paraphrases": []}\n')
    with pytest.raises(InputError, match=r"line 1: not JSON \(Invalid control character at column 12\)"):
        list(sources.read_path(path))


@pytest.mark.parametrize("change", ["replaced", "removed"])
def test_a_folder_whose_shards_are_replaced_while_it_is_read_is_refused(parquet_folder, tmp_path, change):
    """A run finalizing into the folder (``generate --overwrite``) while a command reads it: the
    reader read records of both runs, or stopped on a shard gone, without naming why (it now stops
    with one line, whatever reads it: convert, stats, augment, export)."""
    from paraamr.exports import records

    folder = tmp_path / "folder"
    shutil.copytree(parquet_folder, folder)
    shards = sorted((folder / "data" / "default").glob("*.parquet"))
    assert len(shards) > 2
    for read in (lambda: sources.read_path(folder), lambda: records(str(folder))):
        reading = read()
        next(reading)  # the first shard is open
        if change == "replaced":  # a shard of the new run under the old name (a new file)
            shutil.copy(shards[-1], tmp_path / "new.parquet")
            os.replace(tmp_path / "new.parquet", shards[-1])
        else:
            shards[-1].rename(tmp_path / "gone.parquet")
        with pytest.raises(InputError, match=r"folder: its dataset was replaced while it was read \(a run"):
            list(reading)
        if change == "removed":
            (tmp_path / "gone.parquet").rename(shards[-1])
    assert len(list(sources.read_path(folder))) == sum(len(r) for r in FOLDER_RECORDS.values())


def test_a_split_whose_shards_are_not_one_whole_cut_is_refused(tmp_path):
    """Before: with a shard deleted, stats, convert and ParaAMR read the others and said nothing
    (22 of 31 records); with two cuts side by side, each record twice."""
    from paraamr.cli import main

    (tmp_path / "in.jsonl").write_bytes(release_bytes(31))
    folder = tmp_path / "corpus"
    assert main(["convert", str(tmp_path / "in.jsonl"), str(folder), "--max-shard-size", "2KB"]) == 0
    shards = sorted((folder / "data" / "default").glob("train-*.parquet"))
    read = [r for f in sources.split_files(folder)["train"] for r in sources.iter_records(f)]
    assert len(shards) >= 2 and len(read) == 31
    shards[-1].unlink()
    with pytest.raises(InputError, match=f"lacks 1 of its {len(shards)} shards"):
        sources.split_files(folder)
