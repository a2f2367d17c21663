"""The one plot helper: PNG histograms (``paraamr stats``, ``paraamr evaluate``, the card), each
written atomically (a run's set of them at once), the check, before any work, that a run would
replace no plot it was not told to (``--overwrite``), and the hold of a plots folder while a run
writes into it (:func:`claim_plots`).

>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> with figure(d / "h.png", "Lengths", "tokens", "sentences") as ax:
...     _ = ax.hist([3, 4, 4, 5], bins=3)
>>> (d / "h.png").read_bytes()[:4]
b'\\x89PNG'
>>> try:
...     check_plot_files([d / "h.png"], overwrite=False)
... except InputError as err:
...     print(str(err).split(": ", 1)[1])
pass --overwrite to replace them, or choose another --plots folder
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from paraamr.atomic import atomic_file, temp_name
from paraamr.errors import InputError
from paraamr.signals import critical

__all__ = ["check_plot_files", "claim_plots", "figure"]

#: The lock a run holds in its plots folder (:func:`claim_plots`), removed when it lets go.
PLOTS_LOCK = ".plots.lock"
#: The plots drawn under a :func:`claim_plots` hold, to be put in place together.
_STAGED: contextvars.ContextVar[list[tuple[Path, Path]] | None]
_STAGED = contextvars.ContextVar("staged", default=None)


def check_plot_files(paths: Sequence[Path], *, overwrite: bool) -> None:
    """Refuse to replace the plot files ``paths`` unless ``overwrite`` (a symbolic link there, even a
    broken one, counts: it is replaced, never written through), a folder in a plot's place, and a
    plot folder that is a file. Nothing else in the folder is looked at."""
    folders = {Path(p).parent for p in paths}
    for folder in folders:
        if folder.exists() and not folder.is_dir():
            raise InputError(f"--plots {folder}: not a folder")
        made = next(p for p in (folder, *folder.parents) if p.exists())  # where the folder is, or goes
        if not os.access(made, os.W_OK):
            raise InputError(f"--plots {folder}: {made} cannot be written (read-only or not yours)")
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            raise InputError(f"{path}: is a folder, not a plot file")
    found = [p for p in paths if p.exists() or p.is_symlink()]
    if found and not overwrite:
        raise InputError(
            f"{found[0]} exists ({len(found)} of the plots): pass --overwrite to replace them, "
            "or choose another --plots folder"
        )


@contextlib.contextmanager
def claim_plots(
    folder: str | os.PathLike, names: Sequence[str], *, overwrite: bool, command: str
) -> Iterator[None]:
    """Hold the plots ``folder`` (``.plots.lock`` in it) while a run writes the plots ``names``
    there: a second run is refused in one line naming the folder, the plots are checked under the
    hold (:func:`check_plot_files`: two runs never both pass it), and the temporary files a killed
    run left beside them go. The :func:`figure` s drawn in the block replace their files together
    when it ends (a run stopped between two plots leaves the old set whole, never old and new
    mixed). The folders made for the hold go again when nothing was written into them.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()) / "runs" / "plots"
    >>> with claim_plots(d, ["h.png"], overwrite=False, command="stats"):
    ...     with claim_plots(d, ["h.png"], overwrite=False, command="stats"):
    ...         pass
    Traceback (most recent call last):
    ...
    paraamr.errors.FolderLocked: --plots ...plots: being written by pid ... paraamr stats
    >>> d.parent.exists()
    False
    """
    from paraamr.atomic import new_folders, remove_temps
    from paraamr.outputs import hold

    folder = Path(folder)
    paths = [folder / name for name in names]
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--plots {folder}: not a folder")
    staged: list[tuple[Path, Path]] = []  # (drawn, its place)
    with new_folders(folder):
        try:
            with hold(folder / PLOTS_LOCK, f"--plots {folder}", command=command, named=folder):
                check_plot_files(paths, overwrite=overwrite)
                for path in paths:
                    remove_temps(path)
                token = _STAGED.set(staged)
                try:
                    yield
                finally:
                    _STAGED.reset(token)
                with critical():  # all of them, or (stopped before) none
                    for drawn, path in staged:
                        os.replace(drawn, path)
        finally:
            for drawn, _ in staged:
                drawn.unlink(missing_ok=True)


@contextlib.contextmanager
def figure(path: Path, title: str, xlabel: str, ylabel: str) -> Iterator[Any]:
    """A 6x3.5 inch figure's axes to draw on; on leaving, the titles, whole-number counts on the y
    axis, and the PNG written to ``path`` atomically (its folder made when missing)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=100)
    try:
        yield ax
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        fig.tight_layout()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        staged = _STAGED.get()
        if staged is None:
            with atomic_file(path, durable=False) as tmp:
                fig.savefig(tmp, format="png")
        else:  # replaced with the others of the set when the hold ends (:func:`claim_plots`)
            drawn = temp_name(path)
            staged.append((drawn, path))
            fig.savefig(drawn, format="png")
    finally:
        plt.close(fig)
