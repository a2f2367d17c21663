"""The release's perplexity convention: a default run keeps every candidate with its perplexity,
``filter_records`` gives what a run filtered at generation gives, and ``paraamr convert`` to the
release format and back keeps every paraphrase and perplexity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from entries import generate as main
from test_pipeline_chain import GRAPHS, tiny  # noqa: F401 (the trained tiny generator, a fixture)

from paraamr import filter_records
from paraamr.cli import main as cli
from paraamr.filters import PAPER_USES


@pytest.fixture(scope="module")
def models(tiny, tmp_path_factory):  # noqa: F811 (tiny: the fixture)
    """The trained tiny generator, and the tiny LM with its final norm scaled 12x: sharper
    next-token distributions spread the paraphrases' perplexities across the paper's 120 (the
    plain tiny LM, near-uniform over its 104 tokens, gives them all about 70-80)."""
    import shutil

    import torch
    from transformers import AutoModelForCausalLM

    folder = tmp_path_factory.mktemp("sharp-lm") / "lm"
    shutil.copytree(tiny["lm"], folder)
    lm = AutoModelForCausalLM.from_pretrained(folder)
    with torch.no_grad():
        lm.transformer.ln_f.weight.mul_(12.0)
    lm.save_pretrained(folder)
    return {"realizer": tiny["realizer"], "lm": folder}


def _run(models, out, *options) -> None:
    args = [
        "--amr-input", str(GRAPHS), "--output", str(out), "--no-progress", "--window", "4",
        "--tagging", "untagged",  # (spaCy's tagging is not what is tested: spared)
        "--realizer-model", str(models["realizer"]), "--lm-model", str(models["lm"]), *options,
    ]  # fmt: skip
    assert main(args) == 0


def _rows(ds) -> list[dict]:
    return sorted((row for split in ds for row in ds[split]), key=lambda r: (r["id"], r.get("para_text", "")))


@pytest.mark.slow
def test_a_default_run_keeps_every_candidate_and_filters_like_a_filtered_run(models, tmp_path):
    from datasets import load_dataset

    cache = str(tmp_path / "hf-cache")
    _run(models, tmp_path / "all")
    summary = json.loads((tmp_path / "all" / "summary.json").read_text())
    assert (
        summary["settings"]["max_perplexity"] is None
        and "perplexity" not in summary["counts"]["dropped_by_reason"]
    )
    records = load_dataset(str(tmp_path / "all"), cache_dir=cache)
    pairs = load_dataset(str(tmp_path / "all"), "pairs", cache_dir=cache)
    ppl = sorted(p["perplexity"] for row in _rows(records) for p in row["paraphrases"])
    assert len(ppl) >= 4 and ppl[-1] > 120  # loads back with paraphrases above the paper's 120
    assert 0 < sum(p <= 120 for p in ppl) < len(ppl)  # ... and below it: the 120 filter has an effect
    middle = (ppl[0] + ppl[-1]) / 2  # a threshold that keeps some and drops others
    for threshold in (120, middle):
        out = tmp_path / f"ppl{threshold:g}"
        _run(models, out, "--max-perplexity", str(threshold))
        want_records = load_dataset(str(out), cache_dir=cache)
        want_pairs = load_dataset(str(out), "pairs", cache_dir=cache)
        assert _rows(filter_records(records, max_perplexity=threshold)) == _rows(want_records)
        assert _rows(filter_records(pairs, max_perplexity=threshold)) == _rows(want_pairs)
    assert 0 < sum(p <= middle for p in ppl) < len(ppl)
    assert _rows(filter_records(records, use="general")) == _rows(filter_records(records, max_perplexity=120))

    # to the release format and back: every paraphrase, every perplexity (above 120 too), in order
    release, back = tmp_path / "release.jsonl", tmp_path / "back"
    assert cli(["convert", str(tmp_path / "all"), str(release)]) == 0
    lines = [json.loads(line) for line in release.read_text().splitlines()]
    assert [[p["perplexity"] for p in line["paraphrases"]] for line in lines] == [
        [p["perplexity"] for p in row["paraphrases"]] for row in records["train"]
    ]
    assert cli(["convert", str(release), str(back)]) == 0
    again = load_dataset(str(back), cache_dir=cache)["train"]
    strip = [
        (r["text"], [(p["para_text"], p["perplexity"]) for p in r["paraphrases"]]) for r in records["train"]
    ]
    assert [
        (r["text"], [(p["para_text"], p["perplexity"]) for p in r["paraphrases"]]) for r in again
    ] == strip


RELEASE_SAMPLE = Path(__file__).parents[1] / "dataset" / "data" / "release_sample.jsonl"


@pytest.mark.parametrize(
    ("use", "kept"), [("general", 8), ("embeddings", 7), ("few-shot", 7), ("controlled", 4)]
)
def test_the_builder_and_filter_records_name_the_papers_thresholds(use, kept, tmp_path):
    """``use=`` is the paper's threshold of that use, in the builder's config and in
    ``filter_records``; ``kept`` counted by hand from the release sample's perplexities."""
    from paraamr.dataset import ParaAMR

    def load(**config):
        builder = ParaAMR(data_files=str(RELEASE_SAMPLE), cache_dir=str(tmp_path / use), **config)
        builder.download_and_prepare()
        return builder.as_dataset(split="train")

    by_use, everything = load(use=use), load()
    assert sum(len(r["paraphrases"]) for r in by_use) == kept
    assert by_use.to_list() == filter_records(everything, use=use).to_list()
    assert by_use.to_list() == filter_records(everything, max_perplexity=PAPER_USES[use]).to_list()
    with pytest.raises(ValueError, match="give max_perplexity or use, not both"):
        filter_records(everything, use=use, max_perplexity=100)
