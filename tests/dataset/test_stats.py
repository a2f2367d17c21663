"""Table 1 statistics against a hand computation on the release sample, and the stats command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pausing import pause_env

from paraamr.cli import main
from paraamr.stats import compute_stats

SRC = str(Path(__file__).resolve().parents[2] / "src")
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


@pytest.mark.parametrize(("stop", "status"), [(signal.SIGINT, 130), (signal.SIGKILL, -signal.SIGKILL)])
def test_a_second_run_into_a_plots_folder_being_written_is_refused(release_jsonl, tmp_path, stop, status):
    """Before: two runs at once into one --plots DIR both passed the check for plots already there,
    and the later one's histograms silently replaced the earlier's (or the two mixed). Now the first
    holds DIR from its check to its last plot: the second is refused in one line naming DIR and the
    holder, writes nothing, and DIR is free again once the first has ended, also killed."""
    plots = tmp_path / "plots"
    env = {**os.environ, "PYTHONPATH": SRC}
    argv = [sys.executable, "-m", "paraamr", "stats", str(release_jsonl), "--plots", str(plots)]
    log = tmp_path / "first.log"
    with log.open("w") as stream:
        first = subprocess.Popen(argv, stderr=stream, stdout=subprocess.DEVNULL, env=pause_env("plots", env))
    try:
        end = time.monotonic() + 120
        while "paused at plots" not in log.read_text():  # counted, its plots not written yet
            assert first.poll() is None and time.monotonic() < end, log.read_text()
            time.sleep(0.05)
        second = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
        assert second.returncode == 1 and not list(plots.glob("*.png")), second.stdout
        held = f"paraamr stats: --plots {plots}: being written by pid {first.pid} on host "
        assert second.stderr.startswith(held) and second.stderr.endswith(", paraamr stats\n")
        assert len(second.stderr.splitlines()) == 1
    finally:
        first.send_signal(stop)
        assert first.wait(timeout=60) == status
    if stop == signal.SIGINT:
        assert not plots.exists()  # made for the hold, nothing written into it
    else:  # the lock file of a killed holder stays, held by nobody
        assert [p.name for p in plots.iterdir()] == [".plots.lock"]
    again = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in plots.iterdir()) == ["paraphrases_per_source.png", "perplexity.png"]


def test_a_few_perplexities_are_all_drawn_and_counts_get_whole_ticks(tmp_path, monkeypatch):
    """With few paraphrases the 99th percentile cut hid the highest (11 values: 10 shown) and the
    threshold line at it; sources without paraphrases got ticks at -0.4, -0.2, ... on a count axis."""
    import contextlib

    import numpy as np

    from paraamr import stats

    seen, real = {}, stats.figure

    @contextlib.contextmanager
    def recording(path, title, *labels):
        with real(path, title, *labels) as ax:
            yield ax
            lines = [float(line.get_xdata()[0]) for line in ax.get_lines()]
            seen[Path(path).name] = (title, lines, [float(t) for t in ax.get_xticks()])

    monkeypatch.setattr(stats, "figure", recording)
    stats.plot_histograms(np.array([20.0, 50.0, 80.0, 110.0]), np.array([0, 0, 0]), tmp_path)
    title, lines, _ = seen["perplexity.png"]
    assert title == "Paraphrase perplexity (all 4)" and lines == [85.0, 110.0]
    assert seen["paraphrases_per_source.png"][2] == [0.0]
    many = np.concatenate([np.full(1000, 30.0), [5000.0]])  # a long tail: cut at the 99th percentile
    stats.plot_histograms(many, np.array([1, 2]), tmp_path)
    assert seen["perplexity.png"][0] == "Paraphrase perplexity (1000 of 1001 shown, <= p99 = 30.0)"
