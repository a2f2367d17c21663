"""What the generator's pipeline buys, end to end, against what a competent amrlib user writes.

    python benchmarks/bench_pipeline.py [--sizes 48,600] [--modes amr,text] [--rounds 1]
    python benchmarks/bench_pipeline.py --rss-lines 1000000      # peak RSS per process, 1M lines

Models: the real architectures at small size (BART parser, T5 realizer, GPT-2 LM; random weights,
generation forced to ``--parse-len`` / ``--gen-len`` tokens: ``bench_gpu.build_models``), so the
model stages cost CPU time as real ones do, only less. Each side is one command, timed from start
to exit (interpreter, imports and model loading included, as a user waits for it):

- ``amrlib lists`` (the baseline, 1 process): ``load_stog_model().parse_sents(all sentences)`` at
  amrlib's defaults (batch 12, 4 beams), ``paraamr.amr.variants`` of every graph (the same
  re-rooting code as ours, so only the pipeline differs), ``load_gtos_model().generate(all
  candidates, use_tense=True)`` (batch 32; the installed spaCy model loaded for its tense tags, as
  ours uses), the same candidate drops as ours (empty, same as the
  source, duplicate), evaluate's perplexity recipe (batch 16); writes JSON lines.
- ``ours``: ``generate.py`` (windows, length-bucketed batches, CPU stages overlapped with model
  stages; writes the Parquet folder, card and summary), with ``--no-pipeline`` (no overlap), and
  under ``torchrun --nproc_per_node 2`` (2 processes, 1 thread each).

Threads: 1-process sides get ``--threads`` threads (default: all cores), the 2-process side half
each. Inputs: ``amr`` (hand-written multi-node graphs with ``--amr-input``: re-focusing,
realization and perplexity) and ``text`` (sentences through the parser; random parser weights give
graphs that often fail to decode: parsing dominates). Outputs are compared in the same run: the
(id, paraphrase) pairs of every side equal the baseline's, perplexities within a relative
difference printed. Timing: ``benchmarks/_timing.py`` (warm-up run on other items, sides
interleaved with the order rotated each round, best and median, CPU time of the children, load
average before and after).

``--rss-lines N`` runs ``generate.py`` under ``torchrun --nproc_per_node 2`` on an N-line input
(distinct lines; 99.9% longer than ``--max-chars`` so they end as failure rows without model work,
0.1% short sentences through every stage) and prints the peak resident memory of the largest
process (``getrusage`` of the children).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import interleave, load, machine, pin_threads

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]
GRAPHS = ROOT / "tests" / "generate" / "data" / "graphs.amr"


def _sentences(n: int, seed: int = 0) -> list[str]:
    from paraamr.models.tiny import _WORDS, PAPER_TEXT

    rng = random.Random(seed)
    words = _WORDS.split()
    out = [PAPER_TEXT]
    while len(out) < n:
        out.append(" ".join(rng.choice(words) for _ in range(rng.randint(3, 30))).capitalize() + ".")
    return out


def _graphs(n: int) -> list[str]:
    from paraamr.amr import read_graphs

    blocks = [
        b for _, b in read_graphs(GRAPHS.read_text().splitlines()) if "g-bad" not in b and "repeat" not in b
    ]
    return [
        f"# ::id bench-{i}\n"
        + "\n".join(line for line in blocks[i % len(blocks)].splitlines() if not line.startswith("# ::id"))
        for i in range(n)
    ]


def baseline(mode: str, source: str, output: str, models: str) -> None:
    """The amrlib user's script (run in its own process by :func:`main`)."""
    import amrlib
    import spacy.util
    from amrlib.graph_processing import annotator
    from bench_lm import evaluate_recipe
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from paraamr import amr
    from paraamr.models.realizer import SPACY_MODELS
    from paraamr.models.resolve import base_tokenizer
    from paraamr.records import normalize, text_id

    models = Path(models)
    text = Path(source).read_text(encoding="utf-8")
    if mode == "text":
        sents = text.splitlines()
        ids = [text_id(t) for t in sents]
        stog = amrlib.load_stog_model(
            str(models / "parser"), tok_name_or_path=str(base_tokenizer(models / "parser"))
        )
        graphs = stog.parse_sents(sents)
    else:
        trees = [amr.parse(block) for _, block in amr.read_graphs(text)]
        sents = [t.metadata.get("snt", "") for t in trees]
        ids = [t.metadata["id"] for t in trees]
        graphs = [block for _, block in amr.read_graphs(text)]
    cands = []  # (source index, variant)
    for i, graph in enumerate(graphs):
        if graph is None:
            continue
        try:
            cands += [(i, v) for v in amr.variants(amr.decode(graph), oneline=True)]
        except amr.AMRError:
            continue
    gtos = amrlib.load_gtos_model(
        str(models / "realizer"), tok_name_or_path=str(base_tokenizer(models / "realizer"))
    )
    annotator.load_spacy(next(m for m in SPACY_MODELS if spacy.util.is_package(m)))  # for use_tense
    outs, _ = gtos.generate([v.penman for _, v in cands], use_tense=True)
    seen = [{normalize(s)} for s in sents]
    kept = []
    for (i, _), out in zip(cands, outs, strict=True):
        norm = normalize(out or "")
        if norm and norm not in seen[i]:
            seen[i].add(norm)
            kept.append((i, out.strip()))
    tokenizer = AutoTokenizer.from_pretrained(models / "lm")
    lm = AutoModelForCausalLM.from_pretrained(models / "lm").eval()
    ppl = evaluate_recipe(lm, tokenizer, [t for _, t in kept])[0] if kept else []
    with open(output, "w", encoding="utf-8") as f:
        for (i, para), p in zip(kept, ppl, strict=True):
            f.write(json.dumps({"id": ids[i], "para_text": para, "perplexity": p}) + "\n")


