"""Parser: amrlib's real stog inference (``amrlib.load_stog_model``) on the tiny BART model."""

from __future__ import annotations

import json

import penman
import pytest
import torch

from paraamr.errors import ModelNotFoundError, ParaAMRError
from paraamr.failures import Failure
from paraamr.models import tiny
from paraamr.models.parser import Parser


def _concept_triples(graph: str) -> list[tuple[str, str, str]]:
    """Edges and attributes with variables replaced by concepts (variable names differ by parser)."""
    g = penman.decode(graph)
    concept = {v: c for v, _, c in g.instances()}
    return sorted((concept[s], r, concept.get(t, t)) for s, r, t in g.edges() + g.attributes())


@pytest.fixture(scope="module")
def parser(tiny_models):
    return Parser(tiny_models["parser"], device="cpu", batch_size=4)


def test_parses_with_amrlib_into_penman_with_snt(parser):
    [graph] = parser.parse([tiny.PAPER_TEXT])
    assert graph.splitlines()[0] == f"# ::snt {tiny.PAPER_TEXT}"
    assert penman.decode(graph).metadata["snt"] == tiny.PAPER_TEXT
    # the tiny model memorized the paper's graph: same concepts and roles as Figure 1
    assert _concept_triples(graph) == _concept_triples(tiny.PAPER_AMR)
    assert type(parser.inference).__module__ == "amrlib.models.parse_xfm.inference"


def test_failures_keep_their_place(tiny_models):
    parser = Parser(tiny_models["parser"], num_beams=1, batch_size=2)
    out = parser.parse(["", tiny.GARBLED_TEXT, tiny.PAPER_TEXT, "   ", 7, tiny.PAPER_TEXT])
    assert out[0] == Failure("parse", "empty sentence") and out[3] == Failure("parse", "empty sentence")
    assert out[1] == Failure("parse", "no beam deserialized into a graph (num_beams=1)")
    assert out[4] == Failure("parse", "not a string: int")
    assert out[2] == out[5] and out[2].startswith("# ::snt I know")
    assert parser.stats == {"parsed": 2, "failed": 4, "clipped": 0}


def test_the_models_own_beams_unless_given(tiny_models, tmp_path):
    """``num_beams`` said "default: the model's", but 4 was always passed and amrlib let it win over
    the folder's ``amrlib_meta.json``."""
    import shutil

    own = tmp_path / "parser"
    shutil.copytree(tiny_models["parser"], own)
    meta = json.loads((own / "amrlib_meta.json").read_text())
    (own / "amrlib_meta.json").write_text(json.dumps({**meta, "kwargs": {"num_beams": 1}}))
    assert Parser(own).inference.num_beams == 1 and Parser(own, num_beams=2).inference.num_beams == 2
    assert Parser(tiny_models["parser"]).inference.num_beams == 4  # none named: amrlib's


def test_multiline_sentence_stays_one_metadata_line(parser):
    [graph] = parser.parse(["I know for them\nto approve"])
    assert graph.splitlines()[0] == "# ::snt I know for them to approve"
    penman.decode(graph)


def test_clipped_sentences_are_flagged_or_failed(tiny_models):
    long = " ".join(["the boy want to go ."] * 12)  # 72 words > max_in_len 48 tokens
    flagged = Parser(tiny_models["parser"]).parse([long, tiny.PAPER_TEXT])
    meta = penman.decode(flagged[0]).metadata
    assert meta["clipped"] == f"{tiny.MAX_IN_LEN}/74 tokens"  # 72 words + <s> + </s>
    assert "clipped" not in penman.decode(flagged[1]).metadata
    strict = Parser(tiny_models["parser"], on_clip="fail")
    out = strict.parse([long])
    assert out == [Failure("parse", f"sentence clipped: 74 tokens, the model reads {tiny.MAX_IN_LEN}")]
    assert strict.stats["clipped"] == 1


def test_out_of_memory_splits_the_batch_down_to_one(tiny_models, monkeypatch):
    parser = Parser(tiny_models["parser"], batch_size=8, num_beams=1)
    sentences = [tiny.PAPER_TEXT, "the boy want to go", tiny.GARBLED_TEXT, "a dog saw the cat"]
    expected = parser.parse(sentences)
    real = parser.inference.model.generate
    sizes = []

    def generate(*args, **kwargs):  # simulated CUDA OOM for any batch of more than one sentence
        sizes.append(kwargs["input_ids"].shape[0])
        if kwargs["input_ids"].shape[0] > 1:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(*args, **kwargs)

    monkeypatch.setattr(parser.inference.model, "generate", generate)
    assert parser.parse(sentences) == expected
    assert sizes[:3] == [4, 2, 1] and sizes.count(1) == 4


def test_one_item_that_always_fails_fails_alone(tiny_models, monkeypatch):
    parser = Parser(tiny_models["parser"], batch_size=8, num_beams=1)
    bad_id = parser.inference.tokenizer.convert_tokens_to_ids("furiously")
    sentences = [tiny.PAPER_TEXT, tiny.GARBLED_TEXT, "the boy want to go"]
    expected = parser.parse(sentences)
    real = parser.inference.model.generate

    def generate(*args, **kwargs):
        if (kwargs["input_ids"] == bad_id).any():
            raise torch.OutOfMemoryError("CUDA out of memory")
        return real(*args, **kwargs)

    monkeypatch.setattr(parser.inference.model, "generate", generate)
    out = parser.parse(sentences)
    assert out[1] == Failure("parse", "out of memory even alone")
    assert out[0] == expected[0] and out[2] == expected[2]


def test_dtype_option(tiny_models):
    parser = Parser(tiny_models["parser"], dtype="bf16", num_beams=1, backend="transformers")
    assert next(parser.inference.model.parameters()).dtype == torch.bfloat16
    assert len(parser.parse([tiny.PAPER_TEXT])) == 1
    with pytest.raises(ValueError, match="unknown dtype"):
        Parser(tiny_models["parser"], dtype="fp8")


def test_parse_spring_needs_transformers_4(tmp_path):
    (tmp_path / "amrlib_meta.json").write_text(
        json.dumps(
            {
                "model_type": "stog",
                "inference_module": ".parse_spring.inference",
                "inference_class": "Inference",
                "model_fn": "model.pt",
            }
        )
    )
    with pytest.raises(ParaAMRError, match=r"parse_spring, which needs transformers < 5"):
        Parser(tmp_path)


def test_missing_release_fails_at_once_with_fetch_command(tmp_path):
    with pytest.raises(ModelNotFoundError, match="paraamr models download parse_xfm_bart_large"):
        Parser(cache_dir=tmp_path)
