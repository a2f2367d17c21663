"""The settings are declared once (:mod:`paraamr.settings`): generate's options, the card's settings
rows, the summary's settings and the resume state all list exactly the dataclasses' fields, so that
none of them can drift from the others."""

from __future__ import annotations

import argparse
import json
from dataclasses import fields

import pytest

from paraamr.builder.partition import Plan
from paraamr.builder.status import RunStatus
from paraamr.builder.summary import summarize
from paraamr.card import record_settings
from paraamr.commands.generate import build_parser, settings_from_args
from paraamr.errors import UsageError
from paraamr.options import option_flag
from paraamr.settings import PAPER, RecordSettings, RunSettings

RECORD = [f.name for f in fields(RecordSettings)]
RUN = [f.name for f in fields(RunSettings)]
#: What a run folder saved before the settings were split into three parts (written out by hand
#: from the record of such a run): the resume state keeps this layout.
SAVED = {
    "parser_model": "parse_xfm_bart_large", "realizer_model": "generate_t5wtense", "lm_model": "gpt2",
    "similarity_model": None, "quality_model": None, "max_perplexity": None,
    "max_relative_perplexity": None, "min_similarity": None, "min_quality": None, "foci": "all",
    "foci_rule": "skip-structural", "seed": 0, "heuristic": False, "mod_as_domain": False,
    "linearization": "paraamr", "tagging": "untagged", "max_chars": 1000, "max_amr_nodes": 500,
    "max_amr_depth": 100, "num_beams": None, "dtype": None, "backend": "transformers",
    "compute_type": "auto", "input": "/data/in.txt", "input_format": None, "text_column": "text",
    "dataset": None, "dataset_config": None, "dataset_split": None, "amr_input": None, "split": "train",
    "validation_fraction": 0.0, "test_fraction": 0.0,
}  # fmt: skip


def test_the_parser_has_one_option_per_field_named_by_the_field():
    flags: dict[str, list[str]] = {}
    for action in build_parser()._actions:
        flags.setdefault(action.dest, []).extend(action.option_strings)
    for f in fields(RecordSettings) + fields(RunSettings):
        assert option_flag(f) in flags.get(f.name, []), f.name
    own = set(flags) - set(RECORD) - set(RUN)  # the command's own options, not settings
    assert own == {
        "help", "output", "preset", "license", "overwrite", "shard", "finalize", "executor", "tasks",
        "workers", "slurm_partition", "slurm_time", "slurm_cpus", "slurm_gpus", "push_to_hub", "private",
        "revision", "token", "dry_run", "quiet",
    }  # fmt: skip


def test_the_parser_defaults_are_the_dataclass_defaults():
    record, run = settings_from_args(build_parser().parse_args([]))
    assert (record, run) == (RecordSettings(), RunSettings())
    given = [
        "--foci",
        "3",
        "--no-download",
        "--heuristic-foci",
        "--lm-batch-size",
        "5",
        "--test-fraction",
        ".5",
    ]
    record, run = settings_from_args(build_parser().parse_args(given))
    assert (record.foci, record.heuristic, record.test_fraction) == (3, True, 0.5)
    assert (run.download, run.lm_batch_size) == (False, 5)


def test_a_model_folder_is_one_model_however_its_path_is_typed(tmp_path, monkeypatch):
    """A local model folder was compared as typed, so a resume from another folder, or with
    ``../x/lm`` for ``/abs/x/lm``, was refused as another model; a name stays a name."""
    (tmp_path / "models" / "lm").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "models")
    typed = ["lm", "../models/lm", str(tmp_path / "models" / "lm")]
    models = {settings_from_args(build_parser().parse_args(["--lm-model", t]))[0].lm_model for t in typed}
    assert models == {str((tmp_path / "models" / "lm").resolve())}
    assert settings_from_args(build_parser().parse_args(["--lm-model", "gpt2"]))[0].lm_model == "gpt2"


def test_the_card_lists_every_record_setting_and_no_run_setting():
    values = {**RecordSettings(similarity_model="e", quality_model="q", dtype="float16").as_dict()}
    values.update(
        input="in.txt",
        input_format="txt",
        dataset="d",
        dataset_config="c",
        dataset_split="s",
        amr_input="g.amr",
    )
    values.update(
        {
            k: 1
            for k in (
                "max_perplexity",
                "max_relative_perplexity",
                "min_similarity",
                "min_quality",
                "num_beams",
            )
        }
    )
    summary = {"settings": {**values, **RunSettings().as_dict()}}
    assert all(v is not None for v in values.values())
    rows = [name for name, _ in record_settings(summary)]
    labels = {
        "parser_model": "AMR parser",
        "realizer_model": "AMR-to-text realizer",
        "lm_model": "perplexity LM",
    }
    labels.update(similarity_model="similarity embedder", quality_model="quality model")
    assert rows == [labels.get(name, name) for name in RECORD]
    assert not set(rows) & set(RUN)


