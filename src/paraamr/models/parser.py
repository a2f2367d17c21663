"""Text -> AMR with any amrlib sentence-to-graph (stog) model: a release name or a model dir.

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
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from paraamr.errors import ParaAMRError
from paraamr.extras import needs_extra
from paraamr.failures import Failure
from paraamr.models.catalog import BATCH_SIZES, DEFAULTS
from paraamr.models.loading import AmrlibModel
from paraamr.models.resolve import amrlib_meta, base_tokenizer
from paraamr.texts import refuse_one_string

__all__ = ["Parser"]

STAGE = "parse"


class Parser(AmrlibModel):
    """amrlib stog parser; ``parse(sentences)`` -> per sentence PENMAN (with ``# ::snt``) or Failure.

    ``num_beams=None``: the model's (``amrlib_meta.json``), else 4; the first beam that deserializes
    wins. A sentence longer than the model reads is clipped: ``on_clip="flag"`` adds
    ``# ::clipped <kept>/<total> tokens`` to its graph, ``"fail"`` makes it a Failure.
    ``trust_remote_code=False`` refuses a folder naming code other than amrlib's parsers; other
    options: :class:`~paraamr.models.base.Stage`. ``inference`` is amrlib's inference object.
    """

    kind, clip_policies = "parser", ("flag", "fail")
    length_limits = ("max_sent_len", "max_graph_len")  # amrlib's longest input and output

    @needs_extra("generate")
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
        # amrlib turns n-gram blocking off in model.config, which transformers 5 no longer reads
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
        results: list[Any] = [_input(s) for s in sentences]
        todo = [i for i, r in enumerate(results) if not isinstance(r, Failure)]
        texts = [results[i] for i in todo]
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


def _input(sentence: Any) -> str | Failure:
    """What amrlib parses of ``sentence``: on one line (amrlib writes it into a ``# ::snt`` comment),
    or a Failure."""
    if not isinstance(sentence, str):
        return Failure(STAGE, f"not a string: {type(sentence).__name__}")
    return " ".join(sentence.split()) or Failure(STAGE, "empty sentence")
