"""AESOP's measures against references and templates (paraamr.metrics.reference), each against
an independent computation: AESOP's formulas worked by hand in the test, AESOP's TED steps with
nltk + zss (tests/metrics/metrics_aesop_reference.py)."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from metrics_aesop_reference import aesop_reference

from paraamr.cli import main
from paraamr.metrics import reference

DATA = Path(__file__).parent / "data"
TREES = [t for t in (DATA / "corenlp_trees.txt").read_text().splitlines() if t.startswith("(")]

# pre-tokenized, lowercase, as multi-bleu.perl expects
PREDS = [
    "the cat sat on the mat near the red door today",
    "he did not go to the big old park with his dog",
    "we can see the sea from the top of the hill",
]
REFS = [
    "the cat sat on a mat near the red door",
    "he did not go to the park with his big dog",
    "from the top of the hill we can see the sea",
]


def ngrams(words: list[str], n: int) -> Counter:
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def test_corpus_bleu_is_multi_bleu():
    # multi-bleu.perl: clipped n-gram matches summed over the corpus, brevity penalty, no smoothing
    matches, totals, hyp_len, ref_len = [0] * 4, [0] * 4, 0, 0
    for p, r in zip(PREDS, REFS, strict=True):
        pw, rw = p.split(), r.split()
        hyp_len, ref_len = hyp_len + len(pw), ref_len + len(rw)
        for n in range(1, 5):
            hyp, ref = ngrams(pw, n), ngrams(rw, n)
            matches[n - 1] += sum(min(c, ref[g]) for g, c in hyp.items())
            totals[n - 1] += sum(hyp.values())
    bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    golden = 100 * bp * math.exp(sum(math.log(m / t) for m, t in zip(matches, totals, strict=True)) / 4)
    score, sig = reference.corpus_bleu(PREDS, REFS, tokenize="none")
    assert score == pytest.approx(golden, abs=1e-9)
    assert sig["case"] == "lc" and sig["tok"] == "none" and "paraamr" in sig


def _f1(overlap: int, n_pred: int, n_ref: int) -> float:
    p, r = overlap / n_pred, overlap / n_ref
    return 0.0 if overlap == 0 else 2 * p * r / (p + r)


def _lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    return table[-1][-1]


def test_rouge_is_aesops_f1():
    # py-rouge as AESOP configures it (alpha 0.5: F1): n-gram overlap (clipped), LCS for ROUGE-L;
    # these words are their own Porter stems, so stemming changes nothing
    scores, sig = reference.rouge(PREDS, REFS)
    for k, (p, r) in enumerate(zip(PREDS, REFS, strict=True)):
        pw, rw = p.split(), r.split()
        for n, key in ((1, "rouge1"), (2, "rouge2")):
            hyp, ref = ngrams(pw, n), ngrams(rw, n)
            overlap = sum(min(c, ref[g]) for g, c in hyp.items())
            assert scores[key][k] == pytest.approx(100 * _f1(overlap, sum(hyp.values()), sum(ref.values())))
        assert scores["rougeL"][k] == pytest.approx(100 * _f1(_lcs(pw, rw), len(pw), len(rw)))
    assert sig["stem"] == "yes" and sig["lib"].startswith("rouge-score:")


def test_meteor_is_lavies_formula():
    # exact matches only here (no stem or synonym links between the unmatched words):
    # P = m/|hyp|, R = m/|ref|, Fmean = PR/(0.9P + 0.1R), penalty = 0.5 (chunks/m)^3
    hyp, ref = "the big dog ran to the park .", "the dog ran quickly to a park ."
    scores, sig = reference.meteor([hyp], [ref])
    # alignment: the-the, dog-dog, ran-ran, to-to, park-park, .-. -> m = 6; chunks: [the] [dog ran]
    # [to] [park .] = 4 (hyp's second "the" stays unmatched: ref has one "the")
    m, chunks = 6, 4
    p, r = m / 8, m / 8
    golden = 100 * (p * r / (0.9 * p + 0.1 * r)) * (1 - 0.5 * (chunks / m) ** 3)
    assert scores == [pytest.approx(golden)]
    assert sig["syn"] == "wordnet" and sig["meteor"] == "nltk"
    # WordNet: car ~ auto (nltk looks synonyms up after its stem stage, on words left unmatched)
    (synonym,), _ = reference.meteor(["the car ran"], ["the auto ran"])
    assert synonym == pytest.approx(100 * (1 - 0.5 * (1 / 3) ** 3))  # m = 3, one chunk


@pytest.mark.parametrize("height", [5, 3, None])
def test_ted_r_and_ted_e_are_aesops(height):
    preds, refs, temps = TREES[0:8], TREES[1:9], TREES[4:12]
    scores, sigs = reference.reference_scores(
        ["a"] * 8, ["a"] * 8, pred_trees=preds, ref_trees=refs, template_trees=temps, height=height
    )
    assert scores["ted_r"] == [aesop_reference(p, r, height) for p, r in zip(preds, refs, strict=True)]
    assert scores["ted_e"] == [aesop_reference(p, t, height) for p, t in zip(preds, temps, strict=True)]
    assert sigs["ted_reference"]["heights"] == ("full" if height is None else str(height))


def test_height_5_trims_unlike_aesops_eval_script():
    # AESOP's compute_tree_edit_distance trims only at height 3: its "height 5" is the full tree
    deep = [(p, r) for p, r in pairwise(TREES) if aesop_reference(p, r, 5) != aesop_reference(p, r, None)]
    assert deep, "some pair of the data differs between height 5 and the full trees"


def test_evaluate_command_with_references_and_templates(capsys, tmp_path):
    pairs = [line.split("\t") for line in (DATA / "pairs_sample.tsv").read_text().splitlines()[1:]]
    refs, temps = tmp_path / "refs.txt", tmp_path / "temps.txt"
    refs.write_text("".join(f"{src}\n" for src, _ in pairs))  # the sources as references
    temps.write_text("".join(f"{para}\n" for _, para in pairs))  # the paraphrases as templates
    args = ["evaluate", str(DATA / "pairs_sample.tsv"), "--no-plots", "--no-progress", "--json"]
    assert main([*args, "--references", str(refs), "--templates", str(temps)]) == 0
    result = json.loads(capsys.readouterr().out)
    paras, sources = [p for _, p in pairs], [s for s, _ in pairs]
    assert result["ted_e"] == 0 and result["ted_r"] > 0  # each paraphrase is its own template
    expected, _ = reference.rouge(paras, sources)
    assert result["rouge1"] == pytest.approx(sum(expected["rouge1"]) / len(pairs))
    assert result["bleu"] == pytest.approx(reference.corpus_bleu(paras, sources)[0])
    aesop = "convention:aesop|levels:from-root|leaves:dropped|heights:5|"
    assert result["signatures"]["ted_reference"].startswith(aesop)
    refs.write_text("only one line\n")
    assert main([*args, "--references", str(refs)]) == 1
    assert f"{refs}: 1 lines for {len(pairs)} pairs" in capsys.readouterr().err
    assert main([*args, "--templates", str(temps)]) == 2


def test_references_follow_the_input_when_max_perplexity_drops_pairs(capsys, tmp_path):
    """One reference a line of the input, in its order (as with --sample): before, the file had to
    match the pairs left after --max-perplexity, and shorter files were matched out of line."""
    paras = [("The cat sat on the mat.", 30.0), ("A cat was sitting.", 150.0), ("A cat sat.", 60.0)]
    record = {"text": "The cat sat on the mat today.", "paraphrases": [
        {"para_text": text, "perplexity": ppl} for text, ppl in paras]}  # fmt: skip
    corpus, refs = tmp_path / "c.jsonl", tmp_path / "refs.txt"
    corpus.write_text(json.dumps(record) + "\n")
    refs.write_text("".join(f"{text}\n" for text, _ in paras))  # each paraphrase its own reference
    args = ["evaluate", str(corpus), "--no-plots", "--no-progress", "--json", "--references", str(refs)]
    assert main([*args, "--max-perplexity", "100"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["pairs"] == 2 and result["bleu"] == pytest.approx(100)


def test_terminal_row_shows_aesops_measures_when_there_are_references():
    from paraamr.metrics.report import format_row

    row = {"pairs": 3, "semantic_similarity": 80.0, "bleu_diversity": 70.0, "jaccard_diversity": 60.0}
    row |= {"ted3": 1.0, "tedf": 4.0}
    assert len(format_row(row).splitlines()) == 3
    lines = format_row(
        row | {"bleu": 30.5, "rouge1": 50.0, "rouge2": 40.0, "rougeL": 45.0, "meteor": 35.0, "ted_r": 2.0}
    ).splitlines()
    assert lines[4] == "| pairs | BLEU | ROUGE-1 | ROUGE-2 | ROUGE-L | METEOR | TED-R |"
    assert lines[6] == "| 3 | 30.50 | 50.00 | 40.00 | 45.00 | 35.00 | 2.00 |"
