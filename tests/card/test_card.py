"""The dataset card: YAML configs, license handling, every template section filled for the run."""

from __future__ import annotations

import json
import re

import pytest
from dataset_samples import release_bytes
from huggingface_hub import DatasetCard

import paraamr
from paraamr import card
from paraamr.cli import main
from paraamr.records import CITATION
from paraamr.stats import compute_stats

SECTIONS = [
    "Dataset Card for",
    "Quick Start",
    "Examples",
    "Statistics",
    "Evaluation",
    "Dataset Details",
    "Dataset Description",
    "Dataset Sources",
    "Uses",
    "Direct Use",
    "Out-of-Scope Use",
    "Dataset Structure",
    "Dataset Creation",
    "Curation Rationale",
    "Source Data",
    "Data Collection and Processing",
    "Who are the source data producers?",
    "Annotations",
    "Personal and Sensitive Information",
    "Bias, Risks, and Limitations",
    "Recommendations",
    "Citation",
    "Glossary",
    "More Information",
    "Dataset Card Authors",
    "Dataset Card Contact",
]
SUMMARY = {
    "settings": {
        "input": "/home/someone/private/examples/sentences.txt",
        "parser_model": "parse_xfm_bart_large",
        "realizer_model": "generate_t5wtense",
        "lm_model": "gpt2",
        "max_perplexity": 120.0,
        "foci": "all",
        "seed": 0,
        "similarity_model": None,
        "parse_batch_size": 16,
        "task_rows": 100,
        "validation_fraction": 0.0,
        "test_fraction": 0.0,
        "split": "train",
    },
    "counts": {"inputs": 7, "records": 6, "failures": 1, "seconds_by_stage": {"parse": 3.5}},
}


def _sections(text: str) -> dict[str, str]:
    """Heading -> the text up to the next heading (of any level)."""
    body = text.split("\n---\n", 1)[1]
    parts = re.split(r"^#+ (.+)$", body, flags=re.M)
    return {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts), 2)}


def _assert_filled(text: str) -> dict[str, str]:
    assert "{{" not in text and "}}" not in text and "More Information Needed" not in text
    sections = _sections(text)
    headings = list(sections)
    assert [s for s in SECTIONS if not any(h.startswith(s) for h in headings)] == []
    # a section with no text of its own is only a parent of the next, deeper heading
    parents = {"Dataset Details", "Uses", "Dataset Creation", "Source Data"}
    empty = [h for h, body in sections.items() if not body and h not in parents]
    assert empty == []
    return sections


def test_generated_run_card(release_jsonl):
    stats = compute_stats(release_jsonl)
    text = card.render_card(
        summary=SUMMARY, stats=stats, license="apache-2.0", splits=["train", "test"], repo_id="me/paraamr-run"
    )
    data = DatasetCard(text).data
    assert data.license == "apache-2.0" and data.language == ["en"] and data.size_categories == ["n<1K"]
    assert data.configs == [
        {
            "config_name": "default",
            "default": True,
            "data_files": [
                {"split": "train", "path": "data/default/train-?????-of-?????.parquet"},
                {"split": "test", "path": "data/default/test-?????-of-?????.parquet"},
            ],
        },
        {
            "config_name": "pairs",
            "data_files": [
                {"split": "train", "path": "data/pairs/train-?????-of-?????.parquet"},
                {"split": "test", "path": "data/pairs/test-?????-of-?????.parquet"},
            ],
        },
    ]
    sections = _assert_filled(text)
    method = sections["Data Collection and Processing"]
    assert "`parse_xfm_bart_large`" in method and "`generate_t5wtense`" in method and "`gpt2`" in method
    assert "perplexity above 120 were dropped" in method
    # only the settings that define the records; the input by its name, never a local path
    assert "| input | `sentences.txt` |" in method and "| seed | 0 |" in method
    assert "/home/someone" not in text and "parse_batch_size" not in text and "task_rows" not in text
    assert "Of 7 input rows, 6 became records and 1 failures" in sections["More Information"]
    assert "| 6 | 1.83 |" in sections["Statistics"]  # compute_stats: 6 instances, 11 paraphrases / 6
    assert 'load_dataset("me/paraamr-run", "pairs", split="train")' in sections["Quick Start"]
    # what the rows keep and which command built them, as this run did (before: "every paraphrase",
    # "as the ParaAMR release does", and both commands, whatever the run)
    filtering = sections["Filtering as in the paper"]
    assert filtering.startswith("The rows keep the paraphrases with perplexity at most 120 (the run dropped")
    assert "(`paraamr generate`)" in sections["Dataset Sources"] and "paraamr convert" not in text


