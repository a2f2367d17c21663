"""``paraamr convert INPUT OUTPUT``: convert ParaAMR release JSON lines <-> a Parquet dataset folder
(lossless).

Convert INPUT (release JSON lines, zipped or not, a Parquet file or a dataset folder) into OUTPUT: a
dataset folder (data/{default,pairs}/{split}-*.parquet + README.md), or, when OUTPUT ends in
.json/.jsonl/.gz/.zip (or with --to jsonl), release-format JSON lines.
"""

from __future__ import annotations

import argparse
import importlib.util

from paraamr.options import license_id, positive
from paraamr.report import counted

JSONL_SUFFIXES = (".json", ".jsonl", ".gz", ".zip")
#: Suffixes of a single file that a dataset folder's name would not end with.
FILE_SUFFIXES = (".parquet", ".csv", ".tsv", ".txt", ".arrow")
#: The license of the ParaAMR release: the card's for records converted from it.
RELEASE_LICENSE = "cc-by-nc-4.0"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``paraamr convert``."""
    parser.add_argument("input", metavar="INPUT")
    parser.add_argument("output", metavar="OUTPUT")
    parser.add_argument(
        "--to",
        choices=("parquet", "jsonl"),
        default=None,
        help="output format (default: from OUTPUT's suffix; a folder otherwise)",
    )
    parser.add_argument(
        "--license",
        type=license_id,
        default=None,
        help=f"license id for the card (default: {RELEASE_LICENSE}, the release's, for the release's "
        "records; unknown for records with foci, graphs or scores, which are not the release's)",
    )
    parser.add_argument(
        "--max-shard-size",
        metavar="SIZE",
        help="largest shard, uncompressed, as datasets' push_to_hub counts it (default: 500MB)",
    )
    parser.add_argument(
        "--all-fields", action="store_true", help="JSON lines: write every field, not only the release's"
    )
    parser.add_argument(
        "--split",
        metavar="NAME",
        help="JSON lines from a dataset folder: the split to write, or 'all' for every split in one file "
        "(needed when the folder has several: a file holds no split)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing OUTPUT file, or the shards and card of an OUTPUT folder (other files stay)",
    )
    parser.add_argument(
        "--repo-id", help="the Hub repo the card's load snippets name (default: --push-to-hub's)"
    )
    from paraamr.commands.push import add_hub_options

    add_hub_options(parser)
    parser.add_argument(
        "--skip-invalid", action="store_true", help="count malformed lines instead of failing"
    )
    parser.add_argument(
        "--max-chars",
        type=positive(),
        default=None,
        help="a line whose text or a paraphrase is longer is invalid: refused, or counted with "
        "--skip-invalid (default: no limit). A lone surrogate or a NUL in a text always is.",
    )
    from paraamr.commands.stats import add_archive_options

    add_archive_options(parser)


def run(args: argparse.Namespace) -> int:
    """Convert (and push); print what was written."""
    import sys
    from collections import Counter
    from pathlib import Path

    from paraamr.builder.hub import check_push
    from paraamr.commands.push import check_repo_id, push_of
    from paraamr.commands.stats import archive_limits, check_finished
    from paraamr.errors import UsageError
    from paraamr.sources import Skipped

    options = {"max_chars": args.max_chars, "limits": archive_limits(args)}  # exit 2 before any work
    push = push_of(args)  # a bad repo id, or --private, --revision, --token without --push-to-hub
    check_repo_id(args.repo_id, "--repo-id")
    if args.repo_id and args.push_to_hub and args.repo_id != args.push_to_hub:  # a card naming another repo
        given = f"--repo-id {args.repo_id}, --push-to-hub {args.push_to_hub}"
        raise UsageError(f"{given}: the card names the repo it is pushed to (give one)")
    to = args.to or ("jsonl" if args.output.lower().endswith(JSONL_SUFFIXES) else "parquet")
    suffix = Path(args.output).suffix.lower()
    if to == "parquet" and suffix in FILE_SUFFIXES and not Path(args.output).is_dir():
        raise UsageError(
            f"{args.output}: a {suffix} file name, but OUTPUT is a dataset folder (data/default/*.parquet) "
            f"or JSON lines ({'/'.join(JSONL_SUFFIXES)}): give a folder name"
        )
    skipped = Skipped(fields=Counter())
    if to == "jsonl" and args.push_to_hub:
        raise UsageError("--push-to-hub needs a dataset folder as OUTPUT, not JSON lines")
    folder_only = {
        "--license": args.license,
        "--max-shard-size": args.max_shard_size,
        "--repo-id": args.repo_id,
    }
    if to == "jsonl" and (given := [flag for flag, value in folder_only.items() if value is not None]):
        raise UsageError(f"{', '.join(given)}: only with a dataset folder as OUTPUT (its shards and card)")
    jsonl_only = {"--all-fields": args.all_fields, "--split": args.split}
    if to == "parquet" and (given := [flag for flag, value in jsonl_only.items() if value]):
        why = "a dataset folder keeps every field and split"
        raise UsageError(f"{', '.join(given)}: only with JSON lines as OUTPUT ({why})")
    check_push(push, "paraamr convert")
    check_finished(args.input)
    options.update(skip_invalid=args.skip_invalid, skipped=skipped, overwrite=args.overwrite)
    if to == "jsonl":
        n = to_jsonl(args.input, args.output, all_fields=args.all_fields, split=args.split, **options)
    else:
        n = to_folder(
            args.input,
            args.output,
            license=args.license,
            max_shard_size=args.max_shard_size or "500MB",
            repo_id=args.repo_id or args.push_to_hub,
            revision=args.revision if args.push_to_hub else None,
            **options,
        )
    print(f"wrote {counted(n, 'record')} to {args.output}")
    if skipped.count:
        lines = counted(skipped.count, "invalid line")
        print(f"paraamr convert: skipped {lines}; first: {skipped.messages[0]}", file=sys.stderr)
    if skipped.fields:  # a release-like file of the user's: say what did not carry over
        where = {True: "paraphrase", False: "line"}
        fields = ", ".join(
            f"{name} ({counted(n, where[name.startswith('paraphrases[]')])})"
            for name, n in sorted(skipped.fields.items())
        )
        print(f"paraamr convert: fields the records have no place for, left out: {fields}", file=sys.stderr)
    if to == "parquet" and importlib.util.find_spec("matplotlib") is None:
        print(
            "paraamr convert: note: the card has no histograms (matplotlib is not installed: "
            "pip install 'paraamr[plots]', then run the command again with --overwrite)",
            file=sys.stderr,
        )
    if args.push_to_hub:
        from paraamr.commands.push import push_with_options

        return push_with_options(args.output, args.push_to_hub, args, written=True)
    return 0


def not_the_release(record: dict) -> bool:
    """Whether ``record`` holds what no record of the release has: a graph, a focus or a score.

    >>> not_the_release({"text": "a", "amr": None, "paraphrases": [{"para_text": "b", "perplexity": 9.0}]})
    False
    """
    keys = ("focus", "amr", "similarity", "quality")
    filled = (p.get(k) is not None for p in record["paraphrases"] for k in keys)
    return record.get("amr") is not None or any(filled)


def release_line(record: dict) -> dict:
    """The release's fields of one record."""
    return {
        "text": record["text"],
        "paraphrases": [
            {"para_text": p["para_text"], "perplexity": p["perplexity"]} for p in record["paraphrases"]
        ],
    }


