"""Augment a Hugging Face dataset with ParaAMR paraphrases, REDA or REDA+NG.

:func:`augment` keeps every input row (first, unchanged, ``augmented=False``) and adds, after it,
up to ``n`` new texts per text column, each in a copy of the row with all other columns (labels
included) kept. With two text columns (a sentence pair, as MRPC, QQP or RTE) each side is augmented
and crossed with the other side as REDA does: ``(a', b)`` for each new ``a'`` and ``(a, b')`` for
each new ``b'``. Two columns are added: ``augmented`` (bool) and ``source_index`` (the row's
index in the input). Added rows that repeat a row already there (texts compared by
:func:`paraamr.records.normalize`) are removed; input rows never are.

Rows whose texts are missing (null), not strings or empty are kept as they are, not augmented, and
reported by index in :attr:`Augmented.failures`. Results do not depend on ``num_proc``.

>>> from datasets import Dataset
>>> table = {"quick": ("fast",), "fox": ("dog",), "jumps": ("leaps",)}
>>> reda = REDA(synonyms=lambda w: table.get(w.lower(), ()))
>>> data = Dataset.from_dict({"sentence": ["The quick brown fox jumps high", ""], "label": [1, 0]})
>>> result = augment(data, method="reda", n=2, reda=reda)
>>> result.dataset.select_columns(["augmented", "label", "source_index"]).to_dict()
{'augmented': [False, True, True, False], 'label': [1, 1, 1, 0], 'source_index': [0, 0, 0, 1]}
>>> result.failures
[{'index': 1, 'column': 'sentence', 'id': 'da39a3ee5e6b4b0d', 'text': '', 'raw_b64': None, \
'stage': 'augment', 'reason': 'empty text'}]
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

from paraamr.augment.languages import Tokenizer
from paraamr.augment.ngram import IN_SAMPLE, NgramLM
from paraamr.augment.reda import REDA, paper_recipe
from paraamr.augment.source import ParaphraseIndex
from paraamr.errors import InputError
from paraamr.options import check_number
from paraamr.records import normalize, text_id

if TYPE_CHECKING:
    from datasets import Dataset

METHODS = ("paraamr", "reda", "reda-ng")
#: Recipes of outputs per operator (REDA methods): the paper's, by training-set size.
RECIPES = ("paper",)
#: Text columns recognized without ``columns=``, in this order: pairs first (GLUE, SNLI, PAWS names).
KNOWN_COLUMNS = (
    ("sentence1", "sentence2"),
    ("question1", "question2"),
    ("premise", "hypothesis"),
    ("text_a", "text_b"),
    ("question", "sentence"),
    ("sentence",),
    ("text",),
    ("question",),
)
ADDED_COLUMNS = ("augmented", "source_index")
_FAILURE = "_paraamr_failure"


def detect_columns(names: Sequence[str]) -> tuple[str, ...]:
    """The text columns among ``names``: the first match in :data:`KNOWN_COLUMNS`.

    >>> detect_columns(["idx", "sentence1", "sentence2", "label"])
    ('sentence1', 'sentence2')
    """
    for candidate in KNOWN_COLUMNS:
        if all(name in names for name in candidate):
            return candidate
    raise InputError(
        f"cannot tell the text columns among {list(names)}: pass one or two with --columns "
        f"(recognized: {', '.join('/'.join(c) for c in KNOWN_COLUMNS)})"
    )


def check_columns(features: Mapping[str, Any], columns: Sequence[str]) -> tuple[str, ...]:
    """``columns`` as a tuple, after checking they exist in ``features`` (a dataset's) and hold
    text, and that the added columns do not exist."""
    names = list(features)
    if not 1 <= len(columns) <= 2:
        raise InputError(f"augment one text column or a pair, got {len(columns)}: {list(columns)}")
    if len(set(columns)) < len(columns):  # a pair of a column with itself: each text crossed with itself
        raise InputError(f"a pair of two different columns, got {list(columns)}")
    missing = [name for name in columns if name not in names]
    if missing:
        raise InputError(f"no column {', '.join(map(repr, missing))} in the dataset (columns: {list(names)})")
    for column in columns:  # numbers: every row would be a failure row
        kind = getattr(features[column], "dtype", type(features[column]).__name__)
        if kind not in ("string", "large_string"):
            raise InputError(f"column {column!r} is not a text column ({kind})")
    _check_free(names)
    return tuple(columns)


def _check_free(names: Sequence[str]) -> None:
    """Refuse a dataset that already has a column :func:`augment` adds."""
    taken = [name for name in (*ADDED_COLUMNS, _FAILURE) if name in names]
    if taken:
        raise InputError(f"the dataset already has column(s) {taken}, which augment adds")


def problem(value: Any, max_chars: int | None = None) -> str | None:
    """Why a text cell cannot be augmented, or ``None`` when it can.

    >>> problem("A long text.", max_chars=5)
    'longer than --max-chars 5 (12 characters)'
    """
    if value is None:
        return "missing text"
    if not isinstance(value, str):
        return f"text is {type(value).__name__}, not a string"
    if not value.strip():
        return "empty text"
    if max_chars is not None and len(value) > max_chars:
        return f"longer than --max-chars {max_chars} ({len(value)} characters)"
    return None


@dataclass(eq=False)
class Expander:
    """The ``datasets.map`` function: each input row, then its augmented copies (picklable)."""

    columns: tuple[str, ...]
    method: str
    n: int
    _: KW_ONLY
    reda: REDA | None = None
    lm: NgramLM | None = None
    index: ParaphraseIndex | None = None
    max_chars: int | None = None
    quota: dict[str, int] | None = None

    def new_texts(self, text: str) -> list[str]:
        """Up to ``n`` new versions of ``text`` by the method, never ``text`` itself."""
        if self.method == "paraamr":
            assert self.index is not None
            return self.index.lookup(text, self.n)
        assert self.reda is not None
        lm = self.lm if self.method == "reda-ng" else None
        return self.reda.augment(text, self.n, lm=lm, quota=self.quota)

    def __call__(self, batch: dict[str, list], indices: list[int]) -> dict[str, list]:
        names = list(batch)
        out: dict[str, list] = {name: [] for name in (*names, *ADDED_COLUMNS, _FAILURE)}

        def emit(row: dict[str, Any], index: int, augmented: bool, failure: str) -> None:
            for name in names:
                out[name].append(row[name])
            out["augmented"].append(augmented)
            out["source_index"].append(index)
            out[_FAILURE].append(failure)

        for position, index in enumerate(indices):
            row = {name: batch[name][position] for name in names}
            whys = {col: problem(row[col], self.max_chars) for col in self.columns}
            problems = [f"{col}\x1f{why}" for col, why in whys.items() if why]
            emit(row, index, False, "\x1e".join(problems))
            if problems:
                continue
            for col in self.columns:
                for text in self.new_texts(row[col]):
                    emit({**row, col: text}, index, True, "")
        return out


@dataclass
class Augmented:
    """The augmented dataset, the rows that could not be augmented, and counts."""

    dataset: Dataset
    failures: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)


def augment(
    dataset: Dataset,
    *,
    method: str,
    n: int = 2,
    columns: Sequence[str] | None = None,
    seed: int = 0,
    reda: REDA | None = None,
    lm: NgramLM | None = None,
    paraphrases: ParaphraseIndex | None = None,
    num_proc: int | None = None,
    batch_size: int = 256,
    max_chars: int | None = None,
    recipe: str | None = None,
    cache_dir: str | os.PathLike | None = None,
) -> Augmented:
    """Augment ``dataset`` (see the module docstring); returns an :class:`Augmented`.

    ``method`` is ``paraamr`` (needs ``paraphrases``), ``reda`` or ``reda-ng`` (uses ``lm``, by
    default an :class:`NgramLM` trained in-sample). ``reda`` defaults to WordNet synonyms with
    ``seed``. ``recipe="paper"`` (REDA methods) takes :func:`~paraamr.augment.reda.paper_recipe`
    instead of ``n``. Texts longer than ``max_chars`` are kept, not augmented, and reported as failures.
    The result's Arrow files go to ``cache_dir`` (default: datasets' choice, beside ``dataset``'s own
    files: in the folder of one read by ``load_from_disk``).
    """
    from datasets import Dataset

    if not isinstance(dataset, Dataset):  # a DatasetDict, a list of texts: no column_names to read
        name = type(dataset).__name__
        raise TypeError(f"dataset must be a datasets.Dataset (one split: data['train']), got {name}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    n = check_number(n, "n", kind=int, low=1)
    if not len(dataset):
        raise ValueError("dataset has no rows to augment")
    columns = (columns,) if isinstance(columns, str) else columns  # one column, not its letters
    columns = check_columns(dataset.features, columns or detect_columns(dataset.column_names))
    if method == "paraamr" and paraphrases is None:
        raise ValueError("method 'paraamr' needs paraphrases (a ParaphraseIndex)")
    if method != "paraamr":
        reda = reda or REDA(seed=seed)
        reda.token_synonyms("warm")  # load WordNet once here, before any worker process forks
    if method == "reda-ng" and lm is None:
        lm = train_lm([dataset], columns, tokenizer=reda.tokenizer)
    quota = None
    if recipe is not None:
        if recipe not in RECIPES or method == "paraamr":
            raise ValueError(f"recipe must be one of {RECIPES} with a REDA method, got {recipe!r} ({method})")
        quota = paper_recipe(len(dataset))
        n = sum(quota.values())
    expander = Expander(
        columns, method, n, reda=reda, lm=lm, index=paraphrases, max_chars=max_chars, quota=quota
    )
    expanded = dataset.map(
        expander,
        batched=True,
        batch_size=batch_size,
        with_indices=True,
        remove_columns=dataset.column_names,
        num_proc=num_proc if num_proc and num_proc > 1 else None,
        load_from_cache_file=False,
        new_fingerprint=(name := uuid.uuid4().hex),
        desc=f"augment ({method})",
        cache_file_name=None if cache_dir is None else os.path.join(cache_dir, f"{name}.arrow"),
    )
    failures = _failures(expanded)
    keep = _first_occurrences(expanded, columns)
    indices = None if cache_dir is None else os.path.join(cache_dir, f"{name}-kept.arrow")
    result = expanded.select(keep, indices_cache_file_name=indices) if len(keep) < len(expanded) else expanded
    result = result.remove_columns(_FAILURE)
    stats = {
        "input_rows": len(dataset),
        "added_rows": len(result) - len(dataset),
        "repeats_removed": len(expanded) - len(keep),
        "bad_rows": len({f["index"] for f in failures}),
    }
    return Augmented(result, failures, stats)


def unaugmented(dataset: Dataset) -> Dataset:
    """``dataset`` with the columns :func:`augment` adds, as its input rows have them (``augmented``
    false, ``source_index`` the row's index): a split copied beside augmented ones, so that every
    split of a folder has the same columns (``load_dataset`` refuses splits that differ).

    >>> from datasets import Dataset
    >>> unaugmented(Dataset.from_dict({"text": ["a", "b"]})).to_dict()
    {'text': ['a', 'b'], 'augmented': [False, False], 'source_index': [0, 1]}
    """
    _check_free(dataset.column_names)
    rows = len(dataset)
    return dataset.add_column("augmented", [False] * rows).add_column("source_index", list(range(rows)))


def train_lm(
    datasets: Sequence[Dataset],
    columns: Sequence[str],
    order: int = 4,
    *,
    tokenizer: Tokenizer | None = None,
) -> NgramLM:
    """An in-sample :class:`NgramLM` over the string texts of ``columns`` in each of ``datasets``."""
    lm = NgramLM(order, tokenizer=tokenizer, source=IN_SAMPLE)
    for dataset in datasets:
        for name in columns:
            lm.update(text for text in dataset[name] if isinstance(text, str))
    return lm


def _failures(expanded: Dataset) -> list[dict[str, Any]]:
    flagged = [i for i, why in enumerate(expanded[_FAILURE]) if why]
    failures = []
    for row in expanded.select(flagged):
        for entry in row[_FAILURE].split("\x1e"):
            col, why = entry.split("\x1f")
            text = row[col] if isinstance(row[col], str) else None
            failures.append(
                {
                    "index": row["source_index"],
                    "column": col,
                    "id": text_id(text) if text is not None else None,
                    "text": text,
                    "raw_b64": None,
                    "stage": "augment",
                    "reason": why,
                }
            )
    return failures


def _first_occurrences(expanded: Dataset, columns: tuple[str, ...]) -> list[int]:
    """Indices of the rows to keep: every input row, and added rows whose texts are new."""
    view = expanded.select_columns([*columns, "augmented"])
    keys: list[tuple[str, ...] | None] = []
    seen: set[tuple[str, ...] | None] = set()  # the input rows' texts, then each added row's
    for batch in view.iter(batch_size=4096):
        for position, added in enumerate(batch["augmented"]):
            texts = [batch[col][position] for col in columns]
            key = tuple(normalize(t) if isinstance(t, str) else "" for t in texts)
            keys.append(key if added else None)
            if not added:
                seen.add(key)
    keep = []
    for i, key in enumerate(keys):
        if key is None or key not in seen:
            seen.add(key)
            keep.append(i)
    return keep
