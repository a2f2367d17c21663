"""The Hub dataset card (README.md) of a ParaAMR folder, rendered from the template in the package.

The template is ``paraamr/data/dataset_card.md`` (the repository's ``dataset_card.md`` links to
it), a Jinja template in the sections of the Hugging Face dataset card; it is rendered with
:class:`huggingface_hub.DatasetCard`. The generator calls :func:`render_card` for each output
folder, ``paraamr convert`` for each folder it writes.

>>> text = render_card(summary=None, stats=None, license="cc-by-nc-4.0", splits=["train"])
>>> from huggingface_hub import DatasetCard
>>> data = DatasetCard(text).data
>>> data.license, [c["config_name"] for c in data.configs], data.configs[1]["data_files"][0]["path"]
('cc-by-nc-4.0', ['default', 'pairs'], 'data/pairs/train-?????-of-?????.parquet')
>>> "{{" in text or "More Information Needed" in text
False
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from paraamr import __version__, sources
from paraamr.stats import format_stats

CONFIGS = ("default", "pairs")
TEMPLATE = "dataset_card.md"
_SIZES = [
    (10**3, "n<1K"),
    (10**4, "1K<n<10K"),
    (10**5, "10K<n<100K"),
    (10**6, "100K<n<1M"),
    (10**7, "1M<n<10M"),
    (10**8, "10M<n<100M"),
    (10**9, "100M<n<1B"),
]


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


def _flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested keys joined with dots; a list of mappings becomes its length.

    >>> _flatten({"a": {"b": 1}, "c": [{"x": 1}, {"x": 2}], "d": [1, 2]})
    {'a.b': 1, 'c': '2 entries', 'd': [1, 2]}
    """
    out: dict[str, Any] = {}
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            out.update(_flatten(value, f"{prefix}{key}."))
        elif isinstance(value, (list, tuple)) and any(isinstance(v, Mapping) for v in value):
            out[f"{prefix}{key}"] = f"{len(value)} entries"
        else:
            out[f"{prefix}{key}"] = value
    return out


def _table(flat: Mapping[str, Any]) -> str:
    """The settings table; an entry repeating an earlier one (same last name, same value) is left out.

    >>> print(_table({"settings.lm_model": "gpt2", "run.lm_model": "gpt2", "run.input": "x.txt"}))
    | setting | value |
    |---|---|
    | `settings.lm_model` | gpt2 |
    | `run.input` | x.txt |
    """
    seen, rows = set(), []
    for key, value in flat.items():
        name = (key.rsplit(".", 1)[-1], repr(value))
        if name not in seen:
            seen.add(name)
            rows.append(f"| `{key}` | {_value(value)} |")
    return "\n".join(["| setting | value |", "|---|---|", *rows])


