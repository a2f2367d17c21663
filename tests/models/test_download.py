"""download: models fetched on first use from loopback servers (release host with Range/resume/
retry; the loopback Hub through the real huggingface_hub), integrity checks, archives that try to
escape, offline mode, and ``paraamr models download|list|rm``."""

from __future__ import annotations

import http.server
import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

import pytest
from hubserver import HubServer, patch_clients

from paraamr.cli import main
from paraamr.errors import ArchiveRefused, ModelNotFoundError, ParaAMRError
from paraamr.models import download as dl
from paraamr.models.archive import safe_extract
from paraamr.models.catalog import AMRLIB_MODELS
from paraamr.models.download import ensure, fetch_release, fetch_url
from paraamr.models.resolve import resolve
from paraamr.models.tiny import PAPER_AMR, PAPER_TEXT


def _tarball(model_dir: Path, top: str, *, drop: tuple[str, ...] = (), meta: dict | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(model_dir.iterdir()):
            if path.name in drop:
                continue
            if path.name == "amrlib_meta.json" and meta is not None:
                data = json.dumps({**json.loads(path.read_text()), **meta}).encode()
                info = tarfile.TarInfo(f"{top}/{path.name}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.add(path, arcname=f"{top}/{path.name}")
    return buf.getvalue()


class _Server:
    """A loopback release host: ``/NAME`` serves ``files[NAME]``, honouring ``Range`` (206) unless
    ``ignore_range``; ``cut[NAME] = n`` makes the next GET send n bytes and drop the connection;
    ``fail[NAME] = k`` answers the next k GETs with 503; ``delay`` seconds before each answer;
    ``stall[NAME] = n`` sends n bytes, then holds the connection open until ``release`` is set.
    ``requests`` logs (path, Range header)."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.cut: dict[str, int] = {}
        self.fail: dict[str, int] = {}
        self.ignore_range = False
        self.delay = 0.0
        self.stall: dict[str, int] = {}
        self.release = threading.Event()
        self.requests: list[tuple[str, str | None]] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                rng = self.headers.get("Range")
                owner.requests.append((self.path, rng))
                name = self.path.rsplit("/", 1)[-1]
                data = owner.files.get(name)
                if data is None:
                    self.send_error(404)
                    return
                if owner.fail.get(name):
                    owner.fail[name] -= 1
                    self.send_error(503)
                    return
                if owner.delay:
                    time.sleep(owner.delay)
                start = int(rng[6:-1]) if rng and not owner.ignore_range else 0
                self.send_response(206 if start else 200)
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                body = data[start:]
                if name in owner.stall:
                    self.wfile.write(body[: owner.stall.pop(name)])
                    self.wfile.flush()
                    owner.release.wait(60)
                    self.close_connection = True
                    return
                if name in owner.cut:
                    self.wfile.write(body[: owner.cut.pop(name)])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server(tiny_models, tmp_path_factory):
    parser = tiny_models["parser"]
    files = {"tiny.tar.gz": _tarball(parser, "model_tiny-v0_0_1")}
    files["corrupt.tar.gz"] = files["tiny.tar.gz"][:-200]  # truncated gzip with a "complete" length
    bare = tmp_path_factory.mktemp("bare")
    (bare / "config.json").write_text("{}")  # a folder without amrlib's meta data and weights
    files["incomplete.tar.gz"] = _tarball(bare, "model_x")
    srv = _Server(files)
    yield srv
    srv.close()


@pytest.fixture
def no_sleep(monkeypatch):
    """Backoff without waiting; records the delays asked for."""
    delays: list[float] = []
    monkeypatch.setattr(dl.time, "sleep", delays.append)
    return delays


def _models(cache: Path) -> list[str]:
    root = cache / "models"
    return sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) if root.exists() else []


def _partials(cache: Path) -> list[str]:
    root = cache / "models"
    found = (
        [p for p in root.rglob("*") if p.is_file() and not p.name.endswith(".lock")] if root.exists() else []
    )
    return sorted(str(p.relative_to(root)) for p in found if ".downloads" in p.parts or ".partial" in str(p))


# -- resume, retry, integrity --------------------------------------------------------------------


def test_cut_transfer_resumes_with_range_in_the_same_call(tmp_path, server, no_sleep):
    data = server.files["tiny.tar.gz"]
    server.cut["tiny.tar.gz"] = 1000
    server.requests.clear()
    part = fetch_url(f"{server.url}/tiny.tar.gz", tmp_path / "x.part", progress=False, retries=2, backoff=0.5)
    assert part.read_bytes() == data
    assert server.requests == [("/tiny.tar.gz", None), ("/tiny.tar.gz", "bytes=1000-")]
    assert no_sleep == [0.5]


def test_negative_retries_are_refused_before_any_request(tmp_path, server):
    server.requests.clear()
    with pytest.raises(ValueError, match="retries must be 0 or more"):
        fetch_url(f"{server.url}/tiny.tar.gz", tmp_path / "x.part", progress=False, retries=-1)
    assert server.requests == [] and not (tmp_path / "x.part").exists()


def test_progress_bar_on_stderr_counts_from_the_resumed_byte(tmp_path, server, no_sleep, capsys):
    data = server.files["tiny.tar.gz"]
    part = tmp_path / "0123-model_tiny.tar.gz"
    part.write_bytes(data[:1000])  # left by an earlier run
    fetch_url(f"{server.url}/tiny.tar.gz", part, progress=True)
    assert part.read_bytes() == data
    bar = capsys.readouterr().err
    assert "model_tiny.tar.gz" in bar and "100%" in bar


def test_a_quiet_run_still_shows_its_downloads(tmp_path, server, no_sleep, capsys):
    """A run silences the libraries' loading bars (huggingface_hub's among them) before its models
    load; a model it then fetches still shows a bar, and the silence is back afterwards."""
    from huggingface_hub.utils import are_progress_bars_disabled, enable_progress_bars

    from paraamr.builder.stages import quiet_libraries

    quiet_libraries()
    try:
        fetch_url(f"{server.url}/tiny.tar.gz", tmp_path / "0123-model_tiny.tar.gz", progress=True)
        assert "model_tiny.tar.gz" in capsys.readouterr().err
        assert are_progress_bars_disabled()
    finally:
        enable_progress_bars()


def test_download_cut_off_for_good_resumes_on_the_next_run(tmp_path, server, no_sleep, capsys):
    url = f"{server.url}/tiny.tar.gz"
    half = len(server.files["tiny.tar.gz"]) // 2
    server.cut["tiny.tar.gz"] = half
    with pytest.raises(ParaAMRError, match=r"failed after 1 attempts.*run the same command again to resume"):
        fetch_release("tiny", url=url, cache_dir=tmp_path, progress=False, retries=0)
    assert _models(tmp_path) == []  # no model dir until it is whole and checked
    [partial] = _partials(tmp_path)
    assert (tmp_path / "models" / partial).stat().st_size == half
    with pytest.raises(ModelNotFoundError):
        resolve("tiny", "parser", cache_dir=tmp_path)
    server.requests.clear()
    # the next run (through the CLI) asks only for the rest
    assert main(["models", "download", "tiny", "--url", url, "--cache-dir", str(tmp_path), "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "models" / "tiny")
    assert server.requests == [("/tiny.tar.gz", f"bytes={half}-")]
    assert _models(tmp_path) == ["tiny"] and _partials(tmp_path) == []
    assert json.loads((tmp_path / "models" / "tiny" / "amrlib_meta.json").read_text())["model_type"] == "stog"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "status", "word"), [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")]
)
def test_a_signal_mid_download_stops_with_one_line_and_the_next_run_resumes(
    tmp_path, server, sig, status, word
):
    """``paraamr models download`` stopped by SIGTERM (Slurm, ``timeout``) or Ctrl-C mid-transfer:
    one line, the signal's exit status, the bytes received kept for the next run, no lock held."""
    url = f"{server.url}/tiny.tar.gz"
    half = len(server.files["tiny.tar.gz"]) // 2
    server.stall["tiny.tar.gz"] = half
    server.release.clear()
    argv = [sys.executable, "-m", "paraamr", "models", "download", "tiny", "--url", url]
    argv += ["--cache-dir", str(tmp_path)]
    proc = subprocess.Popen([*argv, "--quiet"], stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 120
        while not (
            _partials(tmp_path) and (tmp_path / "models" / _partials(tmp_path)[0]).stat().st_size == half
        ):
            assert proc.poll() is None and time.monotonic() < end, (
                proc.stderr.read() if proc.poll() else "slow"
            )
            time.sleep(0.05)
        proc.send_signal(sig)
        err = proc.communicate(timeout=60)[1]
    finally:
        server.release.set()
    assert proc.returncode == status, err
    assert err.strip().splitlines() == [
        f"paraamr models download: {word}" + (" (SIGTERM)" if sig == signal.SIGTERM else "")
    ]
    [partial] = _partials(tmp_path)
    assert (tmp_path / "models" / partial).stat().st_size == half  # kept, for the next run
    server.requests.clear()
    assert subprocess.run([*argv, "--quiet"], capture_output=True).returncode == 0  # the lock was let go
    assert server.requests == [("/tiny.tar.gz", f"bytes={half}-")]
    assert _models(tmp_path) == ["tiny"] and _partials(tmp_path) == []


def test_server_ignoring_range_and_5xx_are_survived(tmp_path, server, no_sleep):
    data = server.files["tiny.tar.gz"]
    server.cut["tiny.tar.gz"] = 500
    server.ignore_range = True
    try:
        part = fetch_url(f"{server.url}/tiny.tar.gz", tmp_path / "a.part", progress=False, backoff=1)
    finally:
        server.ignore_range = False
    assert part.read_bytes() == data  # restarted from zero, not appended
    server.fail["tiny.tar.gz"] = 2
    part = fetch_url(f"{server.url}/tiny.tar.gz", tmp_path / "b.part", progress=False, retries=3, backoff=1)
    assert part.read_bytes() == data and no_sleep == [1, 1, 2]  # exponential backoff
    server.fail["tiny.tar.gz"] = 5
    with pytest.raises(ParaAMRError, match="failed after 2 attempts"):
        fetch_url(f"{server.url}/tiny.tar.gz", tmp_path / "c.part", progress=False, retries=1)
    server.fail.clear()


def test_no_route_fails_at_once(tmp_path, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: connection refused

    def no_retry(seconds):
        raise AssertionError(f"retried after {seconds} s on a refused connection")

    monkeypatch.setattr(dl.time, "sleep", no_retry)
    with pytest.raises(ParaAMRError, match="no network, or no route to the host"):
        fetch_url(f"http://127.0.0.1:{port}/x.tar.gz", tmp_path / "x", progress=False)
    with pytest.raises(ParaAMRError, match=r"x\.tar\.gz: no such file or directory$"):  # was 4 tries, 8 s
        fetch_url((tmp_path / "x.tar.gz").as_uri(), tmp_path / "x", progress=False)
    monkeypatch.setenv("PARAAMR_RELEASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with pytest.raises(ModelNotFoundError) as err:
        ensure("generate_t5wtense", "realizer", cache_dir=tmp_path, progress=False)
    assert "could not be fetched" in str(err.value) and "no route" in str(err.value)
    # where it was looked for and the command that fetches it, as offline (before: neither)
    assert "is not on disk (looked at" in str(err.value) and "fetch it with: paraamr models" in str(err.value)
    assert _models(tmp_path) == [] and not (tmp_path / "models").exists()  # nor the folders made for it
    patch_clients(monkeypatch, f"http://127.0.0.1:{port}", tmp_path / "hf", token=None)
    with pytest.raises(
        ModelNotFoundError, match=r"'org/tiny-gpt2' could not be fetched from the Hub .*refused"
    ) as err:
        ensure("org/tiny-gpt2", "lm", progress=False)
    assert str(err.value).endswith("fetch it with: paraamr models download org/tiny-gpt2 --kind lm")


def test_concurrent_fetches_of_one_model_download_it_once(tmp_path, server):
    server.requests.clear()
    server.delay = 0.5  # both start before the first is done
    url = f"{server.url}/tiny.tar.gz"
    results: list[Path] = []
    try:
        workers = [
            threading.Thread(
                target=lambda: results.append(
                    fetch_release("tiny", url=url, cache_dir=tmp_path, progress=False)
                )
            )
            for _ in range(2)
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
    finally:
        server.delay = 0.0
    assert results == [tmp_path / "models" / "tiny"] * 2
    assert server.requests == [("/tiny.tar.gz", None)]  # the second waited on the lock, then found it
    assert _models(tmp_path) == ["tiny"] and _partials(tmp_path) == []


def test_download_integrity_checks(tmp_path, server, no_sleep):
    with pytest.raises(ParaAMRError, match="md5"):
        fetch_release(
            "tiny", url=f"{server.url}/tiny.tar.gz", md5="0" * 32, cache_dir=tmp_path, progress=False
        )
    # the URL named (before: the download's temporary file name, "archive 1f0c...-corrupt.tar.gz")
    with pytest.raises(ParaAMRError, match=f"archive {re.escape(server.url)}/corrupt.tar.gz is corrupt or"):
        fetch_release("tiny", url=f"{server.url}/corrupt.tar.gz", cache_dir=tmp_path, progress=False)
    with pytest.raises(ParaAMRError, match=r"incomplete\.tar\.gz lacks amrlib_meta\.json"):
        fetch_release("tiny", url=f"{server.url}/incomplete.tar.gz", cache_dir=tmp_path, progress=False)
    with pytest.raises(ParaAMRError, match="HTTP 404"):
        fetch_release("tiny", url=f"{server.url}/missing.tar.gz", cache_dir=tmp_path, progress=False)
    with pytest.raises(ModelNotFoundError, match="unknown amrlib model"):
        fetch_release("no_such_release", cache_dir=tmp_path)
    with pytest.raises(ParaAMRError, match="plain folder name"):
        fetch_release("org/name", url=f"{server.url}/tiny.tar.gz", cache_dir=tmp_path)
    assert _models(tmp_path) == [] and _partials(tmp_path) == []  # failed checks leave nothing to resume


# -- archives that try to escape (issue 14 item 2) -----------------------------------------------


def _crafted(members: list[tuple[str, bytes | None, dict]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data, attrs in members:
            info = tarfile.TarInfo(name)
            for key, value in attrs.items():
                setattr(info, key, value)
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _hostile_archives(outside: Path) -> dict[str, tuple[bytes, str]]:
    ok = ("model/amrlib_meta.json", b"{}", {})
    victim = str(outside / "victim.txt")
    return {
        "traversal": (_crafted([ok, ("model/../../escaped.txt", b"x", {})]), "climbs out"),
        "absolute": (_crafted([ok, (str(outside / "abs.txt"), b"x", {})]), "absolute path"),
        "symlink": (
            _crafted(
                [
                    ok,
                    ("model/out", None, {"type": tarfile.SYMTYPE, "linkname": str(outside)}),
                    ("model/out/new.txt", b"x", {}),
                ]
            ),
            "symbolic link",
        ),
        "hardlink": (
            _crafted(
                [
                    ok,
                    ("model/h", None, {"type": tarfile.LNKTYPE, "linkname": victim}),
                    ("model/h", b"overwritten", {}),
                ]
            ),
            "hard link",
        ),
        "device": (
            _crafted([ok, ("model/dev", None, {"type": tarfile.CHRTYPE, "devmajor": 1, "devminor": 3})]),
            "device",
        ),
    }


def test_crafted_archives_are_refused_and_write_nothing(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("original")
    before = sorted(p.name for p in outside.iterdir())
    for case, (data, why) in _hostile_archives(outside).items():
        archive = tmp_path / f"{case}.tar.gz"
        archive.write_bytes(data)
        dest = tmp_path / f"x-{case}"
        with pytest.raises(ArchiveRefused, match=why) as err:
            safe_extract(archive, dest)
        assert "refused" in str(err.value) and "corrupt" not in str(err.value), case
        assert sorted(p.name for p in outside.iterdir()) == before, case
        assert (outside / "victim.txt").read_text() == "original", case
        assert not any(dest.rglob("*")), case  # refused before anything was extracted
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path.parent / "escaped.txt").exists()


def _realpath_overflow(dest: Path) -> bytes:
    """CVE-2025-4517 (CPython's ``test_realpath_limit_attack``): symlinks whose expansion passes
    PATH_MAX stop ``os.path.realpath``, so the ``data`` filter's checks are fooled and a hard link
    through them reaches ``dest/../flag``, which the archive then overwrites (and it adds a file)."""
    steps = "abcdefghijklmnop"
    width = (os.pathconf(dest.parent, "PC_PATH_MAX") - len(str(dest)) - 1) // (len(steps) + 1)
    component = "d" * width
    members: list[tuple[str, bytes | None, dict]] = []
    path = ""
    for step in steps:
        members.append((os.path.join(path, component), None, {"type": tarfile.DIRTYPE, "mode": 0o777}))
        members.append((os.path.join(path, step), None, {"type": tarfile.SYMTYPE, "linkname": component}))
        path = os.path.join(path, component)
    link = os.path.join(*steps, "l" * 254)
    members.append((link, None, {"type": tarfile.SYMTYPE, "linkname": os.path.join(*[".."] * len(steps))}))
    members.append(("escape", None, {"type": tarfile.SYMTYPE, "linkname": os.path.join(link, "..")}))
    members.append(("flaglink", None, {"type": tarfile.LNKTYPE, "linkname": os.path.join("escape", "flag")}))
    members.append(("flaglink", b"overwritten", {}))
    members.append(("escape/newfile", b"new", {}))
    return _crafted(members)


def test_the_data_filter_bypass_of_this_python_is_closed(tmp_path):
    """The crafted archive really escapes ``extractall(filter="data")`` on an unpatched Python
    (3.11.7 here); :func:`safe_extract` refuses it before writing anything."""
    for name in ("plain", "safe"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "flag").write_text("original")
    plain, safe = tmp_path / "plain" / "dest", tmp_path / "safe" / "dest"
    archive = tmp_path / "cve.tar.gz"
    archive.write_bytes(_realpath_overflow(plain))
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(plain, filter="data")
    except (tarfile.FilterError, OSError):
        pass  # a patched Python refuses it itself
    escaped = (tmp_path / "plain" / "flag").read_text() != "original"
    assert escaped or sys.version_info >= (3, 11, 13), "the crafted archive should escape an unpatched filter"
    with pytest.raises(ArchiveRefused, match=r"refused: member .* is a symbolic link"):
        safe_extract(archive, safe)
    assert (tmp_path / "safe" / "flag").read_text() == "original"
    assert sorted(p.name for p in (tmp_path / "safe").iterdir()) == ["dest", "flag"]
    assert not any(safe.iterdir())


def test_refused_release_says_why_and_leaves_nothing(tmp_path, server, no_sleep):
    outside = tmp_path / "outside"
    outside.mkdir()
    server.files["evil.tar.gz"] = _hostile_archives(outside)["symlink"][0]
    with pytest.raises(ArchiveRefused, match="refused: member 'model/out' is a symbolic link"):
        fetch_release("evil", url=f"{server.url}/evil.tar.gz", cache_dir=tmp_path / "cache", progress=False)
    assert not list(outside.iterdir())
    assert _models(tmp_path / "cache") == [] and _partials(tmp_path / "cache") == []


# -- fetched on first use: releases and Hub models (issue 12 item 1) -----------------------------


@pytest.fixture
def hub(tmp_path, monkeypatch, tiny_models):
    """The loopback Hub (journey's tests/support/hubserver.py) with the clients pointed at it, and a
    release of ``generate_t5wtense`` (the tiny realizer, shipping no tokenizer, like the real one)."""
    with HubServer() as server:
        patch_clients(monkeypatch, server.url, tmp_path / "hf", token=None)
        monkeypatch.setenv("PARAAMR_RELEASE_URL", server.url + "/files")
        release = AMRLIB_MODELS["generate_t5wtense"]
        tokenizer_files = ("tokenizer.json", "tokenizer_config.json")
        tarball = _tarball(
            tiny_models["realizer"],
            release.archive[: -len(".tar.gz")],
            drop=tokenizer_files,
            meta={"base_model": "org/tiny-t5"},
        )
        server.add_file(f"{release.tag}/{release.archive}", tarball)
        server.add_model_repo(
            "org/tiny-t5", {f: (tiny_models["realizer"] / f).read_bytes() for f in tokenizer_files}
        )
        lm = {p.name: p.read_bytes() for p in tiny_models["lm"].iterdir()}
        lm["pytorch_model.bin"] = b"weights in a second format: never fetched"
        lm["flax_model.msgpack"] = b"another framework: never fetched"
        server.add_model_repo("org/tiny-gpt2", lm)
        yield server


def test_release_and_its_tokenizer_are_fetched_on_first_use(hub, tmp_path):
    from paraamr.models.realizer import Realizer

    cache = tmp_path / "cache"
    realizer = Realizer("generate_t5wtense", cache_dir=cache, use_tense=False)
    assert realizer.realize([PAPER_AMR]) == [PAPER_TEXT]
    assert _models(cache) == ["generate_t5wtense"] and _partials(cache) == []
    assert (cache / "tokenizers" / "org--tiny-t5" / "tokenizer.json").is_file()
    fetched = len(hub.requests("GET"))
    Realizer("generate_t5wtense", cache_dir=cache, use_tense=False, download=False)  # on disk now
    assert len(hub.requests("GET")) == fetched


@pytest.mark.parametrize("extra", [0, 7])
def test_a_416_that_gives_no_size_starts_the_file_over(hub, tmp_path, extra):
    """A part as long as the file (a run killed while it unpacked), or longer: the server answers the
    resume with 416 and no ``Content-Range`` (as this loopback host does), which failed every later
    run with 'the server refused to resume', the whole archive on disk."""
    data = b"0123456789" * 1000
    url = hub.add_file("whole/file.bin", data)
    part = tmp_path / "file.part"
    part.write_bytes(data + b"x" * extra)
    assert fetch_url(url, part, progress=False, retries=0).read_bytes() == data


def test_release_md5_is_checked_before_it_is_moved_into_place(hub, tmp_path, tiny_models):
    release = AMRLIB_MODELS["parse_xfm_bart_base"]  # published md5: the tiny tarball cannot match it
    hub.add_file(f"{release.tag}/{release.archive}", _tarball(tiny_models["parser"], "model_parse"))
    with pytest.raises(ModelNotFoundError, match=f"md5 [0-9a-f]{{32}}, expected {release.md5}"):
        ensure("parse_xfm_bart_base", "parser", cache_dir=tmp_path / "cache", progress=False)
    assert _models(tmp_path / "cache") == [] and _partials(tmp_path / "cache") == []


def test_hub_lm_is_fetched_on_first_use_in_one_format(hub, tmp_path):
    from paraamr.models.lm import PerplexityScorer

    [value] = PerplexityScorer("org/tiny-gpt2").perplexity(["the boy want to go ."])
    assert value > 1
    path = resolve("org/tiny-gpt2", "lm")  # now in huggingface_hub's cache
    assert (path / "model.safetensors").is_file() and (path / "config.json").is_file()
    assert not (path / "pytorch_model.bin").exists() and not (path / "flax_model.msgpack").exists()
    with pytest.raises(ModelNotFoundError, match="neither on disk nor a model repository"):
        ensure("org/no-such-model", "lm", progress=False)


def test_a_hub_snapshot_whose_weights_were_cut_short_is_fetched_again(hub):
    """A download killed while the weights came left a snapshot of the small files: it was taken
    for the model (``models download`` said done, every run failed to load it)."""
    path = ensure("org/tiny-gpt2", "lm", progress=False)
    weights = path / "model.safetensors"
    weights.resolve().unlink()  # the blob and the snapshot's link to it: as a kill leaves them
    weights.unlink()
    with pytest.raises(ModelNotFoundError, match="has no weights yet"):
        resolve("org/tiny-gpt2", "lm")
    assert ensure("org/tiny-gpt2", "lm", progress=False) == path and weights.is_file()


def test_offline_or_no_download_stops_at_once_naming_why(hub, tmp_path, monkeypatch, capsys):
    from paraamr.models.lm import PerplexityScorer

    with pytest.raises(ModelNotFoundError, match=r"downloads are off: --no-download / download=False"):
        PerplexityScorer("org/tiny-gpt2", download=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name, kind in (("org/tiny-gpt2", "lm"), ("generate_t5wtense", "realizer")):
        with pytest.raises(ModelNotFoundError) as err:
            ensure(name, kind, cache_dir=tmp_path / "cache")
        assert "offline mode is on: HF_HUB_OFFLINE=1" in str(err.value)
        assert f"paraamr models download {name}" in str(err.value)
        assert ("'smollm2' is an LM that needs no download" in str(err.value)) == (kind == "lm")
    assert hub.log == []  # not one request
    assert main(["models", "download", "org/tiny-gpt2", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert "offline mode is on" in err and len(err.splitlines()) == 1
    # an amrlib release by name too (before: fetched all the same, 'Name or service not known' offline)
    assert main(["models", "download", "generate_t5wtense", "--cache-dir", str(tmp_path / "c"), "-q"]) == 1
    err = capsys.readouterr().err.strip()
    assert "amrlib model 'generate_t5wtense' is not in" in err and "offline mode is on" in err, err
    assert hub.log == []


def test_cli_download_list_and_rm(hub, tmp_path, capsys):
    cache = str(tmp_path / "cache")
    assert main(["models", "download", "generate_t5wtense", "--cache-dir", cache, "--quiet"]) == 0
    assert main(["models", "download", "org/tiny-gpt2", "--cache-dir", cache, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["models", "list", "--kind", "realizer", "--cache-dir", cache]) == 0
    out = capsys.readouterr().out
    assert f"{Path(cache) / 'models' / 'generate_t5wtense'} (" in out and "kB)" in out
    assert main(["models", "list", "--cache-dir", cache]) == 0
    lines = capsys.readouterr().out.splitlines()
    [i] = [i for i, line in enumerate(lines) if line.startswith("org/tiny-gpt2")]
    assert " hub " in lines[i] and "on disk:" in lines[i + 1] and "kB)" in lines[i + 1]  # a fetched Hub id
    assert main(["models", "rm", "generate_t5wtense", "--cache-dir", cache]) == 0
    assert "removed" in capsys.readouterr().out and _models(Path(cache)) == []
    assert main(["models", "rm", "org/tiny-gpt2", "--cache-dir", cache]) == 0
    with pytest.raises(ModelNotFoundError):
        resolve("org/tiny-gpt2", "lm")
    assert main(["models", "rm", "org/tiny-gpt2", "--cache-dir", cache]) == 1
    assert "nothing to remove" in capsys.readouterr().err
    gguf_copy = Path(cache) / "gguf" / "SmolLM2-135M-Instruct.Q4_1-0123456789abcdef"
    gguf_copy.mkdir(parents=True)
    capsys.readouterr()
    assert main(["models", "list", "--kind", "lm", "--cache-dir", cache]) == 0
    assert f"on disk: {gguf_copy} (" in capsys.readouterr().out  # before: not listed (517 MB for smollm2)
    assert main(["models", "rm", "smollm2", "--cache-dir", cache]) == 0
    assert not gguf_copy.exists()


def test_rm_removes_the_cached_model_with_its_leftovers_not_a_folder_of_its_name(
    hub, tmp_path, monkeypatch, capsys
):
    """With a folder ``./NAME`` in the working folder, ``models rm NAME`` removed that folder's
    converted copies (the user's) and left the cached model's; what a download cut short left (its
    archive, a half-unpacked folder) was left too, and listed by nothing."""
    import shutil

    cache = tmp_path / "cache"
    target = ensure("generate_t5wtense", "realizer", cache_dir=cache, progress=False)
    copy = target.parent / ".generate_t5wtense.ct2-0123456789abcdef"  # as a conversion names it
    partial = target.parent / ".partial-generate_t5wtense-k1ll3d"
    archive = dl._download_part(AMRLIB_MODELS["generate_t5wtense"].url, target)
    mirrored = dl._download_part("http://mirror.example/t5wtense.tar.gz", target)  # --url: was left
    for folder in (copy, partial, archive.parent):  # (.downloads goes once a download is done)
        folder.mkdir()
    archive.write_bytes(b"a whole archive")
    mirrored.write_bytes(b"half an archive")
    local = tmp_path / "work" / "generate_t5wtense"
    shutil.copytree(target, local)
    mine = local.parent / ".generate_t5wtense.ct2-fedcba9876543210"
    mine.mkdir()
    monkeypatch.chdir(local.parent)
    assert main(["models", "rm", "generate_t5wtense", "--cache-dir", str(cache)]) == 0
    capsys.readouterr()
    assert not any(p.exists() for p in (target, copy, partial, archive, mirrored))
    assert local.is_dir() and mine.is_dir()


def test_ensure_is_a_noop_for_what_is_on_disk(tiny_models, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert ensure(tiny_models["parser"], "parser") == tiny_models["parser"]
    assert ensure("all-MiniLM-L6-v2", "quality").is_dir()
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        ensure("./nowhere", "lm")
