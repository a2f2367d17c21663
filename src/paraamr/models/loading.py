"""What amrlib's two models share: the policy for clipped inputs, loading and running batches.

>>> class Demo(AmrlibModel):
...     kind, clip_policies = "parser", ("flag", "fail")
>>> Demo("any", num_beams=1, on_clip="keep", batch_size=1)
Traceback (most recent call last):
ValueError: on_clip must be 'flag' or 'fail', got 'keep'
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from paraamr.models.base import Stage, device_batches, element_bytes, footprint, run_batched
from paraamr.models.fast import Seq2SeqModel, converted
from paraamr.options import check_number

__all__ = ["AmrlibModel"]


class AmrlibModel(Stage):
    """Base of the parser and realizer; the subclass sets ``kind``, ``clip_policies`` (the ``on_clip``
    values it takes) and ``length_limits`` (amrlib's attributes for the longest input and output)."""

    kind: str
    clip_policies: tuple[str, ...]
    length_limits: tuple[str, str]

    def __init__(
        self,
        model: str | Path,
        *,
        num_beams: int,
        on_clip: str,
        trust_remote_code: bool = False,
        **options: Any,
    ) -> None:
        num_beams = check_number(num_beams, "num_beams", kind=int, low=1)  # before a model loads
        if on_clip not in self.clip_policies:
            choices = " or ".join(repr(p) for p in self.clip_policies)
            raise ValueError(f"on_clip must be {choices}, got {on_clip!r}")
        self.trust_remote_code = trust_remote_code
        super().__init__(model, **options)
        self.num_beams = num_beams
        self.on_clip = on_clip

    def run(self, texts: list[str], fn: Callable, stage: str) -> tuple[list[int], list[Any]]:
        """The token length of each of ``texts`` and ``fn``'s value for it, in :func:`device_batches`."""

        def cost():
            in_len, out_len = (getattr(self.inference, name) for name in self.length_limits)
            element = element_bytes(self.compute_type, self.dtype)
            config = self.inference.model.config
            return footprint(config, element=element, beams=self.num_beams, out_len=out_len, max_len=in_len)

        lengths = [len(ids) for ids in self.inference.tokenizer(texts)["input_ids"]] if texts else []
        size, most = self.batch_size, self.max_batch_size
        batches = device_batches(lengths, device=self.device, batch_size=size, max_batch_size=most, cost=cost)
        return lengths, run_batched(texts, fn, batches, stage=stage)

    def load(self, loader: Callable, **kwargs: Any) -> None:
        """amrlib's ``inference`` object from ``loader``, its model in ``dtype`` or, on CTranslate2,
        replaced by :class:`~.fast.Seq2SeqModel`."""
        self.inference = loader(
            str(self.path),
            device=str(self.device),
            batch_size=self.batch_size,
            num_beams=self.num_beams,
            **kwargs,
        )
        model = self.inference.model
        if self.backend == "transformers":
            model.to(self.dtype)
            return
        target = converted(self.path, self.inference.tokenizer, cache_dir=self.cache_dir)
        self.inference.model = Seq2SeqModel(model, target, self.device, self.compute_type)
