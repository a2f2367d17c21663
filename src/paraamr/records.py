"""The record schema shared by the generator, the dataset builder and the metrics (see DESIGN.md).

>>> text_id("I know.")
'dff1f819b8599b45'
>>> normalize("  Hello\\u00a0  WORLD ")
'hello world'
>>> PAIRS_SCHEMA.names
['id', 'text', 'amr', 'para_text', 'perplexity', 'focus', 'para_amr', 'similarity', 'quality']
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

_SPACES = re.compile(r"\s+")

#: The paper's BibTeX (ACL Anthology), the one citation of the card, the builder, the metric modules
#: and the README.
CITATION = (
    "@inproceedings{huang-etal-2023-paraamr,\n"
    '  title = "{P}ara{AMR}: A Large-Scale Syntactically Diverse Paraphrase Dataset by {AMR} '
    'Back-Translation",\n'
    '  author = "Huang, Kuan-Hao and Iyer, Varun and Hsu, I-Hung and Kumar, Anoop and Chang, '
    'Kai-Wei and Galstyan, Aram",\n'
    '  booktitle = "Proceedings of the 61st Annual Meeting of the Association for Computational '
    'Linguistics (Volume 1: Long Papers)",\n'
    '  year = "2023",\n'
    '  pages = "8047--8061",\n'
    '  eprint = "2305.16585",\n'
    '  archivePrefix = "arXiv",\n'
    "}\n"
)


def split_names(
    split: str = "train", validation_fraction: float = 0.0, test_fraction: float = 0.0
) -> list[str]:
    """The splits a run writes: ``split``, then ``validation`` and ``test`` when their fraction is
    above 0 (rows go to each by id: :func:`paraamr.builder.rows.split_of`).

    >>> split_names("train", test_fraction=0.1)
    ['train', 'test']
    """
    names = [split]
    names += ["validation"] if validation_fraction > 0 else []
    names += ["test"] if test_fraction > 0 else []
    return names


def text_id(text: str) -> str:
    """The record id of a source text: ``sha1(text as UTF-8).hexdigest()[:16]``."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def normalize(text: str) -> str:
    """The one lookup key for matching texts: Unicode NFKC, lowercased, whitespace collapsed."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


PARAPHRASE_TYPE = pa.struct(
    [
        ("para_text", pa.string()),
        ("perplexity", pa.float64()),
        ("focus", pa.string()),
        ("amr", pa.string()),
        ("similarity", pa.float32()),
        ("quality", pa.float32()),
    ]
)

DEFAULT_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("text", pa.string()),
        ("amr", pa.string()),
        ("paraphrases", pa.list_(PARAPHRASE_TYPE)),
    ]
)

#: One row per paraphrase: the record's ``id``, ``text`` and ``amr``, then the fields of
#: :data:`PARAPHRASE_TYPE` in order, its ``amr`` named ``para_amr`` (as :func:`to_pairs` writes them).
PAIRS_SCHEMA = pa.schema(
    list(DEFAULT_SCHEMA)[:3]
    + [field.with_name("para_amr") if field.name == "amr" else field for field in PARAPHRASE_TYPE]
)


#: The columns whose run of equal values is one source's rows in ``pairs``: shards are cut between
#: sources, so each file regroups on its own (:func:`paraamr.sources.iter_records`).
PAIRS_SOURCE = ("id", "text")


def to_pairs(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The ``pairs`` rows of one ``default`` record, one per paraphrase, in order."""
    for para in record["paraphrases"]:
        yield {
            "id": record["id"],
            "text": record["text"],
            "amr": record.get("amr"),
            "para_text": para["para_text"],
            "perplexity": para.get("perplexity"),
            "focus": para.get("focus"),
            "para_amr": para.get("amr"),
            "similarity": para.get("similarity"),
            "quality": para.get("quality"),
        }
