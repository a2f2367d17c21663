"""paraamr: build, load, publish and measure ParaAMR-style paraphrase corpora.

Heavy libraries (torch, transformers, datasets, evaluate) are imported lazily by the modules that
need them, so ``import paraamr`` and ``paraamr --help`` stay instant.

>>> import paraamr
>>> paraamr.metric_path("no_such_metric")
Traceback (most recent call last):
...
ValueError: unknown metric 'no_such_metric'; known metrics: ...
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    __version__ = version("paraamr")
except PackageNotFoundError:  # running from a checkout that was not installed
    __version__ = "0.0.0"

_METRICS_DIR = Path(__file__).parent / "metric_modules"


def metric_path(name: str) -> str:
    """Return the folder of the evaluate module ``name``, for ``evaluate.load(metric_path(name))``.

    The modules ship inside the package; the repository's ``metrics/`` folder is a link to them.
    """
    path = _METRICS_DIR / name
    if not path.is_dir():
        known = sorted(p.name for p in _METRICS_DIR.iterdir() if p.is_dir() and not p.name.startswith("_"))
        raise ValueError(f"unknown metric {name!r}; known metrics: {', '.join(known) or 'none'}")
    return str(path)
