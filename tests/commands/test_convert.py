"""``paraamr convert``: release JSON lines <-> Parquet folder, lossless; the folder loads by its card."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import datasets
import pytest
from dataset_samples import FOLDER_RECORDS
from pausing import killed_at

from paraamr import sources
from paraamr.cli import main


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_release_round_trip_is_lossless(tmp_path, release_jsonl, release_lines, capsys):
    folder, back = tmp_path / "folder", tmp_path / "back.jsonl"
    assert main(["convert", str(release_jsonl), str(folder), "--max-shard-size", "1KB"]) == 0
    assert main(["convert", str(folder), str(back)]) == 0
    assert _lines(back) == release_lines  # every field of the release, floats bit for bit, in order
    assert back.read_bytes() == release_jsonl.read_bytes()  # same json.dumps layout as the fixture
    out, err = capsys.readouterr()
    assert "wrote 6 records" in out and "left out" not in err  # the release's fields all have a place
    # push_to_hub's names, sized by bytes; nothing else left in the folder (no parts, no state)
    names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    shards = [n for n in names if n.startswith("data/default/")]
    assert len(shards) > 1 and shards == [
        f"data/default/train-{i:05d}-of-{len(shards):05d}.parquet" for i in range(len(shards))
    ]
    assert [n for n in names if not n.startswith("data/")] == [
        "README.md",
        "plots/paraphrases_per_source.png",
        "plots/perplexity.png",
    ]
    # pairs shards are cut between sources: each file, read on its own, gives whole records
    pairs = sorted((folder / "data" / "pairs").glob("*.parquet"))
    loose = [r for path in pairs for _s, r in sources.read_path(path)]
    assert len(pairs) > 1 and loose == [r for _s, r in sources.read_path(folder) if r["paraphrases"]]


def test_fields_with_no_place_in_the_records_are_named(tmp_path, capsys):
    """A release-like file of one's own: fields the records cannot hold are said to be left out (they
    were dropped without a word), by name and count; the records are written as before."""
    lines = [
        {"text": "A b.", "paraphrases": [{"para_text": "B a.", "perplexity": 3.0, "score": 1}]},
        {"text": "C d.", "paraphrases": [{"para_text": "D c.", "score": 2}, {"para_text": "Dc"}]},
    ]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({**line, "note": "mine"}) + "\n" for line in lines))
    assert main(["convert", str(path), str(tmp_path / "folder")]) == 0
    out, err = capsys.readouterr()
    assert "wrote 2 records" in out
    assert err.strip() == (
        "paraamr convert: fields the records have no place for, left out: "
        "note (2 lines), paraphrases[].score (2 paraphrases)"
    )


def test_zip_round_trip_holds_one_json_member_like_the_release(tmp_path, release_zip, release_lines):
    folder, back = tmp_path / "folder", tmp_path / "ParaAMR_small.zip"
    assert main(["convert", str(release_zip), str(folder)]) == 0
    assert main(["convert", str(folder), str(back)]) == 0
    with zipfile.ZipFile(back) as archive:
        assert archive.namelist() == ["ParaAMR_small.json"]
        lines = [json.loads(line) for line in archive.read("ParaAMR_small.json").decode().splitlines()]
    assert lines == release_lines


def test_all_fields_round_trip_of_our_folder(tmp_path, parquet_folder):
    jsonl, folder = tmp_path / "all.jsonl.gz", tmp_path / "again"
    assert main(["convert", str(parquet_folder), str(jsonl), "--all-fields", "--split", "all"]) == 0
    assert main(["convert", str(jsonl), str(folder)]) == 0
    assert [r for _s, r in sources.read_path(folder)] == FOLDER_RECORDS["train"] + FOLDER_RECORDS[
        "validation"
    ]


def test_the_card_credits_the_release_only_for_the_releases_records(tmp_path, release_jsonl, parquet_folder):
    """Records with graphs, foci or scores are not the release's: before, their card said "paraphrases
    of the ParaAMR release", "Curated by: the ParaAMR authors", ParaNMT-50M and CC BY-NC 4.0."""
    from huggingface_hub import DatasetCard

    cards = {}
    for name, source in (("release", release_jsonl), ("ours", parquet_folder)):
        assert main(["convert", str(source), str(tmp_path / name)]) == 0
        cards[name] = DatasetCard.load(tmp_path / name / "README.md")
    release, ours = cards["release"], cards["ours"]
    assert release.data.license == "cc-by-nc-4.0"
    assert release.data.source_datasets == ["extended|other-paranmt-50m"]
    assert "Curated by:** the ParaAMR authors" in release.text
    assert ours.data.license == "unknown" and ours.data.source_datasets == ["original"]
    assert "ParaAMR release (Huang" not in ours.text and "ParaNMT-50M" not in ours.text
    assert "not the ParaAMR release" in ours.text
    assert main(["convert", str(parquet_folder), str(tmp_path / "mit"), "--license", "mit"]) == 0
    assert DatasetCard.load(tmp_path / "mit" / "README.md").data.license == "mit"


