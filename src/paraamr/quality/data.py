"""The data shipped with :mod:`paraamr.quality` (training sentences, natural pairs, held-out sets),
and the pairs ``paraamr quality score`` reads (:func:`score_rows`).

The held-out sets A, B and C (a quarter of the natural pairs' sources, :func:`split_sources`) are
never trained or calibrated on; set A guided the training recipe, sets B and C only measure models.

>>> rows = heldout()
>>> len(rows) >= 200, sorted(rows[0])
(True, ['kind', 'label', 'para_text', 'text'])
>>> sorted(HELDOUT_SETS), len(heldout("B")) >= 200, len(heldout("C"))
(['A', 'B', 'C'], True, 351)
>>> [path.name for path in TRAINING_FILES]
['sentences.txt', 'wordnet_sentences.txt']
>>> len(natural_pairs()), len(natural_pairs("train")), len(set_c_sources())
(1401, 1050, 117)
"""

from __future__ import annotations

import csv
import json
import random
import sys
from collections.abc import Iterable
from pathlib import Path

from paraamr.errors import InputError, check_utf8, refuse_packed, refuse_pipes

__all__ = [
    "DATA_DIR", "HELDOUT_SETS", "NATURAL_PAIRS", "PAIR_COLUMNS", "SET_C", "TRAINING_FILES",
    "heldout", "natural_pairs", "read_pairs", "score_rows", "set_c_sources", "split_sources",
]  # fmt: skip

DATA_DIR = Path(__file__).parent / "data"
#: Plain sentences for ``paraamr quality train --input`` (one a line, ``#`` comments).
TRAINING_SENTENCES = DATA_DIR / "sentences.txt"
#: WordNet 3.0's usage examples that are whole sentences (``scripts/wordnet_sentences.py``).
WORDNET_SENTENCES = DATA_DIR / "wordnet_sentences.txt"
#: The default ``--input`` of ``paraamr quality train``.
TRAINING_FILES = (TRAINING_SENTENCES, WORDNET_SENTENCES)
#: Hand-written natural pairs (tab-separated: ``source``, ``candidate``, ``label``, ``kind``).
NATURAL_PAIRS = DATA_DIR / "natural_pairs.tsv"
#: The sources of the natural pairs held out as set C (one a line, ``#`` comments).
SET_C = DATA_DIR / "natural_set_c.txt"
#: The held-out sets by name and file: JSON lines of ``text``, ``para_text``, ``label``, ``kind``
#: (C: the rows of :data:`NATURAL_PAIRS` whose source is in :data:`SET_C`).
HELDOUT_SETS = {"A": DATA_DIR / "heldout.jsonl", "B": DATA_DIR / "heldout_b.jsonl", "C": NATURAL_PAIRS}
#: The share of the natural sources in set C, and the seed that drew them (:func:`split_sources`).
SET_C_SHARE, SET_C_SEED = 0.25, 0


