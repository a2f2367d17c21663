"""Settings of ``paraamr evaluate``, each a field (:func:`paraamr.options.setting`) with its option,
whether the row depends on it (``row``) and its ``--preset paper`` value.

>>> s = EvaluateSettings(path="pairs.tsv", ted_height="full")
>>> s.height, s.row_options()["ted_height"], s.parser_spec
(None, 'full', 'link-grammar')
>>> EvaluateSettings(preset="paper").similarity_model == PAPER_SIMILARITY
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import partial
from typing import Any

from paraamr.errors import UsageError
from paraamr.metrics.parsers import add_parser_options, parser_spec
from paraamr.metrics.scoring import MAX_CHARS
from paraamr.options import SEED, add_plot_options, check_settings, checking, setting, shard_spec
from paraamr.progress import MODES, add_progress_options

__all__ = ["PAPER_SIMILARITY", "EvaluateSettings"]

#: The paper's similarity model (supervised SimCSE, RoBERTa-large; pooler output).
PAPER_SIMILARITY = "princeton-nlp/sup-simcse-roberta-large"
_CACHE = (
    "keep parses in DIR across runs (keyed by parser signature and sentence), and the resume state "
    "(DIR/evaluate/<run>) unless --state-dir"
)
_main, _models = partial(setting, group="main"), partial(setting, group="models")
_scale, _POSITIVE = partial(setting, group="scale"), {"kind": int, "above": 0}


@dataclass(frozen=True)
class EvaluateSettings:
    """What ``paraamr evaluate`` is asked (``path``: one input or a list of corpora); ``preset="paper"``
    sets the fields left at their defaults to their ``paper`` values."""

    # fmt: off
    path: str | list[str] | None = None
    config: str | None = _main(None, "config of a Hub dataset (default: its default)", row=True)
    split: str | None = _main(
        None, "split to evaluate: of a Hub dataset (default: train) or of a local dataset folder (default: "
        "all its splits)", row=True)
    write_card: bool = _main(False, "put the row and its signatures into the card of PATH (a dataset folder)")
    sample: int | None = _main(
        None, "evaluate N SOURCES drawn at random, each with all its pairs (N pairs when every source has "
        "one paraphrase), and print each measure's 95%% interval (cluster bootstrap over sources)",
        metavar="N", number=_POSITIVE, row=True)
    seed: int = _main(0, "seed of --sample and its bootstrap (default: %(default)s)", number=SEED, row=True)
    max_chars: int = _main(
        MAX_CHARS, "a pair with a longer text is a failure row (default: %(default)s; link-grammar refuses "
        "sentences over ~2,046 characters)", metavar="N", number=_POSITIVE, row=True)
    parser: str = _models("link-grammar", add=partial(add_parser_options, cache=_CACHE), row=True)
    no_pos: bool = setting(False, row=True)
    processes: int | None = None
    cache_dir: str | None = None
    preset: str | None = _main(
        None, "paper: SimCSE similarity (princeton-nlp/sup-simcse-roberta-large, fetched on first use) and "
        "the paper's TED convention, where those options are not given", choices=("paper",))
    max_perplexity: float | None = _main(
        None, "leave out paraphrases of perplexity over X (the paper: 120; pairs without one are kept)",
        metavar="X", number={"low": 0, "none": True}, row=True)
    ted_convention: str = _models(
        "paper", "trees of TED-3/TED-F: paper (heights from the clause, words kept: Table 2's scale), aesop "
        "(AESOP's eval_utils: words dropped, S merged, heights from ROOT) or plain (default: %(default)s)",
        choices=("paper", "aesop", "plain"), paper="paper", row=True)
    references: str | None = _models(
        None, "one reference paraphrase per line, one per pair in input order: adds AESOP's BLEU, "
        "ROUGE-1/2/L, METEOR and TED-R", metavar="FILE")
    templates: str | None = _models(
        None, "one syntactic template (exemplar sentence) per line, one per pair: adds TED-E (needs "
        "--references)", metavar="FILE")
    ted_height: str = _models(
        "5", "height of TED-R/TED-E, or 'full' (AESOP's eval.py compares full trees; default: %(default)s)",
        metavar="H", row=True)
    similarity_model: str = _models(
        "all-MiniLM-L6-v2", "sentence-transformers model or SimCSE checkpoint (default: %(default)s)",
        paper=PAPER_SIMILARITY, row=True)
    pooling: str | None = _models(
        None, "embedding pooling (default: the model's own; SimCSE's rule for other encoders)",
        choices=("cls", "cls_before_pooler", "mean"), row=True)
    device: str | None = _models(None, "torch device of the embedder (default: cuda if available)")
    batch_size: int = _models(64, "embedder batch size (default: %(default)s)", number=_POSITIVE, row=True)
    backend: str = _models(
        "auto", "embedder engine (default auto: ctranslate2 when installed, else transformers)",
        choices=("auto", "transformers", "ctranslate2"), row=True)
    compute_type: str = _models(
        "auto", "ctranslate2 compute type (default auto: float32, the same embeddings; int8 drifts)",
        choices=("auto", "int8", "float32", "float16", "bfloat16", "int8_float16"), row=True)
    state_dir: str | None = _scale(
        None, "commit the statistics of each chunk in DIR/.paraamr/evaluate/; a killed run started again "
        "resumes there and gives the same row (a changed input is refused)", metavar="DIR")
    chunk_pairs: int = _scale(
        1000, "pairs of a chunk (whole sources), the unit of work and of commits (default: %(default)s)",
        metavar="N", number=_POSITIVE, row=True)
    shard: tuple[int, int] = _scale(
        (0, 1), "score shard I of N (from 0; 'slurm': the task of a Slurm job array) into --state-dir, with "
        "no process group; then combine the shards' state folders with --merge (default: 0/1, all pairs)",
        type=shard_spec, metavar="I/N|slurm")
    merge: Sequence[str] | None = _scale(
        None, "print the row of the statistics the shards committed in these state folders (PATH optional: "
        "given, it must be the input they scored)", nargs="+", metavar="DIR")
    plots: str | None = setting(None, group="output", add=add_plot_options)
    overwrite: bool = False
    json: bool = setting(False, "print the row as JSON", group="output")
    progress: str = setting("auto", group="output", add=add_progress_options, choices=MODES)
    # fmt: on

    def __post_init__(self) -> None:
        with checking(self):
            check_settings(self)
        if self.preset == "paper":
            for f in fields(self):
                if "paper" in f.metadata and getattr(self, f.name) == f.default:
                    object.__setattr__(self, f.name, f.metadata["paper"])

    def row_options(self) -> dict[str, Any]:
        """The options the row depends on, by name (what a state folder keeps and compares)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("row")}

    @property
    def height(self) -> int | None:
        """The TED height of ``ted_height`` (None: the whole tree)."""
        if self.ted_height == "full":
            return None
        with contextlib.suppress(ValueError):
            if int(self.ted_height) > 0:
                return int(self.ted_height)
        raise UsageError(f"--ted-height: expected a positive integer or 'full', got {self.ted_height!r}")

    @property
    def parser_spec(self) -> str:
        """The constituency parser as :func:`paraamr.metrics.parsers.get_parser` takes it."""
        return parser_spec(self.parser, self.no_pos)
