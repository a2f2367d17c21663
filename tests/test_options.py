"""Command-line parsing shared by ``generate.py`` and the ``paraamr`` commands (:mod:`paraamr.options`)."""

from __future__ import annotations

import pytest


def test_generate_and_paraamr_share_one_argument_parser():
    from paraamr import cli
    from paraamr.commands import generate
    from paraamr.options import ArgumentParser

    assert type(generate.build_parser()) is ArgumentParser
    assert type(cli.build_parser()) is ArgumentParser


@pytest.mark.parametrize("option", ["--tok", "--toke", "--shar"])
def test_an_abbreviated_option_is_refused_not_saved_with_the_run(option, tmp_path, capsys):
    """argparse took ``--toke`` for ``--token``; the run saved its command line with the token
    (settings.json) and ``paraamr finalize`` printed it, since only ``--token`` itself is left out
    of a saved command (and ``--shar`` was not made the ``{shard}`` of each shard's command)."""
    from paraamr.cli import main

    (tmp_path / "in.txt").write_text("A sentence.\n")
    argv = ["generate", "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "out")]
    plain = ["plainSecretNoPrefix987"] if "--token".startswith(option) else []  # (no pattern finds it)
    for secret in ("hf_abbreviatedSecret0123", *plain):
        with pytest.raises(SystemExit) as stop:
            main([*argv, option, secret])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert f"unrecognized arguments: {option} ***" in err and "Secret" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "pairs.tsv", "--state-dir", "afile/state"],
        ["models", "list", "--cache-dir", "afile/cache"],
    ],
)
def test_a_folder_under_a_file_is_named_as_such(argv, tmp_path, monkeypatch, capsys):
    """Before: `evaluate --state-dir afile/st` said it could not read an evaluation state and to
    delete afile/st/.paraamr/evaluate, which cannot be done."""
    from paraamr.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("mine\n")
    (tmp_path / "pairs.tsv").write_text("A cat sat.\tA cat was sitting.\n")
    try:
        status = main(argv)
    except SystemExit as usage:  # argparse's own refusal of an option's value
        status = usage.code
    assert status == 2 and "afile is a file, not a folder" in capsys.readouterr().err
    assert (tmp_path / "afile").read_text() == "mine\n"
