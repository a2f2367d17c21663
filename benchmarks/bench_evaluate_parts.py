"""The speed-up, scaling and report parts of benchmarks/bench_evaluate.py (see its docstring)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _timing import load
from bench_evaluate import distinct, record, timed

BENCH = str(Path(__file__).resolve().parent / "bench_evaluate.py")


class FullPipelineTagger:
    """The POS layer as a user of spaCy's defaults writes it: ``spacy.load(model)`` (every
    component) and ``nlp.pipe(sentences)`` at its default batch size."""

    def __init__(self, tagger) -> None:
        import spacy

        self.name = tagger.name
        self.nlp = spacy.load(tagger.model)

    def tag(self, sentences):
        return [[(w.idx, w.idx + len(w.text), w.tag_) for w in doc] for doc in self.nlp.pipe(sentences)]


def _best(fns: dict, rounds: int = 2) -> dict:
    """Each callable ``rounds`` times, in turn; per name the first output and the best wall / CPU."""
    out: dict = {}
    for _ in range(rounds):
        for name, fn in fns.items():
            value, wall, cpu = timed(fn)
            best = out.setdefault(name, {"value": value, "wall": wall, "cpu": cpu})
            best["wall"], best["cpu"] = min(best["wall"], wall), min(best["cpu"], cpu)
    return out


def _parse_with(sentences, **options):
    from paraamr.metrics.parsers import LinkGrammarParser

    tagger = options.pop("tagger", None)
    parser = LinkGrammarParser(**options)
    if tagger is not None:
        parser.tagger = tagger(parser.tagger)
    parser.parse(["Warm the workers up."])
    try:
        return parser.parse(sentences)
    finally:
        parser.close()


def _speed_row(args, name, result, baseline, ours, **extra):
    base, mine = result[baseline], result[ours]
    return record(
        args,
        "speedup",
        setting=name,
        baseline_wall=base["wall"],
        ours_wall=mine["wall"],
        baseline_cpu=base["cpu"],
        ours_cpu=mine["cpu"],
        ratio=base["wall"] / mine["wall"],
        **extra,
    )


def part_speedups(args, pairs) -> None:
    """Each faster setting against the library defaults, on the first ``--speed-pairs`` pairs."""
    import numpy as np

    from paraamr.metrics.parsers import sentence_key
    from paraamr.metrics.pos import PosTagger
    from paraamr.metrics.ted import distance_table
    from paraamr.models.embedder import Embedder

    sub = pairs[: args.speed_pairs]
    sentences = distinct(sub)
    before = load()
    record(args, "speedups", sentences=len(sentences), speed_pairs=len(sub), load_before=before)
    lg = _best(
        {
            "one at a time": lambda: _parse_with(sentences, pos=None, ahead=1),
            "8 ahead": lambda: _parse_with(sentences, pos=None),
        }
    )
    same = lg["one at a time"]["value"] == lg["8 ahead"]["value"]
    _speed_row(
        args, "link-grammar: 8 sentences queued per process", lg, "one at a time", "8 ahead", same=same
    )
    tagger = PosTagger()
    full = FullPipelineTagger(tagger)
    pos = _best({"full pipeline": lambda: full.tag(sentences), "tagger only": lambda: tagger.tag(sentences)})
    same = pos["full pipeline"]["value"] == pos["tagger only"]["value"]
    _speed_row(
        args, "POS layer: spaCy tagger only, batches of 256", pos, "full pipeline", "tagger only", same=same
    )
    stage = _best(
        {
            "defaults": lambda: _parse_with(sentences, ahead=1, tagger=FullPipelineTagger),
            "ours": lambda: _parse_with(sentences),
        }
    )
    same = stage["defaults"]["value"] == stage["ours"]["value"]
    _speed_row(args, "parse stage (link-grammar + POS layer)", stage, "defaults", "ours", same=same)
    limited = _best({"limit 100": lambda: _parse_with(sentences, limit=100)}, rounds=1)
    trees = dict(zip(sentences, stage["ours"]["value"], strict=True))
    fewer = dict(zip(sentences, limited["limit 100"]["value"], strict=True))
    ok = [
        (s, p)
        for s, p in sub
        if all(
            isinstance(t, str)
            for t in (
                trees[sentence_key(s)],
                trees[sentence_key(p)],
                fewer[sentence_key(s)],
                fewer[sentence_key(p)],
            )
        )
    ]
    ted = [
        distance_table([d[sentence_key(p)] for _, p in ok], [d[sentence_key(s)] for s, _ in ok])
        for d in (trees, fewer)
    ]
    changed = sum(trees[k] != fewer[k] for k in sentences) / len(sentences)
    means = [[float(np.mean(h)) for h in t] for t in ted]
    record(
        args,
        "speedup",
        setting="option: link-parser -limit=100 (changes trees)",
        baseline_wall=stage["ours"]["wall"],
        ours_wall=limited["limit 100"]["wall"],
        ratio=stage["ours"]["wall"] / limited["limit 100"]["wall"],
        same=False,
        trees_changed=changed,
        ted3_mean=[means[0][0], means[1][0]],
        tedf_mean=[means[0][1], means[1][1]],
        pairs_changed=sum(a != b for h in range(2) for a, b in zip(ted[0][h], ted[1][h], strict=True))
        / (2 * len(ok)),
    )
    _embed_speedups(args, sentences, Embedder, np)
    record(args, "speedups-done", load_before=before, load_after=load())


def _embed_speedups(args, sentences, Embedder, np) -> None:
    from sentence_transformers import SentenceTransformer

    from paraamr.tasks import core_share

    path = str(Embedder(device="cpu").path)
    (model, _, _), start, _ = timed(lambda: (SentenceTransformer(path, device="cpu"), 0, 0))
    ours = Embedder(device="cpu", processes=core_share())
    result = _best(
        {
            "sentence-transformers defaults": lambda: model.encode(sentences, normalize_embeddings=True),
            "ours": lambda: ours.encode(sentences),
        }
    )
    diff = float(np.abs(result["sentence-transformers defaults"]["value"] - result["ours"]["value"]).max())
    _speed_row(
        args,
        f"embed: {core_share()} single-threaded processes, batches of {ours.batch_size} (start-up included)",
        result,
        "sentence-transformers defaults",
        "ours",
        same=diff <= 1e-4,
        max_abs_diff=diff,
        model_load=start,
    )


def part_shard(args, pairs) -> None:
    """One process of the scaling simulation: its share of the sources, one core's worth."""
    import torch

    from paraamr.metrics.parsers import LinkGrammarParser
    from paraamr.metrics.report import Pair, evaluate_pairs
    from paraamr.models.embedder import Embedder

    torch.set_num_threads(1)
    k, n = (int(x) for x in args.shard.split("/"))
    mine = set(list(dict.fromkeys(s for s, _ in pairs))[k::n])
    items = [Pair(str(i), s, p) for i, (s, p) in enumerate(pairs) if s in mine]
    parser, embedder = LinkGrammarParser(processes=1), Embedder(device="cpu", processes=1)
    parser.parse(["Warm the workers up."])
    embedder.encode(["Warm the model up."])
    try:
        result, wall, cpu = timed(lambda: evaluate_pairs(items, embedder=embedder, parser=parser))
    finally:
        parser.close()
    print(
        json.dumps(
            {
                "shard": args.shard,
                "pairs": len(items),
                "wall": wall,
                "cpu": cpu,
                "affinity": sorted(os.sched_getaffinity(0)),
                "timings": result["timings"],
            }
        )
    )


