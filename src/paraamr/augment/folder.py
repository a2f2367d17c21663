"""Write augmented splits as a Hub-ready dataset folder: Parquet shards, a card, the failures.

Layout (``load_dataset(folder)`` and ``paraamr push folder org/name`` take it as is)::

    README.md                           card; YAML ``configs:`` maps each split to its shards
    data/{split}-{i:05d}-of-{n:05d}.parquet
    failures/augment.jsonl              rows that could not be augmented (when there are any)

>>> text = render_card(method="reda", n=2, seed=0, source="glue/mrpc", columns=("sentence1", "sentence2"),
...                    rows={"train": 10}, augmented_splits=["train"], stats={"train": {"added_rows": 6}})
>>> from huggingface_hub import DatasetCard
>>> DatasetCard(text).data.configs[0]["data_files"]
[{'split': 'train', 'path': 'data/train-*.parquet'}]
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paraamr import __version__
from paraamr.errors import InputError

if TYPE_CHECKING:
    from datasets import Dataset

METHOD_TEXT = {
    "paraamr": "ParaAMR paraphrases (AMR back-translation, Huang et al. 2023), most fluent first",
    "reda": "REDA (Wang 2022): synonym replacement, random swap, insertion, deletion and mixes, "
    "with WordNet synonyms",
    "reda-ng": "REDA+NG (Wang 2022): REDA outputs ranked by a 4-gram language model with stupid backoff",
}


def render_card(
    *,
    method: str,
    n: int,
    seed: int,
    source: str,
    columns: Sequence[str],
    rows: Mapping[str, int],
    augmented_splits: Sequence[str],
    stats: Mapping[str, Mapping[str, int]],
    signature: str | None = None,
    pretty_name: str | None = None,
) -> str:
    """The README.md of an augmented dataset folder (YAML ``configs:`` for every split)."""
    from huggingface_hub import DatasetCardData

    data = DatasetCardData(
        pretty_name=pretty_name or f"{source} augmented ({method})",
        tags=["data-augmentation", "paraamr", method],
        configs=[
            {
                "config_name": "default",
                "data_files": [{"split": s, "path": f"data/{s}-*.parquet"} for s in rows],
            }
        ],
    )
    lines = [
        "---",
        data.to_yaml(),
        "---",
        "",
        f"# {data.pretty_name}",
        "",
        f"`{source}` with up to {n} new version(s) of each text by {METHOD_TEXT[method]}.",
        "Input rows come first, unchanged (`augmented` false); each added row copies its input row",
        "(labels kept) with one text column replaced; `source_index` is the input row's index. In",
        "sentence pairs each side is augmented and paired with the other, original side. Added rows",
        "repeating a row already there were removed.",
        "",
        f"- Text columns: {', '.join(f'`{c}`' for c in columns)}",
        f"- Augmented splits: {', '.join(augmented_splits)} (other splits copied unchanged)",
        f"- Seed: {seed}",
        f"- Built with: paraamr {__version__} (`paraamr augment --method {method} --n {n}`)",
    ]
    if signature:
        lines.append(f"- Language model: `{signature}`")
    lines += ["", "| split | rows | added | repeats removed | bad rows |", "|---|---|---|---|---|"]
    for split, count in rows.items():
        s = stats.get(split, {})
        lines.append(
            f"| {split} | {count} | {s.get('added_rows', 0)} | {s.get('repeats_removed', 0)} "
            f"| {s.get('bad_rows', 0)} |"
        )
    lines += [
        "",
        "Bad rows (empty, missing or over `--max-chars`) are listed in `failures/augment.jsonl`.",
        "",
    ]
    return "\n".join(lines)


def write_folder(
    splits: Mapping[str, Dataset],
    output: str | os.PathLike,
    *,
    card: str,
    failures: Sequence[Mapping[str, Any]] = (),
    rows_per_shard: int = 100_000,
    overwrite: bool = False,
) -> Path:
    """Write ``splits`` as Parquet shards under ``output`` with ``card`` as README.md.

    Everything is written to a hidden folder first and moved in place at the end; an ``output``
    that exists and is not empty needs ``overwrite=True``.
    """
    output = Path(output)
    if output.exists() and any(output.iterdir()) and not overwrite:
        raise InputError(f"{output}: exists and is not empty (pass --overwrite to replace it)")
    tmp = output.parent / f".{output.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "data").mkdir(parents=True)
    for split, dataset in splits.items():
        shards = max(1, math.ceil(len(dataset) / rows_per_shard))
        for i in range(shards):
            part = dataset.shard(shards, i, contiguous=True)
            part.to_parquet(str(tmp / "data" / f"{split}-{i:05d}-of-{shards:05d}.parquet"))
    if failures:
        (tmp / "failures").mkdir()
        with (tmp / "failures" / "augment.jsonl").open("w", encoding="utf-8") as stream:
            for failure in failures:
                stream.write(json.dumps(dict(failure), ensure_ascii=False) + "\n")
    (tmp / "README.md").write_text(card, encoding="utf-8")
    if output.exists():
        shutil.rmtree(output)
    tmp.rename(output)
    return output
