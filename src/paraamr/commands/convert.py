"""``paraamr convert INPUT OUTPUT``: release JSON lines <-> our Parquet dataset folder, lossless.

To a folder: the ``default`` and ``pairs`` shards of each split (written by
:class:`paraamr.builder.folder.ShardWriter`) and a README.md card (:func:`paraamr.card.render_card`).
To JSON lines (OUTPUT ending in ``.json``, ``.jsonl``, ``.gz`` or ``.zip``): one line per source
in the release format (``text``, ``paraphrases`` of ``para_text`` and ``perplexity``); with
``--all-fields`` every field of our schema.
"""

from __future__ import annotations

import argparse

JSONL_SUFFIXES = (".json", ".jsonl", ".gz", ".zip")


def register(subparsers) -> None:
    """Add the ``convert`` command."""
    p = subparsers.add_parser(
        "convert",
        help="convert ParaAMR release JSON lines <-> a Parquet dataset folder (lossless)",
        description="Convert INPUT (release JSON lines, zipped or not, a Parquet file or a dataset folder) "
        "into OUTPUT: a dataset folder (data/{default,pairs}/{split}-*.parquet + README.md), or, when "
        "OUTPUT ends in .json/.jsonl/.gz/.zip (or with --to jsonl), release-format JSON lines.",
    )
    p.add_argument("input", metavar="INPUT")
    p.add_argument("output", metavar="OUTPUT")
    p.add_argument(
        "--to",
        choices=("parquet", "jsonl"),
        default=None,
        help="output format (default: from OUTPUT's suffix; a folder otherwise)",
    )
    p.add_argument(
        "--license",
        default="cc-by-nc-4.0",
        help="license id for the card (default: %(default)s, the release's)",
    )
    p.add_argument(
        "--rows-per-shard", type=int, default=10000, help="rows per Parquet shard (default: %(default)s)"
    )
    p.add_argument(
        "--all-fields", action="store_true", help="JSON lines: write every field, not only the release's"
    )
    p.add_argument("--overwrite", action="store_true", help="replace the shards of an existing OUTPUT folder")
    p.add_argument("--skip-invalid", action="store_true", help="count malformed lines instead of failing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Convert; print what was written."""
    import sys

    from paraamr.errors import ParaAMRError
    from paraamr.sources import Skipped

    to = args.to or ("jsonl" if args.output.lower().endswith(JSONL_SUFFIXES) else "parquet")
    skipped = Skipped()
    try:
        if to == "jsonl":
            n = to_jsonl(
                args.input,
                args.output,
                all_fields=args.all_fields,
                skip_invalid=args.skip_invalid,
                skipped=skipped,
            )
        else:
            n = to_folder(
                args.input,
                args.output,
                license=args.license,
                rows_per_shard=args.rows_per_shard,
                overwrite=args.overwrite,
                skip_invalid=args.skip_invalid,
                skipped=skipped,
            )
    except ParaAMRError as err:
        print(f"paraamr convert: {err}", file=sys.stderr)
        return 1
    print(f"wrote {n} records to {args.output}")
    if skipped.count:
        print(
            f"paraamr convert: skipped {skipped.count} invalid lines; first: {skipped.messages[0]}",
            file=sys.stderr,
        )
    return 0


def release_line(record: dict, *, all_fields: bool = False) -> dict:
    """The JSON object of one record: the release's fields (or all of ours)."""
    if all_fields:
        return record
    return {
        "text": record["text"],
        "paraphrases": [
            {"para_text": p["para_text"], "perplexity": p["perplexity"]} for p in record["paraphrases"]
        ],
    }


def to_jsonl(input, output, *, all_fields: bool = False, skip_invalid: bool = False, skipped=None) -> int:
    """Write every record under ``input`` as JSON lines to ``output`` (``.zip``: an archive holding
    ``<stem>.json`` like the release; ``.gz``: gzip); return the number of records."""
    import gzip
    import io
    import json
    import os
    import zipfile
    from pathlib import Path

    from paraamr.sources import read_path

    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    n = 0
    try:
        with open(tmp, "wb") as raw:
            if out.suffix.lower() == ".zip":
                archive = zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_DEFLATED)
                sink = archive.open(f"{out.stem}.json", "w", force_zip64=True)
            elif out.suffix.lower() == ".gz":
                archive, sink = None, gzip.GzipFile(fileobj=raw, mode="wb")
            else:
                archive, sink = None, raw
            text = io.TextIOWrapper(sink, encoding="utf-8", newline="\n")
            for _split, record in read_path(input, skip_invalid=skip_invalid, skipped=skipped):
                text.write(json.dumps(release_line(record, all_fields=all_fields), ensure_ascii=False) + "\n")
                n += 1
            text.flush()
            if sink is not raw:
                text.close()
            if archive is not None:
                archive.close()
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return n


def to_folder(
    input,
    output,
    *,
    license: str | None = "cc-by-nc-4.0",
    rows_per_shard: int = 10000,
    overwrite: bool = False,
    skip_invalid: bool = False,
    skipped=None,
) -> int:
    """Write every record under ``input`` as a dataset folder at ``output``: ``default`` and
    ``pairs`` shards of each split and a README.md card; return the number of records."""
    import shutil
    from pathlib import Path

    from paraamr.card import render_card
    from paraamr.errors import InputError
    from paraamr.sources import split_files
    from paraamr.stats import compute_stats

    out = Path(output)
    data = out / "data"
    if data.exists():
        if not overwrite:
            raise InputError(f"{output}: already holds data/ (pass --overwrite to replace it)")
        if out.resolve() in (Path(input).resolve(), *Path(input).resolve().parents):
            raise InputError(f"{output}: cannot overwrite the folder being read")
        shutil.rmtree(data)
    splits = list(split_files(input))
    try:
        n = _write_folder(input, out, splits, rows_per_shard, skip_invalid, skipped)
    except BaseException:
        shutil.rmtree(data, ignore_errors=True)  # never leave a folder with part of the records
        raise
    readme = render_card(summary=None, stats=compute_stats(out), license=license, splits=splits, folder=out)
    (out / "README.md").write_text(readme, encoding="utf-8")
    return n


def _write_folder(input, out, splits, rows_per_shard, skip_invalid, skipped) -> int:
    from contextlib import ExitStack

    from paraamr.builder.folder import ShardWriter
    from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, to_pairs
    from paraamr.sources import read_path

    n = 0
    with ExitStack() as stack:
        writers = {}
        for split in splits:
            writers[split] = (
                stack.enter_context(
                    ShardWriter(out, "default", split, DEFAULT_SCHEMA, rows_per_shard=rows_per_shard)
                ),
                stack.enter_context(
                    ShardWriter(out, "pairs", split, PAIRS_SCHEMA, rows_per_shard=rows_per_shard)
                ),
            )
        for split, record in read_path(input, skip_invalid=skip_invalid, skipped=skipped):
            default, pairs = writers[split]
            default.write(record)
            for pair in to_pairs(record):
                pairs.write(pair)
            n += 1
    return n
