"""What a command shows while it works (:mod:`paraamr.progress`, :mod:`paraamr.builder.tracking`):
counts that only rise and never pass the total, a short window counted by its own rows, a bar
where the launcher's terminal is one, and ``-q`` meaning errors only."""

from __future__ import annotations

import argparse
import fcntl
import io
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import textwrap
from pathlib import Path

import pytest

from paraamr.builder.pipeline import Stats
from paraamr.builder.state import RunFolder
from paraamr.builder.tracking import RunProgress
from paraamr.progress import Progress, SharedCount, add_progress_options, quieted

SRC = str(Path(__file__).parents[1] / "src")


def test_counts_only_rise_and_stop_at_the_total():
    out = io.StringIO()
    shown = Progress("job", total=10, unit="rows", mode="log", stream=out, interval=0)
    for done in (3, 2, 12, 9):  # an estimate ahead of the work, then one behind it
        shown.update(done)
    shown.close()
    lines = out.getvalue().splitlines()
    assert [line.split()[1] for line in lines] == ["3/10", "10/10"]
    assert "ETA 0:00" in lines[-1] and "-" not in lines[-1].split("ETA")[1]


def test_a_command_that_fails_before_any_work_leaves_its_error_alone():
    """Before: 'export simcse: 0 pairs, 0.0 pairs/s' above the one-line error of a bad input."""
    logs = []
    for work in (None, 2):
        out = io.StringIO()
        with pytest.raises(ValueError), Progress("job", unit="pairs", mode="log", stream=out) as shown:
            if work is not None:
                shown.update(work)
            raise ValueError("bad input")
        logs.append(out.getvalue())
    assert logs[0] == "" and logs[1].startswith("job: 2 pairs")  # how far it got, when it got anywhere


def test_a_short_window_counts_its_own_rows(tmp_path):
    """100 rows in flight of a --window of 256, two model stages: the batches move the count up
    to the rows taken, never to the window's size (the old count said 128 half-way)."""
    folder = RunFolder(tmp_path / "out")
    folder.count.folder.mkdir(parents=True)
    stages = ["parse", "realize"]
    run = RunProgress(folder.count, desc="gen", mode="none", main=True, window=256, stages=stages, total=100)
    rows = list(run.taken(range(100)))
    seen = []
    for stage in ("parse", "realize"):
        for _ in range(4):
            run.on_batch(stage, 25, 100)
            seen.append(run.now())
    run.on_batch("similarity", 100, 100)  # a stage the share does not count
    assert len(rows) == 100 and seen == [12.5, 25.0, 37.5, 50.0, 62.5, 75.0, 87.5, 100.0]
    run.window_done(100, Stats(inputs=100))
    assert run.now() == 100 == folder.count.sum()["done"]
    run.close()


def test_a_shared_count_sums_the_runs_files_written_at_most_every_interval(tmp_path):
    """Each process's file holds its last written counts; the sum takes the run's files only (an
    other shard's file beside them is not counted), ``clear`` removes them and a killed writer's
    temporary file, and a folder removed at the end of the run is not made again."""
    names = ["00000-of-00002", "00001-of-00002"]
    main, other = (SharedCount(tmp_path, name, names=names, every=3600) for name in names)
    (tmp_path / "progress-s00001-of-00003.00000-of-00001.json").write_text('{"done": 50}')
    other.save(4, failures=1)  # the first save is written
    other.save(6, failures=1)  # within the interval: kept, not written
    main.save(3, failures=0)
    assert main.sum() == {"done": 7, "failures": 1} and other.sum() == {"done": 9, "failures": 1}
    other.save(6, failures=2, now=True)
    assert main.sum() == {"done": 9, "failures": 2}
    (tmp_path / ".progress-00001-of-00002.json.x1.tmp").write_text("{")  # a writer killed mid-write
    main.clear()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["progress-s00001-of-00003.00000-of-00001.json"]
    gone = tmp_path / "gone"
    SharedCount(gone, "a").save(1, now=True)
    assert not gone.exists()


