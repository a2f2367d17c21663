"""What a reader of the card sees and copies: the table of contents links to every section, the
JSON rows are the folder's first record, each usage snippet runs as written (from the loopback Hub,
and in the folder's parent for a local card), and the card renders in headless Chromium.

``PARAAMR_CARD_SCREENSHOTS=DIR`` keeps the screenshots there to look at (never committed)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
from dataset_samples import FOLDER_RECORDS

from paraamr import card
from paraamr.card.sections import example_json
from paraamr.records import to_pairs


def _carded(parquet_folder, tmp_path, repo_id=None):
    folder = tmp_path / "paraamr"
    shutil.copytree(parquet_folder, folder)
    card.write_card(folder, summary=None, license="cc-by-4.0", repo_id=repo_id)
    return folder, (folder / "README.md").read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def _blocks(text: str, language: str = "python") -> list[str]:
    return re.findall(rf"^(`{{3,}}){language}\n(.*?)^\1$", text, flags=re.S | re.M)


def _html(text: str) -> str:
    import markdown

    body = text.split("\n---\n", 1)[1]
    return markdown.markdown(body, extensions=["tables", "fenced_code", "toc"])


def test_the_table_of_contents_links_every_section(parquet_folder, tmp_path):
    _folder, text = _carded(parquet_folder, tmp_path, repo_id="me/paraamr")
    html = _html(text)
    ids = set(re.findall(r'<h[23] id="([^"]+)"', html))
    links = re.findall(r'<a href="#([^"]+)">', html.split('id="table-of-contents"', 1)[1].split("<h2", 1)[0])
    assert len(links) == len(ids) - 1 and set(links) == ids - {"table-of-contents"}
    assert (
        "quick-start" in links
        and "filtering-as-in-the-paper" in links
        and "bias-risks-and-limitations" in links
    )


def test_the_json_rows_are_the_first_record_of_each_config(parquet_folder, tmp_path):
    _folder, text = _carded(parquet_folder, tmp_path)
    default, pair = (json.loads(block) for _fence, block in _blocks(_section(text, "### As JSON"), "json"))
    first = FOLDER_RECORDS["train"][0]  # the first record with paraphrases, as written
    assert default == first  # two paraphrases: all of them, no text long enough to cut
    assert pair == next(to_pairs(first))


def test_long_texts_are_cut_in_the_json_rows():
    record = {"id": "x", "text": "word " * 500, "amr": "(a / b)", "paraphrases": []}
    record["paraphrases"] = [{"para_text": f"p{i} ```` " + "y" * 400, "perplexity": 1.0} for i in range(4)]
    text = example_json([record])
    fence, block = _blocks(text, "json")[0]
    row = json.loads(block)
    assert len(row["text"]) == 160 and row["text"].endswith("…") and len(row["paraphrases"]) == 2
    assert fence == "`````" and "the first 2 of its 4 paraphrases" in text  # a longer fence than the data's


def _run(blocks: list[str]) -> list[dict]:
    """Run the Quick Start's blocks as a reader would: the first two in one session (the filters
    use what the load defined), each other library's block on its own. Returns the namespaces."""
    shared: dict = {}
    spaces = [shared]
    for n, block in enumerate(blocks):
        space = shared if n < 2 else {}
        exec(compile(block, f"card block {n + 1}", "exec"), space)
        spaces += [space] if n >= 2 else []
    return spaces


def test_the_hub_snippets_run_as_written(hub, parquet_folder, tmp_path):
    folder, text = _carded(parquet_folder, tmp_path, repo_id="me/paraamr")
    hub.add_dataset_repo("me/paraamr", folder)
    blocks = [b for _fence, b in _blocks(_section(text, "## Quick Start"))]
    assert len(blocks) == 5 and "import polars" in blocks[3]
    # polars reaches huggingface.co itself (it ignores HF_ENDPOINT): run locally in the next test.
    # Before, the pattern was data_files' `train-?????-of-?????`, whose `?` polars 2.1 sends as
    # `%3F` in an hf:// path (a file of that name): only `*` is a wildcard there
    assert 'pl.read_parquet("hf://datasets/me/paraamr/data/pairs/train-*.parquet")' in blocks[3]
    loaded, pandas, hub_download = _run(blocks[:3] + blocks[4:])
    assert loaded["records"].to_list() == FOLDER_RECORDS["train"]
    assert list(loaded["pairs_85"]["perplexity"]) == [40.5, 20.0, 80.0]
    assert list(loaded["pairs_110"]["perplexity"]) == [40.5, 99.0, 20.0, 80.0]
    assert list(loaded["records_85"]["id"]) == ["id-know", "id-cat"]
    assert pandas["splits"] == {
        "train": "data/default/train-00000-of-00002.parquet",
        "validation": "data/default/validation-00000-of-00001.parquet",
    }
    assert list(pandas["df"]["id"]) == ["id-know", "id-rain"]  # the first shard: two records
    assert hub_download["table"].num_rows == 2  # the first pairs shard: id-know's two pairs
    assert hub.requests("GET", "/datasets/me/paraamr/resolve/")


