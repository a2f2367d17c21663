"""The public API of ``paraamr``: every name of ``__all__`` resolves to its owner's object, and
``import paraamr`` loads none of the heavy libraries (they load on first use of a name)."""

from __future__ import annotations

import importlib
import subprocess
import sys

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
