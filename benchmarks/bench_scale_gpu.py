"""Items per second of the generator's three model stages at their real sizes on one GPU, for the
GPU-hour figures of docs/scale.md. torch and transformers only (no amrlib: it runs on a bare GPU
machine), random weights of the real configs (``bench_gpu.LARGE``: BART-large with amrlib's AMR
tokens, T5-base, GPT-2 124M), lengths forced as ``bench_gpu.py`` forces them (``min = max`` new
tokens), so random weights cost what trained ones do:

- parse: BART-large, a ``--src-len``-token sentence -> ``--parse-len`` tokens of linearized AMR;
  at amrlib's published setting (batch 32, 1 beam: its 17 sentences/s on an RTX 3090) and at the
  generator's (batch 16, 4 beams);
- realize: T5-base, ``--parse-len`` tokens of AMR -> ``--gen-len`` tokens, batch 32, greedy;
- perplexity: GPT-2, ``--gen-len`` + 1 tokens, batch 64, one forward pass with labels.

Best of ``--rounds`` after a warm-up, ``cuda.synchronize`` around each clock read; bfloat16 and
float32. Then seconds per source with ``--foci`` candidates, and GPU-hours for ``--sources``.

When ``ctranslate2`` is importable with CUDA, the same models are converted as the generator
converts them (``paraamr.models.fast``: float32 copy, token ids as vocabulary) and measured with
CTranslate2 in each of ``--ct2-types`` (default float16, bfloat16, int8_float16), at the same
batches and at the larger ``--big-batches`` (a GPU's memory holds far more than 16 sentences x 4
beams), output lengths forced the same way (``min_decoding_length = max_decoding_length``).

Then the batches the stages choose on a GPU (``paraamr.models.base.device_batches``: sizes from
the free memory and the inputs' lengths, longest first, at most ``--max-batch-size``), on
``--auto-items`` inputs of varied lengths per stage (a quarter of them for the parse; parse: 8-40
tokens, realize: 80-240, perplexity: 20-60), in the first of ``--ct2-types``: items/s beside the
same inputs in the CPU default batches (16, 32, 64, also length-sorted), the batch sizes chosen,
and the device memory held after the run against the free memory it sized for (``--only-auto``:
this part alone).

    python benchmarks/bench_scale_gpu.py [--sources 15543606] [--foci 6] [--no-ct2] [--only-auto]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

from bench_gpu import LARGE


def _best(fn, rounds: int) -> float:
    import torch

    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    fn()  # warm-up
    best = math.inf
    for _ in range(rounds):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def _models(dtype, device: str):
    import torch
    from transformers import (
        BartConfig,
        BartForConditionalGeneration,
        GPT2Config,
        GPT2LMHeadModel,
        T5Config,
        T5ForConditionalGeneration,
    )

    torch.manual_seed(0)
    built = {
        "parse": BartForConditionalGeneration(BartConfig(**LARGE["parser"])),
        "realize": T5ForConditionalGeneration(T5Config(**LARGE["realizer"], decoder_start_token_id=0)),
        "perplexity": GPT2LMHeadModel(GPT2Config(**LARGE["lm"])),
    }
    return {k: m.to(device, dtype).eval() for k, m in built.items()}


def _generate(model, batch: int, src: int, out: int, beams: int, rounds: int) -> float:
    import torch

    ids = torch.randint(10, model.config.vocab_size - 1, (batch, src), device=model.device)
    kwargs = {"num_beams": beams, "do_sample": False, "min_new_tokens": out, "max_new_tokens": out}
    with torch.inference_mode():
        return batch / _best(
            lambda: model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **kwargs), rounds
        )


def _score(model, batch: int, length: int, rounds: int) -> float:
    import torch

    ids = torch.randint(10, model.config.vocab_size - 1, (batch, length), device=model.device)
    with torch.inference_mode():
        return batch / _best(lambda: model(input_ids=ids, labels=ids).loss.item(), rounds)


def _ct2_rates(
    models: dict, args, types: list[str], batches: list[int], device: str = "cuda"
) -> dict[str, dict[str, float]]:
    """items/s of CTranslate2 per compute type and batch, on the float32 ``models`` converted once."""
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from paraamr.models.fast import converted, load_generator, load_translator

    root = Path(tempfile.mkdtemp(prefix="bench-ct2-"))
    dirs = {}
    for stage, model in models.items():
        model.save_pretrained(root / stage)
        dirs[stage] = converted(root / stage)
    vocab = {stage: model.config.vocab_size for stage, model in models.items()}
    gen = torch.Generator().manual_seed(0)

    def tokens(stage: str, batch: int, length: int) -> list[list[str]]:
        ids = torch.randint(10, vocab[stage] - 1, (batch, length), generator=gen)
        return [[str(i) for i in row] for row in ids.tolist()]

    out: dict[str, dict[str, float]] = {}
    for kind in types:
        rates = out.setdefault(kind, {})
        translators = {s: load_translator(dirs[s], device, kind) for s in ("parse", "realize")}
        lm = load_generator(dirs["perplexity"], device, kind)
        for batch in batches:
            for stage, src, length, beams in (
                ("parse", args.src_len, args.parse_len, 4),
                ("realize", args.parse_len, args.gen_len, 1),
            ):
                source = tokens(stage, batch, src)
                run = lambda t=translators[stage], x=source, n=length, b=beams: t.translate_batch(  # noqa: E731
                    x, beam_size=b, min_decoding_length=n, max_decoding_length=n, max_input_length=0
                )
                rates[f"{stage} batch {batch}"] = batch / _best(run, args.rounds)
            texts = tokens("perplexity", 4 * batch, args.gen_len + 1)
            rates[f"perplexity batch {4 * batch}"] = (
                4 * batch / _best(lambda x=texts, g=lm: g.score_batch(x, max_input_length=0), args.rounds)
            )
    return out


def _auto_batches(models: dict, args, kind: str, device: str = "cuda") -> list[dict]:
    """The stages' own GPU batching (free memory, lengths, ``--max-batch-size``) against the CPU
    default batches, on the same inputs of varied lengths, with CTranslate2 in ``kind``."""
    import random

    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from paraamr.models.base import device_batches, element_bytes, footprint, free_bytes, length_batches
    from paraamr.models.fast import converted, load_generator, load_translator

    root = Path(tempfile.mkdtemp(prefix="bench-auto-"))
    rng = random.Random(0)
    rows = []
    # stage: (input lengths, forced output length, beams, the output limit the stage sizes for, CPU batch)
    plan = {
        "parse": ((8, 40), args.parse_len, 4, args.parse_max_out, 16),
        "realize": ((80, 240), args.gen_len, 1, args.gen_len, 32),
        "perplexity": ((20, 60), 0, 1, 0, 64),
    }
    for stage, ((low, high), out, beams, limit, cpu_batch) in plan.items():
        model = models[stage]
        model.save_pretrained(root / stage)
        path = converted(root / stage)
        engine = (load_translator if out else load_generator)(path, device, kind)
        vocab = model.config.vocab_size
        items = [
            [str(rng.randrange(10, vocab - 1)) for _ in range(rng.randint(low, high))]
            for _ in range(args.auto_items // (4 if stage == "parse" else 1))
        ]
        lengths = [len(x) for x in items]
        cost = footprint(
            model.config,
            element=element_bytes(kind, None),
            beams=beams,
            out_len=limit,
            max_len=high,
            logits=not out,
        )

        def run(batches, engine=engine, items=items, out=out, beams=beams) -> float:
            for batch in batches:
                chunk = [items[i] for i in batch]
                if out:
                    engine.translate_batch(
                        chunk,
                        beam_size=beams,
                        min_decoding_length=out,
                        max_decoding_length=out,
                        max_input_length=0,
                    )
                else:
                    engine.score_batch(chunk, max_input_length=0)
            return len(items)

        free = free_bytes(device)
        auto = device_batches(
            lengths, device=device, batch_size=cpu_batch, max_batch_size=args.max_batch_size, cost=cost
        )
        fixed = length_batches(lengths, batch_size=cpu_batch)
        rates = {
            name: len(items) / _best(lambda b=b: run(b), args.auto_rounds)
            for name, b in (("auto", auto), ("fixed", fixed))
        }
        torch.cuda.synchronize()
        used = free - (free_bytes(device) or 0)
        row = {
            "stage": stage,
            "compute_type": kind,
            "items": len(items),
            "auto_items_per_s": rates["auto"],
            "fixed_items_per_s": rates["fixed"],
            "fixed_batch": cpu_batch,
            "auto_batches": len(auto),
            "auto_batch_sizes": sorted({len(b) for b in auto}),
            "free_mib_before": free >> 20,
            "held_mib_after": used >> 20,
            "estimate_mib_largest_batch": max(len(b) * cost(lengths[b[0]]) for b in auto) >> 20,
        }
        sizes = row["auto_batch_sizes"]
        print(
            f"auto {kind:10} {stage:10} {rates['auto']:9.1f} items/s in {len(auto)} batches of "
            f"{sizes[0]}-{sizes[-1]} (fixed {cpu_batch}: {rates['fixed']:.1f}/s, "
            f"{rates['auto'] / rates['fixed']:.2f}x); free before {row['free_mib_before']} MiB, held after "
            f"{row['held_mib_after']} MiB, largest batch estimated {row['estimate_mib_largest_batch']} MiB",
            flush=True,
        )
        rows.append(row)
        del engine
    return rows


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src-len", type=int, default=24, help="sentence tokens (default 24)")
    ap.add_argument("--parse-len", type=int, default=160, help="linearized AMR tokens (bench_gpu's 160)")
    ap.add_argument("--gen-len", type=int, default=40, help="realized sentence tokens (bench_gpu's 40)")
    ap.add_argument("--foci", type=int, default=6, help="candidates per source (bench_gpu's 6)")
    ap.add_argument("--sources", type=int, default=15_543_606, help="sources (ParaAMR's README: 15,543,606)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-ct2", action="store_true", help="transformers only")
    ap.add_argument("--ct2-types", default="float16,bfloat16,int8_float16", help="CTranslate2 compute types")
    ap.add_argument(
        "--big-batches", default="16,64,256", help="CTranslate2 batches (parse; realize the same)"
    )
    ap.add_argument(
        "--auto-items",
        type=int,
        default=2048,
        help="inputs per stage for the GPU batching (parse: a quarter)",
    )
    ap.add_argument(
        "--auto-rounds", type=int, default=1, help="timed rounds of the GPU batching (after a warm-up)"
    )
    ap.add_argument("--only-auto", action="store_true", help="measure the GPU batching only")
    ap.add_argument("--max-batch-size", type=int, default=256, help="cap of the GPU batching (items)")
    ap.add_argument(
        "--parse-max-out", type=int, default=512, help="the parser's output limit the batching sizes for"
    )
    args = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(
        f"# {torch.cuda.get_device_name() if device == 'cuda' else 'cpu'}, torch {torch.__version__}",
        flush=True,
    )
    rows = {}
    for name in () if args.only_auto else ("bfloat16", "float32"):
        m = _models(getattr(torch, name), device)
        rate = {
            "parse (batch 32, 1 beam: amrlib's published setting)": _generate(
                m["parse"], 32, args.src_len, args.parse_len, 1, args.rounds
            ),
            "parse (batch 16, 4 beams: the generator's)": _generate(
                m["parse"], 16, args.src_len, args.parse_len, 4, args.rounds
            ),
            "realize (batch 32, greedy)": _generate(
                m["realize"], 32, args.parse_len, args.gen_len, 1, args.rounds
            ),
            "perplexity (batch 64)": _score(m["perplexity"], 64, args.gen_len + 1, args.rounds),
        }
        rows[name] = rate
        del m
        if device == "cuda":
            torch.cuda.empty_cache()
        for stage, r in rate.items():
            print(f"{name:9} {stage:55} {r:9.1f} items/s", flush=True)
        per_source = 1 / rate["parse (batch 16, 4 beams: the generator's)"] + args.foci * (
            1 / rate["realize (batch 32, greedy)"] + 1 / rate["perplexity (batch 64)"]
        )
        hours = per_source * args.sources / 3600
        print(
            f"{name:9} seconds per source ({args.foci} candidates): {per_source:.4f}; GPU-hours: {hours:,.0f}"
        )
    ct2, auto = {}, []
    try:
        import ctranslate2

        usable = ctranslate2.get_cuda_device_count() > 0 and device == "cuda"
    except ImportError:
        usable = False
    if args.no_ct2 or not usable:
        print(
            "# CTranslate2: not measured (" + ("--no-ct2" if args.no_ct2 else "not installed with CUDA") + ")"
        )
    else:
        models = {k: m.float() for k, m in _models(torch.float32, "cpu").items()}
        batches = [int(b) for b in args.big_batches.split(",")]
        ct2 = {} if args.only_auto else _ct2_rates(models, args, args.ct2_types.split(","), batches)
        for kind, rates in ct2.items():
            for stage, r in rates.items():
                print(f"ct2 {kind:13} {stage:30} {r:9.1f} items/s", flush=True)
            best = {
                s: max(r for k, r in rates.items() if k.startswith(s))
                for s in ("parse", "realize", "perplexity")
            }
            per_source = 1 / best["parse"] + args.foci * (1 / best["realize"] + 1 / best["perplexity"])
            hours = per_source * args.sources / 3600
            print(
                f"ct2 {kind:13} best batches: {per_source:.4f} s a source; GPU-hours: {hours:,.0f}",
                flush=True,
            )
        auto = _auto_batches(models, args, args.ct2_types.split(",")[0])
    print(json.dumps({"args": vars(args), "items_per_s": rows, "ctranslate2": ct2, "auto_batches": auto}))


if __name__ == "__main__":
    main()
