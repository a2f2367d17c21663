"""The Hub dataset card (README.md) of a ParaAMR folder, rendered from the template in the package.

The template is ``paraamr/data/dataset_card.md`` (the repository's ``dataset_card.md`` links to
it), a Jinja template in the sections of the Hugging Face dataset card, rendered with
:class:`huggingface_hub.DatasetCard`. :func:`write_card` writes a folder's card from its shards
(configs, sizes, three example records, the statistics and their plots under ``plots/``), its
``summary.json`` settings (only those that define the records; models by name and content hash,
never a local path) and, once ``paraamr evaluate DIR --write-card`` ran, its Table-2 row
(:func:`update_card_metrics`).

>>> text = render_card(summary=None, stats=None, license="cc-by-nc-4.0", splits=["train"])
>>> from huggingface_hub import DatasetCard
>>> data = DatasetCard(text).data
>>> data.license, [c["config_name"] for c in data.configs], data.configs[1]["data_files"][0]["path"]
('cc-by-nc-4.0', ['default', 'pairs'], 'data/pairs/train-?????-of-?????.parquet')
>>> "{{" in text or "More Information Needed" in text
False
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from paraamr import __version__, sources
from paraamr.builder import folder as folder_layout

__all__ = [
    "CONFIGS",
    "EVALUATION",
    "dataset_info",
    "examples",
    "expected_splits",
    "record_settings",
    "render_card",
    "size_category",
    "template_text",
    "update_card_metrics",
    "write_card",
]

CONFIGS = ("default", "pairs")
TEMPLATE = "dataset_card.md"
#: The Table-2 row written by ``paraamr evaluate DIR --write-card``, kept beside the card.
EVALUATION = folder_layout.EVALUATION
_EVAL_MARKS = ("<!-- paraamr:evaluation -->", "<!-- /paraamr:evaluation -->")
_SIZES = [
    (10**3, "n<1K"),
    (10**4, "1K<n<10K"),
    (10**5, "10K<n<100K"),
    (10**6, "100K<n<1M"),
    (10**7, "1M<n<10M"),
    (10**8, "10M<n<100M"),
    (10**9, "100M<n<1B"),
]
#: Settings that define the records, in the order the card lists them (the rest: summary.json).
_MODELS = {
    "parser_model": ("parser", "AMR parser"),
    "realizer_model": ("realizer", "AMR-to-text realizer"),
    "generator_model": ("realizer", "AMR-to-text realizer"),
    "lm_model": ("lm", "perplexity LM"),
    "similarity_model": ("embedder", "similarity embedder"),
    "quality_model": ("quality", "quality model"),
}
_RECORD_SETTINGS = (
    "max_perplexity",
    "max_relative_perplexity",
    "min_similarity",
    "min_quality",
    "foci",
    "heuristic",
    "mod_as_domain",
    "max_chars",
    "num_beams",
    "dtype",
    "seed",
    "input",
    "amr_input",
    "dataset",
    "dataset_config",
    "dataset_split",
    "text_column",
    "split",
    "validation_fraction",
    "test_fraction",
)
_INPUTS = ("input", "amr_input")


def template_text() -> str:
    """The card template shipped in the package."""
    return files("paraamr").joinpath("data", TEMPLATE).read_text(encoding="utf-8")


def size_category(instances: int) -> str:
    """The Hub's ``size_categories`` value for a number of rows.

    >>> size_category(177410), size_category(15543606)
    ('100K<n<1M', '10M<n<100M')
    """
    for bound, name in _SIZES:
        if instances < bound:
            return name
    return "1B<n<10B"


def _md(text: Any) -> str:
    """``text`` safe inside a Markdown table cell or line: one line, no markup, no HTML.

    >>> _md("a | <b> *c*\\n d")
    'a \\\\| &lt;b&gt; \\\\*c\\\\* d'
    """
    text = " ".join(str(text).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|#])", r"\\\1", text)


def _code(text: Any) -> str:
    """``text`` as a Markdown code span (no escapes work inside one: backticks become quotes).

    >>> _code("a_b`c")
    "`a_b'c`"
    """
    return "`" + " ".join(str(text).split()).replace("`", "'") + "`"


def _number(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _flat(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of a summary: its ``settings`` mapping over its top level (old summaries nest
    the input names at the top)."""
    flat = {k: v for k, v in summary.items() if not isinstance(v, Mapping)}
    flat.update(summary.get("settings") or {})
    return flat


