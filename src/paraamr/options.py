"""Command-line parsing shared by the ``paraamr`` commands: the parser with one-line usage errors,
value types of options (numbers checked by :func:`check_number`, ``--shard``: :func:`shard_spec`), and
settings declared once as dataclass fields (:func:`setting`) that become options (:func:`add_settings`).
The numbers of the Python API (``filter_records``) are checked by :func:`check_number` too: ``nan``,
``inf``, a fraction where an integer is meant and a value out of range are refused.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import math
import numbers
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import Field, field, fields
from pathlib import Path
from typing import Any, NoReturn

from paraamr.errors import UsageError, broken_link
from paraamr.report import redact

__all__ = [
    "EXECUTOR_DEFAULTS",
    "SEED",
    "SHARD_HELP",
    "ArgumentParser",
    "add_plot_options",
    "add_settings",
    "check_folder",
    "check_number",
    "check_settings",
    "checking",
    "folder_text",
    "given_settings",
    "license_id",
    "named_as_options",
    "not_a_folder",
    "number",
    "option_flag",
    "optional_float",
    "path_text",
    "positive",
    "setting",
    "shard_spec",
]


class ArgumentParser(argparse.ArgumentParser):
    """argparse with usage errors on ONE line: ``<prog>: <message> (see <prog> --help)``, exit 2,
    and options written in full (subparsers inherit the class): a run saves its command line to
    print it again, without its ``--token``, which ``--tok`` would have stood for.

    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     try:
    ...         ArgumentParser(prog="paraamr demo").parse_args(["--nope"])
    ...     except SystemExit as stop:
    ...         print(stop.code)
    2
    >>> err.getvalue()
    'paraamr demo: unrecognized arguments: --nope (see paraamr demo --help)\\n'
    """

    def __init__(self, *args: Any, allow_abbrev: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, allow_abbrev=allow_abbrev, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, redact(f"{self.prog}: {_token_hidden(message)} (see {self.prog} --help)") + "\n")


def _token_hidden(message: str) -> str:
    """``message`` with the value of an option written as a part of ``--token`` (refused, since
    options are written in full) hidden: a token without the ``hf_`` prefix has no pattern.

    >>> _token_hidden("unrecognized arguments: --toke mine123 --tok=other456 --x")
    'unrecognized arguments: --toke *** --tok=*** --x'
    """
    words = message.split(" ")
    for i, word in enumerate(words):
        name, eq, _ = word.partition("=")
        if len(name) > 3 and "--token".startswith(name):
            if eq:
                words[i] = f"{name}=***"
            elif i + 1 < len(words):
                words[i + 1] = "***"
    return " ".join(words)


def check_number(
    value: Any,
    name: str | None = None,
    *,
    kind: type = float,
    low: float | None = None,
    high: float | None = None,
    above: float | None = None,
    below: float | None = None,
    none: bool = False,
) -> int | float | None:
    """``value`` as a Python ``kind`` (``int`` or ``float``; numpy scalars are numbers too, bools are
    not), checked: finite, an integer for ``int``, ``>= low``, ``<= high``, ``> above``, ``< below``;
    None passes when ``none``. Else ``ValueError`` naming ``name`` and the range.

    >>> import numpy as np
    >>> check_number(np.float32(110), "max_perplexity", low=0), check_number(None, "x", none=True)
    (110.0, None)
    >>> check_number(float("nan"), "max_perplexity", low=0, none=True)
    Traceback (most recent call last):
    ...
    ValueError: max_perplexity must be a finite number >= 0 or None, got nan
    >>> check_number(2.5, "batch_size", kind=int, above=0)
    Traceback (most recent call last):
    ...
    ValueError: batch_size must be an integer > 0, got 2.5
    >>> check_number(1, "validation", above=0, below=1)
    Traceback (most recent call last):
    ...
    ValueError: validation must be a finite number > 0 and < 1, got 1
    """
    if value is None and none:
        return None
    whole = kind is int
    if (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (not whole or isinstance(value, numbers.Integral) or float(value).is_integer())
    ):
        n = int(value) if whole else float(value)
        inside = (low is None or n >= low) and (high is None or n <= high)
        if inside and (above is None or n > above) and (below is None or n < below):
            return n
    what = ("an integer" if whole else "a finite number") + _range(low, high, above, below)
    raise ValueError(f"{name + ' ' if name else ''}must be {what}{' or None' if none else ''}, got {value!r}")


def _range(low: float | None, high: float | None, above: float | None, below: float | None) -> str:
    """`` in [0, 1]``, `` >= 0``, `` > 0 and < 1``, `` <= 1`` or nothing (integer bounds in full)."""

    def shown(bound: float) -> str:
        return str(bound) if isinstance(bound, int) else f"{bound:g}"

    if low is not None and high is not None:
        return f" in [{shown(low)}, {shown(high)}]"
    parts = [
        f"{sign} {shown(bound)}"
        for sign, bound in ((">=", low), (">", above), ("<=", high), ("<", below))
        if bound is not None
    ]
    return " " + " and ".join(parts) if parts else ""


def number(kind: type = float, *, none: bool = False, **bounds: float) -> Callable[[str], int | float | None]:
    """An argparse ``type``: a number of ``kind`` checked by :func:`check_number` (finite, within
    ``bounds``: ``low``, ``high``, ``above``, ``below``; with ``none``, ``none``/``off`` give None: no
    limit), else argparse's one-line error naming the option.

    >>> number(float, low=0)("1.5"), number(float, low=0, none=True)("none")
    (1.5, None)
    >>> number(float, low=0)("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number >= 0, got nan
    """

    def parse(text: str) -> int | float | None:
        if none and text.strip().lower() in ("none", "off"):
            return None
        try:
            value = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(
                f"{text!r} is not {what}" + (" or 'none'" if none else "")
            ) from None
        try:
            return check_number(value, kind=kind, **bounds)
        except ValueError as err:  # the text as given, not as parsed; 'none' for no limit
            what = str(err).rpartition(", got ")[0] + (" or 'none' (no limit)" if none else "")
            raise argparse.ArgumentTypeError(f"{what}, got {text}") from None

    return parse


def path_text(text: str) -> str:
    """An argparse ``type`` for a path: not empty (``Path("")`` is the current folder).

    >>> path_text("out")
    'out'
    >>> path_text(" ")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: an empty path
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return text


def check_folder(option: str, folder: str | os.PathLike | None) -> None:
    """UsageError when ``folder``, a folder to use or create given as ``option``, is a file or
    lies under one.

    >>> check_folder("--cache-dir", "setup.cfg")
    Traceback (most recent call last):
    ...
    paraamr.errors.UsageError: --cache-dir setup.cfg: not a folder
    >>> check_folder("--state-dir", "setup.cfg/state")
    Traceback (most recent call last):
    ...
    paraamr.errors.UsageError: --state-dir setup.cfg/state: setup.cfg is a file, not a folder
    """
    problem = folder and not_a_folder(folder)
    if problem:
        raise UsageError(f"{option} {folder}: {problem}")


def not_a_folder(folder: str | os.PathLike) -> str | None:
    """Why ``folder`` cannot be a folder (it, or the first of its parents that exists, is a file or
    a symbolic link to nothing)."""
    path = Path(folder)
    for at in (path, *path.parents):
        if os.path.lexists(at):
            if os.path.isdir(at):
                return None
            if broken := broken_link(at):
                return broken if at == path else f"{at} is {broken}"
            return "not a folder" if at == path else f"{at} is a file, not a folder"
    return None


def folder_text(text: str) -> str:
    """An argparse ``type`` for a folder to use or create: a path (:func:`path_text`) that is not a
    file nor under one."""
    problem = not_a_folder(path_text(text))
    if problem:
        raise argparse.ArgumentTypeError(f"{text}: {problem}")
    return text


#: A seed's range: what numpy, torch and random all take (a number=... of :func:`setting`).
SEED = {"kind": int, "low": 0, "high": 2**32 - 1}


def positive(kind: type = int) -> Callable[[str], int | float]:
    """An argparse ``type``: a finite number of ``kind`` above zero (:func:`number`).

    >>> positive()("3"), positive(float)("0.5")
    (3, 0.5)
    >>> positive()("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer > 0, got 0
    """
    return number(kind, above=0)


def license_id(text: str) -> str:
    """An argparse ``type``: a license as the Hub's card metadata takes it (lowercase letters,
    digits, ``.``, ``-``, ``+``: ``mit``, ``cc-by-nc-4.0``, ``other``), refused at the start, not
    by the Hub at the end of a run.

    >>> license_id("cc-by-4.0")
    'cc-by-4.0'
    >>> license_id("MIT")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: not a Hub license id: 'MIT' (its ids are lowercase: 'mit')
    """
    if re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", text):
        return text
    lower = re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", text.lower())
    hint = f"its ids are lowercase: {text.lower()!r}" if lower else "e.g. mit, apache-2.0, cc-by-4.0, other"
    raise argparse.ArgumentTypeError(f"not a Hub license id: {text!r} ({hint})")


def add_plot_options(group: argparse._ActionsContainer) -> None:
    """``--plots DIR``, ``--no-plots`` and ``--overwrite`` for a command that can write PNG
    histograms (``stats``, ``evaluate``): nothing is written unless ``--plots`` names a folder."""
    group.add_argument(
        "--plots", metavar="DIR", default=None, help="write the PNG histograms into DIR (default: none)"
    )
    group.add_argument(
        "--no-plots", dest="plots", action="store_const", const=None, help="write no histograms (the default)"
    )
    group.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the PNGs of the same names in --plots (a link there is replaced, never written "
        "through; other files in DIR are never touched)",
    )


def setting(default: Any, help: str | None = None, *, group: str | None = None, **meta: Any) -> Any:
    """A dataclass field whose metadata is the one declaration of a setting. With a ``group`` it is
    an option (:func:`add_settings`; ``%(default)s`` in ``help`` is the field's default); ``flag``
    names it (else ``--field-name``); ``choices``, ``metavar``, ``nargs`` and ``type`` go to
    argparse; ``number`` (:func:`check_number`'s keywords) is both its argparse type and its check
    (:func:`check_settings`); ``add(group)`` adds its options instead. Other keys are read by the
    settings' users (``label``, ``model``, ``path``, ``paper``).

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class S:
    ...     batch_size: int = setting(8, "pairs a batch (default: %(default)s)", group="run",
    ...                               number={"kind": int, "above": 0})
    >>> parser = ArgumentParser(prog="demo")
    >>> add_settings({"run": parser}, S)
    >>> S(**vars(parser.parse_args(["--batch-size", "3"])))
    S(batch_size=3)
    >>> check_settings(S(batch_size=0))
    Traceback (most recent call last):
    ...
    paraamr.errors.UsageError: --batch-size must be an integer > 0, got 0
    """
    return field(default=default, metadata={"help": help, "group": group, **meta})


def option_flag(f: Field) -> str:
    """The option of a settings field: its ``flag``, else ``--`` and its name with dashes."""
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


def add_settings(groups: Mapping[str, argparse._ActionsContainer], cls: type) -> None:
    """An option, ``dest`` the field's name, for each field of the dataclass ``cls`` whose ``group``
    (:func:`setting`) is a key of ``groups``, in that group: a bool is a switch (``store_true``, or
    ``store_false`` where it is on by default); a field with a ``paper`` value is absent unless
    given, so that a preset tells what was given from a default."""
    for f in fields(cls):
        meta = f.metadata
        if meta.get("group") not in groups:
            continue
        group = groups[meta["group"]]
        if "add" in meta:
            meta["add"](group)
            continue
        kwargs = {k: meta[k] for k in ("choices", "metavar", "nargs", "type") if k in meta}
        if "number" in meta:
            kwargs["type"] = number(**meta["number"])
        if isinstance(f.default, bool):
            kwargs["action"] = "store_false" if f.default else "store_true"
        help = meta["help"].replace("%(default)s", str(f.default))
        default = argparse.SUPPRESS if "paper" in meta else f.default
        group.add_argument(option_flag(f), dest=f.name, default=default, help=help, **kwargs)


def given_settings(cls: type, args: argparse.Namespace) -> dict[str, Any]:
    """The fields of the dataclass ``cls`` in the parsed options ``args``, by name (an option absent
    unless given is left out where it was not)."""
    return {f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)}


