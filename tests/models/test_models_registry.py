"""registry: resolve, make_tiny, downloads from a loopback server, and ``paraamr models``."""

from __future__ import annotations

import http.server
import io
import json
import tarfile
import threading
from pathlib import Path

import pytest

from paraamr.cli import main
from paraamr.errors import ModelNotFoundError, ParaAMRError
from paraamr.models import registry


def _tarball(model_dir: Path, top: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(model_dir, arcname=top)
    return buf.getvalue()


class _Server:
    """A loopback HTTP server: ``/NAME`` serves ``files[NAME]``; ``/broken-once/NAME`` breaks off the
    first transfer midway (after announcing the full length), then serves it whole."""

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.broken: set[str] = set()
        self.requests: list[str] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                owner.requests.append(self.path)
                name = self.path.rsplit("/", 1)[-1]
                data = owner.files.get(name)
                if data is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.path.startswith("/broken-once/") and name not in owner.broken:
                    owner.broken.add(name)
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data)

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


def _leftovers(cache: Path) -> list[str]:
    root = cache / "models"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def test_make_tiny_writes_real_formats(tiny_models):
    assert set(tiny_models) == {"parser", "generator", "lm"}
    for kind in ("parser", "generator"):
        meta = json.loads((tiny_models[kind] / "amrlib_meta.json").read_text())
        assert meta["inference_class"] == "Inference"
        assert meta["model_type"] == {"parser": "stog", "generator": "gtos"}[kind]
        config = json.loads((tiny_models[kind] / "config.json").read_text())
        task = {"parser": "parse_amr", "generator": "translation_amr_to_text"}[kind]
        params = config["task_specific_params"][task]
        assert {"model_name_or_path", "max_in_len", "max_out_len"} <= set(params)
        assert (tiny_models[kind] / "tokenizer.json").is_file()
    assert json.loads((tiny_models["lm"] / "config.json").read_text())["model_type"] == "gpt2"


def test_make_tiny_is_deterministic_per_seed(tmp_path, tiny_models, capsys):
    # through the CLI, so `paraamr models make-tiny` is covered too
    assert main(["models", "make-tiny", str(tmp_path / "again")]) == 0
    assert "parser\t" in capsys.readouterr().out
    for kind, folder in tiny_models.items():
        again = tmp_path / "again" / kind / "model.safetensors"
        assert again.read_bytes() == (folder / "model.safetensors").read_bytes(), kind
    other = registry.make_tiny(tmp_path / "seed1", seed=1)
    assert (
        other["lm"].joinpath("model.safetensors").read_bytes()
        != (tiny_models["lm"] / "model.safetensors").read_bytes()
    )


def test_resolve_local_and_packaged(tiny_models):
    assert registry.resolve(tiny_models["parser"], "parser") == tiny_models["parser"]
    assert registry.resolve(str(tiny_models["lm"]), "lm") == tiny_models["lm"]
    gguf = registry.resolve("smollm2", "lm")
    assert gguf.suffix == ".gguf" and gguf.is_file()
    for name in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        folder = registry.resolve(name, "embedder")
        assert (folder / "model.safetensors").is_file() and (folder / "modules.json").is_file()
    with pytest.raises(ValueError, match="unknown model kind"):
        registry.resolve("smollm2", "speller")


def test_offline_errors_name_model_path_and_command(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotFoundError) as err:
        registry.resolve("generate_t5wtense", "generator", cache_dir=tmp_path)
    msg = str(err.value)
    assert "'generate_t5wtense'" in msg and str(tmp_path / "models" / "generate_t5wtense") in msg
    assert f"paraamr models download generate_t5wtense --cache-dir {tmp_path}" in msg
    with pytest.raises(ModelNotFoundError, match="not a parser model"):
        registry.resolve("generate_t5wtense", "parser", cache_dir=tmp_path)
    with pytest.raises(ModelNotFoundError) as err:
        registry.resolve("no-such-org/no-such-model", "lm", cache_dir=tmp_path)
    assert "'no-such-org/no-such-model'" in str(err.value) and "Hub cache" in str(err.value)
    assert "paraamr models download no-such-org/no-such-model --kind lm" in str(err.value)
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        registry.resolve("./no/such/dir", "parser")
    # an amrlib tarball ships no tokenizer: the base tokenizer must be in the cache
    folder = tmp_path / "model_parse_xfm_bart_base-v0_1_0"
    folder.mkdir()
    (folder / "amrlib_meta.json").write_text(json.dumps({"base_model": "facebook/bart-base"}))
    with pytest.raises(ModelNotFoundError) as err:
        registry.base_tokenizer(folder, cache_dir=tmp_path)
    assert "'facebook/bart-base'" in str(err.value)
    assert str(tmp_path / "tokenizers" / "facebook--bart-base") in str(err.value)