def to_jsonl(
    input,
    output,
    *,
    all_fields: bool = False,
    split: str | None = None,
    skip_invalid: bool = False,
    skipped=None,
    overwrite: bool = False,
    max_chars: int | None = None,
    limits=None,
) -> int:
    """Write the records of ``split`` (``all``: of every split; None: of the only one) under ``input``
    as JSON lines to ``output`` (``.zip``: an archive holding ``<stem>.json`` like the release;
    ``.gz``: gzip); return the number of records."""
    import contextlib
    import gzip
    import io
    import json
    import zipfile
    from pathlib import Path

    from paraamr.atomic import atomic_file
    from paraamr.errors import InputError, UsageError
    from paraamr.outputs import check_writable, claim_file
    from paraamr.sources import read_path, split_files

    splits = list(split_files(input))
    if split is None and len(splits) > 1:  # before: every split went into one file, without a word
        raise UsageError(
            f"{input}: holds the splits {', '.join(splits)} and a JSON-lines file holds none: give "
            "--split NAME to write one of them, or --split all to write them all in one file"
        )
    if split not in (None, "all", *splits):
        raise InputError(f"{input}: no split {split!r} (it has {', '.join(splits) or 'no records'})")
    out = Path(output)
    check_writable(out.parent)  # a file where a folder should be, read-only, a full disk: before reading
    if out.is_dir():
        raise InputError(f"{output}: is a folder (JSON lines go to a file)")
    n = 0
    with (
        claim_file(output, overwrite=overwrite, command="convert"),  # refuses an existing output first
        atomic_file(out) as tmp,
        open(tmp, "wb") as raw,
        contextlib.ExitStack() as stack,
    ):
        sink = raw  # a zip entry or a gzip stream over it, closed (in that order) before it
        if out.suffix.lower() == ".zip":
            archive = stack.enter_context(zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_DEFLATED))
            sink = stack.enter_context(archive.open(f"{out.stem}.json", "w", force_zip64=True))
        elif out.suffix.lower() == ".gz":
            sink = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="wb"))
        text = io.TextIOWrapper(sink, encoding="utf-8", newline="\n")
        records = read_path(
            input, skip_invalid=skip_invalid, skipped=skipped, max_chars=max_chars, limits=limits
        )
        for name, record in records:
            if split not in (None, "all", name):
                continue
            line = record if all_fields else release_line(record)
            text.write(json.dumps(line, ensure_ascii=False) + "\n")
            n += 1
        if not n:  # as a folder output says (before: an empty file, exit 0)
            raise InputError(f"{input}: no records to convert")
        text.detach()  # flushed; the stack and the with close what is under it
    return n


