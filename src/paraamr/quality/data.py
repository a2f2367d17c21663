"""The data shipped with :mod:`paraamr.quality`: training sentences and the held-out labelled set.

``sentences.txt`` holds plain English sentences to build training triplets from; ``heldout.jsonl``
holds hand-written (source, paraphrase) pairs labelled 1 (valid) or 0 (invalid), with the kind of
change (``syntax``, ``lexical``, ``surface`` for valid pairs; ``number``, ``entity``, ``swap``,
``negation``, ``antonym``, ``deletion``, ``role``, ``unit`` for invalid ones). The held-out set is
never used for training; no sentence of it occurs in ``sentences.txt``.

>>> rows = heldout()
>>> len(rows) >= 200, sorted(rows[0])
(True, ['kind', 'label', 'para_text', 'text'])
>>> TRAINING_SENTENCES.name
'sentences.txt'
"""

from __future__ import annotations

import json
from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
#: Plain sentences for ``paraamr quality train --input`` (one a line, ``#`` comments).
TRAINING_SENTENCES = DATA_DIR / "sentences.txt"
#: The held-out labelled pairs (JSON lines: ``text``, ``para_text``, ``label``, ``kind``).
HELDOUT = DATA_DIR / "heldout.jsonl"


def heldout() -> list[dict]:
    """The held-out pairs, in file order."""
    with HELDOUT.open(encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]
