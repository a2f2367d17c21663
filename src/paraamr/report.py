"""The one error reporter of every entry point: any exception becomes one line on stderr.

Commands raise; they need not catch. :func:`run_command` turns any exception into ONE line on
stderr, ``paraamr <command>: <message>``, naming the input and the problem, and returns the exit
status: 1, 2 for usage errors (:class:`~paraamr.errors.UsageError`, argparse), 130 for Ctrl-C, 141
(quietly) for a closed pipe. The traceback is printed only with ``--debug`` (or
``PARAAMR_DEBUG=1``). Tokens are redacted from every printed message (:func:`redact`).

>>> from paraamr.errors import InputError
>>> describe(InputError("data.jsonl: line 3: no 'text' field"))
("data.jsonl: line 3: no 'text' field", 1)
>>> describe(FileNotFoundError(2, "No such file or directory", "in.txt"))
('in.txt: no such file or directory', 1)
>>> describe(UnicodeDecodeError("utf-8", b"ab\\xff", 2, 3, "invalid start byte"), inputs=["x.txt"])
('x.txt: not valid UTF-8 (byte 0xff at offset 2)', 1)
>>> redact("401 for Authorization: Bearer hf_abcdefghijklmnop")
'401 for Authorization: Bearer ***'
"""

from __future__ import annotations

import atexit
import contextlib
import csv
import errno
import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from paraamr.errors import DISK_ERRNOS, ParaAMRError, broken_link
from paraamr.extras import install_hint
from paraamr.signals import Interrupted, exit_with, handled, ignore_signals

__all__ = ["counted", "describe", "json_text", "reason", "redact", "report", "run_command", "run_process"]

#: Longest message printed (a 100k-character input line must not become a 100k-character error).
MAX_MESSAGE = 600


_TOKEN_PATTERNS = tuple(
    re.compile(pattern)
    for pattern in (
        r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?(?:(?:bearer|basic|token)\s+)?)[^\s,;'\"}]+",
        r"(?i)\b(bearer\s+)[^\s,;'\"}]+",
        r"()\bhf_[A-Za-z0-9]{8,}",
        r"(?i)([?&](?:token|access_token|api_key)=)[^&\s'\"]+",
        r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"]+@",  # user:password@ of a URL
    )
)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with Hub tokens, ``Authorization``/``Bearer`` values, the value of ``HF_TOKEN``
    (and ``HUGGING_FACE_HUB_TOKEN``), the token huggingface_hub stored (where a command imported
    it: one that talks to the Hub) and each of ``secrets`` replaced by ``***``.

    >>> redact("token=hf_AbCdEf123456 sent", secrets=["s3cr3t"])
    'token=*** sent'
    >>> redact("header {'authorization': 'Bearer xyz'}")
    "header {'authorization': 'Bearer ***'}"
    >>> redact("https://user:pass@hub.example.org/x")
    'https://***@hub.example.org/x'
    """
    values = [*secrets, os.environ.get("HF_TOKEN"), os.environ.get("HUGGING_FACE_HUB_TOKEN")]
    if "huggingface_hub" in sys.modules:  # (a token without the hf_ prefix: no pattern finds it)
        from huggingface_hub import get_token

        values.append(get_token())
    for value in sorted({v for v in values if v and len(v) >= 4}, key=len, reverse=True):
        text = text.replace(value, "***")
    for pattern in _TOKEN_PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + "***" + ("@" if m.group(0).endswith("@") else ""), text)
    return text


def json_text(value: Any, **options: Any) -> str:
    """``json.dumps(value, **options)`` that is always valid JSON: a float that is not finite (NaN,
    infinity: a figure with no value) is written as ``null``.

    >>> json_text({"f1": float("nan"), "n": [1.5, float("inf")]})
    '{"f1": null, "n": [1.5, null]}'
    """
    return json.dumps(_finite(value), allow_nan=False, **options)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if value - value == 0 else None  # nan and inf give nan
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1, with thousands separators.

    >>> counted(1, "row"), counted(0, "failure"), counted(12345, "pair")
    ('1 row', '0 failures', '12,345 pairs')
    """
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _os_message(err: OSError) -> str:
    """``PATH: problem`` for an error the OS raised; an OSError raised with a message of its own
    (``FileNotFoundError("link-parser is not on PATH: install ...")``) keeps that message.

    >>> _os_message(FileNotFoundError(2, "No such file or directory", "in.txt"))
    'in.txt: no such file or directory'
    >>> _os_message(FileNotFoundError("'link-parser' is not on PATH: install link-grammar"))
    "'link-parser' is not on PATH: install link-grammar"
    """
    name = err.filename
    code = err.errno
    if code is None and name is None and err.args:
        return str(err)
    if isinstance(err, IsADirectoryError):
        problem = "is a folder, not a file"
    elif isinstance(err, NotADirectoryError):
        problem = "a part of the path is a file, not a folder"
    elif isinstance(err, FileNotFoundError):
        problem = "no such file or directory"
    elif isinstance(err, FileExistsError):
        problem = (name is not None and broken_link(name)) or "already exists"  # a link's folder made
    elif isinstance(err, PermissionError) or code in (errno.EACCES, errno.EPERM):
        problem = "permission denied"
    elif code == errno.ENOSPC:
        problem = "no space left on device"
    elif code == errno.EROFS:
        problem = "read-only file system"
    elif code is not None and code == getattr(errno, "EDQUOT", None):
        problem = "disk quota exceeded"
    elif err.strerror:
        problem = err.strerror[0].lower() + err.strerror[1:]
    else:
        return str(err)
    if name is None:
        return problem
    where = os.fsdecode(name) if isinstance(name, (bytes, str)) else str(name)
    if err.filename2 is not None:
        where = f"{where} -> {os.fsdecode(err.filename2)}"
    return f"{where}: {problem}"


