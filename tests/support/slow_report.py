"""Tests that took over :data:`LIMIT` seconds without the ``slow`` mark, listed at the end of the run
(a plugin of tests/conftest.py). Every test over 10 s is marked ``slow``; the list says which are not
(yet), from this run's own timings, without failing it: a loaded machine makes any test slower."""

from __future__ import annotations

from collections import defaultdict

#: Seconds (setup, call and teardown together) above which a test should carry ``@pytest.mark.slow``.
LIMIT = 10.0

_SECONDS: dict[str, float] = defaultdict(float)
_UNMARKED: set[str] = set()


def pytest_runtest_logreport(report):
    """Each phase's report, where the run is summed up (the controller, under pytest-xdist)."""
    _SECONDS[report.nodeid] += report.duration
    if "slow" not in report.keywords:
        _UNMARKED.add(report.nodeid)


def pytest_terminal_summary(terminalreporter):
    over = sorted((s, n) for n, s in _SECONDS.items() if s > LIMIT and n in _UNMARKED)
    if not over:
        return
    write = terminalreporter.write_line
    write("")
    write(f"tests over {LIMIT:.0f} s without the slow mark (this run's timings): {len(over)}")
    for seconds, nodeid in reversed(over):
        write(f"{seconds:7.1f} s  {nodeid}")