def test_local_models_are_named_by_folder_and_content_hash(tmp_path):
    run, model = tmp_path / "run", tmp_path / "models" / "my-parser"
    model.mkdir(parents=True)
    run.mkdir()
    (model / "weights.bin").write_bytes(b"weights")
    summary = {"settings": {"parser_model": "../models/my-parser", "lm_model": str(tmp_path / "nope")}}
    rows = dict(card.record_settings(summary, run))
    import hashlib

    expected = hashlib.sha256(b"weights.bin\0weights").hexdigest()[:16]  # the hash, computed here
    assert rows["AMR parser"] == f"`my-parser` (local, sha256 `{expected}`)"
    assert rows["perplexity LM"] == "`nope` (local, no longer on disk)"  # never the path
    # a local dataset by its folder's name (before: "../../data/mine", the path from the run's folder)
    rows = dict(card.record_settings({"settings": {"dataset": "../../data/mine"}}, run))
    assert rows["dataset"] == "`mine` (local)"
    assert dict(card.record_settings({"settings": {"dataset": "glue"}}, run))["dataset"] == "`glue`"  # Hub id


def test_card_yaml_passes_the_hub_and_datasets_metadata_checks(parquet_folder, tmp_path):
    """What the Hub reads from the YAML: huggingface_hub's DatasetCardData, datasets' configs and
    infos (features, splits with bytes and examples, sizes); and load_dataset through it."""
    import shutil

    import datasets
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs

    from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA

    folder = tmp_path / "folder"
    shutil.copytree(parquet_folder, folder)
    summary = {"settings": {"split": "train", "validation_fraction": 0.2, "test_fraction": 0.1}}
    card.write_card(folder, summary=summary, license="cc-by-4.0", repo_id="me/x")
    parsed = DatasetCard.load(folder / "README.md")
    data = parsed.data
    assert data.to_dict() == type(data)(**data.to_dict()).to_dict()  # DatasetCardData round trip
    configs = MetadataConfigs.from_dataset_card_data(data)
    assert sorted(configs) == ["default", "pairs"]
    infos = DatasetInfosDict.from_dataset_card_data(data)
    assert infos["default"].features == datasets.Features.from_arrow_schema(DEFAULT_SCHEMA)
    assert infos["pairs"].features == datasets.Features.from_arrow_schema(PAIRS_SCHEMA)
    assert {s.name: s.num_examples for s in infos["default"].splits.values()} == {"train": 3, "validation": 1}
    assert infos["default"].dataset_size == sum(s.num_bytes for s in infos["default"].splits.values())
    assert infos["default"].download_size == sum(
        p.stat().st_size for p in (folder / "data" / "default").glob("*.parquet")
    )
    # the test split the settings ask for has no rows: named as empty, not in configs:
    assert "`default`/`test`, `pairs`/`test`" in parsed.text and "/test-" not in str(data.configs)
    ds = datasets.load_dataset(str(folder), split="validation", cache_dir=str(tmp_path / "cache"))
    assert ds.num_rows == 1


def _html(text: str) -> str:
    import markdown

    return markdown.markdown(text.split("\n---\n", 1)[1], extensions=["tables", "fenced_code"])


