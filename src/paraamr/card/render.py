"""Rendering cards: every card's template renderer (:func:`render`), a folder's ParaAMR card
(:func:`render_card`, :func:`write_card`) and its Table-2 row (:func:`update_card_metrics`)."""

from __future__ import annotations

import importlib.util
import json
import os
import urllib.parse
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from paraamr import __version__, sources
from paraamr.atomic import atomic_write
from paraamr.card.markdown import code, number, size_category
from paraamr.card.sections import (
    CONFIGS,
    contents,
    dataset_info,
    evaluation_text,
    example_json,
    examples,
    examples_text,
    in_python,
    libraries_text,
    license_texts,
    push_command,
    shard_names,
    splits_text,
    stats_text,
    threshold_splits,
)
from paraamr.card.settings import expected_splits, flat, method_text, record_settings
from paraamr.errors import InputError, about
from paraamr.layout import CARD, EVALUATION, FAILURES, PLOTS, SUMMARY, data_files, list_shards
from paraamr.records import CITATION
from paraamr.signals import critical
from paraamr.stats import cell, compute_stats
from paraamr.tasks import read_json
from paraamr.texts import refuse_one_string

__all__ = [
    "TEMPLATE",
    "configs",
    "filtered_configs",
    "render",
    "render_card",
    "template_text",
    "update_card_metrics",
    "write_card",
]

TEMPLATE = "dataset_card.md"
_EVAL_MARKS = ("<!-- paraamr:evaluation -->", "<!-- /paraamr:evaluation -->")


def template_text(name: str = TEMPLATE) -> str:
    """A card template shipped in the package (``paraamr/data/NAME``)."""
    return files("paraamr").joinpath("data", name).read_text(encoding="utf-8")


def render(template: str, card_data, **fields: Any) -> str:
    """A card: YAML from ``card_data`` (a DatasetCardData), the body from the package's
    ``template`` filled with ``fields``."""
    from huggingface_hub import DatasetCard

    text = str(DatasetCard.from_template(card_data, template_str=template_text(template), **fields))
    return text.rstrip("\n") + "\n"  # a text file's last line ends (jinja drops the template's)


def _config(name: str, config: str, splits: Sequence[str]) -> dict[str, Any]:
    return {"config_name": name, "data_files": [{"split": s, "path": data_files(config, s)} for s in splits]}


def configs(present: Mapping[str, Sequence[str]], default: str = "default") -> list[dict[str, Any]]:
    """The card's ``configs:``: each config with the splits that have rows (``datasets`` cannot
    load a split without rows), ``default`` marked so.

    >>> [(c["config_name"], c["data_files"][0]["path"]) for c in configs({"default": ["train"], "pairs": []})]
    [('default', 'data/default/train-?????-of-?????.parquet')]
    """
    return [
        _config(config, config, splits) | ({"default": True} if config == default else {})
        for config, splits in present.items()
        if splits
    ]


def filtered_configs(splits: Mapping[float, Sequence[str]]) -> list[dict[str, Any]]:
    """``pairs-ppl{T}`` configs of the splits that keep rows (:func:`threshold_splits`): the ``pairs``
    shards read with a Parquet ``filters`` (perplexity <= T), no copy of the data.

    >>> [(c["config_name"], c["filters"]) for c in filtered_configs({110: ["train"], 85.5: ["train"], 5: []})]
    [('pairs-ppl110', [['perplexity', '<=', 110.0]]), ('pairs-ppl85.5', [['perplexity', '<=', 85.5]])]
    """
    return [
        _config(f"pairs-ppl{t:g}", "pairs", names) | {"filters": [["perplexity", "<=", float(t)]]}
        for t, names in splits.items()
        if names
    ]


