"""Batches that fill the device: on a CUDA device the stages size their batches from the free memory
and the inputs' lengths (at most ``max_batch_size``), longest first, and return results in input
order; on a CPU they batch as before.

No GPU here: the one free-memory query (``base.free_bytes``, None for a CPU) is made to answer a
given figure, as a CUDA device would, and everything past it runs for real on the tiny models.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from transformers import BartConfig

from paraamr.models import base, tiny
from paraamr.models.base import FILL_FRACTION, Footprint, batch_listener, fill_batches, footprint
from paraamr.models.lm import PerplexityScorer
from paraamr.models.parser import Parser
from paraamr.models.realizer import Realizer

SENTENCES = [  # the tiny parser makes a graph of the 2nd, 4th and 6th only
    "i see a dog",
    tiny.PAPER_TEXT,
    "he said",
    "I know this price.",
    "he said she thought they ran . the dog saw a cat",
    "I know for them to approve this price.",
]
GRAPHS = [
    "(s / see-01 :ARG0 (i / i) :ARG1 (d / dog))",
    tiny.PAPER_AMR,
    "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-01 :ARG0 b))",
    "(t / think-01 :ARG0 (s / she) :polarity -)",
]


@pytest.fixture
def free(monkeypatch):
    """``free["bytes"]``: what the free-memory query answers for any device (None: a CPU)."""
    answer: dict[str, int | None] = {"bytes": None}
    monkeypatch.setattr(base, "free_bytes", lambda device: answer["bytes"])
    return answer


def _sizes(call) -> tuple[list, list[int]]:
    """``call()``'s value and the size of each batch it ran."""
    sizes: list[int] = []
    with batch_listener(lambda stage, n, total: sizes.append(n)):
        value = call()
    return value, sizes


def test_fill_batches_fit_the_memory_and_the_cap():
    # 20 items of 100 tokens at 1,000 bytes a token, 1 MB free: 70% of it holds 7 of them
    batches = fill_batches([100] * 20, per_token=1000, fixed=0, free=10**6, max_batch_size=64)
    assert [len(b) for b in batches] == [7, 7, 6]
    rng = random.Random(0)
    lengths = [rng.randint(1, 200) for _ in range(500)]
    cost = Footprint(per_token=1000, fixed=5000)
    for free, cap in ((10**6, 1024), (10**8, 64), (10**5, 1024)):
        batches = fill_batches(lengths, per_token=1000, fixed=5000, free=free, max_batch_size=cap)
        assert sorted(i for b in batches for i in b) == list(range(500))  # each item once
        assert [lengths[i] for b in batches for i in b] == sorted(lengths, reverse=True)  # longest first
        budget = FILL_FRACTION * free
        for batch, after in zip(batches, [*batches[1:], None], strict=True):
            padded = len(batch) * cost(lengths[batch[0]])  # every item padded to the longest (first)
            assert len(batch) <= cap
            assert padded <= budget or len(batch) == 1  # an item too large for the budget goes alone
            if after is not None:  # a batch is cut only where the next item would not fit
                assert len(batch) == cap or padded + cost(lengths[batch[0]]) > budget
    small = fill_batches(lengths, per_token=1000, fixed=5000, free=10**6, max_batch_size=1024)
    large = fill_batches(lengths, per_token=1000, fixed=5000, free=10**8, max_batch_size=1024)
    assert len(large) < len(small)


def test_footprint_of_bart_large_with_four_beams():
    """bart-large (transformers' BartConfig defaults: 12 decoder layers, d_model 1024, FFN 4096, 16
    heads, 50,265 tokens) in float16, 4 beams, 160 output tokens, inputs up to 100 tokens."""
    cost = footprint(BartConfig(), element=2, beams=4, out_len=160, max_len=100)
    kv_cache = 2 * 12 * 1024 * 2 * 160 * 4  # keys and values, layers, width, bytes, tokens, beams
    scores = 4 * 50265 * 4 * 2  # two float32 vocabulary rows per beam
    assert cost.fixed == kv_cache + scores == 33_065_760
    activations = 2 * (2 * 1024 * 12 + 4 * 1024 + 4096 + 16 * 100)
    cross = 2 * 4 * 1024 * (1 + 2 * 12)  # per beam: the encoder output and its cached keys and values
    assert cost.per_token == activations + cross
    assert cost(30) == cost.fixed + 30 * cost.per_token


def _fit(count: int, cost: Footprint, tokens: int) -> int:
    """Free bytes under which ``count`` items of ``tokens`` tokens just fit."""
    return math.ceil(count * cost(tokens) / FILL_FRACTION) + 1  # + 1: float rounding