def _content_hash(path: Path) -> str:
    """sha256 of a file, or of a folder's files (relative names and contents, in name order).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "w.bin").write_bytes(b"x")
    >>> _content_hash(d) == _content_hash(d) and len(_content_hash(d))
    64
    """
    digest = hashlib.sha256()
    paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for p in paths:
        digest.update(str(p.relative_to(path) if p != path else p.name).encode() + b"\0")
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _model(value: Any, kind: str, base: Path | None) -> str:
    """A model as the card names it: registry name or Hub id as given (with the release's
    published md5 where the catalog has one); a local folder or file by its name and content hash."""
    from paraamr.models import catalog

    if not isinstance(value, str):
        return _number(value)
    local = Path(value) if os.path.isabs(value) else (base / value if base is not None else Path(value))
    if local.exists():
        return f"{_code(local.resolve().name)} (local, sha256 `{_content_hash(local)[:16]}`)"
    if os.path.isabs(value) or value.startswith(("./", "../", "~")):
        return f"{_code(Path(value).name)} (local, no longer on disk)"
    release = getattr(catalog, "AMRLIB_MODELS", {}).get(value)
    if release is not None and getattr(release, "md5", None):
        return f"{_code(value)} (amrlib release v{release.version}, md5 `{release.md5}`)"
    return _code(value)


def record_settings(
    summary: Mapping[str, Any], base: str | os.PathLike | None = None
) -> list[tuple[str, str]]:
    """``(setting, value)`` rows of the settings that define the records: models by name (local
    ones by name and content hash, found relative to ``base``), thresholds, foci, seed, inputs by
    file name. Never a local path.

    >>> record_settings({"settings": {"lm_model": "gpt2", "max_perplexity": 120.0, "input": "/home/me/in.txt",
    ...     "batch_size": 8}})
    [('perplexity LM', '`gpt2`'), ('max_perplexity', '120'), ('input', '`in.txt`')]
    """
    flat = _flat(summary)
    base = Path(base) if base is not None else None
    rows = []
    for key, (kind, label) in _MODELS.items():
        if flat.get(key):
            rows.append((label, _model(flat[key], kind, base)))
    for key in _RECORD_SETTINGS:
        if key not in flat or (flat[key] is None and key not in ("max_perplexity",)):
            continue
        value = flat[key]
        if key in _INPUTS and isinstance(value, str):
            rows.append((key, "standard input" if value == "-" else _code(Path(value).name)))
        elif isinstance(value, str):
            rows.append((key, _code(value)))
        else:
            rows.append((key, _number(value)))
    return rows


def _method(flat: Mapping[str, Any], base: Path | None) -> str:
    get = flat.get

    def model(key: str) -> str:
        name = get(key) or (get("generator_model") if key == "realizer_model" else None)
        return _model(name, _MODELS[key][0], base) if name else "the default model"

    parts = []
    if get("amr_input"):
        parts.append("AMR graphs were read from the input (no parser was run).")
    else:
        parts.append(f"Source sentences were parsed into AMR graphs with {model('parser_model')}.")
    foci = get("foci")
    foci_text = "every other concept" if foci in (None, "all") else f"up to {foci} other concepts"
    parts.append(
        f"Each graph was re-rooted at {foci_text}, incoming edges inverted, and each re-rooted graph "
        f"was realized as a sentence with {model('realizer_model')}; the perplexity of each "
        f"paraphrase was computed with {model('lm_model')}."
    )
    threshold = get("max_perplexity")
    parts.append(
        f"Paraphrases with perplexity above {_number(threshold)} were dropped."
        if threshold is not None
        else "No perplexity threshold was applied."
    )
    for key, kept, what in (
        ("similarity_model", "min_similarity", "Similarity to the source"),
        ("quality_model", "min_quality", "Paraphrase quality"),
    ):
        if get(key):
            cut = get(kept)
            dropped = f"; paraphrases below {_number(cut)} were dropped." if cut is not None else "."
            parts.append(f"{what} was scored with {model(key)}{dropped}")
    return (
        " ".join(parts) + " The settings that define the records (the rest of the run is in `summary.json`):"
    )


