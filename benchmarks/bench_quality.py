"""Paraphrase quality on the three held-out sets: the base MiniLM against trained models.

The held-out sets are hand-written. Sets A (``paraamr/quality/data/heldout.jsonl``) and B
(``heldout_b.jsonl``) are everyday English: natural rewordings, typos, casing, contractions and
number formats as valid pairs; subject-object swaps, scrambles, antonyms, dates and times, units,
swapped nouns, numbers, negations and names as invalid ones. Set C is the natural pairs of the
quarter of ``natural_pairs.tsv``'s sources listed in ``natural_set_c.txt``: rewordings by voice,
order, structure and synonyms as valid pairs, role swaps, shuffles, quantities, negations, names
and partial sentences as invalid ones. They share no sentence with the training sentences or each
other and are never used for training or calibration. Set A guided the choice of the training
recipe, so its figures are somewhat optimistic; sets B and C only measure finished models.

For each model it prints, side by side: the separation μs (mean score of valid pairs − mean
score of invalid pairs), macro and weighted F1 and accuracy at 0.5 (the trained models' saved,
calibrated threshold) and at the best threshold on this set (an oracle: the fair figure for the
untuned base, whose cosines have no calibrated threshold), then per kind of pair the mean score
and, for invalid kinds, the ROC AUC against the valid pairs, and the goals' view of the same: the
AUC of ``role_swap`` and ``shuffle`` (sets A and B's ``role`` and ``scramble``), of each other kind
with at least 25 pairs, and of the smaller kinds pooled as ``other``; then each trained model's
training size and time (CPU seconds next to wall: the machine may be shared). The base model's
separation is on its own cosine scale, so compare AUC and F1 across models, μs only between
calibrated models. (An exact copy scores 1 with every model, by rule: no set holds one.) The 95%
intervals of μs, of macro F1 at 0.5 and of the goal AUCs come from a bootstrap over sources (a
source's pairs drawn together): the sets are small, and a difference inside them may be chance.

Set U holds only invalid pairs made from the sources of sets A, B and C (sentences no model
trained on): each source with a source of another set of about as many words (``unrelated``), a
fragment of it (``fragment``) and its topic shift (``topic_shift``: the same frame, other content
words). For it the bench prints, per kind, the mean and highest score and the share below 0.1 and
below 0.5; the goal is every unrelated pair below 0.1.

Run: ``python benchmarks/bench_quality.py [--model NAME=DIR ...] [--train MODE ...] [--set A|B|C|U]
[--threads 1]``.
``--train cross`` (and/or ``bi``) first trains a model as ``paraamr quality train`` does with its
defaults (on the bundled sentences, its default input). The shipped default model is always
compared, and so are the untuned bases MiniLM and all-mpnet-base-v2 (raw cosines).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

#: The goals, on sets B and C: macro F1 at the saved threshold, AUC of each goal kind, separation;
#: on set U: the highest score of an unrelated pair.
GOALS = {"f1": 0.85, "auc": 0.8, "separation": 0.5, "unrelated": 0.1}


def contrast_rows(seed: int = 0) -> list[dict]:
    """Set U: invalid pairs made from the sources of sets A, B and C (never trained on), each with
    a source of another set of about its length, a fragment of it and its topic shift."""
    import random

    from paraamr.quality.data import HELDOUT_SETS, heldout
    from paraamr.quality.phrases import fragment, topic_shift
    from paraamr.quality.triplets import unrelated_pairs

    sources = {name: list(dict.fromkeys(r["text"] for r in heldout(name))) for name in HELDOUT_SETS}
    rows = []
    for name, own in sources.items():
        others = [s for other, texts in sources.items() if other != name for s in texts]
        pairs = [(a, b, "unrelated") for a, b in unrelated_pairs(own, others, seed=seed)]
        for kind, op in (("fragment", fragment), ("topic_shift", topic_shift)):
            pairs += [(a, b, kind) for a in own if (b := op(a, random.Random(f"{seed}:{kind}:{a}")))]
        rows += [{"text": a, "para_text": b, "label": 0, "kind": kind} for a, b, kind in pairs]
    return rows


def evaluate_contrast(model: str | Path, rows: list[dict]) -> dict:
    """Per kind of set U: pairs, mean and highest score, share below 0.1 and below 0.5."""
    from paraamr.quality import QualityScorer

    scorer = QualityScorer(model)
    scores = scorer.score([r["text"] for r in rows], [r["para_text"] for r in rows])
    kinds: dict[str, list[float]] = {}
    for row, score in zip(rows, scores, strict=True):
        kinds.setdefault(row["kind"], []).append(score)
    return {
        kind: {
            "n": len(values),
            "mean": sum(values) / len(values),
            "max": max(values),
            "below_0.1": sum(v < 0.1 for v in values) / len(values),
            "below_0.5": sum(v < 0.5 for v in values) / len(values),
        }
        for kind, values in kinds.items()
    } | {"signature": str(scorer.signature)}


def print_contrast(rows: list[dict], results: dict[str, dict]) -> None:
    """Set U's figures, a block per model (the bases' raw cosines are not on the 0-1 scale)."""
    print(f"held-out set U: {len(rows)} invalid pairs from the sources of sets A, B and C")
    for name, result in results.items():
        print(f"  {name}")
        for kind, r in result.items():
            if kind != "signature":
                print(
                    f"    {kind:<12} n {r['n']:>4}  mean {r['mean']:.3f}  max {r['max']:.3f}  "
                    f"< 0.1 {r['below_0.1']:.1%}  < 0.5 {r['below_0.5']:.1%}"
                )
    met = [n for n, r in results.items() if "unrelated" in r and r["unrelated"]["max"] < GOALS["unrelated"]]
    print(f"every unrelated pair below {GOALS['unrelated']}: {', '.join(met) or 'none'}")


def evaluate_model(model: str | Path, rows: list[dict]) -> dict:
    from paraamr.quality import QualityScorer
    from paraamr.quality.evaluation import (
        best_threshold,
        by_kind,
        classify,
        intervals_by_source,
        pooled_kinds,
        separation,
    )

    scorer = QualityScorer(model)
    scorer.score(["warm up"], ["warm up"])
    start, cpu = time.perf_counter(), time.process_time()
    scores = scorer.score([r["text"] for r in rows], [r["para_text"] for r in rows])
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    labels = [r["label"] for r in rows]
    kinds = [r["kind"] for r in rows]
    threshold, _ = best_threshold(scores, labels)
    goal_kinds = pooled_kinds(kinds, labels)
    return {
        "separation": separation(scores, labels),
        "at_0.5": classify(scores, labels, 0.5),
        "at_best": classify(scores, labels, threshold),
        "intervals": intervals_by_source(scores, labels, [r["text"] for r in rows], kinds=goal_kinds),
        "kinds": by_kind(scores, labels, kinds),
        "goal_kinds": by_kind(scores, labels, goal_kinds),
        "pairs_per_s": len(rows) / seconds,
        "pairs_per_cpu_s": len(rows) / max(cpu_seconds, 1e-9),
        "signature": str(scorer.signature),
        "info": scorer.info,
    }


def train_default(mode: str, folder: Path, threads: int) -> Path:
    """Train as ``paraamr quality train --mode MODE`` does with its defaults; returns the folder."""
    from paraamr.cli import main

    out = folder / f"trained-{mode}"
    argv = [
        "quality",
        "train",
        "--output",
        str(out),
        "--mode",
        mode,
        "--threads",
        str(threads),
        "--no-progress",
    ]
    if main(argv) != 0:
        raise SystemExit(f"training {mode} failed")
    return out


def print_set(name: str, rows: list[dict], results: dict[str, dict]) -> None:
    """One held-out set's figures, a column per model."""
    valid = sum(r["label"] for r in rows)
    print(f"held-out set {name}: {len(rows)} pairs ({valid} valid, {len(rows) - valid} invalid)")
    names = list(results)
    width = max(14, *(len(n) + 2 for n in names))
    print(f"{'figure':<26}" + "".join(f"{n:>{width}}" for n in names))
    lines = [("separation μs", lambda r: r["separation"])]
    for where in ("at_0.5", "at_best"):
        for key in ("f1_macro", "f1_weighted", "accuracy"):
            lines.append((f"{key} {where.replace('_', ' ')}", lambda r, w=where, k=key: r[w][k]))
    lines.append(("best threshold (oracle)", lambda r: r["at_best"]["threshold"]))
    lines.append(("pairs / CPU s", lambda r: r["pairs_per_cpu_s"]))
    for label, get in lines:
        print(f"{label:<26}" + "".join(f"{get(results[n]):>{width}.3f}" for n in names))
    for key, label in (("separation", "μs"), ("f1_macro", "f1_macro at 0.5")):
        cells = ["[{:.3f}, {:.3f}]".format(*results[n]["intervals"][key]) for n in names]
        print(f"{label + ', 95% CI':<26}" + "".join(f"{c:>{width}}" for c in cells))
    print("per kind: mean score (AUC against the valid pairs, invalid kinds)")
    for kind, first in results[names[0]]["kinds"].items():
        cells = []
        for n in names:
            k = results[n]["kinds"][kind]
            cells.append(f"{k['mean']:.2f}" + (f" ({k['auc']:.2f})" if "auc" in k else ""))
        print(
            f"  {('valid ' if first['label'] else 'invalid ') + kind:<24}"
            + "".join(f"{c:>{width}}" for c in cells)
        )
    print("goal kinds: AUC against the valid pairs (n pairs); goals: AUC >= 0.8, F1 at 0.5 >= 0.85, μs >= .5")
    for kind, first in results[names[0]]["goal_kinds"].items():
        if "auc" in first:
            cells = [f"{results[n]['goal_kinds'][kind]['auc']:.3f}" for n in names]
            print(f"  {kind + ' (' + str(first['n']) + ')':<24}" + "".join(f"{c:>{width}}" for c in cells))
            cells = ["[{:.2f}, {:.2f}]".format(*results[n]["intervals"][f"auc {kind}"]) for n in names]
            print(f"  {'  95% CI':<24}" + "".join(f"{c:>{width}}" for c in cells))
    met = [n for n in names if meets_goals(results[n])]
    print(f"meets every goal of set {name}: {', '.join(met) or 'none'}")


