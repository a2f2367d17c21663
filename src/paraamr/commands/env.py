"""``paraamr env`` (also ``python -m paraamr env``): print versions, CUDA, the model caches and the
models on disk, for bug reports.

print versions, CUDA, the model caches and the models on disk, for bug reports

>>> facts = dict(versions(("paraamr", "no-such-package")))
>>> facts["no-such-package version"]
'not installed'
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Iterable

__all__ = ["PACKAGES", "add_arguments", "facts", "run", "versions"]

#: The distributions whose versions are reported, in the printed order.
PACKAGES = ("datasets", "huggingface_hub", "transformers", "amrlib", "accelerate", "evaluate", "torch")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``paraamr env``."""
    parser.add_argument("--cache-dir", help="model cache (default: $PARAAMR_CACHE or ~/.cache/paraamr)")


def versions(names: Iterable[str]) -> list[tuple[str, str]]:
    """``(f"{name} version", version or "not installed")`` of each distribution."""
    from importlib.metadata import PackageNotFoundError, version

    def installed(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    return [(f"{name} version", installed(name)) for name in names]


def _cuda() -> list[tuple[str, str]]:
    """CUDA as torch sees it (torch imported only here)."""
    try:
        import torch
    except ImportError:
        return [("CUDA available", "unknown (torch not installed)")]
    available = torch.cuda.is_available()
    rows = [
        ("CUDA available", str(available)),
        ("CUDA version (torch built with)", torch.version.cuda or "none (a CPU build)"),
    ]
    if available:
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        rows.append(("GPUs", f"{len(names)}: {', '.join(names)}"))
    return rows


def facts(cache_dir: str | None = None) -> list[tuple[str, str]]:
    """Every ``(fact, value)`` that ``paraamr env`` prints, in order."""
    from huggingface_hub import constants

    from paraamr import __file__ as package_file
    from paraamr.commands.models import COPY, FLOAT32_COPY, model_rows
    from paraamr.models.resolve import cache_root

    rows = versions(["paraamr"])
    rows[0] = (rows[0][0], f"{rows[0][1]} ({os.path.dirname(package_file)})")
    rows += [("Python version", platform.python_version()), ("Platform", platform.platform())]
    rows += versions(PACKAGES)
    rows += _cuda()
    cache = cache_root(cache_dir)
    state = "" if cache.is_dir() else " (not a folder)" if cache.exists() else " (not there yet)"
    rows.append(("model cache", f"{cache}{state}"))
    rows.append(("Hub cache", str(constants.HF_HUB_CACHE)))
    for name in ("HF_ENDPOINT", "HF_HUB_OFFLINE", "PARAAMR_CACHE", "PARAAMR_RELEASE_URL"):
        if os.environ.get(name):
            rows.append((name, os.environ[name]))
    by_folder: dict[str, tuple[list[str], dict[str, str]]] = {}  # one line a folder, all its names
    copies = {}  # where -> what copy
    for name, kind, where, about in model_rows(cache_dir):
        if where != "-":
            if about in (COPY, FLOAT32_COPY):
                copies[where] = "CTranslate2 copy" if about == COPY else "float32 copy"
            names, kinds = by_folder.setdefault(where, ([], {}))
            names += [name] if name not in names else []
            base = kind.removesuffix(" [default]")
            kinds[base] = kind if kind != base else kinds.get(base, kind)  # "[default]" kept
    on_disk = []
    for where, (names, kinds) in by_folder.items():
        what = f"model {', '.join(names)} ({', '.join(kinds.values())})"
        on_disk.append((f"{copies[where]} of {what}" if where in copies else what, where))
    return rows + (on_disk or [("models on disk", "none")])


def run(args: argparse.Namespace) -> int:
    """Print the facts, secrets redacted (:func:`paraamr.report.redact`: tokens, a URL's password)."""
    from paraamr.report import redact

    for fact, value in facts(args.cache_dir):
        print(redact(f"- {fact}: {value}"))
    sys.stdout.flush()
    return 0