_AS_OPTIONS = contextvars.ContextVar("as_options", default=False)


@contextlib.contextmanager
def named_as_options() -> Iterator[None]:
    """Inside, the errors of settings (:func:`checking`) name command-line options, as a command's
    user typed them (``paraamr`` runs its commands inside)."""
    token = _AS_OPTIONS.set(True)
    try:
        yield
    finally:
        _AS_OPTIONS.reset(token)


@contextlib.contextmanager
def checking(settings: Any) -> Iterator[None]:
    """The checks of the dataclass ``settings`` inside: a UsageError naming its options names its
    fields instead, after the class, as a Python caller wrote them (not inside :func:`named_as_options`).

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class S:
    ...     batch_size: int = 1
    >>> with checking(S()):
    ...     raise UsageError("--batch-size must be > 0, got 0")
    Traceback (most recent call last):
    ...
    paraamr.errors.UsageError: S: batch_size must be > 0, got 0
    >>> with named_as_options(), checking(S()):
    ...     raise UsageError("--batch-size must be > 0, got 0")
    Traceback (most recent call last):
    ...
    paraamr.errors.UsageError: --batch-size must be > 0, got 0
    """
    try:
        yield
    except UsageError as err:
        if _AS_OPTIONS.get():
            raise
        names = {option_flag(f): f.name for f in fields(settings)}
        text = re.sub(r"(?<![\w-])--[a-z][a-z0-9-]*", lambda m: names.get(m.group(0), m.group(0)), str(err))
        raise UsageError(f"{type(settings).__name__}: {text}") from None


