"""Train a paraphrase-quality model on operator triplets, on CPU: a bi-encoder or a cross-encoder.

``bi`` fine-tunes the encoder with ``TripletLoss``; ``cross`` trains a ``CrossEncoder`` with binary
cross-entropy on (anchor, positive) = 1 and (anchor, negative) = 0. A validation split of whole
anchors gives the calibration (:func:`calibrate`).

Its settings: :class:`~paraamr.quality.settings.TrainSettings`.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import random
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from paraamr import __version__
from paraamr.errors import InputError
from paraamr.quality.evaluation import by_kind, classify, equal_error_threshold, separation
from paraamr.quality.model_card import training_note
from paraamr.quality.mpnet import cosine_weight, cosines
from paraamr.quality.scorer import (
    DELTA_FILE,
    INFO_FILE,
    calibrated,
    load_model,
    raw_scores,
    resolve_model,
)
from paraamr.quality.settings import MODES, TrainSettings
from paraamr.quality.triplets import Triplet, operator_counts

__all__ = ["INFO_FILE", "MODES", "TrainSettings", "calibrate", "check_output", "export_delta"]
__all__ += ["split_validation", "train", "validation_figures"]

#: The smallest calibration slope (a barely trained model may fit a slope <= 0).
MIN_SLOPE = 1e-3


def split_validation(
    triplets: Sequence[Triplet], fraction: float, seed: int = 0
) -> tuple[list[Triplet], list[Triplet]]:
    """``(train, validation)``: the triplets of a ``fraction`` of the anchors, drawn with ``seed``.

    >>> ts = [Triplet(a, a + "!", a + "?", "p", "n") for a in "abcdefghij"]
    >>> train_, val = split_validation(ts, 0.2)
    >>> len(train_), len(val), {t.anchor for t in val} & {t.anchor for t in train_}
    (8, 2, set())
    """
    anchors = sorted({t.anchor for t in triplets})
    random.Random(seed).shuffle(anchors)
    held = (
        set(anchors[: max(1, round(len(anchors) * fraction))]) if fraction > 0 and len(anchors) > 1 else set()
    )
    return [t for t in triplets if t.anchor not in held], [t for t in triplets if t.anchor in held]


def repeated(triplets: Sequence[Triplet], times: int) -> list[Triplet]:
    """``triplets`` with those of hand-written natural pairs (positive operator ``natural_<kind>``)
    given ``times`` times (at least once), after the others.

    >>> ts = [Triplet("a", "b", "c", "natural_voice", "n"), Triplet("a", "b", "d", "typo", "n")]
    >>> [t.negative for t in repeated(ts, 3)]
    ['c', 'd', 'c', 'c']
    """
    natural = [t for t in triplets if t.positive_op.startswith("natural_")]
    return [*triplets, *natural * (max(1, times) - 1)]


def validation_pairs(triplets: Sequence[Triplet]) -> tuple[list[str], list[str], list[int]]:
    """Sources, paraphrases and labels of the triplets as pairs: (anchor, positive) 1, (anchor, negative) 0.

    >>> validation_pairs([Triplet("a", "b", "c", "p", "n")])
    (['a', 'a'], ['b', 'c'], [1, 0])
    """
    sources = [t.anchor for t in triplets for _ in (1, 0)]
    paras = [text for t in triplets for text in (t.positive, t.negative)]
    return sources, paras, [1, 0] * len(triplets)


def calibrate(raw: Sequence[float], labels: Sequence[int]) -> dict:
    """The equal-error threshold of ``raw`` scores and a logistic slope around it.

    The threshold is :func:`~paraamr.quality.evaluation.equal_error_threshold`'s; the slope is the
    maximum-likelihood ``a`` of ``P(valid) = sigmoid(a * (raw - threshold))`` (logistic regression
    without intercept, C=100), at least :data:`MIN_SLOPE` so scores keep the model's order.

    >>> c = calibrate([0.1, 0.2, 0.6, 0.7], [0, 0, 1, 1])
    >>> c["threshold"], c["macro_f1"], c["slope"] > 5
    (0.4, 1.0, True)
    """
    from sklearn.linear_model import LogisticRegression

    scores, labels_ = np.asarray(raw, dtype=float), np.asarray(labels, dtype=int)
    if len(set(labels_.tolist())) < 2:
        raise InputError("calibration needs valid and invalid validation pairs (too few triplets)")
    threshold = equal_error_threshold(scores, labels_)
    f1 = classify(scores, labels_, threshold)["f1_macro"]
    model = LogisticRegression(fit_intercept=False, C=100.0)
    model.fit((scores - threshold).reshape(-1, 1), labels_)
    return {
        "method": "threshold: equal error rate on the validation pairs; slope: logistic fit around it",
        "threshold": round(threshold, 6),
        "slope": round(max(float(model.coef_[0, 0]), MIN_SLOPE), 6),
        "macro_f1": round(f1, 6),
        "pairs": len(labels_),
    }


def _freeze(model, layers: int) -> int:
    """Freeze the word embeddings (layers >= 0) and the first ``layers`` transformer layers; returns
    the number of trainable parameters."""
    if layers >= 0:
        frozen = ("embeddings.", *(f"encoder.layer.{i}." for i in range(layers)))
        for name, param in model.named_parameters():
            if any(part in name for part in frozen):
                param.requires_grad_(False)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _time_limit(minutes: float | None):
    """A transformers callback that stops training after ``minutes`` of wall time (None: never)."""
    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):
        started = time.perf_counter()
        stopped_at: int | None = None

        def on_train_begin(self, args, state, control, **kwargs):
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            if minutes is not None and time.perf_counter() - self.started > 60 * minutes:
                control.should_training_stop = True
                self.stopped_at = state.global_step

    return TimeLimit()


def _datasets(settings: TrainSettings, triplets: Sequence[Triplet]):
    from datasets import Dataset

    if settings.mode == "bi":
        return Dataset.from_dict(
            {k: [getattr(t, k) for t in triplets] for k in ("anchor", "positive", "negative")}
        )
    rng = random.Random(settings.seed)  # each pair in a random order: the valid pair, then the invalid one
    pairs = [
        (t.anchor, other) if rng.random() < 0.5 else (other, t.anchor)
        for t in triplets
        for other in (t.positive, t.negative)
    ]
    first, second = [a for a, _ in pairs], [b for _, b in pairs]
    if settings.paired:  # one row a triplet
        return Dataset.from_dict(
            {"valid1": first[::2], "valid2": second[::2], "invalid1": first[1::2], "invalid2": second[1::2]}
        )
    return Dataset.from_dict({"sentence1": first, "sentence2": second, "label": [1.0, 0.0] * len(triplets)})


def _model_and_loss(settings: TrainSettings, base_dir: Path):
    """The model to train, its loss and the loss's name in the summary."""
    if settings.mode == "bi":
        from sentence_transformers import SentenceTransformerModelCardData as Card
    else:
        from sentence_transformers.cross_encoder import CrossEncoderModelCardData as Card
    name = f"paraamr paraphrase-quality {settings.mode}-encoder"
    card = Card(language="en", license="apache-2.0", model_name=name)
    model = load_model(base_dir, settings.mode, max_length=settings.max_length, card=card)
    if settings.mode == "bi":
        from sentence_transformers.losses import TripletDistanceMetric, TripletLoss

        metric = TripletDistanceMetric.COSINE
        loss = TripletLoss(model, distance_metric=metric, triplet_margin=settings.margin)
        return model, loss, "TripletLoss(distance=1-cosine)"
    if settings.paired:
        from paraamr.quality.losses import PairedLoss

        name = f"PairedLoss(binary cross-entropy + hinge at logit margin {settings.logit_margin})"
        return model, PairedLoss(model, margin=settings.logit_margin), name
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    return model, BinaryCrossEntropyLoss(model), "BinaryCrossEntropyLoss"