def test_converted_folder_loads_through_its_card(tmp_path, release_jsonl, release_lines):
    """The Hub route: load_dataset(folder) reads README.md's configs: (packaged Parquet builder)."""
    folder = tmp_path / "folder"
    assert main(["convert", str(release_jsonl), str(folder), "--license", "cc-by-nc-4.0"]) == 0
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "license: cc-by-nc-4.0" in readme and "| 6 | 1.83 |" in readme
    cache = str(tmp_path / "cache")
    default = datasets.load_dataset(str(folder), split="train", cache_dir=cache)
    pairs = datasets.load_dataset(str(folder), "pairs", split="train", cache_dir=cache)
    assert default["text"] == [line["text"] for line in release_lines]
    assert pairs.num_rows == 11 and pairs[0]["perplexity"] == 125.02737280513969


def test_existing_folder_needs_overwrite(tmp_path, release_jsonl, capsys):
    folder = tmp_path / "folder"
    assert main(["convert", str(release_jsonl), str(folder)]) == 0
    assert main(["convert", str(release_jsonl), str(folder)]) == 1
    assert "pass --overwrite" in capsys.readouterr().err
    assert main(["convert", str(release_jsonl), str(folder), "--overwrite"]) == 0


def test_convert_never_replaces_user_files_and_overwrite_deletes_only_its_own(
    tmp_path, release_jsonl, capsys
):
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "README.md").write_text("# my notes\n")
    assert main(["convert", str(release_jsonl), str(folder)]) == 1  # a folder without data/: still refused
    err = capsys.readouterr().err  # and not told to pass --overwrite, which would not take it either
    assert "holds no dataset" in err and "pass --overwrite" not in err
    assert (folder / "README.md").read_text() == "# my notes\n"
    assert main(["convert", str(release_jsonl), str(folder), "--overwrite"]) == 1  # no dataset (issue 28)
    assert (
        "holds no dataset" in capsys.readouterr().err and (folder / "README.md").read_text() == "# my notes\n"
    )
    (folder / "README.md").unlink()
    assert main(["convert", str(release_jsonl), str(folder)]) == 0
    (folder / "data" / "mine.csv").write_text("a,b\n")
    (folder / "notes.txt").write_text("keep")
    stale = folder / "data" / "default" / "train-00000-of-00001.parquet"
    assert stale.is_file()
    assert main(["convert", str(release_jsonl), str(folder), "--overwrite", "--max-shard-size", "1KB"]) == 0
    assert (folder / "data" / "mine.csv").read_text() == "a,b\n" and (
        folder / "notes.txt"
    ).read_text() == "keep"
    assert not stale.exists() and sources.split_files(folder)["train"][0].endswith("-of-00002.parquet")
    assert [r for _s, r in sources.read_path(folder)] == [r for _s, r in sources.read_path(release_jsonl)]


