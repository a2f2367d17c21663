"""The public API of ``paraamr``: every name of ``__all__`` resolves to its owner's object, and
``import paraamr`` loads none of the heavy libraries (they load on first use of a name)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import paraamr


@pytest.mark.parametrize("name", sorted(set(paraamr.__all__) - {"__version__", "metric_path"}))
def test_each_public_name_is_its_owners_object(name):
    home = importlib.import_module(paraamr._HOMES[name])
    assert getattr(paraamr, name) is getattr(home, name)
    assert name in getattr(home, "__all__", [name])  # the owner exports it too


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        paraamr.Nope  # noqa: B018


def test_import_paraamr_loads_no_heavy_library():
    heavy = ("torch", "transformers", "datasets", "evaluate", "sentence_transformers", "pyarrow")
    code = f"import sys, paraamr; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_dir_shows_only_the_public_names_and_the_submodules():
    package = Path(paraamr.__file__).parent
    submodules = {
        p.stem
        for p in package.iterdir()
        if not p.name.startswith("_") and (p.suffix == ".py" or (p / "__init__.py").is_file())
    }
    assert dir(paraamr) == sorted({*paraamr.__all__, *submodules})
    assert not {"Any", "Path", "importlib", "version", "PackageNotFoundError"} & set(dir(paraamr))


def test_every_name_dir_shows_is_an_attribute_and_dir_imports_nothing():
    code = (
        "import sys, paraamr; before = set(sys.modules); names = dir(paraamr); "
        "print(sorted(m for m in set(sys.modules) - before if m.startswith('paraamr')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
    for name in dir(paraamr):
        assert getattr(paraamr, name) is not None, name
    assert paraamr.card is importlib.import_module("paraamr.card")


def test_one_string_is_refused_where_a_batch_is_taken(tiny_models):
    """Each call of the API that takes a batch of texts or graphs refuses one string with a
    TypeError naming the argument: its characters were taken for items ('The boy.' was parsed as
    8 sentences, scored as 8 texts)."""
    calls = {
        "sentences": lambda: paraamr.Parser(tiny_models["parser"]).parse("The boy."),
        "graphs": lambda: paraamr.Realizer(tiny_models["realizer"]).realize("(b / boy)"),
        "texts": lambda: paraamr.PerplexityScorer(tiny_models["lm"]).perplexity("The boy."),
        "sources": lambda: paraamr.QualityScorer().score("The boy.", ["A boy."]),
        "paraphrases": lambda: paraamr.QualityScorer().score(["The boy."], "A boy."),
    }
    for what, call in calls.items():
        with pytest.raises(TypeError, match=f"^{what} is one string; give a list of them"):
            call()
    with pytest.raises(TypeError, match=r"^texts is one string"):
        paraamr.Embedder().encode("The boy.")
    assert len(paraamr.PerplexityScorer(tiny_models["lm"]).perplexity(("The boy.",))) == 1  # a tuple is one


def test_a_bad_size_or_name_is_one_line_before_any_work(tiny_models):
    """A batch size that is no count was taken (2.5 by the embedder; 0 failed at the first batch, "8"
    with a bare '<' TypeError), an unknown smoothing ended in sacrebleu's unformatted assertion,
    and metric_path gave the modules' folder for "" or "." (no metric)."""
    from paraamr.metrics.lexical import bleu_diversity

    makers = (paraamr.Embedder, lambda **size: paraamr.PerplexityScorer(tiny_models["lm"], **size))
    for size in (0, 2.5, "8"):
        for make in makers:
            with pytest.raises(ValueError, match=f"^batch_size must be an integer >= 1, got {size!r}"):
                make(batch_size=size)
    with pytest.raises(
        ValueError, match=r"^unknown smooth_method 'nope'; expected one of none, floor, add-k, exp"
    ):
        bleu_diversity(["a b"], ["a c"], smooth_method="nope")
    assert paraamr.Embedder(batch_size=8.0).batch_size == 8  # an int: a pool worker parses it as one
    for processes in (0, 1.5, "2"):  # 1.5 was taken, then failed in the first pool of 1,024 texts
        said = f"^processes must be an integer >= 1 or None, got {processes!r}"
        with pytest.raises(ValueError, match=said):
            paraamr.Embedder(processes=processes)
    with pytest.raises(paraamr.errors.InputError, match=r"^sources\[0\] is empty"):  # was 1.0, an exact copy
        paraamr.QualityScorer().score([""], [""])
    for name in ("", ".", "../metrics"):
        with pytest.raises(ValueError, match=f"^unknown metric {name!r}"):
            paraamr.metric_path(name)


def test_beams_lengths_and_batch_caps_that_are_no_count_are_refused_when_a_stage_is_built(tiny_models):
    """Before: ``num_beams=0`` failed every sentence at the first batch, ``max_length=-1`` every text
    ("the model reads -1"), and ``max_batch_size`` 0 or -1 and ``max_tokens=0`` were silently ignored."""
    lm, parser, realizer = tiny_models["lm"], tiny_models["parser"], tiny_models["realizer"]
    cases = [
        (lambda: paraamr.Parser(parser, num_beams=0), "num_beams must be an integer >= 1, got 0"),
        (lambda: paraamr.Realizer(realizer, num_beams=-1), "num_beams must be an integer >= 1, got -1"),
        (lambda: paraamr.PerplexityScorer(lm, max_length=-1), "max_length must be an integer >= 1 or None"),
        (lambda: paraamr.PerplexityScorer(lm, max_tokens=0), "max_tokens must be an integer >= 1, got 0"),
        (lambda: paraamr.Parser(parser, max_batch_size=0), "max_batch_size must be an integer >= 1 or None"),
        (lambda: paraamr.Embedder(max_batch_size=-1), "max_batch_size must be an integer >= 1 or None"),
    ]
    for make, said in cases:
        with pytest.raises(ValueError, match=f"^{re.escape(said)}"):
            make()


def test_none_where_a_model_or_a_batch_is_taken_is_named(tiny_models):
    """Before: "expected str, bytes or os.PathLike object, not NoneType", "'NoneType' object is not
    iterable", and a traceback from amr/foci.py for ``exclude=None``."""
    with pytest.raises(TypeError, match=r"^parser model must be a model name or a folder, got None$"):
        paraamr.Parser(None)
    parser = paraamr.Parser(tiny_models["parser"])
    with pytest.raises(TypeError, match=r"^sentences is None; give a list of them"):
        parser.parse(None)
    graph = "(w / want-01 :ARG0 (b / boy) :ARG1 (g / go-02 :ARG0 b))"
    assert paraamr.variants(graph, exclude=None) == paraamr.variants(graph)
