"""``paraamr push`` and ``convert --push-to-hub`` against the loopback Hub (``hub`` fixture,
``tests/support/hubserver.py``): the real huggingface_hub creates the repo, uploads and commits; the
server keeps every commit, so the tests assert the files that arrive, byte for byte. (A server that
echoes the token in its errors: tests/cli/test_errors.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOKEN = "hf_loopbackSECRETtoken123"
#: The release-format sample of the dataset tests (6 sources, 11 paraphrases).
RELEASE = Path(__file__).parents[1] / "dataset" / "data" / "release_sample.jsonl"


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


def _push(hub, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **hub.env, "HF_TOKEN": TOKEN}
    return subprocess.run(
        [sys.executable, "-m", "paraamr", "push", *args], env=env, capture_output=True, text=True, timeout=120
    )


def _uploaded(hub, repo_id: str, revision: str = "main") -> dict[str, bytes]:
    files = hub.dataset(repo_id).files(revision)
    files.pop(".gitattributes", None)  # made by the Hub when it creates a repo
    return files


def test_push_delivers_the_folder_without_resume_state(tmp_path, hub):
    out = _folder(tmp_path)
    proc = _push(hub, "me/corpus", str(out), "--private", "--message", "first")
    assert proc.returncode == 0, proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr
    repo = hub.dataset("me/corpus")
    assert repo.private and repo.history[-1].message == "first"
    files = _uploaded(hub, "me/corpus")
    assert sorted(files) == [
        "README.md",
        "data/default/train-00000-of-00001.parquet",
        "failures/failures-00000-of-00001.jsonl",
    ]  # not .paraamr/ (resume state), not temporary shards
    assert all(content == (out / name).read_bytes() for name, content in files.items())
    assert repo.history[-1].oid in proc.stdout  # the commit URL
    assert hub.requests("POST", "validate-yaml")  # the card was checked
    assert {auth for _, _, auth in hub.log} == {f"Bearer {TOKEN}"}


def test_pushing_the_same_folder_again_sends_nothing_new(tmp_path, hub):
    """A push run again uploads only what the Hub lacks: of an unchanged folder, nothing, and no
    second commit (huggingface_hub compares the files with the Hub's ``oid`` of each)."""
    out = _folder(tmp_path)
    assert _push(hub, "me/corpus", str(out)).returncode == 0
    history, commits = len(hub.dataset("me/corpus").history), len(hub.requests("POST", "/commit/"))
    proc = _push(hub, "me/corpus", str(out))
    assert proc.returncode == 0, proc.stderr
    assert len(hub.dataset("me/corpus").history) == history
    assert len(hub.requests("POST", "/commit/")) == commits
    assert all(content == (out / name).read_bytes() for name, content in _uploaded(hub, "me/corpus").items())


@pytest.mark.slow
def test_a_folder_cut_into_fewer_shards_leaves_no_old_shard_on_the_hub(tmp_path, hub):
    """The old shards stayed beside the new ones: the card's globs took both, and load_dataset
    failed (NonMatchingSplitsSizesError, 12 rows recorded against 6 expected)."""
    import datasets

    from paraamr.cli import main

    folder = tmp_path / "release"
    assert main(["convert", str(RELEASE), str(folder), "--max-shard-size", "1KB"]) == 0
    assert _push(hub, "me/corpus", str(folder)).returncode == 0
    assert "data/default/train-00001-of-00002.parquet" in _uploaded(hub, "me/corpus")
    assert main(["convert", str(RELEASE), str(folder), "--overwrite"]) == 0  # one shard now
    proc = _push(hub, "me/corpus", str(folder))
    assert proc.returncode == 0, proc.stderr
    local = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert _uploaded(hub, "me/corpus") == {k: v for k, v in local.items() if not k.startswith(".")}
    loaded = datasets.load_dataset("me/corpus", split="train", cache_dir=str(tmp_path / "cache"))
    assert loaded.num_rows == len(RELEASE.read_text().splitlines())


def test_a_pushed_folder_made_again_leaves_no_old_evaluation_or_plot_on_the_hub(tmp_path, hub):
    """``evaluate --write-card`` wrote evaluation.json; the folder made again has none (nor a plot
    it had), but the Hub kept them beside the new card (an earlier dataset's Table-2 row)."""
    from paraamr.cli import main

    folder = tmp_path / "release"
    assert main(["convert", str(RELEASE), str(folder)]) == 0
    (folder / "evaluation.json").write_text('{"row": {"Pairs": 14, "TED-3": 1.5}}')
    (folder / "plots").mkdir(exist_ok=True)
    (folder / "plots" / "ted3.png").write_bytes(b"\x89PNG old")
    assert _push(hub, "me/corpus", str(folder)).returncode == 0
    assert {"evaluation.json", "plots/ted3.png"} <= set(_uploaded(hub, "me/corpus"))
    assert "| 14 | 1.50 |" in _uploaded(hub, "me/corpus")["README.md"].decode()
    assert main(["convert", str(RELEASE), str(folder), "--overwrite"]) == 0  # made again
    (folder / "plots" / "ted3.png").unlink()  # (a user's file in plots/: --overwrite keeps it)
    assert not (folder / "evaluation.json").exists()
    assert _push(hub, "me/corpus", str(folder)).returncode == 0
    files = [p.relative_to(folder) for p in folder.rglob("*") if p.is_file()]
    assert set(_uploaded(hub, "me/corpus")) == {str(p) for p in files if not p.parts[0].startswith(".")}


def test_a_broken_evaluation_json_is_named_not_an_internal_error(tmp_path, hub):
    from paraamr.cli import main

    folder = tmp_path / "release"
    assert main(["convert", str(RELEASE), str(folder)]) == 0
    (folder / "evaluation.json").write_text('{"pairs": 14}')
    proc = _push(hub, "me/corpus", str(folder))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "evaluation.json: not paraamr evaluate's Table-2 row (no \"row\"); write it again" in proc.stderr


def test_a_folder_a_user_edited_is_refused_in_one_line_naming_what_is_wrong(tmp_path, hub):
    """Before: a deleted shard or a second cut's shards beside the first were pushed (records
    lost or doubled, the card rewritten to agree, exit 0); a broken YAML header or a summary.json
    that is no object was an internal error; a shard cut short was named by its folder only; a card
    of the user's without ``configs:`` (which the Hub cannot load) went up without a word."""
    import shutil

    from paraamr.cli import main

    whole = tmp_path / "whole"
    assert main(["convert", str(RELEASE), str(whole), "--max-shard-size", "1KB"]) == 0
    pairs = sorted((whole / "data" / "pairs").glob("*.parquet"))
    assert len(pairs) >= 2
    cases = {
        "lost": lambda f: (f / "data" / "pairs" / pairs[1].name).unlink(),
        "twice": lambda f: shutil.copy(RELEASE, f / "data" / "pairs" / "train-00000-of-00001.parquet"),
        "yaml": lambda f: (f / "README.md").write_text(
            (f / "README.md").read_text().replace("configs:", "configs: [oops", 1)
        ),
        "summary": lambda f: (f / "summary.json").write_text("[1, 2]"),
        "cut": lambda f: (f / "data" / "pairs" / pairs[0].name).write_bytes(pairs[0].read_bytes()[:100]),
    }
    said = {
        "lost": f"split 'train' lacks 1 of its {len(pairs)} shards ({pairs[1].name} first)",
        "twice": f"split 'train' has shards of 2 cuts (into 1 and {len(pairs)} shards)",
        "yaml": "README.md: its YAML header cannot be read (while parsing a flow sequence",
        "summary": "summary.json: not a JSON object",
        "cut": f"cut/data/pairs/{pairs[0].name}: not a readable Parquet file (",
    }
    for name, damage in cases.items():
        folder = tmp_path / name
        shutil.copytree(whole, folder)
        damage(folder)
        proc = _push(hub, f"me/{name}", str(folder))
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
        assert said[name] in proc.stderr and ("dataset", f"me/{name}") not in hub.repos
    mine = tmp_path / "mine"
    shutil.copytree(whole, mine)
    (mine / "README.md").write_text("# My corpus\n")
    proc = _push(hub, "me/mine", str(mine))
    assert proc.returncode == 0 and "README.md is not paraamr's card and lists no `configs:`" in proc.stderr


def test_private_is_refused_for_a_public_repo(tmp_path, hub):
    """--private said nothing of a repo already public, and uploaded into it."""
    folder = _folder(tmp_path)
    assert _push(hub, "me/corpus", str(folder)).returncode == 0
    commits = len(hub.requests("POST", "/commit/"))
    proc = _push(hub, "me/corpus", str(folder), "--private")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "me/corpus: exists and is public; --private does not change that" in proc.stderr
    assert len(hub.requests("POST", "/commit/")) == commits and not hub.dataset("me/corpus").private


def test_push_to_a_revision_creates_the_branch(tmp_path, hub):
    from paraamr.cli import main

    folder = tmp_path / "release"
    assert main(["convert", str(RELEASE), str(folder)]) == 0
    proc = _push(hub, "me/corpus", str(folder), "--revision", "v2")
    assert proc.returncode == 0, proc.stderr
    assert hub.requests("POST", "/branch/v2")
    card = _uploaded(hub, "me/corpus", "v2")["README.md"].decode()  # its snippets load main: it says so
    assert 'It is on branch `v2`: add `revision="v2"` to each `datasets` and' in card
    assert "and `@v2` after the repo id in each `hf://` path (pandas, Polars)." in card


def test_push_refuses_a_folder_that_is_not_a_dataset(tmp_path, hub):
    (tmp_path / "empty").mkdir()
    proc = _push(hub, "me/corpus", str(tmp_path / "empty"))
    assert proc.returncode == 1 and "not a dataset folder" in proc.stderr
    assert hub.log == []


def test_push_with_the_folder_first_names_the_command_in_the_right_order(tmp_path, hub):
    folder = _folder(tmp_path)
    proc = _push(hub, str(folder), "me/corpus")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"REPO_ID comes first, as in `hf upload`: paraamr push me/corpus {folder}" in proc.stderr
    assert hub.log == []  # nothing sent


def test_convert_push_to_hub_then_load_dataset_by_its_hub_id(tmp_path, hub):
    """The real huggingface_hub uploads and the real datasets loads back, through the loopback Hub."""
    import datasets
    from huggingface_hub import DatasetCard

    from paraamr.cli import main

    folder = tmp_path / "release"
    assert main(["convert", str(RELEASE), str(folder), "--push-to-hub", "me/paraamr-small", "--private"]) == 0
    uploaded = _uploaded(hub, "me/paraamr-small")
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


def test_push_writes_the_folders_card_for_the_repo(tmp_path, hub):
    """A folder converted without --push-to-hub has a card for the folder; ``paraamr push`` writes
    it again for the repo (its snippets load the repo id), keeping its license, then uploads it."""
    from huggingface_hub import DatasetCard

    from paraamr.cli import main

    folder = tmp_path / "release"
    assert (
        main(["convert", str(RELEASE), str(folder), "--license", "cc-by-nc-4.0", "--max-shard-size", "2MB"])
        == 0
    )
    before = (folder / "README.md").read_text()
    assert 'load_dataset("release"' in before and "Once published" in before
    proc = _push(hub, "me/corpus", str(folder))
    assert proc.returncode == 0, proc.stderr
    text = _uploaded(hub, "me/corpus")["README.md"].decode()
    assert text == (folder / "README.md").read_text()
    assert 'load_dataset("me/corpus", "pairs", split="train")' in text and "Once published" not in text
    assert "This dataset is published on the Hub as `me/corpus`." in text
    assert 'load_dataset("release"' not in text and "each at most 2MB of Arrow data" in text
    data = DatasetCard(text).data
    assert data.license == "cc-by-nc-4.0" and "arxiv:2305.16585" in data.tags
    assert "quality score in [0, 1]" in text and 'eprint = "2305.16585"' in text


def test_finalize_push_to_hub_writes_the_card_for_the_repo(tmp_path, hub, monkeypatch):
    """``paraamr finalize DIR --push-to-hub REPO`` (a run cut into shards, written by the shard
    writers) uploads a card whose snippets load the repo id, not the folder."""
    from shard_runs import by_shard, records, write_run

    from paraamr.cli import main

    out = tmp_path / "run"
    write_run(out, by_shard(records(40), 2), 2, part_rows=10)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert main(["finalize", str(out), "--push-to-hub", "me/sharded"]) == 0
    text = _uploaded(hub, "me/sharded")["README.md"].decode()
    assert text == (out / "README.md").read_text()
    assert 'load_dataset("me/sharded", split="train")' in text and "Once published" not in text


def test_a_folder_of_many_files_arrives_whole(tmp_path, hub, monkeypatch):
    """Over :data:`~paraamr.builder.hub.LARGE_FILES` files a folder goes up the way the installed
    huggingface_hub sends large folders (``upload_large_folder`` before 2.0, ``upload_folder`` since,
    which then commits in batches): the same files arrive, the resume state left out."""
    from paraamr.builder import hub as hub_module

    out = _folder(tmp_path)
    monkeypatch.setattr(hub_module, "LARGE_FILES", 2)  # the folder sends 3 files
    url = hub_module.push_folder(out, "me/large", token=TOKEN)
    assert url.startswith(hub.url) and "me/large" in url
    files = _uploaded(hub, "me/large")
    assert sorted(files) == [
        "README.md",
        "data/default/train-00000-of-00001.parquet",
        "failures/failures-00000-of-00001.jsonl",
    ]
    assert all(content == (out / name).read_bytes() for name, content in files.items())


def test_a_failed_push_leaves_the_folders_card_as_it_was(tmp_path, hub):
    """The card is written for the repo before the upload; when the upload fails the folder is not
    published, so its card goes back (before: it said "published on the Hub as `me/corpus`")."""
    from paraamr.cli import main

    folder = tmp_path / "release"
    assert main(["convert", str(RELEASE), str(folder)]) == 0
    before = (folder / "README.md").read_bytes()
    env = {
        **os.environ,
        **hub.env,
        "HF_TOKEN": TOKEN,
        "HF_ENDPOINT": "http://127.0.0.1:9",
        "PARAAMR_HUB_TIMEOUT": "5",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "paraamr", "push", "me/corpus", str(folder)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "upload of" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert (folder / "README.md").read_bytes() == before


def test_a_failed_upload_of_convert_says_how_to_upload_the_folder_it_wrote(tmp_path, hub):
    """``convert --push-to-hub`` wrote the folder, then the upload failed: the same command again
    refuses the folder (it exists), and the error did not say that ``paraamr push`` uploads it."""
    folder = tmp_path / "release"
    env = {**os.environ, **hub.env, "HF_TOKEN": TOKEN, "PARAAMR_HUB_TIMEOUT": "5"}
    argv = ["convert", str(RELEASE), str(folder), "--push-to-hub", "me/corpus", "--revision", "dev"]
    down = {**env, "HF_ENDPOINT": "http://127.0.0.1:9"}
    proc = subprocess.run([sys.executable, "-m", "paraamr", *argv], env=down, capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 2, proc.stderr
    warned = "paraamr convert: warning: --push-to-hub me/corpus: the Hub could not be asked now"
    assert proc.stderr.startswith(warned)
    told = f"{folder} is written: upload it with `paraamr push me/corpus {folder} --revision dev`"
    assert proc.stderr.rstrip().endswith(told)
    again = told.split("`")[1].split()[1:]
    proc = subprocess.run([sys.executable, "-m", "paraamr", *again], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "data/default/train-00000-of-00001.parquet" in _uploaded(hub, "me/corpus", "dev")