def test_card_renders_to_html_with_examples_statistics_and_plots(parquet_folder, tmp_path):
    import shutil

    folder = tmp_path / "folder"
    shutil.copytree(parquet_folder, folder)
    card.write_card(folder, summary=SUMMARY, license=None)
    html = _html((folder / "README.md").read_text(encoding="utf-8"))
    images = re.findall(r'<img alt="[^"]+" src="([^"]+)"', html)
    assert images == ["plots/perplexity.png", "plots/paraphrases_per_source.png"]
    assert all((folder / src).stat().st_size > 1000 for src in images)  # the PNGs are in the folder
    examples = html.split("<h2>Examples</h2>")[1].split("<h2>")[0]
    assert examples.count("<table>") == 2  # 2 of the 3 train records have paraphrases
    assert "They need it, I know." in examples and "<code>need-01</code>" in examples
    assert "|---" not in html and "{{" not in html and "<h2>Quick Start</h2>" in html
    assert 'load_dataset("folder", "pairs", split="train")' in html.replace("&quot;", '"')


def test_evaluation_row_is_written_into_the_card_and_kept(parquet_folder, tmp_path):
    import shutil

    from paraamr.errors import InputError

    folder = tmp_path / "folder"
    shutil.copytree(parquet_folder, folder)
    card.write_card(folder, summary=SUMMARY, license=None)
    row = {"semantic similarity": 83.1, "self-BLEU": 42.0, "TED-3": 5.5}
    signatures = {"TED-3": "ted|k:3|parser:spacy"}
    card.update_card_metrics(folder, row, signatures)
    for _ in range(2):  # and again after the card is written anew
        section = _sections((folder / "README.md").read_text(encoding="utf-8"))["Evaluation"]
        assert (
            "| semantic similarity | self-BLEU | TED-3 |" in section and "| 83.10 | 42.00 | 5.50 |" in section
        )
        assert "`ted|k:3|parser:spacy`" in section
        card.write_card(folder, summary=SUMMARY, license=None)
    from dataset_samples import RELEASE

    from paraamr.cli import main

    assert main(["convert", str(RELEASE), str(folder), "--overwrite"]) == 0  # new records: no stale row
    assert "Not evaluated yet" in _sections((folder / "README.md").read_text(encoding="utf-8"))["Evaluation"]
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "README.md").write_text("# mine\n")
    with pytest.raises(InputError, match="not a card written by paraamr"):
        card.update_card_metrics(tmp_path / "foreign", row, signatures)
    assert (tmp_path / "foreign" / "README.md").read_text() == "# mine\n"


def test_a_signal_while_the_row_is_written_leaves_the_json_and_the_card_agreeing(
    parquet_folder, tmp_path, monkeypatch
):
    """Before: a Ctrl-C after ``evaluation.json`` was written left the card with the old row."""
    import importlib
    import os
    import shutil
    import signal

    from paraamr.signals import Interrupted, handled

    render = importlib.import_module("paraamr.card.render")  # (the package's ``render`` is a function)

    folder = tmp_path / "corpus"
    shutil.copytree(parquet_folder, folder)
    card.write_card(folder, summary=SUMMARY, license=None)
    card.update_card_metrics(folder, {"TED-3": 5.5}, {})
    write = render.atomic_write

    def interrupted_write(path, data, **kw):  # the signal comes as the JSON is in place
        done = write(path, data, **kw)
        if path.name == "evaluation.json":
            os.kill(os.getpid(), signal.SIGINT)
        return done

    monkeypatch.setattr(render, "atomic_write", interrupted_write)
    with pytest.raises(Interrupted), handled():
        card.update_card_metrics(folder, {"TED-3": 7.25}, {})
    assert json.loads((folder / "evaluation.json").read_text())["row"] == {"TED-3": 7.25}
    assert "| 7.25 |" in _sections((folder / "README.md").read_text(encoding="utf-8"))["Evaluation"]


def test_the_card_citation_is_the_readme_one():
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    (bibtex,) = re.findall(r"```bibtex\n(.*?)```", readme, flags=re.S)
    text = card.render_card(summary=None, stats=None, license=None)
    assert bibtex.strip() in text and bibtex == CITATION