def test_a_damaged_count_file_adds_nothing(tmp_path):
    """A file that is not counts (cut short, not an object, a value not a number) is left out whole:
    none of its keys is added, also those before the bad one."""
    names = ["a", "b"]
    main = SharedCount(tmp_path, "a", names=names)
    main.save(3, failures=1, now=True)
    for text in ('{"done": 5, "failures": "x"}', '{"done": 5', "[1]", '{"done": [5]}'):
        (tmp_path / "progress-b.json").write_text(text)
        assert main.sum() == {"done": 3, "failures": 1}, text


def _mode_under_a_launcher(stderr) -> str:
    """``progress_mode("auto")`` of a child whose stderr is a pipe its launcher reads (as
    ``accelerate launch`` does), the launcher's stderr being ``stderr``."""
    child = "from paraamr.progress import progress_mode; print(progress_mode('auto'))"
    launcher = textwrap.dedent(f"""
        import subprocess, sys
        done = subprocess.run([sys.executable, "-c", {child!r}], capture_output=True, text=True)
        print(done.stdout.strip() or done.stderr)
    """)
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.run(
        [sys.executable, "-c", launcher],
        stderr=stderr,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        timeout=120,
    )
    return proc.stdout.strip()


def test_a_bar_where_the_launchers_terminal_is_one(tmp_path):
    main, terminal = pty.openpty()
    try:
        assert _mode_under_a_launcher(terminal) == "bar"
    finally:
        os.close(main)
        os.close(terminal)
    with open(tmp_path / "log.txt", "w") as log:
        assert _mode_under_a_launcher(log) == "log"


def test_quiet_means_errors_only(tmp_path):
    """``-q`` on a command without progress options of its own: nothing on success, the one-line
    error on failure; a command whose output is its result keeps it."""
    env = {**os.environ, "PYTHONPATH": SRC}

    def paraamr(*args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "paraamr", *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)

    release = Path(__file__).parent / "dataset" / "data" / "release_sample.jsonl"
    done = paraamr("convert", str(release), "out", "-q")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    again = paraamr("-q", "convert", str(release), "out")  # before the command too (before: refused)
    assert again.returncode == 1 and again.stdout == "" and len(again.stderr.splitlines()) == 1
    stats = paraamr("stats", "out", "--json", "-q")
    assert stats.returncode == 0 and stats.stderr == "" and '"instances": 6' in stats.stdout


def test_quiet_with_no_progress_is_allowed_and_other_progress_options_still_exclude_each_other():
    """``-q --no-progress`` say the same (before: "argument -q/--quiet: not allowed with argument
    --no-progress"); ``-q`` hides progress whatever ``--progress`` says; ``--progress bar
    --no-progress`` still contradict each other."""
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_progress_options(parser)
    args = parser.parse_args(["-q", "--no-progress"])
    assert (args.quiet, args.progress) == (True, "none")
    args = parser.parse_args(["--progress", "bar", "-q"])
    with quieted(args):
        assert args.progress == "none"
    with pytest.raises(argparse.ArgumentError, match="not allowed with"):
        parser.parse_args(["--progress", "bar", "--no-progress"])


def _on_a_terminal(argv: list[str], cwd: Path) -> tuple[str, str]:
    """``paraamr ARGV``'s stdout (a pipe) and what its terminal shows (stderr on a pty)."""
    main, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))  # a window's size
    env = {**os.environ, "PYTHONPATH": SRC}
    cmd = [sys.executable, "-m", "paraamr", *argv]
    shown = b""
    try:
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=terminal, cwd=cwd, env=env) as proc:
            os.close(terminal)
            terminal = None
            while True:  # read as it comes: a full terminal buffer would stop the command
                try:
                    chunk = os.read(main, 4096)
                except OSError:  # EIO: the command has ended and closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            out = proc.stdout.read().decode()
            assert proc.wait(timeout=120) == 0, shown.decode(errors="replace")
    finally:
        os.close(main)
        if terminal is not None:
            os.close(terminal)
    return out, shown.decode(errors="replace")


