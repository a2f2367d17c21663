"""REDA against REDA+NG on the paper's restoration experiments (Wang 2022, Section 4.1, Table 2),
in English and in Chinese.

Each experiment edits a text so that one of REDA's outputs is the original again, draws the
operator's outputs (distinct, as REDA keeps them), and counts how often the pick is the original:
REDA picks one at random, REDA+NG the one its n-gram LM finds most probable.

- SR: a pseudo dictionary maps every word that has real synonyms (WordNet, Cilin) and ranks
  1,000-10,000 in the LM's unigram counts to itself and three random words of those ranks; k
  positions are replaced (20, 50, 100 draws for k = 1, 2, 3). REDA's own SR never puts a word back,
  so the pseudo entries hold the word itself, as in the paper.
- RS: the text swapped k times, then k swaps drawn (50, 100, 200 draws); texts of 3+ tokens.
- RD: k of the text's own tokens appended (as the paper's code does), then k deletions drawn (20,
  50, 100 draws); texts of more than k tokens.
- After two random swaps of the original (texts of 3+ tokens): the bigram overlap of the pick with
  the original (shared bigrams over their mean count; 50 draws) and its token edit distance
  (``nltk.edit_distance``; 20 draws).

Every figure is the mean of ``--runs`` runs (default 5, seeds 1..5) over all test texts.
English: the bundled sentences (``paraamr.quality.data``: 292 written + 5,985 WordNet usage
examples, 6,245 distinct), 1,000 drawn as test texts (seed 0), the LM trained on the other 5,245. Chinese: 290
question-like sentences written for paraamr (``benchmarks/data/reda_zh_questions.txt``), the LM
trained on the 4,354 HSK sentences of the ``hsk-sentences-audio`` package (CC-BY-SA-4.0; none is a
test text; ``pip install hsk-sentences-audio``). A third column trains the LM on the test texts
too ("in-sample", as an LM pretrained on the paper's corpus saw its texts).

Run: ``python benchmarks/bench_reda_restore.py [--languages en zh] [--runs 5] [--test 1000]``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path

from paraamr.augment.languages import setup
from paraamr.augment.ngram import END, START, NgramLM
from paraamr.augment.reda import REDA
from paraamr.augment.synonyms import split_affixes
from paraamr.records import normalize

QUESTIONS = Path(__file__).parent / "data" / "reda_zh_questions.txt"
#: The paper's figures: the author's notebook behind Section 4.1 (ReduplicatingTheStudy/
#: AugmentedTextsQualityAnalysis.ipynb of jaaack-wang/linguistic-knowledge-in-DA-for-NLP),
#: LCQMC, 10,000 texts per run, 5 runs; (REDA, REDA+NG).
PAPER = {
    ("SR", 1): (0.22, 0.88),
    ("SR", 2): (0.06, 0.79),
    ("SR", 3): (0.02, 0.64),
    ("RS", 1): (0.09, 0.69),
    ("RS", 2): (0.04, 0.41),
    ("RS", 3): (0.04, 0.34),
    ("RD", 1): (0.16, 0.39),
    ("RD", 2): (0.05, 0.22),
    ("RD", 3): (0.02, 0.15),
    ("overlap", 2): (0.29, 0.77),
    ("edits", 2): (2.98, 1.38),
}
DRAWS = {"SR": (20, 50, 100), "RS": (50, 100, 200), "RD": (20, 50, 100)}


class PseudoSR(REDA):
    """REDA whose SR draws each replaced word from its pseudo entry: itself and three others."""

    def __init__(self, pseudo: dict[str, list[str]], **kwargs) -> None:
        super().__init__(**kwargs)
        self.pseudo = pseudo

    def token_synonyms(self, token: str) -> tuple[str, ...]:
        return tuple(self.pseudo.get(normalize(token), ()))


def english() -> tuple[list[str], list[str]]:
    from paraamr.quality.data import TRAINING_FILES

    lines = [line for path in TRAINING_FILES for line in path.read_text(encoding="utf-8").splitlines()]
    texts = list(dict.fromkeys(line for line in lines if line.strip() and not line.startswith("#")))
    random.Random(0).shuffle(texts)
    return texts, []


def chinese() -> tuple[list[str], list[str]]:
    try:
        from hsk_sentences_audio import load_sentences
    except ImportError:
        raise SystemExit(
            "the Chinese LM is trained on HSK sentences: pip install hsk-sentences-audio"
        ) from None
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    questions = [line for line in lines if line.strip() and not line.startswith("#")]
    hsk = list(dict.fromkeys(card["chinese"] for card in load_sentences()))
    assert not set(hsk) & set(questions)
    return questions, hsk


def pseudo_dictionary(lm: NgramLM, synonyms, rng: random.Random) -> dict[str, list[str]]:
    """The paper's pseudo dictionary over the LM's unigram ranks 1,000-10,000 (see the docstring)."""
    unigrams = Counter({g[0]: c for g, c in lm.counts.items() if len(g) == 1 and g[0] not in (START, END)})
    band = [word for word, _ in unigrams.most_common()][1000:10001]
    pseudo = {}
    for word in band:
        real = synonyms(split_affixes(word)[1] or word)
        if real:
            others = [w for w in rng.sample(band, min(20, len(band))) if w != word and w not in real]
            entry = [word, *rng.sample(others, min(3, len(others)))]
            rng.shuffle(entry)
            pseudo[word] = entry
    return pseudo


def distinct(op, tokens: list[str], k: int, draws: int, rng: random.Random, tok) -> list[list[str]]:
    """The distinct outputs of ``draws`` tries of ``op(tokens, k, rng)`` (the input may be one)."""
    seen: dict[str, list[str]] = {}
    for _ in range(draws):
        out = op(tokens, k, rng)
        if out is not None:
            seen.setdefault(normalize(tok.join(out)), out)
    return list(seen.values())


def picks(choices, lms, tok, rng):
    """REDA's pick (at random) and each LM's (the most probable) among ``choices``."""
    scored = [[lm.logprob(tok.lm_tokens_of(c, normalize(tok.join(c)))) for c in choices] for lm in lms]
    best = [choices[max(range(len(choices)), key=scores.__getitem__)] for scores in scored]
    return [rng.choice(choices), *best]


def restore_rates(reda, sr, texts, tok, lms, rng) -> dict[tuple[str, int], list[float]]:
    """For SR, RS, RD and k = 1..3: the share of texts each picker restores."""
    rates = {}
    for op in ("SR", "RS", "RD"):
        for k in (1, 2, 3):
            hits, total = [0] * (1 + len(lms)), 0
            for text in texts:
                original = tok.split(text)
                key = normalize(tok.join(original))
                if op == "SR":
                    if len(sr._replaceable(original)) < k:
                        continue
                    choices = distinct(sr.replace, original, k, DRAWS[op][k - 1], rng, tok)
                elif op == "RS":
                    if len(original) < 3 or (start := reda.swap(original, k, rng)) is None:
                        continue
                    choices = distinct(reda.swap, start, k, DRAWS[op][k - 1], rng, tok)
                else:
                    if len(original) <= k:
                        continue
                    start = original + rng.sample(original, k)
                    choices = distinct(reda.delete, start, k, DRAWS[op][k - 1], rng, tok)
                total += 1
                for i, pick in enumerate(picks(choices, lms, tok, rng)):
                    hits[i] += normalize(tok.join(pick)) == key
            rates[(op, k)] = [h / max(total, 1) for h in hits]
    return rates


def bigram_overlap(a: list[str], b: list[str]) -> float:
    """Shared bigrams (with repeats) over the mean bigram count of ``a`` and ``b`` (the paper's)."""
    x, y = Counter(pairwise(a)), Counter(pairwise(b))
    return sum((x & y).values()) / ((sum(x.values()) + sum(y.values())) / 2)


def swap_closeness(reda, texts, tok, lms, rng) -> dict[tuple[str, int], list[float]]:
    """After two random swaps: bigram overlap (50 draws) and edit distance (20 draws) of each pick."""
    from nltk import edit_distance

    out = {}
    for name, draws, measure in (("overlap", 50, bigram_overlap), ("edits", 20, edit_distance)):
        values = [[] for _ in range(1 + len(lms))]
        for text in texts:
            original = tok.split(text)
            if len(original) < 3:
                continue
            choices = distinct(reda.swap, original, 2, draws, rng, tok)
            for i, pick in enumerate(picks(choices, lms, tok, rng)):
                values[i].append(measure(original, pick))
        out[(name, 2)] = [sum(v) / len(v) for v in values]
    return out


def run_language(code: str, runs: int, test_size: int) -> None:
    texts, lm_lines = english() if code == "en" else chinese()
    if code == "en":
        test, lm_lines = texts[:test_size], texts[test_size:]
    else:
        test = texts
    tok, synonyms = setup(code)
    tok.segment_all([*test, *lm_lines])
    disjoint = NgramLM.train(lm_lines, tokenizer=tok)
    in_sample = NgramLM.train([*lm_lines, *test], tokenizer=tok)
    pseudo = pseudo_dictionary(disjoint, synonyms, random.Random(0))
    print(f"\n{code}: {len(test)} test texts, LM on {len(lm_lines)} other texts ({disjoint.signature()})")
    print(f"pseudo dictionary: {len(pseudo)} words of LM ranks 1,000-10,000 with real synonyms")
    totals: dict[tuple[str, int], list[float]] = {}
    start = time.perf_counter()
    for seed in range(1, runs + 1):
        rng = random.Random(seed)
        reda = REDA(synonyms=synonyms, tokenizer=tok, seed=seed)
        sr = PseudoSR(pseudo, synonyms=synonyms, tokenizer=tok, seed=seed)
        lms = [disjoint, in_sample]
        results = restore_rates(reda, sr, test, tok, lms, rng) | swap_closeness(reda, test, tok, lms, rng)
        for cell, values in results.items():
            totals[cell] = [a + b / runs for a, b in zip(totals.get(cell, [0.0] * 3), values, strict=True)]
    print(f"({runs} runs, {time.perf_counter() - start:.0f} s)")
    header = f"{'experiment':18}{'REDA':>8}{'REDA+NG':>9}{'in-sample':>11}{'paper REDA':>12}{'paper NG':>10}"
    print(header)
    for (name, k), (base, ng, ng_in) in totals.items():
        paper = PAPER[(name, k)]
        label = f"{name} k={k}" if name in DRAWS else f"{name} (2 swaps)"
        print(f"{label:18}{base:8.2f}{ng:9.2f}{ng_in:11.2f}{paper[0]:12.2f}{paper[1]:10.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--languages", nargs="+", default=["en", "zh"], choices=["en", "zh"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--test", type=int, default=1000, help="English test texts (default: 1000)")
    args = parser.parse_args()
    for code in args.languages:
        run_language(code, args.runs, args.test)


if __name__ == "__main__":
    main()
