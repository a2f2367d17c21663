"""The data shipped with :mod:`paraamr.quality`: training sentences and the held-out labelled set.

``sentences.txt`` holds plain English sentences written for paraamr and ``wordnet_sentences.txt``
WordNet 3.0's usage examples that are whole sentences (``scripts/wordnet_sentences.py``, with
WordNet's license): the default input of ``paraamr quality train``. The held-out sets
``heldout.jsonl`` (set A) and ``heldout_b.jsonl`` (set B) hold hand-written (source, paraphrase)
pairs labelled 1 (valid) or 0 (invalid), with the kind of change (``paraphrase``, ``typo``,
``number_format``, ``surface``, ``contraction`` for valid pairs; ``antonym``, ``noun``, ``role``,
``date_time``, ``unit``, ``scramble``, ``negation``, ``number``, ``entity`` for invalid ones).
Neither is used for training or calibration, and no sentence of them occurs in the training
sentences. Set A guided the choice of the training recipe; set B, written later by someone who
never saw a model's scores, only measures finished models, so its figures carry no such bias.

>>> rows = heldout()
>>> len(rows) >= 200, sorted(rows[0])
(True, ['kind', 'label', 'para_text', 'text'])
>>> sorted(HELDOUT_SETS), len(heldout("B")) >= 200
(['A', 'B'], True)
>>> [path.name for path in TRAINING_FILES]
['sentences.txt', 'wordnet_sentences.txt']
"""

from __future__ import annotations

import json
from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
#: Plain sentences for ``paraamr quality train --input`` (one a line, ``#`` comments).
TRAINING_SENTENCES = DATA_DIR / "sentences.txt"
#: WordNet 3.0's usage examples that are whole sentences (``scripts/wordnet_sentences.py``).
WORDNET_SENTENCES = DATA_DIR / "wordnet_sentences.txt"
#: The default ``--input`` of ``paraamr quality train``.
TRAINING_FILES = (TRAINING_SENTENCES, WORDNET_SENTENCES)
#: The held-out labelled pairs (JSON lines: ``text``, ``para_text``, ``label``, ``kind``).
HELDOUT = DATA_DIR / "heldout.jsonl"
#: The held-out sets by name: A guided the recipe, B only measures finished models.
HELDOUT_SETS = {"A": HELDOUT, "B": DATA_DIR / "heldout_b.jsonl"}


def heldout(name: str = "A") -> list[dict]:
    """The pairs of held-out set ``name`` (:data:`HELDOUT_SETS`), in file order."""
    with HELDOUT_SETS[name].open(encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]