def _value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(_value(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _setting(flat: Mapping[str, Any], name: str) -> Any:
    """A setting by its name, found at any depth of the summary (``settings.lm_model``, ``lm_model``)."""
    for key, value in flat.items():
        if key == name or key.endswith(f".{name}"):
            return value
    return None


def _method(flat: Mapping[str, Any]) -> str:
    get = lambda name: _setting(flat, name)  # noqa: E731
    parts = []
    source = get("input") or get("amr_input_path") or get("source")
    origin = f" from `{source}`" if isinstance(source, str) else ""
    if get("amr_input") is True:
        parts.append(f"AMR graphs were read{origin} (no parser was run).")
    else:
        parts.append(
            f"Source sentences{origin} were parsed into AMR graphs with `{_value(get('parser_model'))}`."
        )
    foci = get("foci")
    foci_text = "every other concept" if foci in (None, "all") else f"up to {foci} other concepts"
    parts.append(
        f"Each graph was re-rooted at {foci_text}, incoming edges inverted, and each re-rooted "
        f"graph was realized as a sentence with `{_value(get('generator_model'))}`."
    )
    parts.append(f"Perplexity was computed with `{_value(get('lm_model'))}`.")
    threshold = get("max_perplexity")
    parts.append(
        f"Paraphrases with perplexity above {_value(threshold)} were dropped."
        if threshold is not None
        else "No perplexity threshold was applied."
    )
    if get("similarity_model"):
        kept = get("min_similarity")
        parts.append(
            f"Similarity to the source was scored with `{get('similarity_model')}`"
            + (f"; paraphrases below {_value(kept)} were dropped." if kept is not None else ".")
        )
    if get("quality_model"):
        kept = get("min_quality")
        parts.append(
            f"Paraphrase quality was scored with `{get('quality_model')}`"
            + (f"; paraphrases below {_value(kept)} were dropped." if kept is not None else ".")
        )
    return " ".join(parts) + " The run's settings and counts:"


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
    as ``datasets`` computes them (``num_bytes``: Arrow bytes; ``download_size``: Parquet files).

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
    for config, splits in sorted(layout_info(folder).items(), key=lambda kv: CONFIGS.index(kv[0])):
        entries = [
            {"name": split, "num_bytes": s["num_bytes"], "num_examples": s["num_examples"]}
            for split, s in splits.items()
            if s["num_examples"]
        ]
        if not entries:
            continue
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
) -> str:
    """The README.md text of a ParaAMR dataset folder.

    ``summary``: the run's settings and counts, flat or nested (e.g. ``{"settings":
    GeneratorSettings.as_dict(), "counts": Stats.as_dict(), "input": "sentences.txt"}``); the
    settings named like :class:`~paraamr.builder.settings.GeneratorSettings` fields describe the
    method and everything is listed in a table. ``None``: the records are the ParaAMR release's
    (``paraamr convert``). ``stats``: :func:`paraamr.stats.compute_stats` of the folder (``None``:
    the card says how to compute them). ``license``: a Hub license id; ``None`` gives ``unknown``
    and a sentence, ``"other"`` uses ``license_note``. ``splits``: the split names of the shards,
    which the YAML ``configs:`` map to ``data/{config}/{split}-*.parquet``. ``repo_id``: the Hub
    repository named in the usage example (default ``<org>/paraamr``). ``folder``: the folder
    whose shards the card describes; its sizes go into the YAML (:func:`dataset_info`).
    """
    from huggingface_hub import DatasetCard, DatasetCardData

    from paraamr.builder.folder import data_files

    infos = dataset_info(folder) if folder is not None else None
    present = (
        {info["config_name"]: [e["name"] for e in info["splits"]] for info in infos}
        if infos is not None
        else {config: list(splits) for config in CONFIGS}
    )
    splits = present.get("default") or next(iter(present.values()), list(splits))
    if not splits:
        raise ValueError("render_card: splits must name at least one split")
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
        task_categories=["text-generation", "sentence-similarity"],
        tags=["paraphrase", "amr", "paraphrase-generation", "syntactic-diversity"],
        configs=configs,
        **({"dataset_info": infos} if infos else {}),
    )
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
        more = "This folder was converted from the ParaAMR release with `paraamr convert`."
    else:
        flat = _flatten(summary)
        origin = "The records were generated for this folder with `paraamr generate`."
        curated_by = f"generated with paraamr {__version__}"
        method_text = _method(flat)
        settings_table = _table(flat)
        source = _setting(flat, "input") or _setting(flat, "source")
        producers = (
            f"The source sentences are those of the input (`{_value(source)}`), written by their "
            "authors; the paraphrases, graphs and scores are outputs of the models named above."
            if source
            else "The source sentences are those of the run's input, written by their "
            "authors; the paraphrases, graphs and scores are outputs of the models named above."
        )
        more = f"Generated with paraamr {__version__}; the run's settings are listed under Source Data."
    if stats:
        stats_text = (
            f"Computed with `paraamr stats` (tokens: {stats.get('tokens', 'whitespace-separated words')}"
            + (f"; perplexity <= {stats['max_perplexity']:g}" if stats.get("max_perplexity") else "")
            + "):\n\n"
            + format_stats(stats)
        )
        size_text = f"{stats['instances']:,} source sentences, {stats['pairs']:,} paraphrases"
    else:
        stats_text = "Not computed for this card; run `paraamr stats` on this folder."
        size_text = "see Statistics"
    card = DatasetCard.from_template(
        card_data,
        template_str=template_text(),
        pretty_name=pretty_name,
        origin=origin,
        curated_by=curated_by,
        license_text=license_text,
        size_text=size_text,
        release_home=sources.RELEASE_HOME,
        citation=sources.CITATION.strip(),
        repo_hint=repo_id or "<org>/paraamr",
        first_split=splits[0],
        splits_text=", ".join(f"`{s}`" for s in splits),
        method_text=method_text,
        settings_table=settings_table,
        source_producers=producers,
        stats_text=stats_text,
        more_information=more,
        card_authors=f"Written by paraamr {__version__} from this folder's settings and statistics.",
        card_contact=(
            "The maintainers of the repository hosting this dataset; for the method, the ParaAMR authors."
        ),
    )
    return str(card)


def write_card(
    folder: str | os.PathLike,
    *,
    summary: Mapping[str, Any] | None,
    license: str | None,
    repo_id: str | None = None,
) -> Path:
    """Compute the statistics of ``folder``'s shards and write its card (``README.md``) atomically."""
    from paraamr.builder.folder import CARD
    from paraamr.stats import compute_stats

    root = Path(folder)
    text = render_card(
        summary=summary, stats=compute_stats(root), license=license, repo_id=repo_id, folder=root
    )
    tmp = root / f".{CARD}.tmp"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, root / CARD)
    return root / CARD