def to_folder(
    input,
    output,
    *,
    license: str | None = None,
    max_shard_size: int | str = "500MB",
    overwrite: bool = False,
    skip_invalid: bool = False,
    skipped=None,
    repo_id: str | None = None,
    revision: str | None = None,
    max_chars: int | None = None,
    limits=None,
) -> int:
    """Write every record under ``input`` as a dataset folder at ``output`` (``default`` and
    ``pairs`` shards of each split, a README.md card), under its lock; return the number of records.
    A folder that is not empty is replaced only with ``overwrite`` and when it holds a dataset."""
    import shutil
    from pathlib import Path

    from paraamr import layout
    from paraamr.builder import folder
    from paraamr.card import write_card
    from paraamr.errors import InputError
    from paraamr.locks import folder_lock
    from paraamr.outputs import check_writable, left_unfinished, mark_new, take_folder
    from paraamr.sources import split_files

    out = Path(output)
    try:
        size = layout.parse_size(max_shard_size)
    except ValueError as err:
        raise InputError(f"--max-shard-size: {err}") from None
    if out.exists() and not out.is_dir():
        raise InputError(f"{output}: exists and is not a folder")
    check_writable(out)
    _check_folder(out, overwrite)  # at once, and again under the lock
    source = Path(input).resolve()
    if overwrite and out.resolve() in (source, *source.parents):
        raise InputError(f"{output}: cannot overwrite the folder being read")
    splits = list(split_files(input))
    for split in splits:  # a folder read keeps any split name; one written takes datasets' names only
        try:
            layout.check_name("split", split)
        except ValueError as err:
            raise InputError(f"{input}: {err}; rename its shards to write it as a dataset folder") from None
    new = next((p for p in reversed([out, *out.parents]) if not p.exists()), None)  # the first we make
    with folder_lock(out, command="convert"):
        _check_folder(out, overwrite)  # another writer may have finished meanwhile
        fresh = False
        try:
            fresh = take_folder(out)
            try:
                reading = {"skipped": skipped, "max_chars": max_chars, "limits": limits}
                reading["skip_invalid"] = skip_invalid
                n, release = _write_folder(input, out, splits, size, reading)
                if not n:
                    raise InputError(f"{input}: no records to convert")
                # the old dataset, its card too, goes only once the new shards are staged; the folder
                # is marked as being written until the new card is there (computing it takes a
                # while): a stop before it leaves a folder the same command takes again, never new
                # shards under the old card (whose split sizes load_dataset refuses)
                def replacing() -> None:
                    layout.remove_layout(out, state=False)
                    mark_new(out)

                folder.finalize(out, max_shard_size=size, replacing=replacing if overwrite else None)
            except BaseException:
                marked = left_unfinished(out)  # the folder is this command's to finish: it stays so
                layout.remove_state(out)  # never a folder with part of the records
                if marked:
                    mark_new(out)
                raise
            if license is None and release:
                license = RELEASE_LICENSE
            card = {"license": license, "repo_id": repo_id, "revision": revision}
            card["max_shard_size"] = max_shard_size
            write_card(out, summary=None, release=release, **card)
            layout.remove_state(out)  # the mark last, once the card is there
        except BaseException as err:
            if new is not None:  # it was not there and we hold its lock: ours, and half-written
                shutil.rmtree(new, ignore_errors=True)
            elif fresh:  # it was empty: empty again
                layout.remove_layout(out)
            if isinstance(err, OSError) and err.filename is None:  # a write's error names no file
                err.filename = str(out)
            raise
    return n