def check_settings(settings: Any) -> None:
    """Check each field of the dataclass ``settings`` declared with a ``number`` (made a Python
    int or float, in place, frozen or not) or ``choices`` (None passes where it is the default):
    else UsageError naming the option."""
    for f in fields(settings):
        value, flag, choices = getattr(settings, f.name), option_flag(f), f.metadata.get("choices")
        if "number" in f.metadata:
            try:
                value = check_number(value, flag, **{"none": f.default is None, **f.metadata["number"]})
            except ValueError as err:
                raise UsageError(str(err)) from None
            object.__setattr__(settings, f.name, value)
        if choices and value not in choices and not (value is None and f.default is None):
            raise UsageError(f"{flag} must be one of {', '.join(choices)}, got {value!r}")
        if f.type in (bool, "bool") and not isinstance(value, bool):  # "no" would count as true
            raise UsageError(f"{flag} must be True or False, got {value!r}")


#: ``--max-perplexity``'s type: a finite number >= 0, or ``none``/``off`` for no limit.
optional_float = number(float, low=0, none=True)


#: The options of ``generate --executor`` (by ``dest``) and their values where not given: their
#: parser's defaults are None, so that one given without the executor it serves is refused.
EXECUTOR_DEFAULTS = {
    "tasks": None,
    "workers": 1,
    "slurm_partition": None,
    "slurm_time": "24:00:00",
    "slurm_cpus": 4,
    "slurm_gpus": 0,
}


