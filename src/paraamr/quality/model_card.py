"""The section a trained quality model's card (``README.md``) ends with: how it was trained,
written from the training summary (``paraamr_quality.json``).

>>> summary = {"mode": "cross", "loss": "BinaryCrossEntropyLoss", "settings": {"base": "b", "margin": 0.5,
...     "epochs": 1, "batch_size": 16, "learning_rate": 2e-05, "seed": 0, "max_length": 64,
...     "freeze_layers": 0}, "triplets": 3, "train_triplets": 2, "validation_triplets": 1,
...     "train_seconds": 1.5, "train_cpu_seconds": 2.0, "torch_threads": 2, "calibration": {"threshold":
...     0.1, "slope": 2.0, "macro_f1": 1.0, "pairs": 2, "method": "m"}, "steps_done": 1, "steps": 1,
...     "operators": {"positive": {"typo": 3}, "negative": {"number": 3}}, "sources": ["s.txt"],
...     "paraamr_version": "0.1.0", "command": "paraamr quality train --output DIR",
...     "natural": {"file": "n.tsv", "sources": 2, "held_out_file": "c.txt", "held_out": ["A b."]},
...     "synonym_gate": {"model": "m", "min_similarity": 0.9, "kept": 5, "dropped": 4},
...     "cosine": {"model": "e", "weight": 2.5, "method": "fit", "without": {"threshold": 0.2,
...                "slope": 1.5, "macro_f1": 0.9}}}
>>> note = training_note(summary)
>>> note.splitlines()[0]
'## How this model was trained (paraamr quality train)'
>>> "- Trained by the default command, `paraamr quality train --output DIR`" in note, "- A b." in note
(True, True)
>>> "0.9 or more with their sentence: 5 kept, 4 dropped" in note, "logit + 2.5 × the cosine of `e`" in note
(True, True)
>>> "the logit alone is used, calibrated on its own: raw threshold 0.2, slope 1.5" in note
True
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["training_note"]


def _how(summary: dict) -> str:
    s = summary["settings"]
    if summary["mode"] == "bi":
        return f"fine-tuned with triplet loss, distance 1 − cosine, margin α = {s['margin']} (ParaQD)"
    how = (
        f"a cross-encoder reading both sentences{';' if s.get('paired') else ','} binary cross-entropy "
        "on (anchor, positive) = 1 and (anchor, negative) = 0"
    )
    if not s.get("paired"):
        return how
    margin = s.get("logit_margin")
    hinge = f" plus the hinge max(0, {margin} − (logit(positive) − logit(negative)))" if margin else ""
    return f"{how}, the two pairs of a triplet in one batch{hinge}"


def _natural(natural: dict) -> list[str]:
    held = natural.get("held_out")
    if not held:
        return [
            f"- Natural pairs: the {natural['sources']} sources of `{natural['file']}` (rewordings as "
            "positives; their negatives, negatives made from the rewordings and the operators' "
            "negatives of the sources).",
            "",
        ]
    return [
        f"- Natural pairs: the {natural['sources']} training sources of `{natural['file']}` (hand-written "
        "rewordings as positives; their hand-written negatives, negatives made from the rewordings and "
        "the operators' negatives of the sources). Set C, the other "
        f"{len(held)} sources (`{natural['held_out_file']}`, listed below), and everything made from "
        "them were held out of training and calibration.",
        "",
        f"<details><summary>Set C: the {len(held)} held-out sources</summary>",
        "",
        *(f"- {source}" for source in held),
        "",
        "</details>",
        "",
    ]


def _validation(figures: dict) -> str:
    natural = figures.get("natural")
    lowest = sorted((row["auc"], kind) for kind, row in figures["by_kind"].items() if "auc" in row)[:3]
    text = f"- On the validation pairs at 0.5: macro F1 {figures['macro_f1']}"
    if natural:
        text += (
            f"; on the {natural['pairs']} hand-written natural pairs among them macro F1 "
            f"{natural['macro_f1']}, separation {natural['separation']}"
        )
    return text + "; lowest AUC " + ", ".join(f"{kind} {auc:.3f}" for auc, kind in lowest) + "."


def _inputs(summary: dict) -> list[str]:
    natural = summary.get("natural", {}).get("file")
    return [*summary["sources"], *([natural] if natural else [])]


def _gate(gate: dict) -> str:
    return (
        f"- Synonym positives kept only where `{gate['model']}` gives them a cosine of "
        f"{gate['min_similarity']} or more with their sentence: {gate['kept']} kept, {gate['dropped']} "
        "dropped while the triplets were drawn, before the triplets were capped (WordNet's first sense "
        "of a word is often not its sense in the sentence)."
    )


def _cosine(cosine: dict) -> str:
    model = cosine["model"]  # a local folder by its name: a card is published
    model = Path(model).name if Path(model).is_absolute() else model
    text = (
        f"- Raw score: the cross-encoder's logit + {cosine['weight']} × the cosine of `{model}`'s "
        f"embeddings of the two texts (the weight: {cosine['method']}); `{model}` is fetched on "
        "first use, or installed offline by the install script."
    )
    alone = cosine.get("without")
    if alone:
        text += (
            f" Where it can be had neither way, the logit alone is used, calibrated on its own: raw "
            f"threshold {alone['threshold']}, slope {alone['slope']} (macro F1 there {alone['macro_f1']})."
        )
    return text


def _batch(summary: dict) -> str:
    """The batch size, and what the trainer counts in it when a triplet's two pairs go together."""
    s = summary["settings"]
    if summary["mode"] == "cross" and s.get("paired"):
        return f"{s['batch_size']} pairs ({max(1, s['batch_size'] // 2)} triplets, the trainer's batch size)"
    return str(s["batch_size"])


