"""Offline WordNet 3.0 for nltk, from Debian's ``wordnet-base`` and ``wordnet-sense-index``.

nltk's WordNet reader wants ``lexnames`` and ``index.sense`` beside the database files, in a
folder ``corpora/wordnet`` under a directory on ``nltk.data.path``. Debian ships the database in
``/usr/share/wordnet`` (``index.sense`` comes with ``wordnet-sense-index``) and lists the 45
lexicographer files only in the lexnames(5WN) man page. ``python -m paraamr.wordnet`` (the install
step of the README and ``.ci/run``) assembles the folder once.

>>> lines = lexnames_from_man(_SAMPLE_MAN)
>>> lines
['00\\tadj.all\\t3', '03\\tnoun.Tops\\t1', '29\\tverb.body\\t2', '02\\tadv.all\\t4']
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import sys
from functools import cache
from pathlib import Path

from paraamr.errors import ParaAMRError

DEBIAN_DIR = Path("/usr/share/wordnet")
DEBIAN_MAN = Path("/usr/share/man/man5/lexnames.5WN.gz")
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
_LINE = re.compile(r"^(\d\d)\t(\S+)\s*\t")
_SAMPLE_MAN = "00\tadj.all\tall adjective clusters\n03\tnoun.Tops\tx\n29\tverb.body\tx\n02\tadv.all\tx\n"
SETUP_HINT = (
    "WordNet is not set up for nltk: run `apt-get install wordnet-base wordnet-sense-index` "
    "and then `python -m paraamr.wordnet` (without root: `python -m nltk.downloader wordnet`)"
)


class WordNetMissing(ParaAMRError, LookupError):
    """nltk finds no WordNet; the message says how to set it up (:data:`SETUP_HINT`)."""


def lexnames_from_man(man_text: str) -> list[str]:
    """The ``lexnames`` lines (number, file name, syntactic category) listed in the man page."""
    lines = []
    for raw in man_text.splitlines():
        match = _LINE.match(raw)
        if match:
            number, name = match.groups()
            lines.append(f"{number}\t{name}\t{_CATEGORY[name.split('.')[0]]}")
    return lines


def default_target() -> Path:
    """Where the corpus goes: ``$NLTK_DATA`` if set, else ``~/nltk_data`` (both on nltk's path)."""
    return Path(os.environ.get("NLTK_DATA", "").split(os.pathsep)[0] or Path.home() / "nltk_data")


def install(target: Path | None = None, source: Path = DEBIAN_DIR, man: Path = DEBIAN_MAN) -> Path:
    """Assemble ``target/corpora/wordnet`` from the Debian files; returns that folder."""
    if not (source / "index.sense").is_file() or not man.is_file():
        raise FileNotFoundError(f"{source}/index.sense or {man} missing. {SETUP_HINT}")
    with gzip.open(man, "rt", encoding="utf-8") as stream:
        lexnames = lexnames_from_man(stream.read())
    if len(lexnames) != 45:
        raise ValueError(f"expected 45 lexicographer files in {man}, found {len(lexnames)}")
    folder = (target or default_target()) / "corpora" / "wordnet"
    folder.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.is_file():
            shutil.copyfile(path, folder / path.name)
    (folder / "lexnames").write_text("\n".join(lexnames) + "\n", encoding="utf-8")
    return folder


@cache
def wordnet():
    """nltk's WordNet corpus reader, with a clear error when the offline setup step was not run."""
    from nltk.corpus import wordnet as wn

    try:
        wn.ensure_loaded()
    except LookupError as err:
        raise WordNetMissing(SETUP_HINT) from err
    return wn


def main(argv: list[str] | None = None) -> int:
    """``python -m paraamr.wordnet [--target DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m paraamr.wordnet", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--target", type=Path, default=None, help="nltk data folder (default: $NLTK_DATA or ~/nltk_data)"
    )
    args = parser.parse_args(argv)
    folder = install(args.target)
    print(f"WordNet 3.0 for nltk installed in {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