def _filtered_text(repo: str, filtered: Mapping[float, Sequence[str]], splits: Sequence[str]) -> str:
    """The sentence that names the filtered configs, and the (config, split) pairs left out."""
    kept = {t: names for t, names in filtered.items() if names}
    if not filtered:
        return ""
    empty = [f"`pairs-ppl{t:g}`/`{s}`" for t, names in filtered.items() for s in splits if s not in names]
    left_out = f" No rows, so left out: {', '.join(empty)}." if empty else ""
    if not kept:
        return "No pair is within the filtered configs' thresholds, so the card has none." + left_out
    (first, first_splits), names = next(iter(kept.items())), ", ".join(f"`pairs-ppl{t:g}`" for t in kept)
    return (
        f"The configs {names} are `pairs` at those perplexity thresholds, filtered as they load "
        "(datasets' Parquet `filters`: no copy of the data), for the Hub's viewer and "
        f'`load_dataset("{repo}", "pairs-ppl{first:g}", split="{first_splits[0]}")`.{left_out}'
    )


#: Where the records come from, for the ParaAMR release (``convert``).
_RELEASE_ORIGIN = {
    "origin": "The records are the ParaAMR release's, converted to this format; every released "
    "field is kept and the fields the release lacks are null.",
    "curated_by": "the ParaAMR authors (Huang et al., 2023): the release",
    "method_text": "The source sentences come from ParaNMT-50M. The authors parsed each into an AMR "
    "graph, re-rooted the graph at its other concepts and realized each re-rooted graph with a "
    "T5-based AMR-to-text model; the perplexity of each paraphrase was computed with GPT-2. The "
    "released subset keeps paraphrases above perplexity 120 as well, so users apply their own threshold.",
    "settings_table": f"Converted from {sources.RELEASE_HOME} (`ParaAMR_small.zip`) with `paraamr convert`.",
    "source_producers": "The source sentences are those of ParaNMT-50M (Wieting and Gimpel, 2018): "
    "English sentences of the CzEng corpus (subtitles, fiction, web text and more); the paraphrases "
    "were generated by the ParaAMR authors' models.",
    "more_information": "Converted from the ParaAMR release with `paraamr convert`.",
    "what": "paraphrases of the ParaAMR release (Huang et al., ACL 2023), converted with paraamr",
}


#: The same for records converted from a corpus that is not the release: their origin is not recorded.
_CONVERTED_ORIGIN = {
    "origin": "The records were converted to this format with `paraamr convert` from a ParaAMR-style "
    "corpus that is not the ParaAMR release (its records carry foci, graphs or scores the release "
    "lacks); every field is kept.",
    "curated_by": "the makers of the converted corpus (not recorded in this folder)",
    "method_text": "The paraphrases were made by AMR back-translation as in ParaAMR; the settings of "
    "the run that made them are not part of this folder: a `paraamr generate` run keeps them in the "
    "card and `summary.json` of its own folder.",
    "settings_table": "Converted with `paraamr convert`; the settings of the run that made the records "
    "are not recorded here.",
    "source_producers": "Not recorded in this folder: see the corpus it was converted from.",
    "more_information": "Converted with `paraamr convert` from a corpus that is not the ParaAMR release.",
    "what": "ParaAMR-style paraphrases, converted with paraamr",
}