def test_cli_path_reports_missing_model(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    argv = ["models", "path", "parse_xfm_bart_large", "--kind", "parser", "--cache-dir", str(tmp_path)]
    assert main(argv) == 1
    assert "paraamr models download parse_xfm_bart_large" in capsys.readouterr().err
    assert main(["models", "path", "smollm2", "--kind", "lm"]) == 0
    assert capsys.readouterr().out.strip().endswith(".gguf")
    assert main(["models", "list", "--kind", "generator", "--cache-dir", str(tmp_path)]) == 0
    assert "generate_t5wtense" in capsys.readouterr().out


def test_download_extracts_atomically_and_resolves(tmp_path, server):
    path = registry.download("tiny", url=f"{server.url}/tiny.tar.gz", cache_dir=tmp_path, progress=False)
    assert path == tmp_path / "models" / "tiny"
    assert (path / "amrlib_meta.json").is_file() and (path / "model.safetensors").is_file()
    assert _leftovers(tmp_path) == ["tiny"]  # no partial files left behind
    assert registry.resolve("tiny", "parser", cache_dir=tmp_path) == path
    assert registry.base_tokenizer(path) == path  # the tarball ships its own tokenizer
    # a second call finds it in the cache and does not download again
    count = len(server.requests)
    assert registry.download("tiny", url=f"{server.url}/tiny.tar.gz", cache_dir=tmp_path) == path
    assert len(server.requests) == count


def test_download_broken_off_midway_then_retried_cleanly(tmp_path, server, capsys):
    url = f"{server.url}/broken-once/tiny.tar.gz"
    with pytest.raises(ParaAMRError, match=r"incomplete|broke off"):
        registry.download("tiny", url=url, cache_dir=tmp_path, progress=False)
    assert _leftovers(tmp_path) == []  # nothing half-written remains
    with pytest.raises(ModelNotFoundError):
        registry.resolve("tiny", "parser", cache_dir=tmp_path)
    # the retry (through the CLI) starts clean and succeeds
    assert main(["models", "download", "tiny", "--url", url, "--cache-dir", str(tmp_path), "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "models" / "tiny")
    assert _leftovers(tmp_path) == ["tiny"]
    assert json.loads((tmp_path / "models" / "tiny" / "amrlib_meta.json").read_text())["model_type"] == "stog"


def test_download_integrity_checks(tmp_path, server):
    with pytest.raises(ParaAMRError, match="md5"):
        registry.download("tiny", url=f"{server.url}/tiny.tar.gz", md5="0" * 32, cache_dir=tmp_path)
    with pytest.raises(ParaAMRError, match="corrupt or incomplete"):
        registry.download("tiny", url=f"{server.url}/corrupt.tar.gz", cache_dir=tmp_path, progress=False)
    with pytest.raises(ParaAMRError, match=r"lacks amrlib_meta\.json"):
        registry.download("tiny", url=f"{server.url}/incomplete.tar.gz", cache_dir=tmp_path, progress=False)
    with pytest.raises(ParaAMRError, match="cannot download"):
        registry.download("tiny", url=f"{server.url}/missing.tar.gz", cache_dir=tmp_path, progress=False)
    with pytest.raises(ModelNotFoundError, match="unknown amrlib model"):
        registry.download("no_such_release", cache_dir=tmp_path)
    assert _leftovers(tmp_path) == []


def test_release_table_matches_amrlib_naming():
    release = registry.AMRLIB_MODELS["parse_xfm_bart_large"]
    assert release.url == (
        "https://github.com/bjascob/amrlib-models/releases/download/"
        "parse_xfm_bart_large-v0_1_0/model_parse_xfm_bart_large-v0_1_0.tar.gz"
    )
    assert registry.AMRLIB_MODELS["generate_t5wtense"].url.endswith(
        "model_generate_t5wtense-v0_1_0/model_generate_t5wtense-v0_1_0.tar.gz"
    )
    assert {m.kind for m in registry.AMRLIB_MODELS.values()} == {"parser", "realizer"}


def test_hub_id_resolves_from_the_hub_cache_offline(tmp_path, tiny_models, monkeypatch):
    """A Hub id already in huggingface_hub's cache (its documented layout) resolves offline."""
    import shutil

    import huggingface_hub.constants

    snapshot = tmp_path / "models--someone--tiny-lm" / "snapshots" / "0123abcd"
    shutil.copytree(tiny_models["lm"], snapshot)
    (tmp_path / "models--someone--tiny-lm" / "refs").mkdir()
    (tmp_path / "models--someone--tiny-lm" / "refs" / "main").write_text("0123abcd")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert registry.resolve("someone/tiny-lm", "lm") == snapshot
    from paraamr.models.lm import PerplexityScorer

    [value] = PerplexityScorer("someone/tiny-lm").perplexity(["the boy"])
    assert value > 1
