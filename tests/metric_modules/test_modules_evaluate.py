"""huggingface/evaluate's own test of an evaluation module, run over paraamr's modules.

:func:`run_test_load` is ``LocalModuleTest.test_load`` of huggingface/evaluate
``tests/test_metric_common.py`` (commit a7dd338386a4fae9a1767e05eb9ef9479513d9e8), the test
evaluate runs on every module it hosts, statement for statement; only the unittest plumbing
differs: ``self.assert*`` -> ``assert``, ``noqa`` where ruff's rules are not evaluate's, the
class's ``use_local_metrics`` inlined and its ``patch_intensive_calls`` left out (evaluate
registers patchers for bleurt, bertscore and comet only).

As there, it runs in a folder holding ``metrics/<name>/`` (here the repository root, where
``metrics`` links to ``src/paraamr/metric_modules``), imports the module as ``evaluate.load``
does, asserts that ``_compute`` takes no ``**kwargs``, runs the module's doctests with
``doctest.testmod(verbose=True, raise_on_error=True)`` (no option flags but the examples' own
directives, ``doctest.ELLIPSIS_MARKER = "[...]"``, ``evaluate.load(x)`` redirected to
``load("metrics/" + x)``) and asserts no failure and more than one example.

``python tests/metric_modules/test_modules_evaluate.py NAME...``, run in a folder holding
``metrics/NAME/``, does the same outside pytest (the wheel test runs it in a fresh venv).
"""

from __future__ import annotations

import doctest
import glob
import importlib
import inspect
import os
import sys
from pathlib import Path
from unittest.mock import patch

import pytest

REPO = Path(__file__).resolve().parents[2]
NAMES = ["lexical_diversity", "paraphrase_quality", "semantic_similarity", "ted_diversity"]


def get_local_module_names() -> list[str]:
    """The metric folders, found as evaluate's ``get_local_module_names`` finds them."""
    return sorted(metric_dir.split(os.sep)[-2] for metric_dir in glob.glob("./metrics/*/"))


def run_test_load(evaluation_module_name: str, evaluation_module_type: str = "metric") -> None:
    """evaluate's ``LocalModuleTest.test_load`` (see the module docstring), in the current folder."""
    import evaluate
    from evaluate import load

    doctest.ELLIPSIS_MARKER = "[...]"
    evaluation_module = importlib.import_module(
        evaluate.loading.evaluation_module_factory(
            os.path.join(evaluation_module_type + "s", evaluation_module_name), module_type=evaluation_module_type  # noqa: E501
        ).module_path
    )
    evaluation_instance = evaluate.loading.import_main_class(evaluation_module.__name__)
    # check parameters
    parameters = inspect.signature(evaluation_instance._compute).parameters
    assert all([p.kind != p.VAR_KEYWORD for p in parameters.values()])  # no **kwargs

    # run doctest (evaluate's use_local_metrics)
    def load_local_metric(evaluation_module_name, *args, **kwargs):
        return load(os.path.join(evaluation_module_type + "s", evaluation_module_name), *args, **kwargs)

    with patch("evaluate.load") as mock_load:
        mock_load.side_effect = load_local_metric
        try:
            results = doctest.testmod(evaluation_module, verbose=True, raise_on_error=True)
        except doctest.UnexpectedException as e:
            raise e.exc_info[1]  # raise the exception that doctest caught  # noqa: B904
    assert results.failed == 0
    assert results.attempted > 1


@pytest.fixture
def at_repo_root(monkeypatch):
    """The repository root as the current folder; doctest's ellipsis marker restored afterwards."""
    monkeypatch.chdir(REPO)
    monkeypatch.setattr(doctest, "ELLIPSIS_MARKER", doctest.ELLIPSIS_MARKER)


def test_finds_the_four_modules(at_repo_root):
    names = get_local_module_names()
    assert names == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_load(name, at_repo_root):
    run_test_load(name)


if __name__ == "__main__":
    import paraamr

    for module_name in sys.argv[1:]:
        run_test_load(module_name)
        print(f"test_load passed: {module_name}", flush=True)
    print(f"paraamr from: {Path(paraamr.__file__).parent}")
