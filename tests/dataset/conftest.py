"""Fixtures of the dataset tests: the release-format sample (plain, zipped, gzipped), a Parquet
dataset folder in our schema written with the generator's ShardWriter, and a folder written by the
generator itself (tiny random models)."""

from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path

import pytest
from dataset_samples import FOLDER_RECORDS, RELEASE, SENTENCES


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


@pytest.fixture(scope="session")
def parquet_folder(tmp_path_factory) -> Path:
    """A dataset folder written with paraamr.builder.folder's writers, 2 records per shard (a commit
    every 2 records, and a 1-byte shard size so that finalize keeps each commit's part whole)."""
    from paraamr.builder.folder import ShardWriter, finalize
    from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, to_pairs

    folder = tmp_path_factory.mktemp("folder")
    for split, records in FOLDER_RECORDS.items():
        default = ShardWriter(folder, "default", split, DEFAULT_SCHEMA)
        pairs = ShardWriter(folder, "pairs", split, PAIRS_SCHEMA)
        for n, record in enumerate(records, 1):
            default.write(record)
            pairs.write_rows(to_pairs(record))
            if n % 2 == 0:
                default.commit(), pairs.commit()
        default.commit(), pairs.commit()
    finalize(folder, max_shard_size=1)
    return folder


@pytest.fixture(scope="session")
def generated(tiny_models, tmp_path_factory) -> Path:
    """A folder written by paraamr.generate with the tiny random models (train and validation)."""
    from entries import generate as main

    root = tmp_path_factory.mktemp("generated")
    (root / "in.txt").write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    out = root / "paraamr"
    models = [(f"--{kind}-model", str(tiny_models[kind])) for kind in ("parser", "realizer", "lm")]
    options = ["--validation-fraction", "0.5", "--max-perplexity", "none", "--no-progress"]
    status = main(["--input", str(root / "in.txt"), "--output", str(out), *options, *sum(models, ())])
    assert status == 0
    return out
