"""Write augmented splits as a Hub-ready dataset folder: Parquet shards, a card, the failures.

The layout is the project's one (:mod:`paraamr.builder.folder`), so ``load_dataset(folder)``,
``paraamr push`` and ``--push-to-hub`` take it as is::

    README.md                                        card; YAML ``configs:`` maps each split to its shards
    data/default/{split}-{i:05d}-of-{n:05d}.parquet  the rows, shards named as push_to_hub names them
    failures/failures-{i:05d}-of-{n:05d}.jsonl       rows that could not be augmented (when any)

>>> text = augment_card(method="reda", n=2, seed=0, source="glue/mrpc", columns=("sentence1", "sentence2"),
...                    rows={"train": 10, "test": 0}, augmented_splits=["train"],
...                    stats={"train": {"added_rows": 6}}, license="mit", labelled=True)
>>> from huggingface_hub import DatasetCard
>>> data = DatasetCard(text).data
>>> data.configs[0]["data_files"]
[{'split': 'train', 'path': 'data/default/train-?????-of-?????.parquet'}]
>>> data.license, data.language, data.task_categories
('mit', ['en'], ['text-classification'])
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paraamr import __version__
from paraamr.errors import InputError
from paraamr.layout import STATE_DIR
from paraamr.outputs import check_writable, left_unfinished, take_folder

if TYPE_CHECKING:
    from datasets import Dataset

__all__ = ["CACHE", "CONFIG", "MARK", "augment_card", "check_output", "claim_output", "write_folder"]

#: The one config of an augmented folder.
CONFIG = "default"
#: Words of a card that say augment wrote it (an --overwrite may replace such a folder only).
MARK = "paraamr augment"
#: Where in the output's state the run's datasets map writes its Arrow files.
CACHE = f"{STATE_DIR}/augment"

METHOD_TEXT = {
    "paraamr": "ParaAMR paraphrases (AMR back-translation, Huang et al. 2023), most fluent first",
    "reda": "REDA (Wang 2022): synonym replacement, random swap, insertion, deletion and mixes",
    "reda-ng": "REDA+NG (Wang 2022): REDA outputs ranked by a 4-gram language model with stupid backoff",
}


def augment_card(
    *,
    method: str,
    n: int,
    seed: int,
    recipe: str | None = None,
    source: str,
    columns: Sequence[str],
    rows: Mapping[str, int],
    augmented_splits: Sequence[str],
    stats: Mapping[str, Mapping[str, int]],
    signature: str | None = None,
    method_signature: str | None = None,
    paraphrases: str | None = None,
    language: str = "en",
    pretty_name: str | None = None,
    license: str | None = None,
    labelled: bool = False,
    repo_id: str | None = None,
) -> str:
    """The README.md of an augmented dataset folder: ``configs:`` for every split with rows, license
    (``None``: ``unknown``), language, task categories (``text-classification`` when ``labelled``),
    size, and how the rows were made (``n`` new versions at most, by ``recipe`` when given;
    ``paraphrases``: where the paraamr method's came from).
    ``repo_id`` names the Hub repo in the load snippet."""
    from huggingface_hub import DatasetCardData

    from paraamr.card import code, configs, cut, md, render, size_category

    present = [s for s, count in rows.items() if count]
    empty = [s for s, count in rows.items() if not count]
    data = DatasetCardData(
        pretty_name=pretty_name or f"{cut(source)} augmented ({method})",
        license=license or "unknown",
        language=[language],
        size_categories=[size_category(sum(rows.values()))],
        task_categories=["text-classification"] if labelled else [],
        tags=list(dict.fromkeys(["data-augmentation", "paraamr", method])),  # (method paraamr: once)
        configs=configs({CONFIG: present}, default=""),
    )
    facts = [
        f"- Text columns: {', '.join(code(c) for c in columns)}",
        f"- Augmented splits: {', '.join(md(s) for s in augmented_splits)}"
        " (other splits copied unchanged, `augmented` false)",
        f"- Seed: {seed}",
        f"- License: `{data.license}`"
        + (" (none was given: `--license`; the source's terms apply)" if license is None else ""),
        f"- Built with: paraamr {__version__} (`{MARK} --method {method} "
        f"{f'--recipe {recipe}' if recipe else f'--n {n}'}`)",
        *([f"- Method: {code(method_signature)}"] if method_signature else []),
        *([f"- Paraphrases: {paraphrases}"] if paraphrases else []),
        *([f"- Language model: {code(signature)}"] if signature else []),
    ]
    if empty:
        names = ", ".join(map(md, empty))
        facts.append(f"- Splits without rows (not in `configs`, so `load_dataset` skips them): {names}")
    table = [
        f"| {md(split)} | {count} | {stats.get(split, {}).get('added_rows', 0)} "
        f"| {stats.get(split, {}).get('repeats_removed', 0)} | {stats.get(split, {}).get('bad_rows', 0)} |"
        for split, count in rows.items()
    ]
    return render(
        "augment_card.md",
        data,
        pretty_name=data.pretty_name,
        summary_text=f"{code(source)} with up to {n} new version(s) of each text by {METHOD_TEXT[method]}. "
        "Input rows come first, unchanged (`augmented` false); each added row copies its input row "
        "(labels kept) with one text column replaced; `source_index` is the input row's index. In "
        "sentence pairs each side is augmented and paired with the other, original side. Added rows "
        "repeating a row already there were removed.",
        repo_hint=repo_id or "path/to/this/folder",
        facts="\n".join(facts),
        rows_table="\n".join(table),
        bad_rows=any(split.get("bad_rows") for split in stats.values()),  # failures/ then, only
    )


@contextlib.contextmanager
def claim_output(output: str | os.PathLike, overwrite: bool) -> Iterator[Path]:
    """Hold ``output``'s lock (:func:`paraamr.locks.folder_lock`) for a whole run, the folder
    checked (:func:`check_output`) before and again under it. A run that fails leaves it as it
    was: its staged parts go, and the folders it created are removed again."""
    from paraamr.atomic import new_folders
    from paraamr.layout import remove_layout, remove_state
    from paraamr.locks import folder_lock

    output = Path(output)
    check_output(output, overwrite)
    with new_folders(output), folder_lock(output, command="augment"):  # (made ones go when empty again)
        check_output(output, overwrite)  # another run may have written it meanwhile
        fresh = take_folder(output)
        try:
            yield output
        except BaseException:
            if fresh and left_unfinished(output):  # no card yet: empty again (with one, it is done:
                remove_layout(output)  # a failed push after it keeps the folder)
            else:
                remove_state(output)  # the parts staged
            raise


def write_folder(
    splits: Mapping[str, Dataset],
    output: str | os.PathLike,
    *,
    card: str,
    failures: Sequence[Mapping[str, Any]] = (),
    max_shard_size: int | str | None = None,
    overwrite: bool = False,
) -> Path:
    """Write ``splits`` as the shards of config ``default`` under ``output``, ``failures`` as its
    failure files and ``card`` as README.md (with the shards' ``dataset_info``); returns the
    folder. Call it inside :func:`claim_output`.

    Shards and failures are staged first; only then, with ``overwrite``, are the files of the
    earlier output replaced, in one block with the renames of the new shards
    (:func:`~paraamr.builder.folder.finalize`), so a run that fails or is interrupted leaves the
    earlier output or the new shards (a rerun with ``--overwrite`` writes their card; in a folder
    taken new, without it: :func:`~paraamr.outputs.left_unfinished`).
    """
    from paraamr.atomic import atomic_write
    from paraamr.builder.folder import FailureWriter, ShardWriter, finalize
    from paraamr.card import with_dataset_info
    from paraamr.layout import CARD, MAX_SHARD_SIZE, remove_layout, remove_state

    output = Path(output)
    size = max_shard_size or MAX_SHARD_SIZE
    for split, dataset in splits.items():
        if not len(dataset):
            continue  # datasets cannot load a split without rows; the card names it
        schema = dataset.features.arrow_schema
        with ShardWriter(output, CONFIG, split, schema, max_shard_size=size) as writer:
            for table in dataset.with_format("arrow").iter(batch_size=1000):
                writer.write_table(table)
    if failures:
        failed = FailureWriter(output)
        for failure in failures:
            failed.write(dict(failure))
        failed.commit()
    finalize(
        output,
        max_shard_size=size,
        replacing=(lambda: remove_layout(output, state=False)) if overwrite else None,  # augment's, checked
    )
    atomic_write(output / CARD, with_dataset_info(card, output))
    remove_state(output)  # the mark of a new folder last, once the card is there
    return output


def check_output(output: Path, overwrite: bool) -> None:
    """Refuse an ``output`` that cannot be written (under a file, read-only, on a full disk), or
    that is not empty unless ``overwrite`` and it holds only an earlier augment output's files.

    >>> check_output(Path("/proc/version/out"), False)
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: /proc/version/out: cannot be written: /proc/version is a file, not a folder
    """
    from paraamr.layout import CARD, failure_files, holds_dataset, is_empty, list_shards

    if output.exists() and not output.is_dir():
        raise InputError(f"{output}: exists and is not a folder (give a new folder as --output)")
    if not output.exists() or is_empty(output) or left_unfinished(output):  # (the last: a killed run's)
        check_writable(output)
        return
    if not overwrite:
        raise InputError(f"{output}: exists and is not empty (pass --overwrite to replace an earlier output)")
    card = output / CARD
    ours = {card, *failure_files(output)}
    ours.update(p for splits in list_shards(output).values() for paths in splits.values() for p in paths)
    others = sorted(
        str(p.relative_to(output))
        for p in output.rglob("*")
        if p.is_file() and p not in ours and STATE_DIR not in p.relative_to(output).parts
    )
    written_by_us = card.is_file() and MARK in card.read_text(encoding="utf-8", errors="replace")
    if others or not written_by_us or not holds_dataset(output):
        what = f"holds files augment did not write ({', '.join(others[:3])})" if others else "not augment's"
        raise InputError(f"{output}: {what}; --overwrite replaces only an earlier augment output")
