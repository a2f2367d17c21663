"""The parts of a ParaAMR card computed from a folder: sizes, splits, examples, Table 1, Table 2, license.

>>> print(stats_text({"instances": 2, "pairs": 3, "avg_paraphrases": 1.5, "avg_paraphrase_tokens": 4.0,
...     "avg_source_tokens": 5.0, "sources_without_paraphrases": 0, "tokens": "words",
...     "perplexity": {"min": 1.0, "p50": 2.0, "max": 3.0, "mean": 2.0, "missing": 0}}).splitlines()[4])
| 2 | 1.50 | 4.00 | 3 | 5.00 | 0 |
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from paraamr import sources
from paraamr.card.markdown import code, cut, md
from paraamr.layout import DATA, layout_info, list_shards
from paraamr.records import DEFAULT_SCHEMA, PARAPHRASE_TYPE, to_pairs
from paraamr.stats import cell

__all__ = [
    "CONFIGS",
    "SPLIT_ORDER",
    "contents",
    "dataset_info",
    "evaluation_text",
    "example_json",
    "examples",
    "examples_text",
    "libraries_text",
    "license_texts",
    "shard_names",
    "split_order",
    "splits_text",
    "stats_text",
    "threshold_splits",
    "with_dataset_info",
]

CONFIGS = ("default", "pairs")
#: The splits the card names first, in this order (the Hub's viewer and the Quick Start take the
#: first); others follow by name.
SPLIT_ORDER = ("train", "validation", "test")


def split_order(name: str) -> tuple[int, str]:
    """A sort key: the splits of :data:`SPLIT_ORDER` first, in its order, then by name.

    >>> sorted(["test", "dev", "train"], key=split_order)
    ['train', 'test', 'dev']
    """
    return (SPLIT_ORDER.index(name) if name in SPLIT_ORDER else len(SPLIT_ORDER), name)


def dataset_info(folder: str | os.PathLike) -> list[dict[str, Any]]:
    """The card's ``dataset_info``: features, rows and bytes per config (of :data:`CONFIGS`, those
    ``configs:`` can list) and split with rows, as ``datasets`` computes them; it also keys datasets'
    cache of a local folder, so a new run's rows are not served from an earlier one's."""
    import pyarrow.parquet as pq
    from datasets import Features

    infos = []
    shards = list_shards(folder)
    for config, splits in layout_info(folder).items():
        if config not in CONFIGS:  # a folder a user added under data/: no config of the card's
            continue
        entries = [
            {"name": split, "num_bytes": s["num_bytes"], "num_examples": s["num_examples"]}
            for split, s in sorted(splits.items(), key=lambda item: split_order(item[0]))
            if s["num_examples"]
        ]
        if entries:
            first = next(iter(shards[config].values()))[0]
            infos.append(
                {
                    "config_name": config,
                    "features": Features.from_arrow_schema(pq.read_schema(first))._to_yaml_list(),
                    "splits": entries,
                    "download_size": sum(s["download_size"] for s in splits.values()),
                    "dataset_size": sum(e["num_bytes"] for e in entries),
                }
            )
    return infos


def with_dataset_info(card: str, folder: str | os.PathLike) -> str:
    """``card`` (a README.md) with its ``dataset_info`` set from ``folder``'s shards."""
    from huggingface_hub import DatasetCard

    infos = dataset_info(folder)
    if not infos:
        return card  # no split has rows: nothing datasets could load
    parsed = DatasetCard(card)
    parsed.data.dataset_info = infos[0] if len(infos) == 1 else infos
    return str(parsed)


def examples(folder: str | os.PathLike, n: int = 3, *, max_chars: int = 200) -> list[dict[str, Any]]:
    """The first ``n`` records of ``folder``'s first split with paraphrases, preferring sources of
    at most ``max_chars`` characters."""
    shards = list_shards(folder, "default").get("default", {})
    picked: list[dict[str, Any]] = []
    long: list[dict[str, Any]] = []
    for path in next(iter(shards.values()), []):  # the first split is enough
        for _key, record in sources.iter_records(path, batch_size=256):
            if record["paraphrases"]:
                (picked if len(record["text"]) <= max_chars else long).append(record)
                if len(picked) >= n:
                    return picked
    return (picked + long)[:n]


