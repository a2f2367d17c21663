"""Table 1 statistics against a hand computation on the release sample, and the stats command."""

from __future__ import annotations

import json

import pytest

from paraamr.cli import main
from paraamr.stats import compute_stats

# Whitespace tokens of the 11 paraphrases of tests/dataset/data/release_sample.jsonl, counted by hand
# (S1: 13, 14, 17 | S2: 12, 10, 11, 13 | S3: 8, 6 | S5: 4 | S6: 6) and of the 6 sources (15, 12, 6, 2, 4, 5).
PARA_TOKENS = [13, 14, 17, 12, 10, 11, 13, 8, 6, 4, 6]
SOURCE_TOKENS = [15, 12, 6, 2, 4, 5]
# The perplexities sorted: 60.25, 70.0, 84.5, 85.0, 91.923..., 96.615..., 110.0, 119.9, 125.027...,
# 140.25, 300.5; linear-interpolation quantiles at positions 10 q.
P91, P96, P125 = 91.92300008948598, 96.61560039297649, 125.02737280513969


def test_stats_match_a_hand_computation(release_zip):
    s = compute_stats(release_zip)
    assert s["instances"] == 6 and s["pairs"] == 11
    assert s["avg_paraphrases"] == pytest.approx(11 / 6)
    assert s["avg_paraphrase_tokens"] == pytest.approx(sum(PARA_TOKENS) / 11)  # 114 / 11
    assert s["avg_source_tokens"] == pytest.approx(sum(SOURCE_TOKENS) / 6)  # 44 / 6
    assert s["sources_without_paraphrases"] == 1
    ppl = s["perplexity"]
    assert ppl["min"] == 60.25 and ppl["max"] == 300.5 and ppl["p50"] == P96
    assert ppl["p5"] == pytest.approx((60.25 + 70.0) / 2)
    assert ppl["p25"] == pytest.approx((84.5 + 85.0) / 2)
    assert ppl["p75"] == pytest.approx((119.9 + P125) / 2)
    assert ppl["p95"] == pytest.approx((140.25 + 300.5) / 2)
    assert ppl["mean"] == pytest.approx((970.4 + P91 + P96 + P125) / 11)
    assert s["splits"] == {"train": 6}


def test_stats_at_the_paper_threshold(release_jsonl):
    s = compute_stats(release_jsonl, max_perplexity=120)
    # kept: S1 14, 17 | S2 12, 10, 11 | S3 8, 6 | S6 6; S4 and S5 are left with none
    assert (s["instances"], s["pairs"], s["sources_without_paraphrases"]) == (6, 8, 2)
    assert s["avg_paraphrase_tokens"] == pytest.approx((14 + 17 + 12 + 10 + 11 + 8 + 6 + 6) / 8)
    assert s["perplexity"]["max"] == 119.9


def test_stats_of_a_parquet_folder_count_splits_and_null_scores(parquet_folder):
    s = compute_stats(parquet_folder)
    assert s["splits"] == {"train": 3, "validation": 1}
    assert (s["instances"], s["pairs"]) == (4, 6)
    assert s["perplexity"]["max"] == 130.0 and s["perplexity"]["missing"] == 0


def test_stats_command_prints_the_table_and_writes_histograms(release_jsonl, tmp_path, capsys):
    plots = tmp_path / "plots"
    assert main(["stats", str(release_jsonl), "--plots", str(plots)]) == 0
    out = capsys.readouterr().out
    assert "| instances (source sentences) | 6 |" in out
    assert "| avg. paraphrases per source | 1.83 |" in out
    assert "| avg. paraphrase length (tokens) | 10.36 |" in out  # 114 / 11
    for name in ("perplexity.png", "paraphrases_per_source.png"):
        assert (plots / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["stats", str(release_jsonl), "--no-plots", "--json", "--max-perplexity", "85"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"] == 4


def test_stats_command_reports_a_malformed_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a", "paraphrases": []}\n{"text": "b"}\n', encoding="utf-8")
    assert main(["stats", str(bad), "--no-plots"]) == 1
    assert f'{bad}, line 2: "paraphrases" must be a list, got NoneType' in capsys.readouterr().err
    assert main(["stats", str(bad), "--no-plots", "--skip-invalid"]) == 0
    assert "skipped 1 invalid line" in capsys.readouterr().err


def test_stats_plots_refuse_same_named_pngs(release_jsonl, tmp_path, capsys):
    plots = tmp_path / "plots"
    plots.mkdir()
    (plots / "perplexity.png").write_bytes(b"mine")
    assert main(["stats", str(release_jsonl), "--plots", str(plots)]) == 1
    assert "perplexity.png exists (1 of the plots): pass --overwrite" in capsys.readouterr().err
    assert (plots / "perplexity.png").read_bytes() == b"mine"
    assert not (plots / "paraphrases_per_source.png").exists()  # refused before anything was written
    assert main(["stats", str(release_jsonl), "--plots", str(plots), "--overwrite"]) == 0
    assert (plots / "perplexity.png").read_bytes()[:4] == b"\x89PNG"


def test_a_mean_over_no_pairs_is_none_and_shown_as_such(release_jsonl):
    """With every pair filtered out the average paraphrase length was 0.00 tokens, beside n/a for
    the perplexities of the same pairs: a mean of nothing is none (null in --json, n/a shown)."""
    from paraamr.stats import format_stats

    s = compute_stats(str(release_jsonl), max_perplexity=0.001)
    assert s["pairs"] == 0 and s["avg_paraphrase_tokens"] is None and s["avg_paraphrases"] == 0.0
    assert "| avg. paraphrase length (tokens) | n/a |" in format_stats(s)
