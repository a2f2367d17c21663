"""Dataset-level augmentation: rows kept first, labels kept, pairs crossed, repeats removed, bad rows
reported by index, results independent of num_proc, the three methods (and on-the-fly ParaAMR)."""

from __future__ import annotations

import pytest
from datasets import Dataset, DatasetDict

from paraamr.augment.reda import REDA
from paraamr.augment.runner import augment, detect_columns, train_lm, unaugmented
from paraamr.augment.source import ParaphraseIndex, generate_index
from paraamr.errors import InputError
from paraamr.records import normalize

TABLE = {
    "quick": ("fast", "speedy"),
    "fox": ("dog",),
    "jumps": ("leaps", "springs"),
    "profit": ("gain",),
    "rose": ("climbed", "increased"),
    "firm": ("company",),
}
PAIRS = {
    "sentence1": [
        "The quick brown fox jumps over the lazy dog near the river bank today .",
        "Quarterly profit rose sharply , the firm said on Monday .",
        "The quick brown fox jumps over the lazy dog near the river bank today .",
    ],
    "sentence2": [
        "A fast brown fox leaps over a sleepy dog .",
        "The firm said its profit rose .",
        "Nothing in common with the other one here .",
    ],
    "label": [1, 1, 0],
    "idx": [10, 11, 12],
}


def table_reda(seed: int = 0) -> REDA:
    return REDA(synonyms=lambda word: TABLE.get(word.lower(), ()), seed=seed)


def rows(dataset: Dataset) -> list[dict]:
    return list(dataset)


def check_crossed(result, data: Dataset, columns: tuple[str, ...], n: int) -> None:
    """Each input row kept first and unchanged; each added row changes exactly one text column."""
    out = rows(result.dataset)
    originals = [r for r in out if not r["augmented"]]
    assert [{k: r[k] for k in data.column_names} for r in originals] == rows(data)
    per_side = {}
    for position, row in enumerate(out):
        source = data[row["source_index"]]
        if not row["augmented"]:
            continue
        assert out[position - 1]["source_index"] == row["source_index"]  # grouped after its input row
        changed = [c for c in columns if row[c] != source[c]]
        assert len(changed) == 1
        assert normalize(row[changed[0]]) != normalize(source[changed[0]])
        assert {k: row[k] for k in data.column_names if k not in columns} == {
            k: source[k] for k in data.column_names if k not in columns
        }
        per_side.setdefault((row["source_index"], changed[0]), []).append(row[changed[0]])
    assert all(len(v) <= n and len(set(v)) == len(v) for v in per_side.values())
    keys = [tuple(normalize(r[c]) for c in columns) for r in out if r["augmented"]]
    assert len(keys) == len(set(keys))
    assert not set(keys) & {tuple(normalize(r[c]) for c in columns) for r in originals}


@pytest.mark.parametrize("method", ["reda", "reda-ng"])
def test_pairs_are_crossed_and_labels_kept(method):
    data = Dataset.from_dict(PAIRS)
    result = augment(data, method=method, n=2, reda=table_reda())
    check_crossed(result, data, ("sentence1", "sentence2"), 2)
    assert result.failures == [] and result.stats["input_rows"] == 3
    # every side has more than two possible outputs: 2 per side and row; rows 0 and 2 share
    # sentence1 (same outputs, same seed) but not sentence2, so their crossed rows do not repeat
    assert result.stats["repeats_removed"] == 0
    assert len(result.dataset) == 3 + 3 * 4


def test_reda_ng_picks_by_the_lm_trained_on_the_data():
    data = Dataset.from_dict(PAIRS)
    reda = table_reda()
    lm = train_lm([data], ("sentence1", "sentence2"))
    result = augment(data, method="reda-ng", n=2, reda=reda)
    added = [
        r["sentence2"]
        for r in rows(result.dataset)
        if r["augmented"] and r["source_index"] == 1 and r["sentence2"] != PAIRS["sentence2"][1]
    ]
    assert added == reda.augment(PAIRS["sentence2"][1], 2, lm=lm)


