"""A loopback "internet" for tests: the Hugging Face Hub HTTP API and a static release host.

The REAL ``huggingface_hub`` and ``datasets`` clients talk to it through ``HF_ENDPOINT``; amrlib
release tarballs are served from ``/files/...`` (point the release URL at ``hub.url + "/files"``).
It binds to 127.0.0.1 on a free port, serves a bounded number of requests and is stopped by the
test (the ``hub`` fixture in ``tests/conftest.py``).

What it speaks (enough for ``snapshot_download``, ``hf_hub_download``, ``HfFileSystem``,
``HfApi.upload_folder``/``create_commit`` and ``datasets.load_dataset``, also streaming):

* ``GET /api/{models,datasets}/{id}[/revision/{rev}]``: repo info with ``sha`` and ``siblings``;
* ``GET /api/.../tree/{rev}[/{path}]`` (``recursive``, paginated by a GitHub-style ``Link`` header),
  ``POST /api/.../paths-info/{rev}``, ``GET /api/.../refs``;
* ``HEAD|GET /[datasets/]{id}/resolve/{rev}/{path}`` with ``ETag``, ``X-Repo-Commit``,
  ``X-Linked-Size``/``X-Linked-Etag`` (LFS files) and ``Range``;
* ``GET /api/whoami-v2`` (``rejected_tokens`` get 401 everywhere; ``token_roles``);
* ``POST /api/repos/create``, ``/api/validate-yaml``, ``/api/.../branch/{name}``,
  ``/api/.../preupload/{rev}``, ``/api/.../commit/{rev}`` (ndjson: ``file``, ``lfsFile``,
  ``deletedFile``, ``deletedFolder``), the LFS batch API ``/{id}.git/info/lfs/objects/batch`` with a
  presigned ``PUT`` back to this server and a verify step;
* ``HEAD|GET /files/{path}``: static files with ``Range`` (the amrlib release host).

With ``hf_xet`` installed, huggingface_hub uploads LFS-mode files through the Xet protocol, which
this server does not speak: by default ``preupload`` answers ``regular`` for every file (what the
client's pipelined ``upload_folder`` then sends inline). Set ``server.lfs_patterns`` (and
``HF_HUB_DISABLE_XET=1`` in the client) to exercise the LFS batch/PUT/verify route instead.

>>> import urllib.request
>>> with HubServer() as hub:
...     url = hub.add_file("releases/x.txt", b"hello")
...     _ = hub.add_model_repo("me/tiny", {"config.json": b"{}"})
...     req = urllib.request.Request(url, headers={"Range": "bytes=1-"})
...     urllib.request.urlopen(req).read(), hub.repo("me/tiny").files()["config.json"]
(b'ello', b'{}')
"""

from __future__ import annotations

import base64
import contextlib
import fnmatch
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["Commit", "HubServer", "Repo"]

#: Requests one server answers before it refuses more (a runaway client fails instead of spinning).
MAX_REQUESTS = 20_000
#: Entries per tree page (the Hub's is 1,000; small enough here that tests cross a page boundary).
PAGE_SIZE = 50


def git_blob_oid(data: bytes) -> str:
    """The git blob id of ``data`` (what the Hub reports as a regular file's ``oid`` and ETag).

    >>> git_blob_oid(b"")
    'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'
    """
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Blob:
    data: bytes
    lfs: bool = False

    @property
    def oid(self) -> str:
        return git_blob_oid(self.data)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def etag(self) -> str:
        return self.sha256 if self.lfs else self.oid


@dataclass
class Commit:
    oid: str
    files: dict[str, Blob]
    message: str = ""
    parent: str | None = None
    keys: list[str] = field(default_factory=list)


