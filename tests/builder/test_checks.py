"""What a run checks before anything heavy, and what it refuses: typo'd inputs leave nothing behind
and are reported once (also under two processes), the folder lock, the input's identity on resume,
``--overwrite`` touching only the project's own files, the launch trap of ``accelerate launch
--cpu``, the progress bar's total, input rows that are failures, a summary without local paths,
``--trust-remote-code`` reaching the model check, and ``--overwrite`` removing the earlier run's
Table-2 row and plots."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from entries import generate as main
from tinyargs import model_args

from paraamr.builder import readers
from paraamr.builder.checks import check_run
from paraamr.builder.state import RunFolder
from paraamr.errors import ParaAMRError
from paraamr.records import text_id
from paraamr.settings import RecordSettings

ROOT = Path(__file__).resolve().parents[2]
SENTENCES = [f"the man said {i} things to the woman ." for i in range(6)]
#: AMR input for the runs that load models: no parser to run, so they take seconds.
GRAPHS = [
    f"# ::id g{i}\n# ::snt {s}\n(s / say-01 :ARG0 (m / man) :ARG1 (t / thing :quant {i}) :ARG2 (w / woman))"
    for i, s in enumerate(SENTENCES)
]


def _write_graphs(path: Path, graphs: list[str] = GRAPHS) -> Path:
    path.write_text("\n\n".join(graphs) + "\n")
    return path


def _models(tiny: dict) -> list[str]:
    return [*model_args(tiny), "--window", "2"]


def _heavy(stderr: str) -> set[str]:
    mods = {
        line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")
    }
    return mods & {"torch", "transformers", "amrlib", "accelerate", "datasets"}


def _messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("paraamr generate")]


@pytest.fixture
def sentences(tmp_path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text("\n".join(SENTENCES) + "\n")
    return path


@pytest.fixture
def graphs(tmp_path) -> Path:
    return _write_graphs(tmp_path / "in.amr")


@pytest.fixture(scope="module")
def small_run(tiny_models, tmp_path_factory) -> tuple[Path, Path, str]:
    """A finished one-process run on six graphs: its input file, folder and what it printed."""
    import contextlib
    import io

    base = tmp_path_factory.mktemp("small")
    source = _write_graphs(base / "in.amr")
    out = base / "out"
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert main(["--amr-input", str(source), "--output", str(out), *_models(tiny_models)]) == 0
    return source, out, err.getvalue()


def test_a_typo_in_input_is_refused_before_models_load_and_leaves_nothing(tiny_models, tmp_path):
    out = tmp_path / "out"
    argv = ["generate.py", "--input", str(tmp_path / "typo.txt"), "--output", str(out), *_models(tiny_models)]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert _messages(proc.stderr) == [f"paraamr generate: {tmp_path / 'typo.txt'}: no such file"]
    assert _heavy(proc.stderr) == set() and not out.exists()


def test_three_models_that_cannot_be_fetched_are_one_whole_line_with_the_way_out(tmp_path):
    """The README's first command on a machine with no route to GitHub or the Hub: the three
    models named, the first one's reason, and what to do, in one line under the reporter's 600
    characters (before: three URLs and reasons, cut off with '…' before the Hub's)."""
    refused = "http://127.0.0.1:9"  # nothing listens there: each fetch is refused at once
    env = {**os.environ, "PARAAMR_RELEASE_URL": refused, "HF_ENDPOINT": refused, "HF_HUB_OFFLINE": "0"}
    env |= {"PARAAMR_CACHE": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf")}
    (tmp_path / "in.txt").write_text("A sentence.\n")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "generate.py"), "--input", "in.txt", "--output", "out"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    lines = _messages(proc.stderr)
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert lines[0].startswith(
        "paraamr generate: models missing: parser 'parse_xfm_bart_large', realizer 'generate_t5wtense', "
        "lm 'gpt2'; the first: parser model 'parse_xfm_bart_large' could not be fetched"
    ), lines[0]
    assert lines[0].endswith("or give local folders (--parser-model, --realizer-model, --lm-model)"), lines[0]
    assert not (tmp_path / "out").exists()


def test_two_processes_print_the_verdict_once_and_write_nothing(tiny_models, tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    cmd += [str(ROOT / "generate.py"), "--input", str(tmp_path / "typo.txt"), "--output", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(cmd + _models(tiny_models), capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode != 0
    assert len(_messages(proc.stderr)) == 1 and "typo.txt: no such file" in proc.stderr
    assert "src/paraamr" not in proc.stderr and not out.exists()  # (torchrun's own traceback aside)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-chars", "-1"], "argument --max-chars: must be an integer > 0, got -1"),
        (["--window", "0"], "argument --window: must be an integer > 0, got 0"),
        (["--max-perplexity", "nan"], "must be a finite number >= 0 or 'none' (no limit), got nan"),
        (["--foci", "two"], "--foci must be 'all' or a positive integer"),
        (["--min-similarity", "0.5"], "--min-similarity needs --similarity-model"),
        (["--token", "hf_x"], "--private, --revision and --token go with --push-to-hub"),
        (["--push-to-hub", "org/bad name"], "--push-to-hub 'org/bad name': not a repo id"),
        # before: "the Hub could not be asked now (LocalProtocolError: Illegal header value b'Bearer ')",
        # then the run, and the same error at its upload
        (["--push-to-hub", "org/x", "--token", ""], "--token is empty (leave it out to use HF_TOKEN"),
    ],
)
def test_option_values_are_usage_errors(sentences, tmp_path, capsys, argv, message):
    try:
        code = main(["--input", str(sentences), "--output", str(tmp_path / "out"), *argv])
    except SystemExit as stop:  # refused by the option's type, as argparse refuses
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "hf_x" not in err
    assert not (tmp_path / "out").exists()


def test_jsonl_without_the_text_column_is_refused_up_front(tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    path.write_text('{"sentence": "Hi."}\n{"sentence": "Yo."}\n')
    assert main(["--input", str(path), "--output", str(tmp_path / "out")]) == 1
    assert "no column 'text' in the first object (keys: ['sentence'])" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_second_run_on_a_locked_folder_refuses_naming_the_holder(small_run, tiny_models, capsys):
    source, out, _ = small_run
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from paraamr.builder.state import RunFolder; "
            f"f = RunFolder({str(out)!r}, rank=1, num_processes=2); f.lock(); print('locked', flush=True); "
            "time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        t0 = time.monotonic()
        assert main(["--amr-input", str(source), "--output", str(out), *_models(tiny_models)]) == 1
        assert time.monotonic() - t0 < 30  # at once: no model was loaded
        err = capsys.readouterr().err
        assert f"another run is writing this folder (pid {holder.pid} on host " in err
    finally:
        holder.kill()
        holder.wait()
    # the OS released the killed holder's lock: the same command goes on (the run is complete)
    assert (
        main(["--amr-input", str(source), "--output", str(out), "--no-progress", *_models(tiny_models)]) == 0
    )


def test_a_changed_input_is_refused_on_resume(tiny_models, graphs, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["--amr-input", str(graphs), "--output", str(out), "--no-progress", *_models(tiny_models)]
    assert main(args) == 0
    _write_graphs(graphs, GRAPHS[::-1])  # in place: same size, same graphs, another order
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "the input changed: its content changed (sha1)" in err and "--overwrite" in err
    _write_graphs(graphs)  # the same content again (with a new mtime): the run goes on
    assert main(args) == 0


def test_a_model_whose_files_changed_is_refused_on_resume(tiny_models, graphs, tmp_path, capsys):
    """A run resumed with a model folder of the same name but other files (retrained in place) is
    refused, naming the model; the same files again (new mtimes) or in another place (a node's own
    Hub cache) are the same model."""
    lm = tmp_path / "lm"
    shutil.copytree(tiny_models["lm"], lm)
    out = tmp_path / "out"
    args = [
        "--amr-input",
        str(graphs),
        "--output",
        str(out),
        "--no-progress",
        *_models({**tiny_models, "lm": lm}),
    ]
    assert main(args) == 0
    saved = json.loads((out / ".paraamr" / "settings.json").read_text())["models"]
    assert set(saved) == {"realizer", "lm"}  # AMR input: no parser
    config = (lm / "config.json").read_text()
    (lm / "config.json").write_text(config.replace("{", '{"retrained": true,', 1))
    for dry in ([], ["--dry-run"]):  # the dry run refuses it as the run does
        assert main([*args, *dry]) == 1
        err = capsys.readouterr().err
        assert f"the lm model {str(lm)!r} has other files than when the run started" in err
        assert "--overwrite" in err
    (lm / "config.json").write_text(config)  # the same bytes again, a new mtime: the same model
    assert main(args) == 0
    moved = tmp_path / "elsewhere" / "lm"
    shutil.copytree(lm, moved)
    shutil.rmtree(lm)
    moved.rename(lm)  # the same files, new inodes and times
    assert main(args) == 0


def test_stdin_resumed_with_other_lines_is_refused(tiny_models, tmp_path, monkeypatch, capsys):
    """stdin has no identity before it is read, so a run of ``--input -`` that finds its input cut
    already reads stdin again and refuses other rows (before, they were dropped silently: the run
    "resumed" the first input and said it wrote the folder); the same lines go on."""
    out = tmp_path / "out"
    args = ["--input", "-", "--output", str(out), "--no-progress", *_models(tiny_models)]

    def run(lines: list[str]) -> int:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("\n".join(lines).encode())))
        return main(args)

    assert run(SENTENCES[:2]) == 0
    assert run(SENTENCES[2:5]) == 1
    err = capsys.readouterr().err
    assert f"stdin: not the input the run in {out} started with (3 rows now, 2 then)" in err
    assert run(SENTENCES[:2]) == 0
    from datasets import load_dataset

    texts = list(load_dataset(str(out), split="train")["text"])
    failures = [json.loads(line) for f in (out / "failures").glob("*.jsonl") for line in f.open()]
    assert sorted(texts + [f["text"] for f in failures]) == sorted(SENTENCES[:2])


def test_overwrite_deletes_only_the_projects_files(small_run, tiny_models, tmp_path, capsys):
    import shutil

    source, out, _ = small_run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / "notes.txt").write_text("mine")
    (copy / "data" / "default" / "mine.csv").write_text("mine")
    before = sorted(p.relative_to(copy) for p in copy.rglob("*.parquet"))
    args = ["--amr-input", str(source), "--output", str(copy), "--no-progress", *_models(tiny_models)]
    assert main([*args, "--overwrite", "--foci", "1"]) == 0
    assert (copy / "notes.txt").read_text() == "mine" and (
        copy / "data/default/mine.csv"
    ).read_text() == "mine"
    assert sorted(p.relative_to(copy) for p in copy.rglob("*.parquet")) == before  # rewritten, same names
    assert json.loads((copy / "summary.json").read_text())["settings"]["foci"] == 1


def test_overwrite_refuses_a_folder_that_never_held_a_run(sentences, tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "README.md").write_text("my own readme")
    assert main(["--input", str(sentences), "--output", str(folder), "--overwrite"]) == 1
    assert (
        "holds no paraamr run; refusing to delete its files even with --overwrite" in capsys.readouterr().err
    )
    assert (folder / "README.md").read_text() == "my own readme" and len(list(folder.iterdir())) == 1


def test_a_setting_that_names_a_folder_here_stays_a_name(tiny_models, tmp_path, monkeypatch):
    """Every string setting that named something in the working folder became a path in the summary
    and the card: ``--split train`` beside a folder ``train`` was ``"../here/train"``, and the card
    said the train split was empty; ``--linearization penman`` beside ``penman`` likewise."""
    here = tmp_path / "here"
    for name in ("train", "penman"):
        (here / name).mkdir(parents=True)
    monkeypatch.chdir(here)
    source, out = _write_graphs(tmp_path / "in.amr"), tmp_path / "out"
    argv = ["--amr-input", str(source), "--output", str(out), "--linearization", "penman"]
    with contextlib.redirect_stderr(io.StringIO()):
        assert main([*argv, *_models(tiny_models)]) == 0
    settings = json.loads((out / "summary.json").read_text())["settings"]
    assert (settings["split"], settings["linearization"]) == ("train", "penman")
    assert settings["amr_input"] == "../in.amr"  # a path: relative to the run folder
    assert "| split | `train` |" in (out / "README.md").read_text()


def test_summary_has_no_absolute_local_paths(small_run, tiny_models):
    _, out, _ = small_run
    text = (out / "summary.json").read_text()
    assert str(out.parent) not in text and str(tiny_models["lm"]) not in text
    settings = json.loads(text)["settings"]
    assert settings["amr_input"] == "../in.amr"  # relative to the run folder
    assert (out / settings["lm_model"]).resolve() == Path(tiny_models["lm"]).resolve()
    assert settings["max_perplexity"] is None and settings["split"] == "train"  # names and values as given


def test_amr_input_failures_invalid_utf8_and_junk_after_the_graph(tiny_models, tmp_path):
    graphs = tmp_path / "g.amr"
    graphs.write_bytes(
        b"# ::id ok\n# ::snt The boy wants .\n(w / want-01 :ARG0 (b / boy))\n\n"
        b"# ::id bad-utf8\n# ::snt caf\xe9\n(c / cafe)\n\n"
        b"# ::id junk\n# ::snt x\n(x / y))) extra )\n\n"
        b"# ::id comment\n# ::snt x\n(x / y) # a comment after the graph is none of its text\n"
        b"# ::id no-blank-line\n# ::snt z\n(z / zeta)\n\n"  # a graph of its own, as penman reads it
        b"# ::snt\n(e / epsilon)\n\n# ::snt\n(f / phi)\n"  # an empty ::snt: ids of their graphs, not one id
    )
    out = tmp_path / "out"
    argv = ["--amr-input", str(graphs), "--output", str(out), "--no-progress", *_models(tiny_models)]
    assert main(argv) == 0
    failures = {
        row["id"]: row for f in (out / "failures").glob("*.jsonl") for row in map(json.loads, f.open())
    }
    assert set(failures) == {"bad-utf8", "junk"}
    assert "invalid UTF-8" in failures["bad-utf8"]["reason"] and failures["bad-utf8"]["raw_b64"]
    junk = f"{graphs.name}:graph 3 (id junk): not valid PENMAN: text after the graph: ')) extra )'"
    assert failures["junk"]["reason"] == junk
    shards = (out / "data" / "default").glob("*.parquet")
    ids = {row["id"] for f in shards for row in pq.read_table(f).to_pylist()}
    assert ids == {"ok", "comment", "no-blank-line", text_id("(e / epsilon)"), text_id("(f / phi)")}


def test_progress_bar_has_a_total_percent_and_counts_every_row(small_run):
    err = small_run[2]
    assert "100%" in err and f"{len(GRAPHS)}/{len(GRAPHS)}" in err
    assert "Loading weights" not in err  # library bars silenced


@pytest.mark.parametrize(
    ("name", "data", "rows"),
    [
        ("a.txt", b"x\ny\n\nz", 4),
        ("a.jsonl", b'{"text": "a"}\n{"text": "b"}\n', 2),
        ("a.csv", b'text\n"multi\nline"\nb\n', 2),
        ("a.json", b'["a", "b", "c"]', 3),
    ],
)
def test_count_rows_equals_the_rows_read(tmp_path, name, data, rows):
    path = tmp_path / name
    path.write_bytes(data)
    assert readers.count_rows(path) == rows == sum(1 for _ in readers.read_input(path))


def test_accelerate_launch_cpu_with_two_processes_is_not_silent(sentences, tmp_path):
    """The real launcher: ``accelerate launch --cpu --num_processes 2`` starts one process."""
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--cpu", "--num_processes", "2"]
    cmd += ["--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no"]
    cmd += [
        str(ROOT / "generate.py"),
        "--dry-run",
        "--input",
        str(sentences),
        "--output",
        str(tmp_path / "o"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "processes: 1" in proc.stdout
    assert (
        "accelerate launch started ONE process" in proc.stderr and "torchrun --nproc_per_node" in proc.stderr
    )


def test_processes_on_one_cpu_share_its_cores():
    """Each of N processes on the CPU keeps at most cores / N torch threads (MKL's too: an inherited
    MKL_NUM_THREADS made 2 processes on 2 cores 3.5x slower); fewer threads asked for stay."""
    import torch

    from paraamr.tasks import share_cores

    before, cores = torch.get_num_threads(), os.cpu_count() or 1
    try:
        torch.set_num_threads(cores)
        share_cores(cores)
        assert torch.get_num_threads() == 1
        torch.set_num_threads(1)
        share_cores(1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_run_folder_lock_is_released_when_the_process_ends(tmp_path):
    folder = RunFolder(tmp_path, rank=0, num_processes=1)
    folder.lock()
    other = RunFolder(tmp_path, rank=0, num_processes=1)
    with pytest.raises(Exception, match=f"pid {os.getpid()} on host"):
        other.check_lock()
    folder.unlock()
    other.check_lock()  # free again


def test_push_to_hub_renders_the_card_for_the_repo_and_uploads_the_folder(
    tiny_models, graphs, tmp_path, hub, capsys
):
    """Through the loopback Hub (the real huggingface_hub client): what arrives is the folder as
    written, its resume state left out, and the card's load snippets name the repo."""
    out = tmp_path / "out"
    secret = "hf_generateSECRETtoken42"
    argv = ["--amr-input", str(graphs), "--output", str(out), "--no-progress", *_models(tiny_models)]
    argv += ["--push-to-hub", "org/tiny-paraamr", "--private", "--token", secret]
    assert main(argv) == 0
    uploaded = hub.dataset("org/tiny-paraamr").files()
    uploaded.pop(".gitattributes", None)  # the Hub's own, made with the repo
    local = {
        str(p.relative_to(out)): p.read_bytes()
        for p in out.rglob("*")
        if p.is_file() and ".paraamr" not in p.parts
    }
    assert uploaded == local and any(name.startswith("data/pairs/") for name in uploaded)
    assert 'load_dataset("org/tiny-paraamr"' in uploaded["README.md"].decode()
    printed = capsys.readouterr()
    assert "pushed" in printed.err and secret not in printed.out + printed.err


@pytest.mark.parametrize(
    ("setup", "extra", "said"),
    [
        (
            lambda hub: hub.rejected_tokens.add("hf_revokedTOKEN77"),
            ["--token", "hf_revokedTOKEN77"],
            "the Hub rejects the token (401)",
        ),
        (
            lambda hub: hub.token_roles.update(hf_readTOKEN55="read"),
            ["--token", "hf_readTOKEN55"],
            "the token may only read; use a write token",
        ),
        (
            lambda hub: hub.add_dataset_repo("org/tiny-paraamr", {"a.txt": b"x"}),
            ["--private"],
            "org/tiny-paraamr: exists and is public; --private does not change that",
        ),
    ],
    ids=["rejected-token", "read-token", "private-onto-public"],
)
def test_a_push_that_cannot_succeed_is_refused_before_the_run(
    tiny_models, graphs, tmp_path, hub, capsys, setup, extra, said
):
    """Before: the whole run was made, then the upload at its end failed (a rerun pushed it)."""
    setup(hub)
    out = tmp_path / "out"
    argv = ["--amr-input", str(graphs), "--output", str(out), "--no-progress", *_models(tiny_models)]
    for dry in (["--dry-run"], []):  # a dry run says it as the run does
        assert main([*argv, "--push-to-hub", "org/tiny-paraamr", *extra, *dry]) == 1
        err = capsys.readouterr().err
        assert said in err and err.count("\n") == 1, err
        assert not list(out.glob("**/*.parquet")) and "TOKEN77" not in err and "TOKEN55" not in err
    assert not hub.requests("POST", "/commit/")


def test_a_hub_that_does_not_answer_at_the_start_only_warns(tiny_models, graphs, tmp_path, hub, capsys):
    """A compute node may have no network: the run goes on, and its end says the upload failed."""
    hub.stop()  # nothing listens there now
    out = tmp_path / "out"
    argv = ["--amr-input", str(graphs), "--output", str(out), "--no-progress", *_models(tiny_models)]
    assert main([*argv, "--push-to-hub", "org/tiny-paraamr"]) == 1
    err = capsys.readouterr().err
    assert "paraamr generate: warning: --push-to-hub org/tiny-paraamr: the Hub could not be asked now" in err
    assert list(out.glob("data/pairs/*.parquet"))  # the run was made
    assert err.rstrip().endswith(f"{out} is finished: run the same command again to upload it")


@pytest.mark.parametrize(
    ("kind", "given", "said"),
    [
        ("parser", "lm", "is not an amrlib model (no amrlib_meta.json; its config.json is a gpt2 model)"),
        ("realizer", "parser", "is an amrlib parser model, not a realizer model"),
    ],
)
def test_a_dry_run_refuses_a_model_folder_of_another_kind_as_the_run_does(
    tiny_models, sentences, tmp_path, capsys, kind, given, said
):
    """Before: the dry run printed its plan (exit 0) for a folder the run refuses at its start."""
    models = _models({**tiny_models, kind: tiny_models[given]})
    for dry in (["--dry-run"], []):
        assert main(["--input", str(sentences), "--output", str(tmp_path / "out"), *models, *dry]) == 1
        err = capsys.readouterr().err
        assert said in err and err.count("\n") == 1, err


def test_an_unknown_option_is_one_line_exit_2(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--nope"])
    err = capsys.readouterr().err
    assert (
        stop.value.code == 2
        and err == "paraamr generate: unrecognized arguments: --nope (see paraamr generate --help)\n"
    )


def test_a_model_folder_naming_foreign_code_is_refused_before_anything_loads(
    tiny_models, graphs, tmp_path, capsys
):
    import shutil

    realizer = tmp_path / "realizer"
    shutil.copytree(tiny_models["realizer"], realizer)
    meta = json.loads((realizer / "amrlib_meta.json").read_text())
    meta.update(inference_module="torch.hub", inference_class="load")
    (realizer / "amrlib_meta.json").write_text(json.dumps(meta))
    args = ["--amr-input", str(graphs), "--output", str(tmp_path / "out"), *_models(tiny_models)]
    args[args.index("--realizer-model") + 1] = str(realizer)
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "torch.hub" in err and "trust" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_the_pipeline_runs_any_stage_objects_one_batch_per_window():
    """Item 1 of issue 11: the pipeline receives its stages; each gets a window's inputs at once."""
    from paraamr.builder.pipeline import Generator, Stages
    from paraamr.failures import Failure
    from paraamr.settings import RecordSettings

    calls: dict[str, list[int]] = {"parse": [], "realize": [], "perplexity": []}

    class Parser:
        def parse(self, texts):
            calls["parse"].append(len(texts))
            return [
                Failure("parse", "no verb") if "x" in t else "(s / say-01 :ARG0 (m / man))" for t in texts
            ]

    class Realizer:
        def realize(self, graphs):
            calls["realize"].append(len(graphs))
            return [f"said by {g.split('/')[1].split()[0]} {i}" for i, g in enumerate(graphs)]

    class LM:
        def perplexity(self, texts):
            calls["perplexity"].append(len(texts))
            return [float(len(t)) for t in texts]

    gen = Generator(Stages(Realizer(), Parser(), LM()), RecordSettings(max_perplexity=None), window=3)
    records = list(gen.generate(["a man said", "x", "b man said", "c man said", "a man said"]))
    assert [r["text"] for r in records] == ["a man said", "b man said", "c man said"]
    assert [(f["text"], f["stage"], f["reason"]) for f in gen.failures] == [
        ("x", "parse", "no verb"),
        ("a man said", "input", "duplicate"),
    ]
    assert calls["parse"] == [3, 1]  # one call per window (the duplicate never reaches the parser)
    assert calls["realize"] == [2, 1]  # one re-rooted variant per graph (man), a window at once
    assert all(p["perplexity"] == len(p["para_text"]) for r in records for p in r["paraphrases"])
    with pytest.raises(ValueError, match="needs a parser stage"):
        list(Generator(Stages(Realizer()), window=2).generate(["text"]))


def _foreign_parser(tiny_models, tmp_path) -> Path:
    """The tiny parser whose ``amrlib_meta.json`` names code that is not amrlib's own."""
    folder = tmp_path / "parser"
    shutil.copytree(tiny_models["parser"], folder)
    meta_path = folder / "amrlib_meta.json"
    meta = json.loads(meta_path.read_text())
    meta["inference_module"] = "my_lab.parsers"
    meta_path.write_text(json.dumps(meta))
    return folder


def test_trust_remote_code_reaches_the_model_check(tiny_models, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text("The man spoke.\n")
    record = RecordSettings(
        input=str(text),
        parser_model=str(_foreign_parser(tiny_models, tmp_path)),
        realizer_model=str(tiny_models["realizer"]),
        lm_model=str(tiny_models["lm"]),
        max_perplexity=None,
    )
    folder = RunFolder(tmp_path / "out", rank=0, num_processes=1)
    with pytest.raises(ParaAMRError, match=r"my_lab\.parsers.*--trust-remote-code"):
        check_run(record, folder)
    saved, mode, paths = check_run(record, folder, trust_remote_code=True)  # the opt-in is honoured
    assert mode == "new" and saved["record"]["parser_model"] == record.parser_model
    assert paths.keys() == record.models().keys() and all(Path(p).is_dir() for p in paths.values())


def _run(*argv: str) -> int:
    from entries import generate as main

    with contextlib.redirect_stderr(io.StringIO()):
        return main(list(argv))


def test_overwrite_removes_the_earlier_runs_table2_row_and_plots(tiny_models, tmp_path):
    graphs = _write_graphs(tmp_path / "in.amr")
    out = tmp_path / "out"
    args = ["--amr-input", str(graphs), "--output", str(out), "--no-progress", *model_args(tiny_models)]
    assert _run(*args) == 0
    from paraamr.card import update_card_metrics

    update_card_metrics(out, {"1-BLEU": 12.34}, {"bleu": "bleu|v:1"})
    plots = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert (out / "evaluation.json").is_file() and plots
    # the new run has no record at all (every graph is refused): it fails, and leaves nothing of the
    # earlier run that would speak for it (no Table-2 row, no card, no plot)
    graphs.write_text("(s / say-01 :ARG0 (m / man)\n\n(broken\n")
    assert _run(*args, "--overwrite") == 1
    assert json.loads((out / "summary.json").read_text())["counts"]["records"] == 0
    assert not (out / "evaluation.json").exists() and not (out / "README.md").exists()
    assert not [name for name in plots if (out / "plots" / name).exists()]


def test_an_empty_input_and_a_dangling_output_link_are_refused_up_front(sentences, tmp_path, capsys):
    """An empty input ran (models loaded) to fail at the card, while --dry-run said 0 rows and exit 0;
    an output that is a link to nowhere was 'already exists'."""
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    for extra in ([], ["--dry-run"]):
        assert main(["--input", str(empty), "--output", str(tmp_path / "out"), *extra]) == 1
        assert capsys.readouterr().err == f"paraamr generate: {empty}: no input rows\n"
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere")
    assert main(["--input", str(sentences), "--output", str(link), "--dry-run"]) == 1
    said = f"paraamr generate: {link}: a symbolic link to {tmp_path / 'nowhere'}, which does not exist\n"
    assert capsys.readouterr().err == said and not (tmp_path / "out").exists()
