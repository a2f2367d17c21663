"""``paraamr refocus``: PENMAN in, every variant out; bad graphs reported, counted, and skipped."""

from __future__ import annotations

import io
import random
import subprocess
import sys
import time

import penman
import psutil
import pytest
from amr_checks import PAPER_AMR, PAPER_TEXT, assert_invariants
from amr_graphs import random_penman
from penman.models.amr import model

from paraamr import amr
from paraamr.cli import main
from paraamr.commands.refocus import EXCLUDED_HELP
from paraamr.records import text_id

GOOD = "# ::snt The boy wants to go.\n(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"
PAPER = f"# ::id fig1\n# ::snt {PAPER_TEXT}\n{PAPER_AMR}"


def blocks(text: str) -> list[str]:
    return [b for b in text.split("\n\n") if b.strip()]


def test_writes_every_variant_with_id_and_focus(tmp_path, capsys):
    path = tmp_path / "in.amr"
    path.write_text(f"# AMR file header\n\n{GOOD}\n\n\n{PAPER}\n", encoding="utf-8")
    assert main(["refocus", str(path)]) == 0
    out, err = capsys.readouterr()
    got = blocks(out)
    assert len(got) == 2 + 9
    for text in got:
        graph = penman.decode(text, model=model)
        source = PAPER if graph.metadata["id"] == "fig1" else GOOD
        assert graph.metadata["id"] in ("fig1", text_id("The boy wants to go."))
        assert_invariants(f"# ::id {graph.metadata['id']}\n{source}", text, graph.metadata["focus"])
    boy = text_id("The boy wants to go.")
    assert got[0].splitlines()[:3] == [f"# ::id {boy}", "# ::snt The boy wants to go.", "# ::focus b"]
    assert err.strip().splitlines()[-1] == "paraamr refocus: 2 graphs read, 0 failed, 11 variants written"


def test_bad_graphs_are_reported_by_position_and_the_rest_processed(tmp_path, capsys):
    path = tmp_path / "in.amr"
    path.write_bytes(
        b"(x / broken\n\n" + GOOD.encode() + b"\n\n# ::snt caf\xe9\n(c / cafe)\n\n(a / b :ARG0 (a / c))\n\n"
        b"# ::id only-metadata\n\n(p / paris :ARG1-of (v / visit-01))\n"
    )
    assert main(["refocus", str(path), "--oneline"]) == 1
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert lines[0].startswith("paraamr refocus: graph 1: not valid PENMAN")
    assert lines[1] == "paraamr refocus: graph 3: invalid UTF-8 (line 1 of the graph)"
    graph4 = f"graph 4 (id {text_id('(a / b :ARG0 (a / c))')})"
    assert lines[2] == f"paraamr refocus: {graph4}: variable a is defined more than once"
    assert (
        lines[3] == "paraamr refocus: graph 5 (id only-metadata): empty graph (no PENMAN after the metadata)"
    )
    assert lines[4] == "paraamr refocus: 6 graphs read, 4 failed, 3 variants written"
    assert [penman.decode(b).metadata["focus"] for b in blocks(out)] == ["b", "g", "v"]
    assert all(len([line for line in b.splitlines() if not line.startswith("#")]) == 1 for b in blocks(out))


def test_reads_stdin_and_takes_foci_seed_exclude_heuristic(monkeypatch, capsys):
    def run(*options):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(PAPER.encode())))
        assert main(["refocus", *options]) == 0
        return [penman.decode(b).metadata["focus"] for b in blocks(capsys.readouterr().out)]

    assert run("-") == amr.candidate_foci(PAPER)
    picked = run("--foci", "3", "--seed", "5")
    assert picked == amr.candidate_foci(PAPER, foci=3, seed=5) == run("--foci", "3", "--seed", "5")
    assert len(picked) == 3
    assert run("--exclude", "i, they,this") == [
        f for f in amr.candidate_foci(PAPER) if f not in ("z2", "z4", "z10")
    ]
    assert run("--heuristic") == amr.candidate_foci(PAPER, heuristic=True) == ["z9"]
    assert run("--foci", "0") == []


