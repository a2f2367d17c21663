"""English REDA and REDA+NG give, for the same seed, the outputs of an independent computation.

The golden files under ``data/`` were first written by the code at commit b9c3d90, before languages
became plug-ins (issue 32): ``reda_en_golden.json`` by the Python API (23 texts: bundled sentences,
WordNet usage examples and three edge cases; seeds 0 and 7; 20 and 3 draws; pools, REDA and REDA+NG
outputs, LM log-probabilities) and ``reda_en_cli_golden.json`` by ``paraamr augment --dataset
pairs.jsonl --method reda|reda-ng --n 3 --seed 5`` (the rows of the written folder). When EDA's stop
words lost their synonyms, both were recomputed by the code at commit fee91e1 (before that change)
given a synonym source written by hand for the purpose: ``paraamr.lexicon.synonyms``, but ``()`` for
the stop words read from EDA's own code/eda.py (jasonwei20/eda_nlp); the same script with the plain
WordNet source gives the earlier outputs unchanged. When a draw of RM that cannot act (its random
operators find nothing to do) stopped ending RM's pool, as in REDA's code (such a draw returns its
input, dropped as a repeat), the cases that change were recomputed by the code with that change: 1
of the 92 API cases and the rows of one pair of the command (each file's ``made_by`` says which).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from paraamr.augment.ngram import NgramLM
from paraamr.augment.reda import REDA
from paraamr.cli import main
from paraamr.quality.data import TRAINING_SENTENCES, WORDNET_SENTENCES

DATA = Path(__file__).parent / "data"


def _golden(name: str) -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def test_python_api_outputs_are_unchanged():
    golden = _golden("reda_en_golden.json")
    lines = [line for line in TRAINING_SENTENCES.read_text(encoding="utf-8").splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    wordnet = WORDNET_SENTENCES.read_text(encoding="utf-8").splitlines()
    lm = NgramLM.train(lines + wordnet[:500])
    assert lm.signature() == golden["lm_signature"]
    redas = {}
    for case in golden["cases"]:
        key = (case["seed"], case["draws"])
        reda = redas.setdefault(key, REDA(seed=case["seed"], draws=case["draws"]))
        text = case["text"]
        if case["pool"] is not None:
            assert reda.pool(text) == case["pool"], text
        assert reda.augment(text, 4) == case["reda"], text
        assert reda.augment(text, 4, lm=lm) == case["reda_ng"], text
        assert lm.logprob(text) == pytest.approx(case["lm_logprob"], abs=1e-9)


@pytest.mark.parametrize("method", ["reda", "reda-ng"])
def test_command_rows_are_unchanged(tmp_path, method, capsys, monkeypatch):
    monkeypatch.setenv("PARAAMR_CACHE", str(tmp_path / "cache"))  # no installed n-gram LM: in-sample
    golden = _golden("reda_en_cli_golden.json")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(row) + "\n" for row in golden["pairs"]), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["augment", "--dataset", str(pairs), "--method", method, "--n", "3", "--seed", "5"]
    assert main([*argv, "--output", str(out)]) == 0
    rows = [
        row
        for path in sorted((out / "data" / "default").glob("train-*.parquet"))
        for row in pq.read_table(path).to_pylist()
    ]
    assert rows == golden[method]
