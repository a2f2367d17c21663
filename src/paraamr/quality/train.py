"""Fine-tune a sentence encoder on quality triplets with triplet loss (ParaQD, §4), on CPU.

The loss is sentence-transformers' ``TripletLoss`` with cosine distance (``1 - cos``) and margin
α (0.5 by default). The output folder is a sentence-transformers model (load it with
``QualityScorer(folder)`` or ``SentenceTransformer(folder)``) with a model card (``README.md``)
that says how it was trained, and the same facts as JSON in ``paraamr_quality.json``.

>>> TrainSettings().margin, TrainSettings().base
(0.5, 'all-MiniLM-L6-v2')
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from paraamr import __version__
from paraamr.errors import InputError
from paraamr.quality.scorer import BASE_MODEL, resolve_model
from paraamr.quality.triplets import Triplet, operator_counts

#: Written into every trained model folder beside the sentence-transformers files.
INFO_FILE = "paraamr_quality.json"


@dataclass
class TrainSettings:
    """Every training option; ``threads`` caps torch's CPU threads (None leaves torch's default)."""

    base: str = BASE_MODEL
    margin: float = 0.5
    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 2e-5
    warmup_ratio: float = 0.1
    seed: int = 0
    threads: int | None = 2


def train(
    triplets: Sequence[Triplet],
    output: str | Path,
    settings: TrainSettings | None = None,
    *,
    progress: bool = True,
    sources: Sequence[str] = (),
) -> dict:
    """Fine-tune ``settings.base`` on ``triplets`` and save the model to ``output``.

    Returns the training summary that is also written to ``output/paraamr_quality.json``
    (settings, triplet and operator counts, per-step losses, seconds). ``sources`` names the
    input files, for the card.
    """
    import torch
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerModelCardData,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.losses import TripletDistanceMetric, TripletLoss
    from transformers import set_seed
    from transformers.trainer_callback import PrinterCallback

    settings = settings or TrainSettings()
    if not triplets:
        raise InputError("no triplets to train on: no operator applied to the input sentences")
    if settings.threads:
        torch.set_num_threads(settings.threads)
    set_seed(settings.seed)
    base_dir = resolve_model(settings.base)
    card = SentenceTransformerModelCardData(
        language="en",
        license="apache-2.0",
        model_name="paraamr paraphrase-quality encoder (ParaQD triplets)",
    )
    model = SentenceTransformer(str(base_dir), device="cpu", model_card_data=card)
    dataset = Dataset.from_dict(
        {
            "anchor": [t.anchor for t in triplets],
            "positive": [t.positive for t in triplets],
            "negative": [t.negative for t in triplets],
        }
    )
    loss = TripletLoss(model, distance_metric=TripletDistanceMetric.COSINE, triplet_margin=settings.margin)
    steps = -(-len(triplets) // settings.batch_size) * settings.epochs
    with tempfile.TemporaryDirectory(prefix="paraamr-quality-") as scratch:
        args = SentenceTransformerTrainingArguments(
            output_dir=scratch,
            num_train_epochs=settings.epochs,
            per_device_train_batch_size=settings.batch_size,
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
        trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=dataset, loss=loss)
        if not progress:  # no per-step loss lines on stdout either
            trainer.remove_callback(PrinterCallback)
        started = time.perf_counter()
        trainer.train()
        seconds = time.perf_counter() - started
    summary = {
        "paraamr_version": __version__,
        "settings": asdict(settings),
        "base_model_dir": str(base_dir),
        "loss": "TripletLoss(distance=1-cosine)",
        "triplets": len(triplets),
        "steps": steps,
        "operators": operator_counts(triplets),
        "sources": [str(s) for s in sources],
        "train_seconds": round(seconds, 2),
        "torch_threads": torch.get_num_threads(),
        "step_losses": [log["loss"] for log in trainer.state.log_history if "loss" in log],
    }
    output = Path(output)
    model.save(str(output))
    (output / INFO_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    readme = output / "README.md"
    head = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    readme.write_text(head + "\n" + training_note(summary), encoding="utf-8")
    return summary


def training_note(summary: dict) -> str:
    """The model card section on how the encoder was trained (Markdown).

    >>> print(training_note({"settings": {"base": "b", "margin": 0.5, "epochs": 1, "batch_size": 16,
    ...     "learning_rate": 2e-05, "seed": 0}, "triplets": 3, "train_seconds": 1.5, "torch_threads": 2,
    ...     "operators": {"positive": {"synonym": 3}, "negative": {"number": 3}}, "sources": ["s.txt"],
    ...     "paraamr_version": "0.1.0"}).splitlines()[0])
    ## How this model was trained (paraamr quality train)
    """
    s = summary["settings"]
    ops = summary["operators"]
    lines = [
        "## How this model was trained (paraamr quality train)",
        "",
        f"- Base encoder: `{s['base']}`, fine-tuned with triplet loss, distance 1 − cosine, "
        f"margin α = {s['margin']} (ParaQD).",
        f"- {summary['triplets']} (anchor, positive, negative) triplets from "
        f"{', '.join(f'`{x}`' for x in summary['sources']) or 'the given sentences'}; "
        f"{s['epochs']} epoch(s), batch {s['batch_size']}, learning rate {s['learning_rate']}, "
        f"seed {s['seed']}.",
        "- Positives by operator: " + ", ".join(f"{k} {v}" for k, v in ops["positive"].items()) + ".",
        "- Negatives by operator: " + ", ".join(f"{k} {v}" for k, v in ops["negative"].items()) + ".",
        f"- {summary['train_seconds']} s on CPU with {summary['torch_threads']} torch thread(s); "
        f"paraamr {summary['paraamr_version']}.",
        "- Score a pair by the cosine of its embeddings; ParaQD calls a pair valid at ≥ 0.5.",
        "",
    ]
    return "\n".join(lines)