def _data_message(err: BaseException) -> str | None:
    """The message of an error about the contents of an input file; None for other errors."""
    import gzip
    import zipfile
    import zlib

    module = type(err).__module__ or ""
    if isinstance(err, UnicodeDecodeError):
        byte = err.object[err.start : err.start + 1]
        return f"not valid UTF-8 ({'byte 0x' + byte.hex() if byte else 'bytes'} at offset {err.start})"
    if isinstance(err, json.JSONDecodeError):
        return f"invalid JSON at line {err.lineno}, column {err.colno}: {err.msg}"
    if isinstance(err, csv.Error):
        text = str(err)
        if "field limit" in text:
            return f"a CSV field is longer than the csv module's limit ({csv.field_size_limit()} characters)"
        return f"malformed CSV: {text}"
    if isinstance(err, gzip.BadGzipFile):
        return f"not a valid gzip file ({err})"
    if isinstance(err, zipfile.BadZipFile):
        return f"not a valid zip archive, truncated or corrupt ({err})"
    if isinstance(err, zlib.error):
        return f"corrupt compressed data ({err})"
    if isinstance(err, EOFError):
        return f"truncated file: {err}" if str(err) else "truncated file (ended too early)"
    if module.startswith("pyarrow"):
        return str(err) or type(err).__name__  # pyarrow says what it could not parse, and where
    return None


def describe(err: BaseException, inputs: Iterable[Any] = (), outputs: Iterable[Any] = ()) -> tuple[str, int]:
    """``(message, exit status)`` of ``err``, one line, not yet redacted; ``inputs`` (the command's
    input paths) name the file in errors about file contents that do not name it themselves, and
    ``outputs`` (where it writes) a full disk's or a file size limit's error raised by a write.
    Errors of no known kind are reported as internal errors.

    >>> describe(OSError(errno.ENOSPC, "No space left on device"), outputs=["out"])
    ('out: no space left on device', 1)
    >>> describe(OSError(errno.EIO, "Input/output error"), inputs=["in"], outputs=["out"])  # a read's too
    ('input/output error', 1)
    """
    err = _interruption(err) or _carried_os_error(_innermost(err))
    if isinstance(err, Interrupted):
        return _one_line(str(err)), err.status
    if isinstance(err, KeyboardInterrupt):
        return "interrupted", 130
    known = _known(err)
    where = getattr(err, "_paraamr_about", None)
    if known is None:
        text = str(err)
        message = f"internal error: {type(err).__name__}{': ' + text if text else ''}"
        message += " (run with --debug for the traceback)"
    else:
        message = known
        about = inputs if _data_message(err) is not None else outputs if _disk_error(err) else ()
        if where is None and getattr(err, "filename", None) is None:
            named = [str(p) for p in about if p not in (None, "", "-")]
            if named and not any(name in message for name in named):
                where = ", ".join(named)
    if where and where not in message:
        message = f"{where}: {message}"
    status = err.exit_status if isinstance(err, ParaAMRError) else 1
    return _one_line(message), status


def reason(err: BaseException) -> str:
    """What went wrong, in one line, for an error known to be about an input: like
    :func:`describe`, never "internal error".

    >>> reason(ValueError("Couldn't cast array"))
    "ValueError: Couldn't cast array"
    """
    err = _innermost(err)
    known = _known(err)
    if known is None:
        text = str(err)
        known = f"{type(err).__name__}: {text}" if text else type(err).__name__
    return _one_line(known)


