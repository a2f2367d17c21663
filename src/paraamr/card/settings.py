"""What a card says of a run's settings: models by name or content hash, never a local path.

>>> record_settings({"settings": {"lm_model": "gpt2", "max_perplexity": 120.0, "input": "/home/me/in.txt",
...     "batch_size": 8}})
[('perplexity LM', '`gpt2`'), ('max_perplexity', '120'), ('input', '`in.txt`')]
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from paraamr.card.markdown import code, number
from paraamr.models import catalog
from paraamr.models.base import precision_words
from paraamr.records import split_names
from paraamr.settings import RecordSettings
from paraamr.tasks import feed

__all__ = ["content_hash", "expected_splits", "flat", "method_text", "model_name", "record_settings"]


def flat(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A summary's ``settings`` over its top-level values (where old summaries keep input names)."""
    out = {k: v for k, v in summary.items() if not isinstance(v, Mapping)}
    out.update(summary.get("settings") or {})
    return out


def expected_splits(summary: Mapping[str, Any] | None) -> list[str]:
    """The splits a run's settings ask for (:func:`paraamr.records.split_names`).

    >>> expected_splits({"settings": {"split": "train", "validation_fraction": 0.1, "test_fraction": 0.0}})
    ['train', 'validation']
    """
    if not summary:
        return []
    s = flat(summary)
    fractions = (s.get("validation_fraction") or 0, s.get("test_fraction") or 0)
    return split_names(s.get("split") or "train", *fractions)


def content_hash(path: Path) -> str:
    """sha256 of a file, or of a folder's files (relative names and contents, in name order).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "w.bin").write_bytes(b"x")
    >>> content_hash(d) == content_hash(d) and len(content_hash(d))
    64
    """
    digest = hashlib.sha256()
    paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for p in paths:
        digest.update(str(p.relative_to(path) if p != path else p.name).encode() + b"\0")
        with open(p, "rb") as f:
            feed(digest, f)
    return digest.hexdigest()


def _local(value: str, base: Path | None) -> Path | None:
    """``value`` (relative to ``base``) as a local path if it exists or is written as one (absolute,
    ``./``, ``../``, ``~``); None for a name or Hub id."""
    local = Path(value) if os.path.isabs(value) else (base / value if base is not None else Path(value))
    return local if local.exists() or os.path.isabs(value) or value.startswith(("./", "../", "~")) else None


def model_name(value: Any, base: Path | None) -> str:
    """A model as the card names it: a name or Hub id as given (with an amrlib release's md5), a
    local one by its name and content hash."""
    if not isinstance(value, str):
        return number(value)
    local = _local(value, base)
    if local is not None and local.exists():
        return f"{code(local.resolve().name)} (local, sha256 `{content_hash(local)[:16]}`)"
    if local is not None:
        return f"{code(Path(value).name)} (local, no longer on disk)"
    release = catalog.AMRLIB_MODELS.get(value)
    if release is not None and release.md5:
        return f"{code(value)} (amrlib release v{release.version}, md5 `{release.md5}`)"
    return code(value)


def record_settings(
    summary: Mapping[str, Any], base: str | os.PathLike | None = None
) -> list[tuple[str, str]]:
    """``(setting, value)`` rows of the summary's :class:`~paraamr.settings.RecordSettings` fields:
    models by :func:`model_name` (local ones relative to ``base``), inputs by file name."""
    settings = flat(summary)
    base = Path(base) if base is not None else None
    rows = []
    for f in fields(RecordSettings):  # in the fields' order; a None only where it means no limit
        key, value = f.name, settings.get(f.name)
        if key not in settings or (value is None and key != "max_perplexity"):
            continue
        if "model" in f.metadata:
            rows += [(f.metadata["label"], model_name(value, base))] if value else []
        elif f.metadata.get("path") and isinstance(value, str):
            rows.append((key, "standard input" if value == "-" else code(Path(value).name)))
        elif key == "dataset" and (local := _local(value, base)) is not None:  # (not a Hub id)
            rows.append((key, f"{code(local.resolve().name)} (local)"))
        else:
            rows.append((key, code(value) if isinstance(value, str) else number(value)))
    if precision := (summary.get("run") or {}).get("precision"):  # what dtype and compute_type gave
        rows.append(("precision", code(precision_words(precision))))
    return rows


def method_text(settings: Mapping[str, Any], base: Path | None) -> str:
    """How the records were made, in prose, from a run's settings (:func:`flat`)."""
    get = settings.get

    def model(key: str) -> str:
        name = get(key)
        return model_name(name, base) if name else "the default model"

    if get("amr_input"):
        parts = ["AMR graphs were read from the input (no parser was run)."]
    else:
        parts = [f"Source sentences were parsed into AMR graphs with {model('parser_model')}."]
    foci = get("foci")
    foci_text = "every other concept" if foci in (None, "all") else f"up to {foci} other concepts"
    if get("foci_rule") == "every-node":
        foci_text += " (every node a candidate focus, as in the paper)"
    elif get("foci_rule"):
        foci_text += " (not `name`, `and`, `or`, `multi-sentence` or `amr-unknown`)"
    writer = {"penman": " by penman (`penman.encode`)", "paraamr": " by paraamr's serializer"}
    tagged = {"tagged": ", tagged with the source sentence's POS tags,", "untagged": ", untagged,"}
    written, realized = writer.get(get("linearization"), ""), tagged.get(get("tagging"), "")
    parts.append(
        f"Each graph was re-rooted at {foci_text}, incoming edges inverted, written{written} and "
        f"realized{realized} as a sentence with {model('realizer_model')}; the perplexity of each "
        f"paraphrase was computed with {model('lm_model')}."
    )
    threshold = get("max_perplexity")
    parts.append(
        f"Paraphrases with perplexity above {number(threshold)} were dropped."
        if threshold is not None
        else "Every paraphrase was kept with its perplexity, as in the ParaAMR release: apply the "
        "paper's thresholds where you use the data (120 in general, 110 for sentence embeddings and "
        "few-shot learning, 85 for syntactically controlled generation; see Quick Start)."
    )
    for key, kept, what in (
        ("similarity_model", "min_similarity", "Similarity to the source"),
        ("quality_model", "min_quality", "Paraphrase quality"),
    ):
        if get(key):
            cut = get(kept)
            dropped = f"; paraphrases below {number(cut)} were dropped." if cut is not None else "."
            parts.append(f"{what} was scored with {model(key)}{dropped}")
    parts.append("The settings that define the records (the rest of the run is in `summary.json`):")
    return " ".join(parts)
