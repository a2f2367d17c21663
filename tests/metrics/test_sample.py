"""``--sample``'s intervals: across seeds, the 95% interval of a sample of sources covers the value
of the full corpus about 95% of the time (a cluster bootstrap over sources); a bootstrap that
resampled pairs, as if the paraphrases of a source were independent, covers far less.

The corpus: 700 WordNet usage examples (the sentences paraamr ships for quality training) with
1-9 rule-made paraphrases each (3,500-odd pairs, ParaAMR-shaped: several paraphrases a source),
scored with the real lexical measures once; each seed's sample runs through the real plan
(:func:`~paraamr.metrics.scale.make_plan`), the per-chunk statistics
(:func:`~paraamr.metrics.scale.score_share`) and the row (:func:`~paraamr.metrics.report.row_of`),
with a scorer that looks the precomputed values up (link-grammar on thousands of pairs per seed
would take hours).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from paraamr.metrics.lexical import bleu_diversity, jaccard_diversity
from paraamr.metrics.report import Pair, row_of
from paraamr.metrics.sample import intervals
from paraamr.metrics.scale import make_plan, score_share
from paraamr.metrics.scoring import Scored
from paraamr.quality.data import WORDNET_SENTENCES

MEASURES = ("bleu_diversity", "jaccard_diversity")
SEEDS = 200
SAMPLE = 40  # sources of 700: the finite-population correction stays near 1


def paraphrases(source: str, k: int, rng: random.Random) -> list[str]:
    body = source.rstrip(".")
    words, lower = body.split(), body[:1].lower() + body[1:]

    def drop() -> str:
        i = rng.randrange(1, len(words))
        return " ".join(words[:i] + words[i + 1 :]) + "."

    def swap() -> str:
        i = rng.randrange(len(words) - 1)
        return " ".join([*words[:i], words[i + 1], words[i], *words[i + 2 :]]) + "."

    makers = [
        drop,
        swap,
        lambda: f"It is true that {lower}.",
        lambda: f"Apparently, {lower}.",
        lambda: f"{body}, as it happens.",
        lambda: f"People say that {lower}.",
        lambda: " ".join(words[rng.randrange(1, 3) :]) + ".",
    ]
    return [rng.choice(makers)() for _ in range(k)]


@pytest.fixture(scope="module")
def corpus() -> tuple[list[Pair], dict[str, list[float]]]:
    lines = WORDNET_SENTENCES.read_text(encoding="utf-8").splitlines()
    sources = [s for s in lines if len(s.split()) >= 6 and not s.startswith("#")][:700]
    rng = random.Random(0)
    pairs = []
    for source in sources:
        for para in paraphrases(source, rng.randint(1, 9), rng):
            pairs.append(Pair(f"line {len(pairs)}", source, para, index=len(pairs)))
    preds, srcs = [p.paraphrase for p in pairs], [p.source for p in pairs]
    values = {
        "bleu_diversity": bleu_diversity(preds, srcs)[0],
        "jaccard_diversity": jaccard_diversity(preds, srcs)[0],
    }
    return pairs, values


def sampled_row(pairs, values, seed: int) -> dict:
    """The row of ``--sample SAMPLE --seed seed`` through the real plan, chunks and statistics."""

    def score(chunk: list[Pair]) -> Scored:
        scores = {m: [values[m][p.index] for p in chunk] for m in MEASURES}
        return Scored(pairs=list(chunk), scores=scores, signatures={"x": "y"})

    plan = make_plan(pairs, sample=SAMPLE, seed=seed, chunk_pairs=50)
    stats = score_share(plan, score, chunks=plan.owned(), clusters=True)
    return row_of(stats, seed=seed, unit=plan.unit)


def test_cluster_intervals_cover_the_full_value_about_95_percent_of_the_time(corpus):
    pairs, values = corpus
    assert 3000 < len(pairs) < 4000
    full = {m: float(np.mean(values[m])) for m in MEASURES}
    covered = dict.fromkeys(MEASURES, 0)
    for seed in range(SEEDS):
        row = sampled_row(pairs, values, seed)
        assert row["clusters"] == SAMPLE and "cluster:sources" in row["signatures"]["interval"]
        for m in MEASURES:
            low, high = row["intervals"][m]
            assert low <= row[m] <= high
            covered[m] += low <= full[m] <= high
    coverage = {m: covered[m] / SEEDS for m in MEASURES}
    print(f"coverage over {SEEDS} seeds, {SAMPLE} sources each: {coverage}")
    # binomial sd at 95% over 200 seeds: 1.5 points; the bootstrap's small-sample bias ~1-2 points
    for m in MEASURES:
        assert 0.90 <= coverage[m] <= 0.99, (m, coverage)


def test_a_bootstrap_over_pairs_would_cover_less(corpus):
    # the same samples, each pair resampled alone: the paraphrases of a source are not independent
    pairs, values = corpus
    full = float(np.mean(values["bleu_diversity"]))
    groups: dict[str, list[int]] = {}
    for p in pairs:
        groups.setdefault(p.source, []).append(p.index)
    clusters = list(groups.values())
    covered = 0
    for seed in range(SEEDS):
        drawn = random.Random(seed).sample(clusters, SAMPLE)
        table = np.array([[1.0, values["bleu_diversity"][i]] for group in drawn for i in group])
        low, high = intervals(table, ["bleu_diversity"], seed=seed)["bleu_diversity"]
        covered += low <= full <= high
    print(f"pair bootstrap coverage: {covered / SEEDS}")
    assert covered / SEEDS < 0.85