#: What ``--shard`` takes, for the options' help.
SHARD_HELP = (
    "I/N: this invocation is shard I (0..N-1) of N independent shards of the run, by id; "
    "'slurm': I and N from the Slurm array (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT or _MIN/_MAX)"
)


def shard_spec(text: str, environ: Mapping[str, str] | None = None) -> tuple[int, int]:
    """An argparse ``type``: ``(I, N)`` of ``--shard I/N`` (0 <= I < N), or of ``--shard slurm``
    from the Slurm array task's variables: ``SLURM_ARRAY_TASK_ID`` and either ``_MIN``/``_MAX``
    (``I = (ID - MIN) / STEP``, ``N = (MAX - MIN) / STEP + 1``: ``--array=1-8`` is shards 0..7 of
    8, and so is ``--array=0-14:2``) or ``_COUNT`` alone (``I = ID``). A listed array
    (``--array=1,5,9``), whose ids are not evenly spaced, is refused.

    >>> shard_spec("3/8"), shard_spec("slurm", {"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1",
    ...                                           "SLURM_ARRAY_TASK_MAX": "8", "SLURM_ARRAY_TASK_COUNT": "8"})
    ((3, 8), (3, 8))
    >>> shard_spec("8/8")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: shard 8 of 8: I must be in 0..7
    """
    if text.strip().lower() == "slurm":
        return _slurm_shard(os.environ if environ is None else environ)
    index, sep, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not I/N (e.g. 0/8) or 'slurm'") from None
    if not sep or n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not I/N with N >= 1 (e.g. 0/8) or 'slurm'")
    if not 0 <= i < n:
        raise argparse.ArgumentTypeError(f"shard {i} of {n}: I must be in 0..{n - 1}")
    return i, n


def _slurm_shard(env: Mapping[str, str]) -> tuple[int, int]:
    names = ("ID", "MIN", "MAX", "COUNT", "STEP")
    raw = {k: env.get(f"SLURM_ARRAY_TASK_{k}") for k in names}
    try:
        task, low, high, count, step = (None if raw[k] in (None, "") else int(raw[k]) for k in names)
    except ValueError:
        found = ", ".join(f"SLURM_ARRAY_TASK_{k}={v}" for k, v in raw.items() if v is not None)
        raise argparse.ArgumentTypeError(f"--shard slurm: not numbers: {found}") from None
    if task is None or (count is None and (low is None or high is None)):
        raise argparse.ArgumentTypeError(
            "--shard slurm: SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT (or _MIN and _MAX) is not "
            "set; is this a task of an array job (sbatch --array)? Else give --shard I/N"
        )
    step = step or 1
    if low is not None and high is not None:
        span = (high - low) // step + 1
        if (count is not None and count != span) or (task - low) % step:
            raise argparse.ArgumentTypeError(
                f"--shard slurm: the array's ids {low}..{high} are not {count or span} evenly spaced tasks "
                "(a listed --array); use --array=0-N-1 (a step or a %limit is fine)"
            )
        index, n = (task - low) // step, span
    else:
        index, n = task, count
    if not 0 <= index < n:
        raise argparse.ArgumentTypeError(
            f"--shard slurm: SLURM_ARRAY_TASK_ID {task} is outside the array's 0..{n - 1} "
            "(an array that does not start at 0 needs SLURM_ARRAY_TASK_MIN and _MAX)"
        )
    return index, n
