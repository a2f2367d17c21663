"""Everything a run checks before a model loads or a file is written.

>>> from paraamr.settings import RecordSettings, check_tagging
>>> input_file(RecordSettings(input="-")) is None, input_file(RecordSettings(amr_input="g.amr"))
(True, 'g.amr')
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from paraamr.builder import readers
from paraamr.builder.hub import check_push
from paraamr.builder.state import RunFolder
from paraamr.errors import InputError, ModelNotFoundError, UsageError, check_input_file
from paraamr.models.download import ensure
from paraamr.models.fast import model_digest
from paraamr.report import MAX_MESSAGE
from paraamr.settings import RecordSettings, check_tagging
from paraamr.tasks import dataset_identity, input_identity

__all__ = ["check_run", "input_file", "models_on_disk", "read_rows"]


def read_rows(r: RecordSettings) -> Iterator:
    """All input rows of a run, in order (see :mod:`paraamr.builder.readers`)."""
    if r.amr_input:
        return readers.read_input(r.amr_input, fmt="amr")
    if r.dataset:
        return readers.read_dataset(
            r.dataset, split=r.dataset_split or r.split, column=r.text_column, config=r.dataset_config
        )
    return readers.read_input(r.input, column=r.text_column, fmt=r.input_format)


def input_file(record: RecordSettings) -> str | None:
    """The input file of a run (None for stdin and datasets)."""
    path = record.amr_input or record.input
    return None if path in (None, "-") else path


def local_identity(record: RecordSettings) -> dict[str, Any] | None:
    """The identity of a run's input file or local dataset (None for stdin and a Hub dataset)."""
    path = input_file(record)
    if path is not None:
        return input_identity(path)
    if record.dataset and Path(record.dataset).exists():
        return dataset_identity(record.dataset)
    return None


def _check_input(record: RecordSettings, num_processes: int) -> None:
    """Input problems found without reading more than a file's first row."""
    if not record.source:
        raise UsageError("give one of --input, --dataset, --amr-input")
    if record.input == "-" and num_processes > 1:
        raise UsageError("--input - (stdin) needs a single process")
    path = input_file(record)
    if record.dataset:  # found (a local path checked here first), with its text column
        if next(iter(read_rows(record)), None) is None:
            split = record.dataset_split or record.split
            raise InputError(f"--dataset {record.dataset}: no rows in split {split!r}")
        return
    if path is None:
        if record.input == "-":
            readers.input_format("-", record.input_format)
        return
    stdin = "" if record.amr_input else ", or pipe it to --input -"
    check_input_file(path, f"save it to a file{stdin}")  # the run reads its input twice
    fmt = "amr" if record.amr_input else readers.input_format(path, record.input_format)
    first = readers.read_input(path, column=record.text_column, fmt=fmt)
    if next(iter(first), None) is None:  # a run of nothing would load the models to write nothing
        raise InputError(f"{path}: no input rows")


#: What to do without a network (docs/models.md, Getting the models).
OFFLINE = (
    "without a network: fetch them elsewhere (paraamr models download NAME) and copy the caches, "
    "or give local folders (--parser-model, --realizer-model, --lm-model)"
)


def models_on_disk(
    record: RecordSettings, *, download: bool = True, trust_remote_code: bool = False
) -> dict[str, str]:
    """``{kind: path}`` of every model the records need (:func:`paraamr.models.download.ensure`);
    one error naming each missing model."""
    check_tagging(record)
    found: dict[str, str] = {}
    missing: dict[str, str] = {}  # "kind 'name'": its message
    for kind, name in record.models().items():
        try:
            found[kind] = str(ensure(name, kind, download=download, trust_remote_code=trust_remote_code))
        except ModelNotFoundError as err:
            missing[f"{kind} {name!r}"] = str(err)
    if len(missing) == 1:
        raise ModelNotFoundError(*missing.values())
    if missing:
        raise ModelNotFoundError(_models_missing(missing))
    return found


def _models_missing(missing: dict[str, str]) -> str:
    """The messages of several missing models (by ``kind 'name'``) as one line, shortened; when too
    long, the models named and the first one's message whole.

    >>> _models_missing({"parser 'a'": "a is not on disk (looked at /x); fetch it with: get a (offline)",
    ...                  "lm 'b'": "b is not on disk (looked at /y); fetch it with: get b (offline)"})
    'models missing: a is not on disk; fetch it with: get a; b is not on disk; fetch it with: get b (offline)'
    >>> text = _models_missing({f"{k} '{k}1'": f"{k} model path './{k}1' could not be fetched: cannot "
    ...                         f"download https://h.org/x.tar.gz: {'y' * 200}" for k in ("parser", "lm")})
    >>> text[:42]
    "models missing: parser 'parser1', lm 'lm1'"
    >>> text[42:].split(": cannot")[0]
    "; the first: parser model path './parser1' could not be fetched"
    """
    messages = list(missing.values())
    short = [re.sub(r" \(looked at [^)]*\)", "", m) for m in messages]
    short = [re.sub(r"cannot download https?://([^/\s]+)\S*:", r"cannot download from \1:", m) for m in short]
    why = {"".join(re.findall(r" \([^()]*\)$", m)) for m in short}
    tail = why.pop() if len(why) == 1 else ""
    text = "models missing: " + "; ".join(m.removesuffix(tail) for m in short) + tail
    offline = f"; {OFFLINE}" if any("could not be fetched" in m for m in messages) else ""
    if len(text + offline) > MAX_MESSAGE - 40:  # (the command's name before it) too long to be read whole:
        text = f"models missing: {', '.join(missing)}; the first: {short[0]}"  # the first one's message whole
    return text + offline


def check_run(
    record: RecordSettings,
    folder: RunFolder,
    *,
    overwrite: bool = False,
    models: bool = True,
    download: bool = True,
    trust_remote_code: bool = False,
    push: Any = None,
) -> tuple[dict[str, Any], str, dict[str, str]]:
    """Check the input, the output folder, with ``models`` each model (on disk, unchanged on resume)
    and the upload ``push``. Returns the settings to save, the mode (:meth:`RunFolder.check`) and
    ``{kind: path}`` of each model."""
    _check_input(record, folder.num_processes)
    identity = local_identity(record) or (dataset_identity(record.dataset) if record.dataset else None)
    mode = folder.check(record, identity, overwrite=overwrite)
    paths = models_on_disk(record, download=download, trust_remote_code=trust_remote_code) if models else {}
    digests = {kind: model_digest(path) for kind, path in paths.items()}
    if mode == "resume":
        mode = folder.check_models(record, digests)
    check_push(push, "paraamr generate")  # (after the models: offline, their message says more)
    return folder.resume_record(record, identity, digests or None), mode, paths
