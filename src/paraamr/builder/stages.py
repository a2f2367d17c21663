"""The Python API of the corpus builder: model stages loaded from settings (:func:`load_stages`),
and a :class:`~paraamr.builder.pipeline.Generator` with them (:func:`make_generator`).

>>> make_generator(RecordSettings(), parser_model="x")
Traceback (most recent call last):
...
TypeError: give settings objects or settings by name, not both
"""

from __future__ import annotations

import os
import sys
from typing import Any

from paraamr.builder.pipeline import Generator, Stages
from paraamr.models.base import loading
from paraamr.settings import RecordSettings, RunSettings, no_spacy_model, split_settings

__all__ = ["load_stages", "make_generator", "quiet_libraries", "stage_precision"]


def quiet_libraries(verbose: bool = False) -> None:
    """Silence the libraries' messages and loading bars (the run counts failures and draws its own
    bar), unless ``verbose``."""
    if verbose:
        return
    import logging

    logging.getLogger("amrlib").setLevel(logging.CRITICAL)
    logging.getLogger("penman").setLevel(logging.CRITICAL)
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from huggingface_hub.utils import disable_progress_bars  # downloads turn theirs back on

    disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    if "datasets" in sys.modules:
        import datasets

        datasets.disable_progress_bars()
        datasets.logging.set_verbosity_error()


def load_stages(record: RecordSettings, run: RunSettings | None = None, **given: Any) -> Stages:
    """The model stages ``record`` needs, loaded with ``run``'s device and batch sizes; stages in
    ``given`` (``parser=``, ``realizer=``, ...) are used as they are (shared, already loaded)."""
    run = run or RunSettings()
    quiet_libraries(run.verbose)
    common = {"device": run.device, "dtype": record.dtype, "download": run.download}
    common["max_batch_size"] = run.max_batch_size
    common.update(backend=record.backend, compute_type=record.compute_type)
    amrlib = {"trust_remote_code": run.trust_remote_code}
    stages = dict(given)
    if record.needs("parser") and stages.get("parser") is None:
        from paraamr.models.parser import Parser

        beams = {"num_beams": record.num_beams} if record.num_beams else {}
        with loading("parser", record.parser_model):
            stages["parser"] = Parser(
                record.parser_model, **common, **amrlib, batch_size=run.parse_batch_size, **beams
            )
    if stages.get("realizer") is None:
        from paraamr.models.realizer import Realizer

        tagged = record.tagging == "tagged"
        with loading("realizer", record.realizer_model):
            stages["realizer"] = Realizer(
                record.realizer_model, **common, **amrlib, batch_size=run.realize_batch_size, use_tense=tagged
            )
        if tagged and not stages["realizer"].use_tense:
            raise no_spacy_model()
    if stages.get("lm") is None:
        from paraamr.models.lm import PerplexityScorer

        with loading("lm", record.lm_model):
            stages["lm"] = PerplexityScorer(record.lm_model, **common, batch_size=run.lm_batch_size)
    if record.needs("embedder") and stages.get("embedder") is None:
        from paraamr.models.embedder import Embedder

        stages["embedder"] = Embedder(
            record.similarity_model,
            device=run.device,
            download=run.download,
            backend=record.backend,
            max_batch_size=run.max_batch_size,
        )
    if record.needs("quality") and stages.get("quality") is None:
        from paraamr.quality import QualityScorer

        with loading("quality", record.quality_model):
            stages["quality"] = QualityScorer(record.quality_model, device=run.device, download=run.download)
    return Stages(**stages)


def make_generator(
    record: RecordSettings | None = None,
    run: RunSettings | None = None,
    *,
    stages: Stages | dict[str, Any] | None = None,
    **settings: Any,
) -> Generator:
    """A :class:`~paraamr.builder.pipeline.Generator` with the models of ``record``/``run``, or of
    flat ``settings`` by field name, loaded; ``stages`` hands over models already loaded."""
    if settings:
        if record is not None or run is not None:
            raise TypeError("give settings objects or settings by name, not both")
        record, run = split_settings(**settings)
    record, run = record or RecordSettings(), run or RunSettings()
    given = stages if isinstance(stages, dict) else vars(stages) if stages is not None else {}
    return Generator(load_stages(record, run, **given), record, window=run.window, pipelined=run.pipelined)


def stage_precision(stages: Stages) -> dict[str, str]:
    """What each model stage of ``stages`` runs at (``{"parser": "ctranslate2 float32", ...}``):
    the records of one run come from one precision. A stage that does not say is left out."""
    out = {}
    for kind in ("parser", "realizer", "lm"):
        said = getattr(getattr(stages, kind), "precision", None)
        if isinstance(said, str):
            out[kind] = said
    return out
