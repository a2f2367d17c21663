"""The inference backend under the model stages: transformers, or CTranslate2 (the fast path).

``auto`` is CTranslate2 when installed, float32 on a CPU and bfloat16 (else float16) on a GPU;
``exact=True`` keeps float32 everywhere. Only the model call changes: the model is converted on
first use (:func:`converted`), its vocabulary the token ids themselves.

>>> resolve_backend("transformers", "auto", "cpu")
('transformers', 'auto')
>>> resolve_backend("ctranslate2", "auto", "cuda", bf16=False)
('ctranslate2', 'float16')
>>> resolve_backend("ctranslate2", "auto", "cuda", exact=True)
('ctranslate2', 'float32')
>>> resolve_backend("transformers", "int8", "cpu")
Traceback (most recent call last):
paraamr.errors.UsageError: compute type 'int8' needs the ctranslate2 backend (transformers runs float32, ...
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paraamr.atomic import atomic_dir
from paraamr.errors import InputError, UsageError
from paraamr.locks import file_lock
from paraamr.models.resolve import cache_root
from paraamr.tasks import feed

__all__ = [
    "BACKENDS",
    "COMPUTE_TYPES",
    "Seq2SeqModel",
    "auto_backend",
    "converted",
    "converted_copies",
    "fingerprint",
    "load_encoder",
    "load_generator",
    "model_digest",
    "resolve_backend",
]

logger = logging.getLogger(__name__)

BACKENDS = ("auto", "transformers", "ctranslate2")
COMPUTE_TYPES = ("auto", "int8", "float32", "float16", "bfloat16", "int8_float16")
#: Suffix of a converted copy's folder name: ``.NAME.ct2-DIGEST`` beside the model.
CT2_SUFFIX = ".ct2-"
#: Files of a model folder that make its digest (weights and configuration).
_WEIGHTS = (".safetensors", ".bin", ".json", ".pt")


def ctranslate2_installed() -> bool:
    """True when ``ctranslate2`` is installed (looked up, not imported: settings ask it at once)."""
    if "ctranslate2" in sys.modules:  # imported already, or blocked (None)
        return sys.modules["ctranslate2"] is not None
    return importlib.util.find_spec("ctranslate2") is not None


@functools.cache
def _fast_path_off() -> None:
    """Say once a process that the fast path is off."""
    logger.warning("ctranslate2 is not installed: the fast path is off (pip install ctranslate2)")


def auto_backend() -> str:
    """The backend ``auto`` is: ctranslate2 when installed, else transformers, said once a process
    (where a model stage loads, or a run's settings are made)."""
    if ctranslate2_installed():
        return "ctranslate2"
    _fast_path_off()
    return "transformers"


def resolve_backend(
    backend: str, compute_type: str, device: Any, *, exact: bool = False, bf16: bool | None = None
) -> tuple[str, str]:
    """``(backend, compute_type)`` to run, ``auto`` resolved; ``bf16``: whether the GPU runs bfloat16
    (None: ask torch). Settings that do not go together raise :class:`~paraamr.errors.UsageError`."""
    if backend not in BACKENDS:
        raise UsageError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if compute_type not in COMPUTE_TYPES:
        raise UsageError(f"unknown compute type {compute_type!r}; expected one of {', '.join(COMPUTE_TYPES)}")
    if backend == "auto":
        backend = auto_backend()
    elif backend == "ctranslate2" and not ctranslate2_installed():
        raise UsageError("backend 'ctranslate2' needs the ctranslate2 package (pip install ctranslate2)")
    if backend == "transformers":
        if compute_type not in ("auto", "float32", "float16", "bfloat16"):  # auto: the stage's dtype
            raise UsageError(
                f"compute type {compute_type!r} needs the ctranslate2 backend "
                "(transformers runs float32, float16 or bfloat16)"
            )
        return backend, compute_type
    if compute_type == "auto":
        kind = getattr(device, "type", str(device)).split(":")[0]
        if kind != "cuda" or exact:
            compute_type = "float32"
        else:
            if bf16 is None:
                import torch

                bf16 = torch.cuda.is_bf16_supported()
            compute_type = "bfloat16" if bf16 else "float16"
    return backend, compute_type


def fingerprint(path: Path) -> str:
    """A short key of the whole content of file ``path`` (a model tuned with most weights frozen
    differs from its base only inside the file).

    >>> import tempfile
    >>> a, b = Path(tempfile.mkdtemp()) / "a", Path(tempfile.mkdtemp()) / "b"
    >>> _ = a.write_bytes(b"x" * 5000), b.write_bytes(b"x" * 5000)
    >>> fingerprint(a) == fingerprint(b)
    True
    >>> _ = b.write_bytes(b"x" * 4999 + b"y")
    >>> fingerprint(a) == fingerprint(b)
    False
    """
    with open(path, "rb") as f:
        return feed(hashlib.sha1(), f).hexdigest()[:16]


def model_digest(source: str | Path) -> str:
    """The digest of a model: its file, or a folder's weight and configuration files, by name and
    content; read once a process while the files are unchanged, the same wherever they are.

    >>> import tempfile
    >>> a, b = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    >>> for d in (a, b):
    ...     _ = (d / "config.json").write_text("{}"), (d / "README.md").write_text(str(d))
    >>> model_digest(a) == model_digest(b)  # a README is not the model
    True
    >>> _ = (b / "config.json").write_text('{"d_model": 8}')
    >>> model_digest(a) == model_digest(b)
    False
    """
    source = Path(source)
    files = [source] if source.is_file() else sorted(p for p in source.iterdir() if p.suffix in _WEIGHTS)
    stats = tuple((str(p), p.stat()) for p in files if p.is_file())
    return _digest(tuple((name, s.st_size, s.st_mtime_ns, s.st_ino) for name, s in stats))


@functools.cache
def _digest(files: tuple[tuple[str, int, int, int], ...]) -> str:
    """:func:`model_digest` of ``files`` (path, size, mtime, inode): cached by what a change alters."""
    digest = hashlib.blake2b(digest_size=8)
    for name, *_ in files:
        digest.update(Path(name).name.encode() + b"\0" + fingerprint(Path(name)).encode())
    return digest.hexdigest()


class _IdVocabulary:
    """A tokenizer for conversion: the ids as strings, the special tokens the stage's (or config's)."""

    def __init__(self, config: Any, tokenizer: Any) -> None:
        size = int(config.vocab_size)
        self._vocab = {str(i): i for i in range(size)}

        def special(name: str, fallback: int | None) -> str | None:
            ids = (getattr(tokenizer, f"{name}_token_id", None), getattr(config, f"{name}_token_id", None))
            value = next((i for i in (*ids, fallback) if i is not None), None)
            return None if value is None else str(value)

        eos = getattr(config, "eos_token_id", None)
        self.eos_token = special("eos", 0)
        self.bos_token = special("bos", eos)
        self.pad_token = special("pad", eos)
        self.unk_token = special("unk", eos if eos is not None else 0)

    def get_vocab(self) -> dict[str, int]:
        return dict(self._vocab)

    def convert_ids_to_tokens(self, ids: Any) -> Any:
        return [str(i) for i in ids] if isinstance(ids, list) else str(ids)

    def __len__(self) -> int:
        return len(self._vocab)


def _convert(source: Path, output: Path, tokenizer: Any) -> None:
    """Convert the transformers model at ``source`` into ``output`` (float32 weights, id vocabulary)."""
    from ctranslate2.converters import TransformersConverter

    class Converter(TransformersConverter):
        def load_model(self, model_class, model_name_or_path, **kwargs):
            import torch

            kwargs["dtype"] = torch.float32
            model = super().load_model(model_class, model_name_or_path, **kwargs)
            config = model.config
            # fields transformers 5 no longer writes, which CTranslate2's loaders read
            if config.model_type == "bart" and not hasattr(config, "normalize_before"):
                config.normalize_before = False  # BART is post-norm
            encoders = ("bert", "roberta", "xlm-roberta", "distilbert")
            if config.model_type in encoders and getattr(config, "position_embedding_type", None) is None:
                config.position_embedding_type = "absolute"  # the only kind transformers 5 has
            self.config = model.config
            return model

        def load_tokenizer(self, tokenizer_class, model_name_or_path, **kwargs):
            return _IdVocabulary(self.config, tokenizer)

    notes = logging.getLogger("transformers.configuration_utils")
    notes.addFilter(_no_dtype_note)  # CTranslate2 reads config.torch_dtype where dtype is unset
    try:
        Converter(str(source)).convert(str(output), force=True)
    finally:
        notes.removeFilter(_no_dtype_note)


def _no_dtype_note(record: logging.LogRecord) -> bool:
    return "`torch_dtype` is deprecated" not in record.getMessage()


def converted(source: str | Path, tokenizer: Any = None, *, cache_dir: str | Path | None = None) -> Path:
    """The CTranslate2 copy of model folder ``source`` (special tokens from ``tokenizer``), converted
    once; copies beside it from the folder's earlier files are removed."""
    source = Path(source)
    place = source.parent if _beside(source) else cache_root(cache_dir) / "ct2"
    target = place / f"{_prefix(source, place)}{model_digest(source)}"
    if not target.is_dir():
        with file_lock(place / f"{target.name}.lock", command="convert a model"):
            if not target.is_dir():
                logger.info("converting %s for CTranslate2 (once) into %s", source, target)
                with atomic_dir(target, exist_ok=True) as tmp:
                    _convert(source, tmp, tokenizer)
    for stale in converted_copies(source, cache_dir):
        if stale != target and stale.parent == source.parent:
            logger.info("removing %s, converted from earlier files of %s", stale, source)
            shutil.rmtree(stale, ignore_errors=True)
    return target


def _beside(source: Path) -> bool:
    """Whether the copies of ``source`` go beside it: its folder is writable and not a snapshot of
    huggingface_hub's cache (a copy there reads as another revision of the repo)."""
    snapshot = source.parent.name == "snapshots" and source.parent.parent.name.startswith("models--")
    return os.access(source.parent, os.W_OK) and not snapshot


def _prefix(source: Path, place: Path) -> str:
    """How the copies of ``source`` in the folder ``place`` begin: in the cache, with a digest of its
    path (the copies of two read-only folders named alike are kept apart)."""
    if place == source.parent:
        return f".{source.name}{CT2_SUFFIX}"
    where = hashlib.sha1(str(source.resolve()).encode()).hexdigest()[:8]
    return f".{source.name}-{where}{CT2_SUFFIX}"


def converted_copies(source: str | Path, cache_dir: str | Path | None = None) -> list[Path]:
    """Every converted copy of the model folder ``source`` (any digest), beside it or in the cache,
    and what a conversion killed before its end left (``.<copy>.<pid>-<hex>.tmp``)."""
    source = Path(source)
    found = []
    for place in (source.parent, cache_root(cache_dir) / "ct2"):
        prefix = _prefix(source, place)
        if place.is_dir():
            found += [p for p in place.iterdir() if p.is_dir() and p.name.startswith((prefix, "." + prefix))]
    return sorted(found)


#: How a CTranslate2 decoder uses a CPU's threads: ``halves`` (each batch split in two, run side by
#: side on half the threads each) or ``team`` (one worker, every thread). Encoders and GPUs: ``team``.
DECODER_LAYOUTS = ("team", "halves")
decoder_layout = "halves"


def _halves(device: str) -> bool:
    """Whether a decoder on CTranslate2's ``device`` ("cpu", "cuda") runs ``halves``."""
    return decoder_layout == "halves" and device == "cpu"


def _engine(name: str, path: Path, device: Any, compute_type: str):
    """A ``ctranslate2.<name>`` over the converted ``path``, laid out as :data:`decoder_layout` says."""
    import ctranslate2
    import torch

    if decoder_layout not in DECODER_LAYOUTS:
        raise ValueError(f"unknown decoder layout {decoder_layout!r}; expected one of {DECODER_LAYOUTS}")
    device = torch.device(device)
    kind = "cuda" if device.type == "cuda" else "cpu"
    threads = torch.get_num_threads()
    workers = min(2, threads) if name != "Encoder" and _halves(kind) else 1
    try:
        engine = getattr(ctranslate2, name)(
            str(path),
            device=kind,
            device_index=int(device.index or 0),
            compute_type=compute_type,
            inter_threads=workers,
            intra_threads=threads // workers,
        )
    except RuntimeError as err:  # a file of the copy damaged or cut short, or the device failing
        why = (str(err).splitlines() or [""])[0]
        raise InputError(
            f"{path}: CTranslate2 cannot load this converted copy of a model ({why}); if it is damaged, "
            "delete the folder: it is converted again on first use"
        ) from None
    # loading set this thread's OpenMP thread count (shared with torch) to ``intra_threads``
    torch.set_num_threads(threads)
    return engine


def _split(engine: Any, items: int) -> int:
    """``max_batch_size`` of a call on ``items`` (0: the batch whole; see :data:`decoder_layout`)."""
    return -(-items // 2) if _halves(engine.device) else 0


#: ``load_*(path, device, compute_type)``: a ``ctranslate2`` engine over the converted ``path``.
load_translator = functools.partial(_engine, "Translator")
load_generator = functools.partial(_engine, "Generator")
load_encoder = functools.partial(_engine, "Encoder")


def _tokens(ids: Sequence[int]) -> list[str]:
    return [str(int(i)) for i in ids]


class Seq2SeqModel:
    """Stands in for a transformers encoder-decoder under amrlib: ``generate`` answered by CTranslate2
    with the model's ``generation_config``, token ids as transformers returns them."""

    def __init__(self, model: Any, path: Path, device: Any, compute_type: str) -> None:
        self.config = model.config
        self.generation_config = model.generation_config
        self.device = model.device
        self.translator = load_translator(path, device, compute_type)

    def eval(self) -> Seq2SeqModel:
        return self

    def generate(
        self,
        input_ids: Any,
        attention_mask: Any = None,
        *,
        max_length: int | None = None,
        num_beams: int | None = None,
        num_return_sequences: int = 1,
        early_stopping: bool = False,
        **kwargs: Any,
    ) -> list[list[int]]:
        """Token ids of the ``num_return_sequences`` best outputs of each input, in order."""
        gen = self.generation_config
        beams = num_beams or gen.num_beams or 1
        max_length = max_length or gen.max_length
        start = self.config.decoder_start_token_id
        eos = gen.eos_token_id if gen.eos_token_id is not None else self.config.eos_token_id
        forced_bos = gen.forced_bos_token_id
        rows = input_ids.tolist()
        masks = attention_mask.tolist() if attention_mask is not None else [[1] * len(r) for r in rows]
        source = [
            _tokens([t for t, m in zip(r, k, strict=True) if m]) for r, k in zip(rows, masks, strict=True)
        ]
        prefix = [[str(forced_bos)] for _ in rows] if forced_bos is not None else None
        sample = bool(gen.do_sample)
        banned = [[t] for t in gen.suppress_tokens or ()] + list(gen.bad_words_ids or ())
        results = self.translator.translate_batch(
            source,
            target_prefix=prefix,
            beam_size=1 if sample else beams,
            num_hypotheses=num_return_sequences,
            length_penalty=gen.length_penalty if gen.length_penalty is not None else 1.0,
            repetition_penalty=gen.repetition_penalty or 1.0,
            no_repeat_ngram_size=gen.no_repeat_ngram_size or 0,
            max_decoding_length=max_length - 1,  # transformers counts the decoder start token
            min_decoding_length=max(0, (gen.min_length or 0) - 1),
            max_input_length=0,
            max_batch_size=_split(self.translator, len(source)),
            suppress_sequences=[_tokens(s) for s in banned] or None,
            return_end_token=True,
            sampling_topk=(gen.top_k or 0) if sample else 1,
            sampling_topp=(gen.top_p or 1.0) if sample else 1.0,
            sampling_temperature=(gen.temperature or 1.0) if sample else 1.0,
        )
        out = []
        for result in results:
            for tokens in result.hypotheses:
                ids = [int(t) for t in tokens]
                if gen.forced_eos_token_id is not None and len(ids) == max_length - 1 and ids[-1] != eos:
                    ids[-1] = gen.forced_eos_token_id  # transformers forces EOS on the last step
                out.append([start, *ids])
        return out


def score_sequences(generator: Any, batch: Sequence[Sequence[int]]) -> list[list[float]]:
    """Per id sequence, the log-probability of each token after the first (CTranslate2 scoring)."""
    tokens = [_tokens(ids) for ids in batch]
    results = generator.score_batch(tokens, max_input_length=0, max_batch_size=_split(generator, len(tokens)))
    return [list(r.log_probs) for r in results]
