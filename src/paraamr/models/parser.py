"""Text -> AMR with amrlib's sentence-to-graph (stog) models.

:class:`Parser` loads any amrlib stog model — a release name from
:data:`~paraamr.models.catalog.AMRLIB_MODELS` (``parse_xfm_bart_large`` by default), or a model
dir — with ``amrlib.load_stog_model``, passing the tokenizer from the model cache. ``parse``
returns, per sentence, a PENMAN string with ``# ::snt`` metadata or a
:class:`~paraamr.failures.Failure` (stage ``parse``):

>>> from paraamr.models import tiny
>>> from paraamr.models.tiny import GARBLED_TEXT, PAPER_TEXT
>>> parser = Parser(tiny.shared()["parser"], num_beams=1)
>>> graph, empty, garbled = parser.parse([PAPER_TEXT, "  ", GARBLED_TEXT])
>>> print(graph.splitlines()[0])
# ::snt I know for them to approve this price, they'll need statistical documentation.
>>> empty
Failure(stage='parse', reason='empty sentence')
>>> garbled
Failure(stage='parse', reason='no beam deserialized into a graph (num_beams=1)')
>>> parser.stats
{'parsed': 1, 'failed': 2, 'clipped': 0}

A sentence longer than the model's ``max_in_len`` tokens is clipped by amrlib; ``on_clip="flag"``
(default) keeps its graph and adds ``# ::clipped <kept>/<total> tokens`` to its metadata,
``on_clip="fail"`` returns a Failure instead. amrlib's ``parse_spring`` (the paper's SPRING) works
only with transformers < 5; with transformers 5 it raises a clear error.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from paraamr.errors import ParaAMRError
from paraamr.failures import Failure
from paraamr.models.catalog import BATCH_SIZES, DEFAULTS
from paraamr.models.loading import AmrlibModel
from paraamr.models.resolve import amrlib_meta, base_tokenizer
from paraamr.texts import refuse_one_string

__all__ = ["Parser"]

STAGE = "parse"


class Parser(AmrlibModel):
    """amrlib stog parser; ``parse(sentences)`` -> per sentence PENMAN (with ``# ::snt``) or Failure.

    Options (defaults are these): ``device=None`` (cuda when available, else cpu), ``dtype=None``
    (float32 on CPU, bfloat16 on CUDA where supported, else float16; or "fp32"/"fp16"/"bf16"),
    ``batch_size=16`` sentences per batch (sorted by length), ``num_beams=None`` (the model's, in
    its ``amrlib_meta.json``, else amrlib's 4; the first beam that deserializes wins),
    ``on_clip="flag"`` ("flag" or "fail"),
    ``cache_dir=None`` (the model cache), ``download=True`` (fetch a missing model),
    ``trust_remote_code=False`` (refuse a folder naming other code than amrlib's parsers),
    ``backend="auto"`` and ``compute_type="auto"`` (:mod:`paraamr.models.fast`: CTranslate2 when
    installed, float32 on a CPU; only the model call changes, amrlib's processing stays),
    ``max_batch_size=None`` (on a CUDA device batches are sized by the free memory, up to this
    many sentences; None: :data:`~paraamr.models.catalog.MAX_BATCH_SIZES`).
    ``stats`` counts parsed, failed and clipped sentences over the parser's lifetime;
    ``inference`` is amrlib's inference object.
    """

    kind, clip_policies = "parser", ("flag", "fail")
    length_limits = ("max_sent_len", "max_graph_len")  # amrlib's longest input and output

    def __init__(
        self,
        model: str | Path = DEFAULTS["parser"],
        *,
        batch_size: int = BATCH_SIZES["parser"],
        num_beams: int | None = None,
        on_clip: str = "flag",
        **options: Any,
    ) -> None:
        import amrlib
        import transformers

        beams = 4 if num_beams is None else num_beams  # (the model's, read below)
        super().__init__(model, batch_size=batch_size, num_beams=beams, on_clip=on_clip, **options)
        meta = amrlib_meta(self.path, "parser", trust_remote_code=self.trust_remote_code)
        if num_beams is None:  # the model's own (amrlib_meta.json's kwargs), else amrlib's 4
            self.num_beams = int(meta.get("kwargs", {}).get("num_beams", 4))
        spring = "parse_spring" in meta.get("inference_module", "")
        if spring and int(transformers.__version__.split(".")[0]) >= 5:  # it needs transformers 4 internals
            raise ParaAMRError(
                f"parser model {str(model)!r} is amrlib's parse_spring, which needs transformers < 5 "
                f"(installed: {transformers.__version__}); use parse_xfm_bart_large, or install "
                "'transformers<5' in a separate environment"
            )
        kwargs = {}
        if not spring:
            kwargs["tok_name_or_path"] = str(base_tokenizer(self.path, cache_dir=self.cache_dir))
        self.load(amrlib.load_stog_model, **kwargs)
        # amrlib switches n-gram blocking off through model.config, which transformers 5 no longer
        # reads: a model whose saved config carries no_repeat_ngram_size keeps it in its
        # generation_config, and beam search would forbid every repeated 3-gram of a serialization
        self.inference.model.generation_config.no_repeat_ngram_size = 0
        self.stats = {"parsed": 0, "failed": 0, "clipped": 0}

    def _parse_batch(self, sentences: list[str]) -> list[str | Failure]:
        self.inference.batch_size = len(sentences)  # amrlib runs the batch as it comes
        graphs = self.inference.parse_sents(sentences, add_metadata=True)
        why = f"no beam deserialized into a graph (num_beams={self.num_beams})"
        return [Failure(STAGE, why) if g is None else g for g in graphs]

    def parse(self, sentences: Iterable[str]) -> list[str | Failure]:
        """Parse ``sentences``; per sentence a PENMAN string with ``# ::snt`` or a Failure."""
        refuse_one_string(sentences, "sentences")
        sentences = list(sentences)
        results: list[Any] = [None] * len(sentences)
        todo: list[int] = []
        for i, s in enumerate(sentences):
            if not isinstance(s, str):
                results[i] = Failure(STAGE, f"not a string: {type(s).__name__}")
            elif not s.strip():
                results[i] = Failure(STAGE, "empty sentence")
            else:
                todo.append(i)
        # amrlib writes the sentence into a one-line "# ::snt" comment: keep it on one line.
        texts = [" ".join(sentences[i].split()) for i in todo]
        limit = getattr(self.inference, "max_sent_len", None)
        lengths, parsed = self.run(texts, self._parse_batch, STAGE)
        for i, n, graph in zip(todo, lengths, parsed, strict=True):
            if limit is not None and n > limit and not isinstance(graph, Failure):
                self.stats["clipped"] += 1
                if self.on_clip == "fail":
                    graph = Failure(STAGE, f"sentence clipped: {n} tokens, the model reads {limit}")
                else:
                    head, _, rest = graph.partition("\n")
                    graph = f"{head}\n# ::clipped {limit}/{n} tokens\n{rest}"
            results[i] = graph
        for r in results:
            self.stats["failed" if isinstance(r, Failure) else "parsed"] += 1
        return results