def _recorded_generate(stage) -> list[int]:
    """Record the batch size of every model call amrlib makes for ``stage``."""
    model = stage.inference.model
    generate, seen = model.generate, []

    def recording(input_ids, *args, **kwargs):
        seen.append(len(input_ids))
        return generate(input_ids, *args, **kwargs)

    model.generate = recording
    return seen


def test_parser_fills_the_device_and_keeps_the_input_order(tiny_models, free):
    parser = Parser(tiny_models["parser"], num_beams=1, batch_size=2, max_batch_size=4)
    cpu, cpu_sizes = _sizes(lambda: parser.parse(SENTENCES))
    assert cpu_sizes == [2, 2, 2]  # a CPU: batch_size, as before
    calls = _recorded_generate(parser)
    free["bytes"] = 10**12  # room for everything: the cap decides
    big, big_sizes = _sizes(lambda: parser.parse(SENTENCES))
    assert big_sizes == [4, 2] and calls == big_sizes  # amrlib runs each batch in one call
    assert big == cpu
    parsed = [i for i, g in enumerate(big) if isinstance(g, str)]
    assert parsed == [1, 3, 5]  # in input order: each graph in its sentence's place
    assert all(big[i].startswith(f"# ::snt {SENTENCES[i]}\n") for i in parsed)
    lengths = [len(ids) for ids in parser.inference.tokenizer(SENTENCES)["input_ids"]]
    config = parser.inference.model.config
    cost = footprint(
        config,
        element=4,
        beams=1,
        out_len=parser.inference.max_graph_len,
        max_len=parser.inference.max_sent_len,
    )
    free["bytes"] = _fit(3, cost, max(lengths))  # three of the longest
    small, small_sizes = _sizes(lambda: parser.parse(SENTENCES))
    assert small_sizes[0] == 3 and max(small_sizes) <= 4 and sum(small_sizes) == len(SENTENCES)
    assert small == cpu


def test_realizer_and_perplexity_fill_the_device(tiny_models, free):
    realizer = Realizer(tiny_models["realizer"], use_tense=False, batch_size=1, max_batch_size=3)
    cpu, cpu_sizes = _sizes(lambda: realizer.realize(GRAPHS))
    assert cpu_sizes == [1, 1, 1, 1]
    calls = _recorded_generate(realizer)
    free["bytes"] = 10**12
    filled, sizes = _sizes(lambda: realizer.realize(GRAPHS))
    assert sizes == [3, 1] and calls == sizes
    assert filled == cpu

    scorer = PerplexityScorer(tiny_models["lm"], batch_size=2, max_tokens=10**6, max_batch_size=5)
    texts = [*SENTENCES, "", *SENTENCES[:3]]
    free["bytes"] = None
    cpu, cpu_sizes = _sizes(lambda: scorer.perplexity(texts))
    assert cpu_sizes == [2, 2, 2, 2, 1]
    free["bytes"] = 10**12
    filled, sizes = _sizes(lambda: scorer.perplexity(texts))
    assert sizes == [5, 4]
    assert filled[6] == cpu[6]  # the empty text's Failure, in its place
    assert [v for i, v in enumerate(filled) if i != 6] == pytest.approx(
        [v for i, v in enumerate(cpu) if i != 6]
    )
    assert filled[:3] == pytest.approx(filled[7:], rel=1e-5)  # the same text, the same value
    longest = 1 + max(len(ids) for ids in scorer.tokenizer(texts, add_special_tokens=False)["input_ids"])
    cost = footprint(scorer.config, element=4, max_len=scorer.max_length, logits=True)
    free["bytes"] = _fit(2, cost, longest)  # two of the longest (with BOS)
    _, sizes = _sizes(lambda: scorer.perplexity(texts))
    assert sizes[0] == 2 and sum(sizes) == len(texts) - 1


@pytest.mark.slow
def test_embedder_fills_the_device_on_both_backends(free):
    from paraamr.models.embedder import Embedder

    texts = [
        tiny.PAPER_TEXT,
        "A man is eating food.",
        "hi",
        "The quick brown fox jumps over the lazy dog.",
        "ok",
    ]
    for backend in ("transformers", "auto"):
        embedder = Embedder(backend=backend, batch_size=2, max_batch_size=3)
        plan, sizes = embedder._batches, []
        embedder._batches = lambda t, plan=plan, sizes=sizes: sizes.extend(len(b) for b in plan(t)) or plan(t)
        free["bytes"] = None
        cpu = embedder.encode(texts)
        assert sizes == [2, 2, 1], backend
        free["bytes"] = 10**12
        sizes.clear()
        filled = embedder.encode(texts)
        assert sizes == [3, 2], backend
        assert np.abs(filled - cpu).max() < 1e-5
        assert np.abs(filled[2] - embedder.encode(["hi"])[0]).max() < 1e-5  # row i is text i
