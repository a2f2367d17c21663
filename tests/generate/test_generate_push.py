"""``paraamr push`` against a loopback HTTP server standing in for the Hub endpoints huggingface_hub
calls (``HF_ENDPOINT``): repo creation, pre-upload, the ndjson commit. The server stores what a
commit carries, so the test asserts the files that arrive, byte for byte."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

TOKEN = "hf_loopbackSECRETtoken123"
#: The release-format sample of the dataset tests (6 sources, 11 paraphrases).
RELEASE = Path(__file__).parents[1] / "dataset" / "data" / "release_sample.jsonl"


class FakeHub(BaseHTTPRequestHandler):
    """The Hub endpoints of create_repo, create_branch, preupload and commit (regular uploads)."""

    log: ClassVar[list] = []
    repos: ClassVar[dict] = {}
    validated: ClassVar[list] = []

    def log_message(self, *args):  # quiet
        pass

    def _json(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.log.append((self.command, self.path, self.headers.get("Authorization")))
        parts = self.path.split("?")[0].strip("/").split("/")
        if parts[:3] == ["api", "repos", "create"]:
            req = json.loads(body)
            if req["name"] == "echo-auth":  # a server that echoes the request's header in its error
                return self._json(500, {"error": f"internal error for {self.headers.get('Authorization')}"})
            repo_id = f"{req['organization']}/{req['name']}"
            self.repos.setdefault(repo_id, {"request": req, "commits": []})
            url = f"http://{self.headers['Host']}/datasets/{repo_id}"
            return self._json(200, {"url": url, "name": repo_id, "id": "1"})
        if parts == ["api", "validate-yaml"]:
            self.validated.append(json.loads(body))
            return self._json(200, {"errors": [], "warnings": []})
        if parts[0] == "api" and parts[1] == "datasets" and parts[4] == "branch":
            return self._json(200, {})
        if parts[0] == "api" and parts[1] == "datasets" and parts[4] == "preupload":
            files = json.loads(body)["files"]
            modes = [
                {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None}
                for f in files
            ]
            return self._json(200, {"files": modes})
        if parts[0] == "api" and parts[1] == "datasets" and parts[4] == "commit":
            repo_id, revision = f"{parts[2]}/{parts[3]}", parts[5]
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
            files = {
                item["value"]["path"]: base64.b64decode(item["value"]["content"])
                for item in lines
                if item["key"] == "file"
            }
            header = next(item["value"] for item in lines if item["key"] == "header")
            oid = f"{len(self.repos[repo_id]['commits']) + 1:040x}"
            self.repos[repo_id]["commits"].append(
                {
                    "revision": revision,
                    "files": files,
                    "header": header,
                    "keys": sorted({i["key"] for i in lines}),
                }
            )
            url = f"http://{self.headers['Host']}/datasets/{repo_id}/commit/{oid}"
            return self._json(200, {"commitUrl": url, "commitOid": oid, "pullRequestUrl": None})
        return self._json(404, {"error": f"unexpected {self.path}"})


@pytest.fixture
def fake_hub():
    FakeHub.log, FakeHub.repos, FakeHub.validated = [], {}, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", FakeHub
    server.shutdown()


def _folder(tmp_path: Path) -> Path:
    from paraamr.builder.folder import FailureWriter, ShardWriter, finalize
    from paraamr.records import DEFAULT_SCHEMA

    out = tmp_path / "run"
    with ShardWriter(out, "default", "train", DEFAULT_SCHEMA) as w:
        w.write({"id": "a", "text": "t", "amr": "(a / b)", "paraphrases": []})
    failures = FailureWriter(out)
    failures.write({"id": "x"})
    failures.commit()
    finalize(out)
    (out / "README.md").write_text("---\nconfigs: []\n---\n# card\n")
    (out / ".paraamr").mkdir(exist_ok=True)
    (out / ".paraamr" / "settings.json").write_text("{}")
    (out / "data" / "default" / ".train-00001-of-00002.parquet.tmp").write_bytes(b"partial")
    return out


def _push(endpoint: str, *args: str, home: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "HF_ENDPOINT": endpoint,
        "HF_TOKEN": TOKEN,
        "HF_HUB_OFFLINE": "0",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HOME": str(home / "hf-home"),
    }
    return subprocess.run(
        [sys.executable, "-m", "paraamr", "push", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_push_delivers_the_folder_without_resume_state(tmp_path, fake_hub):
    endpoint, server = fake_hub
    out = _folder(tmp_path)
    proc = _push(endpoint, "me/corpus", str(out), "--private", "--message", "first", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr
    repo = server.repos["me/corpus"]
    assert repo["request"]["type"] == "dataset" and repo["request"].get("visibility") == "private"
    (commit,) = repo["commits"]
    assert commit["header"]["summary"] == "first" and commit["revision"] == "main"
    expected = [
        "README.md",
        "data/default/train-00000-of-00001.parquet",
        "failures/failures-00000-of-00001.jsonl",
    ]
    assert sorted(commit["files"]) == expected  # not .paraamr/ (resume state), not temporary shards
    for name, content in commit["files"].items():
        assert content == (out / name).read_bytes()
    assert f"{1:040x}" in proc.stdout  # the commit URL
    assert server.validated[0]["repoType"] == "dataset"
    assert {auth for _, _, auth in server.log} == {f"Bearer {TOKEN}"}


def test_push_to_a_revision_creates_the_branch(tmp_path, fake_hub):
    endpoint, server = fake_hub
    proc = _push(endpoint, "me/corpus", str(_folder(tmp_path)), "--revision", "v2", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert any(path.endswith("/branch/v2") for _, path, _ in server.log)
    assert server.repos["me/corpus"]["commits"][0]["revision"] == "v2"


def test_push_refuses_a_folder_that_is_not_a_dataset(tmp_path, fake_hub):
    endpoint, server = fake_hub
    (tmp_path / "empty").mkdir()
    proc = _push(endpoint, "me/corpus", str(tmp_path / "empty"), home=tmp_path)
    assert proc.returncode == 1 and "not a dataset folder" in proc.stderr
    assert server.log == []


def test_push_accepts_the_old_order_with_a_deprecation_warning(tmp_path, fake_hub):
    endpoint, server = fake_hub
    proc = _push(endpoint, str(_folder(tmp_path)), "me/corpus", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "deprecated" in proc.stderr and "paraamr push me/corpus" in proc.stderr
    assert sorted(server.repos["me/corpus"]["commits"][0]["files"])[0] == "README.md"


def test_a_server_error_never_prints_the_token(tmp_path, fake_hub):
    endpoint, server = fake_hub
    secret = "hf_ThisIsMySecretTokenValue42"
    proc = _push(endpoint, "me/echo-auth", str(_folder(tmp_path)), "--token", secret, home=tmp_path)
    assert proc.returncode == 1 and "upload of" in proc.stderr and "me/echo-auth" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1  # one line, no traceback
    assert secret not in proc.stdout + proc.stderr
    assert any(auth == f"Bearer {secret}" for _, _, auth in server.log)  # it was sent, and echoed


def test_convert_push_to_hub_then_load_dataset_by_its_hub_id(tmp_path, hub):
    """The real huggingface_hub uploads and the real datasets loads back, through the loopback Hub."""
    import datasets
    from huggingface_hub import DatasetCard

    from paraamr.cli import main

    folder = tmp_path / "release"
    assert main(["convert", str(RELEASE), str(folder), "--push-to-hub", "me/paraamr-small", "--private"]) == 0
    uploaded = hub.dataset("me/paraamr-small").files()
    uploaded.pop(".gitattributes", None)  # made by the Hub when it creates a repo
    local = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert uploaded == local and "plots/perplexity.png" in uploaded
    text = uploaded["README.md"].decode()
    assert 'load_dataset("me/paraamr-small", "pairs", split="train")' in text
    assert DatasetCard(text).data.license == "cc-by-nc-4.0"
    cache = str(tmp_path / "cache")
    remote = datasets.load_dataset("me/paraamr-small", "pairs", split="train", cache_dir=cache)
    here = datasets.load_dataset(str(folder), "pairs", split="train", cache_dir=cache)
    assert remote.to_list() == here.to_list() and remote.num_rows == 11
    streamed = datasets.load_dataset("me/paraamr-small", split="train", streaming=True)
    assert [r["text"] for r in streamed] == [
        json.loads(line)["text"] for line in RELEASE.read_text().splitlines()
    ]
