"""What amrlib's two models share when they load: the model found on disk (or fetched), the device,
the dtype, the batch settings and the policy for clipped inputs.

>>> class Demo(AmrlibModel):
...     kind, clip_policies = "parser", ("flag", "fail")
>>> Demo().check_clip_policy("keep")
Traceback (most recent call last):
ValueError: on_clip must be 'flag' or 'fail', got 'keep'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paraamr.models.base import resolve_device, resolve_dtype
from paraamr.models.download import ensure
from paraamr.models.fast import Seq2SeqModel, converted, resolve_backend

__all__ = ["AmrlibModel"]


class AmrlibModel:
    """Base of :class:`~paraamr.models.parser.Parser` and :class:`~paraamr.models.realizer.Realizer`:
    ``kind`` (the catalog's kind) and ``clip_policies`` (the ``on_clip`` values it takes) are set by
    the subclass."""

    kind: str
    clip_policies: tuple[str, ...]

    def check_clip_policy(self, on_clip: str) -> None:
        """Refuse an ``on_clip`` this model does not know."""
        if on_clip not in self.clip_policies:
            choices = " or ".join(repr(p) for p in self.clip_policies)
            raise ValueError(f"on_clip must be {choices}, got {on_clip!r}")

    def locate(
        self,
        model: str | Path,
        *,
        device: Any,
        dtype: Any,
        batch_size: int,
        num_beams: int,
        on_clip: str,
        cache_dir: str | Path | None,
        download: bool,
        trust_remote_code: bool,
        backend: str = "auto",
        compute_type: str = "auto",
    ) -> Path:
        """Check the options, set the shared attributes and return the model's folder (fetched
        when missing and ``download``)."""
        self.check_clip_policy(on_clip)
        self.device = resolve_device(device)
        self.backend, self.compute_type = resolve_backend(backend, compute_type, self.device)
        if self.backend == "transformers" and compute_type != "auto":
            dtype = compute_type
        path = ensure(
            model, self.kind, cache_dir=cache_dir, download=download, trust_remote_code=trust_remote_code
        )
        self.model_name = str(model)
        self.cache_dir = cache_dir
        self.dtype = resolve_dtype(dtype, self.device)
        self.batch_size = batch_size
        self.num_beams = num_beams
        self.on_clip = on_clip
        return path

    def load_backend(self, path: Path) -> None:
        """Put the chosen backend under amrlib's ``inference`` object: the transformers model in
        its dtype, or CTranslate2 (converted on first use) in place of the model's ``generate``."""
        model = self.inference.model
        if self.backend == "transformers":
            model.to(self.dtype)
            return
        target = converted(path, self.inference.tokenizer, cache_dir=self.cache_dir)
        self.inference.model = Seq2SeqModel(model, target, self.device, self.compute_type)
