"""The one error reporter (paraamr.errors, paraamr.cli): each kind of error becomes one line naming
the input, with the documented exit status; tokens never printed; --debug shows the traceback."""

from __future__ import annotations

import csv
import errno
import gzip
import io
import json
import os
import subprocess
import sys
import zipfile
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from hubserver import serving

from paraamr import report as reporter
from paraamr.cli import main
from paraamr.errors import InputError, UsageError
from paraamr.report import describe, redact, report, run_command


def raised(call):
    try:
        call()
    except BaseException as err:  # the error under test
        return err
    raise AssertionError("no error")


def test_os_errors_name_the_path_and_the_problem(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    cases = [
        (lambda: (tmp_path / "missing.txt").read_bytes(), "missing.txt: no such file or directory"),
        (lambda: tmp_path.read_bytes(), f"{tmp_path}: is a folder, not a file"),
        (lambda: (afile / "under").read_bytes(), "afile/under: a part of the path is a file, not a folder"),
        (lambda: os.mkdir(afile), "afile: already exists"),
    ]
    for call, expected in cases:
        message, status = describe(raised(call))
        assert message.endswith(expected) and status == 1, message
    for code, words in ((errno.ENOSPC, "no space left on device"), (errno.EROFS, "read-only file system")):
        message, _ = describe(OSError(code, os.strerror(code), "/data/out.parquet"))
        assert message == f"/data/out.parquet: {words}"
    assert describe(PermissionError(errno.EACCES, "Permission denied", "/x"))[0] == "/x: permission denied"


def test_errors_about_file_contents_name_the_input():
    inputs = ["corpus.jsonl.gz"]
    truncated = gzip.compress(b"x" * 10000)[:-20]
    message, _ = describe(raised(lambda: gzip.decompress(truncated)), inputs)
    assert message.startswith("corpus.jsonl.gz: truncated file")
    message, _ = describe(raised(lambda: zipfile.ZipFile(io.BytesIO(b"PK\x03\x04junk"))), ["a.zip"])
    assert message.startswith("a.zip: not a valid zip archive")
    message, _ = describe(raised(lambda: json.loads('{"a": 1')), ["rows.jsonl"])
    assert message == "rows.jsonl: invalid JSON at line 1, column 8: Expecting ',' delimiter"
    big = io.StringIO('"' + "x" * (csv.field_size_limit() + 1) + '"\n')
    message, _ = describe(raised(lambda: list(csv.reader(big))), ["in.csv"])
    assert (
        message
        == f"in.csv: a CSV field is longer than the csv module's limit ({csv.field_size_limit()} characters)"
    )
    message, _ = describe(raised(lambda: b"ok \xff".decode()), ["in.txt"])
    assert message == "in.txt: not valid UTF-8 (byte 0xff at offset 3)"


def test_pyarrow_and_datasets_errors():
    import pyarrow as pa
    import pyarrow.parquet as pq

    err = raised(lambda: pq.read_table(pa.BufferReader(b"garbage garbage")))
    message, status = describe(err, ["in.parquet"])
    assert message.startswith("in.parquet: ") and "Parquet" in message and status == 1
    from datasets.exceptions import DatasetGenerationError

    try:
        try:
            b"\xff".decode()
        except UnicodeDecodeError as inner:
            raise DatasetGenerationError("An error occurred while generating the dataset") from inner
    except DatasetGenerationError as wrapper:
        message, _ = describe(wrapper, ["in.csv"])
    assert message == "in.csv: not valid UTF-8 (byte 0xff at offset 0)"  # the cause, not the wrapper


def test_statuses_and_internal_errors():
    assert describe(InputError("in.txt: empty")) == ("in.txt: empty", 1)
    assert describe(UsageError("--n must be positive")) == ("--n must be positive", 2)
    assert describe(KeyboardInterrupt()) == ("interrupted", 130)
    message, status = describe(ZeroDivisionError("division by zero"))
    assert (
        message == "internal error: ZeroDivisionError: division by zero (run with --debug for the traceback)"
    )
    assert status == 1
    message, _ = describe(ValueError("x" * 100_000))
    assert len(message) <= reporter.MAX_MESSAGE and "\n" not in message  # a 100k-character value stays short
    assert describe(InputError("line one\nline two"))[0] == "line one line two"


def test_a_signal_wrapped_by_python_is_still_the_signal():
    """A signal handler's exception raised in ``__set_name__`` (a class defined while a library
    imports) comes out of the class statement as a RuntimeError caused by it (Python 3.11): it is
    reported as the signal, with its exit status, not as an internal error."""
    import signal

    from paraamr.signals import Interrupted

    class Field:
        def __set_name__(self, owner, name):
            raise Interrupted(signal.SIGTERM)

    def define():
        class Endpoint:
            name = Field()

    assert describe(raised(define)) == ("terminated (SIGTERM)", 143)
    wrapped = raised(lambda: _raise_from(RuntimeError("while importing"), KeyboardInterrupt()))
    assert describe(wrapped) == ("interrupted", 130)


def _raise_from(err: BaseException, cause: BaseException):
    raise err from cause


@pytest.mark.parametrize(
    ("raised_in_main", "status", "line"),
    [
        ("RuntimeError('wrapped') from Interrupted(signal.SIGINT)", 130, "paraamr demo: interrupted"),
        ("ValueError('bad')", 1, "paraamr demo: internal error: ValueError: bad (run with --debug for the traceback)"),  # noqa: E501
    ],
)
def test_what_a_process_raises_before_its_command_runs_is_one_line(raised_in_main, status, line):
    """``run_process`` reports whatever its ``main`` raises (while the options are parsed, before
    the command's own reporter runs) as one line, never a traceback: a Ctrl-C that lands in a
    library's import inside an option's type came out as a traceback and status 1."""
    code = (
        "import signal\nfrom paraamr.report import run_process\nfrom paraamr.signals import Interrupted\n"
        f"def main():\n    raise {raised_in_main}\nrun_process(main, 'demo')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stderr) == (status, line + "\n")


def test_the_token_huggingface_hub_stored_is_redacted_too(monkeypatch, tmp_path):
    """A token saved by ``hf auth login`` without the ``hf_`` prefix (no pattern finds it), echoed
    by a server's 401, was printed."""
    from huggingface_hub import constants

    (tmp_path / "token").write_text("PlainSecretNoPrefix987654")
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "token"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    assert redact("401: Invalid token PlainSecretNoPrefix987654") == "401: Invalid token ***"


def test_redaction(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "plain-secret-value")
    text = (
        "401: token hf_AbCdEfGhIjKlMnOp rejected; headers {'Authorization': 'Bearer abc.def'}; "
        "authorization: Basic dXNlcjpwYXNz; url ?token=xyz123&x=1; env plain-secret-value; mine s3cret-tok"
    )
    out = redact(text, secrets=["s3cret-tok"])
    for secret in (
        "hf_AbCdEfGhIjKlMnOp",
        "abc.def",
        "dXNlcjpwYXNz",
        "xyz123",
        "plain-secret-value",
        "s3cret-tok",
    ):
        assert secret not in out, out
    assert "'Authorization': 'Bearer ***'" in out and "&x=1" in out


def test_report_prints_one_line_and_debug_the_traceback(capsys):
    err = raised(lambda: Path("/no/such/dir/file.txt").read_bytes())
    assert report("stats", err) == 1
    assert capsys.readouterr().err == "paraamr stats: /no/such/dir/file.txt: no such file or directory\n"
    assert report("stats", err, debug=True) == 1
    text = capsys.readouterr().err
    assert text.startswith("Traceback (most recent call last):")
    assert text.endswith("paraamr stats: /no/such/dir/file.txt: no such file or directory\n")


def test_run_command_passes_statuses_and_system_exit(capsys):
    assert run_command("x", lambda: None) == 0
    assert run_command("x", lambda: 3) == 3
    with pytest.raises(SystemExit):
        run_command("x", sys.exit, 2)

    def interrupted():
        raise KeyboardInterrupt

    assert run_command("x", interrupted) == 130
    assert capsys.readouterr().err == "paraamr x: interrupted\n"


def test_cli_usage_errors_are_one_line(capsys):
    for argv, words in (
        (["stats"], "paraamr stats: the following arguments are required: PATH"),
        (["models", "download"], "paraamr models download: the following arguments are required: name"),
        (["stats", "x", "--bogus"], "paraamr stats: unrecognized arguments: --bogus"),
        (["nope"], "paraamr: argument COMMAND: invalid choice: 'nope'"),
    ):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(words), err


def test_cli_debug_anywhere_shows_the_traceback(tmp_path, capsys):
    argv = ["augment", "--dataset", str(tmp_path / "missing.jsonl"), "--method", "reda"]
    assert main([*argv, "--debug"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and err.rstrip().splitlines()[-1].startswith("paraamr augment: ")
    assert main(["--debug", *argv]) == 1
    assert "Traceback" in capsys.readouterr().err
    assert main(argv) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_a_command_that_does_not_import_leaves_the_others_working(monkeypatch, capsys):
    import paraamr.commands.stats as stats

    def broken(parser):
        raise ImportError("cannot import name 'thing' from 'paraamr.somewhere'")

    monkeypatch.setattr(stats, "add_arguments", broken)
    assert main(["stats", "anything", "--no-plots"]) == 1
    assert capsys.readouterr().err == (
        "paraamr stats: internal error: ImportError: cannot import name 'thing' from 'paraamr.somewhere' "
        "(run with --debug for the traceback)\n"
    )
    assert main(["refocus", os.devnull]) == 0  # another command still runs


class _Echo(BaseHTTPRequestHandler):
    """A server whose errors echo the request's headers, Authorization included."""

    def _echo(self):
        body = f"Internal error. Request headers were: {dict(self.headers)}".encode()
        self.send_response(500)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_HEAD = do_PUT = _echo

    def log_message(self, *args):
        pass


@pytest.fixture
def echo_server():
    with serving(_Echo) as url:
        yield url


def test_a_server_echoing_the_token_does_not_print_it(tmp_path, echo_server):
    """Issue 14 item 8: an endpoint echoing the Authorization header printed the token."""
    folder = tmp_path / "folder"
    (folder / "data" / "default").mkdir(parents=True)
    (folder / "README.md").write_text("---\nlicense: mit\n---\n")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": ["a"]}), folder / "data" / "default" / "train-00000-of-00001.parquet")
    env = {**os.environ, "HF_ENDPOINT": echo_server, "HF_HUB_OFFLINE": "0", "HF_HUB_ETAG_TIMEOUT": "5"}
    for token, extra_env in (("not-an-hf-format-token-42", {}), ("hf_EchoedTokenValue1234", {})):
        done = subprocess.run(
            [sys.executable, "-m", "paraamr", "push", "org/name", str(folder), "--token", token],
            env={**env, **extra_env},
            capture_output=True,
            text=True,
            timeout=120,
        )
        shown = done.stdout + done.stderr
        assert done.returncode == 1, shown
        assert token not in shown and "Traceback" not in shown, shown
        assert shown.strip().splitlines()[-1].startswith("paraamr push: "), shown
