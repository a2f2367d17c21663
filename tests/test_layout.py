"""The import graph of ``src/paraamr`` has no upward arrow and no cycle between rooms (see
docs/dev/MAP.md).

Every ``import`` in the package is read with :mod:`ast`, function-level (lazy) imports included,
so a heavy import moved inside a function still counts as an arrow. A *room* is a subpackage or a
top-level module of ``paraamr`` (``builder``, ``card``, ``metrics``, ...): arrows inside one room
may point either way within its layers, but no two rooms may reach each other. And no unused
parameter in the builder, the layout, the locks or the entry point (ruff's ARG rules).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "paraamr"

#: Layers, lowest first: a module may import its own layer and the layers below, never above.
LAYERS: list[set[str]] = [
    {"errors", "report", "failures", "records", "signature", "wordnet", "lexicon", "options"}
    | {"atomic", "layout", "locks", "signals", "progress", "texts", "outputs", "extras", "plots", "network"}
    | {"tasks"},
    {"amr", "models"},
    {"builder.rows", "builder.readers", "builder.rolling", "builder.folder", "settings", "metrics", "stats"}
    | {"sources", "filters", "builder.counts", "builder.partition"},
    {"builder.pipeline", "quality", "card", "dataset", "builder.hub", "exports"},
    {"builder.stages", "builder.state", "builder.checks", "builder.tracking", "builder.summary"}
    | {"builder.shards", "builder.status", "builder.run", "augment"},
    {"executors", "metric_modules"},
    {"commands", "cli", "__main__", "generate", "evaluate"},
]


def _module_name(path: Path, src: Path = SRC) -> str:
    parts = path.relative_to(src).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _unit(module: str) -> str | None:
    """The layer unit of a ``paraamr...`` module name (``paraamr.builder.run`` -> ``builder.run``)."""
    parts = module.split(".")
    if parts[0] != "paraamr" or module in ("paraamr", "paraamr.builder"):
        return None  # the packages' own __init__ files: the public API and a docstring
    name = ".".join(parts[1:3]) if parts[1] == "builder" and len(parts) > 2 else parts[1]
    for layer in LAYERS:
        if name in layer:
            return name
    raise AssertionError(f"{module}: not in any layer of tests/test_layout.py; place it there")


def _level(unit: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def _imports(path: Path, src: Path = SRC) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = _module_name(path, src)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base in ("paraamr", "paraamr.builder"):
                # ``from paraamr import amr`` names a submodule (or an attribute of the package API)
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            else:
                found.append((node.lineno, base))
    return found


def _is_attribute(target: str) -> bool:
    """``paraamr.metric_path`` / ``paraamr.__version__``: names of the package API, not modules."""
    parent, _, name = target.rpartition(".")
    return parent == "paraamr" and not (PACKAGE / name).is_dir() and not (PACKAGE / f"{name}.py").is_file()


def _arrows() -> list[tuple[str, str, str]]:
    arrows = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _unit(_module_name(path))
        if source is None:  # paraamr/__init__.py: the public API re-exports lazily
            continue
        for line, target in _imports(path):
            unit = _unit(target) if target.startswith("paraamr.") and not _is_attribute(target) else None
            if unit is not None and unit != source:
                arrows.append((f"{path.relative_to(SRC)}:{line}", source, unit))
    return arrows


def test_no_upward_arrow():
    upward = [f"{where}: {src} -> {dst}" for where, src, dst in _arrows() if _level(dst) > _level(src)]
    assert not upward, "imports pointing up the layers:\n" + "\n".join(upward)


@pytest.mark.parametrize(
    ("source", "forbidden"),
    [
        # the pipeline knows no formats and receives its stages: no readers, writers or quality
        ("builder.pipeline", {"builder.readers", "builder.folder", "quality", "models"}),
        ("models", {"amr"}),
    ],
)
def test_named_arrows_absent(source, forbidden):
    present = {dst for _, src, dst in _arrows() if src == source}
    assert not present & forbidden


def _room(module: str) -> str | None:
    """The room of a ``paraamr...`` module name: its subpackage or top-level module."""
    parts = module.split(".")
    return parts[1] if parts[0] == "paraamr" and len(parts) > 1 else None


def _room_arrows(src: Path = SRC) -> set[tuple[str, str]]:
    """``(room, room)`` for every import from one room into another, under ``src/paraamr``."""
    arrows = set()
    for path in sorted((src / "paraamr").rglob("*.py")):
        source = _room(_module_name(path, src))
        for _, target in _imports(path, src):
            room = _room(target)
            if (
                source
                and room
                and room != source
                and ((src / "paraamr" / room).is_dir() or (src / "paraamr" / f"{room}.py").is_file())
            ):
                arrows.add((source, room))
    return arrows


def _cycles(arrows: set[tuple[str, str]]) -> set[frozenset[str]]:
    """The pairs of rooms that reach each other (directly or through other rooms)."""
    reach = {a: {b for x, b in arrows if x == a} for a, _ in arrows}
    changed = True
    while changed:
        changed = False
        for seen in reach.values():
            more = set().union(*(reach.get(r, set()) for r in seen)) - seen
            if more:
                seen |= more
                changed = True
    return {frozenset((a, b)) for a, seen in reach.items() for b in seen if a != b and a in reach.get(b, ())}


def test_no_two_rooms_import_each_other():
    cycles = _cycles(_room_arrows())
    pairs = sorted(" <-> ".join(sorted(c)) for c in cycles)
    assert not cycles, "rooms that import each other: " + ", ".join(pairs)


def test_a_planted_cycle_between_rooms_is_found(tmp_path):
    """The rule above can fail: two rooms (a package and a module) importing each other, one lazily."""
    pkg = tmp_path / "paraamr"
    (pkg / "alpha").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "alpha" / "__init__.py").write_text("")
    (pkg / "alpha" / "one.py").write_text("from paraamr.beta import helper\n")
    (pkg / "beta.py").write_text("def helper():\n    from paraamr.alpha import one\n")
    (pkg / "gamma.py").write_text("import paraamr.beta\n")
    assert _cycles(_room_arrows(tmp_path)) == {frozenset({"alpha", "beta"})}


def test_layers_cover_every_module():
    units = {_unit(_module_name(p)) for p in PACKAGE.rglob("*.py")} - {None}
    assert units <= set().union(*LAYERS)


# -- docs/dev/MAP.md's module table: module -> what it is -> its tests ----------------------------
ROOT = SRC.parent
MAP = ROOT / "docs" / "dev" / "MAP.md"
MAP_MARKS = (
    "<!-- module table: written by `python tests/test_layout.py`; a test checks it is current -->",
    "<!-- /module table -->",
)


def _summary(path: Path) -> str:
    """The first sentence of a module's docstring, on one line, safe in a table cell."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    cut = first.find(". ")
    return (first[: cut + 1] if cut > 0 else first).replace("|", "\\|")