def meets_goals(result: dict) -> bool:
    """Whether a model's figures on a set reach :data:`GOALS`."""
    aucs = [k["auc"] for k in result["goal_kinds"].values() if "auc" in k]
    return (
        result["at_0.5"]["f1_macro"] >= GOALS["f1"]
        and result["separation"] >= GOALS["separation"]
        and min(aucs) >= GOALS["auc"]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", action="append", default=[], help="NAME=DIR of a trained model (repeatable)"
    )
    parser.add_argument(
        "--train", action="append", default=[], choices=["bi", "cross"], help="train one first"
    )
    parser.add_argument(
        "--set", action="append", default=[], choices=["A", "B", "C", "U"], help="held-out set (default: all)"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads (pinned; reported)")
    parser.add_argument("--no-bases", action="store_true", help="leave out the untuned bases")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()

    import torch

    from paraamr.quality.data import HELDOUT_SETS, heldout
    from paraamr.quality.mpnet import MPNET
    from paraamr.quality.scorer import BASE_MODEL, DEFAULT_DIR, DEFAULT_MODEL

    torch.set_num_threads(args.threads)
    when = time.strftime("%Y-%m-%d %H:%M")
    print(f"threads {args.threads}; load average before {os.getloadavg()[0]:.2f}; {when}")
    models: dict[str, str | Path] = {} if args.no_bases else {"base MiniLM": BASE_MODEL, "base mpnet": MPNET}
    if DEFAULT_DIR.is_dir():
        models["shipped default"] = DEFAULT_MODEL
    scratch = tempfile.TemporaryDirectory(prefix="bench-quality-")
    for mode in args.train:
        models[f"trained {mode}"] = train_default(mode, Path(scratch.name), args.threads)
    for spec in args.model:
        name, _, folder = spec.partition("=")
        models[name] = Path(folder)
    results = {}
    for name in args.set or [*sorted(HELDOUT_SETS), "U"]:
        if name == "U":
            rows = contrast_rows()
            results[name] = {n: evaluate_contrast(model, rows) for n, model in models.items()}
            print_contrast(rows, results[name])
            continue
        rows = heldout(name)
        results[name] = {model_name: evaluate_model(model, rows) for model_name, model in models.items()}
        print_set(name, rows, results[name])
    labelled = [name for name in results if name != "U"]
    for n, model in results[labelled[0]].items() if labelled else ():
        info = model["info"]
        if info.get("calibration"):
            s = info["settings"]
            print(
                f"{n}: {info['mode']}, {info['triplets']} triplets ({info['train_examples']} training "
                f"examples, {info['steps_done']} steps, batch {s['batch_size']}, max length "
                f"{s['max_length']}, frozen {s['freeze_layers']}), {info['train_seconds']:.0f} s wall / "
                f"{info['train_cpu_seconds']:.0f} s CPU on {info['torch_threads']} thread(s); "
                f"saved threshold {info['calibration']['threshold']:.4g}"
            )
        print(f"signature {n}: {model['signature']}")
    print(f"load average after {os.getloadavg()[0]:.2f}")
    if args.json:
        for by_model in results.values():
            for r in by_model.values():
                r.pop("info", None)
        args.json.write_text(json.dumps(results, indent=2))
    scratch.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