def test_the_summary_holds_every_setting(tmp_path):
    status = RunStatus({"record": RecordSettings().as_dict()}, 1, Plan(tmp_path, 1, {}), {}, {})
    summary = summarize(tmp_path, status, RunSettings(), 0.0)
    assert sorted(json.loads(json.dumps(summary))["settings"]) == sorted(RECORD + RUN)


def test_a_saved_record_reads_back_unchanged():
    """A run folder's saved record resumes: the fields are those saved before, and reading it back
    gives settings with no differences from the same options given again."""
    assert sorted(RECORD) == sorted(SAVED)
    saved = RecordSettings.from_dict(SAVED)
    assert saved.as_dict() == SAVED
    assert (
        saved.differences(RecordSettings(input="/data/in.txt", tagging="untagged", backend="transformers"))
        == []
    )


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"max_chars": 0}, "RecordSettings: max_chars must be an integer > 0, got 0"),
        ({"max_amr_depth": 950}, r"max_amr_depth must be an integer in \[1, 400\], got 950"),
        ({"dtype": "float64"}, "dtype must be one of float32, bfloat16, float16, got 'float64'"),
        ({"validation_fraction": 1.5}, r"validation_fraction must be a finite number in \[0, 1\]"),
        ({"min_similarity": float("nan"), "similarity_model": "e"}, "min_similarity must be a finite"),
        # before: taken, and formatted into the foci draw's seed string (True and 1 drew apart)
        ({"seed": "abc"}, "seed must be an integer, got 'abc'"),
        ({"seed": True}, "seed must be an integer, got True"),
        ({"foci": 0}, "RecordSettings: foci must be 'all' or a positive integer, got 0"),
        # before: taken, and "no" counted as true
        ({"verbose": "no"}, "RunSettings: verbose must be True or False, got 'no'"),
        ({"pipelined": "no"}, "pipelined must be True or False, got 'no'"),
    ],
)
def test_the_python_api_is_checked_as_the_options_are(given, message):
    """Checked as the options are, and named as the caller wrote them (before: `--max-chars` to a
    caller who wrote max_chars=0)."""
    from paraamr.settings import RunSettings

    make = RunSettings if {"verbose", "pipelined"} & set(given) else RecordSettings
    with pytest.raises(UsageError, match=message) as err:
        make(**given)
    assert "--" not in str(err.value)


def test_a_value_that_looks_like_an_option_is_quoted_as_given():
    with pytest.raises(UsageError, match=r"the input is a--input\.txt\)"):
        RecordSettings(text_column="x", input="a--input.txt")


def test_a_command_names_its_options_in_the_same_errors(capsys):
    """The same checks under `paraamr generate` name the options the user typed."""
    from paraamr.cli import main

    assert main(["generate", "--input", "x.txt", "--output", "o", "--foci", "0", "--dry-run"]) == 2
    assert "paraamr generate: --foci must be 'all' or a positive integer, got 0" in capsys.readouterr().err


def test_a_preset_value_is_told_from_a_default():
    """Only the options with a paper value are absent unless given: the preset refuses a clash with
    what was given, never with a default."""
    suppressed = {a.dest for a in build_parser()._actions if a.default is argparse.SUPPRESS}
    assert suppressed - {"help"} == set(PAPER)
    paper = settings_from_args(build_parser().parse_args(["--preset", "paper", "--seed", "4"]))[0]
    assert paper == RecordSettings.paper(seed=4)


def test_input_paths_are_made_absolute_with_the_home_folder_expanded(tmp_path, monkeypatch):
    """A quoted ``~/in.txt`` (no shell to expand it) is the file in the home folder, not a folder
    named ``~`` in the working one; a pipe's path (``<(...)``: /dev/fd/N) is kept as given, not
    resolved to the kernel's ``pipe:[N]`` name."""
    import os

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "in.txt").write_text("Hi.\n")
    record, _ = settings_from_args(build_parser().parse_args(["--input", "~/in.txt"]))
    assert record.input == str(tmp_path / "in.txt")
    read, write = os.pipe()
    try:
        record, _ = settings_from_args(build_parser().parse_args(["--input", f"/dev/fd/{read}"]))
        assert record.input == f"/dev/fd/{read}"
    finally:
        os.close(read), os.close(write)


def test_an_input_format_that_is_its_suffix_s_is_the_same_run():
    """``--input-format txt`` on a .txt input was refused on resume as a change ('was None, now txt')."""
    assert RecordSettings(input="in.txt", input_format="txt") == RecordSettings(input="in.txt")
    assert RecordSettings(input="-", input_format="txt").differences(RecordSettings(input="-")) == []
    assert RecordSettings(input="in.dat", input_format="csv").input_format == "csv"