def training_note(summary: dict) -> str:
    """The model card section on how the model was trained (Markdown)."""
    s, ops, cal = summary["settings"], summary["operators"], summary["calibration"]
    lines = [
        "## How this model was trained (paraamr quality train)",
        "",
        *([f"- Trained by the default command, `{summary['command']}`."] if summary.get("command") else []),
        f"- Mode `{summary['mode']}`: `{s['base']}` {_how(summary)}; max length {s['max_length']} tokens, "
        f"frozen layers {s['freeze_layers']} (-1 none, 0 embeddings, k embeddings + k layers).",
        f"- {summary['triplets']} (anchor, positive, negative) triplets from "
        f"{', '.join(f'`{x}`' for x in _inputs(summary)) or 'the given sentences'}: "
        f"{summary['train_triplets']} for training, {summary['validation_triplets']} (other sentences) "
        f"for validation; {s['epochs']} epoch(s), batch {_batch(summary)}, learning rate "
        f"{s['learning_rate']}, seed {s['seed']}; {summary['steps_done']} of {summary['steps']} steps"
        + (
            f"; the hand-written natural pairs' triplets {s['natural_repeat']} times an epoch."
            if summary.get("natural") and s.get("natural_repeat", 1) > 1
            else "."
        ),
        "- Positives by operator: " + ", ".join(f"{k} {v}" for k, v in ops["positive"].items()) + ".",
        *([_gate(summary["synonym_gate"])] if summary.get("synonym_gate") else []),
        "- Negatives by operator: " + ", ".join(f"{k} {v}" for k, v in ops["negative"].items()) + ".",
        *([_cosine(summary["cosine"])] if summary.get("cosine") else []),
        f"- Calibrated on the {cal['pairs']} validation pairs: raw threshold {cal['threshold']} "
        f"(equal error rate; macro F1 there {cal['macro_f1']}), slope {cal['slope']}; scores are "
        "sigmoid(slope × (raw − threshold)), in [0, 1], and a pair is valid at ≥ 0.5. An exact copy "
        "of the source scores 1.",
        *([_validation(summary["validation"])] if "validation" in summary else []),
        f"- Training steps: {summary['train_seconds']} s wall ({summary['train_cpu_seconds']} s CPU) with "
        f"{summary['torch_threads']} torch thread(s); paraamr {summary['paraamr_version']}.",
        "- Scores as above: `paraamr quality score --model DIR --input pairs.jsonl --output scored.jsonl`, "
        "or `paraamr.quality.QualityScorer(DIR).score(sources, paraphrases)` (the model's own "
        "`predict` gives the uncalibrated output).",
        "",
        *(_natural(summary["natural"]) if summary.get("natural") else []),
    ]
    return "\n".join(lines)
