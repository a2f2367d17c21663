"""1-BLEU and 1-∩/∪: golden values from sacrebleu itself and from hand computation."""

from __future__ import annotations

import math

import pytest
import sacrebleu

from paraamr.metrics.lexical import bleu_diversity, jaccard_diversity, tokenizer

PAIRS = [
    ("The cat sat on the mat.", "The cat sat on the mat."),
    ("On the mat sat a cat.", "The cat sat on the mat."),
    (
        "They will need statistical documentation to approve this price.",
        "I know for them to approve this price, they'll need statistical documentation.",
    ),
    ("Completely unrelated words here!", "The cat sat on the mat."),
    ("", "Something."),
    ("the cat sat on the mat.", "The cat sat on the mat."),
]


def test_bleu_diversity_is_100_minus_sacrebleu_sentence_bleu():
    preds, refs = [p for p, _ in PAIRS], [r for _, r in PAIRS]
    scores, signature = bleu_diversity(preds, refs)
    golden = [100 - sacrebleu.sentence_bleu(p, [r]).score for p, r in PAIRS]  # sacrebleu itself
    assert scores == pytest.approx(golden, abs=1e-9)
    assert str(signature).startswith("nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:")
    assert scores[0] == 0.0 and scores[-1] > 0  # case-sensitive by default
    lowered, sig = bleu_diversity(preds[-1:], refs[-1:], lowercase=True)
    assert lowered == [0.0] and sig["case"] == "lc"


def test_bleu_diversity_by_hand():
    # "the cat" against "the cat sat": unigram and bigram precisions 1, no 3/4-grams in the
    # hypothesis (effective order drops them), brevity penalty exp(1 - 3/2): BLEU = 100·e^-0.5
    (score,), _ = bleu_diversity(["the cat"], ["the cat sat"])
    assert score == pytest.approx(100 * (1 - math.exp(-0.5)))


def test_jaccard_diversity_by_hand():
    scores, signature = jaccard_diversity([p for p, _ in PAIRS], [r for _, r in PAIRS])
    # 13a tokens, lowercased, as sets:
    # 1: identical -> 0; 2: {on the mat sat a cat .} vs {the cat sat on mat .}: 6/7 -> 100/7
    # 3: {they will need statistical documentation to approve this price .} (10) vs {i know for them
    #    to approve this price , they'll need statistical documentation .} (14; 13a keeps "they'll"):
    #    ∩ 8 (to approve this price need statistical documentation .), ∪ 16 -> 1/2
    # 4: no shared token ("!" vs ".") -> 100; 5: {} vs {something .} -> 100; 6: lowercased -> 0
    assert scores == pytest.approx([0, 100 / 7, 50, 100, 100, 0])
    assert str(signature).startswith("tok:13a|case:lc|sets:yes|paraamr:")
    assert jaccard_diversity([""], [""])[0] == [0.0]  # two empty texts are identical
    cased, sig = jaccard_diversity(["The cat."], ["the cat."], lowercase=False)
    assert cased == [pytest.approx(100 * 2 / 4)] and sig["case"] == "mixed"  # {The cat .} vs {the cat .}
    (none,), sig = jaccard_diversity(["the mat."], ["the mat ."], tokenize="none")
    # {the mat.} vs {the mat .}: "mat." is one token; ∩ 1, ∪ 4
    assert none == pytest.approx(75) and sig["tok"] == "none"


def test_tokenizer_is_sacrebleus():
    assert tokenizer()("Hello, World!") == ["hello", ",", "world", "!"]
    assert tokenizer(lowercase=False)("Hello, World!") == ["Hello", ",", "World", "!"]
    with pytest.raises(ValueError, match="unknown tokenizer 'spaces'"):
        tokenizer("spaces")


def test_bad_input_names_the_pair():
    with pytest.raises(ValueError, match="pair 1 prediction: expected str, got NoneType"):
        bleu_diversity(["a", None], ["a", "b"])
    with pytest.raises(ValueError, match="pair 0 reference"):
        jaccard_diversity(["a"], [3])
    with pytest.raises(ValueError, match="same length"):
        bleu_diversity(["a"], [])
    assert bleu_diversity([], [])[0] == []
    with pytest.raises(TypeError, match="references is one string"):  # not 6 pairs of characters
        jaccard_diversity(list("A cat."), "A dog.")
