"""Model-stage throughput on the real architectures with random weights: ours vs amrlib.

    python benchmarks/bench_gpu.py           # one GPU: BART-large, T5-base, GPT-2 124M (< 8 min, H200)
    python benchmarks/bench_gpu.py --small   # CPU: the same code on small configs (about 2 min)

One prepared script, one table. Stages per source: 1 parse (4 beams), ``--foci`` realizations,
``--foci`` perplexities, on the same model dirs (built here: make_tiny's tokenizers and amrlib
metadata, random weights of the real configs), with generation lengths forced
(``min_length = max_length``) so random weights cost what trained ones do: ``--parse-len`` tokens
of linearized AMR, ``--gen-len`` tokens of sentence. Sides, every one on the same items:

- ``amrlib defaults``: ``amrlib.load_stog_model`` (batch 12, 4 beams) / ``load_gtos_model`` (batch
  32) list APIs called once on the whole list, float32; perplexity by evaluate's recipe (batch 16,
  float32; ``bench_lm.evaluate_recipe``);
- ``amrlib <dtype> ours-bs``: the same calls with our batch sizes and the model cast to ``<dtype>``;
- ``ours <dtype>``: :class:`Parser` / :class:`Realizer` / :class:`PerplexityScorer`, the generator's
  stages (length-bucketed batches).

Each dtype of ``--dtypes`` (default bfloat16,float32 on a GPU; float32,bfloat16 with --small).
Timing (``benchmarks/_timing.py``): warm-up on other items, the sides interleaved per stage (order
rotated each round), best and median of ``--rounds``, CPU time, ``cuda.synchronize`` before every
clock read, load average before and after. Outputs are compared with amrlib defaults' in the same
run: parses and realizations identical (count), perplexities' largest relative difference.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _timing import done, interleave, machine, pin_threads

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

LARGE = {
    "parser": {
        "d_model": 1024,
        "encoder_layers": 12,
        "decoder_layers": 12,
        "encoder_attention_heads": 16,
        "decoder_attention_heads": 16,
        "encoder_ffn_dim": 4096,
        "decoder_ffn_dim": 4096,
        "vocab_size": 53228,
    },  # bart-large + amrlib's AMR tokens
    "realizer": {
        "d_model": 768,
        "d_kv": 64,
        "d_ff": 3072,
        "num_layers": 12,
        "num_decoder_layers": 12,
        "num_heads": 12,
        "vocab_size": 32128,
    },  # t5-base
    "lm": {"n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024},  # gpt2
}


def _shape(dims: dict) -> dict:
    """``dims`` without the vocabulary size: small configs keep make_tiny's tokenizer vocabulary, so
    every generated token decodes to text (a random id past the tokenizer's decodes to nothing)."""
    return {k: v for k, v in dims.items() if k != "vocab_size"}


SMALL = {
    "parser": {
        **_shape(LARGE["parser"]),
        "d_model": 128,
        "encoder_layers": 2,
        "decoder_layers": 2,
        "encoder_attention_heads": 4,
        "decoder_attention_heads": 4,
        "encoder_ffn_dim": 256,
        "decoder_ffn_dim": 256,
    },
    "realizer": {
        **_shape(LARGE["realizer"]),
        "d_model": 128,
        "d_kv": 32,
        "d_ff": 256,
        "num_layers": 2,
        "num_decoder_layers": 2,
        "num_heads": 4,
    },
    "lm": {**_shape(LARGE["lm"]), "n_embd": 128, "n_layer": 2, "n_head": 4},
}


def build_models(root: Path, dims: dict, parse_len: int, gen_len: int, device: str) -> dict[str, Path]:
    """Model dirs in the real formats: make_tiny's tokenizers and amrlib metadata, random weights of
    the ``dims`` configs, generation forced to exactly ``parse_len`` / ``gen_len`` tokens."""
    import torch
    from transformers import (
        AutoConfig,
        AutoTokenizer,
        BartForConditionalGeneration,
        GPT2LMHeadModel,
        T5ForConditionalGeneration,
    )

    from paraamr.models.tiny import make_tiny

    tiny = make_tiny(root / "tiny")
    classes = {
        "parser": BartForConditionalGeneration,
        "realizer": T5ForConditionalGeneration,
        "lm": GPT2LMHeadModel,
    }
    task_key = {"parser": "parse_amr", "realizer": "translation_amr_to_text"}
    out = {}
    for kind, cls in classes.items():
        src, dst = tiny[kind], root / kind
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
        config = AutoConfig.from_pretrained(src)
        for key, value in dims[kind].items():
            setattr(config, key, value)
        if kind == "parser":
            config.max_position_embeddings = max(1024, parse_len + 8)
            config.task_specific_params[task_key[kind]].update(max_in_len=100, max_out_len=parse_len)
        elif kind == "realizer":
            config.task_specific_params[task_key[kind]].update(max_in_len=512, max_out_len=gen_len)
        if kind == "realizer":  # T5 at its default init writes the same token whatever the input
            config.initializer_factor = 20.0
        torch.manual_seed(0)
        with torch.device(device):
            model = cls(config)
        if kind != "lm":
            model.generation_config.min_length = parse_len if kind == "parser" else gen_len
            model.generation_config.max_length = parse_len if kind == "parser" else gen_len
            tokenizer = AutoTokenizer.from_pretrained(src)  # no padding / unknown tokens as output
            model.generation_config.suppress_tokens = [tokenizer.pad_token_id, tokenizer.unk_token_id]
        model.save_pretrained(dst)
        meta = dst / "amrlib_meta.json"
        if meta.is_file():
            m = json.loads(meta.read_text())
            m["model_fn"] = "model.safetensors"
            meta.write_text(json.dumps(m))
        out[kind] = dst
        del model
    return out


def workload(n: int, foci: int, seed: int = 0) -> tuple[list[str], list[str], list[str]]:
    """``n`` sentences of 8-40 words, ``n * foci`` one-line graphs of 3-14 concepts, ``n * foci`` texts."""
    from paraamr.models.tiny import _AMR_TOKENS, _WORDS

    rng = random.Random(seed)
    words = _WORDS.split()
    concepts = [t for t in _AMR_TOKENS.split() if t[0].isalpha()]
    sents = [" ".join(rng.choice(words) for _ in range(rng.randint(8, 40))) + " ." for _ in range(n)]

    def graph(k: int) -> str:
        parts = [f"(v0 / {rng.choice(concepts)}"]
        parts += [f":ARG{i % 3} (v{i} / {rng.choice(concepts)})" for i in range(1, k)]
        return " ".join(parts) + ")"

    graphs = [graph(rng.randint(3, 14)) for _ in range(n * foci)]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(6, 35))) + " ." for _ in range(n * foci)]
    return sents, graphs, texts


