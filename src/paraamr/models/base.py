"""Shared machinery of the model stages: device/dtype choice, batching by length, OOM split-and-retry.

A batch that raises (out of memory or otherwise) is split in two and retried, down to one item, which
then fails alone; on a CUDA device batches are sized by the free memory.

>>> length_batches([3, 10, 1, 7], batch_size=2)
[[1, 3], [0, 2]]
>>> length_batches([3, 10, 1, 7], batch_size=8, max_tokens=15)
[[1], [3, 0], [2]]
>>> def double(batch):
...     if 13 in batch:
...         raise ValueError("unlucky")
...     return [2 * x for x in batch]
>>> run_batched([1, 13, 2, 3], double, [[0, 1, 2, 3]], stage="demo")
[2, Failure(stage='demo', reason='ValueError: unlucky'), 4, 6]
>>> fill_batches([3, 10, 1, 7], per_token=100, fixed=0, free=2_000, max_batch_size=8)  # 1,400 B usable
[[1], [3, 0], [2]]
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraamr.errors import InputError, ParaAMRError, UsageError
from paraamr.extras import install_hint
from paraamr.failures import Failure
from paraamr.models.catalog import MAX_BATCH_SIZES
from paraamr.models.download import ensure
from paraamr.models.fast import resolve_backend
from paraamr.options import check_number
from paraamr.report import reason

__all__ = [
    *("FILL_FRACTION", "Footprint", "Stage", "batch_listener", "device_batches", "element_bytes"),
    *("fill_batches", "footprint", "free_bytes", "length_batches", "loading", "resolve_device"),
    *("precision", "precision_words", "resolve_dtype", "run_batched"),
]

logger = logging.getLogger(__name__)
#: Callbacks told of each finished batch (:func:`batch_listener`).
_LISTENERS: list[Callable[[str, int, int], None]] = []
_LISTENERS_LOCK = threading.Lock()

_DTYPES = {
    "fp32": "float32",
    "float32": "float32",
    "fp16": "float16",
    "float16": "float16",
    "half": "float16",
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
}


@contextlib.contextmanager
def loading(kind: str, name: Any) -> Iterator[None]:
    """Within the block, a model the libraries cannot load is a one-line error naming it.

    >>> with loading("lm", "my/lm"):
    ...     {}["model_type"]
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: lm model my/lm cannot be loaded (KeyError: 'model_type')
    >>> with loading("parser", "p"):  # doctest: +ELLIPSIS
    ...     raise ModuleNotFoundError("No module named 'amrlib'", name="amrlib")
    Traceback (most recent call last):
    ...
    paraamr.errors.ParaAMRError: parser model p cannot be loaded: amrlib is not installed: pip install ...
    """
    try:
        yield
    except ParaAMRError:
        raise  # says what is wrong already
    except Exception as err:
        hint = install_hint(err, "generate") if isinstance(err, ModuleNotFoundError) else None
        if hint is not None:  # a package of an extra, not the model
            raise ParaAMRError(f"{kind} model {name} cannot be loaded: {hint}") from err
        why = (str(err).strip().splitlines() or [""])[0]
        raise InputError(f"{kind} model {name} cannot be loaded ({type(err).__name__}: {why})") from err


def resolve_device(device: Any = None):
    """``torch.device(device)``; None -> ``cuda`` when available, else ``cpu``; UsageError for a bad one.

    >>> resolve_device("cpu")
    device(type='cpu')
    >>> resolve_device("gpu0")
    Traceback (most recent call last):
    ...
    paraamr.errors.UsageError: device 'gpu0': not a torch device (cpu, cuda, cuda:N, mps, ...)
    """
    import torch

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise UsageError(f"device {device!r}: not a torch device (cpu, cuda, cuda:N, mps, ...)") from None
    if resolved.type == "cuda" and (resolved.index or 0) >= torch.cuda.device_count():
        raise UsageError(f"device {device!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return resolved


def resolve_dtype(dtype: Any, device) -> Any:
    """A torch dtype from ``dtype`` (a torch dtype or a name); None -> float32 on CPU, bfloat16 on a
    CUDA device that supports it, else float16.

    >>> import torch
    >>> resolve_dtype(None, torch.device("cpu")), resolve_dtype("bf16", torch.device("cpu"))
    (torch.float32, torch.bfloat16)
    """
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype is None:
        if device.type != "cuda":
            return torch.float32
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    try:
        return getattr(torch, _DTYPES[str(dtype).lower()])
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {', '.join(_DTYPES)}") from None


def precision(backend: str, compute_type: str, dtype: Any, device: Any) -> str:
    """What a stage runs its model at on ``device``: the backend and its compute type (CTranslate2)
    or torch dtype (transformers), ``auto`` and None resolved as :class:`Stage` resolves them.

    >>> precision("transformers", "auto", None, "cpu"), precision("transformers", "bfloat16", None, "cpu")
    ('transformers float32', 'transformers bfloat16')
    >>> precision("ctranslate2", "auto", "float16", "cpu")
    'ctranslate2 float32'
    """
    import torch

    device = torch.device(device) if isinstance(device, str) else device
    backend, compute_type = resolve_backend(backend, compute_type, device)
    if backend == "ctranslate2":
        return f"{backend} {compute_type}"
    dtype = resolve_dtype(compute_type if compute_type != "auto" else dtype, device)
    return f"{backend} {str(dtype).removeprefix('torch.')}"


def precision_words(precision: Mapping[str, str], other: Mapping[str, str] | None = None) -> str:
    """``precision`` (``{stage: what its model runs at}``) in words: the stages that differ from
    ``other``'s, all of them as one where they agree.

    >>> precision_words({"parser": "ctranslate2 float32", "lm": "ctranslate2 float32"})
    'ctranslate2 float32'
    >>> ct2 = "ctranslate2 float32"
    >>> precision_words({"parser": ct2, "lm": "transformers float32"}, {"parser": ct2})
    'lm transformers float32'
    """
    shown = {k: v for k, v in precision.items() if (other or {}).get(k) != v} or precision
    if len(set(shown.values())) == 1 and len(shown) == len(precision):
        return next(iter(shown.values()))
    return ", ".join(f"{k} {v}" for k, v in shown.items())


class Stage:
    """Base of the parser, realizer and LM: finds the model and sets the options they share.

    ``device=None``: cuda when available, else cpu; ``dtype=None``: :func:`resolve_dtype`;
    ``cache_dir=None``: the model cache; ``download=True``: fetch a missing model; ``backend`` and
    ``compute_type`` ``"auto"``: CTranslate2 when installed, float32 on a CPU (:mod:`~.fast`);
    ``max_batch_size=None``: on a CUDA device, the most items of a batch sized by the free memory
    (:data:`~paraamr.models.catalog.MAX_BATCH_SIZES`). ``kind`` (the catalog's) is the subclass's.
    """

    kind: str
    trust_remote_code = False  # an amrlib model's own (:func:`~paraamr.models.resolve.amrlib_meta`)

    def __init__(
        self,
        model: str | Path,
        *,
        device: Any = None,
        dtype: Any = None,
        batch_size: int,
        cache_dir: str | Path | None = None,
        download: bool = True,
        backend: str = "auto",
        compute_type: str = "auto",
        max_batch_size: int | None = None,
    ) -> None:
        self.batch_size = check_number(batch_size, "batch_size", kind=int, low=1)  # before a model loads
        max_batch_size = check_number(max_batch_size, "max_batch_size", kind=int, low=1, none=True)
        self.device = resolve_device(device)
        self.backend, self.compute_type = resolve_backend(backend, compute_type, self.device)
        if self.backend == "transformers" and compute_type != "auto":
            dtype = compute_type
        trust = self.trust_remote_code
        self.path = ensure(model, self.kind, cache_dir=cache_dir, download=download, trust_remote_code=trust)
        self.model_name = str(model)
        self.cache_dir = cache_dir
        self.dtype = resolve_dtype(dtype, self.device)
        self.max_batch_size = max_batch_size or MAX_BATCH_SIZES[self.kind]

    @property
    def precision(self) -> str:
        """What the model runs at (:func:`precision`): ``ctranslate2 float32``, ``transformers bfloat16``."""
        return precision(self.backend, self.compute_type, self.dtype, self.device)


def length_batches(
    lengths: Sequence[int], *, batch_size: int, max_tokens: int | None = None
) -> list[list[int]]:
    """Indices of ``lengths``, longest first, in batches of at most ``batch_size`` items and
    ``max_tokens`` padded tokens (an item longer than that goes alone)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if batches:
            batch = batches[-1]
            width = lengths[batch[0]]  # the longest, since sorted
            fits = max_tokens is None or width * (len(batch) + 1) <= max_tokens
            if len(batch) < batch_size and fits:
                batch.append(i)
                continue
        batches.append([i])
    return batches


#: Share of the free device memory a batch may fill (the rest: allocator slack, estimate errors).
FILL_FRACTION = 0.7


def free_bytes(device: Any) -> int | None:
    """Bytes free on CUDA ``device``, counting what torch caches unused; None for another device."""
    import torch

    device = torch.device(device)
    if device.type != "cuda":
        return None
    free, _total = torch.cuda.mem_get_info(device)
    return int(free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device))


