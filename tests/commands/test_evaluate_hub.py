"""``paraamr evaluate`` on a Hub dataset (the loopback Hub of tests/support/hubserver.py, through
datasets.load_dataset), the --sample warning, and --write-card into a folder's card."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paraamr.cli import main
from paraamr.metrics.lexical import bleu_diversity

DATA = Path(__file__).parents[1] / "metrics" / "data"
PAIRS = [line.split("\t") for line in (DATA / "pairs_sample.tsv").read_text().splitlines()[1:]]
ARGS = ["--no-plots", "--no-progress", "--json", "--parser", "link-grammar:no-pos"]


def test_hub_dataset_config_and_split_with_sample_warning(hub, capsys, tmp_path):
    repo = tmp_path / "repo"
    (repo / "data" / "pairs").mkdir(parents=True)
    rows = [{"id": str(i), "text": s, "para_text": p} for i, (s, p) in enumerate(PAIRS)]
    pq.write_table(pa.Table.from_pylist(rows), repo / "data" / "pairs" / "test-00000-of-00001.parquet")
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: pairs\n  data_files:\n  - split: test\n"
        "    path: data/pairs/test-*\n---\n# pairs\n"
    )
    hub.add_dataset_repo("org/sample", repo)
    args = ["evaluate", "org/sample", "--config", "pairs", "--split", "test", "--sample", "999", *ARGS]
    assert main(args) == 0
    out = capsys.readouterr()
    result = json.loads(out.out)
    sources = len({s for s, _ in PAIRS})  # several paraphrases a source: --sample draws sources
    assert f"--sample 999 exceeds the {sources} sources of org/sample" in out.err
    golden, _ = bleu_diversity([p for _, p in PAIRS], [s for s, _ in PAIRS])
    assert result["pairs"] == len(PAIRS) and result["bleu_diversity"] == pytest.approx(
        sum(golden) / len(golden)
    )
    assert hub.requests("GET", "/datasets/org/sample/resolve/")
    assert main(["evaluate", "org/sample", "--config", "nope", *ARGS]) == 1
    assert "org/sample (config nope, split train): cannot be loaded (" in capsys.readouterr().err


def test_write_card_puts_the_row_into_the_folder_card(capsys, tmp_path):
    from paraamr.card import write_card
    from paraamr.layout import shard_name
    from paraamr.records import DEFAULT_SCHEMA

    folder = tmp_path / "corpus"
    (folder / "data" / "default").mkdir(parents=True)
    para = {
        "perplexity": 10.0,
        "focus": "know-01",
        "amr": "(k / know-01)",
        "similarity": None,
        "quality": None,
    }
    sources = dict.fromkeys(s for s, _ in PAIRS)
    rows = [
        {
            "id": str(i),
            "text": src,
            "amr": "(k / know-01)",
            "paraphrases": [{"para_text": p, **para} for s, p in PAIRS if s == src],
        }
        for i, src in enumerate(sources)
    ]
    table = pa.Table.from_pylist(rows, schema=DEFAULT_SCHEMA)
    pq.write_table(table, folder / "data" / "default" / shard_name("train", 0, 1))
    write_card(folder, summary=None, license=None)
    assert main(["evaluate", str(tmp_path / "elsewhere.tsv"), "--write-card", *ARGS]) == 2
    capsys.readouterr()
    assert main(["evaluate", str(folder), "--write-card", *ARGS]) == 0
    result = json.loads(capsys.readouterr().out)
    card = (folder / "README.md").read_text()
    assert result["card"] == str(folder / "README.md")
    assert "| Pairs | Semantic similarity | 1-BLEU | 1-∩/∪ | TED-3 | TED-F |" in card
    assert result["signatures"]["ted"] in card and "tree:ROOT,no-POS" in card
    saved = json.loads((folder / "evaluation.json").read_text())
    assert saved["row"]["TED-F"] == pytest.approx(result["tedf"]) and result["pairs"] == len(PAIRS)
    (folder / "data" / "default" / shard_name("train", 0, 1)).unlink()
    assert main(["evaluate", str(folder), "--write-card", *ARGS]) == 1  # no pairs: no row of NaNs
    assert "no pairs to evaluate" in capsys.readouterr().err