STAGES = ("parse", "realize", "perplexity")


def _recipe(model_dir: Path, device: str, dtype: str, batch_size: int):
    """evaluate's perplexity recipe on the LM in ``dtype`` (a callable over texts)."""
    import torch
    from bench_lm import evaluate_recipe
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).to(device, getattr(torch, dtype)).eval()
    return lambda texts: evaluate_recipe(model, tokenizer, texts, batch_size=batch_size, device=device)[0]


def amrlib_side(dirs: dict, device: str, dtype: str, batches: dict | None) -> dict:
    """amrlib's list APIs, at its default batch sizes (``batches`` None) or ours, in ``dtype``."""
    import amrlib
    import torch

    from paraamr.models.resolve import base_tokenizer

    sizes = batches or {"parser": 12, "realizer": 32, "lm": 16}
    stog = amrlib.load_stog_model(
        str(dirs["parser"]),
        device=device,
        batch_size=sizes["parser"],
        num_beams=4,
        tok_name_or_path=str(base_tokenizer(dirs["parser"])),
    )
    gtos = amrlib.load_gtos_model(
        str(dirs["realizer"]),
        device=device,
        batch_size=sizes["realizer"],
        tok_name_or_path=str(base_tokenizer(dirs["realizer"])),
    )
    if dtype != "float32":
        stog.model.to(getattr(torch, dtype))
        gtos.model.to(getattr(torch, dtype))
    return {
        "parse": stog.parse_sents,
        "realize": lambda graphs: gtos.generate(graphs)[0],
        "perplexity": _recipe(dirs["lm"], device, dtype, sizes["lm"]),
    }


def our_side(dirs: dict, device: str, dtype: str, batches: dict) -> dict:
    """The generator's stage objects."""
    from paraamr.models.lm import PerplexityScorer
    from paraamr.models.parser import Parser
    from paraamr.models.realizer import Realizer

    parser = Parser(dirs["parser"], device=device, dtype=dtype, batch_size=batches["parser"], num_beams=4)
    realizer = Realizer(
        dirs["realizer"], device=device, dtype=dtype, batch_size=batches["realizer"], use_tense=False
    )
    lm = PerplexityScorer(dirs["lm"], device=device, dtype=dtype, batch_size=batches["lm"])
    return {"parse": parser.parse, "realize": realizer.realize, "perplexity": lm.perplexity}


def _same(a: list, b: list) -> str:
    """How many outputs agree: the same text (stripped; failures and None count as equal)."""

    def norm(x):
        return x.strip() if isinstance(x, str) else None

    return f"{sum(norm(x) == norm(y) for x, y in zip(a, b, strict=True))}/{len(a)}"