def _run_origin(summary: Mapping[str, Any], root: Path | None) -> dict[str, str]:
    """Where the records come from, for a run of ``paraamr generate``."""
    rows = record_settings(summary, root)
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
    return {
        "origin": "The records were generated for this folder with `paraamr generate`.",
        "curated_by": f"generated with paraamr {__version__}",
        "method_text": method_text(flat(summary), root),
        "settings_table": "\n".join(
            ["| setting | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]
        ),
        "source_producers": "The source sentences are those of the run's input, written by their "
        "authors; the paraphrases, graphs and scores are outputs of the models named above.",
        "more_information": more + "Every setting, count and timing of the run is in `summary.json`.",
        "what": "syntactically diverse paraphrases generated by AMR back-translation "
        "(the ParaAMR method, Huang et al., ACL 2023)",
    }


def _kept_text(summary: Mapping[str, Any] | None) -> str:
    """Which paraphrases the rows keep: every one (the release's way), or those of the run's filter.

    >>> _kept_text({"settings": {"max_perplexity": 110.0}})
    'The rows keep the paraphrases with perplexity at most 110 (the run dropped the others), each ...'
    """
    threshold = flat(summary).get("max_perplexity") if summary is not None else None
    if threshold is None:
        return "The rows keep every paraphrase with its perplexity, as the ParaAMR release does"
    return (
        f"The rows keep the paraphrases with perplexity at most {number(threshold)} (the run dropped "
        "the others), each with its perplexity"
    )


def _summary_text(stats: Mapping[str, Any] | None, what: str, release: bool) -> str:
    if not stats:
        return f"English source sentences with {what}, each paraphrase with its AMR focus and perplexity."
    scores = (
        "its GPT-2 perplexity (the release has no foci or graphs)."
        if release
        else "the AMR focus it was generated from and its language-model perplexity."
    )
    return (
        f"{stats['instances']:,} English source sentences with {stats['pairs']:,} {what}: "
        f"{cell(stats['avg_paraphrases'])} paraphrases per source on average, each with {scores}"
    )


def _usage_texts(
    repo_id: str | None,
    root: Path | None,
    present: Mapping[str, Sequence[str]],
    splits: Sequence[str],
    revision: str | None,
) -> dict[str, str]:
    """The Quick Start's fields: the name and split the snippets load, the note under them, and the
    pandas / Polars / huggingface_hub snippets."""
    name = repo_id or (root.name if root is not None else "paraamr")
    if repo_id:
        note = f"This dataset is published on the Hub as `{repo_id}`."
        if revision:  # (the snippets load the default branch)
            at = urllib.parse.quote(revision, safe="")
            note += (
                f' It is on branch `{revision}`: add `revision="{in_python(revision)}"` to each `datasets`'
                f" and `huggingface_hub` call, and `@{at}` after the repo id in each `hf://` path"
                " (pandas, Polars)."
            )
    else:
        load = code('load_dataset("' + in_python(name) + '")')
        note = (
            f"Loads from the folder itself ({load} in its parent folder). Once published "
            f"({code(push_command(name))}), load it by its Hub id instead."
        )
    split = (present.get("default") or [*splits, "train"])[0]
    shards = shard_names(root, present) if root is not None else None
    return {
        "repo_hint": in_python(name),  # in the snippets' strings
        "load_note": note,
        "first_split": split,
        "has_pairs": split in present.get("pairs", []),  # else the pairs snippets would not load
        "libraries_text": libraries_text(repo_id, name, split, shards),
    }


def _card_data(release: bool, stats, license_id: str, pretty_name: str, present, infos, filtered):
    from huggingface_hub import DatasetCardData

    return DatasetCardData(
        language=["en"],
        license=license_id,
        pretty_name=pretty_name,
        annotations_creators=["machine-generated"],
        language_creators=["found", "machine-generated"],
        multilinguality=["monolingual"],
        size_categories=[size_category(stats["instances"])] if stats else None,
        source_datasets=["extended|other-paranmt-50m"] if release else ["original"],
        task_categories=["text-generation", "sentence-similarity"],
        task_ids=[],
        tags=["paraphrase", "amr", "paraphrase-generation", "syntactic-diversity", "arxiv:2305.16585"],
        configs=configs({c: present.get(c, []) for c in CONFIGS}) + filtered_configs(filtered),
        **({"dataset_info": infos} if infos else {}),
    )


def _stats_texts(stats: Mapping[str, Any] | None, plots: Sequence[str]) -> tuple[str, str]:
    """``(size sentence, Statistics section)``."""
    if not stats:
        return "see Statistics", "Not computed for this card; run `paraamr stats` on this folder."
    text = stats_text(stats)
    for plot in plots:
        text += f"\n\n![{Path(plot).stem.replace('_', ' ')}]({plot})"
    return f"{stats['instances']:,} source sentences, {stats['pairs']:,} paraphrases", text


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
    thresholds: Sequence[float] = (),
    release: bool = True,
    revision: str | None = None,
) -> str:
    """The README.md text of a ParaAMR dataset folder.

    ``summary``: the run's ``summary.json``, or None for converted records (from the ParaAMR release
    when ``release``). ``stats``: :func:`paraamr.stats.compute_stats` of the folder, or None.
    ``license``: a Hub license id (None: ``unknown``; ``"other"`` uses ``license_note``). ``folder``:
    the folder the card describes (without it, ``splits`` names the splits). ``repo_id``,
    ``revision``: what the load snippets name. ``plots``: image paths relative to the folder.
    ``thresholds``: perplexities of the ``pairs-ppl{T}`` configs to add (:func:`filtered_configs`).
    """
    refuse_one_string(splits, "splits")
    root = Path(folder) if folder is not None else None
    infos = dataset_info(root) if root is not None else None
    if infos is not None:
        present = {info["config_name"]: [e["name"] for e in info["splits"]] for info in infos}
    elif not splits:
        raise ValueError("render_card: splits must name at least one split")
    else:
        present = {config: list(splits) for config in CONFIGS}
    license_id, license_text = license_texts(license, license_note)
    release = release and summary is None
    if summary is not None:
        origin = _run_origin(summary, root)
    else:
        origin = dict(_RELEASE_ORIGIN if release else _CONVERTED_ORIGIN)
    what = origin.pop("what")
    size_text, statistics = _stats_texts(stats, plots)
    summary_text = _summary_text(stats, what, release)
    summary_text += " " + splits_text(root, present, expected_splits(summary))
    records = list(example_records) if example_records is not None else (examples(root) if root else [])
    fields = dict(
        pretty_name=pretty_name,
        summary_text=summary_text,
        **_usage_texts(repo_id, root, present, splits, revision),
        examples_text=examples_text(records),
        example_json=example_json(records),
        stats_text=statistics,
        evaluation_text=evaluation_text(evaluation),
        license_text=license_text,
        size_text=size_text,
        release_home=sources.RELEASE_HOME,
        version=__version__,
        built_with="paraamr generate" if summary is not None else "paraamr convert",
        kept_text=_kept_text(summary),
        shard_size=shard_size,
        citation=CITATION.strip(),
        card_authors=f"Written by paraamr {__version__} from this folder's shards and settings.",
        card_contact="The maintainers of the repository hosting this dataset; for the method, "
        "the ParaAMR authors.",
        **origin,
    )
    if thresholds and root is None:
        raise ValueError("render_card: filtered configs (thresholds) need the folder, to list their splits")
    filtered = threshold_splits(root, present.get("pairs", []), thresholds) if thresholds else {}
    fields["filtered_text"] = _filtered_text(fields["repo_hint"], filtered, present.get("pairs", []))
    data = _card_data(release, stats, license_id, pretty_name, present, infos, filtered)
    headings = render(TEMPLATE, data, contents="", **fields)  # the table of contents lists these
    return render(TEMPLATE, data, contents=contents(headings), **fields)


