"""Deprecated: the old home of the model registry, now split by concern (import from there).

- :mod:`paraamr.models.catalog`: known models, kinds, defaults and batch sizes;
- :mod:`paraamr.models.resolve`: where a model is on disk (:func:`resolve`, :func:`base_tokenizer`);
- :mod:`paraamr.models.download`: fetching (:func:`ensure`, :func:`fetch_release`, safe extraction);
- :mod:`paraamr.models.tiny`: ``make_tiny`` (test models; not re-exported here).

This module only re-exports those names for code not yet updated; it will go.

>>> from paraamr.models import resolve as module
>>> resolve is module.resolve
True
"""

from __future__ import annotations

from paraamr.models.catalog import AMRLIB_MODELS, KINDS, ReleaseModel, names
from paraamr.models.download import ensure, fetch_release, fetch_tokenizer
from paraamr.models.resolve import TOKENIZER_FILES, base_tokenizer, cache_root, resolve

download = fetch_release

__all__ = [
    "AMRLIB_MODELS",
    "KINDS",
    "TOKENIZER_FILES",
    "ReleaseModel",
    "base_tokenizer",
    "cache_root",
    "download",
    "ensure",
    "fetch_tokenizer",
    "names",
    "resolve",
]
