"""Token affixes for word-level augmentation; WordNet synonyms live in :mod:`paraamr.lexicon`.

:func:`synonyms` and :func:`match_case` are re-exported from :mod:`paraamr.lexicon` (the package's
one WordNet module, shared with ``paraamr.quality``). :func:`split_affixes` separates a token's
punctuation from its word, so ``"price,"`` is looked up as ``price``.

>>> split_affixes('"Hello,"')
('"', 'Hello', ',"')
>>> split_affixes("...")
('...', '', '')
"""

from __future__ import annotations

import re

from paraamr.lexicon import _wordnet, match_case, synonyms  # noqa: F401  (re-exported)

__all__ = ["match_case", "split_affixes", "synonyms"]

_AFFIXES = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)


def split_affixes(token: str) -> tuple[str, str, str]:
    """``(leading punctuation, word, trailing punctuation)`` of a whitespace-free token."""
    match = _AFFIXES.match(token)
    assert match is not None  # the pattern matches every string
    prefix, word, suffix = match.groups()
    if not word:  # all punctuation: keep it whole as the prefix
        return token, "", ""
    return prefix, word, suffix
