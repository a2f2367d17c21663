"""Paraphrase quality on the held-out set: base all-MiniLM-L6-v2 against the ParaQD fine-tuned one.

Reports, side by side, the separation μs (mean score of valid pairs − mean score of invalid
pairs), weighted and macro F1 and accuracy at threshold 0.5 on the 228 hand-labelled pairs of
``paraamr/quality/data/heldout.jsonl`` (never used for training), the mean score per kind of
pair, and scoring speed; then the ratios fine-tuned / base. Goal (issue 7): fine-tuned μs at
least 2× the base one, weighted F1 no lower.

Without ``--model`` it first trains a model as ``paraamr quality train`` would, on the bundled
``sentences.txt`` (``--max-triplets 5000``, ``--threads 2``), and reports the training time.
Run: ``python benchmarks/bench_quality.py [--model DIR] [--max-triplets 5000] [--threads 2]``.
The machine is shared: times are noisy; compare the ratios.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path


def evaluate_model(model: str | Path, rows: list[dict]) -> dict:
    from paraamr.quality import QualityScorer
    from paraamr.quality.evaluation import classify, separation

    scorer = QualityScorer(model)
    scorer.score(["warm up"], ["warm up"])
    start = time.perf_counter()
    scores = scorer.score([r["text"] for r in rows], [r["para_text"] for r in rows])
    seconds = time.perf_counter() - start
    labels = [r["label"] for r in rows]
    kinds: dict[str, list[float]] = defaultdict(list)
    for row, score in zip(rows, scores, strict=True):
        kinds[f"{'valid' if row['label'] else 'invalid'}:{row['kind']}"].append(score)
    return {
        "separation": separation(scores, labels),
        **classify(scores, labels, 0.5),
        "pairs_per_s": len(rows) / seconds,
        "kinds": {k: sum(v) / len(v) for k, v in sorted(kinds.items())},
        "signature": scorer.signature,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=None, help="a trained model (default: train one)")
    parser.add_argument("--max-triplets", type=int, default=5000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()

    import torch

    from paraamr.quality.data import TRAINING_SENTENCES, heldout

    torch.set_num_threads(args.threads)
    rows = heldout()
    scratch = None
    model = args.model
    training = None
    if model is None:
        from paraamr.quality.train import TrainSettings, train
        from paraamr.quality.triplets import build_triplets, read_sentences

        scratch = tempfile.TemporaryDirectory(prefix="bench-quality-")
        model = Path(scratch.name) / "model"
        start = time.perf_counter()
        triplets = build_triplets(
            read_sentences(TRAINING_SENTENCES), seed=args.seed, max_triplets=args.max_triplets
        )
        build_s = time.perf_counter() - start
        summary = train(triplets, model, TrainSettings(seed=args.seed, threads=args.threads), progress=False)
        training = {"triplets": len(triplets), "build_s": build_s, "train_s": summary["train_seconds"]}
    info = (
        json.loads((model / "paraamr_quality.json").read_text())
        if (model / "paraamr_quality.json").is_file()
        else {}
    )

    base = evaluate_model("all-MiniLM-L6-v2", rows)
    tuned = evaluate_model(model, rows)
    print(f"held-out pairs: {len(rows)} ({sum(r['label'] for r in rows)} valid); threshold 0.5")
    if training:
        print(
            f"training: {training['triplets']} triplets built in {training['build_s']:.1f} s, "
            f"trained in {training['train_s']:.1f} s on {args.threads} thread(s)"
        )
    elif info:
        print(
            f"model: {model} ({info.get('triplets')} triplets, trained in {info.get('train_seconds')} s "
            f"on {info.get('torch_threads')} thread(s))"
        )
    print(f"{'figure':<22}{'base MiniLM':>14}{'fine-tuned':>14}{'ratio':>10}")
    for key in ("separation", "f1_weighted", "f1_macro", "accuracy", "pairs_per_s"):
        ratio = tuned[key] / base[key] if base[key] else float("inf")
        print(f"{key:<22}{base[key]:>14.4f}{tuned[key]:>14.4f}{ratio:>10.2f}")
    print("mean score by kind:")
    for kind in base["kinds"]:
        print(f"  {kind:<20}{base['kinds'][kind]:>14.3f}{tuned['kinds'][kind]:>14.3f}")
    sep_ok = tuned["separation"] >= 2 * base["separation"]
    f1_ok = tuned["f1_weighted"] >= base["f1_weighted"]
    print(
        f"goal: separation >= 2x base: {'yes' if sep_ok else 'NO'} "
        f"({tuned['separation'] / base['separation']:.2f}x); weighted F1 no lower: {'yes' if f1_ok else 'NO'}"
    )
    print(f"signatures: base {base['signature']}; fine-tuned {tuned['signature']}")
    if args.json:
        args.json.write_text(json.dumps({"base": base, "fine_tuned": tuned, "training": training}, indent=2))
    if scratch:
        scratch.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
