"""Augmentation speed: examples/s of each method on 10,000 sentences, and the n-gram LM against
nltk.lm (training and scoring the REDA+NG pool), side by side as ratios.

Sentences: the first 10,000 distinct WordNet usage examples with at least six words (offline,
real English). ParaAMR lookups read a synthetic release JSONL with three paraphrases per sentence. REDA runs
twice: cold (every word looked up in WordNet, ~3 ms each) and warm (synonyms cached); REDA+NG
scores the whole pool (up to 20 draws for each of 5 operators) with the LM.
A 100,000-character text (``--long-chars``) times random swap against the scan it replaced and
whole REDA / REDA+NG augmentations of it.
Chinese (``--zh-sentences``): REDA+NG with jieba and Cilin over the benchmark's questions and the
HSK sentences of ``hsk-sentences-audio`` (when installed), each text segmented once per run and
each edit scored by its tokens, against the per-call baseline that segments a text at every call
and each edit's text again to score it.
Run: ``python benchmarks/bench_augment.py [--sentences 10000] [--num-proc 1] [--long-chars 100000]
[--zh-sentences 2000]``.
Figures on a shared machine are noisy; compare the ratios.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path


def wordnet_sentences(limit: int) -> list[str]:
    from paraamr.wordnet import wordnet

    seen: dict[str, None] = {}
    for synset in wordnet().all_synsets():
        for example in synset.examples():
            if len(example.split()) >= 6:
                seen.setdefault(example[:1].upper() + example[1:] + " .", None)
        if len(seen) >= limit:
            break
    return list(seen)[:limit]


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def scan_swap(tokens, n, rng):
    """The baseline: random swap as written from its definition (and as paraamr had it), scanning
    the text for the positions holding another token at every swap."""
    out = list(tokens)
    for _ in range(n):
        i = rng.randrange(len(out))
        j = rng.choice([k for k, token in enumerate(out) if token != out[i]])
        out[i], out[j] = out[j], out[i]
    return out


def long_text(chars: int) -> None:
    """One text of ``chars`` characters: random swap (round(0.2 L) swaps) against the scan, and
    whole REDA / REDA+NG augmentations of it (issue 14: 211 s for one such row before)."""
    import random
    from collections import Counter

    from paraamr.augment.ngram import NgramLM
    from paraamr.augment.reda import REDA, edit_counts

    words = wordnet_sentences(200)
    rng = random.Random(0)
    text = " ".join(rng.choice(" ".join(words).split()) for _ in range(chars // 4))[:chars]
    degenerate = " ".join(["a"] * (chars // 2 - 1) + ["b"])[:chars]  # one odd token: every swap needs it
    reda = REDA(seed=0)
    reda.token_synonyms("warm")  # WordNet loaded outside the timings
    print(f"one text of {len(text):,} characters")
    print(f"{'':34}{'paraamr':>10}{'scan':>10}{'speed-up':>10}")
    for label, source in (("swap, mixed words (s)", text), ("swap, one odd token (s)", degenerate)):
        tokens = source.split()
        n = edit_counts(len(tokens))["RS"]
        ours, t_ours = timed(lambda t=tokens, n=n: reda.swap(t, n, random.Random(1)))
        theirs, t_scan = timed(lambda t=tokens, n=n: scan_swap(t, n, random.Random(1)))
        assert Counter(ours) == Counter(theirs) == Counter(tokens)
        print(f"{label:34}{t_ours:10.3f}{t_scan:10.1f}{t_scan / t_ours:9.0f}x")
    lm = NgramLM.train([text])
    for label, kwargs in (("reda augment(n=2) (s)", {}), ("reda-ng augment(n=2) (s)", {"lm": lm})):
        outputs, seconds = timed(lambda kw=kwargs: reda.augment(text, 2, **kw))
        print(f"{label:34}{seconds:10.2f}{'':>10}{'':>10}  ({len(outputs)} outputs)")
    print()


def chinese_texts(limit: int) -> list[str]:
    lines = (Path(__file__).parent / "data" / "reda_zh_questions.txt").read_text(encoding="utf-8")
    texts = [line for line in lines.splitlines() if line.strip() and not line.startswith("#")]
    try:
        from hsk_sentences_audio import load_sentences

        texts += [card["chinese"] for card in load_sentences()]
    except ImportError:
        print("(pip install hsk-sentences-audio for 4,354 more sentences)")
    return list(dict.fromkeys(texts))[:limit]


def chinese_segmentation(limit: int) -> None:
    """REDA+NG in Chinese: segmentation once per run against once per call (sentences/s)."""
    from paraamr.augment.languages import Jieba, _jieba
    from paraamr.augment.ngram import NgramLM
    from paraamr.augment.reda import REDA
    from paraamr.augment.synonyms import cilin
    from paraamr.records import normalize

    class PerCall(Jieba):
        """The baseline: jieba cuts a text at every call, and each edit's text again to score it."""

        def split(self, text):
            return [t for t in _jieba().lcut(text) if t.strip()]

        def lm_tokens_of(self, tokens, key):
            return [w for t in _jieba().lcut(self.join(tokens)) for w in normalize(t).split()]

    texts, source = chinese_texts(limit), cilin()
    _jieba()  # the dictionary loaded outside the timings
    _, t_cut = timed(lambda: [_jieba().lcut(t) for t in texts])

    def run(tok):
        tok.segment_all(texts)
        lm = NgramLM.train(texts, tokenizer=tok)
        reda = REDA(synonyms=source, tokenizer=tok)
        return [reda.augment(t, 2, lm=lm) for t in texts]

    ours, t_ours = timed(lambda: run(Jieba()))
    theirs, t_theirs = timed(lambda: run(PerCall()))
    same = sum(a == b for a, b in zip(ours, theirs, strict=True)) / len(texts)
    print(f"Chinese REDA+NG (jieba + Cilin, n=2), {len(texts)} sentences (jieba: {len(texts) / t_cut:.0f}/s)")
    print(f"{'':30}{'once per run':>14}{'per call':>10}{'speed-up':>10}")
    print(f"{'augment (sentences/s)':30}{len(texts) / t_ours:14.0f}{len(texts) / t_theirs:10.0f}", end="")
    print(f"{t_theirs / t_ours:9.1f}x")
    print(f"same outputs for {same:.0%} of the sentences (the baseline scores re-cut edits)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=10_000)
    parser.add_argument("--num-proc", type=int, default=1)
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument(
        "--score-sentences", type=int, default=300, help="sentences whose REDA pool is scored"
    )
    parser.add_argument(
        "--long-chars", type=int, default=100_000, help="length of the long text (0: skip that part)"
    )
    parser.add_argument(
        "--zh-sentences", type=int, default=2000, help="Chinese sentences for REDA+NG (0: skip that part)"
    )
    args = parser.parse_args()
    if args.long_chars:
        long_text(args.long_chars)
    if args.zh_sentences:
        chinese_segmentation(args.zh_sentences)

    from datasets import Dataset, disable_progress_bars
    from nltk.lm import StupidBackoff
    from nltk.util import everygrams

    from paraamr.augment.ngram import END, START, lm_tokens
    from paraamr.augment.reda import REDA
    from paraamr.augment.runner import augment, train_lm
    from paraamr.augment.source import ParaphraseIndex

    disable_progress_bars()
    texts = wordnet_sentences(args.sentences)
    data = Dataset.from_dict({"sentence": texts, "label": [i % 2 for i in range(len(texts))]})
    print(f"{len(texts)} sentences, {sum(len(t.split()) for t in texts) / len(texts):.1f} tokens on average")

    # -- n-gram LM: ours against nltk.lm (same scores: tests/augment/test_ngram.py) --
    lm, t_train = timed(lambda: train_lm([data], ("sentence",)))
    padded = [[START, *lm_tokens(t), END] for t in texts]

    def nltk_train():
        ref = StupidBackoff(alpha=1.0, order=4)
        ref.fit(
            [list(everygrams(p, max_len=4)) for p in padded], vocabulary_text=[w for p in padded for w in p]
        )
        return ref

    ref, t_train_nltk = timed(nltk_train)
    pool = [c for t in texts[: args.score_sentences] for outs in REDA().pool(t).values() for c in outs]

    def nltk_scores():  # nltk gives unseen words 0; ours gives them 1/N, applied here too
        out, unseen = [], 1 / ref.counts.unigrams.N()
        for text in pool:
            p = [START, *lm_tokens(text), END]
            out.append(
                sum(math.log(ref.score(p[i], p[max(0, i - 3) : i]) or unseen) for i in range(1, len(p)))
            )
        return out

    lm.logprob("warm up the table")
    mine, t_score = timed(lambda: [lm.logprob(t) for t in pool])
    theirs, t_score_nltk = timed(nltk_scores)
    worst = max(abs(a - b) for a, b in zip(mine, theirs, strict=True))
    print(f"\nn-gram LM (order 4, stupid backoff), {len(texts)} training lines, {len(pool)} pool candidates")
    print(f"{'':24}{'paraamr':>12}{'nltk.lm':>12}{'speed-up':>10}")
    print(f"{'train (s)':24}{t_train:12.2f}{t_train_nltk:12.2f}{t_train_nltk / t_train:9.1f}x")
    print(
        f"{'score (sentences/s)':24}{len(pool) / t_score:12.0f}{len(pool) / t_score_nltk:12.0f}"
        f"{t_score_nltk / t_score:9.1f}x"
    )
    print(f"largest score difference: {worst:.2e}")

    # -- methods: examples/s of augment() over the dataset --
    with tempfile.TemporaryDirectory() as tmp:
        release = Path(tmp) / "release.jsonl"
        with release.open("w", encoding="utf-8") as stream:
            for i, text in enumerate(texts):
                words = text.split()
                paras = [" ".join(words[k:] + words[:k]) for k in (1, 2, 3)]
                stream.write(
                    json.dumps(
                        {
                            "text": text,
                            "paraphrases": [
                                {"para_text": p, "perplexity": 50.0 + k + i % 7} for k, p in enumerate(paras)
                            ],
                        }
                    )
                    + "\n"
                )
        index, t_index = timed(lambda: ParaphraseIndex.from_path(release))
        runs = {}
        # the first reda run looks up every word in WordNet (cold); later runs hit the cache
        for label, method in (
            ("paraamr", "paraamr"),
            ("reda", "reda"),
            ("reda warm", "reda"),
            ("reda-ng", "reda-ng"),
        ):
            kwargs = {"paraphrases": index} if method == "paraamr" else {"lm": lm}
            result, seconds = timed(
                lambda m=method, kw=kwargs: augment(data, method=m, n=args.n, num_proc=args.num_proc, **kw)
            )
            runs[label] = (seconds, result.stats["added_rows"])
    base = runs["reda"][0]
    print(
        f"\naugment(n={args.n}, num_proc={args.num_proc}) over {len(texts)} sentences"
        f" (paraamr: index built in {t_index:.2f} s, not counted)"
    )
    print(f"{'method':12}{'examples/s':>12}{'added rows':>12}{'vs reda':>10}")
    for method, (seconds, added) in runs.items():
        print(f"{method:12}{len(texts) / seconds:12.0f}{added:12d}{base / seconds:9.2f}x")


if __name__ == "__main__":
    main()
