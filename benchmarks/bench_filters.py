"""``paraamr.filter_records`` against what a ``datasets`` user writes with its defaults.

Synthetic records (``--records`` sources, 0-12 paraphrases each, perplexities uniform in
[20, 300]), as an Arrow-cached ``Dataset`` of each config (what ``load_dataset`` gives). The work:
the paper's threshold 110 and at least one paraphrase per source.

- **paraamr**: ``filter_records(ds, max_perplexity=110, min_paraphrases=1)``.
- **datasets** (baseline, the card's old recipe, per row in Python): ``pairs.filter(lambda r:
  r["perplexity"] is not None and r["perplexity"] <= 110)`` (min_paraphrases=1 holds by itself in
  ``pairs``); ``default.map(keep the paraphrases <= 110).filter(lambda r: len(r["paraphrases"]) >= 1)``.

Caching is off (``datasets.disable_caching()``): each round computes. The outputs are compared
(every row equal); times are best and median of ``--rounds`` rounds, the two sides in turn.
Run: ``python benchmarks/bench_filters.py [--records 100000] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import random
import tempfile

from _timing import interleave, load, machine, pin_threads


def records(n: int, seed: int = 0):
    rng = random.Random(seed)
    for i in range(n):
        paras = [
            {"para_text": f"paraphrase {i} {j}", "perplexity": rng.uniform(20, 300), "focus": "know-01"}
            for j in range(rng.randint(0, 12))
        ]
        yield {"id": f"{i:016x}", "text": f"source sentence {i}", "paraphrases": paras}


def _keep(row):
    return {
        "paraphrases": [
            p for p in row["paraphrases"] if p["perplexity"] is not None and p["perplexity"] <= 110
        ]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(machine(pin_threads(1)))

    import datasets

    import paraamr
    from paraamr.records import to_pairs

    datasets.disable_progress_bars()
    datasets.disable_caching()  # every round computes (no side reads an earlier round's cache file)
    cache = tempfile.mkdtemp(prefix="bench-filters-")
    default = datasets.Dataset.from_generator(records, gen_kwargs={"n": args.records}, cache_dir=cache)
    pairs = datasets.Dataset.from_generator(
        lambda n: (pair for record in records(n) for pair in to_pairs({**record, "amr": None})),
        gen_kwargs={"n": args.records},
        cache_dir=cache,
    )
    print(f"{default.num_rows:,} sources, {pairs.num_rows:,} pairs (Arrow cache files)")
    for name, ds, ours, theirs in (
        (
            "pairs",
            pairs,
            lambda: paraamr.filter_records(pairs, max_perplexity=110, min_paraphrases=1),
            lambda: pairs.filter(lambda r: r["perplexity"] is not None and r["perplexity"] <= 110),
        ),
        (
            "default",
            default,
            lambda: paraamr.filter_records(default, max_perplexity=110, min_paraphrases=1),
            lambda: default.map(_keep).filter(lambda r: len(r["paraphrases"]) >= 1),
        ),
    ):
        times, outputs = interleave({"paraamr": ours, "datasets": theirs}, rounds=args.rounds)
        same = outputs["paraamr"].to_list() == outputs["datasets"].to_list()
        print(f"{name}: {ds.num_rows:,} rows -> {outputs['paraamr'].num_rows:,}; outputs equal: {same}")
        for side in ("paraamr", "datasets"):
            print(f"  {side:8} {times[side].row()}")
        print(f"  ratio datasets / paraamr: {times['datasets'].ratio(times['paraamr'])}")
    print("after:", load())


if __name__ == "__main__":
    main()