def element_bytes(compute_type: str, dtype: Any) -> int:
    """Bytes of an activation value: 2 for a 16-bit compute type, else 4 (int8 keeps float32
    activations); ``auto`` (transformers): the torch ``dtype``'s.

    >>> import torch
    >>> element_bytes("int8_float16", None), element_bytes("int8", None)
    (2, 4)
    >>> element_bytes("auto", torch.bfloat16)
    2
    """
    if compute_type == "auto":
        return int(dtype.itemsize)
    return 2 if "16" in compute_type else 4


def _size(config: Any, *names: str, default: int = 0) -> int:
    """The first of ``names`` that ``config`` sets (the field names differ between architectures)."""
    return int(next((v for v in (getattr(config, n, None) for n in names) if v), default))


@dataclass(frozen=True)
class Footprint:
    """Bytes one item of a batch takes on the device: ``fixed + per_token * input tokens``."""

    per_token: int
    fixed: int = 0

    def __call__(self, tokens: int) -> int:
        return self.fixed + self.per_token * tokens


def footprint(
    config: Any, *, element: int, beams: int = 1, out_len: int = 0, max_len: int = 512, logits: bool = False
) -> Footprint:
    """An upper estimate of the device memory one item takes, from the model's ``config``.

    ``element``: bytes of a value; ``max_len``: the longest input; ``out_len`` > 0: an encoder-decoder
    generating that many tokens per beam; ``logits``: vocabulary-wide logits per input token.

    >>> from types import SimpleNamespace
    >>> gpt2 = SimpleNamespace(n_embd=768, n_layer=12, n_head=12, vocab_size=50257)
    >>> footprint(gpt2, element=4, max_len=1024, logits=True)  # 4(2·768·12+4·768+3072+12·1024)+8·50257
    Footprint(per_token=549512, fixed=0)
    """
    d = _size(config, "d_model", "hidden_size", "n_embd")
    layers = _size(config, "decoder_layers", "num_decoder_layers", "num_hidden_layers", "n_layer")
    ffn = _size(config, "encoder_ffn_dim", "d_ff", "intermediate_size", "n_inner", default=4 * d)
    heads = _size(config, "encoder_attention_heads", "num_heads", "num_attention_heads", "n_head", default=1)
    vocab = _size(config, "vocab_size")
    per_token = element * (2 * d * layers + 4 * d + ffn + heads * max_len)
    fixed = 0
    if out_len:
        per_token += element * beams * d * (1 + 2 * layers)
        fixed = element * beams * out_len * 2 * d * layers + beams * vocab * 4 * 2
    if logits:
        per_token += vocab * 4 * 2
    return Footprint(per_token, fixed)


def fill_batches(
    lengths: Sequence[int], *, per_token: int, fixed: int, free: int, max_batch_size: int
) -> list[list[int]]:
    """:func:`length_batches` of at most ``max_batch_size`` items whose padded bytes fit in
    :data:`FILL_FRACTION` of ``free`` bytes."""
    costs = [fixed + per_token * n for n in lengths]
    return length_batches(costs, batch_size=max_batch_size, max_tokens=max(1, int(free * FILL_FRACTION)))


def device_batches(
    lengths: Sequence[int],
    *,
    device: Any,
    batch_size: int,
    max_batch_size: int,
    cost: Footprint | Callable[[], Footprint],
    max_tokens: int | None = None,
) -> list[list[int]]:
    """The batches of a stage: on a CUDA device :func:`fill_batches` by ``cost`` (a :class:`Footprint`,
    or a function making it); elsewhere :func:`length_batches` by ``batch_size`` and ``max_tokens``."""
    free = free_bytes(device)
    if free is None:
        return length_batches(lengths, batch_size=batch_size, max_tokens=max_tokens)
    item = cost if isinstance(cost, Footprint) else cost()
    batches = fill_batches(
        lengths, per_token=item.per_token, fixed=item.fixed, free=free, max_batch_size=max_batch_size
    )
    if batches:
        most = max(len(b) for b in batches)
        logger.debug("%d batches of at most %d items (%d MiB free)", len(batches), most, free >> 20)
    return batches


def run_batched(
    items: Sequence[Any],
    fn: Callable[[list[Any]], Sequence[Any]],
    batches: Sequence[Sequence[int]],
    *,
    stage: str,
) -> list[Any]:
    """``fn`` over ``items`` in ``batches`` (lists of indices); per item, ``fn``'s value or, for an
    item that raises even alone, ``Failure(stage, reason)``. A plain ``ConnectionError`` (a server
    ``fn`` needs is down) is no item's fault: it is raised."""
    results: list[Any] = [None] * len(items)

    def run(indices: Sequence[int]) -> None:
        try:
            values = list(fn([items[i] for i in indices]))
            if len(values) != len(indices):
                raise RuntimeError(f"{len(values)} results for {len(indices)} inputs")
        except Exception as err:
            if type(err) is ConnectionError:
                raise
            import torch

            oom = isinstance(err, torch.OutOfMemoryError) or (
                isinstance(err, RuntimeError) and "out of memory" in str(err).lower()
            )
            if oom:
                torch.cuda.empty_cache()  # a no-op where CUDA was never used
            if len(indices) == 1:
                why = "out of memory even alone" if oom else reason(err)
                results[indices[0]] = Failure(stage, why)
                return
            why = "out of memory" if oom else type(err).__name__
            logger.warning("%s: batch of %d failed (%s); splitting it", stage, len(indices), why)
            half = len(indices) // 2
            run(indices[:half])
            run(indices[half:])
            return
        for i, value in zip(indices, values, strict=True):
            results[i] = value

    for batch in batches:
        run(list(batch))
        with _LISTENERS_LOCK:
            listeners = list(_LISTENERS)
        for listener in listeners:
            listener(stage, len(batch), len(items))
    return results


@contextlib.contextmanager
def batch_listener(fn: Callable[[str, int, int], None]) -> Iterator[None]:
    """Call ``fn(stage, batch_items, call_items)`` after each batch :func:`run_batched` runs (in any
    thread) within the block.

    >>> seen = []
    >>> with batch_listener(lambda *a: seen.append(a)):
    ...     _ = run_batched([1, 2, 3], lambda b: b, [[0, 1], [2]], stage="demo")
    >>> seen
    [('demo', 2, 3), ('demo', 1, 3)]
    """
    with _LISTENERS_LOCK:
        _LISTENERS.append(fn)
    try:
        yield
    finally:
        with _LISTENERS_LOCK:
            _LISTENERS.remove(fn)
