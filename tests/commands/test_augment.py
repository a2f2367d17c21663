"""``paraamr augment`` end to end: a Hub-ready folder that load_dataset reads, bad rows by index,
the n-gram LM saved and reused, other splits copied, clear errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from datasets import Dataset, load_dataset
from huggingface_hub import DatasetCard
from pausing import killed_at, wait_for_handlers
from tinyargs import model_args

from paraamr.cli import main
from paraamr.layout import data_files, failure_files, list_shards

ROWS = [
    {
        "sentence1": "The company said its quarterly profit rose sharply .",
        "sentence2": "Profit rose a lot , the firm said .",
        "label": 1,
    },
    {"sentence1": "He bought a new car last week .", "sentence2": "", "label": 0},
    {
        "sentence1": "The old cat sat on the warm mat near the door .",
        "sentence2": "A dog slept by the fire .",
        "label": 0,
    },
    {"sentence1": None, "sentence2": "Nothing here .", "label": 0},
]


@pytest.fixture
def mrpc(tmp_path):
    path = tmp_path / "mrpc.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def test_a_stopped_reda_ng_leaves_no_save_lm_file_and_the_same_command_runs(tmp_path, mrpc, monkeypatch):
    """The LM was saved as soon as it was trained: Ctrl-C while the folder was written left the
    file, and the same command then refused it (--save-lm: exists). It is saved with the folder."""
    from paraamr.augment import folder

    argv = ["augment", "--dataset", str(mrpc), "--method", "reda-ng", "--n", "2"]
    argv += ["--output", str(tmp_path / "o"), "--save-lm", str(tmp_path / "lm.parquet")]

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(folder, "write_folder", stopped)
        assert main(argv) == 130
    assert not (tmp_path / "lm.parquet").exists() and not (tmp_path / "o").exists()
    assert main(argv) == 0 and (tmp_path / "lm.parquet").is_file()


@pytest.mark.slow
def test_a_kill_while_the_lm_is_written_leaves_what_the_rerun_removes(tmp_path, mrpc):
    """Before: the LM was written through a temporary file of its temporary file
    (``..lm.parquet.P-X.tmp.P-Y.tmp``), which a kill left and the rerun's cleanup did not match."""
    argv = ["augment", "--dataset", str(mrpc), "--method", "reda-ng", "--n", "2"]
    argv += ["--output", str(tmp_path / "o"), "--save-lm", str(tmp_path / "lm.parquet")]
    killed = (
        "import os, signal, sys, pyarrow.parquet as pq\n"
        "def half(table, where, **kw):\n"
        "    open(where, 'wb').write(b'PAR1 half')\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "pq.write_table = half\n"
        "from paraamr.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", killed, *argv], capture_output=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL
    left = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".lm.parquet"))
    assert len(left) == 1 and left[0].endswith(".tmp") and left[0].count(".tmp") == 1, left
    assert main(argv) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lm.parquet", "mrpc.jsonl", "o"]


def test_a_save_lm_that_fills_the_disk_names_it_and_leaves_no_folder(tmp_path, mrpc, monkeypatch, capsys):
    """Before: the LM was saved after the folder, so a full disk there said 'OUTPUT: no space left
    on device' about a complete output, exit 1, and the same command was then refused (exists)."""
    import errno

    argv = ["augment", "--dataset", str(mrpc), "--method", "reda-ng", "--n", "2"]
    argv += ["--output", str(tmp_path / "o"), "--save-lm", str(tmp_path / "lm.parquet")]

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")  # as pyarrow's writer: no file named

    with monkeypatch.context() as patch:
        patch.setattr("pyarrow.parquet.write_table", full)
        assert main(argv) == 1
    assert capsys.readouterr().err.endswith(f"{tmp_path / 'lm.parquet'}: no space left on device\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mrpc.jsonl"]
    assert main(argv) == 0 and (tmp_path / "lm.parquet").is_file()