def test_ids_are_generate_s_record_ids_and_a_byte_order_mark_on_stdin_is_skipped(monkeypatch, capsys):
    """An empty ``# ::id`` gave every variant an empty id; two graphs with an empty ``# ::snt`` share
    no id (generate took the second for a repeat of the first); a byte order mark on stdin made the
    first graph 'not valid PENMAN' (a file by path skipped it)."""
    plain = ["(c / gamma :ARG0 (d / delta))", "(e / epsilon :ARG0 (f / phi))"]
    graphs = "# ::id\n# ::snt Hello.\n(a / alpha :ARG0 (b / beta))\n\n"
    graphs += "".join(f"# ::snt\n{g}\n\n" for g in plain)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xef\xbb\xbf" + graphs.encode())))
    assert main(["refocus", "-", "--oneline"]) == 0
    ids = [penman.decode(b).metadata["id"] for b in blocks(capsys.readouterr().out)]
    assert ids == [text_id("Hello."), *map(text_id, plain)]


def test_mod_as_domain(tmp_path, capsys):
    path = tmp_path / "in.amr"
    path.write_text("(d / dog :mod (b / big))\n")
    assert main(["refocus", str(path), "--mod-as-domain", "--oneline"]) == 0
    assert "(b / big :domain (d / dog))" in capsys.readouterr().out


def test_usage_errors(tmp_path, capsys):
    assert main(["refocus", str(tmp_path / "missing.amr")]) == 2
    assert "cannot read" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["refocus", "--foci", "some"])
    assert "must be 'all' or a count" in capsys.readouterr().err


def test_help_lists_the_default_exclusions():
    assert ", ".join(sorted(amr.DEFAULT_EXCLUDED)) == EXCLUDED_HELP


def test_a_closed_pipe_ends_it_quietly(tmp_path):
    """``paraamr refocus big.amr | head -2``: the reader leaves early; no traceback, no message."""
    rng = random.Random(0)
    path = tmp_path / "big.amr"
    path.write_text("\n\n".join(random_penman(rng, 30, reentrancies=3) for _ in range(100)), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "paraamr", "refocus", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.readline()  # more than a pipe buffer is left to write
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, stderr  # 128 + SIGPIPE, as a shell reports `head`'s writer
    assert stderr == ""


def test_refocus_writes_variants_as_it_makes_them(tmp_path):
    """Before: every variant of a 20,000-node graph was held (out of memory, nothing written)."""
    star = "(r / root " + " ".join(f":op{i} (n{i} / thing)" for i in range(1, 20000)) + ")"
    (tmp_path / "huge.amr").write_text(f"# ::id huge\n{star}\n\n(c / cat :mod (b / big))\n")
    done = subprocess.run(
        [sys.executable, "-m", "paraamr", "refocus", "huge.amr"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and done.stdout.count("# ::focus") == 1  # the next graph's
    assert "graph 1 (id huge): more than 500 nodes (--max-amr-nodes 500)" in done.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "paraamr", "refocus", "huge.amr", "--max-amr-nodes", "20000"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        first = b""
        while b"\n\n" not in first:
            first += proc.stdout.read1(1 << 16)
        time.sleep(2)
        rss = psutil.Process(proc.pid).memory_info().rss
        assert proc.poll() is None and first.startswith(b"# ::id huge")  # written while making more
        assert rss < 400 * 2**20, rss
    finally:
        proc.kill()
        proc.communicate()


def test_a_file_starting_with_a_byte_order_mark_is_read_as_without(tmp_path, capsys):
    """A graph file saved with a UTF-8 BOM gives the variants of the same file without it."""
    path = tmp_path / "g.amr"
    path.write_text(PAPER, encoding="utf-8")
    assert main(["refocus", str(path)]) == 0
    plain = capsys.readouterr().out
    path.write_bytes(b"\xef\xbb\xbf" + PAPER.encode())
    assert main(["refocus", str(path)]) == 0
    assert capsys.readouterr().out == plain