def _interruption(err: BaseException) -> KeyboardInterrupt | None:
    """The signal under an error raised because of it (Python wraps what a signal handler raises
    inside ``__set_name__`` of a class being defined, as an import of a library does, in a
    RuntimeError), or None."""
    for _ in range(8):
        if isinstance(err, KeyboardInterrupt):
            return err
        err = err.__cause__ or err.__context__
        if err is None:
            return None
    return None


def _disk_error(err: BaseException | None) -> bool:
    return isinstance(err, OSError) and err.errno in DISK_ERRNOS


def _innermost(err: BaseException) -> BaseException:
    """The error under wrappers that say little themselves (datasets' generation errors), and the
    disk's error under one raised while a writer was cleaned up after it ("I/O operation on closed
    file")."""
    for _ in range(4):
        inner = err.__cause__ or err.__context__
        wrapper = (type(err).__module__ or "").startswith("datasets")
        if _disk_error(inner) and not isinstance(err, (OSError, ParaAMRError)):
            return inner  # type: ignore[return-value]
        if not wrapper or isinstance(err, (OSError, ParaAMRError)) or inner is None:
            break
        err = inner
    return err


def _carried_os_error(err: BaseException) -> BaseException:
    """The OSError that a Rust library's error carries in its text (safetensors' ``... I/O error: No
    space left on device (os error 28)``), else ``err``.

    >>> _carried_os_error(Exception("Error while serializing: I/O error: ... (os error 28)")).errno
    28
    """
    found = None if isinstance(err, OSError) else re.search(r"\(os error (\d+)\)", str(err))
    if found is None:
        return err
    code = int(found.group(1))
    return OSError(code, os.strerror(code))


def _known(err: BaseException) -> str | None:
    """The message of an error of a known kind; None for others."""
    if isinstance(err, ParaAMRError):
        return str(err)
    if isinstance(err, MemoryError):
        return "out of memory"
    if isinstance(err, RecursionError):
        return "input nested too deeply (recursion limit)"
    data = _data_message(err)
    if data is not None:
        return data
    if isinstance(err, OSError):
        return _os_message(err)
    return None


def report(
    command: str,
    err: BaseException,
    *,
    debug: bool | None = None,
    inputs: Iterable[Any] = (),
    outputs: Iterable[Any] = (),
    secrets: Iterable[str | None] = (),
) -> int:
    """Print ``err`` as ``paraamr <command>: <message>`` on stderr (the traceback first when
    ``debug``, default ``$PARAAMR_DEBUG``; ``inputs``, ``outputs``: :func:`describe`); return the
    exit status. A broken pipe prints nothing."""
    if debug is None:
        debug = os.environ.get("PARAAMR_DEBUG", "") not in ("", "0")
    if isinstance(err, BrokenPipeError) and err.filename is None:
        with contextlib.suppress(Exception):  # stdout to /dev/null: the final flush cannot fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    message, status = describe(err, inputs, outputs)
    inner = _innermost(err)
    if isinstance(inner, ModuleNotFoundError):
        message = install_hint(inner, command) or message
    with contextlib.suppress(Exception):
        if debug:
            text = "".join(traceback.format_exception(err))
            sys.stderr.write(redact(text, secrets))
        prefix = f"paraamr {command}".rstrip()
        sys.stderr.write(redact(f"{prefix}: {message}", secrets) + "\n")
        sys.stderr.flush()
    return status


def run_command(
    command: str,
    func: Callable[..., int | None],
    /,
    *args: Any,
    debug: bool | None = None,
    inputs: Iterable[Any] = (),
    outputs: Iterable[Any] = (),
    secrets: Iterable[str | None] = (),
) -> int:
    """Call ``func(*args)`` and return its exit status (None counts as 0); whatever it raises but
    ``SystemExit`` is reported by :func:`report` as one line naming ``command``.

    >>> run_command("demo", lambda: 3)
    3
    >>> import io, contextlib
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     run_command("demo", open, "/no/such/file")
    1
    >>> err.getvalue()
    'paraamr demo: /no/such/file: no such file or directory\\n'
    """
    try:
        status = func(*args)
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
        return int(status or 0)
    except SystemExit:
        raise
    except BaseException as err:  # the one place that reports everything
        return report(command, err, debug=debug, inputs=inputs, outputs=outputs, secrets=secrets)


def run_process(main: Callable[[], int], command: str) -> NoReturn:
    """A console script's whole life: the signals handled from its first step (a Ctrl-C while it
    parses its options is one line too, as is one while it works), ``main()``'s exit status, then
    :func:`paraamr.signals.exit_with`."""
    atexit.register(ignore_signals)  # the last exit callback: the teardown after it ignores signals
    with handled(f"paraamr {command}".rstrip()):
        try:
            status = main()
        except SystemExit:
            raise
        except BaseException as err:  # before the command's own reporter took over (its options)
            status = report(command, err)
    exit_with(status)
