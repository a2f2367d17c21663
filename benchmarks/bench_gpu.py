"""Model-stage throughput on the real architectures with random weights: ours against amrlib's defaults.

    python benchmarks/bench_gpu.py                # on a GPU: BART-large, T5-base, GPT-2 124M
    python benchmarks/bench_gpu.py --small        # on a CPU: the same code on small configs

Stages (per source: 1 parse, ``--foci`` realizations, ``--foci`` perplexities), on the same model
dirs, with generation lengths fixed (``min_length = max_length``) so random weights cost what
trained ones do: ``--parse-len`` tokens of linearized AMR, ``--gen-len`` tokens of sentence.

- amrlib defaults (baseline): ``amrlib.load_stog_model`` with batch 12 / 4 beams, ``load_gtos_model``
  with batch 32 in input order, float32; GPT-2 perplexity in batches of 32 in input order, float32.
- ours: :class:`Parser` / :class:`Realizer` / :class:`PerplexityScorer` (the generator's stages):
  length-bucketed batches (``--batch``), bfloat16 on a GPU, the same 4 parser beams.

Prints sources/s of both, per stage and end to end, and the ratio (goal on one H200: >= 10x).
Self-contained: builds the model dirs from ``registry.make_tiny`` tokenizers and random weights.
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
    "generator": {
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
SMALL = {
    "parser": {
        **LARGE["parser"],
        "d_model": 128,
        "encoder_layers": 2,
        "decoder_layers": 2,
        "encoder_attention_heads": 4,
        "decoder_attention_heads": 4,
        "encoder_ffn_dim": 256,
        "decoder_ffn_dim": 256,
        "vocab_size": 8000,
    },
    "generator": {
        **LARGE["generator"],
        "d_model": 128,
        "d_kv": 32,
        "d_ff": 256,
        "num_layers": 2,
        "num_decoder_layers": 2,
        "num_heads": 4,
        "vocab_size": 8000,
    },
    "lm": {**LARGE["lm"], "n_embd": 128, "n_layer": 2, "n_head": 4, "vocab_size": 8000},
}


def build_models(root: Path, dims: dict, parse_len: int, gen_len: int, device: str) -> dict[str, Path]:
    """Model dirs in the real formats: make_tiny's tokenizers and amrlib metadata, random weights of
    the ``dims`` configs, generation forced to exactly ``parse_len`` / ``gen_len`` tokens."""
    import torch
    from transformers import (
        AutoConfig,
        BartForConditionalGeneration,
        GPT2LMHeadModel,
        T5ForConditionalGeneration,
    )

    from paraamr.models.registry import make_tiny

    tiny = make_tiny(root / "tiny")
    classes = {
        "parser": BartForConditionalGeneration,
        "generator": T5ForConditionalGeneration,
        "lm": GPT2LMHeadModel,
    }
    task_key = {"parser": "parse_amr", "generator": "translation_amr_to_text"}
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
        elif kind == "generator":
            config.task_specific_params[task_key[kind]].update(max_in_len=512, max_out_len=gen_len)
        torch.manual_seed(0)
        with torch.device(device):
            model = cls(config)
        if kind != "lm":
            model.generation_config.min_length = parse_len if kind == "parser" else gen_len
            model.generation_config.max_length = parse_len if kind == "parser" else gen_len
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


def baseline_perplexity(model_dir: Path, texts: list[str], device: str, batch_size: int = 32) -> list[float]:
    """GPT-2 perplexity the plain way: batches of 32 in input order, float32."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    tok.pad_token = tok.pad_token or tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(model_dir).to(device).eval()
    out = []
    with torch.inference_mode():
        for i in range(0, len(texts), batch_size):
            enc = tok(texts[i : i + batch_size], return_tensors="pt", padding=True).to(device)
            logits = model(**enc).logits[:, :-1]
            labels = enc.input_ids[:, 1:]
            mask = enc.attention_mask[:, 1:].float()
            nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels, reduction="none")
            out += torch.exp((nll * mask).sum(1) / mask.sum(1).clamp(min=1)).tolist()
    return out


def _timed(fn, *args):
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    result = fn(*args)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result, time.perf_counter() - t0