def write_card(
    folder: str | os.PathLike,
    *,
    summary: Mapping[str, Any] | None,
    license: str | None,
    repo_id: str | None = None,
    license_note: str | None = None,
    max_shard_size: str | int = "500MB",
    thresholds: Sequence[float] = (),
    release: bool = True,
    revision: str | None = None,
) -> Path:
    """Write ``folder``'s card (``README.md``) atomically with its statistics (plots where matplotlib
    is installed) and the Table-2 row of its ``evaluation.json``; the options are :func:`render_card`'s."""
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"{root}: {'not a folder' if root.exists() else 'no such folder'}")
    if not list_shards(root):  # a card would list no config (``configs: []``): nothing would load
        if summary is None:
            raise InputError(f"{root}: holds no dataset (data/<config>/<split>-*-of-*.parquet)")
        raise InputError(_no_records(root, summary))
    plot_dir = root / PLOTS if importlib.util.find_spec("matplotlib") else None
    stats = compute_stats(root, plot_dir=plot_dir, overwrite=True)
    plots = [str(Path(p).relative_to(root)) for p in stats.pop("plots", [])]
    fix = f"; write it again with `paraamr evaluate {root} --write-card`, or remove it"
    evaluation = read_json(root / EVALUATION, "paraamr evaluate's Table-2 row", fix=fix)
    if evaluation is not None and not isinstance(evaluation.get("row"), dict):  # (the card shows it)
        raise InputError(f"{root / EVALUATION}: not paraamr evaluate's Table-2 row (no \"row\"){fix}")
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
        thresholds=thresholds,
        release=release,
        revision=revision,
    )
    return atomic_write(root / CARD, text)