@dataclass
class Repo:
    repo_id: str
    repo_type: str  # "model" or "dataset"
    private: bool = False
    branches: dict[str, str] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)
    history: list[Commit] = field(default_factory=list)

    def resolve(self, revision: str) -> Commit | None:
        """The commit a branch name or commit id points at, or None."""
        oid = self.branches.get(revision, revision)
        return self.commits.get(oid)

    def files(self, revision: str = "main") -> dict[str, bytes]:
        """``{path: bytes}`` at ``revision``."""
        commit = self.resolve(revision)
        return {} if commit is None else {p: b.data for p, b in commit.files.items()}

    def commit(self, files: dict[str, Blob], *, revision: str = "main", message: str = "", keys=()) -> Commit:
        parent = self.resolve(revision)
        n = len(self.history) + 1
        oid = hashlib.sha1(f"{self.repo_type}/{self.repo_id}/{n}".encode()).hexdigest()
        commit = Commit(oid, files, message, parent.oid if parent else None, list(keys))
        self.commits[oid] = commit
        self.history.append(commit)
        self.branches[revision] = oid
        return commit


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A loopback HTTP server of ``handler`` in a thread while the block runs; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _folder_files(folder: str | Path | dict[str, bytes]) -> dict[str, bytes]:
    if isinstance(folder, dict):
        return dict(folder)
    root = Path(folder)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


