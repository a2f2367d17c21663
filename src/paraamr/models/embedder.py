"""Sentence embeddings: sentence-transformers models, or SimCSE checkpoints with SimCSE's pooling.

Any other encoder than a sentence-transformers dir pools as SimCSE does: ``cls`` (the pooler
output), ``cls_before_pooler`` (the ``[CLS]`` hidden state) or ``mean``; by default
``cls_before_pooler`` for an ``unsup`` model, else ``cls``.

>>> Embedder.pooling_for("princeton-nlp/unsup-simcse-bert-base-uncased")
'cls_before_pooler'
>>> Embedder.pooling_for("princeton-nlp/sup-simcse-roberta-large")
'cls'
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from paraamr.errors import InputError
from paraamr.extras import needs_extra
from paraamr.models.base import device_batches, element_bytes, footprint, loading, resolve_device
from paraamr.models.catalog import BATCH_SIZES, DEFAULTS, MAX_BATCH_SIZES
from paraamr.models.download import ensure
from paraamr.models.fast import converted, load_encoder, model_digest, resolve_backend
from paraamr.options import check_number
from paraamr.tasks import core_share, in_threads
from paraamr.texts import refuse_one_string

__all__ = ["POOLINGS", "Embedder", "encoder_problem"]

POOLINGS = ("cls", "cls_before_pooler", "mean")

#: SimCSE's ``tool.py`` truncates at 128 tokens.
SIMCSE_MAX_LENGTH = 128
#: With ``processes=None`` on a CPU, an :meth:`Embedder.encode` call of at least this many texts
#: runs in one single-threaded process per core (a pool's start-up, ~10 s, pays off from here).
POOL_MIN_TEXTS = 20_000
#: Texts a pool task encodes (consecutive in length order, so its batches pad little).
POOL_CHUNK = 1024


class Embedder:
    """L2-normalized sentence embeddings and cosine similarities, batched by length.

    ``pooling``: None (the model's own, or SimCSE's rule) or one of :data:`POOLINGS`; ``processes``:
    on a CPU, encode in that many single-threaded worker processes (None: one per core for calls
    of :data:`POOL_MIN_TEXTS` texts or more, unless one rank of several); ``backend`` ``auto``:
    CTranslate2 where the model converts, float32; ``path``: the model's folder when already found
    (``model`` then only names it). Other options as :class:`~paraamr.models.base.Stage`'s.
    """

    @needs_extra("evaluate", "torch", "transformers")
    def __init__(
        self,
        model: str | Path = DEFAULTS["embedder"],
        *,
        pooling: str | None = None,
        device: Any = None,
        batch_size: int = BATCH_SIZES["embedder"],
        download: bool = True,
        processes: int | None = None,
        backend: str = "auto",
        compute_type: str = "auto",
        max_batch_size: int | None = None,
        path: str | Path | None = None,
    ) -> None:
        if pooling is not None and pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r}; expected one of {', '.join(POOLINGS)}")
        self.batch_size = check_number(batch_size, "batch_size", kind=int, low=1)
        max_batch_size = check_number(max_batch_size, "max_batch_size", kind=int, low=1, none=True)
        self.processes = check_number(processes, "processes", kind=int, low=1, none=True)
        self.model_name = str(model)
        self.path = Path(path) if path is not None else ensure(model, "embedder", download=download)
        self.device = resolve_device(device)
        self.backend, self.compute_type = resolve_backend(backend, compute_type, self.device, exact=True)
        self.max_batch_size = max_batch_size or MAX_BATCH_SIZES["embedder"]
        with loading("embedder", self.path):
            st_pooling = _sentence_transformers_pooling(self.path)
            self._st = self._hf = None
            if st_pooling is not None and pooling in (None, st_pooling):
                from sentence_transformers import SentenceTransformer

                self.pooling = st_pooling
                self._st = SentenceTransformer(str(self.path), device=str(self.device))
            else:  # pooling is set when st_pooling is
                from transformers import AutoModel, AutoTokenizer

                if problem := encoder_problem(self.path):
                    raise InputError(f"embedder model {model} is {problem}, not a sentence encoder")
                self.pooling = pooling or self.pooling_for(self.model_name)
                self._tokenizer = AutoTokenizer.from_pretrained(str(self.path))
                self._hf = AutoModel.from_pretrained(str(self.path)).to(self.device).eval()
            self._ct2 = self._load_ct2() if self.backend == "ctranslate2" else None

    def _load_ct2(self):
        """A CTranslate2 encoder for the model, or None (transformers runs) where it does not convert."""
        import logging

        why = None
        if self._st is not None:
            names = [type(m).__name__ for m in self._st]
            plain = names[0] == "Transformer" and all(n in ("Pooling", "Normalize") for n in names[1:])
            if not plain or self.pooling not in ("mean", "cls"):
                why = f"its modules ({', '.join(names)}) do more than pool"
        if why is None:
            try:
                target = converted(self.path, self._st.tokenizer if self._st is not None else self._tokenizer)
            except Exception as err:  # no converter for this architecture, or its conversion failed
                why = str(err).split(" (supported configurations are:", 1)[0]  # (a list of ~60 names)
        if why is not None:
            logging.getLogger(__name__).warning("embedder %s runs on transformers: %s", self.model_name, why)
            self.backend = "transformers"
            return None
        if self._st is not None:
            self._st.to("cpu")  # its tokenizer and settings stay in use; its weights are not
        else:
            self._hf = None
        return load_encoder(target, self.device, self.compute_type)

    @staticmethod
    def pooling_for(model: str) -> str:
        """SimCSE's default pooling for ``model``: ``cls_before_pooler`` when its name says ``unsup``."""
        return "cls_before_pooler" if "unsup" in model else "cls"

    @property
    def signature(self) -> str:
        """How embeddings are computed, sacrebleu style (a local model by name and digest, not path)."""
        lib = "sentence-transformers" if self._st is not None else "transformers"
        engine = f"|ctranslate2:{version('ctranslate2')}:{self.compute_type}" if self._ct2 is not None else ""
        local = Path(self.model_name)
        model = f"{local.resolve().name}@{model_digest(self.path)[:8]}" if local.exists() else self.model_name
        return (
            f"model:{model}|pooling:{self.pooling}|lib:{lib}:{version(lib)}"
            f"|torch:{version('torch')}{engine}"
        )

    @property
    def dim(self) -> int:
        """The embedding size."""
        if self._st is not None:
            dimension = getattr(self._st, "get_embedding_dimension", None)  # sentence-transformers >= 6
            return int((dimension or self._st.get_sentence_embedding_dimension)())
        return int(self._config().hidden_size)

    def _config(self) -> Any:
        if self._hf is not None:
            return self._hf.config
        from transformers import AutoConfig

        return AutoConfig.from_pretrained(str(self.path))

    def _batches(self, texts: list[str]) -> list[list[int]]:
        """:func:`device_batches` of ``texts`` by length in characters (at least the tokens)."""

        def cost():
            most = self._st.max_seq_length if self._st is not None else SIMCSE_MAX_LENGTH
            element = element_bytes(self.compute_type, np.dtype(np.float32))
            return footprint(self._config(), element=element, max_len=most)

        size, most = self.batch_size, self.max_batch_size
        lengths = [len(t) for t in texts]
        return device_batches(lengths, device=self.device, batch_size=size, max_batch_size=most, cost=cost)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalized float32 row per text, in order (shape ``(len(texts), dim)``)."""
        texts = _strings(texts, "texts")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._ct2 is None and (workers := self._pool_size(len(texts))) > 1:
            return self._encode_pool(texts, workers)
        if self._ct2 is not None:
            encode_batch = self._encode_ct2
        else:
            encode_batch = self._encode_st if self._st is not None else self._encode_hf
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for batch in self._batches(texts):
            out[batch] = encode_batch([texts[i] for i in batch])
        return out

    def _encode_st(self, texts: list[str]) -> np.ndarray:
        return self._st.encode(
            texts,
            batch_size=len(texts),
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )

    def _pool_size(self, n: int) -> int:
        """Worker processes for an encode call of ``n`` texts (1: this process)."""
        if self.device.type != "cpu":
            return 1
        if self.processes is not None:
            return min(self.processes, -(-n // POOL_CHUNK))
        ranks = int(os.environ.get("WORLD_SIZE", "1") or 1)
        return core_share() if n >= POOL_MIN_TEXTS and ranks == 1 else 1

    def _encode_pool(self, texts: list[str], workers: int) -> np.ndarray:
        """:meth:`encode` in ``workers`` single-threaded processes, each taking the next chunk of
        :data:`POOL_CHUNK` texts of neighbouring lengths as it finishes one."""
        import threading

        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        chunks = iter([order[k : k + POOL_CHUNK] for k in range(0, len(order), POOL_CHUNK)])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        take = threading.Lock()

        def serve(worker: _PoolWorker) -> None:
            while True:
                with take:
                    chunk = next(chunks, None)
                if chunk is None:
                    return
                out[chunk] = worker.encode([texts[i] for i in chunk])

        pool = [_PoolWorker(self.path, self.pooling, self.batch_size) for _ in range(workers)]
        try:
            in_threads(serve, [(w,) for w in pool])
        finally:
            for worker in pool:
                worker.close()
        return out

    def _simcse_tokens(self, texts: list[str], **options: Any) -> Any:
        """SimCSE's tokenization of ``texts``: padded, cut at :data:`SIMCSE_MAX_LENGTH` tokens."""
        return self._tokenizer(texts, padding=True, truncation=True, max_length=SIMCSE_MAX_LENGTH, **options)

    def _encode_hf(self, texts: list[str]) -> np.ndarray:
        import torch

        inputs = self._simcse_tokens(texts, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            outputs = self._hf(**inputs, return_dict=True)
            if self.pooling == "cls":
                if getattr(outputs, "pooler_output", None) is None:
                    raise InputError(  # (a ValueError too) one line, not an internal error
                        f"model {self.model_name!r} has no pooler; use pooling='cls_before_pooler'"
                    )
                vectors = outputs.pooler_output
            elif self.pooling == "cls_before_pooler":
                vectors = outputs.last_hidden_state[:, 0]
            else:
                mask = inputs["attention_mask"].unsqueeze(-1).to(outputs.last_hidden_state.dtype)
                vectors = (outputs.last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            vectors = torch.nn.functional.normalize(vectors.float(), dim=-1)
        return vectors.cpu().numpy()

    def _encode_ct2(self, texts: list[str]) -> np.ndarray:
        """One batch through CTranslate2: the model's own tokenizer and truncation, its pooling."""
        if self._st is not None:
            prepare = getattr(self._st, "preprocess", None) or self._st.tokenize  # ST >= 6: preprocess
            features = prepare(texts)
        else:
            features = self._simcse_tokens(texts)
        mask = np.asarray(features["attention_mask"], dtype=np.float32)
        lengths = mask.sum(1).astype(int).tolist()
        ids, types = (
            None if m is None else [r[:n] for r, n in zip(np.asarray(m).tolist(), lengths, strict=True)]
            for m in (features["input_ids"], features.get("token_type_ids"))
        )
        output = self._ct2.forward_batch(ids, token_type_ids=types)
        if self.pooling == "cls" and self._st is None:  # SimCSE's cls: through the pooler
            vectors = self._numpy(output.pooler_output)
        else:
            hidden = self._numpy(output.last_hidden_state)
            if self.pooling in ("cls", "cls_before_pooler"):
                vectors = hidden[:, 0]
            else:
                m = mask[:, : hidden.shape[1], None]
                vectors = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors / norms

    def _numpy(self, view: Any) -> np.ndarray:
        """A CTranslate2 output as a float32 array on the host."""
        if self.device.type == "cuda":
            import torch

            return torch.as_tensor(view, device=self.device).float().cpu().numpy()
        return np.asarray(view, dtype=np.float32)

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> list[float]:
        """Cosine similarity of ``a[i]`` and ``b[i]`` for each i, each distinct text encoded once."""
        a, b = _strings(a, "a"), _strings(b, "b")
        if len(a) != len(b):
            raise ValueError(f"similarity needs two lists of equal length, got {len(a)} and {len(b)}")
        distinct = list(dict.fromkeys(a + b))
        row = {text: i for i, text in enumerate(distinct)}
        vectors = self.encode(distinct)
        cos = np.einsum("ij,ij->i", vectors[[row[t] for t in a]], vectors[[row[t] for t in b]])
        return [float(min(1.0, max(-1.0, c))) for c in cos]


def _strings(texts: Sequence[str], name: str) -> list[str]:
    """``texts`` as a list, refused unless a sequence of strings (TypeError naming the item)."""
    refuse_one_string(texts, name)
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"{name}[{i}] is {type(text).__name__}, not str")
    return texts


class _PoolWorker:
    """A single-threaded embedding process: pickled lists of texts in, pickled arrays out."""

    def __init__(self, path: Path, pooling: str, batch_size: int) -> None:
        import subprocess
        import sys

        env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        env["TOKENIZERS_PARALLELISM"] = "false"
        command = [sys.executable, "-m", "paraamr.models.embedder", str(path), pooling, str(batch_size)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def encode(self, texts: list[str]) -> np.ndarray:
        import pickle

        assert self.process.stdin is not None and self.process.stdout is not None
        pickle.dump(texts, self.process.stdin)
        self.process.stdin.flush()
        try:
            return pickle.load(self.process.stdout)
        except EOFError:
            raise RuntimeError(f"embedding worker exited with status {self.process.wait()}") from None

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except Exception:
            self.process.kill()
            self.process.wait()


def _serve_pool(path: str, pooling: str, batch_size: int) -> None:
    """A pool worker's loop (``python -m paraamr.models.embedder PATH POOLING BATCH_SIZE``)."""
    import pickle
    import sys

    import torch
    from transformers.utils import logging

    stdin, stdout = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever a library prints goes to stderr, not into the answers
    torch.set_num_threads(1)
    logging.disable_progress_bar()
    embedder = Embedder(path, path=path, pooling=pooling, device="cpu", batch_size=batch_size, processes=1)
    while True:
        try:
            texts = pickle.load(stdin)
        except EOFError:
            return
        pickle.dump(embedder.encode(texts), stdout)
        stdout.flush()


def encoder_problem(path: str | Path) -> str | None:
    """Why model folder ``path`` is no sentence encoder (an encoder-decoder or a causal LM), or None
    (also for a config transformers cannot read: the loader names what is wrong with it)."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(path)
    except (OSError, ValueError):
        return None
    if getattr(config, "is_encoder_decoder", False):
        return f"an encoder-decoder model ({config.model_type})"
    if any(name.endswith(("ForCausalLM", "LMHeadModel")) for name in config.architectures or ()):
        return f"a causal language model ({config.model_type})"
    return None


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


if __name__ == "__main__":
    import sys

    _serve_pool(sys.argv[1], sys.argv[2], int(sys.argv[3]))
