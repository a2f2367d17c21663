"""Defects found in the structure review of issue 25, each pinned by a test that failed before its fix:
(a) ``--trust-remote-code`` reaches the model check, (b) ``--overwrite`` removes the earlier run's
Table-2 row and plots, (c) ``generate.py`` and ``paraamr`` share one argument parser, (d) CPU
processes share the cores they may use, not the machine's, (e) no unused parameter in the builder."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tinyargs import model_args

from paraamr.builder.checks import check_run
from paraamr.builder.settings import RecordSettings
from paraamr.builder.state import RunFolder
from paraamr.errors import ParaAMRError

ROOT = Path(__file__).resolve().parents[2]
GRAPHS = [
    f"# ::id g{i}\n(s / say-01 :ARG0 (m / man) :ARG1 (t / thing :quant {i}) :ARG2 (w / woman))"
    for i in range(4)
]


def _foreign_parser(tiny_models, tmp_path) -> Path:
    """The tiny parser whose ``amrlib_meta.json`` names code that is not amrlib's own."""
    folder = tmp_path / "parser"
    shutil.copytree(tiny_models["parser"], folder)
    meta_path = folder / "amrlib_meta.json"
    meta = json.loads(meta_path.read_text())
    meta["inference_module"] = "my_lab.parsers"
    meta_path.write_text(json.dumps(meta))
    return folder


def test_a_trust_remote_code_reaches_the_model_check(tiny_models, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("The man spoke.\n")
    record = RecordSettings(
        input=str(text),
        parser_model=str(_foreign_parser(tiny_models, tmp_path)),
        realizer_model=str(tiny_models["generator"]),
        lm_model=str(tiny_models["lm"]),
        max_perplexity=None,
    )
    folder = RunFolder(tmp_path / "out", rank=0, num_processes=1)
    with pytest.raises(ParaAMRError, match=r"my_lab\.parsers.*--trust-remote-code"):
        check_run(record, folder)
    saved, mode = check_run(record, folder, trust_remote_code=True)  # the opt-in is honoured
    assert mode == "new" and saved["record"]["parser_model"] == record.parser_model


def _run(*argv: str) -> int:
    from entries import generate as main

    with contextlib.redirect_stderr(io.StringIO()):
        return main(list(argv))


def test_b_overwrite_removes_the_earlier_runs_table2_row_and_plots(tiny_models, tmp_path):
    graphs = tmp_path / "in.amr"
    graphs.write_text("\n\n".join(GRAPHS) + "\n")
    out = tmp_path / "out"
    args = ["--amr-input", str(graphs), "--output", str(out), "--no-progress", *model_args(tiny_models)]
    assert _run(*args) == 0
    from paraamr.card import update_card_metrics

    update_card_metrics(out, {"1-BLEU": 12.34}, {"bleu": "bleu|v:1"})
    plots = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert (out / "evaluation.json").is_file() and plots
    # the new run has no record at all (every graph is refused): it fails, and leaves nothing of the
    # earlier run that would speak for it (no Table-2 row, no card, no plot)
    graphs.write_text("(s / say-01 :ARG0 (m / man)\n\n(broken\n")
    assert _run(*args, "--overwrite") == 1
    assert json.loads((out / "summary.json").read_text())["counts"]["records"] == 0
    assert not (out / "evaluation.json").exists() and not (out / "README.md").exists()
    assert not [name for name in plots if (out / "plots" / name).exists()]


def test_c_generate_and_paraamr_share_one_argument_parser():
    from paraamr import cli
    from paraamr.commands import generate
    from paraamr.options import ArgumentParser

    assert type(generate.build_parser()) is ArgumentParser
    assert type(cli.build_parser()) is ArgumentParser


def test_d_cpu_processes_share_the_cores_they_may_use():
    """Under ``taskset`` (or cgroups, or Slurm) a process may use fewer cores than the machine has:
    its torch threads are its share of those, not of ``os.cpu_count()``."""
    code = (
        "import torch; from paraamr.builder.run import share_cores; "
        "torch.set_num_threads(8); share_cores(1); print(torch.get_num_threads())"
    )
    out = subprocess.run(
        ["taskset", "-c", "0", sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "1"


def test_e_the_builder_has_no_unused_parameter():
    """ruff's flake8-unused-arguments rules over the builder, the layout, the locks and the entry
    points (interface-bound parameters elsewhere are named ``_x`` or kept for their callers)."""
    paths = ["src/paraamr/builder", "src/paraamr/layout.py", "src/paraamr/locks.py", "src/paraamr/cli.py"]
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "ARG", "--no-cache", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout
