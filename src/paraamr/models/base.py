"""Shared machinery of the model stages: device/dtype choice, batching by length, OOM split-and-retry.

Every stage turns items into values in batches of similar length (:func:`length_batches`), and
runs each batch through :func:`run_batched`, which returns per item its value or a
:class:`~paraamr.failures.Failure`: a batch that runs out of memory (or raises) is split in two
and retried, down to one item, which then fails alone; the other items never get lost.

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
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from paraamr.failures import Failure
from paraamr.report import reason

logger = logging.getLogger(__name__)
#: Callbacks told of each finished batch, from any thread: ``fn(stage, items in the batch, items
#: in the call)`` (progress displays; :func:`batch_listener`).
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


def resolve_device(device: Any = None):
    """``torch.device(device)``; None -> ``cuda`` when available, else ``cpu``."""
    import torch

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(device)


def resolve_dtype(dtype: Any, device) -> Any:
    """A torch dtype from ``dtype`` (a torch dtype or ``fp32``/``fp16``/``bf16``/full names); None ->
    float32 on CPU, bfloat16 on a CUDA device that supports it, else float16.

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


def length_batches(
    lengths: Sequence[int], *, batch_size: int, max_tokens: int | None = None
) -> list[list[int]]:
    """Indices of ``lengths`` sorted longest first and cut into batches of at most ``batch_size``
    items and, when ``max_tokens`` is set, at most ``max_tokens`` padded tokens (longest × count;
    an item longer than that goes alone)."""
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


def is_oom(err: BaseException) -> bool:
    """True for an accelerator out-of-memory error (torch's, or a RuntimeError saying so)."""
    import torch

    return isinstance(err, torch.OutOfMemoryError) or (
        isinstance(err, RuntimeError) and "out of memory" in str(err).lower()
    )


def _free_memory() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_batched(
    items: Sequence[Any],
    fn: Callable[[list[Any]], Sequence[Any]],
    batches: Sequence[Sequence[int]],
    *,
    stage: str,
) -> list[Any]:
    """``fn`` over ``items`` in ``batches`` (lists of indices); per item, ``fn``'s value or a Failure.

    ``fn`` maps a list of items to one value per item (a value may itself be a Failure). A batch
    that raises — out of memory or otherwise — is split in halves and retried; a single item that
    still raises becomes ``Failure(stage, reason)``.
    """
    results: list[Any] = [None] * len(items)

    def run(indices: Sequence[int]) -> None:
        try:
            values = list(fn([items[i] for i in indices]))
            if len(values) != len(indices):
                raise RuntimeError(f"{len(values)} results for {len(indices)} inputs")
        except Exception as err:
            oom = is_oom(err)
            if oom:
                _free_memory()
            if len(indices) == 1:
                why = "out of memory even alone" if oom else reason(err)
                results[indices[0]] = Failure(stage, why)
                return
            logger.warning(
                "%s: batch of %d failed (%s); splitting it",
                stage,
                len(indices),
                "out of memory" if oom else type(err).__name__,
            )
            half = len(indices) // 2
            run(indices[:half])
            run(indices[half:])
            return
        for i, value in zip(indices, values, strict=True):
            results[i] = value

    for batch in batches:
        run(list(batch))
        _notify(stage, len(batch), len(items))
    return results


@contextlib.contextmanager
def batch_listener(fn: Callable[[str, int, int], None]) -> Iterator[None]:
    """Call ``fn(stage, batch_items, call_items)`` after each batch any stage runs through
    :func:`run_batched` (in any thread) while the block runs: progress per batch, not per call.

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


def _notify(stage: str, n: int, total: int) -> None:
    with _LISTENERS_LOCK:
        listeners = list(_LISTENERS)
    for fn in listeners:
        fn(stage, n, total)
