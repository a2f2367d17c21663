"""CTranslate2's decoder thread layouts on a CPU, each side in processes of its own, at the real sizes.

    nice -n 10 python benchmarks/bench_ct2_layout.py --workdir W          # ~25 min on 2 shared cores
    nice -n 10 python benchmarks/bench_ct2_layout.py --small              # the same code, small configs

Layouts (:data:`paraamr.models.fast.DECODER_LAYOUTS`): ``team`` (one worker, every product on a
team of ``--threads`` threads, each call's batch whole) and ``halves`` (each call's batch split
into two length-sorted halves, run side by side on two workers of half the threads).

Part 1, torch beside CTranslate2: does a process whose CTranslate2 decoders run in a layout slow
the torch models of the same process (a run with ``--quality-model`` scores with torch between
its CTranslate2 stages)? Processes of three kinds, alternated (rotated each repetition): ``none``
(torch alone), ``team`` and ``halves`` (the CTranslate2 realizer and LM loaded in that layout and
run between the torch rounds). Each times, per round, the transformers T5 realizer of the real
size on ``--torch-items`` graphs and the transformers embedder (all-MiniLM-L6-v2) on 256 texts.

Part 2, the stages: per stage (parse, realize, perplexity, as ``bench_stages.py`` builds and feeds
them), one process per side (transformers float32, CTranslate2 float32 in each layout), the sides
alternated (A B C, then B C A ...) ``--reps`` times; each process loads its model, warms up on
other items and times one call on the stage's items (wall and CPU seconds). Medians over the
processes, ratios to transformers, and the per-source cost (1 parse + ``--foci`` realizations +
``--foci`` perplexities) as ``bench_stages.py`` defines it. Outputs: token ids of every returned
sequence of each layout against the other layout's and against transformers'; perplexities
likewise (identical values and the largest ratio).

``--busy N`` runs N busy-loop processes (at this script's priority) beside every side, as another
user's job on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import add_stage_options, cpu_seconds, done, load, machine, pin_threads

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

BASE = "transformers float32"
#: Side name -> (backend, CTranslate2 decoder layout).
SIDES = {
    BASE: ("transformers", None),
    "ct2 team": ("ctranslate2", "team"),
    "ct2 halves": ("ctranslate2", "halves"),
}
BATCHES = {"parser": 16, "realizer": 32, "lm": 64, "embedder": 64}


def _models(root: Path, small: bool) -> dict[str, Path]:
    """The model folders of ``bench_stages.py`` (built once under ``root``)."""
    from bench_gpu import LARGE, SMALL, build_models

    if (root / "lm").is_dir():
        return {k: root / k for k in ("parser", "realizer", "lm")}
    dirs = build_models(root, SMALL if small else LARGE, 48 if small else 160, 24 if small else 40, "cpu")
    gen = dirs["parser"] / "generation_config.json"  # as bench_stages.py: forced EOS off
    gen.write_text(json.dumps({**json.loads(gen.read_text()), "forced_eos_token_id": None}))
    return dirs


def _timed(call) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), cpu_seconds()
    out = call()
    return time.perf_counter() - wall, cpu_seconds() - cpu, out


def child_torch(args: argparse.Namespace, dirs: dict[str, Path]) -> dict:
    """Part 1 in this process: torch rounds, with the CTranslate2 decoders of ``args.layout`` run
    between them (none when the layout is ``none``)."""
    import torch
    from bench_stages import workload

    from paraamr.models import fast
    from paraamr.models.embedder import Embedder
    from paraamr.models.lm import PerplexityScorer
    from paraamr.models.realizer import Realizer

    items = workload(-(-args.torch_items // args.foci), args.foci, 24)
    graphs, texts = items["realize"][: args.torch_items], items["perplexity"][: args.torch_items]
    sents = (items["embed"] * 64)[:256]
    realizer = Realizer(dirs["realizer"], backend="transformers", use_tense=False, batch_size=32)
    embedder = Embedder(batch_size=64, processes=1, backend="transformers")
    ct2 = []
    if args.layout != "none":
        fast.decoder_layout = args.layout
        r = Realizer(dirs["realizer"], backend="ctranslate2", use_tense=False, batch_size=32)
        lm = PerplexityScorer(dirs["lm"], backend="ctranslate2", batch_size=64)
        ct2 = [lambda: r.realize(graphs), lambda: lm.perplexity(texts)]
    realizer.realize(graphs[:1]), embedder.encode(sents[:8])  # warm-up
    out: dict = {"torch_threads": torch.get_num_threads(), "realize": [], "embed": [], "ct2": []}
    for _ in range(args.rounds):
        for call in ct2:
            out["ct2"].append(_timed(call)[:2])
        out["realize"].append(_timed(lambda: realizer.realize(graphs))[:2])
        out["embed"].append(_timed(lambda: embedder.encode(sents))[:2])
    return out


def child_stage(args: argparse.Namespace, dirs: dict[str, Path]) -> dict:
    """Part 2 in this process: one side of one stage, one timed call after a warm-up."""
    from bench_stages import stage_sides, workload

    from paraamr.models import fast

    backend, layout = SIDES[args.side]
    if layout:
        fast.decoder_layout = layout
    counts = {"parse": args.parse_items, "realize": args.realize_items, "perplexity": args.lm_items}
    n = counts[args.stage]
    items = workload(n if args.stage == "parse" else -(-n // args.foci), args.foci, 24)[args.stage][:n]
    warm = workload(1, 2, 8, seed=1)[args.stage][:1]
    t0 = time.perf_counter()
    sides, records = stage_sides(args.stage, dirs, BATCHES, False, [(backend, "float32")])
    ((name, run),) = sides.items()
    loaded = time.perf_counter() - t0
    run(warm)
    wall, cpu, out = _timed(lambda: run(items))
    if name in records:
        last = n * 4 if args.stage == "parse" else n
        out = records[name][-last:]
    return {"n": n, "wall": wall, "cpu": cpu, "loaded": loaded, "out": out}


def _spawn(args: argparse.Namespace, root: Path, **what: str) -> dict:
    """Run this script as a child (``--child``) with ``what`` and return its JSON answer."""
    answer = root / "child.json"
    argv = [sys.executable, __file__, "--workdir", str(root), "--child", str(answer)]
    argv += [f"--threads={args.threads}", f"--rounds={args.rounds}", f"--foci={args.foci}"]
    argv += [f"--torch-items={args.torch_items}", f"--parse-items={args.parse_items}"]
    argv += [f"--realize-items={args.realize_items}", f"--lm-items={args.lm_items}"]
    argv += [*(["--small"] if args.small else []), *(f"--{k}={v}" for k, v in what.items())]
    before = load()
    subprocess.run(argv, check=True)
    found = json.loads(answer.read_text())
    answer.unlink()
    return {**found, "load": f"{before} -> {load()}"}


def _rotations(names: list[str], reps: int):
    for r in range(reps):
        shift = r % len(names)
        yield from names[shift:] + names[:shift]


def part_torch(args: argparse.Namespace, root: Path) -> None:
    print(
        f"== torch beside CTranslate2: {args.torch_items} graphs (T5, transformers) and 256 texts (embedder)"
    )
    seen: dict[str, list[dict]] = {}
    for layout in _rotations(["none", "team", "halves"], args.reps):
        found = _spawn(args, root, part="torch", layout=layout)
        seen.setdefault(layout, []).append(found)
        rows = ", ".join(
            f"{k} {statistics.median(w for w, _ in found[k]):.2f} s" for k in ("realize", "embed")
        )
        print(f"  {layout:<8} torch threads {found['torch_threads']}: {rows}; {found['load']}", flush=True)
    print(
        f"{'layout':<9}{'realize s':>10}{'CPU s':>8}{'embed s':>9}{'CPU s':>8}{'ct2 calls s':>13}  (medians)"
    )
    for layout, runs in seen.items():
        cells = []
        for key in ("realize", "embed"):
            pairs = [p for run in runs for p in run[key]]
            cells += [statistics.median(w for w, _ in pairs), statistics.median(c for _, c in pairs)]
        ct2 = [w for run in runs for w, _ in run["ct2"]]
        extra = f"{statistics.median(ct2):13.2f}" if ct2 else f"{'':>13}"
        print(f"{layout:<9}{cells[0]:>10.2f}{cells[1]:>8.2f}{cells[2]:>9.2f}{cells[3]:>8.2f}{extra}")


def _same(a: list, b: list) -> str:
    return f"identical {sum(x == y for x, y in zip(a, b, strict=True))}/{len(b)}"


def part_stages(args: argparse.Namespace, root: Path) -> None:
    from bench_stages import _ids_check, _ppl_check, per_source

    rates: dict[str, dict[str, float]] = {}
    print(
        f"{'stage':<11}{'side':<22}{'items':>6}{'median s':>10}{'ratio':>8}{'CPU s':>8}{'ratio':>7}  outputs"
    )
    for stage in args.stages.split(","):
        seen: dict[str, list[dict]] = {}
        for side in _rotations(list(SIDES), args.reps):
            found = _spawn(args, root, part="stage", stage=stage, side=side)
            seen.setdefault(side, []).append(found)
            print(
                f"  {stage} {side}: {found['wall']:.2f} s, CPU {found['cpu']:.2f} s; {found['load']}",
                flush=True,
            )
        wall = {s: statistics.median(f["wall"] for f in runs) for s, runs in seen.items()}
        cpu = {s: statistics.median(f["cpu"] for f in runs) for s, runs in seen.items()}
        rates[stage] = {s: runs[0]["n"] / wall[s] for s, runs in seen.items()}
        outs = {s: runs[-1]["out"] for s, runs in seen.items()}
        for side, runs in seen.items():
            n = runs[0]["n"]
            if side == BASE:
                check = "(baseline)"
            elif stage == "perplexity":
                other = "ct2 team" if side == "ct2 halves" else "ct2 halves"
                check = f"{_ppl_check(outs[side], outs[BASE])}; against {other}: "
                check += f"{_same(outs[side], outs[other])}, {_ppl_check(outs[side], outs[other])}"
            else:
                other = "ct2 team" if side == "ct2 halves" else "ct2 halves"
                check = f"against transformers {_ids_check(outs[side], outs[BASE])}; against {other}: "
                check += _same(outs[side], outs[other])
            row = f"{stage:<11}{side:<22}{n:>6}{wall[side]:>10.2f}{wall[BASE] / wall[side]:>7.2f}x"
            print(f"{row}{cpu[side]:>8.2f}{cpu[BASE] / cpu[side]:>6.2f}x  {check}")
    per_source(rates, args.foci, 15_543_606, args.threads)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_stage_options(ap)
    ap.add_argument("--parts", default="torch,stages", help="torch, stages or both (default)")
    ap.add_argument("--stages", default="parse,realize,perplexity", help="stages of part 2")
    ap.add_argument(
        "--torch-items", type=int, default=8, help="graphs the torch realizer realizes (default 8)"
    )
    ap.add_argument("--reps", type=int, default=2, help="processes per side (default 2)")
    ap.add_argument("--rounds", type=int, default=3, help="torch rounds per process of part 1 (default 3)")
    ap.add_argument("--busy", type=int, default=0, help="busy-loop processes beside the sides (default 0)")
    ap.add_argument("--workdir", help="where to build the model dirs (kept; default: a temporary folder)")
    ap.add_argument("--child", help=argparse.SUPPRESS)  # a child process writes its answer here
    ap.add_argument("--part", help=argparse.SUPPRESS)
    ap.add_argument("--layout", help=argparse.SUPPRESS)
    ap.add_argument("--stage", help=argparse.SUPPRESS)
    ap.add_argument("--side", help=argparse.SUPPRESS)
    args = ap.parse_args()
    threads = pin_threads(args.threads)
    root = Path(args.workdir or tempfile.mkdtemp(prefix="bench-ct2-layout-"))
    for name in ("amrlib", "penman"):  # random graphs: one log line per failed deserialization
        logging.getLogger(name).setLevel(logging.CRITICAL)
    dirs = _models(root, args.small)
    if args.child:
        found = (child_torch if args.part == "torch" else child_stage)(args, dirs)
        Path(args.child).write_text(json.dumps(found))
        return 0
    print(machine(threads))
    parts = args.parts.split(",")
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        if "torch" in parts:
            part_torch(args, root)
        if "stages" in parts:
            part_stages(args, root)
    finally:
        for process in busy:
            process.kill()
    return done(args.workdir, root)


if __name__ == "__main__":
    sys.exit(main())