def expected_splits(summary: Mapping[str, Any] | None) -> list[str]:
    """The splits a run's settings ask for (``split``, then ``validation``/``test`` when their
    fraction is above 0).

    >>> expected_splits({"settings": {"split": "train", "validation_fraction": 0.1, "test_fraction": 0.0}})
    ['train', 'validation']
    """
    if not summary:
        return []
    flat = _flat(summary)
    names = [flat.get("split") or "train"]
    names += ["validation"] if (flat.get("validation_fraction") or 0) > 0 else []
    names += ["test"] if (flat.get("test_fraction") or 0) > 0 else []
    return names


def _license(license: str | None, note: str | None) -> tuple[str, str]:
    """``(YAML value, sentence)``."""
    if license is None:
        return "unknown", (
            "unknown: no license was given when this folder was written (`--license`); the "
            "terms of the source texts and of the models used apply. The original ParaAMR "
            "release is licensed CC BY-NC 4.0."
        )
    if license == "other":
        return "other", f"other: {note or 'terms not stated in this card; ask the curators.'}"
    return license, f"`{license}`" + (f": {note}" if note else "")


def dataset_info(folder: str | os.PathLike) -> list[dict[str, Any]]:
    """The card's ``dataset_info``: features, and rows and bytes per config and split of ``folder``
    as ``datasets`` computes them (``num_bytes``: Arrow bytes; ``download_size``: Parquet files);
    splits without rows are left out.

    Besides telling readers the sizes, it keys datasets' cache: a local folder whose card has
    ``configs:`` is cached under a hash of the card's configs and ``dataset_info`` alone, so
    without these figures ``load_dataset(folder)`` kept serving an earlier run's rows after a
    new run wrote the same folder.
    """
    from datasets import Features

    from paraamr.builder.folder import layout_info
    from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA

    schemas = {"default": DEFAULT_SCHEMA, "pairs": PAIRS_SCHEMA}
    infos = []
    layout = layout_info(folder)
    for config in CONFIGS:
        splits = layout.get(config, {})
        entries = [
            {"name": split, "num_bytes": s["num_bytes"], "num_examples": s["num_examples"]}
            for split, s in splits.items()
            if s["num_examples"]
        ]
        if entries:
            infos.append(
                {
                    "config_name": config,
                    "features": Features.from_arrow_schema(schemas[config])._to_yaml_list(),
                    "splits": entries,
                    "download_size": sum(s["download_size"] for s in splits.values()),
                    "dataset_size": sum(e["num_bytes"] for e in entries),
                }
            )
    return infos


def examples(folder: str | os.PathLike, n: int = 3, *, max_chars: int = 200) -> list[dict[str, Any]]:
    """The first ``n`` records of ``folder`` (first split) that have paraphrases, preferring sources
    of at most ``max_chars`` characters; reads only as far as it must."""
    from paraamr.builder.folder import list_shards

    shards = list_shards(folder, "default").get("default", {})
    picked: list[dict[str, Any]] = []
    long: list[dict[str, Any]] = []
    for paths in shards.values():
        for path in paths:
            for _key, record in sources.iter_records(path, batch_size=256):
                if record["paraphrases"]:
                    (picked if len(record["text"]) <= max_chars else long).append(record)
                    if len(picked) >= n:
                        return picked
        break  # the first split is enough
    return (picked + long)[:n]


def _examples_text(records: Sequence[Mapping[str, Any]], shown: int = 5) -> str:
    if not records:
        return "No record of this folder has a paraphrase yet."
    blocks = []
    for i, record in enumerate(records, 1):
        paras = record["paraphrases"]
        foci = any(p.get("focus") for p in paras)  # the release has none: no empty column
        lines = [
            f"**{i}.** {_md(record['text'])}",
            "",
            "| focus | paraphrase | perplexity |" if foci else "| paraphrase | perplexity |",
            "|---|---|---:|" if foci else "|---|---:|",
        ]
        for p in paras[:shown]:
            focus = (_code(p["focus"]) if p.get("focus") else "–") + " | " if foci else ""
            ppl = "–" if p.get("perplexity") is None else f"{p['perplexity']:.1f}"
            lines.append(f"| {focus}{_md(p['para_text'])} | {ppl} |")
        if len(paras) > shown:
            lines.append(f"| {'| ' if foci else ''}*… and {len(paras) - shown} more* | |")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _evaluation_text(evaluation: Mapping[str, Any] | None) -> str:
    """The Table-2 row (metrics on the paper's ×100 scale) and its signatures, or how to get it."""
    if not evaluation:
        return "Not evaluated yet: `paraamr evaluate DIR --write-card` adds Table 2's row of the paper here."
    row = evaluation["row"]
    head = "| " + " | ".join(_md(k) for k in row) + " |"
    rule = "|" + "---:|" * len(row)
    values = "| " + " | ".join(f"{v:.2f}" if isinstance(v, float) else _md(v) for v in row.values()) + " |"
    sigs = evaluation.get("signatures") or {}
    sig_lines = [
        f"- {_code(s)}" if isinstance(sigs, list) else f"- {_md(k)}: {_code(s)}"
        for k, s in (enumerate(sigs) if isinstance(sigs, list) else sigs.items())
    ]
    note = (
        evaluation.get("note")
        or "Computed with `paraamr evaluate` (scores ×100, as in Table 2 of the paper)."
    )
    return "\n".join(
        [note, "", head, rule, values, *(["", "Signatures:", "", *sig_lines] if sig_lines else [])]
    )