def _relative(a: list, b: list) -> str:
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if isinstance(x, float) and isinstance(y, float)]
    return f"max rel diff {max(abs(x - y) / y for x, y in pairs):.2g}" if pairs else "no values"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", action="store_true", help="small configs (CPU check of the same code)")
    ap.add_argument("--sources", type=int, help="sources (default: 128 on GPU, 12 with --small)")
    ap.add_argument("--foci", type=int, default=6, help="candidates per source (default 6)")
    ap.add_argument("--parse-len", type=int, help="parser output tokens (default 160; --small 48)")
    ap.add_argument("--gen-len", type=int, help="generator output tokens (default 40; --small 24)")
    ap.add_argument(
        "--batch", type=int, help="our parser batch; realizer and LM use twice it (default 96; CPU 16)"
    )
    ap.add_argument(
        "--dtypes", help="dtypes of ours (default: bfloat16,float32 on GPU; float32,bfloat16 on CPU)"
    )
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds per stage (default 2)")
    ap.add_argument("--threads", type=int, help="CPU threads (default: 1 with --small, else 4)")
    ap.add_argument("--device", help="default: cuda when available, else cpu")
    ap.add_argument("--workdir", help="where to write the model dirs (default: a temporary folder)")
    args = ap.parse_args()
    threads = pin_threads(args.threads or (1 if args.small else 4))
    print(machine(threads))

    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    gpu = device.startswith("cuda")
    n = args.sources or (12 if args.small else 128)
    parse_len = args.parse_len or (48 if args.small else 160)
    gen_len = args.gen_len or (24 if args.small else 40)
    batch = args.batch or (96 if gpu else 16)
    batches = {"parser": batch, "realizer": 2 * batch, "lm": 2 * batch}
    dtypes = (args.dtypes or ("bfloat16,float32" if gpu else "float32,bfloat16")).split(",")
    root = Path(args.workdir or tempfile.mkdtemp(prefix="bench-gpu-"))
    t0 = time.perf_counter()
    dirs = build_models(root, SMALL if args.small else LARGE, parse_len, gen_len, device)
    sents, graphs, texts = workload(n, args.foci)
    warm_sents, warm_graphs, warm_texts = workload(2, 2, seed=1)
    items = {"parse": sents, "realize": graphs, "perplexity": texts}
    warm = {"parse": warm_sents, "realize": warm_graphs, "perplexity": warm_texts}
    sides = {"amrlib defaults": amrlib_side(dirs, device, "float32", None)}
    for dtype in dtypes:
        sides[f"amrlib {dtype} ours-bs"] = amrlib_side(dirs, device, dtype, batches)
        sides[f"ours {dtype}"] = our_side(dirs, device, dtype, batches)
    print(
        f"device {device} ({torch.cuda.get_device_name() if gpu else 'cpu'}), "
        f"{'small' if args.small else 'real'} configs, {n} sources x {args.foci} candidates, "
        f"parse {parse_len} / generate {gen_len} tokens; our batches {batches}; "
        f"models built and loaded in {time.perf_counter() - t0:.0f} s; {args.rounds} rounds"
    )
    sync = torch.cuda.synchronize if gpu else None
    timings, outputs = {}, {}
    for stage in STAGES:
        timings[stage], outputs[stage] = interleave(
            {name: (lambda f=side[stage], x=items[stage]: f(x)) for name, side in sides.items()},
            rounds=args.rounds,
            warmup={name: (lambda f=side[stage], x=warm[stage]: f(x)) for name, side in sides.items()},
            sync=sync,
        )
    base = "amrlib defaults"
    print(
        f"{'stage':<11}{'side':<26}{'items/s':>9}{'best s':>9}{'median s':>10}{'CPU s':>8}{'ratio':>8}"
        "  outputs vs amrlib defaults"
    )
    for stage in STAGES:
        ref = outputs[stage][base]
        for name in sides:
            t = timings[stage][name]
            check = (
                _relative(outputs[stage][name], ref)
                if stage == "perplexity"
                else _same(outputs[stage][name], ref)
            )
            print(
                f"{stage:<11}{name:<26}{len(items[stage]) / t.best:>9.1f}{t.best:>9.2f}{t.median:>10.2f}"
                f"{t.cpu_best:>8.1f}{timings[stage][base].best / t.best:>7.2f}x  {check}"
            )
    total = {name: sum(timings[stage][name].best for stage in STAGES) for name in sides}
    for name in sides:
        print(
            f"{'end to end':<11}{name:<26}{n / total[name]:>9.2f}{total[name]:>9.2f}{'':>18}"
            f"{total[base] / total[name]:>7.2f}x  (sources/s)"
        )
    return done(args.workdir, root)


if __name__ == "__main__":
    sys.exit(main())