def _tests_of() -> dict[str, set[str]]:
    """``{module: {test files}}``: the test files that import a module (or a name in it), and, for
    a command module, those that run that command through ``paraamr.cli``."""
    found: dict[str, set[str]] = {}
    for test in sorted((ROOT / "tests").rglob("*.py")):
        text = test.read_text(encoding="utf-8")
        where = str(test.relative_to(ROOT))
        for _, target in _imports(test, ROOT / "tests"):
            found.setdefault(target, set()).add(where)
        if "paraamr.cli" in text or "-m paraamr" in text or '"-m", "paraamr"' in text:
            for command in (PACKAGE / "commands").glob("*.py"):
                if f'"{command.stem}"' in text:
                    found.setdefault(f"paraamr.commands.{command.stem}", set()).add(where)
    return found


def module_table() -> str:
    """The table of every module of the package: what it is, where its tests are."""
    tests = _tests_of()
    rows = ["| module | what it is | tests |", "| --- | --- | --- |"]
    for path in sorted(PACKAGE.rglob("*.py")):
        found = sorted(tests.get(_module_name(path), set()))
        if ">>> " in path.read_text(encoding="utf-8"):
            found.insert(0, "doctests")
        cell = ", ".join(f"`{t.removeprefix('tests/')}`" if t != "doctests" else t for t in found) or "–"
        rows.append(f"| `{path.relative_to(PACKAGE)}` | {_summary(path)} | {cell} |")
    return "\n".join(rows)


def _map_with_table(text: str) -> str:
    start, end = MAP_MARKS
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{module_table()}\n{end}{tail}"


#: The most lines a module may have (one concern per module; issue 25).
MAX_LINES = 500


def test_no_module_is_over_500_lines():
    sizes = {
        str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_module_table_of_the_map_is_current():
    """docs/dev/MAP.md lists every module with its size, what it is and its tests (regenerate it
    with ``python tests/test_layout.py``)."""
    text = MAP.read_text(encoding="utf-8")
    assert text == _map_with_table(text), "docs/dev/MAP.md is stale: run `python tests/test_layout.py`"


if __name__ == "__main__":
    MAP.write_text(_map_with_table(MAP.read_text(encoding="utf-8")), encoding="utf-8")


def test_the_builder_has_no_unused_parameter():
    """ruff's flake8-unused-arguments rules over the builder, the layout, the locks and the entry
    points (interface-bound parameters elsewhere are named ``_x`` or kept for their callers)."""
    paths = ["src/paraamr/builder", "src/paraamr/layout.py", "src/paraamr/locks.py", "src/paraamr/cli.py"]
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "ARG", "--no-cache", *paths],
        cwd=SRC.parent,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout
