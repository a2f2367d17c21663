"""Command-line parsing shared by ``generate.py`` and the ``paraamr`` commands (:mod:`paraamr.options`)."""

from __future__ import annotations


def test_generate_and_paraamr_share_one_argument_parser():
    from paraamr import cli
    from paraamr.commands import generate
    from paraamr.options import ArgumentParser

    assert type(generate.build_parser()) is ArgumentParser
    assert type(cli.build_parser()) is ArgumentParser
