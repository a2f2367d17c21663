"""(anchor, positive, negative) triplets from plain sentences and ParaAMR records (ParaQD, §3).

For each sentence, every negative operator that applies gives a negative, paired with a positive
drawn from the positive operators that apply (weights falling with use), or with the sentence
itself. Rounds with new seeds run until every negative kind has its share of ``max_triplets``; the
triplets are then taken in turns from each kind. The same inputs and seed give the same triplets.

>>> from paraamr.quality.operators import number_change, punctuation_case
>>> ts = build_triplets(["John ate 5 apples."], seed=0, rounds=1,
...                     positives={"punct": punctuation_case}, negatives={"number": number_change})
>>> [(t.anchor, t.positive, t.negative, t.negative_op) for t in ts]
[('John ate 5 apples.', 'John ate 5 apples!', 'John ate 6 apples.', 'number')]
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import zip_longest
from pathlib import Path

from paraamr.errors import InputError, check_utf8
from paraamr.quality.analysis import parsed
from paraamr.quality.evaluation import LABEL_RULE, is_label
from paraamr.quality.operators import NEGATIVE, POSITIVE, Operator, paraamr_paraphrase
from paraamr.records import normalize
from paraamr.texts import printable, text_problem


@dataclass(frozen=True)
class Triplet:
    """One training example: ``positive`` keeps the meaning of ``anchor``, ``negative`` changes it."""

    anchor: str
    positive: str
    negative: str
    positive_op: str
    negative_op: str


def build_triplets(
    sentences: Iterable[str],
    *,
    seed: int = 0,
    max_triplets: int | None = None,
    rounds: int = 20,
    paraphrases: Mapping[str, Sequence[str]] | None = None,
    positives: Mapping[str, Operator] | None = None,
    negatives: Mapping[str, Operator] | None = None,
    gate: Callable[[list[tuple[str, str, str]]], list[bool]] | None = None,
    progress: bool = False,
) -> list[Triplet]:
    """Triplets for ``sentences`` (blank and repeated ones skipped), shuffled with ``seed``.

    ``paraphrases`` maps sentences to ParaAMR paraphrases (positive operator ``paraamr``);
    ``positives``/``negatives`` default to all the operators. ``gate`` (a
    :class:`~paraamr.quality.gate.SimilarityGate`) says which of each round's positives to keep.
    """
    anchors = list(dict.fromkeys(s.strip() for s in sentences if s.strip()))
    positives = dict(POSITIVE if positives is None else positives)
    if paraphrases:
        positives["paraamr"] = paraamr_paraphrase(paraphrases)
    negatives = NEGATIVE if negatives is None else negatives
    seen: dict[tuple[str, str, str], Triplet] = {}
    by_kind: dict[str, list[Triplet]] = {name: [] for name in negatives}
    used: Counter[str] = Counter()
    with parsed(anchors):
        for round_ in range(rounds):
            added = 0
            for anchor, rng, pos in draw_round(anchors, seed, round_, positives, gate, progress):
                for neg_name, negative, pos_name, positive in draw_negatives(
                    anchor, rng, pos, negatives, used
                ):
                    key = (anchor, positive, negative)
                    if key not in seen and normalize(negative) != normalize(positive):
                        seen[key] = Triplet(anchor, positive, negative, pos_name, neg_name)
                        by_kind[neg_name].append(seen[key])
                        used[pos_name] += 1
                        added += 1
            if not added or (max_triplets is not None and _filled(by_kind, max_triplets)):
                break
    return _in_turns(by_kind, seed, max_triplets)


def draw_round(
    anchors: Sequence[str],
    seed: int,
    round_: int,
    positives: Mapping[str, Operator],
    gate: Callable[[list[tuple[str, str, str]]], list[bool]] | None = None,
    progress: bool = False,
) -> list[tuple[str, random.Random, list[tuple[str, str]]]]:
    """Round ``round_`` of :func:`build_triplets` up to its negatives: each anchor, its rng (seeded
    by ``(seed, round_, anchor)``) and the ``(operator, output)`` of its positives that ``gate`` keeps."""
    from tqdm.auto import tqdm

    drawn = []
    for anchor in tqdm(anchors, desc=f"triplets, round {round_ + 1}", disable=not progress, leave=False):
        rng = random.Random(f"{seed}:{round_}:{anchor}")
        drawn.append(
            (anchor, rng, [(name, out) for name, op in positives.items() if (out := op(anchor, rng))])
        )
    if gate is None:
        return drawn
    kept = iter(gate([(name, anchor, out) for anchor, _, pos in drawn for name, out in pos]))
    return [(anchor, rng, [p for p in pos if next(kept)]) for anchor, rng, pos in drawn]


def draw_negatives(
    anchor: str,
    rng: random.Random,
    pos: Sequence[tuple[str, str]],
    negatives: Mapping[str, Operator],
    used: Counter[str],
) -> Iterator[tuple[str, str, str, str]]:
    """``(operator, negative, positive operator, positive)`` for each negative operator that applies
    to ``anchor``: the positive drawn from ``pos`` with weights falling with ``used``, or the anchor
    itself when ``pos`` is empty."""
    for name, op in negatives.items():
        negative = op(anchor, rng)
        if negative is not None:
            yield name, negative, *(_pick_positive(pos, used, rng) if pos else ("identity", anchor))


def _filled(by_kind: Mapping[str, list], total: int) -> bool:
    """Whether every kind that occurs has its equal share of ``total`` triplets."""
    share = -(-total // max(1, sum(1 for found in by_kind.values() if found)))
    return all(len(found) >= share for found in by_kind.values() if found)


def _in_turns(by_kind: Mapping[str, list[Triplet]], seed: int, total: int | None) -> list[Triplet]:
    """Up to ``total`` triplets taken one kind after the other (each kind's own order shuffled), shuffled."""
    rng = random.Random(seed)
    queues = [rng.sample(found, len(found)) for _, found in sorted(by_kind.items()) if found]
    turns = zip_longest(*(reversed(queue) for queue in queues))  # each queue from its end
    chosen = [triplet for turn in turns for triplet in turn if triplet is not None][:total]
    rng.shuffle(chosen)
    return chosen


#: Relative weight of a positive against the others (1).
_WEIGHT = {"punctuation_case": 0.25, "typo": 0.5, "synonym": 2.0, "phrase_synonym": 2.0}


def _pick_positive(options: list[tuple[str, str]], used: Counter, rng: random.Random) -> tuple[str, str]:
    weights = [_WEIGHT.get(name, 1.0) / (1 + used[name]) for name, _ in options]
    return rng.choices(options, weights=weights)[0]


def unrelated_sentence(pool: Sequence[str]) -> Operator:
    """An operator whose output is a sentence of ``pool`` other than its input and of about as many
    words (within a quarter of its count, at least 2 words either way); None when there is none.

    >>> unrelated_sentence(["prices rose again in May", "hi"])("the cat sat on the mat", random.Random(0))
    'prices rose again in May'
    """
    by_length: dict[int, list[str]] = {}
    for sentence in dict.fromkeys(pool):
        by_length.setdefault(len(sentence.split()), []).append(sentence)

    def unrelated(text: str, rng: random.Random) -> str | None:
        n = len(text.split())
        spread = max(2, round(n * 0.25))
        near = [s for k in range(n - spread, n + spread + 1) for s in by_length.get(k, ()) if s != text]
        return rng.choice(near) if near else None

    return unrelated


def unrelated_pairs(sentences: Sequence[str], pool: Sequence[str], *, seed: int = 0) -> list[tuple[str, str]]:
    """Each of ``sentences`` with its :func:`unrelated_sentence` of ``pool``, drawn with ``seed``; a
    sentence with no such partner is left out.

    >>> unrelated_pairs(["the cat sat on the mat"], ["prices rose again in May", "hi"])
    [('the cat sat on the mat', 'prices rose again in May')]
    """
    rng, unrelated = random.Random(f"unrelated:{seed}"), unrelated_sentence(pool)
    return [(sentence, other) for sentence in sentences if (other := unrelated(sentence, rng)) is not None]


def extra_triplets(
    triplets: Sequence[Triplet], negative: Operator, count: int, *, name: str, seed: int = 0
) -> list[Triplet]:
    """Up to ``count`` triplets of one negative kind outside the equal shares: the anchor and
    positive of one of ``triplets`` (a different anchor each, in an order drawn with ``seed``) and
    ``negative(anchor, rng)`` (operator ``name``), where it gives something else than the positive.

    >>> ts = [Triplet("the cat sat on the mat", "a cat sat on the mat", "the dog sat", "p", "n")]
    >>> [t.negative for t in extra_triplets(ts, unrelated_sentence(["prices rose again in May"]), 1,
    ...                                     name="unrelated")]
    ['prices rose again in May']
    """
    if count <= 0:
        return []
    firsts = list({t.anchor: t for t in triplets}.values())
    found = []
    for t in random.Random(f"{name}-anchors:{seed}").sample(firsts, len(firsts)):
        out = negative(t.anchor, random.Random(f"{name}:{seed}:{t.anchor}"))
        if out is not None and normalize(out) != normalize(t.positive):
            found.append(Triplet(t.anchor, t.positive, out, t.positive_op, name))
            if len(found) == count:
                break
    return found


def operator_counts(triplets: Iterable[Triplet]) -> dict[str, dict[str, int]]:
    """How many triplets each positive and negative operator produced.

    >>> operator_counts([Triplet("a", "b", "c", "synonym", "number")])
    {'positive': {'synonym': 1}, 'negative': {'number': 1}}
    """
    triplets = list(triplets)
    return {
        "positive": dict(Counter(t.positive_op for t in triplets).most_common()),
        "negative": dict(Counter(t.negative_op for t in triplets).most_common()),
    }


def training_sentences(paths: Sequence[str | Path], max_chars: int | None) -> tuple[list[str], list[dict]]:
    """The sentences of ``paths`` and a failure row for each one that cannot be trained on
    (:func:`paraamr.texts.text_problem`: longer than ``max_chars``, a NUL character)."""
    sentences, failures = [], []
    for path in paths:
        for sentence in read_sentences(path):
            problem = text_problem(sentence, max_chars)
            if problem is None:
                sentences.append(sentence)
            else:
                text = printable(sentence[:200])
                failures.append({"input": str(path), "text": text, "chars": len(sentence), "reason": problem})
    return sentences, failures


def read_sentences(path: str | Path) -> Iterator[str]:
    """Non-empty lines of a text file (``#`` comment lines skipped), naming the file on bad UTF-8."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as err:
        check_utf8(path)  # the line and the byte's offset
        raise InputError(f"{path}: not UTF-8 text ({err.reason})") from err
    for line in lines:
        if line.strip() and not line.lstrip().startswith("#"):
            yield line.strip()


def read_paraphrases(path: str | Path) -> dict[str, list[str]]:
    """``{text: [para_text, ...]}`` of ParaAMR records (JSON lines, or a dataset folder of Parquet
    shards); a malformed line raises :class:`InputError` naming the file and line."""
    path = Path(path)
    rows: Iterable[dict]
    if path.is_dir():
        import pyarrow.parquet as pq

        shards = sorted((path / "data" / "default").glob("*.parquet"))
        if not shards:
            raise InputError(f"{path}: no data/default/*.parquet shards (expected a paraamr dataset folder)")
        rows = (row for shard in shards for row in pq.read_table(shard).to_pylist())
    else:
        rows = _json_lines(path)
    table: dict[str, list[str]] = {}
    for row in rows:
        paras = [p["para_text"] for p in row.get("paraphrases") or [] if p.get("para_text")]
        if paras:
            table.setdefault(row["text"], []).extend(paras)
    return table


def json_lines(
    stream: Iterable[str], name: str, fields: Sequence[str] = ("text",), *, labels: bool = False
) -> Iterator[dict]:
    """JSON objects of the non-blank lines of ``stream``; a line that is not an object with string
    ``fields``, or (with ``labels``) whose ``label``, where it has one, is not 1 or 0, raises
    :class:`InputError` naming ``name`` and the line.

    >>> list(json_lines(['{"text": "a"}', "", '{"text": 1}'], "in.jsonl"))
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: in.jsonl:3: a row needs string 'text' field(s)
    >>> list(json_lines(['{"text": "a", "label": "0"}'], "in.jsonl", labels=True))
    Traceback (most recent call last):
    ...
    paraamr.errors.InputError: in.jsonl:1: label '0': labels are 1 (valid) or 0 (invalid)
    """
    for number, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"{name}:{number}: not JSON ({err.msg})") from err
        if not isinstance(row, dict) or not all(isinstance(row.get(f), str) for f in fields):
            wanted = " and ".join(map(repr, fields))
            raise InputError(f"{name}:{number}: a row needs string {wanted} field(s)")
        if labels and "label" in row and not is_label(row["label"]):
            raise InputError(f"{name}:{number}: label {row['label']!r}: {LABEL_RULE}")
        yield row


def _json_lines(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as stream:
        yield from json_lines(stream, str(path))


def write_triplets(triplets: Iterable[Triplet], path: str | Path) -> None:
    """Write triplets as JSON lines (``anchor``, ``positive``, ``negative``, operator names),
    atomically (:func:`~paraamr.atomic.atomic_file`)."""
    from paraamr.atomic import atomic_file

    with atomic_file(path) as tmp, tmp.open("w", encoding="utf-8") as stream:
        for triplet in triplets:
            stream.write(json.dumps(asdict(triplet), ensure_ascii=False) + "\n")
