"""Fixtures of the dataset tests: the release-format sample (plain, zipped, gzipped), a Parquet
dataset folder in our schema written with the generator's ShardWriter, and a folder written by the
generator itself (tiny random models)."""

from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
#: Six sources in the release format (the first is the release README's example, with a
#: paraphrase of perplexity 125 > 120); 11 paraphrases. Counts by hand are in the tests.
RELEASE = DATA / "release_sample.jsonl"


@pytest.fixture(scope="session")
def release_jsonl() -> Path:
    return RELEASE


@pytest.fixture(scope="session")
def release_lines() -> list[dict]:
    return [json.loads(line) for line in RELEASE.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="session")
def release_zip(tmp_path_factory) -> Path:
    """Like ParaAMR_small.zip: one JSON lines member named .json, plus macOS resource-fork junk."""
    path = tmp_path_factory.mktemp("release") / "ParaAMR_small.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.write(RELEASE, "ParaAMR_small.json")
        archive.writestr("__MACOSX/._ParaAMR_small.json", b"\x00\x05\x16\x07 not json")
    return path


@pytest.fixture(scope="session")
def release_gz(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("release-gz") / "ParaAMR_small.json.gz"
    path.write_bytes(gzip.compress(RELEASE.read_bytes()))
    return path


def _para(text, ppl, focus, sim=None, quality=None):
    return {
        "para_text": text,
        "perplexity": ppl,
        "focus": focus,
        "amr": f"(f / {focus})",
        "similarity": sim,
        "quality": quality,
    }


#: Records of the Parquet folder, by split: every field of our schema, some nulls (scores exact in float32).
FOLDER_RECORDS = {
    "train": [
        {
            "id": "id-know",
            "text": "I know they need it.",
            "amr": "(k / know-01 :ARG0 (i / i))",
            "paraphrases": [
                _para("They need it, I know.", 40.5, "need-01", 0.875, 0.25),
                _para("What they need, I know, is it.", 130.0, "it", 0.75, -0.125),
            ],
        },
        {"id": "id-rain", "text": "It rained.", "amr": "(r / rain-01)", "paraphrases": []},
        {
            "id": "id-cat",
            "text": "The cat sat.",
            "amr": "(s / sit-01 :ARG1 (c / cat))",
            "paraphrases": [
                _para("Sitting was the cat.", 99.0, "cat"),
                _para("The cat was sitting.", 20.0, "cat", 0.9375, None),
                _para("A cat sat.", 80.0, "cat", None, 0.5),
            ],
        },
    ],
    "validation": [
        {
            "id": "id-dog",
            "text": "Dogs bark.",
            "amr": "(b / bark-01 :ARG0 (d / dog))",
            "paraphrases": [_para("Barking is what dogs do.", 115.0, "dog", 0.8125, 0.375)],
        },
    ],
}


@pytest.fixture(scope="session")
def parquet_folder(tmp_path_factory) -> Path:
    """A dataset folder written with paraamr.builder.io.ShardWriter, 2 rows per shard."""
    from paraamr.builder.io import ShardWriter
    from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, to_pairs

    folder = tmp_path_factory.mktemp("folder")
    for split, records in FOLDER_RECORDS.items():
        with (
            ShardWriter(folder, "default", split, DEFAULT_SCHEMA, rows_per_shard=2) as default,
            ShardWriter(folder, "pairs", split, PAIRS_SCHEMA, rows_per_shard=2) as pairs,
        ):
            for record in records:
                default.write(record)
                for pair in to_pairs(record):
                    pairs.write(pair)
    return folder


#: The input sentences of the generated folder.
SENTENCES = [
    "The boy wants to go.",
    "She sold the house last year.",
    "Dogs bark at night.",
    "I know they will need documents.",
]


@pytest.fixture(scope="session")
def generated(tiny_models, tmp_path_factory) -> Path:
    """A folder written by paraamr.generate with the tiny random models (train and validation)."""
    from paraamr.generate import main

    root = tmp_path_factory.mktemp("generated")
    (root / "in.txt").write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    out = root / "paraamr"
    models = [(f"--{kind}-model", str(tiny_models[kind])) for kind in ("parser", "generator", "lm")]
    options = ["--validation-fraction", "0.5", "--max-perplexity", "none", "--no-progress"]
    status = main(["--input", str(root / "in.txt"), "--output", str(out), *options, *sum(models, ())])
    assert status == 0
    return out
