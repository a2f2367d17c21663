"""The extras ``setup.cfg`` declares and the packages :func:`paraamr.extras.require` looks for agree:
a command refused for a missing package names the extra that brings it, and an extra's install
brings what its commands import."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

from paraamr.extras import EXTRAS

SETUP_CFG = Path(__file__).parents[1] / "setup.cfg"
#: Distribution names whose import name is not the name with "_" for "-".
IMPORT_NAMES = {"scikit-learn": "sklearn"}
#: Installed by an extra, not required by it: without it the models run on transformers (a warning).
OPTIONAL = {"ctranslate2"}


def declared() -> dict[str, set[str]]:
    cfg = configparser.ConfigParser()
    cfg.read(SETUP_CFG)
    extras = {}
    for extra, lines in cfg["options.extras_require"].items():
        names = {re.split(r"[<>=!~;\[ ]", line.strip())[0].lower() for line in lines.strip().splitlines()}
        extras[extra] = {IMPORT_NAMES.get(n, n.replace("-", "_")) for n in names}
    return extras


def test_each_extra_brings_exactly_the_packages_its_commands_look_for():
    extras = declared()
    for extra, modules in EXTRAS.items():
        assert set(modules) == extras[extra] - OPTIONAL, extra
    # transformers' Trainer needs accelerate: `quality train` failed after its triplets with an
    # internal error on an install of paraamr[quality] alone
    assert "accelerate" in extras["quality"]


def test_all_and_test_bring_every_extra():
    extras = declared()
    every = set().union(*(extras[extra] for extra in EXTRAS))
    assert every <= extras["all"] and every <= extras["test"]
