"""The dataset card: YAML configs, license handling, every template section filled for the run."""

from __future__ import annotations

import re

import pytest
from huggingface_hub import DatasetCard

from paraamr import card
from paraamr.stats import compute_stats

SECTIONS = [
    "Dataset Card for",
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
    "Statistics",
    "Bias, Risks, and Limitations",
    "Recommendations",
    "Citation",
    "Glossary",
    "More Information",
    "Dataset Card Authors",
    "Dataset Card Contact",
]
SUMMARY = {
    "input": "examples/sentences.txt",
    "settings": {
        "parser_model": "parse_xfm_bart_large",
        "generator_model": "generate_t5wtense",
        "lm_model": "gpt2",
        "max_perplexity": 120.0,
        "foci": "all",
        "similarity_model": None,
    },
    "counts": {"inputs": 7, "records": 6, "failures": 1},
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
    assert "perplexity above 120 were dropped" in method and "from `examples/sentences.txt`" in method
    assert "| `counts.failures` | 1 |" in method
    assert "| instances (source sentences) | 6 |" in sections["Statistics"]  # from compute_stats
    assert 'load_dataset("me/paraamr-run", "pairs", split="train")' in sections["Direct Use"]
    assert "acl2023paraamr" in sections["Citation"]


def test_release_card_without_stats_or_license():
    text = card.render_card(summary=None, stats=None, license=None, splits=["train"])
    assert DatasetCard(text).data.license == "unknown"
    sections = _assert_filled(text)
    assert "no license was given" in sections["Dataset Description"]
    assert "ParaNMT-50M" in sections["Data Collection and Processing"]
    assert "run `paraamr stats`" in sections["Statistics"]


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
        and root.resolve() == (Path(card.__file__).parent / "data" / card.TEMPLATE).resolve()
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