@pytest.mark.slow
def test_quality_score_shows_its_pairs_on_a_terminal_and_lines_elsewhere(tmp_path):
    """Before: minutes of scoring without a sign of life. A bar on a terminal counts the pairs; a log
    gets lines; stdout (the scored rows) is the same either way, so a pipe still reads JSON lines."""
    texts = ["The dog ran.", "Anna left home.", "It rained all day.", "We won.", "The shop is open."]
    rows = [{"text": t, "para_text": t.replace(".", " today."), "label": i % 2} for i, t in enumerate(texts)]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["quality", "score", "--model", "all-MiniLM-L6-v2", "--input", "pairs.jsonl", "--batch-size", "1"]
    out, terminal = _on_a_terminal(argv, tmp_path)
    assert "loading models: quality all-MiniLM-L6-v2" in terminal
    assert "quality score (scoring):  80%" in terminal and "| 4/5 [" in terminal  # 4 batches at a time
    assert "quality score: 100%" in terminal and "| 5/5 [" in terminal
    env = {**os.environ, "PYTHONPATH": SRC}
    cmd = [sys.executable, "-m", "paraamr", *argv]
    logged = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert logged.returncode == 0 and logged.stdout == out
    assert [json.loads(line)["text"] for line in out.splitlines()] == texts
    lines = logged.stderr.splitlines()
    assert lines[-2].startswith("quality score: 5/5 pairs (100%)")  # then the figures
    assert json.loads(lines[-1])["signature"].startswith("quality|model:all-MiniLM-L6-v2")


@pytest.mark.slow
def test_augment_generate_shows_the_sources_it_generates_for(tmp_path, tiny_models, capsys):
    """Before: ``augment --generate`` showed nothing while the generator ran (the models loading,
    then every source through three models). Now its own display, as ``--progress`` says; stdout
    is the same with or without it."""
    from tinyargs import model_args

    from paraamr.cli import main as paraamr

    data = tmp_path / "rte.csv"
    data.write_text("premise,hypothesis,label\nThe cat sat on the mat.,A cat sat.,0\nHe left.,He went.,1\n")
    argv = ["augment", "--dataset", str(data), "--method", "paraamr", "--generate", *model_args(tiny_models)]
    seen = {}
    for mode in ("bar", "log", "none"):
        out = tmp_path / mode
        assert paraamr([*argv, "--output", str(out), "--progress", mode]) == 0
        printed = capsys.readouterr()
        seen[mode] = (printed.out.replace(str(out), "OUT"), printed.err)
    assert seen["bar"][0] == seen["log"][0] == seen["none"][0]
    assert "augment: generating" in seen["bar"][1] and "| 4/4 [" in seen["bar"][1]
    logged = [line for line in seen["log"][1].splitlines() if line.startswith("augment: generating: ")]
    assert logged[0].startswith("augment: generating: loading models: parser parser")
    assert logged[-1].startswith("augment: generating: 4/4 src (100%)")
    assert "generating" not in seen["none"][1]


def test_quiet_output_gives_the_libraries_bars_back(monkeypatch):
    """``-q`` silences datasets' and huggingface_hub's bars for its block only: an API user or a
    later command in the same process has them again (before: off for good, and datasets warned
    'Cannot enable progress bars' on enable_progress_bars())."""
    import os
    import warnings

    import datasets
    from huggingface_hub.utils import are_progress_bars_disabled, enable_progress_bars

    from paraamr.progress import quiet_output

    monkeypatch.delenv("HF_DATASETS_DISABLE_PROGRESS_BARS", raising=False)
    datasets.enable_progress_bars()  # as a fresh process has them, whatever ran before here
    enable_progress_bars()
    with quiet_output():
        assert not datasets.is_progress_bar_enabled() and are_progress_bars_disabled()
    assert datasets.is_progress_bar_enabled() and not are_progress_bars_disabled()
    assert "HF_DATASETS_DISABLE_PROGRESS_BARS" not in os.environ
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        datasets.enable_progress_bars()