def test_release_card_without_stats_or_license():
    text = card.render_card(summary=None, stats=None, license=None, splits=["train"])
    assert DatasetCard(text).data.license == "unknown"
    sections = _assert_filled(text)
    assert "no license was given" in sections["Dataset Description"]
    assert "ParaNMT-50M" in sections["Data Collection and Processing"]
    assert "run `paraamr stats`" in sections["Statistics"]
    filtering = sections["Filtering as in the paper"]
    assert filtering.startswith("The rows keep every paraphrase with its perplexity, as the ParaAMR release")
    assert "(`paraamr convert`)" in sections["Dataset Sources"] and "paraamr generate`)" not in text


def test_other_license_carries_its_sentence():
    text = card.render_card(
        summary={},
        stats=None,
        license="other",
        splits=["train"],
        license_note="research use only, see LICENSE.txt",
    )
    assert DatasetCard(text).data.license == "other"
    assert "other: research use only, see LICENSE.txt" in text


def test_no_splits_is_refused():
    with pytest.raises(ValueError, match="splits"):
        card.render_card(summary=None, stats=None, license=None, splits=[])


def test_root_card_is_a_link_to_the_package_template():
    from pathlib import Path

    root = Path(__file__).parents[2] / "dataset_card.md"
    assert (
        root.is_symlink()
        and root.resolve() == (Path(paraamr.__file__).parent / "data" / card.TEMPLATE).resolve()
    )
    assert root.read_text(encoding="utf-8") == card.template_text()


def test_reloading_a_rewritten_folder_gives_the_new_rows(tmp_path):
    # regression: datasets caches a folder with `configs:` under a hash of the card's YAML alone,
    # so load_dataset(folder) served the first run's rows after a second run rewrote the folder
    import shutil

    import datasets

    from paraamr.builder.folder import ShardWriter, finalize
    from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, text_id

    folder, cache = tmp_path / "paraamr", tmp_path / "cache"

    def write(texts):
        shutil.rmtree(folder, ignore_errors=True)
        for config, schema in (("default", DEFAULT_SCHEMA), ("pairs", PAIRS_SCHEMA)):
            with ShardWriter(folder, config, "train", schema) as writer:
                for text in texts:
                    row = {"id": text_id(text), "text": text, "para_text": text + "!", "paraphrases": []}
                    writer.write({k: v for k, v in row.items() if k in schema.names})
        finalize(folder)
        text = card.render_card(summary=None, stats=None, license=None, splits=["train"], folder=folder)
        (folder / "README.md").write_text(text, encoding="utf-8")

    write(["One.", "Two."])
    assert datasets.load_dataset(str(folder), split="train", cache_dir=str(cache))["text"] == ["One.", "Two."]
    write(["Three.", "Four.", "Five."])
    again = datasets.load_dataset(str(folder), split="train", cache_dir=str(cache))
    assert again["text"] == ["Three.", "Four.", "Five."]
    info = DatasetCard((folder / "README.md").read_text(encoding="utf-8")).data.dataset_info
    assert [i["splits"][0]["num_examples"] for i in info] == [3, 3]


def test_a_folder_a_user_added_under_data_gets_no_dataset_info_without_a_config(tmp_path):
    """Before: ``data/extra/`` got a ``dataset_info`` entry while ``configs:`` (default, pairs)
    had none for it: a card the Hub shows with a config it cannot load."""
    import shutil

    folder = tmp_path / "c"
    (tmp_path / "in.jsonl").write_bytes(release_bytes(3))
    assert main(["convert", str(tmp_path / "in.jsonl"), str(folder)]) == 0
    shutil.copytree(folder / "data" / "default", folder / "data" / "extra")
    card.write_card(folder, summary=None, license=None)
    data = DatasetCard((folder / "README.md").read_text(encoding="utf-8")).data
    assert [c["config_name"] for c in data.configs] == [i["config_name"] for i in data.dataset_info]
    assert [i["config_name"] for i in data.dataset_info] == ["default", "pairs"]


