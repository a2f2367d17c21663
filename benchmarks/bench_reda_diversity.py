"""What REDA+NG's n-gram LM does to the diversity of its outputs, by what it was trained on.

``paraamr augment --method reda-ng`` trains its LM on the texts it augments when no corpus is given
or installed (in-sample); the paper trained it on an independent corpus. An LM that has seen the
very text being edited gives the highest scores to the edits that keep most of its n-grams, so it
picks the smallest changes. This script measures it: 1,000 of the bundled English sentences
(``paraamr.quality.data``, shuffled with seed 0) are augmented with ``n`` outputs each, by REDA
and by REDA+NG with an LM trained on (a) the 1,000 texts themselves (the command's in-sample
default), (b) the 5,245 other bundled sentences (independent), (c) both. Each output is compared
with its source: 1-BLEU and 1-∩/∪ (``paraamr.metrics.lexical``, ×100) and the token edit
distance (``nltk.edit_distance`` over whitespace tokens); higher is more diverse. Runs offline in
about a minute: ``python benchmarks/bench_reda_diversity.py [--n 4] [--recipe paper]``.
"""

from __future__ import annotations

import argparse
import random
import time

from nltk import edit_distance

from paraamr.augment.ngram import NgramLM
from paraamr.augment.reda import PAPER_DRAWS, REDA, paper_recipe
from paraamr.metrics.lexical import bleu_diversity, jaccard_diversity
from paraamr.quality.data import TRAINING_FILES


def sentences() -> list[str]:
    lines = [line for path in TRAINING_FILES for line in path.read_text(encoding="utf-8").splitlines()]
    texts = list(dict.fromkeys(line for line in lines if line.strip() and not line.startswith("#")))
    random.Random(0).shuffle(texts)
    return texts


def measure(reda: REDA, texts: list[str], n: int, lm: NgramLM | None, quota) -> dict[str, float]:
    sources, outputs = [], []
    for text in texts:
        for out in reda.augment(text, n, lm=lm, quota=quota):
            sources.append(text)
            outputs.append(out)
    bleu, _ = bleu_diversity(outputs, sources)
    jaccard, _ = jaccard_diversity(outputs, sources)
    edits = [edit_distance(o.split(), s.split()) for o, s in zip(outputs, sources, strict=True)]
    return {
        "outputs": len(outputs) / len(texts),
        "1-BLEU": sum(bleu) / len(bleu),
        "1-∩/∪": sum(jaccard) / len(jaccard),
        "token edits": sum(edits) / len(edits),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4, help="outputs per text (default: 4)")
    parser.add_argument("--recipe", choices=["paper"], default=None, help="the paper's outputs per operator")
    parser.add_argument("--test", type=int, default=1000, help="texts augmented (default: 1000)")
    args = parser.parse_args()
    texts = sentences()
    test, corpus = texts[: args.test], texts[args.test :]
    quota = paper_recipe(len(test)) if args.recipe else None
    n = sum(quota.values()) if quota else args.n
    reda = REDA(seed=0, draws=PAPER_DRAWS if quota else 20)
    lms = {
        "REDA (no LM)": None,
        "REDA+NG, LM in-sample (the augmented texts)": NgramLM.train(test),
        f"REDA+NG, LM independent ({len(corpus):,} other sentences)": NgramLM.train(corpus),
        "REDA+NG, LM independent + the augmented texts": NgramLM.train([*corpus, *test]),
    }
    print(f"{len(test):,} texts, {'recipe paper' if quota else f'n={n}'}; means over outputs")
    print(f"| {'setting':50} | outputs/text | 1-BLEU | 1-∩/∪ | token edits |")
    for name, lm in lms.items():
        start = time.perf_counter()
        row = measure(reda, test, n, lm, quota)
        print(
            f"| {name:50} | {row['outputs']:12.2f} | {row['1-BLEU']:6.2f} | {row['1-∩/∪']:5.2f} "
            f"| {row['token edits']:11.2f} |  ({time.perf_counter() - start:.0f} s)"
        )


if __name__ == "__main__":
    main()
