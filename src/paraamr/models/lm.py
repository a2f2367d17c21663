"""Perplexity under any transformers causal LM (GPT-2 as in the paper, the default; SmolLM2 offline).

Perplexity = exp(mean negative log-likelihood of a text's tokens), by Hugging Face evaluate's
convention: the model's BOS token is prepended and every text token is scored.

>>> from paraamr.models import tiny
>>> scorer = PerplexityScorer(tiny.shared()["lm"])
>>> ppl, empty = scorer.perplexity(["the boy want to go .", ""])
>>> round(ppl, 1) > 1
True
>>> empty
Failure(stage='perplexity', reason='empty text')
>>> scorer.signature
'ppl|model:lm|bos:yes|truncate:no|nll:mean-token|version:...'

A ``.gguf`` file (``model="smollm2"``) is dequantized once into ``<cache>/gguf/``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from paraamr import __version__
from paraamr.atomic import atomic_dir
from paraamr.errors import InputError
from paraamr.extras import needs_extra
from paraamr.failures import Failure
from paraamr.models.base import Stage, device_batches, element_bytes, footprint, run_batched
from paraamr.models.catalog import BATCH_SIZES, DEFAULTS
from paraamr.models.fast import converted, fingerprint, load_generator, score_sequences
from paraamr.models.resolve import cache_root
from paraamr.options import check_number
from paraamr.texts import refuse_one_string

__all__ = ["PerplexityScorer", "float32_copies"]

STAGE = "perplexity"
_HEAD_CHUNK = 1024


def float32_copies(gguf: Path, cache_dir: str | Path | None = None) -> list[Path]:
    """What :func:`_gguf_dir` made of the GGUF file ``gguf`` in the cache (a copy per content)."""
    return sorted((cache_root(cache_dir) / "gguf").glob(f"{gguf.stem}-*"))


def _gguf_dir(gguf: Path, cache_dir: str | Path | None) -> Path:
    """A transformers dir holding ``gguf`` dequantized, made once and keyed by the file's content
    (reading a GGUF file takes minutes on a small CPU; the copy loads in seconds)."""
    import torch
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = cache_root(cache_dir) / "gguf" / f"{gguf.stem}-{fingerprint(gguf)}"
    if target.is_dir():
        return target
    with atomic_dir(target, exist_ok=True) as tmp:  # another process may finish first
        where = {"pretrained_model_name_or_path": gguf.parent, "gguf_file": gguf.name}
        AutoTokenizer.from_pretrained(**where).save_pretrained(tmp)
        model = AutoModelForCausalLM.from_pretrained(**where, dtype=torch.float32)
        # transformers refuses save_pretrained on a GGUF-loaded model: save config and weights
        config = model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        config.save_pretrained(tmp)
        save_model(model, str(tmp / "model.safetensors"))  # dedups the tied embeddings
    return target


class PerplexityScorer(Stage):
    """``perplexity(texts)`` -> per text exp(mean token NLL) or Failure.

    ``max_tokens``: padded tokens per batch; ``max_length=None``: the model's context; a longer text
    is a Failure, or clipped with ``truncate=True``; ``add_start_token=False``: no BOS, the first
    token is not scored. Log-probabilities are float32; other options:
    :class:`~paraamr.models.base.Stage`. ``stats`` counts scored and failed texts.
    """

    kind = "lm"

    @needs_extra("generate")
    def __init__(
        self,
        model: str | Path = DEFAULTS["lm"],
        *,
        batch_size: int = BATCH_SIZES["lm"],
        max_tokens: int = 8192,
        max_length: int | None = None,
        truncate: bool = False,
        add_start_token: bool = True,
        **options: Any,
    ) -> None:
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

        max_tokens = check_number(max_tokens, "max_tokens", kind=int, low=1)  # before a model loads
        max_length = check_number(max_length, "max_length", kind=int, low=1, none=True)
        super().__init__(model, batch_size=batch_size, **options)
        path = self.path
        if path.is_file() and path.suffix == ".gguf":
            path = _gguf_dir(path, self.cache_dir)
        config = AutoConfig.from_pretrained(path)
        if getattr(config, "is_encoder_decoder", False):  # an AMR parser or realizer given by mistake
            raise InputError(
                f"lm model {model} is an encoder-decoder model ({config.model_type}), not a causal "
                "language model such as GPT-2"
            )
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        if self.backend == "transformers":
            self.model = AutoModelForCausalLM.from_pretrained(path, dtype=self.dtype).to(self.device).eval()
            self.head = self.model.get_output_embeddings()
            self.body = self.model.base_model
        else:
            target = converted(path, self.tokenizer, cache_dir=self.cache_dir)
            self.generator = load_generator(target, self.device, self.compute_type)
        for attr in ("final_logit_softcapping", "logit_scale"):
            if getattr(config, attr, None):
                raise InputError(f"LM {self.model_name!r} post-processes its logits ({attr}); not supported")
        self.config = config
        self.max_tokens = max_tokens
        self.max_length = max_length or getattr(config, "max_position_embeddings", None) or config.n_positions
        self.truncate = truncate
        self.add_start_token = add_start_token
        self.bos = self.tokenizer.bos_token_id if add_start_token else None
        if add_start_token and self.bos is None:
            raise InputError(
                f"LM {self.model_name!r} has no BOS token: give an LM that has one (in Python, or "
                "add_start_token=False: the first word is then not scored)"
            )
        self.stats = {"scored": 0, "failed": 0}

    @property
    def signature(self) -> str:
        """sacrebleu-style signature of the scores."""
        name = Path(self.model_name).name if Path(self.model_name).exists() else self.model_name
        return (
            f"ppl|model:{name}|bos:{'yes' if self.add_start_token else 'no'}|"
            f"truncate:{'yes' if self.truncate else 'no'}|nll:mean-token|version:{__version__}"
        )

    def _encode(self, text: Any) -> list[int] | Failure:
        if not isinstance(text, str):
            return Failure(STAGE, f"not a string: {type(text).__name__}")
        if not text.strip():
            return Failure(STAGE, "empty text")
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        if self.bos is not None:
            ids = [self.bos, *ids]
        if len(ids) > self.max_length:
            if not self.truncate:
                why = f"too long: {len(ids)} tokens (with BOS), the model reads {self.max_length}"
                return Failure(STAGE, why)
            ids = ids[: self.max_length]
        if len(ids) < 2:
            return Failure(STAGE, "no token to score (one token and add_start_token=False)")
        return ids

    def _score_batch(self, batch: list[list[int]]) -> list[float]:
        """exp(mean NLL) of each id sequence of ``batch`` (each starting with BOS when used)."""
        import torch

        if self.backend == "ctranslate2":
            return [math.exp(-math.fsum(lp) / len(lp)) for lp in score_sequences(self.generator, batch)]

        pad = torch.nn.utils.rnn.pad_sequence  # right padding with zeros
        input_ids = pad([torch.tensor(ids, dtype=torch.long) for ids in batch], batch_first=True)
        mask = pad([torch.ones(len(ids), dtype=torch.long) for ids in batch], batch_first=True)
        input_ids, mask = input_ids.to(self.device), mask.to(self.device)
        with torch.inference_mode():
            hidden = self.body(input_ids=input_ids, attention_mask=mask).last_hidden_state
            scored = mask[:, 1:].bool()  # position t predicts token t+1
            states, targets = hidden[:, :-1][scored], input_ids[:, 1:][scored]
            nll = torch.cat(
                [  # the head in chunks: vocab-wide logits for 1,024 positions at a time
                    torch.nn.functional.cross_entropy(self.head(h).float(), t, reduction="none")
                    for h, t in zip(states.split(_HEAD_CHUNK), targets.split(_HEAD_CHUNK), strict=True)
                ]
            )
            rows = torch.arange(len(batch), device=self.device).unsqueeze(1).expand_as(scored)[scored]
            total = torch.zeros(len(batch), device=self.device).index_add_(0, rows, nll)
            mean = total / scored.sum(1)
        return torch.exp(mean).tolist()

    def perplexity(self, texts: Iterable[str]) -> list[float | Failure]:
        """Perplexity of each of ``texts``, or a Failure (empty, too long, out of memory alone...)."""
        refuse_one_string(texts, "texts")
        encoded = [self._encode(t) for t in texts]
        todo = [i for i, e in enumerate(encoded) if not isinstance(e, Failure)]
        seqs = [encoded[i] for i in todo]
        element = element_bytes(self.compute_type, self.dtype)
        batches = device_batches(
            [len(s) for s in seqs],
            device=self.device,
            batch_size=self.batch_size,
            max_batch_size=self.max_batch_size,
            max_tokens=self.max_tokens,
            cost=lambda: footprint(self.config, element=element, max_len=self.max_length, logits=True),
        )
        results: list[Any] = list(encoded)
        for i, value in zip(todo, run_batched(seqs, self._score_batch, batches, stage=STAGE), strict=True):
            results[i] = value
        failed = sum(isinstance(r, Failure) for r in results)
        self.stats["failed"] += failed
        self.stats["scored"] += len(results) - failed
        return results
