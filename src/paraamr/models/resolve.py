"""Where a model is on disk: a local path, packaged weights, the release cache, or the Hub cache.

:func:`resolve` never fetches; a model that is not on disk is refused, naming the command that
fetches it:

>>> resolve("parse_xfm_bart_base", "parser", cache_dir="/nonexistent")
Traceback (most recent call last):
...
paraamr.errors.ModelNotFoundError: parser model 'parse_xfm_bart_base' is not on disk (looked at
/nonexistent/models/parse_xfm_bart_base); fetch it with: paraamr models download parse_xfm_bart_base
--cache-dir /nonexistent
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
from pathlib import Path

from paraamr.errors import ModelNotFoundError, ParaAMRError
from paraamr.models.catalog import (
    AMRLIB_INFERENCE,
    AMRLIB_MODELS,
    HUB_MODELS,
    PACKAGED,
    check_kind,
    names,
)

__all__ = [
    "OTHER_FORMATS",
    "TOKENIZER_FILES",
    "TRAIN_QUALITY",
    "amrlib_meta",
    "base_tokenizer",
    "cache_flag",
    "cache_root",
    "check_inference_kind",
    "disk_size",
    "installed_path",
    "offline",
    "resolve",
    "source",
    "tokenizer_dir",
    "tokenizer_id",
]

#: Files that make up a tokenizer (whichever of them a repository has).
TOKENIZER_FILES = [
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "config.json",
]
#: Hub files never fetched: weights of other frameworks and exports.
OTHER_FORMATS = [
    "*.msgpack",
    "*.h5",
    "*.ot",
    "*.tflite",
    "*.onnx",
    "*.onnx_data",
    "onnx/*",
    "openvino/*",
    "coreml/*",
    "*.mlmodel",
    "*.gguf",
]
#: Weights files: a snapshot holds one format of them, so none is required to find it offline.
_WEIGHT_FILES = ["*.safetensors", "*.bin", "*.pt", "*.pth"]
#: Legacy Hub ids that amrlib configs name, and their current ids.
_HUB_ALIASES = {f"t5-{size}": f"google-t5/t5-{size}" for size in ("small", "base", "large")}


def cache_root(path: str | Path | None = None) -> Path:
    """The cache root: ``path`` if given, else ``$PARAAMR_CACHE``, else ``~/.cache/paraamr``.

    >>> str(cache_root("/tmp/x"))
    '/tmp/x'
    """
    if path is not None:
        return Path(path)
    return Path(os.environ.get("PARAAMR_CACHE") or Path.home() / ".cache" / "paraamr")


def offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` asks for offline mode (read now, not at import)."""
    return os.environ.get("HF_HUB_OFFLINE", "0").strip().lower() in ("1", "true", "yes", "on")


def cache_flag(cache: str | Path | None) -> str:
    """`` --cache-dir DIR`` for a fetch command, when a cache other than the default is used."""
    return f" --cache-dir {cache}" if cache is not None else ""


def source(
    name_or_path: str | Path, kind: str, *, cache_dir: str | Path | None = None, local: bool = True
) -> str:
    """Where ``name_or_path`` comes from: ``path`` (a local one only when ``local``), ``packaged``,
    ``cache``, ``release`` or ``hub``.

    >>> source("smollm2", "lm"), source("generate_t5wtense", "realizer"), source("gpt2", "lm")
    ('packaged', 'release', 'hub')
    >>> source("./my-model", "parser")
    'path'
    """
    kind = check_kind(kind)
    name = str(name_or_path)
    here = local and Path(name).expanduser().exists()
    if here or name.startswith((".", "/", "~")) or name.count("/") > 1:
        return "path"
    if (kind, name) in PACKAGED:
        return "packaged"
    if name in AMRLIB_MODELS:
        return "release"
    if "/" not in name and (cache_root(cache_dir) / "models" / name).is_dir():
        return "cache"
    return "hub"