def _pairs(out: Path) -> dict[tuple[str, str], float]:
    """(id, paraphrase) -> perplexity of a side's output (JSON lines, or our folder's pairs shards)."""
    if out.is_file():
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    else:
        import pyarrow.parquet as pq

        rows = [
            r for shard in sorted(out.glob("data/pairs/*.parquet")) for r in pq.read_table(shard).to_pylist()
        ]
    return {(r["id"], r["para_text"]): r["perplexity"] for r in rows}


def _commands(mode: str, source: Path, models: Path, out: Path, threads: int) -> dict[str, tuple[list, dict]]:
    ours = [
        str(ROOT / "generate.py"),
        "--amr-input" if mode == "amr" else "--input",
        str(source),
        "--output",
        str(out / "ours"),
        "--parser-model",
        str(models / "parser"),
        "--realizer-model",
        str(models / "realizer"),
        "--lm-model",
        str(models / "lm"),
        "--max-perplexity",
        "none",
        "--no-progress",
    ]
    one = {"OMP_NUM_THREADS": str(threads)}
    half = {"OMP_NUM_THREADS": str(max(1, threads // 2))}
    return {
        "amrlib lists": (
            [
                sys.executable,
                __file__,
                "--baseline",
                mode,
                str(source),
                str(out / "amrlib.jsonl"),
                str(models),
            ],
            one,
        ),
        "ours": ([sys.executable, *ours], one),
        "ours --no-pipeline": ([sys.executable, *ours, "--no-pipeline"], one),
        "ours 2 processes": (["torchrun", "--nproc_per_node", "2", *ours], half),
    }


def _run(cmd: list, env: dict, out: Path) -> Path:
    """Run one side's command into a fresh ``out``; its output path."""
    for stale in (out / "ours", out / "amrlib.jsonl"):
        shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink(missing_ok=True)
    proc = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} ... failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return out / ("amrlib.jsonl" if "--baseline" in cmd else "ours")


def _side(cmd: list, env: dict, out: Path):
    def run() -> dict:
        return _pairs(_run(cmd, env, out))

    return run


def bench(args) -> None:
    from bench_gpu import SMALL, build_models

    threads = pin_threads(args.threads or os.cpu_count())
    print(machine(threads))
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-pipeline-"))
    models = work / "models"
    if not (models / "lm").is_dir():
        build_models(models, SMALL, args.parse_len, args.gen_len, "cpu")
    print(
        f"models: small BART / T5 / GPT-2 (random weights), parse {args.parse_len} / realize {args.gen_len} "
        f"tokens; 1-process sides {threads} threads, 2 processes {max(1, threads // 2)} each; "
        f"{args.rounds} rounds"
    )
    print(
        f"{'input':<6}{'sources':>8}  {'side':<20}{'src/s':>8}{'best s':>9}{'median s':>10}{'CPU s':>8}"
        f"{'vs amrlib':>11}  outputs vs amrlib"
    )
    for mode in args.modes.split(","):
        for n in (int(x) for x in args.sizes.split(",")):
            out = work / f"{mode}-{n}"
            out.mkdir(parents=True, exist_ok=True)
            suffix = "txt" if mode == "text" else "amr"
            source, warm_source = out / f"input.{suffix}", out / f"warm.{suffix}"
            if mode == "text":
                source.write_text("\n".join(_sentences(n)) + "\n")
                warm_source.write_text("\n".join(_sentences(4, seed=1)[1:]) + "\n")
            else:
                source.write_text("\n\n".join(_graphs(n)) + "\n")
                warm_source.write_text("\n\n".join(g.replace("bench-", "warm-") for g in _graphs(3)) + "\n")
            commands = _commands(mode, source, models, out, threads)
            names = ["amrlib lists", *(s for s in args.sides.split(",") if s != "amrlib lists")]
            sides = {name: _side(*commands[name], out) for name in names}  # the reference always runs
            warm = _commands(mode, warm_source, models, out, threads)
            times, outputs = interleave(
                sides,
                rounds=args.rounds,
                warmup={"ours": _side(*warm["ours"], out), "amrlib lists": _side(*warm["amrlib lists"], out)},
            )
            ref = outputs["amrlib lists"]
            base = times["amrlib lists"]
            for name, t in times.items():
                got = outputs[name]
                common = ref.keys() & got.keys()
                rel = max((abs(got[k] - ref[k]) / ref[k] for k in common), default=0.0)
                check = f"{len(common)}/{len(ref)} same pairs ({len(got)} ours), ppl rel diff {rel:.1g}"
                print(
                    f"{mode:<6}{n:>8}  {name:<20}{n / t.best:>8.1f}{t.best:>9.2f}{t.median:>10.2f}"
                    f"{t.cpu_best:>8.1f}"
                    f"{base.best / t.best:>10.2f}x  {check}",
                    flush=True,
                )
    print(f"after: {load()}")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


def rss(args) -> None:
    from paraamr.models.tiny import make_tiny

    work = Path(tempfile.mkdtemp(prefix="bench-rss-"))
    tiny = Path(args.models) if args.models else work / "tiny"
    if not (tiny / "parser").is_dir():
        make_tiny(tiny)
    src = work / "lines.txt"
    rng = random.Random(0)
    with open(src, "w") as f:
        for i in range(args.rss_lines):
            if i % 1000 == 0:
                f.write(f"the dog saw {i} cats.\n")
            else:
                f.write(f"line {i:09d} " + "".join(rng.choice("abcdefgh ") for _ in range(40)) + "\n")
    cmd = [
        "torchrun",
        "--nproc_per_node",
        "2",
        str(ROOT / "generate.py"),
        "--input",
        str(src),
        "--output",
        str(work / "out"),
        "--parser-model",
        str(tiny / "parser"),
        "--realizer-model",
        str(tiny / "realizer"),
        "--lm-model",
        str(tiny / "lm"),
        "--max-perplexity",
        "none",
        "--max-chars",
        "30",
        "--no-progress",
        "--window",
        "256",
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB -> MiB (Linux)
    print(proc.stderr[-2500:])
    print(
        f"{args.rss_lines} lines, 2 processes: peak RSS of the largest process {peak:.0f} MiB "
        f"(goal < 2048 MiB), {seconds:.0f} s, exit {proc.returncode}; output in {work}"
    )


def main() -> None:
    if sys.argv[1:2] == ["--baseline"]:
        pin_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        baseline(*sys.argv[2:6])
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="48,600", help="sources per run (default 48,600)")
    parser.add_argument("--modes", default="amr,text", help="inputs: amr, text (default both)")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (default 1)")
    parser.add_argument(
        "--sides",
        default="amrlib lists,ours,ours --no-pipeline,ours 2 processes",
        help="comma-separated sides to run (default: all four; 'amrlib lists', the reference, always runs)",
    )
    parser.add_argument("--threads", type=int, help="threads of a 1-process side (default: all cores)")
    parser.add_argument("--parse-len", type=int, default=32, help="parser output tokens (default 32)")
    parser.add_argument("--gen-len", type=int, default=16, help="realizer output tokens (default 16)")
    parser.add_argument("--workdir", help="keep models and outputs here (reused when present)")
    parser.add_argument("--models", help="a make-tiny folder to reuse (--rss-lines)")
    parser.add_argument("--rss-lines", type=int, help="measure peak RSS per process on this many lines")
    args = parser.parse_args()
    rss(args) if args.rss_lines else bench(args)


if __name__ == "__main__":
    sys.exit(main())