def test_a_folder_with_one_split_of_no_rows_names_that_split(tmp_path, capsys):
    """datasets loads no split of a folder when one has no rows; the message named none ("no rows
    to augment", for a folder of 30 train rows), and before that leaked datasets' exception."""
    folder = tmp_path / "d"
    folder.mkdir()
    rows = "".join(f"the fox {i} jumps,{i % 2}\n" for i in range(30))
    (folder / "train.csv").write_text("text,label\n" + rows)
    (folder / "test.csv").write_text("text,label\n")
    argv = ["augment", "--dataset", str(folder), "--split", "train", "--method", "reda"]
    assert main([*argv, "--output", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    said = "no rows to augment in split 'test' (remove its file to augment the rest)"
    assert err == f"paraamr augment: {folder}: {said}\n"


def test_a_save_lm_path_that_cannot_be_written_is_refused_before_any_work(tmp_path, mrpc, capsys):
    """The LM is written after the folder: a --save-lm under a file wrote the folder, then failed
    ("already exists", naming the file), and the same command with a good path was refused."""
    out = tmp_path / "o"
    argv = ["augment", "--dataset", str(mrpc), "--method", "reda-ng", "--n", "2", "--output", str(out)]
    assert main([*argv, "--save-lm", str(mrpc / "lm.parquet")]) == 2
    err = capsys.readouterr().err
    assert f"--save-lm {mrpc / 'lm.parquet'}: cannot be written: {mrpc} is a file" in err and not out.exists()


def test_reda_ng_folder_loads_and_reports_bad_rows(tmp_path, mrpc, capsys):
    out = tmp_path / "out"
    argv = ["augment", "--dataset", str(mrpc), "--method", "reda-ng", "--n", "2", "--output", str(out)]
    assert main([*argv, "--save-lm", str(tmp_path / "lm.parquet")]) == 0
    err = capsys.readouterr().err
    assert "bad row: train index 1, column sentence2: empty text" in err
    assert "bad row: train index 3, column sentence1: missing text" in err
    loaded = load_dataset(str(out))
    train = loaded["train"]
    assert set(train.column_names) == {"sentence1", "sentence2", "label", "augmented", "source_index"}
    assert [r["source_index"] for r in train if not r["augmented"]] == [0, 1, 2, 3]
    assert {r["source_index"] for r in train if r["augmented"]} == {0, 2}
    assert all(r["label"] == ROWS[r["source_index"]]["label"] for r in train)
    failures = [json.loads(line) for path in failure_files(out) for line in path.read_text().splitlines()]
    assert [(f["split"], f["index"], f["reason"]) for f in failures] == [
        ("train", 1, "empty text"),
        ("train", 3, "missing text"),
    ]
    card = DatasetCard.load(out / "README.md")
    assert card.data.configs[0]["data_files"] == [{"split": "train", "path": data_files("default", "train")}]
    assert card.data.license == "unknown" and card.data.language == ["en"]
    assert card.data.task_categories == ["text-classification"]  # the rows carry labels
    assert [p.name for p in list_shards(out)["default"]["train"]] == ["train-00000-of-00001.parquet"]
    assert "ngram|order:4|backoff:stupid" in card.text
    assert "Bad rows (empty, missing or over `--max-chars`): `failures/`." in card.text
    from paraamr.commands.augment import __doc__ as help_text  # the files the help names are there

    for named in ("data/default/{split}-*.parquet", "failures/failures-*.jsonl"):
        assert named in " ".join(help_text.split()) and list(out.glob(named.format(split="train"))), named
    # the saved LM gives the same output again; a non-empty output needs --overwrite
    assert main([*argv, "--lm", str(tmp_path / "lm.parquet")]) == 1
    assert "--overwrite" in capsys.readouterr().err
    assert main([*argv, "--lm", str(tmp_path / "lm.parquet"), "--overwrite"]) == 0
    assert list(load_dataset(str(out))["train"]) == list(train)


def test_paraamr_method_with_release_file_and_other_splits_copied(tmp_path, capsys):
    data = tmp_path / "data"
    Dataset.from_dict({"text": ["He left.", "She stayed."], "label": [0, 1]}).to_parquet(
        str(data / "train.parquet")
    )
    # a split that sorts before train, whose columns the card's dataset_info gave: before, the copy
    # kept only its own columns and load_dataset refused the folder (CastError)
    Dataset.from_dict({"text": ["He left."], "label": [0]}).to_parquet(str(data / "test.parquet"))
    release = tmp_path / "release.jsonl"
    release.write_text(
        json.dumps(
            {
                "text": "he left.",
                "paraphrases": [
                    {"para_text": "He departed.", "perplexity": 50.0},
                    {"para_text": "He went away.", "perplexity": 150.0},
                ],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    argv = ["augment", "--dataset", str(data), "--method", "paraamr", "--n", "3", "--output", str(out)]
    argv += ["--paraphrases", str(release)]
    assert main([*argv, "--split", "train", "--split", "train"]) == 0  # once: the card said 'train, train'
    assert "- Augmented splits: train (other" in (out / "README.md").read_text(encoding="utf-8")
    assert "paraphrases found for 1 of 2 distinct texts" in capsys.readouterr().out
    loaded = load_dataset(str(out))
    assert list(loaded["train"]["text"]) == ["He left.", "He departed.", "She stayed."]  # perplexity <= 110
    copied = {"text": ["He left."], "label": [0], "augmented": [False], "source_index": [0]}
    assert loaded["test"].to_dict() == copied
    assert loaded["test"].features == loaded["train"].features  # copied, not augmented: the same columns
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"- Paraphrases: looked up among the sources of `{release.name}` (perplexity ≤ 110)" in card
    assert str(tmp_path) not in card  # a card is published: never a local path (before: the file's)
    assert "failures/" not in card  # no bad row: no folder to point to (before: always said)
    assert not (out / "failures").exists()
    assert main([*argv, "--max-perplexity", "none", "--overwrite"]) == 0
    assert list(load_dataset(str(out))["train"]["text"]) == [
        "He left.",
        "He departed.",
        "He went away.",
        "She stayed.",
    ]


def test_clear_errors(tmp_path, mrpc, capsys):
    base = ["augment", "--dataset", str(mrpc), "--output", str(tmp_path / "o")]
    assert main([*base, "--method", "paraamr"]) == 2  # a usage error
    assert "--paraphrases PATH" in capsys.readouterr().err
    assert main([*base, "--method", "reda", "--columns", "question"]) == 1
    assert "no column 'question'" in capsys.readouterr().err
    assert main([*base, "--method", "reda", "--split", "test"]) == 1
    assert "no split test (splits: train)" in capsys.readouterr().err
    assert main(["augment", "--dataset", "no-such-org/no-such-dataset", "--method", "reda"]) == 1
    assert "hf download --repo-type dataset" in capsys.readouterr().err


@pytest.mark.slow
def test_paraamr_generated_on_the_fly(tmp_path, tiny_models, capsys):
    data = tmp_path / "rte.csv"
    data.write_text("premise,hypothesis,label\nThe cat sat on the mat.,A cat sat.,0\n", encoding="utf-8")
    out = tmp_path / "out"
    argv = ["augment", "--dataset", str(data), "--method", "paraamr", "--generate", "--n", "2"]
    argv += ["--output", str(out), *model_args(tiny_models)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    found = int(printed.split("paraphrases found for ")[1].split(" of ")[0])
    train = load_dataset(str(out))["train"]
    assert train[0]["premise"] == "The cat sat on the mat." and found >= 1
    added = [r for r in train if r["augmented"]]
    assert added and all(r["label"] == 0 for r in added)
    card = (out / "README.md").read_text(encoding="utf-8")  # the models, as docs/augment.md says:
    # by folder name and content hash, as generate's card names them (before: their local paths)
    named = [f"{k} `{Path(tiny_models[k]).name}` (local, sha256 `" for k in ("parser", "realizer", "lm")]
    assert "by AMR back-translation (" in card and all(name in card for name in named), card
    assert str(Path(tiny_models["parser"]).parent) not in card


def test_two_outputs_of_one_name_load_their_own_rows(tmp_path, mrpc):
    """datasets caches a local folder under its name and its card's YAML, not its path or files
    (huggingface/datasets#2956): two folders named ``out`` loaded through one cache got the first
    one's rows. The card's ``dataset_info`` (sizes of the shards) keys them apart."""
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({**ROWS[0], "sentence1": "A quite different sentence ."}) + "\n")
    outputs = []
    for name, source in (("a", mrpc), ("b", other)):
        out = tmp_path / name / "out"
        argv = ["augment", "--dataset", str(source), "--method", "reda", "--n", "1", "--output", str(out)]
        assert main([*argv, "--no-progress"]) == 0
        outputs.append(out)
    cache = str(tmp_path / "hf-cache")
    for out in outputs:
        loaded = load_dataset(str(out), cache_dir=cache)["train"].to_list()
        assert loaded == Dataset.from_parquet(str(out / data_files("default", "train"))).to_list()
    info = DatasetCard.load(outputs[1] / "README.md").data.dataset_info
    assert [(e["name"], e["num_examples"]) for e in info["splits"]] == [("train", len(loaded))]


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["staged", "new-card"])
def test_what_a_killed_run_left_is_taken_again(tmp_path, mrpc, capsys, moment):
    """kill -9 with the shards staged, or in place before the card: the rerun was refused ("pass
    --overwrite", and before that fix with it too, "not augment's"); a folder left with shards and
    no card was refused even with --overwrite. What a run left of a folder it took new is no one's."""
    out = tmp_path / "out"
    argv = ["augment", "--dataset", str(mrpc), "--method", "reda", "--n", "1", "--output", str(out)]
    killed_at(moment, argv)
    assert not (out / "README.md").exists() and (out / ".paraamr" / "writing.json").is_file()
    assert main(argv) == 0
    assert load_dataset(str(out))["train"].num_rows > 0 and not (out / ".paraamr").exists()
    assert main(argv) == 1 and "pass --overwrite" in capsys.readouterr().err  # finished: the user's now
    run = tmp_path / "run"  # a killed generate run's state: resumable, not augment's to take
    (run / ".paraamr" / "parts").mkdir(parents=True)
    (run / ".paraamr" / "settings.json").write_text("{}")
    assert main([*argv[:-1], str(run), "--overwrite"]) == 1
    assert "not augment's" in capsys.readouterr().err and (run / ".paraamr" / "settings.json").is_file()


def test_no_cache_file_of_the_run_is_left_in_the_datasets_cache(tmp_path, mrpc, monkeypatch):
    """Each run left its map's Arrow file (14 MB for 20,000 rows) beside the input's cache, never
    read again: the cache grew by one a run."""
    import datasets

    cache = tmp_path / "hf-datasets"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    argv = [
        "augment",
        "--dataset",
        str(mrpc),
        "--method",
        "reda",
        "--n",
        "1",
        "--output",
        str(tmp_path / "out"),
    ]
    assert main(argv) == 0 and main([*argv, "--overwrite"]) == 0
    assert any(cache.rglob("*.arrow")) and not list(cache.rglob("cache-*.arrow"))  # the input's own stays


@pytest.mark.slow
def test_a_failed_push_keeps_the_folder_it_wrote(tmp_path, mrpc):
    """The upload after the folder was written failed (no Hub answering here) and the run's clean-up
    deleted the whole new folder it had just written ("wrote out", then no out)."""
    out = tmp_path / "out"
    env = {**os.environ, "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "http://127.0.0.1:9", "HF_TOKEN": "hf_x"}
    env |= {"HF_HOME": str(tmp_path / "hf-home"), "PARAAMR_HUB_TIMEOUT": "5"}
    argv = ["augment", "--dataset", str(mrpc), "--method", "reda", "--n", "1", "--output", str(out)]
    proc = subprocess.run([sys.executable, "-m", "paraamr", *argv, "--push-to-hub", "me/aug"], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 1 and "upload of" in proc.stderr.splitlines()[-1], proc.stderr[-2000:]
    assert load_dataset(str(out))["train"].num_rows > 0 and (out / "README.md").is_file()
    assert not (out / ".paraamr").exists()


@pytest.mark.slow
def test_a_save_to_disk_input_folder_is_never_written_into(tmp_path):
    """A run killed mid-way left its map's Arrow files and a temporary file (3.6 times the input)
    inside the user's save_to_disk folder, for good; a run that finished, its map's file."""
    source = tmp_path / "mine"
    rows = {"text": [f"the cat sat on mat {i}" for i in range(300)], "label": [0, 1] * 150}
    Dataset.from_dict(rows).save_to_disk(str(source))
    before = sorted(p.name for p in source.iterdir())
    out = tmp_path / "out"
    argv = ["augment", "--dataset", str(source), "--method", "reda", "--n", "1", "--output", str(out)]
    killed_at("staged", argv)  # the map done, its shards staged
    assert sorted(p.name for p in source.iterdir()) == before
    assert main(argv) == 0 and sorted(p.name for p in source.iterdir()) == before
    assert load_dataset(str(out))["train"].num_rows > 300 and not (out / ".paraamr").exists()


def test_overwrite_replaces_only_an_earlier_augment_output(tmp_path, mrpc, capsys):
    out = tmp_path / "out"
    argv = ["augment", "--dataset", str(mrpc), "--method", "reda", "--n", "1", "--output", str(out)]
    assert main(argv) == 0
    (out / "notes.txt").write_text("mine\n")  # a user's file beside the output
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert main([*argv, "--overwrite"]) == 1
    assert "notes.txt" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before  # nothing touched
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "README.md").write_text("# my dataset\n")
    assert main([*argv[:-1], str(mine), "--overwrite"]) == 1
    assert "not augment's" in capsys.readouterr().err
    assert (mine / "README.md").read_text() == "# my dataset\n"
    (out / "notes.txt").unlink()
    assert main([*argv, "--overwrite", "--license", "mit"]) == 0
    assert DatasetCard.load(out / "README.md").data.license == "mit"


def test_push_to_hub_uploads_the_folder_and_load_dataset_reads_it(tmp_path, mrpc, hub, capsys):
    out = tmp_path / "out"
    argv = ["augment", "--dataset", str(mrpc), "--method", "reda", "--n", "1", "--output", str(out)]
    token = "hf_AugmentPushToken0001"
    assert main([*argv, "--push-to-hub", "org/mrpc-reda", "--token", token, "--private"]) == 0
    assert token not in "".join(capsys.readouterr())
    uploaded = hub.dataset("org/mrpc-reda").files()
    uploaded.pop(".gitattributes", None)  # the Hub's own, made with the repo
    local = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert uploaded == local
    assert 'load_dataset("org/mrpc-reda")' in uploaded["README.md"].decode()
    loaded = load_dataset("org/mrpc-reda", split="train")
    assert loaded.to_list() == load_dataset(str(out))["train"].to_list()


def test_generator_options_reach_the_run_settings():
    """--no-download / --trust-remote-code / --realizer-model go to the generator's settings."""
    from paraamr.cli import build_parser
    from paraamr.commands.augment import _generator_settings
    from paraamr.settings import split_settings

    argv = ["augment", "--dataset", "d.jsonl", "--method", "paraamr", "--generate"]
    record, run = split_settings(**_generator_settings(build_parser().parse_args(argv)))
    assert run.download and not run.trust_remote_code
    args = build_parser().parse_args([*argv, "--no-download", "--trust-remote-code", "--realizer-model", "g"])
    record, run = split_settings(**_generator_settings(args))
    assert not run.download and run.trust_remote_code and record.realizer_model == "g"


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_augment_with_one_line_and_leaves_the_output_as_it_was(tmp_path, sig, status):
    """Ctrl-C or SIGTERM while ``paraamr augment`` works (here: a second after its handlers are in
    place, while it loads or augments): one line, the signal's exit status, no traceback, the output
    not written. (A fixed second after the start was, on a loaded machine, still before them.)"""
    rows = [{"sentence1": f"The man number {i} said many things .", "sentence2": f"A dog ran {i} times ."}
            for i in range(3000)]  # fmt: skip
    data = tmp_path / "big.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = [sys.executable, "-m", "paraamr", "augment", "--dataset", str(data), "--method", "reda-ng"]
    proc = subprocess.Popen(
        [*argv, "--n", "4", "--output", str(tmp_path / "out")], stderr=subprocess.PIPE, text=True
    )
    wait_for_handlers(proc)
    time.sleep(1.0)
    proc.send_signal(sig)
    err = proc.communicate(timeout=120)[1]
    assert proc.returncode == status, err
    lines = [line for line in err.splitlines() if line.startswith("paraamr augment:")]
    assert len(lines) == 1 and lines[0].startswith(
        f"paraamr augment: {'interrupted' if status == 130 else 'terminated'}"
    )
    assert "Traceback" not in err and not (tmp_path / "out").exists()