def _packaged(kind: str, name: str) -> Path:
    package = PACKAGED[(kind, name)]
    spec = importlib.util.find_spec(package.module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(
            f"{kind} model {name!r} is not installed (looked for the Python package {package.module}); "
            f"install it with: {package.install}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / package.inner
    if not path.exists():
        raise ModelNotFoundError(
            f"{kind} model {name!r}: package {package.module} is installed but {path} is missing; "
            f"reinstall it with: {package.install} --force-reinstall"
        )
    return path


def _hub_cached(repo_id: str, kind: str, cache: str | Path | None) -> Path:
    """A Hub snapshot from huggingface_hub's cache."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.constants import HF_HUB_CACHE
    from huggingface_hub.errors import HFValidationError

    fetch = f"fetch it with: paraamr models download {repo_id} --kind {kind}{cache_flag(cache)}"
    try:
        # skip what fetch_hub leaves out, or the cached snapshot would count as incomplete
        ignore = OTHER_FORMATS + _WEIGHT_FILES
        path = Path(snapshot_download(repo_id, local_files_only=True, ignore_patterns=ignore))
    except HFValidationError as err:
        raise ModelNotFoundError(
            f"{kind} model {repo_id!r} is neither a local path, a known name nor a Hub id; "
            f"known names: {', '.join(names(kind))}"
        ) from err
    except Exception as err:  # not in the local cache
        raise ModelNotFoundError(
            f"{kind} model {repo_id!r} is not on disk (looked at the Hub cache {HF_HUB_CACHE} and "
            f"the path ./{repo_id}); {fetch}"
        ) from err
    if not any(f.exists() for pattern in _WEIGHT_FILES for f in path.rglob(pattern)):  # a download cut short
        raise ModelNotFoundError(
            f"{kind} model {repo_id!r} is not on disk (its snapshot in the Hub cache {HF_HUB_CACHE} has "
            f"no weights yet); {fetch}"
        )
    return path


#: What a missing or wrong quality model's error suggests (``--input`` defaults to bundled sentences).
TRAIN_QUALITY = "train one with `paraamr quality train --output DIR`"
#: Per kind, files of which a local model folder holds at least one.
_MARKERS = {
    "parser": ("amrlib_meta.json", "config.json", "model.pt", "pytorch_model.bin"),
    "realizer": ("amrlib_meta.json", "config.json", "pytorch_model.bin"),
    "lm": ("config.json",),
    "embedder": ("modules.json", "config.json"),
    "quality": ("modules.json", "config.json"),
}


def _local(path: Path, kind: str) -> Path:
    """``path`` when it can be a ``kind`` model (a folder with a marker file, or an LM's ``.gguf``)."""
    if path.is_file():
        if kind == "lm" and path.suffix == ".gguf":
            return path
        wanted = "a model folder or a .gguf file" if kind == "lm" else "a model folder"
        raise ModelNotFoundError(f"{kind} model {path} is a file, not {wanted}")
    if not any((path / f).is_file() for f in _MARKERS[kind]):
        hint = f"; {TRAIN_QUALITY}" if kind == "quality" else ""
        what = "a sentence-transformers" if kind in ("embedder", "quality") else f"a {kind}"
        raise ModelNotFoundError(
            f"{path} is not {what} model folder (it holds none of {', '.join(_MARKERS[kind])}){hint}"
        )
    return path


def resolve(
    name_or_path: str | Path, kind: str, *, cache_dir: str | Path | None = None, local: bool = True
) -> Path:
    """The path of model ``name_or_path`` of ``kind``: a local path (unless not ``local``), packaged
    weights, ``<cache>/models/NAME``, or a Hub id in huggingface_hub's cache.

    >>> resolve("smollm2", "lm").name
    'SmolLM2-135M-Instruct.Q4_1.gguf'
    >>> (resolve("all-MiniLM-L6-v2", "embedder") / "modules.json").is_file()
    True
    """
    kind = check_kind(kind)
    path = Path(name_or_path).expanduser()
    if local and path.exists():
        return _local(path, kind)
    name = str(name_or_path)
    where = source(name, kind, cache_dir=cache_dir, local=local)
    if where == "path":
        hint = f"; {TRAIN_QUALITY}" if kind == "quality" else ""
        raise ModelNotFoundError(
            f"{kind} model path {name!r} does not exist (looked at {path.resolve()}){hint}"
        )
    if where == "packaged":
        return _packaged(kind, name)
    target = cache_root(cache_dir) / "models" / name
    if where == "cache":
        return target
    if (installed := installed_path(name, cache_dir)) is not None and installed.is_dir():
        return installed
    if where == "release":
        release = AMRLIB_MODELS[name]
        if release.kind != kind:
            raise ModelNotFoundError(f"{name!r} is an amrlib {release.kind} model, not a {kind} model")
        if target.is_dir():
            return target
        raise ModelNotFoundError(
            f"{kind} model {name!r} is not on disk (looked at {target}); fetch it with: "
            f"paraamr models download {name}{cache_flag(cache_dir)}"
        )
    return _hub_cached(name, kind, cache_dir)


def installed_path(name: str, cache_dir: str | Path | None = None) -> Path | None:
    """Where an offline install puts Hub model ``name`` (there or not), or None."""
    known = HUB_MODELS.get(name)
    if known is None or known.installed is None:
        return None
    return cache_root(cache_dir) / "models" / known.installed


def tokenizer_id(model_dir: str | Path) -> str:
    """Hub id of the base tokenizer of amrlib model dir ``model_dir`` (legacy ids mapped)."""
    model_dir = Path(model_dir)
    meta_file = model_dir / "amrlib_meta.json"
    meta = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
    base = meta.get("base_model")
    if not base and model_dir.name in AMRLIB_MODELS:
        base = AMRLIB_MODELS[model_dir.name].tokenizer
    if not base:
        if not (model_dir / "config.json").is_file():
            raise ModelNotFoundError(f"model dir {model_dir} has no config.json (not a transformers model)")
        config = json.loads((model_dir / "config.json").read_text())
        params = next(iter((config.get("task_specific_params") or {}).values()), {})
        base = params.get("tok_name_or_path") or params.get("model_name_or_path")
    if not base:
        raise ModelNotFoundError(f"model dir {model_dir} names no base tokenizer and holds none")
    return _HUB_ALIASES.get(base, base)


def tokenizer_dir(repo_id: str, *, cache_dir: str | Path | None = None) -> Path:
    """Where the tokenizer files of Hub repo ``repo_id`` go in the cache (present or not)."""
    repo_id = _HUB_ALIASES.get(repo_id, repo_id)
    return cache_root(cache_dir) / "tokenizers" / repo_id.replace("/", "--")


def base_tokenizer(model_dir: str | Path, *, cache_dir: str | Path | None = None) -> Path:
    """The tokenizer for amrlib model dir ``model_dir``: its own, else its base model's in the cache."""
    model_dir = Path(model_dir)
    if any((model_dir / f).is_file() for f in ("tokenizer.json", "vocab.json", "spiece.model")):
        return model_dir
    base = tokenizer_id(model_dir)
    target = tokenizer_dir(base, cache_dir=cache_dir)
    if not target.is_dir():
        raise ModelNotFoundError(
            f"tokenizer {base!r} for model {model_dir.name!r} is not on disk (looked at {target}); "
            f"fetch it with: paraamr models download {model_dir.name}{cache_flag(cache_dir)}"
        )
    return target


def amrlib_meta(model_dir: str | Path, kind: str, *, trust_remote_code: bool = False) -> dict:
    """The ``amrlib_meta.json`` of ``model_dir`` ({} when none), refused unless it names one of
    amrlib's own ``kind`` inference classes and a weights file inside the dir, or ``trust_remote_code``.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "amrlib_meta.json").write_text('{"inference_module": "torch.hub",'
    ...     ' "inference_class": "load", "model_fn": "x"}')
    >>> amrlib_meta(folder, "parser")
    Traceback (most recent call last):
    ...
    paraamr.errors.ParaAMRError: parser model .../amrlib_meta.json asks amrlib to run torch.hub.load, ...
    >>> amrlib_meta(folder, "parser", trust_remote_code=True)["inference_class"]
    'load'
    """
    kind = check_kind(kind)
    meta_file = Path(model_dir) / "amrlib_meta.json"
    if not meta_file.is_file():
        return {}
    try:
        meta = json.loads(meta_file.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ParaAMRError(f"{kind} model {meta_file} is not valid JSON: {err}") from err
    if not isinstance(meta, dict):
        raise ParaAMRError(f"{kind} model {meta_file} is not a JSON object")
    if trust_remote_code:
        return meta
    code = (meta.get("inference_module"), meta.get("inference_class"))
    if code not in AMRLIB_INFERENCE.get(kind, ()):
        check_inference_kind(meta, kind, model_dir)
        module, cls = (str(c).lstrip(".") for c in code)
        raise ParaAMRError(
            f"{kind} model {meta_file} asks amrlib to run {module}.{cls}, which is not one of "
            f"amrlib's own {kind} inference classes; refusing to run code from a model folder "
            "(pass --trust-remote-code, or trust_remote_code=True in Python, if you trust it)"
        )
    weights = str(meta.get("model_fn", ""))
    if not weights or Path(weights).name != weights or weights in (".", ".."):
        raise ParaAMRError(
            f"{kind} model {meta_file}: model_fn {weights!r} is not a file name inside the model folder"
        )
    return meta


def check_inference_kind(meta: dict, kind: str, model_dir: str | Path) -> None:
    """ParaAMRError when the amrlib metadata ``meta`` names another kind's inference class.

    >>> check_inference_kind({"inference_module": ".parse_gsii.inference", "inference_class": "Inference"},
    ...                      "realizer", "m")
    Traceback (most recent call last):
    ...
    paraamr.errors.ParaAMRError: realizer model m is an amrlib parser model, not a realizer model
    """
    code = (meta.get("inference_module"), meta.get("inference_class"))
    other = next((k for k, allowed in AMRLIB_INFERENCE.items() if code in allowed), kind)
    if other != kind:
        raise ParaAMRError(f"{kind} model {Path(model_dir)} is an amrlib {other} model, not a {kind} model")


def disk_size(path: str | Path) -> int:
    """Bytes on disk of the file or folder ``path`` (links followed once, each file counted once).

    >>> disk_size("/nonexistent")
    0
    """
    path = Path(path)
    if path.is_file():
        return path.stat().st_size
    sizes = {}  # by (device, inode): each file once
    for root, _, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                stat = (Path(root) / f).stat()  # Hub snapshots: links to blobs
                sizes[stat.st_dev, stat.st_ino] = stat.st_size
    return sum(sizes.values())