def _rows_per_batch(settings: TrainSettings) -> int:
    """Dataset rows a step: ``batch_size`` pairs, so half as many triplets when they are paired."""
    paired = settings.mode == "cross" and settings.paired
    return max(1, settings.batch_size // 2) if paired else settings.batch_size


def train(
    triplets: Sequence[Triplet],
    output: str | Path,
    settings: TrainSettings | None = None,
    *,
    progress: bool = True,
    sources: Sequence[str] = (),
    about: Mapping | None = None,
) -> dict:
    """Train a ``settings.mode`` model on ``triplets``, calibrate it on a validation split, save it.

    Returns the training summary, also written to ``output/paraamr_quality.json``. ``sources`` names
    the input files; ``about`` adds facts for the summary and the card (``natural``, ``command``).
    """
    import torch
    from transformers import set_seed

    settings = settings or TrainSettings()
    settings.check()
    settings = settings.resolved()
    if not triplets:
        raise InputError("no triplets to train on: no operator applied to the input sentences")
    if settings.threads:
        torch.set_num_threads(settings.threads)
    set_seed(settings.seed)
    train_set, validation = split_validation(triplets, settings.validation, settings.seed)
    if not train_set or not validation:
        raise InputError(
            f"{len(triplets)} triplets from {len({t.anchor for t in triplets})} sentences are too few to "
            "hold out a validation split: give more sentences"
        )
    model, loss, loss_name = _model_and_loss(settings, resolve_model(settings.base))
    trainable = _freeze(model, settings.freeze_layers)
    dataset = _datasets(settings, repeated(train_set, settings.natural_repeat))
    steps = math.ceil(len(dataset) / _rows_per_batch(settings)) * settings.epochs
    run = _fit(settings, model, loss, dataset, steps, progress)
    v_sources, v_paras, v_labels = validation_pairs(validation)
    raw = raw_scores(model, settings.mode, v_sources, v_paras)
    cosine = None
    if settings.mode == "cross" and settings.cosine_model:
        encoder = load_model(resolve_model(settings.cosine_model), "bi")
        cos = cosines(encoder, v_sources, v_paras)
        local = Path(settings.cosine_model).expanduser()  # a folder: found from any working folder
        name = os.path.abspath(local) if local.exists() else settings.cosine_model  # (its name kept)
        cosine = {"model": name, **cosine_weight(raw, cos, v_labels)}
        cosine["without"] = calibrate(raw, v_labels)  # the scorer's fallback: the logit alone
        raw = [r + cosine["weight"] * float(c) for r, c in zip(raw, cos, strict=True)]
    calibration = calibrate(raw, v_labels)
    summary = {
        "paraamr_version": __version__,
        "mode": settings.mode,
        "settings": asdict(settings),
        "base_model": settings.base,
        "loss": loss_name,
        "triplets": len(triplets),
        "train_triplets": len(train_set),
        "validation_triplets": len(validation),
        "train_examples": len(dataset),
        "steps": steps,
        "trainable_parameters": trainable,
        "operators": operator_counts(triplets),
        "sources": [Path(s).name for s in sources],
        **(about or {}),
        **({"cosine": cosine} if cosine else {}),
        "calibration": calibration,
        "validation": validation_figures(validation, calibrated(raw, calibration)),
        **run,
        "torch_threads": torch.get_num_threads(),
    }
    _save(model, Path(output), summary)
    return summary


def _fit(settings: TrainSettings, model, loss, dataset, steps: int, progress: bool) -> dict:
    """Run the trainer; returns the steps done, whether the time limit stopped it, seconds, losses."""
    from transformers import set_seed
    from transformers.trainer_callback import PrinterCallback

    if settings.mode == "bi":
        from sentence_transformers import SentenceTransformerTrainer as Trainer
        from sentence_transformers import SentenceTransformerTrainingArguments as Arguments
    else:
        from sentence_transformers.cross_encoder import CrossEncoderTrainer as Trainer
        from sentence_transformers.cross_encoder import CrossEncoderTrainingArguments as Arguments
    limit = _time_limit(settings.max_minutes)
    started, cpu_started = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory(prefix="paraamr-quality-") as scratch:
        args = Arguments(
            output_dir=scratch,
            num_train_epochs=settings.epochs,
            per_device_train_batch_size=_rows_per_batch(settings),
            learning_rate=settings.learning_rate,
            warmup_steps=int(steps * settings.warmup_ratio),
            seed=settings.seed,
            data_seed=settings.seed,
            use_cpu=True,
            save_strategy="no",
            report_to="none",
            logging_steps=max(1, steps // 50),
            disable_tqdm=not progress,
            dataloader_num_workers=0,
        )
        if settings.mode == "bi":  # the card's widget examples as the trainer draws them, without its bar
            set_seed(settings.seed)
            with contextlib.redirect_stderr(io.StringIO()):
                model.model_card_data.set_widget_examples(dataset)
        trainer = Trainer(model=model, args=args, train_dataset=dataset, loss=loss)
        trainer.add_callback(limit)
        if not progress:  # no per-step loss lines on stdout either
            trainer.remove_callback(PrinterCallback)
        trainer.train()
    return {
        "steps_done": trainer.state.global_step,
        "stopped_by_time_limit": limit.stopped_at is not None,
        "train_seconds": round(time.perf_counter() - started, 2),
        "train_cpu_seconds": round(time.process_time() - cpu_started, 2),
        "step_losses": [log["loss"] for log in trainer.state.log_history if "loss" in log],
    }


def validation_figures(validation: Sequence[Triplet], scores: Sequence[float]) -> dict:
    """Figures of the calibrated ``scores`` of the validation pairs (:func:`validation_pairs`'
    order): macro F1 at 0.5, mean and AUC by operator and, for the natural pairs among them (each
    pair once), the separation and macro F1 at 0.5.

    >>> ts = [Triplet("a", "b", "c", "natural_voice", "natural_shuffle"),
    ...       Triplet("a", "b", "d", "natural_voice", "number")]
    >>> figures = validation_figures(ts, [0.9, 0.2, 0.5, 0.95])
    >>> figures["macro_f1"], figures["natural"], figures["by_kind"]["number"]["auc"]
    (0.733333, {'pairs': 2, 'separation': 0.7, 'macro_f1': 1.0}, 0.0)
    """
    kinds = [op for t in validation for op in (t.positive_op, t.negative_op)]
    sources, paras, labels = validation_pairs(validation)
    seen: dict[tuple[str, str], tuple[float, int]] = {}
    for source, para, kind, score, label in zip(sources, paras, kinds, scores, labels, strict=True):
        if kind.startswith("natural_"):
            seen.setdefault((source, para), (score, label))
    figures = {
        "macro_f1": round(classify(scores, labels)["f1_macro"], 6),
        "by_kind": by_kind(scores, labels, kinds),
    }
    natural_scores, natural_labels = zip(*seen.values(), strict=True) if seen else ((), ())
    if len(set(natural_labels)) == 2:
        figures["natural"] = {
            "pairs": len(seen),
            "separation": round(separation(natural_scores, natural_labels), 6),
            "macro_f1": round(classify(natural_scores, natural_labels)["f1_macro"], 6),
        }
    return figures


#: Where the training note starts in a card.
_NOTE_HEADING = "\n## How this model was trained"


def check_output(output: Path, overwrite: bool) -> None:
    """Refuse to write a model into a folder that holds files, unless ``overwrite`` and they are a
    model of this command (``--overwrite`` replaces the folder whole, once the new model is in)."""
    from paraamr.outputs import check_writable

    if output.exists() and not output.is_dir():
        raise InputError(f"--output {output}: is a file, not a folder")
    check_writable(output)
    if not (output.is_dir() and any(output.iterdir())):
        return
    if not overwrite:
        raise InputError(f"--output {output}: not empty; pass --overwrite to replace the model in it")
    if not (output / INFO_FILE).is_file():
        raise InputError(
            f"--output {output}: holds no model of paraamr quality train (no {INFO_FILE}); refusing to "
            "replace its files even with --overwrite: give an empty or new folder"
        )


def _save(model, output: Path, summary: dict) -> None:
    """The model, its summary (:data:`INFO_FILE`) and its card (the training note appended)."""
    model.save(str(output))
    (output / INFO_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    readme = output / "README.md"
    head = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    readme.write_text(head + "\n" + training_note(summary).rstrip("\n") + "\n", encoding="utf-8")


def export_delta(model_dir: str | Path, output: str | Path) -> int:
    """Write to ``output`` only the weights of a trained model that differ from its base (in
    float16), with its ``config.json``, card and summary (``delta_of``: the base), which
    :class:`~paraamr.quality.scorer.QualityScorer` loads on top of the base. Returns the bytes of
    the weights file.
    """
    from safetensors.torch import save_file

    model_dir, output = Path(model_dir), Path(output)
    info = json.loads((model_dir / INFO_FILE).read_text(encoding="utf-8"))
    max_length = info["settings"]["max_length"]
    trained = load_model(model_dir, info["mode"], max_length=max_length).state_dict()
    base = load_model(resolve_model(info["base_model"]), info["mode"], max_length=max_length).state_dict()
    changed = {
        k: (v.half() if v.is_floating_point() else v).contiguous()
        for k, v in trained.items()
        if k not in base or not bool((base[k] == v).all())
    }
    output.mkdir(parents=True, exist_ok=True)
    save_file(changed, str(output / DELTA_FILE))
    if (model_dir / "config.json").is_file():
        (output / "config.json").write_bytes((model_dir / "config.json").read_bytes())
    card = model_dir / "README.md"
    head = card.read_text(encoding="utf-8").split(_NOTE_HEADING)[0] if card.is_file() else ""
    (output / "README.md").write_text(head.rstrip("\n") + "\n\n" + training_note(info), encoding="utf-8")
    info |= {"delta_of": info["base_model"], "delta_dtype": "float16"}
    (output / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return (output / DELTA_FILE).stat().st_size