def _example_table(record: Mapping[str, Any], shown: int) -> list[str]:
    paras = record["paraphrases"]
    foci = any(p.get("focus") for p in paras)  # the release has none: no empty column
    lines = [
        "| focus | paraphrase | perplexity |" if foci else "| paraphrase | perplexity |",
        "|---|---|---:|" if foci else "|---|---:|",
    ]
    for p in paras[:shown]:
        focus = (code(p["focus"]) if p.get("focus") else "–") + " | " if foci else ""
        ppl = "–" if p.get("perplexity") is None else f"{p['perplexity']:.1f}"
        lines.append(f"| {focus}{md(p['para_text'])} | {ppl} |")
    if len(paras) > shown:
        lines.append(f"| {'| ' if foci else ''}*… and {len(paras) - shown} more* | |")
    return lines


def examples_text(records: Sequence[Mapping[str, Any]], shown: int = 5) -> str:
    """The card's examples: each source and a table of its first ``shown`` paraphrases."""
    if not records:
        return "No record of this folder has a paraphrase."
    blocks = [
        "\n".join([f"**{i}.** {md(record['text'])}", "", *_example_table(record, shown)])
        for i, record in enumerate(records, 1)
    ]
    return "\n\n".join(blocks)


def evaluation_text(evaluation: Mapping[str, Any] | None) -> str:
    """The Table-2 row (metrics on the paper's ×100 scale) and its signatures, or how to get it."""
    if not evaluation:
        return "Not evaluated yet: `paraamr evaluate DIR --write-card` adds Table 2's row of the paper here."
    row = evaluation["row"]
    head = "| " + " | ".join(md(k) for k in row) + " |"
    rule = "|" + "---:|" * len(row)
    values = "| " + " | ".join(f"{v:.2f}" if isinstance(v, float) else md(v) for v in row.values()) + " |"
    sigs = evaluation.get("signatures") or {}
    sig_lines = [
        f"- {code(s)}" if isinstance(sigs, list) else f"- {md(k)}: {code(s)}"
        for k, s in (enumerate(sigs) if isinstance(sigs, list) else sigs.items())
    ]
    note = (
        evaluation.get("note")
        or "Computed with `paraamr evaluate` (scores ×100, as in Table 2 of the paper)."
    )
    return "\n".join(
        [note, "", head, rule, values, *(["", "Signatures:", "", *sig_lines] if sig_lines else [])]
    )


def stats_text(stats: Mapping[str, Any]) -> str:
    """Table 1's columns as one row, then the perplexity quantiles as one row."""
    ppl = stats["perplexity"]
    names = [k for k in ("min", "p5", "p25", "p50", "p75", "p95", "max", "mean") if k in ppl]
    filtered = f"; perplexity <= {stats['max_perplexity']:g}" if stats.get("max_perplexity") else ""
    return "\n".join(
        [
            "Computed with `paraamr stats` over the shards "
            f"(tokens: {stats.get('tokens', 'words')}{filtered}); the first three columns are Table 1's.",
            "",
            "| instances | paraphrases per source | paraphrase length (tokens) | pairs "
            "| source length (tokens) | sources without paraphrases |",
            "|---:|---:|---:|---:|---:|---:|",
            f"| {stats['instances']:,} | {cell(stats['avg_paraphrases'])} "
            f"| {cell(stats['avg_paraphrase_tokens'])} | {stats['pairs']:,} "
            f"| {cell(stats['avg_source_tokens'])} | {stats['sources_without_paraphrases']:,} |",
            "",
            "| | " + " | ".join(names) + " | without one |",
            "|---|" + "---:|" * (len(names) + 1),
            "| perplexity | " + " | ".join(cell(ppl[k], 1) for k in names) + f" | {ppl['missing']:,} |",
        ]
    )