def _stats_text(stats: Mapping[str, Any]) -> str:
    """Table 1's columns as one row, then the perplexity quantiles as one row.

    >>> print(_stats_text({"instances": 2, "pairs": 3, "avg_paraphrases": 1.5, "avg_paraphrase_tokens": 4.0,
    ...     "avg_source_tokens": 5.0, "sources_without_paraphrases": 0, "tokens": "words",
    ...     "perplexity": {"min": 1.0, "p50": 2.0, "max": 3.0, "mean": 2.0, "missing": 0}}).splitlines()[4])
    | 2 | 1.50 | 4.00 | 3 | 5.00 | 0 |
    """
    ppl = stats["perplexity"]
    names = [k for k in ("min", "p5", "p25", "p50", "p75", "p95", "max", "mean") if k in ppl]
    cell = lambda v: "n/a" if v is None else f"{v:.1f}"  # noqa: E731
    filtered = f"; perplexity <= {stats['max_perplexity']:g}" if stats.get("max_perplexity") else ""
    return "\n".join(
        [
            "Computed with `paraamr stats` over the shards "
            f"(tokens: {stats.get('tokens', 'words')}{filtered}); the first three columns are Table 1's.",
            "",
            "| instances | paraphrases per source | paraphrase length (tokens) | pairs "
            "| source length (tokens) | sources without paraphrases |",
            "|---:|---:|---:|---:|---:|---:|",
            f"| {stats['instances']:,} | {stats['avg_paraphrases']:.2f} "
            f"| {stats['avg_paraphrase_tokens']:.2f} | {stats['pairs']:,} "
            f"| {stats['avg_source_tokens']:.2f} | {stats['sources_without_paraphrases']:,} |",
            "",
            "| perplexity | " + " | ".join(names) + " | without |",
            "|---|" + "---:|" * (len(names) + 1),
            "| | " + " | ".join(cell(ppl[k]) for k in names) + f" | {ppl['missing']:,} |",
        ]
    )


def _splits_text(folder: Path | None, present: Mapping[str, Sequence[str]], expected: Sequence[str]) -> str:
    """The configs and splits with rows, and those without (left out of ``configs:``)."""
    from paraamr.builder.folder import layout_info

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


