"""ParaAMR paraphrases looked up by normalized text, from a release JSONL or a generated folder."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paraamr.augment.source import ParaphraseIndex
from paraamr.errors import InputError
from paraamr.layout import shard_name
from paraamr.records import DEFAULT_SCHEMA, normalize, text_id

RECORDS = [
    {
        "text": "I know for them to approve this price, they'll need statistical documentation.",
        "paraphrases": [
            {
                "para_text": "They'll need statistical documentation to approve this price, I know.",
                "perplexity": 95.0,
            },
            {
                "para_text": "What I know is that they need statistics to approve the price.",
                "perplexity": 60.5,
            },
            {
                "para_text": "i know for them to approve this price, they'll need statistical documentation.",
                "perplexity": 10.0,
            },
            {"para_text": "Statistical documentation is needed.", "perplexity": 130.0},
        ],
    },
    {"text": "He left.", "paraphrases": [{"para_text": "He departed.", "perplexity": 40.0}]},
    {"text": "Not wanted.", "paraphrases": [{"para_text": "Unwanted.", "perplexity": 40.0}]},
]


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_folder(root, records):
    """A folder as ``paraamr generate`` writes it: data/default/{split}-{i}-of-{n}.parquet, DEFAULT_SCHEMA."""
    rows = [
        {
            "id": text_id(r["text"]),
            "text": r["text"],
            "amr": "(k / know-01)",
            "paraphrases": [
                {**p, "focus": "know-01", "amr": "(k / know-01)", "similarity": None, "quality": None}
                for p in r["paraphrases"]
            ],
        }
        for r in records
    ]
    (root / "data" / "default").mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pylist(rows, schema=DEFAULT_SCHEMA),
        root / "data" / "default" / shard_name("train", 0, 1),
    )
    return root


@pytest.mark.parametrize("kind", ["jsonl", "folder"])
def test_lookup_by_normalized_text_most_fluent_first(tmp_path, kind):
    path = (
        write_jsonl(tmp_path / "release.jsonl", RECORDS)
        if kind == "jsonl"
        else write_folder(tmp_path, RECORDS)
    )
    index = ParaphraseIndex.from_path(path)
    query = "  i KNOW for them to approve this price,  they'll need statistical documentation. "
    assert index.lookup(query, 5) == [  # by perplexity; the copy of the source (10.0) is left out
        "What I know is that they need statistics to approve the price.",
        "They'll need statistical documentation to approve this price, I know.",
        "Statistical documentation is needed.",
    ]
    assert index.lookup(query, 1) == ["What I know is that they need statistics to approve the price."]
    assert index.lookup("he left.", 3) == ["He departed."]
    assert index.lookup("Somebody else.", 3) == []


def test_keys_and_max_perplexity_filter(tmp_path):
    path = write_jsonl(tmp_path / "release.jsonl", RECORDS)
    keys = {normalize(RECORDS[0]["text"]), normalize("He left.")}
    index = ParaphraseIndex.from_path(path, keys=keys, max_perplexity=100)
    assert len(index) == 2
    assert "Statistical documentation is needed." not in index.lookup(RECORDS[0]["text"], 9)
    assert index.lookup("Not wanted.", 3) == []
    # a text all of whose paraphrases are over the cap has none: not counted as found
    assert len(ParaphraseIndex.from_path(path, keys=keys, max_perplexity=0.5)) == 0


def test_records_of_the_same_text_merge_without_repeats():
    index = ParaphraseIndex.from_records(
        [
            {"text": "He left.", "paraphrases": [{"para_text": "He departed.", "perplexity": 40.0}]},
            {
                "text": "HE LEFT.",
                "paraphrases": [
                    {"para_text": "he departed.", "perplexity": 1.0},
                    {"para_text": "He went away.", "perplexity": None},
                ],
            },
        ]
    )
    # most fluent first over both records (before: the first record's, then the second's)
    assert index.lookup("he left.", 5) == ["he departed.", "He went away."]


def test_bad_release_line_is_named(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(RECORDS[1]) + "\n" + '{"text": 3}\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 2"):
        ParaphraseIndex.from_path(path)


def test_missing_path_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        ParaphraseIndex.from_path(tmp_path / "nope.jsonl")