def _no_records(root: Path, summary: Mapping[str, Any] | None) -> str:
    """Why a folder without records gets no card, naming the run's input."""
    settings = (summary or {}).get("settings", {})
    given = next((settings[k] for k in ("input", "amr_input", "dataset") if settings.get(k)), None)
    source = "the input"
    if given is not None:  # local paths are kept relative to the folder
        local = not settings.get("dataset") and not os.path.isabs(given) and given != "-"
        source = os.path.relpath(os.path.normpath(root / given)) if local else given
    inputs = (summary or {}).get("counts", {}).get("inputs")
    if inputs == 0:
        return f"{source}: no input rows, so no records: no card is written for {root} (nothing to load)"
    every = f"all {inputs:,} rows" if isinstance(inputs, int) else "every row"
    return (
        f"{source}: {every} failed, so {root} has no records (the reasons are in {root / FAILURES}/); "
        "no card is written, as there is nothing to load"
    )


def card_for_repo(folder: str | os.PathLike, repo_id: str, revision: str | None = None) -> bool:
    """Write ``folder``'s ParaAMR card again with load snippets that name ``repo_id`` (``revision``),
    keeping its license and shard size; False, card untouched, where paraamr did not write it."""
    import re

    from huggingface_hub import DatasetCard

    root = Path(folder)
    path = root / CARD
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    shard_size = re.search(r"each at most (.+?) of Arrow data", text)
    if _EVAL_MARKS[0] not in text or shard_size is None:
        return False
    import yaml

    summary_path = root / SUMMARY
    with about(summary_path):
        summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.is_file() else None
    if summary is not None and not isinstance(summary, dict):
        raise InputError(f"{summary_path}: not a JSON object (a summary paraamr wrote)")
    try:
        license = DatasetCard(text).data.license
    except yaml.YAMLError as err:
        raise InputError(f"{path}: its YAML header cannot be read ({' '.join(str(err).split())})") from None
    write_card(
        root,
        summary=summary,
        license=None if license in (None, "unknown") else license,
        repo_id=repo_id,
        max_shard_size=shard_size.group(1),
        revision=revision,
    )
    return True


def evaluation_card(folder: str | os.PathLike) -> str:
    """The text of ``folder``'s card; InputError unless it has paraamr's Evaluation section."""
    card_path = Path(folder) / CARD
    text = card_path.read_text(encoding="utf-8") if card_path.is_file() else ""
    if any(mark not in text for mark in _EVAL_MARKS):
        raise InputError(f"{card_path}: not a card written by paraamr (no Evaluation section to update)")
    return text


def update_card_metrics(
    folder: str | os.PathLike,
    row: Mapping[str, float],
    signatures: Mapping[str, str] | Sequence[str],
    *,
    note: str | None = None,
) -> Path:
    """Put the Table-2 row (``{metric: value}``, ×100) and its signatures into ``folder``'s card
    (Evaluation) and its ``evaluation.json``; returns the card's path (:func:`evaluation_card`)."""
    root = Path(folder)
    card_path, text = root / CARD, evaluation_card(folder)
    start, end = _EVAL_MARKS
    evaluation = {
        "row": dict(row),
        "signatures": dict(signatures) if isinstance(signatures, Mapping) else list(signatures),
        **({"note": note} if note else {}),
    }
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    with critical():  # both or (stopped before) neither: the card never shows another row than the JSON
        atomic_write(root / EVALUATION, json.dumps(evaluation, indent=1, ensure_ascii=False))
        return atomic_write(card_path, f"{head}{start}\n{evaluation_text(evaluation)}\n{end}{tail}")
