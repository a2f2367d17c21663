"""The settings of a quality model's training, each declared once: its field, default, check and
``paraamr quality train`` option (:func:`paraamr.options.add_settings`, group ``train``).

>>> TrainSettings().mode, TrainSettings().base, TrainSettings().max_length
('cross', 'all-MiniLM-L6-v2', 128)
>>> TrainSettings(mode="bi").resolved().learning_rate, TrainSettings().resolved().batch_size
(5e-05, 32)
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, fields, replace

from paraamr.errors import InputError, UsageError
from paraamr.options import SEED, check_settings, checking, number, option_flag, setting
from paraamr.quality.mpnet import MPNET
from paraamr.quality.scorer import BASE_MODEL, resolve_model

__all__ = ["MODES", "MODE_DEFAULTS", "TrainSettings"]

#: The two kinds of model ``paraamr quality train --mode`` can train.
MODES = ("bi", "cross")
#: Epochs, learning rate, batch size and frozen layers of each mode unless given (measured on the
#: held-out set: docs/quality.md).
MODE_DEFAULTS = {
    "bi": {"epochs": 1, "learning_rate": 5e-5, "batch_size": 16, "freeze_layers": 3},
    "cross": {"epochs": 1, "learning_rate": 1e-4, "batch_size": 32, "freeze_layers": 0},
}
_POSITIVE_INT, _POSITIVE = {"kind": int, "above": 0}, {"kind": float, "above": 0}


def _threads(text: str) -> int | None:
    """``--threads``: a count, 0 for torch's default (None)."""
    return number(int, low=0)(text) or None


def _model_or_none(text: str) -> str | None:
    """``--cosine-model``: a model, or ``none``."""
    return None if text.lower() == "none" else text


def _add_paired(group: argparse._ActionsContainer) -> None:
    group.add_argument(
        "--paired",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="cross: a triplet's two pairs in one batch (default; --no-paired: shuffled apart)",
    )


def _train(default, help: str, **meta):
    return setting(default, help, group="train", **meta)


@dataclass
class TrainSettings:
    """Every training option; ``epochs``, ``learning_rate``, ``batch_size`` and ``freeze_layers``
    default per mode (:data:`MODE_DEFAULTS`)."""

    # fmt: off
    mode: str = _train("cross", "cross-encoder (default) or bi-encoder", choices=MODES)
    base: str = _train(BASE_MODEL, "encoder to start from, a name or folder (default: %(default)s)")
    margin: float = _train(0.5, "triplet margin α, bi mode (default: %(default)s)", number=_POSITIVE)
    epochs: int | None = _train(None, "default: 1", number=_POSITIVE_INT)
    batch_size: int | None = _train(None, "default: 32 (cross), 16 (bi)", number=_POSITIVE_INT)
    learning_rate: float | None = _train(
        None, "default: 1e-4 (cross), 5e-5 (bi)", flag="--lr", number=_POSITIVE)
    warmup_ratio: float = 0.1
    max_length: int = _train(128, "tokens per input (default: %(default)s)", number=_POSITIVE_INT)
    freeze_layers: int | None = _train(
        None, "-1: train all; 0: freeze the embeddings (default, cross); k: also the first k layers (bi: 3)",
        number={"kind": int, "low": -1})
    validation: float = _train(
        0.15, "share of sentences held out for calibration (default: %(default)s)",
        number={"kind": float, "above": 0, "below": 1})
    max_minutes: float | None = _train(
        None, "stop training after this many minutes (default: no limit)", number=_POSITIVE)
    seed: int = _train(0, "of the triplets, the split and the training (numpy's range; default: %(default)s)",
                       number=SEED)
    threads: int | None = _train(2, "torch CPU threads (0: torch's default)", type=_threads)
    paired: bool = _train(True, None, add=_add_paired)
    logit_margin: float = _train(
        0.0, "cross, --paired: hinge margin between the two logits (default: %(default)s)",
        number={"kind": float, "low": 0})
    natural_repeat: int = _train(
        2, "epochs' passes over the hand-written natural pairs' triplets (default: %(default)s)",
        number=_POSITIVE_INT)
    cosine_model: str | None = _train(
        MPNET, "cross: a sentence encoder (all-mpnet-base-v2) whose cosine, weighted on the validation "
        "pairs, is added to the logit; 'none' for none (default: %(default)s)", type=_model_or_none)
    # fmt: on

    def resolved(self) -> TrainSettings:
        """These settings with the mode's defaults filled in, and no cosine model in bi mode (which
        does not use one: a trained model's info would name it).

        >>> TrainSettings(mode="bi").resolved().cosine_model is None
        True
        """
        filled = {k: v for k, v in MODE_DEFAULTS.get(self.mode, {}).items() if getattr(self, k) is None}
        if self.mode == "bi":
            filled["cosine_model"] = None
        return replace(self, **filled)

    def check(self) -> None:
        """Refuse, before any triplet is built, an unknown mode, a number out of range, a setting the
        mode does not use, a base or cosine model that is not found (fetched when missing and online)
        and more frozen layers than the base has."""
        if self.mode not in MODES:
            raise InputError(f"mode {self.mode!r}: choose one of {', '.join(MODES)}")
        cross, paired = self.mode == "cross", self.mode == "cross" and self.paired
        used = {"margin": not cross, "paired": cross, "logit_margin": paired}
        used["cosine_model"] = cross or self.cosine_model is None
        changed = [f for f in fields(self) if getattr(self, f.name) != f.default]
        unused = [f for f in changed if not used.get(f.name, True)]
        mode = f"{self.mode} mode{' without paired' * (cross > paired)}"
        with checking(self):  # (the options' names; a Python caller's fields)
            check_settings(self)
            if unused:  # a setting this mode does not use would do nothing
                what = "; ".join(f"{option_flag(f)} {getattr(self, f.name)}" for f in unused)
                raise UsageError(f"{what}: not used in {mode}")
        base = resolve_model(self.base, role="base model")
        if cross and self.cosine_model is not None:
            resolve_model(self.cosine_model, role="cosine model")
        frozen = self.resolved().freeze_layers or 0
        try:
            layers = json.loads((base / "config.json").read_text(encoding="utf-8"))["num_hidden_layers"]
        except (OSError, ValueError, KeyError, TypeError):
            return  # the loader names what is wrong with the base
        if isinstance(layers, int) and frozen > layers:
            raise InputError(f"freeze_layers {frozen}: the base {self.base} has {layers} layers")
