"""The evaluate modules of paraamr, one folder each (``evaluate.load(paraamr.metric_path(name))``;
each folder is also a Hub Space), and what they share.

:func:`space` is each folder's Hub Space (its ``app.py``): a gradio Interface of our own, as
evaluate's ``launch_gradio_widget`` needs gradio 3 (``gradio.inputs``).

Under ``evaluate.combine([...])`` every module receives every keyword argument of the call, so each
module's ``_compute`` names the options of all four modules as explicit parameters and ignores
those that are not its own (evaluate's module test forbids ``**kwargs``).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
from collections.abc import Callable, Hashable, Iterator, Sequence, Sized
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "cached",
    "card_text",
    "check_model",
    "check_per_pair",
    "no_text",
    "pair_metric",
    "quiet_loading",
    "scorable",
    "space",
    "spread",
]


def pair_metric(description: str, citation: str, inputs_description: str, urls: Sequence[str]):
    """Class decorator of an evaluate metric over string pairs (``predictions``: paraphrases,
    ``references``: their sources): evaluate's docstring from ``description`` and
    ``inputs_description``, and its ``_info``."""
    import datasets
    import evaluate

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            module_type="metric",
            description=description,
            citation=citation,
            inputs_description=inputs_description,
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
            reference_urls=list(urls),
        )

    def whole(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def checked(self, *args: Any, **kwargs: Any) -> Any:
            """Score string pairs: ``predictions`` and ``references`` are lists, one item a pair."""
            for side in ("predictions", "references"):
                _refuse_string(self, side, kwargs.get(side))
                if kwargs.get(side) is not None:
                    kwargs[side] = [_carried(item) for item in kwargs[side]]
            return method(self, *args, **kwargs)

        return checked

    def decorate(cls: type) -> type:
        cls._info = _info
        cls.compute, cls.add_batch = whole(cls.compute), whole(cls.add_batch)
        return evaluate.utils.file_utils.add_start_docstrings(description, inputs_description)(cls)

    return decorate


def card_text(folder: str | os.PathLike) -> str:
    """The Markdown of a module folder's card (``README.md``) without its YAML header."""
    text = (Path(folder) / "README.md").read_text(encoding="utf-8")
    return re.sub(r"\A---\n.*?\n---\n", "", text, count=1, flags=re.DOTALL).lstrip()


