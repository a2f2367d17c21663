"""Languages for REDA as plug-ins: a tokenizer and a synonym source chosen per run.

A :class:`Tokenizer` splits a text into the tokens REDA edits, joins edited tokens back into a
text, and gives the n-gram LM its tokens. Built in (:data:`TOKENIZERS`):

- ``whitespace``: the whitespace-separated parts, joined with single spaces; LM tokens
  ``normalize(text).split()`` (:func:`paraamr.records.normalize`). English, as REDA always ran.
- ``jieba``: jieba's segmentation (precise mode, HMM on), whitespace dropped; joined without
  spaces, except for one space between two tokens whose touching characters are both ASCII
  letters or digits (``iPhone 6``). LM tokens: the same tokens, each normalized. Segmentations
  are kept per text (:meth:`Tokenizer.segment_all`): an edit is scored by its tokens, never by
  segmenting the edited text again.

A language names a tokenizer and a synonym source (:mod:`paraamr.augment.synonyms`): ``en`` is
whitespace + WordNet, ``zh`` is jieba + HIT Tongyici Cilin (:data:`LANGUAGES`).

>>> words = tokenizer("whitespace")
>>> words.split("The big  dog ."), words.join(["big", "dog"]), words.lm_tokens("The  Big dog.")
(['The', 'big', 'dog', '.'], 'big dog', ['the', 'big', 'dog.'])
>>> chinese = tokenizer("jieba")
>>> chinese.split("苹果手机怎么截图？")
['苹果', '手机', '怎么', '截图', '？']
>>> chinese.join(["截图", "iPhone", "6", "怎么", "？"])
'截图iPhone 6怎么？'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path

from paraamr.augment.synonyms import WORDNET, Synonyms, cilin, read_synonyms
from paraamr.errors import ParaAMRError
from paraamr.extras import require
from paraamr.records import normalize

__all__ = ["LANGUAGES", "TOKENIZERS", "Jieba", "Tokenizer", "Whitespace", "setup", "tokenizer", "wordnet"]

_ASCII_WORD = re.compile(r"[A-Za-z0-9]")


class Tokenizer:
    """How REDA and its n-gram LM cut a language's texts: ``key`` is the name in
    :data:`TOKENIZERS`; ``name`` goes into REDA's signature and ``lm_name`` into the LM's."""

    key = ""

    @property
    def name(self) -> str:
        return self.key

    @property
    def lm_name(self) -> str:
        return f"{self.name}+normalize"

    def split(self, text: str) -> list[str]:
        """REDA's tokens of ``text``."""
        raise NotImplementedError

    def join(self, tokens: list[str]) -> str:
        """The text of edited ``tokens``."""
        raise NotImplementedError

    def lm_tokens_of(self, tokens: list[str], key: str) -> list[str]:
        """The LM's tokens of an edit given as its ``tokens`` and its ``key`` (``normalize`` of
        its joined text)."""
        raise NotImplementedError

    def lm_tokens(self, text: str) -> list[str]:
        """The LM's tokens of ``text`` (a training line, or a text to score)."""
        tokens = self.split(text)
        return self.lm_tokens_of(tokens, normalize(self.join(tokens)))

    def lm_tokens_once(self, text: str) -> list[str]:
        """:meth:`lm_tokens` of a text seen once (a line of an LM corpus), its segmentation not kept."""
        return self.lm_tokens(text)

    def segment_all(self, texts: Iterable[str]) -> None:
        """Segment every text of ``texts`` now, once (kept for :meth:`split`)."""
        for text in texts:
            self.split(text)


class Whitespace(Tokenizer):
    """Whitespace-separated tokens joined by single spaces: REDA for English."""

    key = "whitespace"

    @property
    def lm_name(self) -> str:
        return "normalize+split"  # the n-gram LM's signature before tokenizers were plug-ins

    def split(self, text: str) -> list[str]:
        return text.split()

    def join(self, tokens: list[str]) -> str:
        return " ".join(tokens)

    def lm_tokens_of(self, tokens: list[str], key: str) -> list[str]:
        return key.split()

    def lm_tokens(self, text: str) -> list[str]:
        return normalize(text).split()

    def segment_all(self, texts: Iterable[str]) -> None:
        """Nothing: splitting on whitespace costs less than keeping the result."""


@cache
def _jieba():
    """The jieba module, its dictionary loaded (about 1 s) and its log messages off."""
    try:
        import jieba
    except ImportError:
        raise ParaAMRError("--tokenizer jieba needs the jieba package: pip install 'paraamr[zh]'") from None
    import logging

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


class Jieba(Tokenizer):
    """jieba's segmentation, kept per text (see the module docstring)."""

    key = "jieba"

    def __init__(self) -> None:
        self._texts: dict[str, tuple[str, ...]] = {}

    @property
    def name(self) -> str:
        from importlib.metadata import version

        return f"jieba-{version('jieba')}"

    def split(self, text: str) -> list[str]:
        found = self._texts.get(text)
        if found is None:
            found = self._texts[text] = self._cut(text)
        return list(found)

    def lm_tokens_once(self, text: str) -> list[str]:
        tokens = list(self._texts.get(text) or self._cut(text))
        return self.lm_tokens_of(tokens, normalize(self.join(tokens)))

    @staticmethod
    def _cut(text: str) -> tuple[str, ...]:
        return tuple(t for t in _jieba().lcut(text) if t.strip())

    def join(self, tokens: list[str]) -> str:
        parts: list[str] = []
        for token in tokens:
            if parts and _ASCII_WORD.fullmatch(parts[-1][-1]) and _ASCII_WORD.fullmatch(token[0]):
                parts.append(" ")
            parts.append(token)
        return "".join(parts)

    def lm_tokens_of(self, tokens: list[str], key: str) -> list[str]:
        return [word for token in tokens for word in normalize(token).split()]


#: Tokenizers by ``--tokenizer`` name.
TOKENIZERS: dict[str, type[Tokenizer]] = {"whitespace": Whitespace, "jieba": Jieba}


def tokenizer(name: str) -> Tokenizer:
    """A new tokenizer of kind ``name`` (a key of :data:`TOKENIZERS`)."""
    try:
        return TOKENIZERS[name]()
    except KeyError:
        raise ValueError(f"unknown tokenizer {name!r} (known: {', '.join(TOKENIZERS)})") from None


def wordnet() -> Synonyms:
    """WordNet's synonyms, whose nltk is looked for now: a run without it stops before any work."""
    require("augment", modules=("nltk",))
    return WORDNET


#: Languages by ``--language`` code: the name of their tokenizer and their synonym source.
LANGUAGES: dict[str, tuple[str, Callable[[], Synonyms]]] = {
    "en": ("whitespace", wordnet),
    "zh": ("jieba", cilin),
}


def setup(
    language: str = "en", tokenizer_name: str | None = None, synonyms: str | Path | None = None
) -> tuple[Tokenizer, Synonyms]:
    """The tokenizer and synonym source of a run: ``language``'s own, unless ``tokenizer_name`` or
    a synonym file (:func:`paraamr.augment.synonyms.read_synonyms`) is given.

    >>> tok, source = setup("zh", "whitespace", None)
    >>> tok.name, source.name.startswith("cilin-")
    ('whitespace', True)
    """
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r} (known: {', '.join(LANGUAGES)})")
    own_tokenizer, own_synonyms = LANGUAGES[language]
    source = read_synonyms(synonyms) if synonyms is not None else own_synonyms()
    return tokenizer(tokenizer_name or own_tokenizer), source