def _simulate(args, n: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    command = [sys.executable, BENCH, "--pairs", str(args.scaling_pairs), "--part", "shard"]
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            ["taskset", "-c", str(k), *command, "--shard", f"{k}/{n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        for k in range(n)
    ]
    shards = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    return {
        "processes": n,
        "overall_wall": time.perf_counter() - start,
        "shards": shards,
        "work_wall": max(s["wall"] for s in shards),
    }


def part_scaling(args, pairs) -> None:
    """1 vs 2 processes pinned one core each (``taskset -c k``), two rounds, best of each."""
    before = load()
    runs: dict[int, list[dict]] = {1: [], 2: []}
    for _ in range(2):
        for n in (1, 2):
            runs[n].append(_simulate(args, n))
    best = {n: min(r, key=lambda x: x["work_wall"]) for n, r in runs.items()}
    record(
        args,
        "scaling",
        scaling_pairs=args.scaling_pairs,
        one=best[1],
        two=best[2],
        ratio=best[1]["work_wall"] / best[2]["work_wall"],
        ratio_with_startup=best[1]["overall_wall"] / best[2]["overall_wall"],
        cpu_ratio=best[1]["shards"][0]["cpu"] / max(s["cpu"] for s in best[2]["shards"]),
        load_before=before,
        load_after=load(),
    )


def report(rows: list[dict]) -> None:
    """The tables of the results in ``rows`` (the last row of each part wins)."""
    last = {r["part"]: r for r in rows}
    if "e2e" in last and "bounds" in last:
        e2e, bounds = last["e2e"], last["bounds"]
        total = sum(s["wall"] for s in bounds["stages"].values())
        print(
            f"\n{e2e['pairs']:,} pairs, {e2e['distinct']:,} distinct sentences; e2e {e2e['load_before']} -> "
            f"{e2e['load_after']}; bounds {bounds['load_before']} -> {bounds['load_after']}"
        )
        print("\n| stage | end to end (s) | bound: alone on all cores (s) |\n|---|---:|---:|")
        names = {"parse": "parse", "trees": None, "ted": "ted", "embed": "embed", "bleu": "lexical"}
        for stage, key in names.items():
            got = e2e["stages"].get(key) if key else None
            mark = f" (every {bounds['every']}th source, scaled)" if bounds["every"] > 1 else ""
            bound = bounds["stages"][stage]["wall"]
            print(f"| {stage} | {'in ted' if key is None else f'{got:.1f}'} | {bound:.1f}{mark} |")
        rate = e2e["pairs"] / e2e["wall"]
        print(f"| **total** | **{e2e['wall']:.1f}** ({rate:.0f} pairs/s) | **{total:.1f}** |")
        print(
            f"\nend to end / sum of bounds: {e2e['wall'] / total:.3f} (goal <= 1.15); model and worker "
            f"start-up before it {e2e['load_start']:.1f} s; means {e2e['means']}"
        )
    speed = [r for r in rows if r["part"] == "speedup"]
    if speed:
        print(
            "\n| setting | baseline (library defaults) s | ours s | ratio | CPU s: baseline / ours | same |"
        )
        print("|---|---:|---:|---:|---:|---|")
        for r in speed:
            note = f" (max diff {r['max_abs_diff']:.1e})" if "max_abs_diff" in r else ""
            if "trees_changed" in r:
                note = (
                    f" ({r['trees_changed']:.1%} of trees, {r['pairs_changed']:.1%} of TED values changed; "
                    f"TED-3 mean {r['ted3_mean'][0]:.3f} -> {r['ted3_mean'][1]:.3f}, TED-F "
                    f"{r['tedf_mean'][0]:.3f} -> {r['tedf_mean'][1]:.3f})"
                )
            cpu = ""
            if "baseline_cpu" in r:
                base, ours = r["baseline_cpu"], r["ours_cpu"]
                cpu = f"{base:.1f} / {ours:.1f} = {base / ours:.2f}x"
            times = f"{r['baseline_wall']:.1f} | {r['ours_wall']:.1f} | {r['ratio']:.2f}x"
            print(f"| {r['setting']} | {times} | {cpu} | {'yes' if r['same'] else 'no'}{note} |")
    if "scaling" in last:
        s = last["scaling"]
        one, two = s["one"]["work_wall"], s["two"]["work_wall"]
        print(
            f"\ntaskset scaling, {s['scaling_pairs']:,} pairs: 1 process {one:.1f} s, 2 processes {two:.1f} s"
            " "
            f"(slowest): {s['ratio']:.2f}x (with start-up {s['ratio_with_startup']:.2f}x; CPU time of the "
            f"slowest {s.get('cpu_ratio', float('nan')):.2f}x); "
            f"{s['load_before']} -> {s['load_after']}"
        )
