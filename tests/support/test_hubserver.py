"""The loopback Hub serves the REAL clients: huggingface_hub's snapshot_download / hf_hub_download /
upload_folder / create_commit (regular and LFS) and datasets' load_dataset (also streaming)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest


def _folder(tmp_path, files: dict[str, bytes]):
    for name, data in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return tmp_path


def test_snapshot_download_fetches_every_file_byte_for_byte(hub, tmp_path):
    from huggingface_hub import hf_hub_download, snapshot_download

    files = {f"sub/f{i:03d}.txt": f"line {i}\n".encode() for i in range(60)}  # > one tree page
    files |= {"config.json": b'{"a": 1}', "model.safetensors": bytes(range(256)) * 40}
    hub.add_model_repo("org/tiny", _folder(tmp_path / "src", files))
    local = snapshot_download("org/tiny")
    got = {
        p.relative_to(local).as_posix(): p.read_bytes()
        for p in __import__("pathlib").Path(local).rglob("*")
        if p.is_file()
    }
    assert got == files
    assert local.startswith(str(hub.home))
    assert hub.requests("GET", "/tree/") or hub.requests("GET", "/revision/")
    # a single file by name, from a repo without a namespace (like "gpt2")
    hub.add_model_repo("gpt2", {"vocab.json": b"{}"})
    assert Path(hf_hub_download("gpt2", "vocab.json")).read_bytes() == b"{}"


def test_missing_repo_and_file_raise_the_clients_own_errors(hub):
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError

    hub.add_model_repo("org/tiny", {"a.txt": b"a"})
    with pytest.raises(EntryNotFoundError):
        hf_hub_download("org/tiny", "b.txt")
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download("org/none", "a.txt")


def test_upload_folder_creates_the_dataset_repo_and_its_commit(hub, tmp_path):
    from huggingface_hub import HfApi

    files = {"README.md": b"# card\n", "data/train-00000-of-00001.parquet": b"PAR1" + bytes(100)}
    api = HfApi()
    api.create_repo("org/up", repo_type="dataset", private=True)
    info = api.upload_folder(
        folder_path=str(_folder(tmp_path / "up", files)), repo_id="org/up", repo_type="dataset"
    )
    repo = hub.dataset("org/up")
    assert repo.private and repo.files() == {**files, ".gitattributes": repo.files()[".gitattributes"]}
    assert info.oid == repo.branches["main"]
    assert {auth for m, p, auth in hub.log if m == "POST"} == {"Bearer hf_loopback_token"}
    # a second upload of the same folder changes nothing on the Hub's side but is accepted
    api.upload_folder(folder_path=str(tmp_path / "up"), repo_id="org/up", repo_type="dataset")
    assert repo.files()["README.md"] == files["README.md"]


def test_lfs_upload_goes_through_the_batch_api_and_a_presigned_put(hub, tmp_path, monkeypatch):
    from huggingface_hub import CommitOperationAdd, HfApi

    monkeypatch.setattr("huggingface_hub._commit_api.is_xet_available", lambda: False)
    hub.lfs_patterns = ["*.bin"]
    data = bytes(range(256)) * 100
    api = HfApi()
    api.create_repo("org/lfs")
    api.create_commit(
        "org/lfs",
        [CommitOperationAdd("w.bin", data), CommitOperationAdd("c.json", b"{}")],
        commit_message="weights",
    )
    repo = hub.repo("org/lfs")
    assert repo.files()["w.bin"] == data and repo.files()["c.json"] == b"{}"
    assert repo.history[-1].keys == ["file", "header", "lfsFile"]
    sha = hashlib.sha256(data).hexdigest()
    assert hub.requests("PUT", f"/lfs-upload/{sha}") and hub.requests("POST", "/lfs-verify")
    assert hub.requests("POST", "/org/lfs.git/info/lfs/objects/batch")


def test_branches_and_revisions(hub):
    from huggingface_hub import HfApi, hf_hub_download

    api = HfApi()
    api.create_repo("org/rev", repo_type="dataset")
    api.create_branch("org/rev", repo_type="dataset", branch="v2")
    api.upload_file(
        path_or_fileobj=b"two", path_in_repo="x.txt", repo_id="org/rev", repo_type="dataset", revision="v2"
    )
    refs = api.list_repo_refs("org/rev", repo_type="dataset")
    assert sorted(b.name for b in refs.branches) == ["main", "v2"]
    path = hf_hub_download("org/rev", "x.txt", repo_type="dataset", revision="v2")
    assert Path(path).read_bytes() == b"two"
    assert "x.txt" not in hub.dataset("org/rev").files("main")


def test_load_dataset_by_hub_id_also_streaming(hub, tmp_path):
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"id": str(i), "text": f"sentence {i}"} for i in range(7)]
    src = tmp_path / "ds"
    (src / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), src / "data" / "train-00000-of-00001.parquet")
    (src / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n"
        "    path: data/train-*\n---\n# d\n"
    )
    hub.add_dataset_repo("org/ds", src)
    assert datasets.load_dataset("org/ds", split="train").to_list() == rows
    assert list(datasets.load_dataset("org/ds", split="train", streaming=True)) == rows
    assert hub.requests("GET", "/datasets/org/ds/resolve/")


def test_release_host_serves_ranges_and_cuts_a_download_once(hub):
    import http.client
    import urllib.request

    data = bytes(range(256)) * 8
    path = "amrlib-models/releases/download/x/model.tar.gz"
    url = hub.add_file(path, data)
    hub.cut_downloads("amrlib-models/releases/download/x/model.tar.gz", after=100)
    with pytest.raises(http.client.IncompleteRead):  # the body stops short of Content-Length
        urllib.request.urlopen(url).read()
    req = urllib.request.Request(url, headers={"Range": "bytes=100-"})
    with urllib.request.urlopen(req) as resp:
        assert (
            resp.status == 206 and resp.headers["Content-Range"] == f"bytes 100-{len(data) - 1}/{len(data)}"
        )
        assert resp.read() == data[100:]
    assert urllib.request.urlopen(url).read() == data
    assert hub.ranges == [(f"/files/{path}", r) for r in (None, "bytes=100-", None)]
    who = urllib.request.Request(hub.url + "/api/whoami-v2", headers={"Authorization": "Bearer hf_x"})
    assert json.loads(urllib.request.urlopen(who).read())["auth"]["accessToken"]["role"] == "write"
    with pytest.raises(urllib.error.HTTPError, match="401"):  # no token: who is it? (as the Hub says)
        urllib.request.urlopen(hub.url + "/api/whoami-v2")


def test_file_system_listing_pages_paths_info_and_ranged_reads(hub):
    from huggingface_hub import HfApi, HfFileSystem

    files = {f"data/{i:03d}.txt": f"row {i}\n".encode() for i in range(120)} | {
        "big.bin": bytes(range(256)) * 64
    }
    hub.add_dataset_repo("org/fs", files)
    api = HfApi()
    listed = [e.path for e in api.list_repo_tree("org/fs", repo_type="dataset", recursive=True)]
    assert sorted(listed) == sorted([*files, "data"])
    assert len(hub.requests("GET", "cursor=")) == 2  # 121 entries + 1 folder at 50 a page: three pages
    infos = api.get_paths_info("org/fs", ["big.bin", "data", "missing"], repo_type="dataset")
    assert [(i.path, type(i).__name__) for i in infos] == [("big.bin", "RepoFile"), ("data", "RepoFolder")]
    assert (
        infos[0].size == len(files["big.bin"])
        and infos[0].lfs.sha256 == hashlib.sha256(files["big.bin"]).hexdigest()
    )
    fs = HfFileSystem()
    assert len(fs.ls("datasets/org/fs/data", detail=False)) == 120
    with fs.open("datasets/org/fs/big.bin", "rb", block_size=1024) as f:
        f.seek(5000)
        assert f.read(300) == files["big.bin"][5000:5300]
    ranges = [
        r for p, r in hub.ranges if p.startswith("/datasets/org/fs/resolve/") and p.endswith("/big.bin")
    ]
    assert ranges and all(r and r.startswith("bytes=") for r in ranges)