class HubServer:
    """The loopback Hub: ``with HubServer() as hub: ...`` or ``start()``/``stop()``."""

    def __init__(self, *, max_requests: int = MAX_REQUESTS, page_size: int = PAGE_SIZE):
        self.repos: dict[tuple[str, str], Repo] = {}
        self.static: dict[str, bytes] = {}
        self.lfs_objects: dict[str, bytes] = {}
        self.log: list[tuple[str, str, str | None]] = []  # (method, path, Authorization)
        self.lfs_patterns: list[str] = []
        #: Tokens the Hub does not know (401 on every request that carries one, as the Hub answers)
        #: and each known token's role in ``whoami`` (default ``write``).
        self.rejected_tokens: set[str] = set()
        self.token_roles: dict[str, str] = {}
        self.max_requests = max_requests
        self.page_size = page_size
        self.home: Path | None = None  # the clients' HF_HOME, set by the ``hub`` fixture
        self.env: dict[str, str] = {}  # the clients' environment, set by the ``hub`` fixture
        self.ranges: list[tuple[str, str | None]] = []  # (URL path, Range header) of each file GET
        self._cuts: dict[str, list[int]] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> HubServer:
        handler = type("Handler", (_Handler,), {"hub": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> HubServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the value for ``HF_ENDPOINT``."""
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- content ---------------------------------------------------------------------------------
    def add_repo(
        self,
        repo_id: str,
        folder: str | Path | dict[str, bytes] = (),
        *,
        repo_type: str = "model",
        revision: str = "main",
        lfs: tuple[str, ...] = ("*.bin", "*.safetensors", "*.parquet", "*.pt", "*.gguf"),
    ) -> Repo:
        """Create (or add a commit to) ``repo_id`` holding the files of ``folder`` (a path or a dict)."""
        repo = self.repos.setdefault((repo_type, repo_id), Repo(repo_id, repo_type))
        files = _folder_files(folder) if folder else {}
        blobs = {p: Blob(d, any(fnmatch.fnmatch(p, pat) for pat in lfs)) for p, d in files.items()}
        if repo.resolve(revision) is None or blobs:
            repo.commit(blobs, revision=revision, message="add files")
        return repo

    def add_model_repo(self, repo_id: str, folder: str | Path | dict[str, bytes], **kw: Any) -> Repo:
        return self.add_repo(repo_id, folder, repo_type="model", **kw)

    def add_dataset_repo(self, repo_id: str, folder: str | Path | dict[str, bytes], **kw: Any) -> Repo:
        return self.add_repo(repo_id, folder, repo_type="dataset", **kw)

    def add_file(self, url_path: str, data: bytes) -> str:
        """Serve ``data`` at ``/files/{url_path}`` (the release host); returns its full URL."""
        url_path = url_path.strip("/")
        self.static[url_path] = data
        return f"{self.url}/files/{url_path}"

    def cut_downloads(self, url_path: str, after: int, times: int = 1) -> None:
        """The next ``times`` GETs of ``/files/{url_path}`` send ``after`` bytes of their body each,
        then drop the connection (a download cut off midway)."""
        self._cuts[url_path.strip("/")] = [after] * times

    # -- inspection ------------------------------------------------------------------------------
    def repo(self, repo_id: str, repo_type: str = "model") -> Repo:
        return self.repos[(repo_type, repo_id)]

    def dataset(self, repo_id: str) -> Repo:
        return self.repos[("dataset", repo_id)]

    def requests(self, method: str | None = None, contains: str = "") -> list[str]:
        """Paths requested (optionally only ``method`` ones containing ``contains``)."""
        return [p for m, p, _ in self.log if (method is None or m == method) and contains in p]

    # -- lookup used by the handler --------------------------------------------------------------
    def _find(self, repo_type: str, parts: list[str]) -> tuple[Repo | None, list[str]]:
        """The repo named by the first one or two ``parts`` and the rest."""
        for n in (2, 1):
            if len(parts) >= n and (repo_type, "/".join(parts[:n])) in self.repos:
                return self.repos[(repo_type, "/".join(parts[:n]))], parts[n:]
        return None, parts[2:] if len(parts) > 2 else []


class _Error(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class _Handler(BaseHTTPRequestHandler):
    hub: HubServer
    protocol_version = "HTTP/1.1"
    timeout = 30

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    # -- plumbing --------------------------------------------------------------------------------
    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, body: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(body).encode(), {"Content-Type": "application/json", **(headers or {})})

    def _dispatch(self) -> None:
        hub = self.hub
        with hub._lock:
            hub.log.append((self.command, self.path, self.headers.get("Authorization")))
            over = len(hub.log) > hub.max_requests
        body = self._body() if self.command in ("POST", "PUT") else b""
        if over:
            return self._send(429, b"too many requests for the loopback hub")
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            with hub._lock:
                self._route(parts, query, body, url.path)
        except _Error as e:
            self._json({"error": e.message}, e.status, {"X-Error-Code": e.code, "X-Error-Message": e.message})

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _dispatch

    # -- routes ----------------------------------------------------------------------------------
    def _route(self, parts: list[str], query: dict[str, str], body: bytes, raw_path: str) -> None:
        hub, m = self.hub, self.command
        if parts[0] == "files":
            return self._static("/".join(parts[1:]))
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        if token in hub.rejected_tokens:
            raise _Error(401, "Unauthorized", "Invalid credentials in Authorization header")
        if parts[:2] == ["api", "whoami-v2"]:
            if not token:
                raise _Error(401, "Unauthorized", "Invalid username or password.")
            access = {"displayName": "loopback", "role": hub.token_roles.get(token, "write")}
            auth = {"type": "access_token", "accessToken": access}
            return self._json({"type": "user", "name": "me", "orgs": [], "auth": auth})
        if parts[:3] == ["api", "repos", "create"] and m == "POST":
            return self._create(json.loads(body))
        if parts[:2] == ["api", "validate-yaml"]:
            return self._json({"errors": [], "warnings": []})
        if parts[0] == "lfs-upload" and m == "PUT":
            data = body
            if hashlib.sha256(data).hexdigest() != parts[1]:
                raise _Error(400, "BadRequest", "LFS object does not match its oid")
            hub.lfs_objects[parts[1]] = data
            return self._send(200)
        if parts[0] == "lfs-verify" and m == "POST":
            req = json.loads(body)
            if req.get("oid") not in hub.lfs_objects:
                raise _Error(404, "EntryNotFound", f"LFS object {req.get('oid')} was not uploaded")
            return self._json({"success": True})
        if parts[0] == "api" and len(parts) > 2 and parts[1] in ("models", "datasets"):
            repo_type = parts[1][:-1]
            repo, rest = hub._find(repo_type, parts[2:])
            if repo is None:
                raise _Error(404, "RepoNotFound", f"Repository not found: {'/'.join(parts[2:4])}")
            return self._api(repo, rest, query, body, raw_path)
        # /{id}.git/info/lfs/objects/batch and /datasets/{id}.git/...
        if len(parts) >= 4 and parts[-4:] == ["info", "lfs", "objects", "batch"]:
            return self._lfs_batch(json.loads(body))
        # /{id}/resolve/{rev}/{path} and /datasets/{id}/resolve/...
        repo_type = "dataset" if parts[0] == "datasets" else "model"
        repo, rest = hub._find(repo_type, parts[1:] if repo_type == "dataset" else parts)
        if repo is not None and rest[:1] == ["resolve"] and len(rest) >= 3:
            return self._resolve(repo, rest[1], "/".join(rest[2:]))
        if repo is None and "resolve" in parts:
            raise _Error(404, "RepoNotFound", f"Repository not found: {raw_path}")
        raise _Error(404, "NotFound", f"loopback hub: no route for {m} {raw_path}")

    def _static(self, path: str) -> None:
        data = self.hub.static.get(path)
        if data is None:
            return self._send(404, b"not found")
        cut = None
        if self.command == "GET":
            self.hub.ranges.append((f"/files/{path}", self.headers.get("Range")))
            cuts = self.hub._cuts.get(path)
            cut = cuts.pop() if cuts else None
        start, end, status = self._range(len(data))
        headers = {
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
            "ETag": f'"{hashlib.sha256(data).hexdigest()}"',
        }
        if status == 206:
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{len(data)}"
        if cut is None:
            return self._send(status, data[start:end], headers)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(end - start))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data[start : start + cut])
        self.wfile.flush()
        self.close_connection = True

    def _range(self, size: int) -> tuple[int, int, int]:
        """(start, end, status) of the request's ``Range`` over ``size`` bytes."""
        header = self.headers.get("Range")
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", header or "")
        if not match:
            return 0, size, 200
        first, last = match.groups()
        if first == "":
            start, end = max(0, size - int(last)), size
        else:
            start, end = int(first), min(size, int(last) + 1) if last else size
        if start >= size and size:
            raise _Error(416, "RangeNotSatisfiable", f"range {header} outside {size} bytes")
        return start, end, 206

    def _create(self, req: dict) -> None:
        repo_type = req.get("type") or "model"
        name = req["name"] if not req.get("organization") else f"{req['organization']}/{req['name']}"
        url = f"{self.hub.url}/{'datasets/' if repo_type == 'dataset' else ''}{name}"
        if (repo_type, name) in self.hub.repos:
            return self._json({"error": "You already created this repo", "url": url}, 409)
        repo = self.hub.add_repo(name, repo_type=repo_type)
        repo.private = bool(req.get("private")) or req.get("visibility") == "private"
        repo.commit(
            {".gitattributes": Blob(b"*.parquet filter=lfs diff=lfs merge=lfs -text\n")},
            message="initial commit",
        )
        return self._json({"url": url, "name": name, "id": repo.history[0].oid})

    def _api(self, repo: Repo, rest: list[str], query: dict[str, str], body: bytes, raw: str) -> None:
        m = self.command
        if not rest or rest[0] == "revision":
            revision = "/".join(rest[1:]) or "main"
            return self._json(self._info(repo, self._commit(repo, revision)))
        op = rest[0]
        if op == "refs":
            branches = [
                {"name": b, "ref": f"refs/heads/{b}", "targetCommit": c} for b, c in repo.branches.items()
            ]
            return self._json({"branches": branches, "tags": [], "converts": []})
        if op == "tree" and len(rest) >= 2:
            return self._tree(repo, self._commit(repo, rest[1]), "/".join(rest[2:]), query, raw)
        if op == "paths-info" and m == "POST":
            commit = self._commit(repo, "/".join(rest[1:]))
            form = parse_qs(body.decode())
            return self._json([e for p in form.get("paths", []) for e in self._entry(commit, p.strip("/"))])
        if op == "branch" and m == "POST":
            branch = "/".join(rest[1:])
            if branch in repo.branches:
                raise _Error(409, "BranchExists", f"Branch {branch} already exists")
            start = (json.loads(body) if body else {}).get("startingPoint") or "main"
            repo.branches[branch] = self._commit(repo, start).oid
            return self._json({})
        if op == "preupload" and m == "POST":
            files = json.loads(body)["files"]
            commit = repo.resolve("/".join(rest[1:]))
            modes = []
            for f in files:
                lfs = any(fnmatch.fnmatch(f["path"], p) for p in self.hub.lfs_patterns)
                old = commit.files.get(f["path"]) if commit else None
                modes.append(
                    {
                        "path": f["path"],
                        "uploadMode": "lfs" if lfs else "regular",
                        "shouldIgnore": False,
                        "oid": old.oid if old else None,
                    }
                )
            return self._json({"files": modes})
        if op == "commit" and m == "POST":
            return self._commit_ndjson(repo, "/".join(rest[1:]), body)
        raise _Error(404, "NotFound", f"loopback hub: no route for {m} {raw}")

    def _commit(self, repo: Repo, revision: str) -> Commit:
        commit = repo.resolve(unquote(revision))
        if commit is None:
            raise _Error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        return commit

    def _info(self, repo: Repo, commit: Commit) -> dict:
        return {
            "_id": commit.oid[:24],
            "id": repo.repo_id,
            "sha": commit.oid,
            "private": repo.private,
            "author": repo.repo_id.split("/")[0],
            "disabled": False,
            "gated": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "lastModified": "2026-01-01T00:00:00.000Z",
            "createdAt": "2026-01-01T00:00:00.000Z",
            "cardData": {},
            "siblings": [{"rfilename": p} for p in sorted(commit.files)],
        }

    def _entries(self, commit: Commit) -> dict[str, dict]:
        """Every file and folder of ``commit`` as the tree API lists it."""
        out: dict[str, dict] = {}
        for path, blob in sorted(commit.files.items()):
            entry: dict[str, Any] = {"type": "file", "oid": blob.oid, "size": len(blob.data), "path": path}
            if blob.lfs:
                entry["lfs"] = {"oid": blob.sha256, "size": len(blob.data), "pointerSize": 134}
            out[path] = entry
            parts = path.split("/")
            for i in range(1, len(parts)):
                folder = "/".join(parts[:i])
                out.setdefault(
                    folder,
                    {
                        "type": "directory",
                        "oid": hashlib.sha1(folder.encode()).hexdigest(),
                        "size": 0,
                        "path": folder,
                    },
                )
        return out

    def _entry(self, commit: Commit, path: str) -> list[dict]:
        entry = self._entries(commit).get(path)
        return [entry] if entry else []

    def _tree(self, repo: Repo, commit: Commit, path: str, query: dict[str, str], raw: str) -> None:
        entries = self._entries(commit)
        if path and (path not in entries or entries[path]["type"] != "directory"):
            raise _Error(404, "EntryNotFound", f"{path} does not exist on {commit.oid}")
        prefix = path + "/" if path else ""
        recursive = query.get("recursive", "").lower() in ("true", "1")
        listed = [
            e
            for p, e in entries.items()
            if p.startswith(prefix) and (recursive or "/" not in p[len(prefix) :])
        ]
        listed.sort(key=lambda e: (e["type"] != "directory", e["path"]))
        start = int(query.get("cursor", 0))
        page = listed[start : start + self.hub.page_size]
        headers = {}
        if start + self.hub.page_size < len(listed):
            q = f"recursive={str(recursive).lower()}&expand={query.get('expand', 'false')}"
            headers["Link"] = f'<{self.hub.url}{raw}?{q}&cursor={start + self.hub.page_size}>; rel="next"'
        return self._json(page, headers=headers)

    def _resolve(self, repo: Repo, revision: str, path: str) -> None:
        commit = self._commit(repo, revision)
        blob = commit.files.get(path)
        if blob is None:
            raise _Error(404, "EntryNotFound", f"{path} does not exist on {revision}")
        if self.command == "GET":
            self.hub.ranges.append((urlsplit(self.path).path, self.headers.get("Range")))
        start, end, status = self._range(len(blob.data))
        headers = {
            "ETag": f'"{blob.etag}"',
            "X-Repo-Commit": commit.oid,
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        if blob.lfs:
            headers |= {"X-Linked-Etag": f'"{blob.etag}"', "X-Linked-Size": str(len(blob.data))}
        if status == 206:
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{len(blob.data)}"
        return self._send(status, blob.data[start:end], headers)

    def _lfs_batch(self, req: dict) -> None:
        objects = []
        for obj in req["objects"]:
            item: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in self.hub.lfs_objects:
                item["actions"] = {
                    "upload": {"href": f"{self.hub.url}/lfs-upload/{obj['oid']}"},
                    "verify": {"href": f"{self.hub.url}/lfs-verify"},
                }
            objects.append(item)
        return self._json(
            {"transfer": "basic", "objects": objects},
            headers={"Content-Type": "application/vnd.git-lfs+json"},
        )

    def _commit_ndjson(self, repo: Repo, revision: str, body: bytes) -> None:
        revision = unquote(revision)
        parent = self._commit(repo, revision)
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        files = dict(parent.files)
        header: dict = {}
        for item in lines:
            key, value = item["key"], item["value"]
            if key == "header":
                header = value
                if value.get("parentCommit") and value["parentCommit"] != parent.oid:
                    raise _Error(412, "PreconditionFailed", "parent commit is not the head of the branch")
            elif key == "file":
                files[value["path"]] = Blob(base64.b64decode(value["content"]))
            elif key == "lfsFile":
                data = self.hub.lfs_objects.get(value["oid"])
                if data is None:
                    raise _Error(400, "BadRequest", f"LFS object {value['oid']} was never uploaded")
                files[value["path"]] = Blob(data, lfs=True)
            elif key == "deletedFile":
                files.pop(value["path"], None)
            elif key == "deletedFolder":
                folder = value["path"].rstrip("/") + "/"
                files = {p: b for p, b in files.items() if not p.startswith(folder)}
            else:
                raise _Error(400, "BadRequest", f"loopback hub: unsupported commit key {key}")
        commit = repo.commit(
            files,
            revision=revision,
            message=header.get("summary", ""),
            keys=sorted({i["key"] for i in lines}),
        )
        prefix = "datasets/" if repo.repo_type == "dataset" else ""
        url = f"{self.hub.url}/{prefix}{repo.repo_id}/commit/{commit.oid}"
        return self._json({"commitUrl": url, "commitOid": commit.oid, "pullRequestUrl": None})


def client_env(url: str, home: str | Path, *, token: str | None = "hf_loopback_token") -> dict[str, str]:
    """Environment variables that point huggingface_hub, datasets and transformers at ``url`` with
    fresh caches under ``home`` (for subprocesses; :func:`patch_clients` does it in-process), and
    paraamr's cache there too (the CTranslate2 copies of the models it serves: not in the user's)."""
    env = {
        "HF_ENDPOINT": url,
        "HF_HUB_OFFLINE": "0",
        "HF_DATASETS_OFFLINE": "0",
        "TRANSFORMERS_OFFLINE": "0",
        "HF_HOME": str(home),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "PARAAMR_CACHE": str(Path(home) / "paraamr"),
    }
    if token:
        env["HF_TOKEN"] = token
    return env


def patch_clients(monkeypatch: Any, url: str, home: str | Path, **kw: Any) -> dict[str, str]:
    """Set :func:`client_env` with ``monkeypatch`` and update the constants that huggingface_hub and
    datasets read once at import (endpoint, offline switch, cache folders), so in-process clients
    talk to ``url`` too. Returns the environment."""
    import importlib
    import sys

    env = client_env(url, home, **kw)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if "HF_TOKEN" not in env:
        monkeypatch.delenv("HF_TOKEN", raising=False)
    home = Path(home)
    hub_constants = {
        "ENDPOINT": url,
        "HUGGINGFACE_CO_URL_TEMPLATE": url + "/{repo_id}/resolve/{revision}/{filename}",
        "HF_URL_HOSTS": frozenset({"hf.co", "huggingface.co", "127.0.0.1"}),
        "HF_HUB_OFFLINE": False,
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(home / "hub"),
        "HUGGINGFACE_HUB_CACHE": str(home / "hub"),
        "HF_ASSETS_CACHE": str(home / "assets"),
        "HF_TOKEN_PATH": str(home / "token"),
        "HF_STORED_TOKENS_PATH": str(home / "stored_tokens"),
        "HF_XET_CACHE": str(home / "xet"),
    }
    constants = importlib.import_module("huggingface_hub.constants")
    for name, value in hub_constants.items():
        if hasattr(constants, name):
            monkeypatch.setattr(constants, name, value)
    hf_api = sys.modules.get("huggingface_hub.hf_api")
    if hf_api is not None:
        monkeypatch.setattr(hf_api.api, "endpoint", url)
    if "datasets" in sys.modules:
        config = importlib.import_module("datasets.config")
        datasets_constants = {
            "HF_ENDPOINT": url,
            "HUB_DATASETS_URL": url + "/datasets/{repo_id}/resolve/{revision}/{path}",
            "HUB_DATASETS_HFFS_URL": "hf://datasets/{repo_id}@{revision}/{path}",
            "HF_HUB_OFFLINE": False,
            "HF_DATASETS_OFFLINE": False,
            "HF_CACHE_HOME": str(home),
            "HF_DATASETS_CACHE": home / "datasets",
            "HF_MODULES_CACHE": home / "modules",
            "DOWNLOADED_DATASETS_PATH": home / "datasets" / "downloads",
            "EXTRACTED_DATASETS_PATH": home / "datasets" / "downloads" / "extracted",
        }
        for name, value in datasets_constants.items():
            if hasattr(config, name):
                old = getattr(config, name)
                monkeypatch.setattr(config, name, type(old)(value) if isinstance(old, Path) else value)
    return env