def render_card(
    *,
    summary: Mapping[str, Any] | None,
    stats: Mapping[str, Any] | None,
    license: str | None,
    splits: Sequence[str] = ("train",),
    pretty_name: str = "ParaAMR",
    license_note: str | None = None,
    repo_id: str | None = None,
    folder: str | os.PathLike | None = None,
    example_records: Sequence[Mapping[str, Any]] | None = None,
    evaluation: Mapping[str, Any] | None = None,
    plots: Sequence[str] = (),
    shard_size: str = "500MB",
) -> str:
    """The README.md text of a ParaAMR dataset folder.

    ``summary``: the run's ``summary.json`` (``settings`` and ``counts``); ``None``: the records
    are the ParaAMR release's (``paraamr convert``). ``stats``: :func:`paraamr.stats.compute_stats`
    of the folder (``None``: the card says how to compute them). ``license``: a Hub license id;
    ``None`` gives ``unknown`` and a sentence, ``"other"`` uses ``license_note``. ``folder``: the
    folder whose shards the card describes (configs, sizes, empty splits); without it, ``splits``
    names the splits. ``repo_id``: the Hub repository the load snippets name. ``plots``: image
    paths relative to the folder, shown under Statistics. ``evaluation``: ``{"row": {metric:
    value}, "signatures": ...}`` (:func:`update_card_metrics`).
    """
    from huggingface_hub import DatasetCard, DatasetCardData

    from paraamr.builder.folder import data_files

    root = Path(folder) if folder is not None else None
    infos = dataset_info(root) if root is not None else None
    if infos is not None:
        present = {info["config_name"]: [e["name"] for e in info["splits"]] for info in infos}
    else:
        if not splits:
            raise ValueError("render_card: splits must name at least one split")
        present = {config: list(splits) for config in CONFIGS}
    first_split = (present.get("default") or [*splits, "train"])[0]
    license_id, license_text = _license(license, license_note)
    configs = [
        {
            "config_name": config,
            "data_files": [{"split": s, "path": data_files(config, s)} for s in present[config]],
            **({"default": True} if config == "default" else {}),
        }
        for config in CONFIGS
        if present.get(config)
    ]
    card_data = DatasetCardData(
        language=["en"],
        license=license_id,
        pretty_name=pretty_name,
        annotations_creators=["machine-generated"],
        language_creators=["found", "machine-generated"],
        multilinguality=["monolingual"],
        size_categories=[size_category(stats["instances"])] if stats else None,
        source_datasets=["original"] if summary is not None else ["extended|other-paranmt-50m"],
        task_categories=["text-generation", "sentence-similarity"],
        task_ids=[],
        tags=["paraphrase", "amr", "paraphrase-generation", "syntactic-diversity"],
        configs=configs,
        **({"dataset_info": infos} if infos else {}),
    )
    if stats:
        size_text = f"{stats['instances']:,} source sentences, {stats['pairs']:,} paraphrases"
        stats_text = _stats_text(stats)
        for plot in plots:
            title = Path(plot).stem.replace("_", " ")
            stats_text += f"\n\n![{title}]({plot})"
    else:
        size_text = "see Statistics"
        stats_text = "Not computed for this card; run `paraamr stats` on this folder."
    if summary is None:
        origin = (
            "The records are the ParaAMR release's, converted to this format; every released field "
            "is kept and the fields the release lacks are null."
        )
        curated_by = "the ParaAMR authors (Huang et al., 2023): the release"
        method_text = (
            "The source sentences come from ParaNMT-50M. The authors parsed each into an AMR graph, "
            "re-rooted the graph at its other concepts and realized each re-rooted graph with a "
            "T5-based AMR-to-text model; the perplexity of each paraphrase was computed with GPT-2. "
            "The released subset keeps paraphrases above perplexity 120 as well, so users apply "
            "their own threshold."
        )
        settings_table = (
            f"Converted from {sources.RELEASE_HOME} (`ParaAMR_small.zip`) with `paraamr convert`."
        )
        producers = (
            "The source sentences are those of ParaNMT-50M (Wieting and Gimpel, 2018): English "
            "sentences of the CzEng corpus (subtitles, fiction, web text and more); the paraphrases "
            "were generated by the ParaAMR authors' models."
        )
        more = "Converted from the ParaAMR release with `paraamr convert`."
        what = "paraphrases of the ParaAMR release (Huang et al., ACL 2023), converted with paraamr"
    else:
        flat = _flat(summary)
        origin = "The records were generated for this folder with `paraamr generate`."
        curated_by = f"generated with paraamr {__version__}"
        method_text = _method(flat, root)
        rows = record_settings(summary, root)
        settings_table = "\n".join(["| setting | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)])
        producers = (
            "The source sentences are those of the run's input, written by their authors; the "
            "paraphrases, graphs and scores are outputs of the models named above."
        )
        counts = summary.get("counts") or {}
        if not {"inputs", "records", "failures"} <= set(counts):
            more = "Failed inputs are listed in `failures/*.jsonl` (id, text, stage, reason). "
        elif counts["failures"]:
            more = (
                f"Of {counts['inputs']:,} input rows, {counts['records']:,} became records and "
                f"{counts['failures']:,} failures, listed in `failures/*.jsonl` (id, text, stage, reason). "
            )
        else:
            more = f"All {counts['inputs']:,} input rows became records (no failures). "
        more += "Every setting, count and timing of the run is in `summary.json`."
        what = (
            "syntactically diverse paraphrases generated by AMR back-translation "
            "(the ParaAMR method, Huang et al., ACL 2023)"
        )
    if stats:
        summary_text = (
            f"{stats['instances']:,} English source sentences with {stats['pairs']:,} {what}: "
            f"{stats['avg_paraphrases']:.2f} paraphrases per source on average, each with "
            + (
                "its GPT-2 perplexity (the release has no foci or graphs)."
                if summary is None
                else "the AMR focus it was generated from and its language-model perplexity."
            )
        )
    else:
        summary_text = (
            f"English source sentences with {what}, each paraphrase with its AMR focus and perplexity."
        )
    summary_text += " " + _splits_text(root, present, expected_splits(summary))
    if repo_id:
        repo_hint, load_note = repo_id, f"This dataset is published on the Hub as `{repo_id}`."
    else:
        name = root.name if root is not None else "paraamr"
        repo_hint = name
        load_note = (
            f'Loads from the folder itself (`load_dataset("{name}")` in its parent folder). Once published '
            f"(`paraamr push ORG/NAME {name}`), load it by its Hub id instead."
        )
    records = list(example_records) if example_records is not None else (examples(root) if root else [])
    card = DatasetCard.from_template(
        card_data,
        template_str=template_text(),
        pretty_name=pretty_name,
        summary_text=summary_text,
        repo_hint=repo_hint,
        load_note=load_note,
        first_split=first_split,
        examples_text=_examples_text(records),
        stats_text=stats_text,
        evaluation_text=_evaluation_text(evaluation),
        origin=origin,
        curated_by=curated_by,
        license_text=license_text,
        size_text=size_text,
        release_home=sources.RELEASE_HOME,
        version=__version__,
        shard_size=shard_size,
        method_text=method_text,
        settings_table=settings_table,
        source_producers=producers,
        citation=sources.CITATION.strip(),
        more_information=more,
        card_authors=f"Written by paraamr {__version__} from this folder's shards and settings.",
        card_contact=(
            "The maintainers of the repository hosting this dataset; for the method, the ParaAMR authors."
        ),
    )
    return str(card)


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_card(
    folder: str | os.PathLike,
    *,
    summary: Mapping[str, Any] | None,
    license: str | None,
    repo_id: str | None = None,
    license_note: str | None = None,
    max_shard_size: str | int = "500MB",
) -> Path:
    """Compute the statistics of ``folder``'s shards (plots into ``plots/``) and write its card
    (``README.md``) atomically; an ``evaluation.json`` beside it adds the Table-2 row."""
    from paraamr.builder.folder import CARD, PLOTS
    from paraamr.stats import compute_stats

    root = Path(folder)
    stats = compute_stats(root, plot_dir=root / PLOTS, overwrite=True)
    plots = [str(Path(p).relative_to(root)) for p in stats.pop("plots", [])]
    evaluation_path = root / EVALUATION
    evaluation = (
        json.loads(evaluation_path.read_text(encoding="utf-8")) if evaluation_path.is_file() else None
    )
    text = render_card(
        summary=summary,
        stats=stats,
        license=license,
        license_note=license_note,
        repo_id=repo_id,
        folder=root,
        evaluation=evaluation,
        plots=plots,
        shard_size=str(max_shard_size) if isinstance(max_shard_size, str) else f"{max_shard_size:,} bytes",
    )
    _atomic_write(root / CARD, text)
    return root / CARD


def update_card_metrics(
    folder: str | os.PathLike,
    row: Mapping[str, float],
    signatures: Mapping[str, str] | Sequence[str],
    *,
    note: str | None = None,
) -> Path:
    """Put the Table-2 row (``{metric: value}`` on the paper's ×100 scale, in the table's column
    order) and its signatures into ``folder``'s card, under Evaluation; saved in ``evaluation.json``
    so that a card written again keeps it. Returns the card's path.

    A card without the Evaluation markers (not written by paraamr) raises
    :class:`~paraamr.errors.InputError`.
    """
    from paraamr.builder.folder import CARD
    from paraamr.errors import InputError

    root = Path(folder)
    card_path = root / CARD
    text = card_path.read_text(encoding="utf-8") if card_path.is_file() else ""
    start, end = _EVAL_MARKS
    if start not in text or end not in text:
        raise InputError(f"{card_path}: not a card written by paraamr (no Evaluation section to update)")
    evaluation = {
        "row": dict(row),
        "signatures": dict(signatures) if isinstance(signatures, Mapping) else list(signatures),
        **({"note": note} if note else {}),
    }
    _atomic_write(root / EVALUATION, json.dumps(evaluation, indent=1, ensure_ascii=False))
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    _atomic_write(card_path, f"{head}{start}\n{_evaluation_text(evaluation)}\n{end}{tail}")
    return card_path