def splits_text(folder: Path | None, present: Mapping[str, Sequence[str]], expected: Sequence[str]) -> str:
    """The configs and splits with rows, and those without (left out of ``configs:``)."""
    parts = [
        f"`{config}`: " + ", ".join(f"`{s}`" for s in present[config])
        for config in CONFIGS
        if present.get(config)
    ]
    text = ("Splits: " + "; ".join(parts) + ".") if parts else "This folder holds no records."
    if folder is None:
        return text
    known = {split for splits in layout_info(folder).values() for split in splits}
    names = list(dict.fromkeys([*expected, *sorted(known)]))
    empty = [f"`{c}`/`{s}`" for c in CONFIGS for s in names if s not in (present.get(c) or [])]
    if empty:
        text += (
            " Empty, so left out of the card's `configs:` (`datasets` cannot load a split without rows): "
            + ", ".join(empty)
            + "."
        )
    return text


def license_texts(license: str | None, note: str | None) -> tuple[str, str]:
    """``(YAML value, sentence)`` of a card's license (``None``: unknown).

    >>> license_texts("mit", None)
    ('mit', '`mit`')
    """
    if license is None:
        return "unknown", (
            "unknown: no license was given when this folder was written (`--license`); the "
            "terms of the source texts and of the models used apply. The original ParaAMR "
            "release is licensed CC BY-NC 4.0."
        )
    if license == "other":
        return "other", f"other: {note or 'terms not stated in this card; ask the curators.'}"
    return license, f"`{license}`" + (f": {note}" if note else "")


def contents(text: str) -> str:
    """A table of contents of a card: its ``##`` and ``###`` headings (not those in code blocks),
    each a link to the anchor the Hub (and GitHub) gives it, the table itself left out.

    >>> print(contents("# T\\n## Quick Start\\n```python\\n## not a heading\\n```\\n### Bias, Risks?"))
    - [Quick Start](#quick-start)
        - [Bias, Risks?](#bias-risks)
    """
    lines, fence = [], None
    for line in text.split("\n---\n", 1)[-1].splitlines():
        run = re.match(r"^(`{3,})", line)
        if run and fence is None:
            fence = run.group(1)
        elif fence is not None and line.strip().startswith(fence) and not line.strip().strip("`"):
            fence = None
        heading = re.match(r"^(#{2,3}) (.+?)\s*$", line) if fence is None else None
        if heading and heading.group(2) != "Table of Contents":
            indent = "    " * (len(heading.group(1)) - 2)  # 4 spaces nest in every Markdown
            anchor = re.sub(r"[^\w\- ]", "", heading.group(2).strip().lower()).replace(" ", "-")
            lines.append(f"{indent}- [{heading.group(2)}](#{anchor})")
    return "\n".join(lines)