def test_results_do_not_depend_on_num_proc():
    data = Dataset.from_dict({k: v * 4 for k, v in PAIRS.items()})
    one = augment(data, method="reda-ng", n=2, reda=table_reda(), batch_size=2)
    two = augment(data, method="reda-ng", n=2, reda=table_reda(), batch_size=2, num_proc=2)
    assert rows(one.dataset) == rows(two.dataset)


@pytest.mark.slow
def test_wordnet_results_do_not_depend_on_num_proc():
    # forked workers must not share nltk's open WordNet files (their offsets would race); the
    # two-process run goes first so that its workers look the words up, not a warm cache
    words = [
        "elderly",
        "sailor",
        "purchased",
        "tiny",
        "cottage",
        "beside",
        "calm",
        "pond",
        "with",
        "crimson",
        "shutters",
        "and",
        "glowing",
        "lantern",
        "tonight",
    ]
    texts = [" ".join(words[i:] + words[:i]) for i in range(len(words))] * 2
    data = Dataset.from_dict({"text": texts})
    two = augment(data, method="reda", n=3, seed=2, batch_size=4, num_proc=2)
    one = augment(data, method="reda", n=3, seed=2, batch_size=4)
    assert rows(one.dataset) == rows(two.dataset)
    assert len(one.dataset) == 30 + 15 * 3  # the second copy of each text repeats the first's outputs


def test_single_column_with_wordnet():
    data = Dataset.from_dict(
        {"sentence": ["The old man bought a small house near the quiet lake ."], "label": [3]}
    )
    result = augment(data, method="reda", n=4, seed=1)
    check_crossed(result, data, ("sentence",), 4)
    assert len(result.dataset) == 5


def test_bad_rows_are_kept_and_reported_by_index():
    data = Dataset.from_dict(
        {
            "sentence1": [
                "Quarterly profit rose sharply , the firm said .",
                "",
                None,
                "The quick fox jumps .",
            ],
            "sentence2": ["The firm said its profit rose .", "x", "y", "   "],
            "label": [1, 0, 1, 0],
        }
    )
    result = augment(data, method="reda", n=1, reda=table_reda())
    assert [(f["index"], f["column"], f["reason"]) for f in result.failures] == [
        (1, "sentence1", "empty text"),
        (2, "sentence1", "missing text"),
        (3, "sentence2", "empty text"),
    ]
    assert result.stats["bad_rows"] == 3
    out = rows(result.dataset)
    assert [r["source_index"] for r in out if not r["augmented"]] == [0, 1, 2, 3]
    assert {r["source_index"] for r in out if r["augmented"]} == {0}


def test_missing_or_clashing_columns_raise():
    data = Dataset.from_dict({"premise": ["a b c"], "hypothesis": ["d e f"], "label": [0]})
    assert detect_columns(data.column_names) == ("premise", "hypothesis")
    with pytest.raises(InputError, match="no column 'sentence'"):
        augment(data, method="reda", columns=["sentence"], reda=table_reda())
    with pytest.raises(InputError, match="cannot tell the text columns"):
        augment(Dataset.from_dict({"body": ["x"]}), method="reda", reda=table_reda())
    # a column of numbers (before: a failure row for every row, and a dataset of copies)
    with pytest.raises(InputError, match=r"column 'label' is not a text column \(int64\)"):
        augment(data, method="reda", columns=["label"], reda=table_reda())
    with pytest.raises(InputError, match="already has"):
        augment(Dataset.from_dict({"text": ["x"], "augmented": [True]}), method="reda", reda=table_reda())
    with pytest.raises(InputError, match=r"already has column\(s\) \['source_index'\]"):  # not Arrow's
        unaugmented(Dataset.from_dict({"text": ["x"], "source_index": [3]}))  # "duplicated columns"
    # a DatasetDict (load_dataset's usual answer) or a list of texts: what to pass instead
    # (before: AttributeError 'list' object has no attribute 'column_names')
    for given in (DatasetDict({"train": data}), ["a b c"]):
        with pytest.raises(TypeError, match=r"must be a datasets.Dataset \(one split: data\['train'\]\)"):
            augment(given, method="reda", reda=table_reda())


