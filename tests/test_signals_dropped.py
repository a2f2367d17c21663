"""``paraamr.signals`` in one process: a signal whose exception Python dropped is not lost."""

from __future__ import annotations

import os
import signal
import weakref

import pytest

from paraamr.signals import Interrupted, check, critical, handled, interrupted


class _Box:
    pass


def _drop_a_signal(signum: int) -> None:
    """Send ``signum`` from inside a weakref callback, where Python drops the handler's exception."""
    box = _Box()
    ref = weakref.ref(box, lambda _: os.kill(os.getpid(), signum))
    del box
    assert ref() is None


def test_check_raises_the_signal_python_dropped_and_nothing_is_printed(capfd):
    """Before: augment's SIGTERM landed in a WeakKeyDictionary callback, Python printed "Exception
    ignored in ..." with a traceback, and the run went on to write its output and exit 0."""
    with handled():
        check()  # no signal yet: nothing
        _drop_a_signal(signal.SIGTERM)
        assert interrupted() == signal.SIGTERM  # still here: the exception was dropped
        with pytest.raises(Interrupted) as err:
            check()
    assert err.value.status == 143
    assert "Exception ignored" not in capfd.readouterr().err


def test_check_waits_for_the_end_of_a_critical_block():
    with handled(), pytest.raises(Interrupted), critical():
        _drop_a_signal(signal.SIGINT)  # inside the block the handler only notes it
        check()  # the block's end raises it, not this
        reached = True
    assert reached