def test_cards_stay_small_with_a_huge_line(tmp_path, monkeypatch):
    huge = "word " * 1_000_000  # 5 MB on one line
    line = (
        json.dumps({"text": huge, "paraphrases": [{"para_text": huge, "perplexity": 3.0}]}).encode() + b"\n"
    )
    (tmp_path / "in.jsonl").write_bytes(line + release_bytes(3))
    assert main(["convert", str(tmp_path / "in.jsonl"), str(tmp_path / "c")]) == 0
    assert (tmp_path / "c" / "README.md").stat().st_size < 64_000
    rows = [{"text": huge, "label": 0}, {"text": "Hi .", "label": 1}]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.chdir(tmp_path)
    argv = [
        "augment",
        "--dataset",
        "a.jsonl",
        "--method",
        "reda",
        "--n",
        "1",
        "--output",
        "a",
        "--max-chars",
        "100",
    ]
    assert main(argv) == 0
    assert (tmp_path / "a" / "README.md").stat().st_size < 64_000


def test_snippets_of_a_folder_whose_name_needs_quoting_run_as_written(tmp_path, release_jsonl, monkeypatch):
    """A folder named ``we"ird ds``: the card's snippets were ``load_dataset("we"ird ds")`` (no
    Python) and ``paraamr push ORG/NAME we"ird ds`` (three arguments in a shell)."""
    import ast
    import shlex

    folder = tmp_path / 'we"ird ds'
    assert main(["convert", str(release_jsonl), str(folder), "-q"]) == 0
    text = (folder / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 3
    for block in blocks:
        ast.parse(block)  # a SyntaxError before
    assert 'load_dataset("we\\"ird ds", split="train")' in text
    pushes = set(re.findall(r"`(paraamr push ORG/NAME [^`]*)`", text))
    assert pushes and all(shlex.split(p)[-1] == folder.name for p in pushes), pushes
    monkeypatch.chdir(tmp_path)  # and it loads as the card says, from the folder above
    from datasets import load_dataset

    assert load_dataset(folder.name, split="train", cache_dir=str(tmp_path / "c")).num_rows > 0


def test_write_card_names_a_path_that_holds_no_dataset_and_render_card_refuses_one_split_string(tmp_path):
    """Before: "the input: every row failed, so X has no records" for a missing folder, a file or a
    folder of something else; and ``splits="train"`` rendered a card of splits t, r, a, i, n."""
    from paraamr.errors import InputError

    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "other").mkdir()
    problems = {"nope": "no such folder", "file.txt": "not a folder", "other": "holds no dataset"}
    for path, said in problems.items():
        with pytest.raises(InputError, match=f"{path}: {said}"):
            card.write_card(tmp_path / path, summary=None, license="mit")
    assert not (tmp_path / "other" / "README.md").exists()
    with pytest.raises(TypeError, match="splits is one string"):
        card.render_card(summary=None, stats=None, license="mit", splits="train")


def test_the_card_lists_train_validation_test_in_that_order_and_quick_start_loads_train(tmp_path):
    """Before: the splits came by name (test, train, validation): the Hub's viewer showed ``test``
    first and every Quick Start snippet loaded ``split="test"``."""
    from paraamr.builder.folder import ShardWriter, finalize
    from paraamr.records import DEFAULT_SCHEMA, PAIRS_SCHEMA, text_id

    folder = tmp_path / "three"
    for split in ("test", "extra", "validation", "train"):
        for config, schema in (("default", DEFAULT_SCHEMA), ("pairs", PAIRS_SCHEMA)):
            with ShardWriter(folder, config, split, schema) as writer:
                row = {"id": text_id(split), "text": split, "para_text": "p", "paraphrases": []}
                writer.write({k: v for k, v in row.items() if k in schema.names})
    finalize(folder)
    card.write_card(folder, summary=None, license=None)
    text = (folder / "README.md").read_text(encoding="utf-8")
    data = DatasetCard(text).data
    for config in data.configs:
        assert [f["split"] for f in config["data_files"]] == ["train", "validation", "test", "extra"]
    assert [s["name"] for s in data.dataset_info[0]["splits"]] == ["train", "validation", "test", "extra"]
    assert 'load_dataset("three", split="train")' in text and 'split="test"' not in text