def test_paraamr_paraphrases_crossed_and_repeats_removed():
    index = ParaphraseIndex.from_records(
        [
            {
                "text": "He left.",
                "paraphrases": [
                    {"para_text": "He departed.", "perplexity": 40.0},
                    {"para_text": "He went away.", "perplexity": 50.0},
                    {"para_text": "Off he went.", "perplexity": 90.0},
                ],
            },
            {"text": "She stayed.", "paraphrases": [{"para_text": "She remained.", "perplexity": 30.0}]},
        ]
    )
    data = Dataset.from_dict(
        {
            "sentence1": ["He left.", "He departed.", "He left."],
            "sentence2": ["She stayed.", "She stayed.", "She stayed."],
            "label": [1, 1, 1],
        }
    )
    result = augment(data, method="paraamr", n=2, paraphrases=index)
    check_crossed(result, data, ("sentence1", "sentence2"), 2)
    out = [
        (r["sentence1"], r["sentence2"], r["source_index"]) for r in rows(result.dataset) if r["augmented"]
    ]
    # ("He departed.", "She stayed.") is input row 1, so row 0's copy of it goes; row 2 repeats row 0
    assert out == [
        ("He went away.", "She stayed.", 0),
        ("He left.", "She remained.", 0),
        ("He departed.", "She remained.", 1),
    ]
    assert result.stats["repeats_removed"] == 1 + 3


def test_paraamr_needs_paraphrases():
    with pytest.raises(ValueError, match="needs paraphrases"):
        augment(Dataset.from_dict({"text": ["x"]}), method="paraamr")


@pytest.mark.slow
def test_paraphrases_generated_on_the_fly(tiny_models):
    texts = ["The cat sat on the mat.", "He bought a new car."]
    index, failures = generate_index(
        texts,
        parser_model=str(tiny_models["parser"]),
        realizer_model=str(tiny_models["realizer"]),
        lm_model=str(tiny_models["lm"]),
        max_perplexity=None,
    )
    assert len(index) + len(failures) == len(texts)  # every input is a record or a failure
    data = Dataset.from_dict({"text": texts, "label": [0, 1]})
    result = augment(data, method="paraamr", n=3, paraphrases=index)
    added = [r["text"] for r in rows(result.dataset) if r["augmented"]]
    expected, seen = [], {normalize(t) for t in texts}  # tiny random models repeat themselves
    for para in (p for t in texts for p in index.lookup(t, 3)):
        if normalize(para) not in seen:
            seen.add(normalize(para))
            expected.append(para)
    assert added == expected and len(index) > 0


def test_odd_arguments_get_a_line_naming_them():
    """Before: 2.5 made 5 outputs a text, "2" a bare '<' TypeError, columns="sentence1" was read as 9
    one-letter columns and an empty dataset ended in "Column '_paraamr_failure' doesn't exist"."""
    data = Dataset.from_dict(PAIRS)
    for n in (2.5, "2", None, 0):
        with pytest.raises(ValueError, match=f"^n must be an integer >= 1, got {n!r}"):
            augment(data, method="reda", n=n, reda=table_reda())
    with pytest.raises(ValueError, match=r"^dataset has no rows to augment"):
        augment(data.select([]), method="reda", reda=table_reda())
    one = augment(data, method="reda", n=1, columns="sentence1", reda=table_reda())
    assert one.dataset.num_rows > 3
    assert {r["sentence2"] for r in rows(one.dataset)} == set(PAIRS["sentence2"])  # only sentence1 changed
    with pytest.raises(ValueError, match=r"^n must be an integer >= 0, got 2\.5"):
        table_reda().augment(PAIRS["sentence1"][0], 2.5)
    for options, message in (
        ({"rates": {"sr": 0.0}}, r"^rates: no operator sr \(operators: SR, RS, RI, RD\)"),
        ({"rates": {"SR": float("nan")}}, r"^rates\['SR'\] must be a finite number in \[0, 1\]"),
        ({"draws": True}, r"^draws \('paper' or a count\) must be an integer >= 1, got True"),
        ({"mix": (2,)}, r"^mix must be \(least, most\)"),
    ):
        with pytest.raises(ValueError, match=message):
            REDA(**options)
