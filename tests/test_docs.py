"""The commands in README.md and docs/*.md run as written.

Every fenced ``bash`` block is marked on the line before it: ``<!-- runnable -->`` (run here) or
``<!-- not runnable: REASON -->`` (a reason is required; "the same block runs in PATH" is checked:
PATH has the identical block, runnable). A ``python`` block marked runnable runs too. The runnable
blocks of a file run in order, as a reader follows it, in one sandbox folder per file (offline, no
model cache of the machine) holding only what the repository ships: ``examples/`` (every input
a block reads is there) and ``generate.py``. Absolute ``/tmp/`` paths in a block are moved into the
sandbox, so parallel runs of the suite do not share them; ``paraamr`` is ``python -m paraamr`` of
this checkout. Every ``paraamr push A B`` in the docs puts the repo id first.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = re.compile(r"^<!-- (runnable|not runnable: (?P<reason>.*\S)) -->$")
SAME = re.compile(r"the same block runs in (\S+)$")


@dataclass
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    mark: str | None  # "runnable", "not runnable", or None
    reason: str | None

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, with the mark on the line before each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, n = [], 0
    while n < len(lines):
        opening = re.match(r"^(`{3,})(\w*)", lines[n])
        if not opening:
            n += 1
            continue
        end = next(i for i in range(n + 1, len(lines)) if lines[i].strip() == opening.group(1))
        previous = lines[n - 1].strip() if n else ""
        mark = MARK.match(previous)
        found.append(
            Block(
                path,
                n + 1,
                opening.group(2),
                "\n".join(lines[n + 1 : end]) + "\n",
                ("not runnable" if mark.group("reason") else "runnable") if mark else None,
                mark.group("reason") if mark else None,
            )
        )
        n = end + 1
    return found


ALL = [block for path in DOCS for block in blocks(path)]
RUNNABLE = {
    path: [b for b in ALL if b.path == path and b.mark == "runnable"]
    for path in DOCS
    if any(b.path == path and b.mark == "runnable" for b in ALL)
}


def test_every_bash_block_is_marked_runnable_or_not_with_a_reason():
    unmarked = [str(b) for b in ALL if b.language == "bash" and b.mark is None]
    assert unmarked == [], "mark each with <!-- runnable --> or <!-- not runnable: REASON -->"
    assert RUNNABLE, "no runnable block at all"
    for block in ALL:
        same = SAME.search(block.reason or "")
        if same:
            twins = [b for b in ALL if b.path == ROOT / same.group(1) and b.text == block.text]
            assert [b.mark for b in twins] == ["runnable"], f"{block}: no identical runnable block there"


def test_paraamr_push_takes_the_repo_id_first():
    """``paraamr push REPO_ID DIR`` (src/paraamr/commands/push.py), wherever the docs show it."""
    from paraamr.cli import build_parser

    shown = [
        (path.name, match.group(1), match.group(2))
        for path in DOCS
        for match in re.finditer(r"paraamr push (\S+) ([^\s`\]]+)", path.read_text(encoding="utf-8"))
    ]
    assert len(shown) >= 3
    for name, first, second in shown:
        args = build_parser().parse_args(["push", first, second])
        assert re.fullmatch(r"[\w<>.-]+/[\w<>.-]+", args.repo_id), (name, first, second)
        assert not re.fullmatch(r"[\w<>.-]+/[\w.-]+", args.folder), (name, first, second)


@pytest.fixture
def sandbox(tmp_path):
    """A folder with what the repository ships for the docs (see the module docstring), and its
    environment."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copy(ROOT / "generate.py", tmp_path / "generate.py")
    (tmp_path / "tmp").mkdir()
    bin_dir = tmp_path / "bin"  # `paraamr` of this checkout, whichever console script is installed
    bin_dir.mkdir()
    (bin_dir / "paraamr").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m paraamr "$@"\n')
    (bin_dir / "paraamr").chmod(0o755)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf-home"),
        "PARAAMR_CACHE": str(tmp_path / "paraamr-cache"),
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    return tmp_path, env


def test_every_example_a_block_names_is_shipped():
    """The runnable blocks read their inputs from ``examples/`` (the sandbox holds nothing else)."""
    named = {m for b in ALL if b.mark == "runnable" for m in re.findall(r"examples/[\w./-]*\w", b.text)}
    assert {"examples/sentences.txt", "examples/graphs.amr", "examples/ParaAMR_small.zip"} <= named
    assert [name for name in sorted(named) if not (ROOT / name).exists()] == []


#: How a process ends now and then, under load, after a streamed Parquet read has done all its work:
#: pyarrow's scanner threads torn down at interpreter exit (huggingface/datasets#7566,
#: apache/arrow#45214); a block that ends so is run once more.
ABORT_AT_EXIT = "terminate called without an active exception\n"


@pytest.mark.slow
@pytest.mark.parametrize("path", list(RUNNABLE), ids=lambda p: str(p.relative_to(ROOT)))
def test_runnable_blocks_run_as_written(path, sandbox):
    folder, env = sandbox
    for block in RUNNABLE[path]:
        text = block.text.replace("/tmp/", f"{folder}/tmp/")
        if block.language == "bash":
            command = ["bash", "-euo", "pipefail", "-c", text]
        elif block.language == "python":
            command = [sys.executable, "-c", text]
        else:
            pytest.fail(f"{block}: a runnable block must be bash or python, not {block.language!r}")
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
        if done.returncode == -signal.SIGABRT and done.stderr.endswith(ABORT_AT_EXIT):  # once more
            done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (
            f"{block} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
