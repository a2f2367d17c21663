"""WordNet synonyms of English words: the one synonym lookup of the package.

:func:`synonyms` is shared by augmentation (REDA's SR and RI operators) and by paraphrase-quality
scoring (``paraamr.quality``): import it from here rather than querying WordNet again. It uses
nltk's reader set up offline by ``python -m paraamr.wordnet`` and caches answers per word.

A synonym of ``word`` is a lemma name of any WordNet synset of ``word`` (every part of speech, as
found by WordNet's morphology, so "dogs" finds the synsets of "dog") that

- is a single alphabetic word (``domestic_dog`` and ``dog-iron`` are left out, so one token stays
  one token),
- is not a proper name (lemma names with capitals, such as ``Price``, are left out),
- is neither ``word`` itself nor one of its base forms (``dog`` is not a synonym of ``dogs``).

Answers are lowercase, without repeats, in WordNet's order (senses by frequency, then lemmas).
:func:`split_affixes` separates a token's punctuation from its word, so ``"price,"`` is looked up
as ``price``.

>>> split_affixes('"Hello,"')
('"', 'Hello', ',"')
>>> split_affixes("...")
('...', '', '')
>>> match_case("cost", "Price"), match_case("cost", "PRICE"), match_case("cost", "price")
('Cost', 'COST', 'cost')
"""

from __future__ import annotations

import os
import re
from functools import cache, lru_cache

_AFFIXES = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)


def split_affixes(token: str) -> tuple[str, str, str]:
    """``(leading punctuation, word, trailing punctuation)`` of a whitespace-free token."""
    match = _AFFIXES.match(token)
    assert match is not None  # the pattern matches every string
    prefix, word, suffix = match.groups()
    if not word:  # all punctuation: keep it whole as the prefix
        return token, "", ""
    return prefix, word, suffix


def match_case(word: str, model: str) -> str:
    """``word`` with the casing pattern of ``model``: all caps, capitalized, or as it is."""
    if len(model) > 1 and model.isupper():
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


@cache
def _wordnet():
    """nltk's WordNet reader, made fork-safe: a forked child (``datasets.map(num_proc=...)``)
    drops the parent's open data files, whose shared file offsets would race between processes."""
    from paraamr.wordnet import wordnet

    wn = wordnet()
    os.register_at_fork(after_in_child=wn._data_file_map.clear)
    return wn


@lru_cache(maxsize=1 << 16)
def synonyms(
    word: str, pos: str | None = None, *, first_sense: bool = False, attested: bool = False
) -> tuple[str, ...]:
    """WordNet synonyms of ``word`` (see the module docstring for what counts), in WordNet's order.

    ``pos`` (``n``, ``v``, ``a``, ``r``) keeps one part of speech; ``first_sense`` keeps only the
    word's most frequent sense; ``attested`` keeps lemmas seen at least once in SemCor. REDA uses the
    defaults (every sense); meaning-preserving edits want ``synonyms(w, pos, first_sense=True,
    attested=True)``. Loads WordNet on first use (a few seconds); raises ``LookupError`` with the
    setup command when it is not installed. Example (needs WordNet): ``synonyms("price")`` gives
    ``('cost', 'terms', 'damage', 'toll')``.
    """
    wn = _wordnet()
    lower = word.lower()
    if not lower[:1].isalnum():
        return ()
    own = {lower}
    for tag in (pos,) if pos else ("n", "v", "a", "r"):
        base = wn.morphy(lower, tag)
        if base:
            own.add(base)
    senses = wn.synsets(lower, pos=pos)
    names: dict[str, None] = {}
    for synset in senses[:1] if first_sense else senses:
        for lemma in synset.lemmas():
            name = lemma.name()
            if name.isalpha() and name.islower() and name not in own and (not attested or lemma.count() > 0):
                names[name] = None
    return tuple(names)
