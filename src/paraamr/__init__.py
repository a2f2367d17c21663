"""paraamr: build, load, publish and measure ParaAMR-style paraphrase corpora.

The public API is importable from here; each name comes from the module that owns it, imported on
first use, so ``import paraamr`` and ``paraamr --help`` stay instant (torch, transformers, datasets
and evaluate load only when a name that needs them is touched).

>>> import paraamr
>>> paraamr.RecordSettings.paper().linearization
'penman'
>>> paraamr.Signature
<class 'paraamr.signature.Signature'>
>>> "filter_records" in dir(paraamr), "Path" in dir(paraamr), "card" in dir(paraamr)
(True, False, True)
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
    "RecordSettings": "paraamr.settings",
    "RunSettings": "paraamr.settings",
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
    "filter_records": "paraamr.filters",
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
        if name in _submodules():  # ``paraamr.card`` without importing it first
            return importlib.import_module(f"paraamr.{name}")
        raise AttributeError(f"module 'paraamr' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    """The public names: ``__all__`` and the submodules (not this module's own imports)."""
    return sorted({*__all__, *_submodules()})


def _submodules() -> set[str]:
    from pkgutil import iter_modules

    return {m.name for m in iter_modules(__path__) if not m.name.startswith("_")}


def metric_path(name: str) -> str:
    """Return the folder of the evaluate module ``name``, for ``evaluate.load(metric_path(name))``.

    The modules ship inside the package; the repository's ``metrics/`` folder is a link to them.

    >>> metric_path(".")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown metric '.'; known metrics: lexical_diversity, ..., ted_diversity
    """
    known = sorted(p.name for p in _METRICS_DIR.iterdir() if (p / f"{p.name}.py").is_file())
    if name not in known:  # "", ".", "../metrics": folders, not metrics
        raise ValueError(f"unknown metric {name!r}; known metrics: {', '.join(known) or 'none'}")
    return str(_METRICS_DIR / name)
