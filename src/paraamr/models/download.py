"""Fetching models on first use (:func:`ensure`): resumable, checked amrlib release downloads and
Hub snapshots. Offline or with ``download=False`` a missing model is refused, saying why:

>>> import os; os.environ["HF_HUB_OFFLINE"] = "1"
>>> ensure("generate_t5wtense", "realizer", cache_dir="/nonexistent")
Traceback (most recent call last):
...
paraamr.errors.ModelNotFoundError: realizer model 'generate_t5wtense' is not on disk (looked at
/nonexistent/models/generate_t5wtense); fetch it with: paraamr models download generate_t5wtense
--cache-dir /nonexistent (offline mode is on: HF_HUB_OFFLINE=1, so nothing was fetched)
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import http.client
import importlib.util
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from paraamr.atomic import atomic_dir, new_folders
from paraamr.errors import ModelNotFoundError, ParaAMRError
from paraamr.locks import file_lock
from paraamr.models.archive import model_dir, safe_extract
from paraamr.models.catalog import AMRLIB_MODELS, OFFLINE_LM, PACKAGED, check_kind
from paraamr.models.resolve import (
    OTHER_FORMATS,
    TOKENIZER_FILES,
    amrlib_meta,
    base_tokenizer,
    cache_root,
    check_inference_kind,
    installed_path,
    offline,
    resolve,
    source,
    tokenizer_dir,
    tokenizer_id,
)
from paraamr.network import bound_hub_requests, hub_timeout, network_problem
from paraamr.tasks import feed

if TYPE_CHECKING:
    from huggingface_hub import HFCacheInfo

__all__ = [
    "check_amrlib_folder",
    "ensure",
    "fetch_hub",
    "fetch_release",
    "fetch_tokenizer",
    "fetch_url",
    "remove",
    "scan_hub_cache",
]


class _Transient(Exception):
    """A transfer that broke off or a server hiccup: worth a retry (resuming what was received)."""


def _why_not(download: bool) -> str | None:
    if offline():
        return "offline mode is on: HF_HUB_OFFLINE=1, so nothing was fetched"
    if not download:
        return "downloads are off: --no-download / download=False"
    return None


def ensure(
    name_or_path: str | Path,
    kind: str,
    *,
    cache_dir: str | Path | None = None,
    download: bool = True,
    progress: bool = True,
    trust_remote_code: bool = False,
) -> Path:
    """The path of model ``name_or_path`` of ``kind``, fetched first when it is missing; for an
    amrlib model dir, its ``amrlib_meta.json`` checked and its base tokenizer fetched too.
    :class:`~paraamr.errors.ModelNotFoundError` when it is not on disk and cannot be fetched."""
    kind = check_kind(kind)
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"{kind} model must be a model name or a folder, got {name_or_path!r}")
    try:
        path = resolve(name_or_path, kind, cache_dir=cache_dir)
    except ModelNotFoundError as err:
        where = source(name_or_path, kind, cache_dir=cache_dir)
        if where not in ("release", "hub") or "not on disk" not in str(err):
            raise
        if (why := _why_not(download)) is not None:
            if kind == "lm":
                why += f"; {OFFLINE_LM!r} is an LM that needs no download"
            raise ModelNotFoundError(f"{err} ({why})") from None
        name = str(name_or_path)
        try:
            if where == "release":
                path = fetch_release(name, cache_dir=cache_dir, progress=progress)
            else:
                path = fetch_hub(name, kind, progress=progress, missing=str(err))
        except ModelNotFoundError:
            raise
        except ParaAMRError as fail:  # (where it was looked for, and how to fetch it later)
            raise ModelNotFoundError(f"{kind} model {name!r} could not be fetched: {fail}; {err}") from fail
    meta = check_amrlib_folder(path, kind, str(name_or_path), trust_remote_code=trust_remote_code)
    if meta and "parse_spring" not in str(meta.get("inference_module")):  # SPRING brings its own tokenizer
        try:
            base_tokenizer(path, cache_dir=cache_dir)
        except ModelNotFoundError as err:
            if (why := _why_not(download)) is not None:
                raise ModelNotFoundError(f"{err} ({why})") from None
            fetch_tokenizer(tokenizer_id(path), cache_dir=cache_dir)
    return path


def fetch_hub(repo_id: str, kind: str, *, progress: bool = True, missing: str = "") -> Path:
    """Snapshot of Hub model ``repo_id`` in huggingface_hub's cache, in one weights format
    (safetensors when present). ``missing``: where it was looked for and how to fetch it, said when
    the Hub cannot be reached."""
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.constants import ENDPOINT
    from huggingface_hub.errors import RepositoryNotFoundError

    bound_hub_requests()
    try:
        files = [s.rfilename for s in HfApi().model_info(repo_id, timeout=hub_timeout()).siblings or []]
        ignore = list(OTHER_FORMATS)
        if any(f.endswith(".safetensors") for f in files):
            ignore += ["*.bin", "*.pt", "*.pth"]
        with _bars(progress):
            return Path(snapshot_download(repo_id, ignore_patterns=ignore))
    except RepositoryNotFoundError as err:
        raise ModelNotFoundError(
            f"{kind} model {repo_id!r} is neither on disk nor a model repository on the Hub ({ENDPOINT})"
        ) from err
    except Exception as err:
        why = f"could not be fetched from the Hub ({ENDPOINT}): {network_problem(err)}"
        why = f"{kind} model {repo_id!r} {why}"
        raise ModelNotFoundError(f"{why}; {missing}" if missing else why) from err


def fetch_tokenizer(repo_id: str, *, cache_dir: str | Path | None = None) -> Path:
    """Fetch the tokenizer files of Hub repo ``repo_id`` into the cache (atomically); return the dir."""
    from huggingface_hub import snapshot_download

    target = tokenizer_dir(repo_id, cache_dir=cache_dir)
    if target.is_dir():
        return target
    bound_hub_requests()
    with atomic_dir(target, exist_ok=True) as tmp:  # another process may finish first
        try:
            with _bars(True):
                snapshot_download(
                    target.name.replace("--", "/"), allow_patterns=TOKENIZER_FILES, local_dir=tmp
                )
        except Exception as err:
            raise ModelNotFoundError(
                f"tokenizer {repo_id!r} could not be fetched from the Hub into {target} "
                f"({network_problem(err)})"
            ) from err
        shutil.rmtree(tmp / ".cache", ignore_errors=True)
    return target


@contextlib.contextmanager
def _bars(on: bool) -> Iterator[None]:
    """huggingface_hub's progress bars on (or off) within the block; ``HF_HUB_DISABLE_PROGRESS_BARS``
    wins."""
    from huggingface_hub import constants
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    was_on = not are_progress_bars_disabled()
    if on == was_on or (on and constants.HF_HUB_DISABLE_PROGRESS_BARS):
        yield
        return
    (enable_progress_bars if on else disable_progress_bars)()
    try:
        yield
    finally:
        (enable_progress_bars if was_on else disable_progress_bars)()


def _unreachable(err: BaseException) -> bool:
    """No route to the host at all (refused, unknown name, unreachable network): do not retry."""
    if isinstance(err, (ConnectionRefusedError, socket.gaierror)):
        return True
    return isinstance(err, OSError) and err.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH)


def _open(url: str, start: int, timeout: float):
    request = urllib.request.Request(url, headers={"Range": f"bytes={start}-"} if start else {})
    try:
        return urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as err:
        if err.code == 416 and start:
            total = re.search(r"/(\d+)", err.headers.get("Content-Range") or "")
            if total and int(total.group(1)) == start:
                return None  # already complete
            return _open(url, 0, timeout)  # no size said, or not a start of the file: the whole of it
        if err.code >= 500 or err.code == 429:
            raise _Transient(f"HTTP {err.code} {err.reason}") from err
        raise ParaAMRError(f"cannot download {url}: HTTP {err.code} {err.reason}") from err
    except urllib.error.URLError as err:
        if url.startswith("file://"):  # a local file: no retry changes it
            why = getattr(err.reason, "strerror", None) or err.reason
            raise ParaAMRError(f"cannot download {url}: {str(why).lower()}") from err
        if _unreachable(err.reason):
            raise ParaAMRError(
                f"cannot download {url}: {err.reason} (no network, or no route to the host)"
            ) from err
        raise _Transient(str(err.reason)) from err
    except (OSError, http.client.HTTPException) as err:
        raise _Transient(f"{type(err).__name__}: {err}") from err


def _transfer(url: str, part: Path, *, progress: bool, timeout: float) -> None:
    """One attempt: append to ``part`` from its length (or restart when the server ignores the
    ``Range``); :class:`_Transient` when it breaks off short."""
    from huggingface_hub.utils import tqdm  # off when HF_HUB_DISABLE_PROGRESS_BARS is set

    start = part.stat().st_size if part.exists() else 0
    response = _open(url, start, timeout)
    if response is None:
        return
    with response:
        span = re.fullmatch(r"bytes (\d+)-\d+/(\d+|\*)", response.headers.get("Content-Range") or "")
        length = response.headers.get("Content-Length")
        if getattr(response, "status", None) == 206 and span and int(span.group(1)) == start:
            total = int(span.group(2)) if span.group(2) != "*" else None
        else:  # a whole body: start over
            start, total = 0, (int(length) if length else None)
        done = start
        with (
            part.open("ab" if start else "wb") as out,
            _bars(progress),
            tqdm(
                total=total,
                initial=start,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                desc=part.name.split("-", 1)[-1],
                disable=not progress,
                file=sys.stderr,
            ) as bar,
        ):
            while True:
                try:  # what has come, not a full MiB, on disk at once: a stalled transfer's bytes are kept
                    chunk = response.read1(1 << 20)
                except (OSError, http.client.HTTPException) as err:
                    raise _Transient(f"broke off after {done} bytes: {err}") from err
                if not chunk:
                    break
                out.write(chunk)
                out.flush()
                done += len(chunk)
                bar.update(len(chunk))
    if total is not None and done != total:
        raise _Transient(f"broke off after {done} of {total} bytes")


def fetch_url(
    url: str,
    part: str | Path,
    *,
    progress: bool = True,
    retries: int = 3,
    backoff: float = 1.0,
    timeout: float = 60.0,
) -> Path:
    """Download ``url`` into ``part``, resuming what it holds, retrying a transfer that breaks off
    ``retries`` times after ``backoff``, 2×, 4×... seconds; no route to the host fails at once."""
    part = Path(part)
    if retries < 0:
        raise ValueError(f"retries must be 0 or more, got {retries}")
    if not url.startswith(("http://", "https://", "file://")):
        raise ParaAMRError(f"unsupported URL {url!r} (http, https or file only)")
    for attempt in range(retries + 1):
        try:
            _transfer(url, part, progress=progress, timeout=timeout)
            return part
        except _Transient as err:
            if attempt == retries:
                raise ParaAMRError(
                    f"download of {url} failed after {attempt + 1} attempts ({err}); "
                    "run the same command again to resume it"
                ) from err
            time.sleep(backoff * 2**attempt)
    return part  # unreachable; for type checkers


def _md5(path: Path) -> str:
    with path.open("rb") as f:
        return feed(hashlib.md5(), f).hexdigest()


def fetch_release(
    name: str,
    *,
    cache_dir: str | Path | None = None,
    url: str | None = None,
    md5: str | None = None,
    tokenizer: bool = True,
    progress: bool = True,
    retries: int = 3,
    backoff: float = 1.0,
) -> Path:
    """Download amrlib release ``name`` (or the tarball at ``url``, stored as ``name``) into
    ``<cache>/models/<name>``, checked (``md5``, safe members, amrlib's files) and with its base
    tokenizer unless ``tokenizer=False``; a cut-off transfer is resumed by the next call."""
    release = AMRLIB_MODELS.get(name)
    if release is None and url is None:
        raise ModelNotFoundError(
            f"unknown amrlib model {name!r}; known: {', '.join(AMRLIB_MODELS)} (or give a --url)"
        )
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise ParaAMRError(f"model name {name!r} must be a plain folder name (letters, digits, . _ -)")
    root = cache_root(cache_dir) / "models"
    target = root / name
    if url is None and not target.is_dir() and offline():  # (it went to the network all the same)
        raise ModelNotFoundError(f"amrlib model {name!r} is not in {root} ({_why_not(True)})")
    if url is None:
        url, md5 = release.url, md5 or release.md5
    if not target.is_dir():
        with new_folders(root / ".downloads"):  # a cache folder made for a failed (or done) download goes
            try:
                root.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise ParaAMRError(f"cannot create the model cache {root}: {err}") from err
            with file_lock(root / f".{name}.lock", command="models download"):  # one download at a time
                if not target.is_dir():  # not fetched by another process meanwhile
                    _fetch_into(url, md5, target, progress=progress, retries=retries, backoff=backoff)
    if tokenizer:
        try:
            base_tokenizer(target, cache_dir=cache_dir)
        except ModelNotFoundError:
            fetch_tokenizer(tokenizer_id(target), cache_dir=cache_dir)
    return target


def _download_part(url: str, target: Path) -> Path:
    """Where the archive of ``url`` for the model folder ``target`` is downloaded (and resumed):
    named after the model too, so that ``models rm NAME`` finds it whatever the URL was."""
    key = hashlib.sha1(url.encode()).hexdigest()[:12]
    return target.parent / ".downloads" / f"{target.name}-{key}-{url.rsplit('/', 1)[-1] or 'archive.tar.gz'}"


def _partials(target: Path) -> list[Path]:
    """The folders that runs killed while they unpacked into ``target`` left beside it."""
    return sorted(target.parent.glob(f".partial-{glob.escape(target.name)}-*"))


def _fetch_into(
    url: str, md5: str | None, target: Path, *, progress: bool, retries: int, backoff: float
) -> None:
    part = _download_part(url, target)
    part.parent.mkdir(exist_ok=True)
    for stale in _partials(target):  # (under the model's lock: no other process unpacks it)
        shutil.rmtree(stale, ignore_errors=True)
    fetch_url(url, part, progress=progress, retries=retries, backoff=backoff)
    if md5 is not None and (got := _md5(part)) != md5:
        part.unlink()
        raise ParaAMRError(f"download of {url} is corrupt: md5 {got}, expected {md5} (deleted; run again)")
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".partial-{target.name}-") as tmp:
        try:  # extracted beside the target; the model folder in it is then renamed into place
            safe_extract(part, Path(tmp) / "x", name=url)  # messages name what the user gave
            model = model_dir(url, Path(tmp) / "x")
        except ParaAMRError:
            part.unlink()  # complete but unusable: never resume it
            raise
        except OSError as err:  # the disk (full, read-only): the download is kept for the next try
            raise OSError(err.errno, err.strerror, str(target.parent)) from None
        os.replace(model, target)
    part.unlink()


def remove(name: str, *, kind: str | None = None, cache_dir: str | Path | None = None) -> list[Path]:
    """Delete what the caches hold for model ``name`` (not packaged weights: pip's); return what was
    removed."""
    from paraamr.models.lm import float32_copies  # (lm stands on this module)

    folder = cache_root(cache_dir) / "models" / name
    local = folder.exists()
    candidates: list[Path] = []
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):  # with what a cut download of it left
        archives = f"{glob.escape(name)}-{'[0-9a-f]' * 12}-*"  # of any URL (--url, a mirror)
        candidates += [folder, *_partials(folder), *(folder.parent / ".downloads").glob(archives)]
    if "/" in name:  # a Hub id may name a base tokenizer (shared by releases: kept otherwise)
        candidates.append(tokenizer_dir(name, cache_dir=cache_dir))
    if (installed := installed_path(name, cache_dir)) is not None:
        candidates.append(installed)
    for (k, packaged_name), package in PACKAGED.items():
        gguf = package.inner.endswith(".gguf")
        if packaged_name == name and (kind is None or check_kind(kind) == k) and gguf:
            candidates += float32_copies(Path(package.inner), cache_dir)
    removed = [path for path in candidates if path.is_dir() or path.is_file()]
    for path in removed:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    if not local and not any(n == name for _, n in PACKAGED) and (info := scan_hub_cache()) is not None:
        repos = [r for r in info.repos if r.repo_id == name and r.repo_type == "model"]
        if repos:
            info.delete_revisions(*(rev.commit_hash for r in repos for rev in r.revisions)).execute()
            removed += [r.repo_path for r in repos]
    return removed


def scan_hub_cache() -> HFCacheInfo | None:
    """huggingface_hub's cache as configured now, or None where there is none yet."""
    from huggingface_hub import constants, scan_cache_dir

    try:
        return scan_cache_dir(constants.HF_HUB_CACHE)
    except Exception:  # no Hub cache at all
        return None


def check_amrlib_folder(path: Path, kind: str, name: str, *, trust_remote_code: bool = False) -> dict:
    """The ``amrlib_meta.json`` of a parser or realizer folder ``path`` (checked:
    :func:`~paraamr.models.resolve.amrlib_meta`; {} for another kind or a file), loading nothing. A
    folder without one is refused unless amrlib knows it by its weights (its first models had none):
    before, amrlib's "No meta-data ... available" came when the model loaded."""
    if kind not in ("parser", "realizer") or not path.is_dir():
        return {}
    if (path / "amrlib_meta.json").is_file():
        return amrlib_meta(path, kind, trust_remote_code=trust_remote_code)
    if importlib.util.find_spec("amrlib") is None:
        return {}  # (the stage names the missing extra)
    from amrlib.models.model_factory import get_non_config_model

    if (legacy := get_non_config_model(str(path))) is not None:  # known by its weights' md5
        check_inference_kind(legacy, kind, path)
        return {}
    try:
        config = json.loads((path / "config.json").read_text())
        seen = f"; its config.json is a {config.get('model_type', '?')} model"
    except (OSError, ValueError, AttributeError):
        seen = ""
    why = f"is not an amrlib model (no amrlib_meta.json{seen})"
    raise ModelNotFoundError(f"{kind} model {name}: {path} {why}")
