"""Settings of the corpus builder.

>>> s = GeneratorSettings(max_perplexity=50, foci=2)
>>> s.result_options()["max_perplexity"], s.result_options()["foci"]
(50.0, 2)
>>> s.needs("parser"), GeneratorSettings(similarity_model="all-MiniLM-L6-v2").needs("embedder")
(True, True)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

#: Settings of ``--preset paper`` (Huang et al. 2023): the T5 generator with tense, GPT-2, perplexity
#: <= 120, all foci. The paper parsed with SPRING; ``parse_xfm_bart_large`` is the closest parser
#: (BART-large, seq2seq) that runs on transformers 5.
PAPER_PRESET = {
    "parser_model": "parse_xfm_bart_large",
    "generator_model": "generate_t5wtense",
    "lm_model": "gpt2",
    "max_perplexity": 120.0,
    "max_relative_perplexity": None,
    "foci": "all",
    "similarity_model": None,
    "quality_model": None,
}


#: Settings that change the records; a resumed run with another value refuses (``--overwrite``).
RESULT_OPTIONS = (
    "parser_model",
    "generator_model",
    "lm_model",
    "similarity_model",
    "quality_model",
    "max_perplexity",
    "max_relative_perplexity",
    "min_similarity",
    "min_quality",
    "foci",
    "seed",
    "heuristic",
    "mod_as_domain",
    "dtype",
    "num_beams",
    "max_chars",
)


@dataclass
class GeneratorSettings:
    """Every option of the generator (the CLI flags map one to one onto these fields)."""

    parser_model: str = "parse_xfm_bart_large"
    generator_model: str = "generate_t5wtense"
    lm_model: str = "gpt2"
    similarity_model: str | None = None
    quality_model: str | None = None
    max_perplexity: float | None = 120.0
    max_relative_perplexity: float | None = None
    min_similarity: float | None = None
    min_quality: float | None = None
    foci: str | int = "all"
    seed: int = 0
    heuristic: bool = False
    mod_as_domain: bool = False
    device: str | None = None
    dtype: str | None = None
    num_beams: int | None = None
    parse_batch_size: int = 16
    generate_batch_size: int = 32
    lm_batch_size: int = 32
    max_chars: int = 1000
    window: int = 256
    pipelined: bool = True
    amr_input: bool = False

    def __post_init__(self) -> None:
        for name in ("max_perplexity", "max_relative_perplexity", "min_similarity", "min_quality"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, float(value))
        if isinstance(self.foci, str) and self.foci != "all":
            if not self.foci.isdigit():
                raise ValueError(f"foci must be 'all' or a positive integer, got {self.foci!r}")
            self.foci = int(self.foci)
        if isinstance(self.foci, int) and self.foci < 1:
            raise ValueError(f"foci must be 'all' or a positive integer, got {self.foci}")
        if self.min_quality is not None and self.quality_model is None:
            raise ValueError("min_quality needs quality_model")
        if self.min_similarity is not None and self.similarity_model is None:
            raise ValueError("min_similarity needs similarity_model")
        if self.window < 1:
            raise ValueError(f"window must be positive, got {self.window}")

    def as_dict(self) -> dict[str, Any]:
        """All settings, for the run summary."""
        return asdict(self)

    def result_options(self) -> dict[str, Any]:
        """The settings that change the records (compared when a run resumes)."""
        return {name: getattr(self, name) for name in RESULT_OPTIONS}

    def needs(self, kind: str) -> bool:
        """Whether a model of ``kind`` (parser, generator, lm, embedder, quality) is used."""
        return {
            "parser": not self.amr_input,
            "generator": True,
            "lm": True,  # perplexity is a field of every paraphrase
            "embedder": self.similarity_model is not None,
            "quality": self.quality_model is not None,
        }[kind]

    def models(self) -> dict[str, str]:
        """``{kind: model}`` of every model the run uses (kind as in ``registry.resolve``)."""
        names = {
            "parser": self.parser_model,
            "generator": self.generator_model,
            "lm": self.lm_model,
            "embedder": self.similarity_model,
            "quality": self.quality_model,
        }
        return {kind: name for kind, name in names.items() if self.needs(kind)}


SETTING_NAMES = tuple(f.name for f in fields(GeneratorSettings))
