"""The hostile-input table's counts by command, printed at the end of the run (issue 14 item 6); a plugin
of tests/conftest.py, for tests/cli/test_hostile.py."""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict

import pytest

#: command -> outcome -> count, filled by :func:`pytest_runtest_makereport`.
OUTCOMES: dict[str, Counter] = defaultdict(Counter)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Where the test runs (a pytest-xdist worker): its case's command, on the report."""
    outcome = yield
    report = outcome.get_result()
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("case") if callspec else None
    if case is not None and hasattr(case, "command"):
        report.user_properties.append(("hostile_command", case.command))


def pytest_runtest_logreport(report):
    """Where the run is summed up (the controller, under pytest-xdist)."""
    command = dict(report.user_properties).get("hostile_command")
    if command is None:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        OUTCOMES[command][report.outcome] += 1


def pytest_terminal_summary(terminalreporter):
    if not OUTCOMES:
        return
    kinds = ("passed", "failed", "skipped")
    write = terminalreporter.write_line
    write("")
    write("hostile-input table (issue 14): cases by command")
    write(f"{'command':<16} {'cases':>5} " + " ".join(f"{k:>7}" for k in kinds))
    total: Counter = Counter()
    for command in sorted(OUTCOMES):
        counts = OUTCOMES[command]
        total.update(counts)
        write(f"{command:<16} {sum(counts.values()):>5} " + " ".join(f"{counts[k]:>7}" for k in kinds))
    write(f"{'all':<16} {sum(total.values()):>5} " + " ".join(f"{total[k]:>7}" for k in kinds))
    path = os.environ.get("PARAAMR_HOSTILE_REPORT")
    if path:
        with open(path, "w", encoding="utf-8") as stream:
            json.dump({c: dict(v) for c, v in OUTCOMES.items()}, stream, indent=2)