def test_convert_to_jsonl_refuses_an_existing_file(tmp_path, release_jsonl, capsys):
    out = tmp_path / "out.jsonl"
    out.write_text("mine\n")
    assert main(["convert", str(release_jsonl), str(out)]) == 1
    assert "exists (pass --overwrite" in capsys.readouterr().err and out.read_text() == "mine\n"
    assert main(["convert", str(release_jsonl), str(out), "--overwrite"]) == 0
    assert out.read_bytes() == release_jsonl.read_bytes()


@pytest.mark.parametrize("length", [245, 255])
def test_an_output_name_the_file_system_takes_is_taken(tmp_path, release_jsonl, capsys, length):
    """Before: a name of 220 to 255 bytes was refused as "file name too long": the lock and the
    temporary file beside it add to the name."""
    out = tmp_path / ("b" * (length - len(".jsonl")) + ".jsonl")
    assert main(["convert", str(release_jsonl), str(out)]) == 0
    assert out.read_bytes() == release_jsonl.read_bytes()
    assert main(["convert", str(release_jsonl), str(out)]) == 1
    assert "exists (pass --overwrite" in capsys.readouterr().err
    assert main(["convert", str(release_jsonl), str(out), "--overwrite"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != release_jsonl.name) == [out.name]


@pytest.mark.parametrize("skip", [False, True])
def test_convert_malformed_input(tmp_path, skip, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "a", "paraphrases": []}\n{"text": "b", "paraphrases": [1]}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    status = main(["convert", str(bad), str(out), *(["--skip-invalid"] if skip else [])])
    err = capsys.readouterr().err
    if skip:
        assert status == 0 and "skipped 1 invalid line" in err and len(_lines(out)) == 1
    else:
        assert status == 1 and f"{bad}, line 2: paraphrase 1: expected a JSON object, got int" in err
        assert not out.exists() and not list(tmp_path.glob(".out.jsonl*"))  # no partial output left
        folder = tmp_path / "folder"
        assert main(["convert", str(bad), str(folder)]) == 1
        assert not list(folder.rglob("*"))  # the part holding line 1 was removed again


def test_overwrite_refuses_the_folder_being_read(tmp_path, release_jsonl, capsys):
    folder = tmp_path / "folder"
    assert main(["convert", str(release_jsonl), str(folder)]) == 0
    assert main(["convert", str(folder), str(folder), "--overwrite"]) == 1
    assert "cannot overwrite the folder being read" in capsys.readouterr().err
    assert sources.split_files(folder)["train"]  # still there


def test_a_split_a_dataset_folder_cannot_hold_is_one_line_naming_the_input(tmp_path, release_jsonl, capsys):
    """A folder read keeps any split name; written, a split takes datasets' names only: 'dev-set'
    was an internal error that named no input."""
    import shutil

    folder = tmp_path / "folder"
    assert main(["convert", str(release_jsonl), str(folder)]) == 0
    for config in ("default", "pairs"):
        shard = folder / "data" / config / "train-00000-of-00001.parquet"
        shutil.copy(shard, shard.with_name("dev-set-00000-of-00001.parquet"))
    capsys.readouterr()
    assert main(["convert", str(folder), str(tmp_path / "copy")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"paraamr convert: {folder}: split name 'dev-set' breaks"), err
    assert not (tmp_path / "copy").exists()


def _files(folder):
    """Each file of ``folder`` but the hidden state, with its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and ".paraamr" not in p.parts
    }


def test_an_interrupted_overwrite_leaves_the_old_dataset_or_the_new_one(tmp_path, release_jsonl, monkeypatch):
    """Ctrl-C while the new shards were staged left an empty folder: the old dataset was removed
    before them. Now it goes only once they are staged; a signal during the swap stops the command
    once the new shards are in place, before their card: the folder is then marked as being
    written, without a card (it kept the old card, whose split sizes did not fit the new shards),
    and the same command takes it again without --overwrite."""
    import os
    import signal

    from paraamr.builder import folder as folder_module

    out = tmp_path / "folder"
    assert main(["convert", str(release_jsonl), str(out)]) == 0
    old = _files(out)

    def interrupted(path, data):  # Ctrl-C as the plan of the staged shards is saved
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(folder_module, "atomic_write", interrupted)
        assert (
            main(["convert", str(release_jsonl), str(out), "--overwrite", "--max-shard-size", "1KB"]) == 130
        )
    assert _files(out) == old and not (out / ".paraamr" / "parts").exists()

    replace = os.replace

    def signalled(src, dst):  # SIGINT as the first shard moves into place
        if str(dst).startswith(str(out / "data")):
            monkeypatch.setattr(os, "replace", replace)
            os.kill(os.getpid(), signal.SIGINT)
        replace(src, dst)

    monkeypatch.setattr(os, "replace", signalled)
    assert main(["convert", str(release_jsonl), str(out), "--overwrite", "--max-shard-size", "1KB"]) == 130
    assert "README.md" in old and not (out / "README.md").exists()  # (not the old card on new shards)
    assert (out / ".paraamr" / "writing.json").is_file()
    assert [r for _s, r in sources.read_path(out)] == [r for _s, r in sources.read_path(release_jsonl)]
    assert main(["convert", str(release_jsonl), str(out), "--max-shard-size", "1KB"]) == 0  # taken again
    from datasets import load_dataset

    loaded = load_dataset(str(out), split="train", cache_dir=str(tmp_path / "cache"))
    assert loaded.num_rows == len(list(sources.read_path(release_jsonl)))
    assert not (out / ".paraamr" / "writing.json").exists() and (out / "README.md").is_file()


def test_a_file_being_written_is_refused_and_what_a_killed_writer_left_goes(tmp_path, release_jsonl, capsys):
    """Two commands writing one output file both succeeded, the later rename silently replacing
    the other's result; and the hidden temporary file of a killed run (22 MB for the release)
    stayed beside the output for good."""
    from paraamr.outputs import claim_file

    out = tmp_path / "back.jsonl"
    stale = tmp_path / ".back.jsonl.4242-0badcafe.tmp"
    with claim_file(out, overwrite=False, command="convert"):  # another convert, still writing
        stale.write_text("half a file")  # its temporary file
        assert main(["convert", str(release_jsonl), str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out}: being written by pid" in err[0] and "paraamr convert" in err[0]
    assert not out.exists() and stale.exists()
    assert main(["convert", str(release_jsonl), str(out)]) == 0
    assert not stale.exists() and len(_lines(out)) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["back.jsonl"]  # no lock file left either
    assert main(["convert", str(release_jsonl), "/proc/back.jsonl"]) == 1  # no file can be made there
    assert capsys.readouterr().err.startswith("paraamr convert: /proc/back.jsonl: ")  # not its lock file


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["staged", "new-card"])
def test_a_killed_convert_into_a_new_folder_is_taken_again_without_overwrite(tmp_path, release_jsonl, moment):
    """kill -9 with the records staged, or in shards before the card: the rerun said "exists and is
    not empty (pass --overwrite to replace its shards and card)" of a folder with neither, and
    stats sent the user to `paraamr finalize`, which refused it. Nothing there is anyone's data."""
    out = tmp_path / "out"
    killed_at(moment, ["convert", str(release_jsonl), str(out)])
    assert not (out / "README.md").exists() and (out / ".paraamr" / "writing.json").is_file()
    stats = subprocess.run([sys.executable, "-m", "paraamr", "stats", str(out)], capture_output=True,
                           text=True)  # fmt: skip
    said = f"paraamr stats: {out}: what a killed convert or augment left (no card): run it again\n"
    assert stats.returncode == 1 and stats.stderr == said
    assert main(["convert", str(release_jsonl), str(out)]) == 0
    assert [r for _s, r in sources.read_path(out)] == [r for _s, r in sources.read_path(release_jsonl)]
    assert not (out / ".paraamr" / "writing.json").exists()  # the mark gone with the card
    assert main(["convert", str(release_jsonl), str(out)]) == 1  # a finished one is the user's now


def test_no_records_is_refused_for_json_lines_as_for_a_folder(tmp_path, release_jsonl, capsys):
    """A folder of no records: a folder output said so, JSON lines got an empty file and exit 0; a
    folder of pairs shards only read as no records, without a word."""
    import shutil

    full = tmp_path / "full"
    assert main(["convert", str(release_jsonl), str(full)]) == 0
    (tmp_path / "only" / "data").mkdir(parents=True)
    shutil.copytree(full / "data" / "pairs", tmp_path / "only" / "data" / "pairs")
    capsys.readouterr()
    for out in ("back.jsonl", "folder"):  # pairs only: named (before: read as no records)
        assert main(["convert", str(tmp_path / "only"), str(tmp_path / out)]) == 1
        assert "pairs shards but no default" in capsys.readouterr().err and not (tmp_path / out).exists()
    shutil.rmtree(tmp_path / "only" / "data" / "pairs")  # a dataset folder of no records
    for out in ("back.jsonl", "folder"):
        assert main(["convert", str(tmp_path / "only"), str(tmp_path / out)]) == 1
        assert "no records to convert" in capsys.readouterr().err and not (tmp_path / out).exists()


def test_json_lines_of_a_folder_of_several_splits_name_the_split(tmp_path, parquet_folder, capsys):
    """A file holds no split: before, the train and validation records went into one file without a
    word (and came back as train: test rows could leak into training)."""
    out = tmp_path / "v.jsonl"
    assert main(["convert", str(parquet_folder), str(out)]) == 2
    err = capsys.readouterr().err
    assert "holds the splits train, validation" in err and "--split" in err and not out.exists()
    assert main(["convert", str(parquet_folder), str(out), "--split", "validation", "--all-fields"]) == 0
    assert _lines(out) == FOLDER_RECORDS["validation"]
    assert main(["convert", str(parquet_folder), str(tmp_path / "t.jsonl"), "--split", "test"]) == 1
    assert "no split 'test' (it has train, validation)" in capsys.readouterr().err
    assert main(["convert", str(parquet_folder), str(tmp_path / "f"), "--split", "train"]) == 2
    assert "--split: only with JSON lines as OUTPUT" in capsys.readouterr().err


def test_a_split_a_run_adds_to_the_folder_being_read_is_converted_too(tmp_path, parquet_folder, monkeypatch):
    """A run finalized a split more into the folder after convert listed its splits. Before:
    ``internal error: KeyError: 'validation'``; now the folder read is converted whole."""
    import shutil

    folder, aside = tmp_path / "in", tmp_path / "aside"
    shutil.copytree(parquet_folder, folder)
    for shard in folder.glob("data/*/validation-*.parquet"):
        (aside / shard.parent.name).mkdir(parents=True, exist_ok=True)
        shard.rename(aside / shard.parent.name / shard.name)
    listing = sources.split_files

    def listed_then_added(path, *args, **kwargs):
        found = listing(path, *args, **kwargs)
        for shard in aside.glob("*/*.parquet"):  # the run's split lands after the listing
            shard.rename(folder / "data" / shard.parent.name / shard.name)
        return found

    monkeypatch.setattr(sources, "split_files", listed_then_added)
    assert main(["convert", str(folder), str(tmp_path / "out")]) == 0
    monkeypatch.setattr(sources, "split_files", listing)
    assert [r for _s, r in sources.read_path(tmp_path / "out")] == [
        *FOLDER_RECORDS["train"], *FOLDER_RECORDS["validation"]
    ]
