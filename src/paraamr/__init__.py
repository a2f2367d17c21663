"""paraamr: build, load, publish and measure ParaAMR-style paraphrase corpora.

The public API is importable from here; each name comes from the module that owns it, imported on
first use, so ``import paraamr`` and ``paraamr --help`` stay instant (torch, transformers, datasets
and evaluate load only when a name that needs them is touched).

>>> import paraamr
>>> paraamr.RecordSettings.paper().max_perplexity
120.0
>>> paraamr.Signature
<class 'paraamr.signature.Signature'>
>>> paraamr.metric_path("no_such_metric")
Traceback (most recent call last):
...
ValueError: unknown metric 'no_such_metric'; known metrics: ...
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

try:
    __version__ = version("paraamr")
except PackageNotFoundError:  # running from a checkout that was not installed
    __version__ = "0.0.0"

_METRICS_DIR = Path(__file__).parent / "metric_modules"

#: Public name -> the module that defines it (imported by :func:`__getattr__` on first use).
_HOMES = {
    # making a corpus: settings, the stages and the pipeline that runs them
    "RecordSettings": "paraamr.builder.settings",
    "RunSettings": "paraamr.builder.settings",
    "Generator": "paraamr.builder.pipeline",
    "Stages": "paraamr.builder.pipeline",
    "load_stages": "paraamr.builder.stages",
    "make_generator": "paraamr.builder.stages",
    "Parser": "paraamr.models.parser",
    "Realizer": "paraamr.models.realizer",
    "PerplexityScorer": "paraamr.models.lm",
    "Embedder": "paraamr.models.embedder",
    "QualityScorer": "paraamr.quality",
    # AMR re-rooting
    "refocus": "paraamr.amr",
    "variants": "paraamr.amr",
    # loading and measuring
    "ParaAMR": "paraamr.dataset",
    "ParaAMRConfig": "paraamr.dataset",
    "Signature": "paraamr.signature",
    # errors
    "ParaAMRError": "paraamr.errors",
    "InputError": "paraamr.errors",
    "ModelNotFoundError": "paraamr.errors",
    "AMRError": "paraamr.errors",
}

__all__ = ["__version__", "metric_path", *_HOMES]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'paraamr' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


def metric_path(name: str) -> str:
    """Return the folder of the evaluate module ``name``, for ``evaluate.load(metric_path(name))``.

    The modules ship inside the package; the repository's ``metrics/`` folder is a link to them.
    """
    path = _METRICS_DIR / name
    if not path.is_dir():
        known = sorted(p.name for p in _METRICS_DIR.iterdir() if p.is_dir() and not p.name.startswith("_"))
        raise ValueError(f"unknown metric {name!r}; known metrics: {', '.join(known) or 'none'}")
    return str(path)
