"""A run's plots replace the old ones as a set (:func:`paraamr.plots.claim_plots`)."""

from __future__ import annotations

import pytest

from paraamr.plots import claim_plots, figure
from paraamr.signals import Interrupted

pytest.importorskip("matplotlib")


def _draw(path, values):
    with figure(path, "t", "x", "y") as ax:
        ax.hist(values, bins=3)


def test_a_run_stopped_between_two_plots_leaves_the_old_set_whole(tmp_path):
    """Before: the first plot was the new one and the second the old (each file atomic, not the set)."""
    names = ["a.png", "b.png"]
    with claim_plots(tmp_path, names, overwrite=False, command="stats"):
        _draw(tmp_path / "a.png", [1, 2, 2])
        _draw(tmp_path / "b.png", [1, 2, 2])
    old = {n: (tmp_path / n).read_bytes() for n in names}
    with pytest.raises(Interrupted), claim_plots(tmp_path, names, overwrite=True, command="stats"):
        _draw(tmp_path / "a.png", [5, 6, 7, 7, 7])
        raise Interrupted()  # Ctrl-C before the second plot
    assert {n: (tmp_path / n).read_bytes() for n in names} == old
    assert sorted(p.name for p in tmp_path.iterdir()) == names  # no temporary file, no lock left
    with claim_plots(tmp_path, names, overwrite=True, command="stats"):
        _draw(tmp_path / "a.png", [5, 6, 7, 7, 7])
        _draw(tmp_path / "b.png", [5, 6, 7, 7, 7])
        assert {n: (tmp_path / n).read_bytes() for n in names} == old  # not yet: at the end, together
    assert all((tmp_path / n).read_bytes() != old[n] for n in names)


def test_a_run_that_draws_nothing_leaves_none_of_the_folders_it_made(tmp_path):
    """Before: ``--plots runs/a/plots`` of a run that failed left ``runs/a`` (only the last folder went)."""
    (tmp_path / "kept").mkdir()
    for given in (tmp_path / "runs" / "a" / "plots", tmp_path / "kept" / "plots"):
        with pytest.raises(Interrupted), claim_plots(given, ["a.png"], overwrite=False, command="stats"):
            raise Interrupted()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"] and not any((tmp_path / "kept").iterdir())