def run_baseline(dirs: dict, sents, graphs, texts, device: str) -> dict[str, float]:
    import amrlib

    from paraamr.models.registry import base_tokenizer

    stog = amrlib.load_stog_model(
        str(dirs["parser"]),
        device=device,
        batch_size=12,
        num_beams=4,
        tok_name_or_path=str(base_tokenizer(dirs["parser"])),
    )
    gtos = amrlib.load_gtos_model(
        str(dirs["generator"]),
        device=device,
        batch_size=32,
        tok_name_or_path=str(base_tokenizer(dirs["generator"])),
    )
    stog.parse_sents(sents[:2])  # warm-up
    gtos.generate(graphs[:2])
    seconds = {}
    _, seconds["parse"] = _timed(stog.parse_sents, sents)
    _, seconds["realize"] = _timed(gtos.generate, graphs)
    _, seconds["perplexity"] = _timed(baseline_perplexity, dirs["lm"], texts, device)
    return seconds


def run_ours(
    dirs: dict, sents, graphs, texts, device: str, batch: int, dtype: str | None
) -> dict[str, float]:
    from paraamr.models.lm import PerplexityScorer
    from paraamr.models.parser import Parser
    from paraamr.models.realizer import Realizer

    parser = Parser(dirs["parser"], device=device, dtype=dtype, batch_size=batch, num_beams=4)
    realizer = Realizer(dirs["generator"], device=device, dtype=dtype, batch_size=batch * 2, use_tense=False)
    lm = PerplexityScorer(dirs["lm"], device=device, dtype=dtype, batch_size=batch * 2)
    parser.parse(sents[:2])
    realizer.realize(graphs[:2])
    lm.perplexity(texts[:2])
    seconds = {}
    _, seconds["parse"] = _timed(parser.parse, sents)
    _, seconds["realize"] = _timed(realizer.realize, graphs)
    _, seconds["perplexity"] = _timed(lm.perplexity, texts)
    return seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", action="store_true", help="small configs (CPU check of the same code)")
    ap.add_argument("--sources", type=int, help="sources (default: 384 on GPU, 12 with --small)")
    ap.add_argument("--foci", type=int, default=6, help="candidates per source")
    ap.add_argument("--parse-len", type=int, help="parser output tokens (default 160; --small 48)")
    ap.add_argument("--gen-len", type=int, help="generator output tokens (default 40; --small 24)")
    ap.add_argument("--batch", type=int, help="our parser batch (default 96 on GPU, 16 on CPU)")
    ap.add_argument("--device", help="default: cuda when available, else cpu")
    ap.add_argument("--dtype", help="our dtype (default: bfloat16 on GPU, float32 on CPU)")
    ap.add_argument("--workdir", help="where to write the model dirs (default: a temporary folder)")
    args = ap.parse_args()

    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    gpu = device.startswith("cuda")
    n = args.sources or (12 if args.small else 384)
    parse_len = args.parse_len or (48 if args.small else 160)
    gen_len = args.gen_len or (24 if args.small else 40)
    batch = args.batch or (96 if gpu else 16)
    dtype = args.dtype or ("bfloat16" if gpu else "float32")
    root = Path(args.workdir or tempfile.mkdtemp(prefix="bench-gpu-"))
    t0 = time.perf_counter()
    dirs = build_models(root, SMALL if args.small else LARGE, parse_len, gen_len, device)
    print(
        f"device {device} ({torch.cuda.get_device_name() if gpu else 'cpu'}), "
        f"{'small' if args.small else 'real'} configs, {n} sources x {args.foci} candidates, "
        f"parse {parse_len} / generate {gen_len} tokens; models built in {time.perf_counter() - t0:.0f} s"
    )
    sents, graphs, texts = workload(n, args.foci)
    base = run_baseline(dirs, sents, graphs, texts, device)
    ours = run_ours(dirs, sents, graphs, texts, device, batch, dtype)
    print(f"{'stage':<12}{'amrlib defaults':>18}{'ours (' + dtype + ')':>22}{'ratio':>8}")
    for stage in ("parse", "realize", "perplexity"):
        print(
            f"{stage:<12}{n / base[stage]:>14.2f} src/s{n / ours[stage]:>16.2f} src/s"
            f"{base[stage] / ours[stage]:>7.2f}x"
        )
    tb, to = sum(base.values()), sum(ours.values())
    print(f"{'end to end':<12}{n / tb:>14.2f} src/s{n / to:>16.2f} src/s{tb / to:>7.2f}x")
    if not args.workdir:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