def _check_folder(out, overwrite: bool) -> None:
    """Refuse a folder with anything in it, unless ``overwrite`` and it holds a dataset."""
    from paraamr import layout
    from paraamr.errors import InputError
    from paraamr.outputs import left_unfinished

    if not out.is_dir() or layout.is_empty(out) or left_unfinished(out):  # (the last: a killed run's)
        return
    if not layout.holds_dataset(out):  # (--overwrite would not take it either: say so at once)
        raise InputError(
            f"{out}: holds no dataset (no shards, failures, summary or state; a README.md alone is "
            "none): refusing to replace its files even with --overwrite; give an empty or new folder"
        )
    if not overwrite:
        raise InputError(f"{out}: exists and is not empty (pass --overwrite to replace its shards and card)")


def _write_folder(input, out, splits, max_shard_size, reading: dict) -> tuple[int, bool]:
    """Write the records of ``input``; return how many, and whether they could be the release's."""
    from paraamr.builder.folder import ShardWriter
    from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, to_pairs
    from paraamr.sources import read_path

    def writers_of(split: str) -> tuple[ShardWriter, ShardWriter]:
        return (
            ShardWriter(out, "default", split, DEFAULT_SCHEMA, max_shard_size=max_shard_size),
            ShardWriter(out, "pairs", split, PAIRS_SCHEMA, max_shard_size=max_shard_size),
        )

    n, release = 0, True
    writers = {split: writers_of(split) for split in splits}
    for split, record in read_path(input, **reading):
        if split not in writers:  # a run finalized into ``input`` since it was listed: its dataset whole
            writers[split] = writers_of(split)
        default, pairs = writers[split]
        default.write(record)
        pairs.write_rows(to_pairs(record))
        n += 1
        release = release and not not_the_release(record)
    for pair in writers.values():
        for writer in pair:
            writer.commit()
    return n, release