def test_the_local_snippets_run_in_the_folders_parent(parquet_folder, tmp_path, monkeypatch):
    polars = pytest.importorskip("polars", reason="polars is not installed (not in the test extra yet)")
    folder, text = _carded(parquet_folder, tmp_path)
    monkeypatch.chdir(folder.parent)
    blocks = [b for _fence, b in _blocks(_section(text, "## Quick Start"))]
    assert 'load_dataset("paraamr")' in text and 'hf_hub_download("ORG/NAME", ' in blocks[4]
    loaded, pandas, local_polars = _run(blocks[:4])  # hf_hub_download: after publishing
    assert loaded["records"].num_rows == 3 and list(pandas["df"]["id"]) == ["id-know", "id-rain"]
    assert isinstance(local_polars["df_110"], polars.DataFrame)
    assert local_polars["df_110"]["perplexity"].to_list() == [40.5, 99.0, 20.0, 80.0]  # both train shards


def test_the_card_renders_in_headless_chromium(parquet_folder, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    folder, text = _carded(parquet_folder, tmp_path, repo_id="me/paraamr")
    page = folder / "card.html"  # beside plots/, which the card shows
    style = "body{font-family:sans-serif;max-width:900px;margin:auto}pre{background:#f6f8fa;padding:8px}"
    page.write_text(
        f"<html><head><meta charset='utf-8'><style>{style}</style></head><body>{_html(text)}</body></html>",
        encoding="utf-8",
    )
    shot = tmp_path / "card.png"
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--screenshot={shot}",
            "--window-size=1000,3400",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and shot.stat().st_size > 50_000, done.stderr[-2000:]
    keep = os.environ.get("PARAAMR_CARD_SCREENSHOTS")
    if keep:
        shutil.copy(shot, os.path.join(keep, "card.png"))
    from PIL import Image

    image = Image.open(shot).convert("L")
    assert image.size == (1000, 3400)
    if keep:
        shutil.copy(page, os.path.join(keep, "card.html"))
    assert len(set(image.getdata())) > 20  # text and code blocks drawn, not a blank page


def test_the_quick_start_of_a_folder_without_pairs_runs(tmp_path, monkeypatch):
    """Sources without paraphrases: no ``pairs`` in ``configs:``, so no pairs in the snippets either
    (before: ``load_dataset(folder, "pairs")``, a ValueError 'BuilderConfig pairs not found')."""
    from paraamr.commands.convert import to_folder

    lines = tmp_path / "none.jsonl"
    lines.write_text('{"text": "a b c", "paraphrases": []}\n{"text": "d e", "paraphrases": []}\n')
    folder = tmp_path / "nopairs"
    to_folder(lines, folder)
    text = (folder / "README.md").read_text(encoding="utf-8")
    blocks = [b for _fence, b in _blocks(_section(text, "## Quick Start"))]
    assert '"pairs"' not in blocks[0] and "pairs_110" not in blocks[1]
    monkeypatch.chdir(tmp_path)
    assert _run(blocks[:2])[0]["records_85"].num_rows == 0


def test_a_folder_without_pairs_shows_no_pairs_path():
    from paraamr.card.sections import libraries_text

    text = libraries_text(
        "me/x", "x", "train", {"default": {"train": ["data/default/train-00000-of-00001.parquet"]}}
    )
    assert 'pl.read_parquet("hf://datasets/me/x/data/default/train-*.parquet")' in text
    assert "pairs" not in text and "hf_hub_download" not in text  # no pairs shard to name