def space(module_file: str | os.PathLike) -> Any:
    """The Hub Space of the evaluate module in ``module_file``: a ``gradio.Interface`` with a table
    of pairs in (one column per input of the module), the module's results out as JSON, and the
    module's card beneath. ``app.py`` calls ``space(...).launch()``; gradio reads the address from
    ``GRADIO_SERVER_NAME`` / ``GRADIO_SERVER_PORT``."""
    import evaluate
    import gradio as gr

    path = Path(module_file)
    module = evaluate.load(str(path))
    features = module.features[0] if isinstance(module.features, list) else module.features
    names = list(features)

    def compute(table: Any) -> dict[str, Any]:
        # the module's columns (a column the user added is left out)
        rows = [[str(v).strip() for v in row[: len(names)]] for row in table.values.tolist()]
        rows = [row for row in rows if all(row)]
        if not rows:
            raise gr.Error(f"enter at least one row with {', '.join(names)}")
        results = module.compute(**{name: [row[i] for row in rows] for i, name in enumerate(names)})
        return json.loads(json.dumps(results, default=float))  # numpy numbers as JSON numbers

    return gr.Interface(
        fn=compute,
        inputs=gr.Dataframe(
            headers=names,
            column_count=len(names),
            datatype=["str"] * len(names),
            value=[["A cat was sitting on the mat.", "The cat sat on the mat."][: len(names)]],
            label="pairs (one a row)",
        ),
        outputs=gr.JSON(label=module.name),
        title=f"Metric: {module.name}",
        description=module.info.description,
        article=card_text(path.parent),
        flagging_mode="never",
        api_name="compute",
    )


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Load models without transformers' progress bars ("Loading weights") or sentence-transformers'
    load notes, both put back as they were afterwards. A download still shows its bar
    (:mod:`paraamr.models.download` turns the Hub's on while it fetches)."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    notes = logging.getLogger("sentence_transformers")
    level = notes.level
    hf_logging.disable_progress_bar()
    notes.setLevel(logging.ERROR)
    try:
        yield
    finally:
        notes.setLevel(level)
        if bars:
            hf_logging.enable_progress_bar()


def cached(module, name: str, key: Hashable, make: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``make(*args, **kwargs)`` kept in the dict ``name`` of the evaluate module ``module`` by
    ``key``: models and parsers load once across ``compute`` calls."""
    cache = module.__dict__.setdefault(name, {})
    if key not in cache:
        cache[key] = make(*args, **kwargs)
    return cache[key]


def _refuse_string(module, option: str, value: object) -> None:
    """ValueError when the option ``value`` is one string, whose characters evaluate would take for
    one item a pair."""
    if isinstance(value, str):
        raise ValueError(f"{module.name}: {option} is one string; give a list, one item a pair")


def check_flags(module, **flags: object) -> None:
    """ValueError for a yes/no option that is not a bool (``lowercase="no"`` would count as yes)."""
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise ValueError(f"{module.name}: {name} must be True or False, got {value!r}")


def check_per_pair(module, option: str, values: Sized | None, predictions: Sequence[object]) -> None:
    """ValueError unless the per-pair option ``values`` (``targets``, ``labels``, ...) has one item per
    prediction. In evaluate's distributed mode rank 0 computes over every process's pairs but gets
    only its own keyword arguments: the message says so."""
    _refuse_string(module, option, values)
    if values is None or len(values) == len(predictions):
        return
    hint = ""
    if module.num_process > 1:
        hint = (
            f" (with num_process={module.num_process} the process with process_id 0 computes over"
            f" every process's pairs: give it {option} for all of them, in process order)"
        )
    raise ValueError(f"{module.name}: {len(values)} {option} for {len(predictions)} pairs{hint}")


#: How an item that evaluate's Arrow cache cannot carry as a text (None as a first item, which
#: evaluate's format check refuses; a number; a lone surrogate, which UTF-8 cannot hold) reaches
#: ``_compute``: this prefix and why, which :func:`no_text` gives back, so that its pair becomes a
#: failure line, as a None further down the list does.
_NO_TEXT = "\x00paraamr no text: "


def _carried(item: Any) -> Any:
    """``item`` of a side as evaluate can carry it to ``_compute``.

    >>> no_text(_carried(None)), no_text(_carried(3.5))
    ('not a text (None)', 'not a text (float)')
    >>> no_text(_carried("a\\ud800"))
    'a lone surrogate (U+D800) at character 2; text cannot hold it'
    """
    from paraamr.texts import text_problem

    if not isinstance(item, str):
        return _NO_TEXT + no_text(item)
    if not item.isascii():
        problem = text_problem(item)
        if problem and problem.startswith("a lone surrogate"):
            return _NO_TEXT + problem
    return item


def no_text(item: Any) -> str | None:
    """Why ``item`` of a side is no text (None where ``evaluate`` got a missing value), or None.

    >>> no_text("A boy."), no_text(None), no_text(3)
    (None, 'not a text (None)', 'not a text (int)')
    """
    if isinstance(item, str):
        return item.removeprefix(_NO_TEXT) if item.startswith(_NO_TEXT) else None
    return f"not a text ({'None' if item is None else type(item).__name__})"


def check_model(module, model: object) -> None:
    """ValueError unless the ``model`` option is a name or a path."""
    if not isinstance(model, (str, os.PathLike)) or not str(model).strip():
        raise ValueError(f"{module.name}: model must be a model name or a folder, got {model!r}")


def scorable(
    sides: dict[str, Sequence[Any]], problem: Callable[[Any], str | None] | None = None
) -> tuple[list[int], list[str]]:
    """The pairs whose items can be scored, and a line for each other pair, naming it, the side and
    its first ``problem`` (by default :func:`no_text`, then :func:`paraamr.texts.text_problem` with
    ``visible``: an empty text, a NUL or no visible character, which ``paraamr evaluate`` leaves out too).

    >>> scorable({"predictions": ["Fine.", " ", "Ok."], "references": ["Yes.", None, "a\\x00b"]})
    ([0], ['pair 1 prediction: empty', 'pair 2 reference: a NUL character at character 2'])
    >>> scorable({"predictions": ["Fine.", "Ok."], "references": [None, "Yes."]})
    ([1], ['pair 0 reference: not a text (None)'])
    """
    if problem is None:
        from paraamr.texts import text_problem

        def problem(text: Any) -> str | None:
            return no_text(text) or text_problem(text, visible=True)

    failed: dict[int, str] = {}
    for name, items in sides.items():
        for i, item in enumerate(items):
            why = problem(item)
            if why and i not in failed:
                failed[i] = f"pair {i} {name.removesuffix('s')}: {why}"
    pairs = len(next(iter(sides.values())))
    return [i for i in range(pairs) if i not in failed], [failed[i] for i in sorted(failed)]


def spread(scores: Sequence[Any], ok: Sequence[int], pairs: int) -> list[Any]:
    """Per-pair ``scores`` of the pairs ``ok`` back in place among ``pairs`` pairs, None for the rest.

    >>> spread([0.5, 0.7], [0, 2], 3)
    [0.5, None, 0.7]
    """
    by_pair = dict(zip(ok, scores, strict=True))
    return [by_pair.get(i) for i in range(pairs)]