def heldout(name: str = "A") -> list[dict]:
    """The pairs of held-out set ``name`` (:data:`HELDOUT_SETS`), in file order."""
    if name == "C":
        return natural_pairs("C")
    with HELDOUT_SETS[name].open(encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def natural_pairs(part: str | None = None) -> list[dict]:
    """The natural pairs as held-out rows (``text``, ``para_text``, ``label`` 0/1, ``kind``), in file
    order: all of them, those of the set-C sources (``"C"``) or those of the others (``"train"``)."""
    rows = read_pairs(NATURAL_PAIRS)
    if part is None:
        return rows
    held = set_c_sources()
    return [r for r in rows if (r["text"] in held) == (part == "C")]


def read_pairs(path: str | Path) -> list[dict]:
    """Labelled pairs of a tab-separated file with the columns ``source``, ``candidate``, ``label``
    (1 valid, 0 invalid) and ``kind``, as rows (``text``, ``para_text``, ``label``, ``kind``); a bad
    row raises :class:`InputError` naming the file and line."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8-sig", newline="") as stream:
            reader = csv.DictReader(stream, delimiter="\t", quoting=csv.QUOTE_NONE)
            if reader.fieldnames != list(PAIR_COLUMNS):
                raise InputError(f"{path}: the header must be {' '.join(PAIR_COLUMNS)} (tab-separated)")
            return [_pair(row, path, number) for number, row in enumerate(reader, 2)]
    except UnicodeDecodeError as err:
        check_utf8(path)  # the line, and the byte's offset in the file (err.start is in a buffer)
        raise InputError(f"{path}: not UTF-8 text ({err.reason})") from err


#: The header of a labelled pair file (:func:`read_pairs`).
PAIR_COLUMNS = ("source", "candidate", "label", "kind")


def _pair(row: dict, path: Path, number: int) -> dict:
    if any(not row.get(column) for column in PAIR_COLUMNS) or row["label"] not in ("0", "1") or None in row:
        raise InputError(f"{path}:{number}: a row needs a source, a candidate, label 0 or 1 and a kind")
    label = int(row["label"])
    return {"text": row["source"], "para_text": row["candidate"], "label": label, "kind": row["kind"]}


def set_c_sources() -> frozenset[str]:
    """The sources of set C, as recorded in :data:`SET_C`."""
    lines = SET_C.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line.strip() and not line.startswith("#"))


def split_sources(rows: Iterable[dict], share: float = SET_C_SHARE, seed: int = SET_C_SEED) -> list[str]:
    """A ``share`` of the sources of ``rows`` drawn within each kind of their invalid pair (rounded
    per kind), sorted: how :data:`SET_C` was drawn.

    >>> rows = [{"text": f"s{i}", "label": 0, "kind": "ab"[i % 2]} for i in range(8)]
    >>> split_sources(rows, 0.5)
    ['s0', 's1', 's3', 's4']
    """
    by_kind: dict[str, list[str]] = {}
    for row in rows:
        if row["label"] == 0:
            by_kind.setdefault(row["kind"], []).append(row["text"])
    rng = random.Random(seed)
    chosen: list[str] = []
    for _kind, sources in sorted(by_kind.items()):
        ordered = sorted(set(sources))
        rng.shuffle(ordered)
        chosen += ordered[: round(len(ordered) * share)]
    return sorted(chosen)


def score_rows(path: str) -> list[dict]:
    """The rows ``paraamr quality score`` reads at ``path``: JSON lines with ``text`` and
    ``para_text`` (``-``: stdin), labelled pairs as ``--natural`` reads them (a .tsv headed
    ``source candidate label kind``: :func:`read_pairs`), or the pairs of a two-column file, a
    release file (gzip and zip too) or a dataset folder, as evaluate reads them (with their record's
    ``id`` and ``perplexity`` where they have them)."""
    from paraamr.metrics.report import read_pairs as read_unlabelled
    from paraamr.quality.triplets import json_lines

    if path != "-":
        refuse_pipes(path, way_out="save it to a file first, or give JSON lines on stdin (--input -)")
        refuse_packed(path, "only gzip and zip are unpacked", unpacked=(".gz", ".zip"))  # (not UTF-8)
    suffix = "" if path == "-" else Path(path).suffix.lower()
    head = _first_line(path).split("\t") if suffix == ".tsv" else []
    if head == list(PAIR_COLUMNS):
        return read_pairs(path)
    names = {name.strip().lower() for name in head}
    if names & {"candidate", "label", "kind"} or " ".join(head).lower().split() == list(PAIR_COLUMNS):
        raise InputError(
            f"{path}, line 1: a header of labelled pairs ({', '.join(head)}) must be "
            f"{' '.join(PAIR_COLUMNS)}, tab-separated (unlabelled pairs take no header)"
        )
    if path == "-" or not (Path(path).is_dir() or suffix in (".tsv", ".csv", ".gz", ".zip")):
        name = "<stdin>" if path == "-" else path
        try:
            stream = sys.stdin if path == "-" else open(path, encoding="utf-8-sig")  # noqa: SIM115
            with stream:  # a row without the texts is a failure row of its own (quality score)
                rows = list(json_lines(stream, name, (), labels=True))
            pairs = (isinstance(r.get("text"), str) and isinstance(r.get("para_text"), str) for r in rows)
            if rows and not any(pairs):
                raise InputError(f"{name}: no row has string 'text' and 'para_text' fields")
            return rows
        except UnicodeDecodeError as err:
            if path != "-":
                check_utf8(path)  # the line, and the byte's offset in the file (not in a buffer)
            raise InputError(f"{name}: not UTF-8 text ({err.reason})") from err
        except InputError:
            if path == "-" or _pair_lines(path):
                raise
    rows = []
    for pair in read_unlabelled(path):  # with the record's id and the paraphrase's perplexity, where held
        known = {"id": pair.id} if pair.id is not None else {}
        known |= {"perplexity": pair.perplexity} if pair.perplexity is not None else {}
        rows.append({**known, "text": pair.source, "para_text": pair.paraphrase})
    return rows


def _first_line(path: str) -> str:
    """The first line of ``path`` that is not blank, without its end ("" for none)."""
    with open(path, encoding="utf-8-sig") as stream:
        return next((line for line in stream if line.strip()), "").rstrip("\r\n")


def _pair_lines(path: str) -> bool:
    """Whether ``path`` starts with a JSON line of a pair (not a release record, not a line of
    two columns): its own errors stand."""
    try:
        row = json.loads(_first_line(path))
    except json.JSONDecodeError:
        return False
    return not (isinstance(row, dict) and "paraphrases" in row and "para_text" not in row)
