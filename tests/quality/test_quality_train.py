"""Training on a tiny sample through the CLI and the library; the trained folder scored and loaded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from paraamr.cli import main
from paraamr.quality import QualityScorer
from paraamr.quality.evaluation import triplet_figures
from paraamr.quality.train import INFO_FILE, TrainSettings, train
from paraamr.quality.triplets import build_triplets, read_sentences

DATA = Path(__file__).parent / "data"
TINY = DATA / "tiny_sentences.txt"
SETTINGS = TrainSettings(batch_size=8, learning_rate=1e-4, seed=0, threads=1)
N = 24


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model trained by ``paraamr quality train`` on 24 triplets (3 steps)."""
    out = tmp_path_factory.mktemp("quality") / "model"
    argv = ["quality", "train", "--input", str(TINY), "--output", str(out), "--max-triplets", str(N),
            "--batch-size", "8", "--lr", "1e-4", "--seed", "0", "--threads", "1", "--no-progress",
            "--save-triplets", str(out.parent / "triplets.jsonl")]  # fmt: skip
    assert main(argv) == 0
    return out


@pytest.fixture(scope="module")
def triplets():
    return build_triplets(read_sentences(TINY), seed=0, max_triplets=N)


def figures(model, triplets):
    scorer = QualityScorer(model)
    a, p, n = (scorer.encode([getattr(t, f) for t in triplets]) for f in ("anchor", "positive", "negative"))
    return triplet_figures(a, p, n, margin=0.5)


def test_training_lowers_the_loss_on_its_triplets(trained, triplets):
    before, after = figures("all-MiniLM-L6-v2", triplets), figures(trained, triplets)
    assert after["loss"] < before["loss"]
    assert after["separation"] > before["separation"]


def test_model_folder_has_card_and_summary(trained):
    info = json.loads((trained / INFO_FILE).read_text())
    assert info["triplets"] == N and info["steps"] == 3 and info["settings"]["margin"] == 0.5
    assert len(info["step_losses"]) == 3 and info["torch_threads"] == 1
    card = (trained / "README.md").read_text()
    assert "## How this model was trained (paraamr quality train)" in card
    assert f"{N} (anchor, positive, negative) triplets from `{TINY}`" in card
    from sentence_transformers import SentenceTransformer

    assert SentenceTransformer(str(trained), device="cpu").encode(["x"]).shape == (1, 384)


def test_same_seed_same_model(trained, triplets, tmp_path):
    """The library run with the CLI's settings and triplets reproduces the CLI's model."""
    saved = [json.loads(line) for line in (trained.parent / "triplets.jsonl").read_text().splitlines()]
    assert [t["negative"] for t in saved] == [t.negative for t in triplets]
    train(triplets, tmp_path / "again", SETTINGS, progress=False, sources=[TINY])
    texts = ["The dog chased the cat.", "Nobody came to the party on Friday."]
    first, again = QualityScorer(trained).encode(texts), QualityScorer(tmp_path / "again").encode(texts)
    assert np.allclose(first, again, atol=1e-6)
    assert not np.allclose(first, QualityScorer("all-MiniLM-L6-v2").encode(texts), atol=1e-4)


def test_score_command_adds_quality_and_figures(trained, tmp_path, capsys):
    rows = [
        {"text": "The dog chased the cat.", "para_text": "The cat was chased by the dog.", "label": 1},
        {"text": "The dog chased the cat.", "para_text": "The dog did not chase the cat.", "label": 0},
    ]
    src = tmp_path / "pairs.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "scored.jsonl"
    assert main(["quality", "score", "--model", str(trained), "--input", str(src), "--output", str(out)]) == 0
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    expected = QualityScorer(trained).score([r["text"] for r in rows], [r["para_text"] for r in rows])
    assert [r["quality"] for r in scored] == pytest.approx(expected, abs=1e-5)
    assert [r["label"] for r in scored] == [1, 0]
    err = capsys.readouterr().err
    figures = json.loads(next(line for line in err.splitlines() if line.startswith('{"separation"')))
    assert figures["separation"] == pytest.approx(expected[0] - expected[1], abs=1e-6)
    assert figures["signature"].startswith("model:model|sim:cos|scale:1|")


def test_score_command_names_the_bad_line(tmp_path):
    from paraamr.errors import InputError

    src = tmp_path / "pairs.jsonl"
    src.write_text('{"text": "a", "para_text": "b"}\n{"text": "a"}\n')
    with pytest.raises(InputError, match=r"pairs\.jsonl:2: a row needs string 'text' and 'para_text' field"):
        main(["quality", "score", "--input", str(src)])


def test_training_on_nothing_is_a_clear_error(tmp_path):
    from paraamr.errors import InputError

    with pytest.raises(InputError, match="no triplets"):
        train([], tmp_path / "m", SETTINGS)
