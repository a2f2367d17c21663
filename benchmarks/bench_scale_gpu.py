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

    python benchmarks/bench_scale_gpu.py [--sources 15543606] [--foci 6]
"""

from __future__ import annotations

import argparse
import json
import math
import time

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
        "realize": T5ForConditionalGeneration(T5Config(**LARGE["generator"], decoder_start_token_id=0)),
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


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src-len", type=int, default=24, help="sentence tokens (default 24)")
    ap.add_argument("--parse-len", type=int, default=160, help="linearized AMR tokens (bench_gpu's 160)")
    ap.add_argument("--gen-len", type=int, default=40, help="realized sentence tokens (bench_gpu's 40)")
    ap.add_argument("--foci", type=int, default=6, help="candidates per source (bench_gpu's 6)")
    ap.add_argument("--sources", type=int, default=15_543_606, help="sources (ParaAMR's README: 15,543,606)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(
        f"# {torch.cuda.get_device_name() if device == 'cuda' else 'cpu'}, torch {torch.__version__}",
        flush=True,
    )
    rows = {}
    for name in ("bfloat16", "float32"):
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
    print(json.dumps({"args": vars(args), "items_per_s": rows}))


if __name__ == "__main__":
    main()
