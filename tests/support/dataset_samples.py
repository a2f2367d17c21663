"""Sample data of the dataset tests (the fixtures are in dataset_fixtures.py, a plugin of
tests/conftest.py); the files are in tests/dataset/data."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).parents[1] / "dataset" / "data"
#: Six sources in the release format (the first is the release README's example, with a
#: paraphrase of perplexity 125 > 120); 11 paraphrases. Counts by hand are in the tests.
RELEASE = DATA / "release_sample.jsonl"


def _para(text, ppl, focus, sim=None, quality=None):
    return {
        "para_text": text,
        "perplexity": ppl,
        "focus": focus,
        "amr": f"(f / {focus})",
        "similarity": sim,
        "quality": quality,
    }


#: Records of the Parquet folder, by split: every field of our schema, some nulls (scores exact in float32).
FOLDER_RECORDS = {
    "train": [
        {
            "id": "id-know",
            "text": "I know they need it.",
            "amr": "(k / know-01 :ARG0 (i / i))",
            "paraphrases": [
                _para("They need it, I know.", 40.5, "need-01", 0.875, 0.25),
                _para("What they need, I know, is it.", 130.0, "it", 0.75, -0.125),
            ],
        },
        {"id": "id-rain", "text": "It rained.", "amr": "(r / rain-01)", "paraphrases": []},
        {
            "id": "id-cat",
            "text": "The cat sat.",
            "amr": "(s / sit-01 :ARG1 (c / cat))",
            "paraphrases": [
                _para("Sitting was the cat.", 99.0, "cat"),
                _para("The cat was sitting.", 20.0, "cat", 0.9375, None),
                _para("A cat sat.", 80.0, "cat", None, 0.5),
            ],
        },
    ],
    "validation": [
        {
            "id": "id-dog",
            "text": "Dogs bark.",
            "amr": "(b / bark-01 :ARG0 (d / dog))",
            "paraphrases": [_para("Barking is what dogs do.", 115.0, "dog", 0.8125, 0.375)],
        },
    ],
}


#: The input sentences of the generated folder.
SENTENCES = [
    "The boy wants to go.",
    "She sold the house last year.",
    "Dogs bark at night.",
    "I know they will need documents.",
]

#: Sentences of :func:`release_bytes`.
RELEASE_SENTENCES = ["The cat sat on the mat .", "A dog ran in the park .", "She reads a good book ."]


def release_bytes(n: int, extra: bytes = b"") -> bytes:
    """``n`` sources of release JSON lines (one paraphrase each), then ``extra``."""
    rows = [
        {
            "text": f"{RELEASE_SENTENCES[i % 3]} {i}",
            "paraphrases": [{"para_text": f"again {i}", "perplexity": 20.0}],
        }
        for i in range(n)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows).encode() + extra
