"""The command-line options that point the generator's model stages at the tiny models."""

from __future__ import annotations


def model_args(tiny: dict) -> list[str]:
    """``--parser-model``, ``--realizer-model`` and ``--lm-model`` at ``tiny`` (the ``tiny_models``
    fixture), with no perplexity filter (a random LM's perplexities mean nothing)."""
    return [
        "--parser-model",
        str(tiny["parser"]),
        "--realizer-model",
        str(tiny["realizer"]),
        "--lm-model",
        str(tiny["lm"]),
        "--max-perplexity",
        "none",
    ]