def _cut_values(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return cut(value, limit)
    if isinstance(value, Mapping):
        return {k: _cut_values(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_values(v, limit) for v in value]
    return value


def _json_block(row: Mapping[str, Any], limit: int) -> str:
    text = json.dumps(_cut_values(row, limit), indent=2, ensure_ascii=False)
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", text)), default=0))
    return f"{fence}json\n{text}\n{fence}"


def example_json(records: Sequence[Mapping[str, Any]], *, paraphrases: int = 2, limit: int = 160) -> str:
    """The first example record as JSON rows of ``default`` (its first ``paraphrases`` paraphrases)
    and of ``pairs``, strings cut to ``limit`` characters."""
    record = next((r for r in records if r["paraphrases"]), None)
    if record is None:
        return "No record of this folder has a paraphrase."
    fields = [f.name for f in PARAPHRASE_TYPE]
    paras = [{name: p.get(name) for name in fields} for p in record["paraphrases"]]
    row = {name: record.get(name) for name in DEFAULT_SCHEMA.names} | {"paraphrases": paras[:paraphrases]}
    pair = next(to_pairs({**record, "paraphrases": paras}))
    shown = f"the first {paraphrases} of its" if len(paras) > paraphrases else "its"
    shown += f" {len(paras)} paraphrase" + ("s" if len(paras) > 1 else "")
    return "\n".join(
        [
            f"The first record as a row of `default` ({shown}; long texts cut, marked …):",
            "",
            _json_block(row, limit),
            "",
            "and its first row in `pairs`:",
            "",
            _json_block(pair, limit),
        ]
    )


def shard_names(
    folder: str | os.PathLike, present: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, list[str]]]:
    """``{config: {split: [shard path in the repository]}}`` of the splits with rows."""
    shards = list_shards(folder)
    return {
        config: {split: [f"data/{config}/{Path(p).name}" for p in shards[config][split]] for split in splits}
        for config, splits in present.items()
        if config in shards
    }


def _dict_text(values: Mapping[str, str]) -> str:
    """A dict literal on one line, or one item a line when it has several."""
    if len(values) < 2:
        return json.dumps(values)
    return "{\n" + "".join(f"    {json.dumps(k)}: {json.dumps(v)},\n" for k, v in values.items()) + "}"


def _python(*lines: str) -> list[str]:
    return ["```python", *lines, "```"]


def in_python(text: str) -> str:
    """``text`` as it goes between the double quotes of a Python string in a snippet.

    >>> print(in_python('my "ds"'))
    my \\"ds\\"
    """
    return json.dumps(text, ensure_ascii=False)[1:-1]


def push_command(name: str) -> str:
    """The command that publishes the folder ``name``, quoted for a shell.

    >>> push_command("my ds")
    "paraamr push ORG/NAME 'my ds'"
    """
    return f"paraamr push ORG/NAME {shlex.quote(name)}"


def libraries_text(
    repo_id: str | None, name: str, split: str, shards: Mapping[str, Mapping[str, Sequence[str]]] | None
) -> str:
    """Usage with Polars, and with pandas and ``hf_hub_download`` given ``shards``, by Hub path or
    path in the folder ``name``."""
    prefix = f"hf://datasets/{repo_id}/" if repo_id else f"{in_python(name)}/"
    where = "" if repo_id else f" (run in the folder above {code(name)})"
    pairs = shards is None or split in shards.get("pairs", {})
    # `*`, not data_files' `?????`: Polars takes `?` in an hf:// path as a letter of the name (a split's
    # name has no `-`, SPLIT_RULE, so `{split}-*` is its shards only)
    parts = [
        "### Polars",
        "",
        f"Every shard of a split{where}:",
        "",
        *_python(
            "import polars as pl",
            "",
            f'df = pl.read_parquet("{prefix}{DATA}/{"pairs" if pairs else "default"}/{split}-*.parquet")',
            *(['df_110 = df.filter(pl.col("perplexity") <= 110)'] if pairs else []),
        ),
    ]
    if not shards or split not in shards.get("default", {}) or split not in shards.get("pairs", {}):
        return "\n".join(parts)
    first = {s: paths[0] for s, paths in shards["default"].items()}
    several = [f"`{s}` has {len(p)}" for s, p in shards["default"].items() if len(p) > 1]
    more = f"; {', '.join(several)}: Polars and `datasets` read them all" if several else ""
    pandas = [
        "### pandas",
        "",
        f"The first shard of each split, as the Hub shows it{where}{more}:",
        "",
        *_python(
            "import pandas as pd",
            "",
            f"splits = {_dict_text(first)}",
            f'df = pd.read_parquet("{prefix}" + splits["{split}"])',
        ),
        "",
    ]
    published = "" if repo_id else f"Once published ({code(push_command(name))}), one"
    hub = [
        "",
        "### One shard with huggingface_hub",
        "",
        f"{published or 'One'} shard downloads into huggingface_hub's cache:",
        "",
        *_python(
            "import pyarrow.parquet as pq",
            "from huggingface_hub import hf_hub_download",
            "",
            f'path = hf_hub_download("{repo_id or "ORG/NAME"}", "{shards["pairs"][split][0]}", '
            'repo_type="dataset")',
            "table = pq.read_table(path)",
        ),
    ]
    return "\n".join([*pandas, *parts, *hub])


def threshold_splits(
    folder: str | os.PathLike, splits: Sequence[str], thresholds: Sequence[float]
) -> dict[float, list[str]]:
    """``{T: the splits of pairs with a row of perplexity <= T}`` for each distinct threshold."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    for t in thresholds:
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not t >= 0:
            raise ValueError(f"a threshold of a filtered config must be a number >= 0, got {t!r}")
    shards = list_shards(folder, "pairs").get("pairs", {})
    perplexity = {
        split: [pq.read_table(p, columns=["perplexity"]).column(0) for p in shards.get(split, [])]
        for split in splits
    }
    return {
        float(t): [
            split
            for split, columns in perplexity.items()
            if any(pc.any(pc.less_equal(c, float(t))).as_py() for c in columns)
        ]
        for t in dict.fromkeys(thresholds)
    }
