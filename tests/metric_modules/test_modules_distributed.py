"""The four evaluate modules in evaluate's own distributed mode: two real processes, each loading
the module with ``num_process=2, process_id=rank`` and the same ``experiment_id``, each adding its
own pairs with ``add_batch``; the process with ``process_id`` 0 computes over both processes' pairs
and must give the figures of one process over all pairs.

evaluate gathers only the inputs (``predictions``, ``references``); keyword options reach
``_compute`` from process 0 alone, so per-pair options (``targets``, ``templates``, ``labels``)
are given there for every pair, in process order.

``python test_modules_distributed.py RANK EXPERIMENT CACHE_DIR OUT`` is one process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

PREDICTIONS = [
    "Five apples were eaten by John.",
    "Penguins cannot fly.",
    "At noon, the shop closes.",
    "On the mat sat the cat.",
    "It is known to me.",
]
REFERENCES = [
    "John ate five apples.",
    "John ate five apples.",
    "The shop closes at noon.",
    "The cat sat on the mat.",
    "I know it.",
]
SPLIT = 2  # process 0 adds the first two pairs, process 1 the other three
#: The options of each module's compute; the per-pair ones cover every pair.
OPTIONS = {
    "lexical_diversity": {"targets": REFERENCES, "jaccard_lowercase": False},
    "semantic_similarity": {"batch_size": 2},
    "ted_diversity": {"targets": PREDICTIONS[::-1]},
    "paraphrase_quality": {"labels": [1, 0, 1, 1, 1], "threshold": 0.4},
}


def run_process(rank: int, experiment: str, cache_dir: str) -> dict:
    """One process of the distributed run: its pairs added, then compute (None but on process 0)."""
    import evaluate

    import paraamr

    rows = slice(0, SPLIT) if rank == 0 else slice(SPLIT, None)
    results = {}
    for name, options in OPTIONS.items():
        metric = evaluate.load(
            paraamr.metric_path(name),
            num_process=2,
            process_id=rank,
            experiment_id=f"{experiment}-{name}",
            cache_dir=cache_dir,
        )
        metric.add_batch(predictions=PREDICTIONS[rows], references=REFERENCES[rows])
        results[name] = metric.compute(**options)
    return results


@pytest.mark.slow
def test_two_processes_give_the_figures_of_one(tmp_path):
    import evaluate

    import paraamr

    experiment = uuid.uuid4().hex
    command = [sys.executable, __file__, experiment, str(tmp_path / "cache")]
    logs = [(tmp_path / f"rank{rank}.log").open("w") for rank in (0, 1)]
    ranks = [
        subprocess.Popen([*command, str(rank), str(tmp_path / f"rank{rank}.json")], stderr=log)
        for rank, log in enumerate(logs)
    ]
    single = {
        name: evaluate.load(paraamr.metric_path(name)).compute(
            predictions=PREDICTIONS, references=REFERENCES, **options
        )
        for name, options in OPTIONS.items()
    }
    for rank, log in zip(ranks, logs, strict=True):
        log.close()
        assert rank.wait(timeout=300) == 0, Path(log.name).read_text()[-3000:]
    assert json.loads((tmp_path / "rank1.json").read_text()) == dict.fromkeys(OPTIONS)
    distributed = json.loads((tmp_path / "rank0.json").read_text())
    # the embeddings' float32 sums depend on the threads a process has (one core each for the two
    # ranks, both for this one): seen 5e-8 to 3e-7 apart; every other value equal
    assert distributed == _close_to(json.loads(json.dumps(single)), rel=1e-5)
    assert len(distributed["ted_diversity"]["ted_r_scores"]) == len(PREDICTIONS)


def _close_to(value, rel: float):
    """``value`` with each float as ``pytest.approx(rel=rel)``, anything else exact, at any depth."""
    if isinstance(value, float):
        return pytest.approx(value, rel=rel)
    if isinstance(value, dict):
        return {k: _close_to(v, rel) for k, v in value.items()}
    if isinstance(value, list):
        return [_close_to(v, rel) for v in value]
    return value


def test_per_pair_options_of_one_process_only_are_refused(tmp_path):
    """Process 0 given the labels of its own pairs only: a message saying what it needs."""
    import evaluate

    import paraamr
    from paraamr.metric_modules import check_per_pair

    metric = evaluate.load(
        paraamr.metric_path("paraphrase_quality"), num_process=2, process_id=0, cache_dir=str(tmp_path)
    )
    with pytest.raises(ValueError, match=r"^paraphrase_quality: 2 labels for 5 pairs \(with num_process=2 "):
        check_per_pair(metric, "labels", [1, 0], PREDICTIONS)
    check_per_pair(metric, "labels", [1, 0, 1, 1, 1], PREDICTIONS)
    single = evaluate.load(paraamr.metric_path("lexical_diversity"))
    with pytest.raises(ValueError, match=r"^lexical_diversity: 2 targets for 1 pairs$"):
        single.compute(predictions=["a"], references=["a"], targets=["a", "b"])


if __name__ == "__main__":
    experiment_id, cache, process_id, out = sys.argv[1:]
    Path(out).write_text(json.dumps(run_process(int(process_id), experiment_id, cache)))
