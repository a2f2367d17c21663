"""Every command × hostile input (issue 14 item 6): the exit status, ONE line on stderr naming the
input and the problem (never a traceback), and the user's files left as they were.

Each row of :func:`table` builds its inputs in a fresh folder, runs the command there (in-process
through ``paraamr.cli.main`` with the file descriptors captured, or as
a subprocess for broken pipes and possible hangs) and checks:

- the exit status is one the row allows (0 where a bad row becomes a failure row, 1 for bad
  input, 2 for usage, 141 for a closed pipe);
- nothing on stdout or stderr looks like a traceback, and the Hub token set for the run
  (``HF_TOKEN``) is never printed;
- on failure, the last line of stderr (progress bars aside) is the one error line,
  ``paraamr <command>: ...``, naming the input (or option) the row names; other lines may only
  inform (no second error, warning, usage text or library error log);
- every file that existed before the run is still there, byte for byte.

Read-only and full-disk rows mount small tmpfs folders (root only; elsewhere those rows are
skipped, saying so). The counts by command are printed at the end (tests/support/hostile_report.py).
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import io
import json
import lzma
import os
import random
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "hf_HostileTableSecretToken123"
LONG_TEXT = ("verylongword " * 8000)[:100_000]  # 100,000 characters on one line
SENTENCES = ["The cat sat on the mat .", "A dog ran in the park .", "She reads a good book ."]
GARBAGE = random.Random(14).randbytes(4096)
ERR = frozenset({1, 2})
USAGE = frozenset({2})
OK = frozenset({0})
OK_OR_ERR = frozenset({0, 1, 2})
PIPE = frozenset({141})

# --- input contents ---------------------------------------------------------------------------


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def release(texts=SENTENCES, repeat=40) -> bytes:
    """Release-format JSON lines (text + paraphrases with perplexity)."""
    rows = [
        {"text": f"{t} {i}", "paraphrases": [{"para_text": f"{t} again {i}", "perplexity": 20.0 + i}]}
        for i in range(repeat)
        for t in texts
    ]
    return jsonl(rows)


def parquet(columns: dict) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()


#: A Parquet file of no rows.
ZERO_ROWS = parquet({"text": [], "label": []})


def gz(data: bytes) -> bytes:
    return gzip.compress(data)


def zipped(name: str, data: bytes) -> bytes:
    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, data)
    return sink.getvalue()


def half(data: bytes) -> bytes:
    return data[: len(data) // 2]


def bad_utf8(data: bytes) -> bytes:
    """``data`` with invalid UTF-8 bytes inside its first text."""
    return data.replace(b"The", b"Th\xff\xfe", 1)


def text_lines(texts=SENTENCES) -> bytes:
    return "".join(t + "\n" for t in texts).encode()


AMR = b"# ::snt The big dog barks .\n(b / bark-01 :ARG0 (d / dog :mod (b2 / big)))\n\n(c / cat)\n"
PAIRS_TSV = b"The cat sat on the mat .\tA cat was sitting on the mat .\nA dog ran .\tA dog was running .\n"
SCORE_ROWS = jsonl([{"text": t, "para_text": t.replace(".", "!")} for t in SENTENCES])
AUGMENT_ROWS = jsonl([{"text": t, "label": i} for i, t in enumerate(SENTENCES)])

# issue 28: text a dataset cannot hold, bombs, nested archives, oversize graphs
SURROGATE_ROWS = (
    b'{"text": "The cat sat ."}\n{"text": "A lone \\ud800 surrogate ."}\n{"text": "A dog ran ."}\n'
)
NUL_ROWS = b'{"text": "The cat sat ."}\n{"text": "A NUL \\u0000 here ."}\n{"text": "A dog ran ."}\n'
SURROGATE_PARA = release() + (
    b'{"text": "A bird flew .", "paraphrases": [{"para_text": "A bird \\ud800 flew .", "perplexity": 2}]}\n'
)
#: 20 MB on one line in a 20 KB gzip: past the 16 MiB grace at 1,000 times its size.
BOMB = gz(b'{"text": "' + b"x" * 20_000_000 + b'", "paraphrases": []}\n')
NESTED_ZIP = zipped("inner.zip", zipped("in.json", release()))


def deep_amr(depth: int) -> bytes:
    chain = "".join(f"(a{i} / x :ARG0 " for i in range(depth - 1)) + "(z / end)" + ")" * (depth - 1)
    return AMR + b"\n# ::snt too deep\n" + chain.encode() + b"\n\n(c / cat :mod (b / big))\n"


def wide_amr(nodes: int) -> bytes:
    star = "(r / root " + " ".join(f":op{i} (n{i} / thing)" for i in range(1, nodes)) + ")"
    return AMR + b"\n# ::snt too wide\n" + star.encode() + b"\n\n(c / cat :mod (b / big))\n"


@dataclass(frozen=True)
class Link:
    """A symbolic link to ``target`` (relative to the link's folder), made in a case's folder."""

    target: str


DATASET = {
    "d/README.md": b"---\nlicense: mit\n---\n# d\n",
    "d/data/default/train-00000-of-00001.parquet": b"x",
}

# --- the table --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One row: ``command`` (the table's key), ``kind`` of hostile input, the arguments (``{x}``
    placeholders: ``{ro}``/``{full}`` mounts, ``{parser}``/``{realizer}``/``{lm}`` tiny models),
    the files to create (name -> bytes, or None for a folder), the exit statuses allowed, text the
    error must contain, and how to run it."""

    command: str
    kind: str
    argv: tuple[str, ...]
    files: dict = field(default_factory=dict)
    codes: frozenset = ERR
    names: str | None = None
    how: str = "inproc"  # inproc | subprocess | pipe
    single: bool = True  # a failure prints exactly one line (refocus reports each bad graph)
    env: tuple[tuple[str, str], ...] = ()  # extra environment ({case} is the case's folder)
    timeout: float = 120.0
    absent: tuple[str, ...] = ()  # paths that must not exist afterwards (a failed command's output)
    secret: str | None = None  # text that must not be printed (besides the HF_TOKEN's value)

    @property
    def id(self) -> str:
        return f"{self.command}|{self.kind}"

    @property
    def needs(self) -> set[str]:
        text = " ".join(self.argv)
        return {k for k in ("ro", "full", "parser", "realizer", "lm") if "{" + k + "}" in text}


def rows(command, prefix, specs, **common):
    """Cases of ``command``: ``prefix`` + each spec's extra arguments; ``common``: fields every
    case has (a spec's own extra fields win)."""
    out = []
    for spec in specs:
        kind, argv, files, codes, names, *rest = spec
        extra = {**common, **(rest[0] if rest else {})}
        out.append(Case(command, kind, (*prefix, *argv), files, codes, names, **extra))
    return out


#: The tiny models (filled in by the test) for generate's arguments.
MODELS = ("--parser-model", "{parser}", "--realizer-model", "{realizer}", "--lm-model", "{lm}")
USER_FOLDER = {"out/notes.txt": b"my notes\n", "out/README.md": b"# my readme\n"}

# --- the families of cases (specs for :func:`rows`) ---------------------------------------------

#: In the arguments given to the helpers below, where the case's file (or folder) goes (in
#: :func:`table`, ``at`` holds it where a command reads its input, ``to`` where it writes).
FILE = "{file}"
#: A file the case does not create.
MISSING = object()
#: A named pipe that nobody writes: opening it would wait forever.
FIFO = object()
TRUNCATED_PARQUET = half(parquet({"text": SENTENCES * 50}))
TRUNCATED_GZ = half(gz(release()))
TRUNCATED_ZIP = half(zipped("in.json", release()))


def put(args, path: str) -> list[str]:
    """``args`` with ``path`` where ``FILE`` is."""
    return [path if arg == FILE else arg for arg in args]


#: What a command says of a Hub dataset id it cannot fetch (the tests run offline).
UNREACHABLE = "not here, and the Hub cannot be reached"
NOT_A_FILE = "a pipe or a device, not a file"
SAVE_LM_OVER_INPUT = ("--save-lm", "in.jsonl", "--overwrite")
#: Plain sentences (generate's input) given as a corpus: before, json's own "Expecting value: line 1
#: column 1 (char 0)".
SENTENCES_NOT_A_CORPUS = "in.txt, line 1: not JSON (Expecting value at column 1); a release file holds one"


def bad_file(kind, args, path, content, codes=ERR, names=..., beside=None, **extra):
    """One spec: ``args`` name ``path`` (at ``FILE``), which holds ``content`` (bytes; None: an empty
    folder; MISSING: nothing is there), next to the files of ``beside``. It fails naming ``path``
    unless ``codes``/``names`` say otherwise (a case that must succeed names nothing)."""
    files = {**(beside or {}), **({} if content is MISSING else {path: content})}
    if names is ...:
        names = None if codes == OK else path
    return (kind, put(args, path), files, codes, names, *([extra] if extra else []))


def standard_input(kind: str, name: str, good: bytes):
    """(path, content) of a standard bad input of a command that reads ``name`` (usually ``good``)."""
    suffix = name.partition(".")[2]
    return {
        "missing": (f"missing.{suffix}", MISSING),
        "empty": (name, b""),
        "blank-lines": (name, b"\n\n"),
        "empty-folder": ("data", None),
        "directory": ("data", None),
        "invalid-utf8": (name, bad_utf8(good)),
        "garbage": (name, GARBAGE),
        "garbage-parquet": ("in.parquet", GARBAGE),
        "empty-parquet": ("in.parquet", b""),
        "truncated-parquet": ("in.parquet", TRUNCATED_PARQUET),
        "truncated-gz": ("in.jsonl.gz", TRUNCATED_GZ),
        "truncated-zip": ("in.zip", TRUNCATED_ZIP),
        "malformed-json": ("in.jsonl", b'{"text": "a"\n'),
        "pipe": (name, FIFO),
    }[kind]


def input_cases(args, name, good, kinds, expect=None):
    """Specs of the standard bad inputs (:func:`standard_input`) named in ``kinds`` (split by spaces,
    in that order), where ``args`` read ``name`` (at ``FILE``). Each fails naming its file, except
    where ``expect`` (kind -> codes) allows another outcome."""
    expect = expect or {}
    specs = []
    for kind in kinds.split():
        path, content = standard_input(kind, name, good)
        names = f"{path}: {NOT_A_FILE}" if content is FIFO else ...
        specs.append(bad_file(kind, args, path, content, expect.get(kind, ERR), names))
    return specs


def output_cases(args, good, kinds, out="out", full="out"):
    """Specs of the standard bad places to write, where ``args`` write ``out`` (at ``FILE``) from the
    input files ``good``: one per kind of ``kinds`` (``<prefix>-<place>``, split by spaces, in that
    order), each failing with a message that names (in brackets):

    under-file: ``afile/<out>``, under a file (afile); read-only: in the read-only mount (out);
    disk-full: ``full`` in the full mount (full); proc: under ``/proc``, a folder no file can be
    made in, on a file system with no blocks, not a full one (/proc/paraamr); user-folder: a folder
    of the user's files (out); user-file: a file of the user's (out)."""
    user_folder = {f"{out}/{Path(path).name}": data for path, data in USER_FOLDER.items()}
    places = {
        "under-file": (f"afile/{out}", {**good, "afile": b"x"}, "afile"),
        "read-only": ("{ro}/" + out, good, out),
        "disk-full": ("{full}/" + full, good, full),
        "proc": ("/proc/paraamr/" + out, good, "/proc/paraamr", {"secret": "no space left"}),
        "user-folder": (out, {**good, **user_folder}, out),
        "user-file": (out, {**good, out: b"mine\n"}, out),
    }
    specs = []
    for kind in kinds.split():
        path, files, names, *extra = places[kind.split("-", 1)[1]]
        specs.append((kind, put(args, path), files, ERR, names, *extra))
    return specs


def option_cases(args, files, codes, values, **extra):
    """Specs of bad option values: ``args`` + ``--<flag> <value>`` for each (flag, label, value) of
    ``values``, the kind ``<flag>-<label>``, each exiting with ``codes`` and naming ``--<flag>``."""
    tail = [extra] if extra else []
    return [
        (f"{flag}-{label}", [*args, f"--{flag}", value], files, codes, f"--{flag}", *tail)
        for flag, label, value in values
    ]


def table() -> list[Case]:
    cases: list[Case] = []

    # augment --------------------------------------------------------------------------------
    aug = ("augment", "--method", "reda", "--n", "1", "--seed", "0")
    at = ("--dataset", FILE, "--output", "out")
    args = put(at, "in.jsonl")
    para = (*args, "--method", "paraamr", "--paraphrases", FILE)
    good = {"in.jsonl": AUGMENT_ROWS}
    long_rows = jsonl([{"text": LONG_TEXT, "label": 0}])
    cases += rows(
        "augment",
        aug,
        [
            *input_cases(
                at,
                "in.jsonl",
                AUGMENT_ROWS,
                "missing empty blank-lines empty-folder invalid-utf8 garbage-parquet truncated-parquet"
                " malformed-json pipe",
            ),
            bad_file("invalid-utf8-csv", at, "in.csv", b"text,label\nTh\xff\xfe cat,1\n"),
            # before: 'cannot be read as a dataset: ValueError: Instruction "train" corresponds to no data!'
            bad_file("header-only-csv", at, "in.csv", b"text,label\n", names="in.csv: no rows to augment"),
            # before: 'cannot be read as a dataset: BatchSize must be greater than 0, got 0'
            bad_file("zero-row-parquet", at, "in.parquet", ZERO_ROWS, names="in.parquet: no rows to augment"),
            bad_file("wrong-column", at, "in.jsonl", jsonl([{"body": "x"}])),
            bad_file("unknown-suffix", at, "in.xyz", b"abc"),
            bad_file("long-line", at, "in.jsonl", long_rows, OK),
            bad_file("long-line-max-chars", (*at, "--max-chars", "1000"), "in.jsonl", long_rows, OK),
            (  # before: --overwrite wrote the LM (Parquet) over the dataset
                "save-lm-is-input",
                [*("--dataset", "in.jsonl", "--output", "o", "--method", "reda-ng"), *SAVE_LM_OVER_INPUT],
                good,
                ERR,
                "--save-lm in.jsonl: is the input",
            ),
            (  # before: the error named the temporary file ('.lm.4434-c58465e6.tmp -> lm: is a folder')
                "save-lm-a-folder",
                [*("--dataset", "in.jsonl", "--output", "o", "--method", "reda-ng"), "--save-lm", "lm"],
                {**good, "lm/mine.txt": b"mine"},
                USAGE,
                "--save-lm lm: is a folder",
            ),
            *output_cases(
                ("--dataset", "in.jsonl", "--output", FILE),
                good,
                "output-under-file output-read-only output-disk-full output-proc output-user-folder"
                " output-user-file",
                full="augment",
            ),
            *option_cases(
                args,
                good,
                USAGE,
                [
                    ("n", "zero", "0"),
                    ("max-chars", "negative", "-1"),
                    ("max-shard-size", "zero", "0"),
                    ("draws", "zero", "0"),
                    ("draws", "huge", "1000000000"),  # before: reda-ng ran until killed
                ],
            ),
            ("unknown-split", [*args, "--split", "nope"], good, ERR, "nope"),
            ("dataset-empty", ["--dataset", "", "--output", "o"], {}, USAGE, "--dataset: an empty path"),
            ("token-without-push", [*args, "--token", "abc"], good, USAGE, "go with --push-to-hub"),
            ("device-with-reda", [*args, "--device", "cpu"], good, USAGE, "--device: only with --method"),
            ("perplexity-with-reda", [*args, "--max-perplexity", "5"], good, USAGE, "--max-perplexity: only"),
            # before: 'none' and 0 passed for "not given", exit 0
            ("perplexity-none-reda", [*args, "--max-perplexity", "none"], good, USAGE, "--max-perplexity"),
            # before: accepted, ignored (the only archive augment reads: --paraphrases; a file: no config)
            ("archive-limit-no-archive", [*args, "--max-unpacked", "1GB"], good, USAGE, "--max-unpacked: on"),
            ("config-of-a-file", [*args, "--dataset-config", "mrpc"], good, USAGE, "--dataset-config: only"),
            (  # before: the LM of no counts was saved, and every later reda-ng run failed on it
                "lm-corpus-blank",
                [*args, "--method", "reda-ng", "--lm-corpus", "blank.txt", "--save-lm", "lm.parquet"],
                {**good, "blank.txt": b"\n \n"},
                ERR,
                "--lm-corpus blank.txt: no text",
            ),
            (  # before: 'in.jsonl: truncated file', naming the dataset
                "lm-corpus-broken-gzip",
                [*args, "--method", "reda-ng", "--lm-corpus", "c.gz"],
                {**good, "c.gz": b"\x1f\x8bgarbage"},
                ERR,
                "c.gz: a broken gzip file",
            ),
            (  # before: the user's link was replaced by the LM, exit 0
                "save-lm-dangling-link",
                [*args, "--method", "reda-ng", "--save-lm", "lm.parquet"],
                {**good, "lm.parquet": Link("nowhere.parquet")},
                USAGE,
                "--save-lm lm.parquet: exists",
            ),
            ("unknown-column", [*args, "--columns", "body"], good, ERR, "body"),
            # before: each text paired with itself, exit 0
            ("same-column-twice", [*args, "--columns", "text", "text"], good, ERR, "two different columns"),
            # before: every row a failure row, exit 0
            ("number-column", [*args, "--columns", "label"], good, ERR, "column 'label' is not a text"),
            (  # before: written, then read back as part of the input by the same command run again
                "output-inside-dataset",
                ["--dataset", "d", "--output", "d/out", "--method", "reda", "--n", "1"],
                {"d/train.jsonl": AUGMENT_ROWS},
                USAGE,
                "--output d/out: inside --dataset d",
            ),
            bad_file(
                "lm-garbage", (*args, "--method", "reda-ng", "--lm", FILE), "lm.parquet", GARBAGE, beside=good
            ),
            bad_file("lm-without-reda-ng", (*args, "--lm", FILE), "lm.parquet", GARBAGE, USAGE, "--lm", good),
            ("paraamr-without-source", [*args, "--method", "paraamr"], good, USAGE, "--paraphrases"),
            bad_file("paraphrases-garbage", para, "p.jsonl", GARBAGE, beside=good),
            bad_file("paraphrases-truncated-gz", para, "p.jsonl.gz", TRUNCATED_GZ, beside=good),
            (
                "generate-no-download",
                [*args, "--method", "paraamr", "--generate", "--no-download"],
                good,
                ERR,
                "downloads are off",
                {  # online, but every host is a closed loopback port: a fetch fails at once, never downloads
                    "env": (
                        ("PARAAMR_CACHE", "{case}/cache"),
                        ("PARAAMR_RELEASE_URL", "http://127.0.0.1:9/releases"),
                        ("HF_HUB_OFFLINE", "0"),
                    )
                },
            ),
        ],
    )

    # convert --------------------------------------------------------------------------------
    good = {"in.jsonl": release()}
    at = (FILE, "out")
    to = ("in.jsonl", FILE)
    cases += rows(
        "convert",
        ("convert",),
        [
            *input_cases(
                at,
                "in.jsonl",
                release(),
                "missing empty empty-folder invalid-utf8 garbage garbage-parquet truncated-gz truncated-zip"
                " pipe",
                expect={"empty": OK_OR_ERR},
            ),
            bad_file("malformed-json", at, "in.jsonl", release()[:-3] + b"\n"),
            bad_file("sentences", at, "in.txt", text_lines(), names=SENTENCES_NOT_A_CORPUS),
            # before: 'line 1: invalid UTF-8 at byte 0', as if JSON lines
            bad_file("xz", at, "in.jsonl.xz", lzma.compress(release()), names="in.jsonl.xz: a .xz archive"),
            bad_file("wrong-column", at, "in.jsonl", jsonl([{"body": "x", "paraphrases": []}])),
            bad_file("nan-perplexity", at, "in.jsonl", release().replace(b"20.0", b"NaN", 1)),  # a traceback
            bad_file("negative-perplexity", at, "in.jsonl", release().replace(b"20.0", b"-20.0", 1)),
            bad_file("long-line", at, "in.jsonl", release([LONG_TEXT], repeat=1), OK),
            *output_cases(
                to,
                good,
                "output-under-file output-read-only output-disk-full output-proc output-user-folder",
                full="convert",
            ),
            bad_file("output-user-file-jsonl", to, "out.jsonl", b"mine\n", beside=good),
            ("output-a-file-name", ["in.jsonl", "o.parquet"], good, USAGE, "o.parquet: a .parquet file name"),
            ("private-without-push", ["in.jsonl", "out", "--private"], good, USAGE, "go with --push-to-hub"),
            *option_cases(
                ["in.jsonl", "out"],
                good,
                ERR,
                [("max-shard-size", "zero", "0"), ("max-shard-size", "junk", "lots")],
            ),
            ("broken-pipe", ["in.jsonl", "out"], good, PIPE, None, {"how": "pipe"}),
            # options of the other kind of OUTPUT (before: accepted, doing nothing, exit 0)
            ("jsonl-license", [*to[:1], "o.jsonl", "--license", "mit"], good, USAGE, "--license: only with"),
            ("folder-all-fields", [*to[:1], "out", "--all-fields"], good, USAGE, "--all-fields: only with"),
        ],
    )

    # stats ----------------------------------------------------------------------------------
    good = {"in.jsonl": release()}
    at = (FILE, "--no-plots")
    cases += rows(
        "stats",
        ("stats",),
        [
            *input_cases(
                at,
                "in.jsonl",
                release(),
                "missing empty empty-folder invalid-utf8 garbage garbage-parquet truncated-gz truncated-zip"
                " pipe",
                expect={"empty": OK_OR_ERR},
            ),
            bad_file("malformed-json", at, "in.jsonl", release()[:-3] + b"\n"),
            bad_file("sentences", at, "in.txt", text_lines(), names=SENTENCES_NOT_A_CORPUS),
            # before: 'line 1: invalid UTF-8 at byte 0', as if JSON lines
            bad_file("xz", at, "in.jsonl.xz", lzma.compress(release()), names="in.jsonl.xz: a .xz archive"),
            bad_file("wrong-column", at, "in.jsonl", jsonl([{"body": "x"}])),
            bad_file("long-line", at, "in.jsonl", release([LONG_TEXT], repeat=1), OK),
            *output_cases(
                ("in.jsonl", "--plots", FILE),
                good,
                "plots-under-file plots-read-only plots-disk-full plots-proc",
                out="plots",
                full="stats",
            ),
            (
                "plots-user-files",
                ["in.jsonl", "--plots", "plots"],
                {**good, "plots/perplexity.png": b"my png", "plots/paraphrases_per_source.png": b"my png"},
                OK_OR_ERR,
                "plots",
            ),
            ("broken-pipe", ["in.jsonl", "--json", "--no-plots"], good, PIPE, None, {"how": "pipe"}),
            ("overwrite-no-plots", ["in.jsonl", "--overwrite"], good, USAGE, "--overwrite: only with"),
            # before: 'paraamr stats: invalid argument', naming no file
            ("proc-file", ["/proc/self/status", "--no-plots"], good, ERR, "/proc/self/status: cannot seek"),
        ],
    )

    # evaluate -------------------------------------------------------------------------------
    good = {"in.tsv": PAIRS_TSV}
    nop = ["--no-plots", "--no-progress"]
    at = (FILE, *nop)
    cases += rows(
        "evaluate",
        ("evaluate",),
        [
            *input_cases(at, "in.tsv", PAIRS_TSV, "missing empty empty-folder invalid-utf8 pipe"),
            bad_file("garbage", at, "in.jsonl", GARBAGE),
            *input_cases(at, "in.tsv", PAIRS_TSV, "truncated-gz"),
            bad_file("malformed-tsv", at, "in.tsv", b"only one column\n"),
            bad_file("hub-offline", at, "no-such-org/no-such-data", MISSING, names=UNREACHABLE),
            *option_cases(
                ["in.tsv", *nop],
                good,
                ERR,
                [("sample", "zero", "0"), ("sample", "negative", "-3"), ("batch-size", "zero", "0")],
            ),
            *output_cases(
                ("in.tsv", "--no-progress", "--plots", FILE),
                good,
                "plots-under-file plots-read-only",
                out="plots",
            ),
            ("overwrite-no-plots", ["in.tsv", *nop, "--overwrite"], good, USAGE, "--overwrite: only with"),
            (
                "no-pos-corenlp",
                ["in.tsv", *nop, "--parser", "http://127.0.0.1:9", "--no-pos"],
                good,
                USAGE,
                "--no-pos: only with --parser link-grammar",
            ),
        ],
    )

    # generate (paraamr generate) and generate.py --------------------------------------------------
    models = (*MODELS, "--no-progress")
    at = ("--input", FILE, "--output", "out")
    to = ("--input", "in.txt", "--output", FILE)
    args = put(at, "in.txt")
    good = {"in.txt": text_lines()}
    for command, prefix, how in (
        ("generate", ("generate", *models), "inproc"),
        ("generate.py", models, "generate.py"),
    ):
        specs = [
            *input_cases(at, "in.txt", text_lines(), "missing directory garbage-parquet empty-parquet pipe"),
            bad_file("dataset-pipe", ("--dataset", FILE, "--output", "out"), "d", FIFO, names="d: a pipe"),
            bad_file(
                "dataset-hub-offline",
                ("--dataset", FILE, "--output", "out"),
                "org/ds",
                MISSING,
                names=f"org/ds (split train): {UNREACHABLE}",
            ),
            bad_file("gzip", at, "in.txt.gz", gzip.compress(text_lines()), names="in.txt.gz: a .gz archive"),
            bad_file(  # before: read as PENMAN, one input failure
                "amr-gzip",
                ("--amr-input", FILE, "--output", "out"),
                "in.amr.gz",
                gzip.compress(b"(b / boy)\n"),
                names="in.amr.gz: a .gz archive",
            ),
            bad_file("utf-16", at, "in.txt", text_lines().decode().encode("utf-16"), names="in.txt: UTF-16"),
            *output_cases(to, good, "output-under-file output-user-folder"),
            ("parse-batch-size-zero", [*args, "--parse-batch-size", "0"], good, ERR, "batch"),
            ("unknown-option", [*args, "--bogus"], good, USAGE, "--bogus"),
        ]
        if command == "generate":
            specs += [
                *input_cases(
                    at,
                    "in.txt",
                    text_lines(),
                    "empty invalid-utf8 truncated-parquet malformed-json",
                    expect={"empty": OK_OR_ERR, "invalid-utf8": OK, "malformed-json": OK_OR_ERR},
                ),
                bad_file("wrong-column-jsonl", at, "in.jsonl", jsonl([{"body": "x"}]), names="text"),
                bad_file("wrong-column-csv", at, "in.csv", b"body\nx\n", names="text"),
                bad_file(
                    "csv-field-over-limit", at, "in.csv", b'text\n"' + b"x" * 200_000 + b'"\n', OK_OR_ERR
                ),
                bad_file("long-line", at, "in.txt", text_lines([LONG_TEXT, *SENTENCES]), OK),
                *output_cases(
                    to,
                    good,
                    "output-read-only output-disk-full output-proc output-user-file",
                    full="generate",
                ),
                *option_cases(
                    args,
                    good,
                    ERR,
                    [
                        ("max-chars", "negative", "-1"),
                        ("task-rows", "zero", "0"),
                        ("max-shard-size", "junk", "lots"),
                        ("window", "zero", "0"),
                        ("foci", "negative", "-1"),
                    ],
                ),
                bad_file(
                    "empty-model-folder", (*args, "--parser-model", FILE), "emptymodel", None, beside=good
                ),
                bad_file("lm-model-is-a-file", (*args, "--lm-model", FILE), "lm.bin", GARBAGE, beside=good),
            ]
        cases += rows(command, prefix, specs, how=how)
    cases += rows(
        "generate.py", models, [bad_file("script-missing-input", at, "missing.txt", MISSING, how="script")]
    )

    # push -----------------------------------------------------------------------------------
    cases += rows(
        "push",
        ("push", "org/name"),
        [
            ("missing", ["missing"], {}, ERR, "missing: no such folder"),
            ("empty-folder", ["data"], {"data": None}, ERR, "data"),
            # before: 'afile: no such folder'
            ("a-file", ["afile"], {"afile": b"x"}, ERR, "afile: not a folder"),
            ("not-a-dataset", ["data"], {"data/notes.txt": b"x"}, ERR, "data"),
        ],
    )

    # finalize -------------------------------------------------------------------------------
    cases += rows(
        "finalize",
        ("finalize",),
        [
            ("missing", ["missing"], {}, ERR, "missing: no such folder"),
            ("empty-folder", ["data"], {"data": None}, ERR, "data"),
            ("a-file", ["afile"], {"afile": b"x"}, ERR, "afile: a file, not a run folder"),
            ("not-a-run", ["data"], {"data/notes.txt": b"x"}, ERR, "data"),
            ("broken-settings", ["data"], {"data/.paraamr/settings.json": b"{not json"}, ERR, "data"),
            ("settings-a-list", ["data"], {"data/.paraamr/settings.json": b"[1]"}, ERR, "data"),
        ],
    )

    # quality train / score ------------------------------------------------------------------
    train = (
        "quality",
        "train",
        "--max-triplets",
        "4",
        "--no-natural",
        "--epochs",
        "1",
        "--batch-size",
        "4",
        "--no-progress",
    )
    at = ("--input", FILE, "--output", "model")
    args = put(at, "in.txt")
    records = ("--input", "in.txt", "--records", FILE, "--output", "model")
    good = {"in.txt": text_lines()}
    cases += rows(
        "quality train",
        train,
        [
            *input_cases(
                at,
                "in.txt",
                text_lines(),
                "missing empty directory garbage pipe",
                expect={"garbage": OK_OR_ERR},
            ),
            bad_file("records-garbage", records, "r.jsonl", GARBAGE, beside=good),
            bad_file("records-pipe", records, "r.jsonl", FIFO, names=f"r.jsonl: {NOT_A_FILE}", beside=good),
            bad_file("records-truncated-parquet", records, "r.parquet", TRUNCATED_PARQUET, beside=good),
            *output_cases(("--input", "in.txt", "--output", FILE), good, "output-under-file", out="model"),
            (
                "output-user-folder",
                args,
                {**good, "model/README.md": b"# mine\n", "model/config.json": b"{}\n"},
                ERR,
                "model",
            ),
            *option_cases(args, good, ERR, [("epochs", "zero", "0"), ("batch-size", "zero", "0")]),
            # settings the mode does not use (before: accepted and ignored, exit 0)
            ("margin-in-cross-mode", [*args, "--margin", "0.7"], good, USAGE, "--margin 0.7: not used in"),
            ("paired-in-bi-mode", [*args, "--mode", "bi", "--no-paired"], good, USAGE, "--paired False"),
            ("logit-margin-unpaired", [*args, "--no-paired", "--logit-margin", "1"], good, USAGE, "without"),
            ("natural-repeat-no-natural", [*args, "--natural-repeat", "3"], good, USAGE, "--natural-repeat"),
            bad_file(
                "long-line",
                at,
                "in.txt",
                text_lines([*SENTENCES, LONG_TEXT]),
                OK,
                how="subprocess",
                timeout=90.0,  # 14 s alone; 40 s ran out once under load (2 workers beside other suites)
            ),
        ],
    )
    at = ("--input", FILE, "--output", "o.jsonl")
    args = put(at, "in.jsonl")
    good = {"in.jsonl": SCORE_ROWS}
    cases += rows(
        "quality score",
        ("quality", "score"),
        [
            *input_cases(
                at,
                "in.jsonl",
                SCORE_ROWS,
                "missing empty directory invalid-utf8 garbage malformed-json pipe",
                expect={"empty": ERR},  # before: nothing written, exit 0
            ),
            bad_file("wrong-column", at, "in.jsonl", jsonl([{"text": "a"}]), names="para_text"),
            # before: "not valid UTF-8 at line 1 (byte 0xfd at offset 0)"
            bad_file("xz", at, "in.jsonl.xz", lzma.compress(SCORE_ROWS), names="in.jsonl.xz: a .xz archive"),
            bad_file("model-empty-folder", (*args, "--model", FILE), "m", None, beside=good),
            bad_file("model-a-file", (*args, "--model", FILE), "m.bin", GARBAGE, beside=good),
            (  # a config transformers cannot read: the loader's line (not an internal error)
                "model-unknown-type",
                [*args, "--model", "m"],
                {**good, "m/config.json": b'{"model_type": "nope"}'},
                ERR,
                "m: cannot load a bi quality model",
            ),
            *option_cases(args, good, ERR, [("batch-size", "zero", "0")]),
            ("output-empty", ["--input", "in.jsonl", "--output", ""], good, USAGE, "--output: an empty path"),
            (  # before: every row scored, then "'.o.1234-ab.tmp -> o: is a folder, not a file"
                "output-folder",
                ["--input", "in.jsonl", "--output", "o", "--overwrite"],
                {**good, "o/keep": b"mine"},
                ERR,
                "--output o: is a folder",
            ),
            (  # before: --overwrite replaced the input with the scores
                "output-is-input",
                ["--input", "in.jsonl", "--output", "in.jsonl", "--overwrite"],
                good,
                ERR,
                "--output in.jsonl: is the input",
            ),
        ],
    )

    # models ---------------------------------------------------------------------------------
    cases += rows(
        "models",
        ("models",),
        [
            ("path-unknown", ["path", "no-such-model", "--kind", "parser"], {}, ERR, "no-such-model"),
            ("path-empty-folder", ["path", "./m", "--kind", "parser"], {"m": None}, ERR, "m"),
            (
                "download-unreachable-url",
                ["download", "org/name", "--url", "http://127.0.0.1:9/model.tar.gz", "--cache-dir", "cache"],
                {},
                ERR,
                "org/name",
            ),
            ("make-tiny-onto-file", ["make-tiny", "afile"], {"afile": b"x"}, ERR, "afile"),
            # empty paths (before: make-tiny wrote into the current folder; augment's Hub loader raised
            # 'dataset_name should be specified'; quality score took '' for the current folder)
            ("make-tiny-empty", ["make-tiny", ""], {}, USAGE, "an empty path"),
            # before: checked after the download ("expected zzz (deleted; run again)")
            ("download-md5-junk", ["download", "x", "--url", "http://h/x", "--md5", "z"], {}, USAGE, "md5"),
            ("list-cache-dir-a-file", ["list", "--cache-dir", "f"], {"f": b"x"}, USAGE, "f: not a folder"),
            ("make-tiny-read-only", ["make-tiny", "{ro}/tiny"], {}, ERR, "tiny"),
            ("make-tiny-disk-full", ["make-tiny", "{full}/tiny"], {}, ERR, "tiny"),
            ("make-tiny-user-folder", ["make-tiny", "t"], {"t/parser/a": b"mine"}, ERR, "parser: exists"),
            ("list-broken-pipe", ["list", "--cache-dir", "cache"], {}, PIPE, None, {"how": "pipe"}),
        ],
    )

    # env ------------------------------------------------------------------------------------
    cases += rows(
        "env",
        ("env",),
        [
            ("cache-is-a-file", ["--cache-dir", "afile"], {"afile": b"x"}, OK, None),
            ("broken-pipe", [], {}, PIPE, None, {"how": "pipe"}),
        ],
    )

    # refocus --------------------------------------------------------------------------------
    many = AMR * 3000  # more than a pipe buffer of variants
    at = (FILE,)
    cases += rows(
        "refocus",
        ("refocus",),
        [
            *input_cases(at, "in.amr", AMR, "missing empty directory", expect={"empty": OK}),
            # a bad graph is reported (one line each), the others refocused
            bad_file(
                "invalid-utf8", at, "in.amr", AMR.replace(b"big", b"b\xffg"), names="graph", single=False
            ),
            bad_file("garbage", at, "in.amr", GARBAGE, names="graph", single=False),
            bad_file("junk-after-graph", at, "in.amr", b"(x / y))) extra )\n", names="graph", single=False),
            # before: variants written from them, exit 0, and penman's own warning lines on stderr
            *(
                bad_file(f"missing-{what}", at, "in.amr", graph, names=names, single=False)
                for what, graph, names in (
                    ("concept", b"(a / b :ARG0 (c / ))\n", "c has a '/' without a concept"),
                    ("target", b"(a / b :ARG0 (c / f :ARG1))\n", "c has :ARG1 without a target"),
                )
            ),
            bad_file("long-line", at, "in.amr", b"(x / " + b"y" * 100_000 + b")\n", OK),
            # before: read as PENMAN text, one graph failure ("invalid UTF-8"), exit 1
            bad_file("xz", at, "in.amr.xz", lzma.compress(AMR), names="in.amr.xz: a .xz archive"),
            ("foci-negative", ["in.amr", "--foci", "-1"], {"in.amr": AMR}, USAGE, "--foci"),
            ("seed-negative", ["in.amr", "--seed", "-1"], {"in.amr": AMR}, USAGE, "--seed"),  # was taken
            ("broken-pipe", ["in.amr"], {"in.amr": many}, PIPE, None, {"how": "pipe"}),
        ],
    )

    # export ---------------------------------------------------------------------------------
    good = {"in.jsonl": release()}
    long_para = jsonl([{"text": "Long .", "paraphrases": [{"para_text": LONG_TEXT, "perplexity": 1.0}]}])
    at = ("simcse", FILE, "out.csv")
    to = ("simcse", "in.jsonl", FILE)
    cases += rows(
        "export",
        ("export",),
        [
            *input_cases(
                at,
                "in.jsonl",
                release(),
                "missing empty directory invalid-utf8 garbage-parquet malformed-json pipe",
            ),
            bad_file("surrogate", at, "in.jsonl", SURROGATE_PARA),
            bad_file("sentences", at, "in.txt", text_lines(), names=SENTENCES_NOT_A_CORPUS),
            bad_file("nested-zip", at, "in.zip", NESTED_ZIP),
            bad_file("bomb", at, "in.gz", BOMB),
            bad_file("hub-offline", at, "no-such-org/no-such-data", MISSING, names=UNREACHABLE),
            *output_cases(to, good, "output-user-file", out="out.csv"),
            bad_file("output-folder", to, "out", None, beside=good),
            *output_cases(
                to,
                good,
                "output-under-file output-read-only output-disk-full output-proc",
                out="out.csv",
                full="export.csv",
            ),
            ("output-is-input", ["simcse", "in.jsonl", "in.jsonl", "--overwrite"], good, ERR, "in.jsonl"),
            (
                "ppl-negative",
                ["simcse", "in.jsonl", "o.csv", "--max-perplexity", "-1"],
                good,
                USAGE,
                "--max-perplexity",
            ),
            ("none-kept", ["scpn", "in.jsonl", "o.csv", "--max-perplexity", "1"], good, ERR, "in.jsonl"),
            ("parser-url", ["scpn", "in.jsonl", "o.csv", "--parser", "http://[::1"], good, USAGE, "URL"),
            (  # before: no way past a malformed line; the others are written, the line counted
                "skip-invalid",
                ["simcse", "in.jsonl", "o.csv", "--skip-invalid"],
                {"in.jsonl": release()[:-3] + b"\n" + release()},
                OK,
                None,
            ),
            (  # before: the CoreNLP trees kept their tags, without a word
                "no-pos-corenlp",
                ["scpn", "in.jsonl", "o.csv", "--parser", "http://127.0.0.1:9", "--no-pos"],
                good,
                USAGE,
                "--no-pos: only with --parser link-grammar",
            ),
            (  # before: 'afile: already exists', no option named
                "cache-dir-a-file",
                ["scpn", "in.jsonl", "o.csv", "--cache-dir", "afile"],
                {**good, "afile": b"x"},
                USAGE,
                "--cache-dir afile: not a folder",
            ),
            *[  # before: an internal error ('' has an empty name); files named '-' or 'd' (for d/)
                (f"output-name-{n}", ["simcse", "in.jsonl", out], good, USAGE, "not a file name")
                for n, out in enumerate(("", "-", "d/"))
            ],
            # before: an internal error ('PosixPath('.') has an empty name')
            ("output-dot", ["simcse", "in.jsonl", "."], good, ERR, ".: is a folder"),
            (  # before: the user's link was replaced by the CSV, exit 0
                "output-dangling-link",
                ["simcse", "in.jsonl", "o.csv"],
                {**good, "o.csv": Link("missing.csv")},
                ERR,
                "o.csv: exists (pass --overwrite",
            ),
            (
                "corenlp-down",
                ["scpn", "in.jsonl", "o.csv", "--parser", "http://127.0.0.1:9"],
                good,
                ERR,
                "127.0.0.1:9",
            ),
            (
                "scpn-long-paraphrase",
                ["scpn", "in.jsonl", "o.csv", "--parser", "link-grammar:no-pos"],
                {"in.jsonl": long_para + release(repeat=1)},
                OK,
                None,
            ),
        ],
    )
    return cases + limit_cases() + value_and_state_cases()


def limit_cases() -> list[Case]:
    """Issue 28's cases (text a dataset cannot hold, symlinks, bombs, oversize graphs, names,
    folders that hold no dataset), and more of the same kinds."""
    gen = ("generate", *MODELS, "--no-progress")
    at = ("--input", FILE, "--output", "out")
    amr = ("--amr-input", FILE, "--output", "out")
    cases = rows(
        "generate",
        gen,
        [
            bad_file("lone-surrogate", at, "in.jsonl", SURROGATE_ROWS, OK),
            bad_file("nul-in-text", at, "in.jsonl", NUL_ROWS, OK),
            bad_file("amr-950-deep", amr, "in.amr", deep_amr(950), OK),
            bad_file("amr-2000-nodes", amr, "in.amr", wide_amr(2000), OK),
            *option_cases(
                put(amr, "in.amr"), {"in.amr": AMR}, USAGE, [("max-amr-depth", "past-the-stack", "950")]
            ),
            *option_cases(
                put(at, "in.txt"),
                {"in.txt": text_lines()},
                USAGE,
                [
                    ("max-amr-nodes", "zero", "0"),
                    ("split", "newline", "a\nb"),
                    ("split", "dotdot", "../x"),
                    ("push-to-hub", "bad-id", "a//b"),
                ],
            ),
            # options that the input or the executor make do nothing (before: accepted, exit 0)
            *(
                (name, [*put(at, "in.txt"), *extra], {"in.txt": text_lines()}, USAGE, message)
                for name, extra, message in (
                    ("text-column-txt", ["--text-column", "body"], "--text-column: only with a jsonl"),
                    ("dataset-config-input", ["--dataset-config", "c"], "--dataset-config: only with"),
                    ("workers-no-executor", ["--workers", "2"], "--workers: only with --executor local or"),
                    (
                        "slurm-cpus-local",
                        ["--executor", "local", "--slurm-cpus", "2"],
                        "--slurm-cpus: only with --executor slurm",
                    ),
                )
            ),
            (
                "input-format-amr",
                [*put(amr, "in.amr"), "--input-format", "csv"],
                {"in.amr": AMR},
                USAGE,
                "--input-format: only with --input",
            ),
        ],
    )
    good = {"in.jsonl": release()}
    at = (FILE, "out")
    cases += rows(
        "convert",
        ("convert",),
        [
            bad_file("surrogate-para-text", at, "in.jsonl", SURROGATE_PARA, names="in.jsonl, line 121"),
            bad_file("surrogate-para-text-skip", (*at, "--skip-invalid"), "in.jsonl", SURROGATE_PARA, OK),
            bad_file(
                "surrogate-to-jsonl",
                (FILE, "o.jsonl"),
                "in.jsonl",
                SURROGATE_PARA,
                names="in.jsonl, line 121",
            ),
            bad_file(
                "nul-in-text",
                at,
                "in.jsonl",
                NUL_ROWS.replace(b'."}', b'.", "paraphrases": []}'),
                names="line 2",
            ),
            ("max-chars", ["in.jsonl", "out", "--max-chars", "10"], good, ERR, "--max-chars 10"),
            (  # before: the user's link was replaced by the JSON lines, exit 0
                "output-dangling-link",
                ["in.jsonl", "o.jsonl"],
                {**good, "o.jsonl": Link("missing.jsonl")},
                ERR,
                "o.jsonl: exists (pass --overwrite",
            ),
            ("max-chars-zero", ["in.jsonl", "out", "--max-chars", "0"], good, USAGE, "--max-chars"),
            (
                "overwrite-readme-only",
                ["in.jsonl", "out", "--overwrite"],
                {**good, "out/README.md": b"# mine\n"},
                ERR,
                "holds no dataset",
            ),
            bad_file(
                "gzip-bomb", at, "in.jsonl.gz", BOMB, names="in.jsonl.gz: unpacks to more than 100 times"
            ),
            bad_file("gzip-bomb-skip-invalid", (*at, "--skip-invalid"), "in.jsonl.gz", BOMB),
            bad_file(
                "gzip-long-line",
                (*at, "--max-line-bytes", "1MB", "--max-unpack-ratio", "10000"),
                "in.jsonl.gz",
                BOMB,
                names="longer than 1000000 bytes",
            ),
            bad_file("nested-zip", at, "in.zip", NESTED_ZIP, names="inner.zip: an archive inside an archive"),
            (
                "unpack-ratio-zero",
                ["in.jsonl", "out", "--max-unpack-ratio", "0"],
                good,
                USAGE,
                "--max-unpack-ratio",
            ),
            *option_cases(["in.jsonl", "out"], good, USAGE, [("max-unpacked", "junk", "lots")]),
            ("repo-id-bad", ["in.jsonl", "out", "--push-to-hub", "a//b"], good, USAGE, "--push-to-hub"),
            # before: the card of the push named the other repo; a one-part id, a card loading "x"
            (
                "repo-ids-differ",
                ["in.jsonl", "out", "--repo-id", "a/b", "--push-to-hub", "c/d"],
                good,
                USAGE,
                "--repo-id a/b, --push-to-hub c/d",
            ),
            ("repo-id-one-part", ["in.jsonl", "out", "--push-to-hub", "x"], good, USAGE, "give ORG/NAME"),
            # HF_HUB_OFFLINE=1 (the tests' own): before, the whole run, then "upload ... failed"
            ("push-offline", ["in.jsonl", "out", "--push-to-hub", "me/x"], good, USAGE, "HF_HUB_OFFLINE is"),
        ],
    )
    at = (FILE, "--no-plots")
    secret = {"secret.png": b"my secret\n"}
    cases += rows(
        "stats",
        ("stats",),
        [
            bad_file("gzip-bomb", at, "in.jsonl.gz", BOMB, names="in.jsonl.gz: unpacks to more than"),
            bad_file("nested-zip", at, "in.zip", NESTED_ZIP, names="inner.zip"),
            bad_file("surrogate-para-text", at, "in.jsonl", SURROGATE_PARA, names="in.jsonl, line 121"),
            (
                "plots-symlink",
                ["in.jsonl", "--plots", "plots"],
                {**good, **secret, "plots/perplexity.png": Link("../secret.png")},
                ERR,
                "plots/perplexity.png exists",
            ),
            (
                "plots-symlink-overwrite",
                ["in.jsonl", "--plots", "plots", "--overwrite"],
                {**good, **secret, "plots/perplexity.png": Link("../secret.png")},
                OK,
                None,
            ),
            (
                "plots-broken-symlink",
                ["in.jsonl", "--plots", "plots"],
                {**good, "plots/perplexity.png": Link("../elsewhere.png")},
                ERR,
                "plots/perplexity.png exists",
            ),
            (
                "plots-name-is-a-folder",
                ["in.jsonl", "--plots", "plots", "--overwrite"],
                {**good, "plots/perplexity.png": None},
                ERR,
                "is a folder",
            ),
        ],
    )
    aug = (
        "augment",
        "--method",
        "reda",
        "--n",
        "1",
        "--seed",
        "0",
        "--dataset",
        "in.jsonl",
        "--output",
        "out",
    )
    para = ("--method", "paraamr", "--paraphrases", "p.jsonl")
    good = {"in.jsonl": AUGMENT_ROWS}
    cases += rows(
        "augment",
        aug,
        [
            ("paraphrases-surrogate", para, {**good, "p.jsonl": SURROGATE_PARA}, ERR, "p.jsonl, line 121"),
            ("overwrite-user-folder", ["--overwrite"], {**good, **USER_FOLDER}, ERR, "out"),
            (
                "overwrite-readme-only",
                ["--overwrite"],
                {**good, "out/README.md": b"# paraamr augment\n"},
                ERR,
                "out",
            ),
            ("split-newline", ["--split", "a\nb"], good, USAGE, "--split"),
            bad_file("paraphrases-gzip-bomb", (*para[:3], FILE), "p.jsonl.gz", BOMB, beside=good),
        ],
    )
    cases += rows(
        "push",
        ("push", "org/name"),
        [
            (
                "outward-link",
                ["d"],
                {**DATASET, "secret.txt": b"secret\n", "d/notes.txt": Link("../secret.txt")},
                ERR,
                "d/notes.txt",
            ),
            (
                "outward-folder-link",
                ["d"],
                {**DATASET, "s/x.txt": b"secret\n", "d/more": Link("../s")},
                ERR,
                "d/more",
            ),
        ],
    )
    cases += rows("push", ("push",), [("bad-repo-id", ["a//b", "d"], DATASET, USAGE, "REPO_ID")])
    cases += rows(
        "finalize",
        ("finalize",),
        [
            ("user-folder", ["out"], USER_FOLDER, ERR, "out"),
            ("a-dataset-not-a-run", ["d"], DATASET, ERR, "d"),
        ],
    )
    cases += rows(
        "refocus",
        ("refocus",),
        [
            bad_file(
                "amr-950-deep",
                [FILE],
                "in.amr",
                deep_amr(950),
                names="graph 3: nested more than 100",
                single=False,
            ),
            bad_file(
                "amr-2000-nodes",
                [FILE],
                "in.amr",
                wide_amr(2000),
                names="graph 3: more than 500 nodes",
                single=False,
            ),
            *option_cases(["in.amr"], {"in.amr": AMR}, USAGE, [("max-amr-nodes", "zero", "0")]),
        ],
    )
    return cases


#: An unfinished run cut into shards: task 0 of shard 0 of 2 wrote a part, nobody finalized it.
UNFINISHED = {
    "run/.paraamr/settings.json": b'{"record": {}, "shards": 2, "input_identity": null}',
    "run/.paraamr/parts/default/train/t000000-00000.parquet": parquet({"id": ["a"]}),
}
SECRET = "s3cretPassw0rd"


def value_and_state_cases() -> list[Case]:
    """Issue 41's cases that one command shows (numbers that are not numbers, a repo id refused
    after the work, a model of another kind removed, dictionaries with text a dataset cannot hold,
    a run read before it is finalized, output left by a failed command, a password printed), and
    more of the same kinds. The cases that need a fault (a silent Hub, an edited input between
    two runs, a full disk mid-write) are in ``test_hostile_faults.py``."""
    gen = ("generate", *MODELS, "--no-progress", "--input", "in.txt", "--output", "out")
    good = {"in.txt": text_lines()}
    cases = rows(
        "generate",
        gen,
        option_cases(
            [],
            good,
            USAGE,
            [
                ("max-perplexity", "nan", "nan"),
                ("max-perplexity", "negative", "-1"),
                ("max-relative-perplexity", "nan", "nan"),
                ("min-similarity", "inf", "inf"),
                ("min-quality", "nan", "NaN"),
                ("validation-fraction", "nan", "nan"),
                ("task-rows", "nan", "nan"),
                ("task-rows", "inf", "inf"),
                ("lm-batch-size", "negative", "-4"),
                ("num-beams", "zero", "0"),
                ("license", "empty", ""),  # before: the card said license: '' and the Hub refused the push
                ("license", "uppercase", "MIT"),
            ],
            absent=("out",),
        ),
    )
    cases += rows(  # before: every row went to test, and the summary said test_fraction 0.3
        "generate",
        gen,
        [
            ("split-fraction", ["--split", "test", "--test-fraction", ".3"], good, USAGE, "--test-fraction"),
            # before: a dry run said nothing of it (the models refused it once loaded)
            (
                "int8-on-torch",
                ["--backend", "transformers", "--compute-type", "int8", "--dry-run"],
                good,
                USAGE,
                "--compute-type int8",
            ),
        ],
    )
    cases += rows(
        "convert",
        ("convert", "in.jsonl", "out"),
        option_cases([], {"in.jsonl": release()}, USAGE, [("license", "spaces", "cc by")], absent=("out",)),
    )
    cases += rows(  # a file as --dataset: the option to use instead (before: "Couldn't reach it on the Hub")
        "generate",
        ("generate", *MODELS, "--no-progress", "--output", "out"),
        [("dataset-a-file", ["--dataset", "in.txt"], good, ERR, "--input in.txt", {"absent": ("out",)})],
    )
    cases += rows(  # the device named (before: "parser model ... cannot be loaded (RuntimeError: ...)")
        "generate",
        gen,
        [
            ("device-unknown", ["--device", "gpu0"], good, USAGE, "gpu0", {"absent": ("out",)}),
            ("device-absent-cuda", ["--device", "cuda:7"], good, USAGE, "cuda:7", {"absent": ("out",)}),
        ],
    )
    aug = ("augment", "--dataset", "in.jsonl", "--output", "out", "--n", "1", "--seed", "0")
    synonyms = ("--method", "reda", "--synonyms", FILE)
    lone = b'{"cat": ["fe\\ud800line"], "dog": ["hound"]}'
    nul = b'{"cat": ["fe\\u0000line"], "dog": ["hound"]}'
    good = {"in.jsonl": AUGMENT_ROWS}
    cases += rows(
        "augment",
        aug,
        [
            *option_cases(
                ["--method", "paraamr"],
                good,
                USAGE,
                [("max-perplexity", "nan", "nan"), ("max-perplexity", "negative", "-5")],
            ),
            ("num-proc-zero", ["--method", "reda", "--num-proc", "0"], good, USAGE, "--num-proc"),
            # a file of the user's at --save-lm stays (before: replaced by the LM without --overwrite)
            ("save-lm-exists", ["--method", "reda-ng", "--save-lm", "lm.parquet"],
             {**good, "lm.parquet": b"mine"}, USAGE, "--save-lm lm.parquet", {"absent": ("out",)}),
            bad_file("dictionary-lone-surrogate", synonyms, "syn.json", lone, beside=good, absent=("out",)),
            bad_file("dictionary-nul", synonyms, "syn.json", nul, beside=good, absent=("out",)),
            bad_file(
                "dictionary-lines-nul",
                synonyms,
                "syn.txt",
                b"cat\tfe\x00line\ndog\thound\n",
                names="syn.txt: 1 bad synonym line(s): line 1",
                beside=good,
                absent=("out",),
            ),
        ],
    )
    cases += rows(
        "finalize",
        ("finalize",),
        [
            *option_cases(["run"], UNFINISHED, USAGE, [("wait", "nan", "nan"), ("wait", "negative", "-1")]),
            # refused before any work: the run, unfinished, is never looked at
            ("bad-push-id", ["run", "--push-to-hub", "bad id!!"], UNFINISHED, USAGE, "--push-to-hub"),
            ("bad-push-id-dataset", ["d", "--push-to-hub", "a//b"], DATASET, USAGE, "--push-to-hub"),
        ],
    )
    good = {"in.jsonl": release()}
    cases += rows(
        "convert",
        ("convert",),
        [
            ("unfinished-run", ["run", "out"], UNFINISHED, ERR, "paraamr finalize run", {"absent": ("out",)}),
            ("unfinished-run-to-jsonl", ["run", "o.jsonl"], UNFINISHED, ERR, "run", {"absent": ("o.jsonl",)}),
            bad_file(
                "bad-row-new-folder",
                (FILE, "new/out"),
                "in.jsonl",
                release() + b'{"text": 5}\n',
                names="line 121",
                absent=("new",),
            ),
            # a link to itself: cannot be opened
            bad_file(
                "unreadable-input-new-folder", (FILE, "out"), "in.jsonl", Link("in.jsonl"), absent=("out",)
            ),
            ("disk-full-new-folder", ["in.jsonl", "{full}/out"], good, ERR, "out"),
            (
                "jsonl-under-a-file",
                ["in.jsonl", "afile/x.jsonl"],
                {**good, "afile": b"x"},
                ERR,
                "afile is a file",
            ),
            *option_cases(["in.jsonl", "o"], good, USAGE, [("max-unpack-ratio", "nan", "nan")]),
        ],
    )
    cases += rows(
        "stats",
        ("stats", "--no-plots"),
        [
            ("unfinished-run", ["run"], UNFINISHED, ERR, "paraamr finalize run"),
            ("max-perplexity-nan", ["in.jsonl", "--max-perplexity", "nan"], good, USAGE, "--max-perplexity"),
            (
                "max-perplexity-inf-json",
                ["in.jsonl", "--max-perplexity", "inf", "--json"],
                good,
                USAGE,
                "--max-perplexity",
            ),
        ],
    )
    nop = ("--no-plots", "--no-progress")
    cases += rows(
        "evaluate",
        ("evaluate", "in.tsv", *nop),
        [
            (
                "state-settings-a-list",
                ["--state-dir", "s"],
                {"in.tsv": PAIRS_TSV, "s/.paraamr/evaluate/settings.json": b"[]"},
                ERR,
                "settings.json: not an evaluation state",
            ),
            (
                "state-settings-null",
                ["--state-dir", "s"],
                {"in.tsv": PAIRS_TSV, "s/.paraamr/evaluate/settings.json": b"null"},
                ERR,
                "settings.json: not an evaluation state",
            ),
            ("chunk-pairs-nan", ["--chunk-pairs", "nan"], {"in.tsv": PAIRS_TSV}, USAGE, "--chunk-pairs"),
            ("ted-height-zero", ["--ted-height", "0"], {"in.tsv": PAIRS_TSV}, USAGE, "--ted-height"),
            ("parser-unknown", ["--parser", "nonsense"], {"in.tsv": PAIRS_TSV}, USAGE, "--parser"),
            # before: an internal error ('expected non-negative integer') after all the scoring
            ("seed-negative", ["--sample", "2", "--seed", "-1"], {"in.tsv": PAIRS_TSV}, USAGE, "--seed"),
            *[  # before: a row of nan and exit 0 ('http://[::1': an internal error in export scpn)
                (f"parser-url-{n}", ["--parser", url], {"in.tsv": PAIRS_TSV}, USAGE, "not a server URL")
                for n, url in enumerate(("http://127.0.0.1:abc", "http://[::1", "http://a b", "http://"))
            ],
            ("device-absent-cuda", ["--device", "cuda:7"], {"in.tsv": PAIRS_TSV}, USAGE, "cuda:7"),
            *[  # named as an option (before: "in.tsv/.paraamr/...: unreadable state ([Errno 20] ...)")
                (f"{d}-a-file", [f"--{d}", "in.tsv"], {"in.tsv": PAIRS_TSV}, USAGE, f"--{d} in.tsv: not a")
                for d in ("state-dir", "cache-dir")
            ],
            # one line naming the server (before: every pair a failure row, a row of 0 pairs, exit 0)
            ("corenlp-down", ["--parser", "http://127.0.0.1:9"], {"in.tsv": PAIRS_TSV}, ERR, "127.0.0.1:9"),
            # the references' file is named (before: the pairs' input was)
            ("references-not-utf8", ["--references", "refs.txt"], {"in.tsv": PAIRS_TSV, "refs.txt": GARBAGE},
             ERR, "refs.txt"),
            ("ted-height-negative", ["--ted-height", "-2"], {"in.tsv": PAIRS_TSV}, USAGE, "--ted-height"),
            # one source: no interval, printed as null (before: NaN, which is not JSON)
            ("sample-one-json", ["--sample", "1", "--json"], {"in.tsv": PAIRS_TSV}, OK, None),
            # before: "internal error: ValueError: compute type 'int8' needs the ctranslate2 backend"
            ("int8-on-torch", ["--backend", "transformers", "--compute-type", "int8"], {"in.tsv": PAIRS_TSV},
             USAGE, "compute type 'int8' needs the ctranslate2 backend"),
        ],
    )
    cases += rows(
        "evaluate",
        ("evaluate", *nop),
        [
            # before: "afile/.paraamr/evaluate/settings.json: cannot read ...; delete afile/.paraamr/evaluate"
            ("merge-a-file", ["--merge", "afile"], {"afile": b"x"}, ERR, "--merge afile: not a folder"),
            # before: the current folder, read as a folder of release files
            ("path-empty", [""], {"in.jsonl": release()}, USAGE, "PATH '': an empty path"),
            # every paraphrase above the threshold: named (before: "the processes scored chunks [], not []")
            ("max-perplexity-drops-all", ["in.jsonl", "--max-perplexity", "1"], {"in.jsonl": release()}, ERR,
             "in.jsonl"),
            ("max-perplexity-drops-all-of-two", ["in.jsonl", "b.jsonl", "--max-perplexity", "1"],
             {"in.jsonl": release(), "b.jsonl": release()}, ERR, "in.jsonl"),
        ],
    )
    score = ("quality", "score", "--input", "in.jsonl", "--output", "o.jsonl")
    cases += rows(
        "quality score",
        score,
        [
            *option_cases(
                [],
                {"in.jsonl": SCORE_ROWS},
                USAGE,
                [("threshold", "nan", "nan"), ("threshold", "out-of-range", "7")],
            ),
            # one class of labels (or one row): every row written, the separation null, exit 0
            (
                "labels-one-class",
                [],
                {"in.jsonl": jsonl([{"text": t, "para_text": t + " !", "label": 1} for t in SENTENCES])},
                OK,
                None,
            ),
            (
                "labels-one-row",
                [],
                {"in.jsonl": jsonl([{"text": SENTENCES[0], "para_text": "A cat sat .", "label": 0}])},
                OK,
                None,
            ),
            (  # named by file and line before any scoring (before: "labels[1] is 2", the output written)
                "label-out-of-range",
                [],
                {"in.jsonl": jsonl([{"text": t, "para_text": t, "label": n} for n, t in enumerate("abc")])},
                ERR,
                "in.jsonl:3: label 2",
                {"absent": ("o.jsonl",)},
            ),
        ],
    )
    cases += rows(
        "quality train",
        ("quality", "train", "--input", "in.txt", "--output", "model", "--no-progress"),
        option_cases(
            [],
            {"in.txt": text_lines()},
            USAGE,
            [
                ("validation", "nan", "nan"),
                ("lr", "inf", "inf"),
                ("threads", "negative", "-2"),
                # numpy's seeding refuses them, after minutes of triplet building (before: an internal error)
                ("seed", "negative", "-1"),
                ("seed", "above-numpy", str(2**32)),
            ],
        ),
    )
    cases += rows(
        "quality train",
        ("quality", "train", "--input", "in.txt", "--output", "model", "--no-progress"),
        [  # a file of the user's at --save-triplets stays (before: replaced after the triplets were drawn)
            ("save-triplets-exists", ["--save-triplets", "t.jsonl"],
             {"in.txt": text_lines(), "t.jsonl": b"mine"}, USAGE, "--save-triplets t.jsonl"),
        ],
    )
    cases += rows(
        "models",
        ("models",),
        [
            # the named model is a parser: --kind lm removes nothing (before: the parser went)
            (
                "rm-other-kind",
                ["rm", "parse_xfm_bart_large", "--kind", "lm", "--cache-dir", "cache"],
                {"cache/models/parse_xfm_bart_large/config.json": b"{}"},
                USAGE,
                "is a parser model, not --kind lm",
            ),
            (
                "rm-fetched-url-model-as-lm",
                ["rm", "mine", "--kind", "lm", "--cache-dir", "cache"],
                {"cache/models/mine/amrlib_meta.json": b"{}"},
                USAGE,
                "mine",
            ),
        ],
    )
    cases += rows(
        "env",
        ("env",),
        [
            (
                "password-in-endpoint",
                [],
                {},
                OK,
                None,
                {"env": (("HF_ENDPOINT", f"https://me:{SECRET}@hub.example.org"),), "secret": SECRET},
            ),
            (
                "token-in-release-url",
                [],
                {},
                OK,
                None,
                {"env": (("PARAAMR_RELEASE_URL", f"https://x.org/r?token={SECRET}"),), "secret": SECRET},
            ),
        ],
    )
    cases += rows(
        "push",
        ("push",),
        [("bad-repo-id-spaces", ["bad id!!", "d"], DATASET, USAGE, "REPO_ID")],
    )
    return cases


CASES = table()


#: Rows that take over 10 s on 2 cores.
SLOW = {"quality train|long-line"}


def _params():
    for case in CASES:
        yield pytest.param(case, id=case.id, marks=pytest.mark.slow if case.id in SLOW else ())


# --- running ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def mounts(tmp_path_factory):
    """``{"ro": folder, "full": folder}``: a read-only tmpfs and a full one (root only)."""
    base = tmp_path_factory.mktemp("mounts")
    made, why = {}, {}
    try:
        for name, options in (("ro", "ro,size=64k"), ("full", "size=64k")):
            target = base / name
            target.mkdir()
            try:
                done = subprocess.run(
                    ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
            except (OSError, subprocess.SubprocessError) as err:
                why[name] = str(err)
                continue
            if done.returncode == 0:
                made[name] = target
            else:
                why[name] = done.stderr.strip() or f"mount exit {done.returncode}"
        if "full" in made:
            fd = os.open(made["full"] / "filler", os.O_WRONLY | os.O_CREAT)
            try:
                while os.write(fd, b"\0" * 4096):
                    pass
            except OSError:
                pass
            finally:
                os.close(fd)
        yield made, why
    finally:
        for target in made.values():
            subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=30)


def snapshot(folder: Path) -> dict[str, str]:
    found = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            found[str(path.relative_to(folder))] = hashlib.sha1(path.read_bytes()).hexdigest()
    return found


NOISE = re.compile(
    r"(it/s\]|s/it\]|examples/s\]|\d+%\|"  # progress bars
    r"|^\s*$)"
)


#: Lines besides the error line may inform (counts, "wrote ..."); none may look like another error.
ERRORISH = re.compile(r"(?i)error|fail|exception|usage:|warning")


def error_lines(stderr: str) -> list[str]:
    """stderr's lines without progress bars (tqdm redraws with \\r)."""
    lines = []
    for line in re.split(r"[\r\n]+", stderr):
        if not NOISE.search(line):
            lines.append(line.strip())
    return lines


def fill(argv, case_dir: Path, values: dict[str, str]) -> list[str]:
    out = []
    for arg in argv:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def run_case(case: Case, argv: list[str], case_dir: Path, capfd) -> tuple[int, str, str]:
    """Run one row: in-process (``inproc``: paraamr's main; ``generate.py``: ``paraamr generate``
    through it), or as a subprocess (``subprocess``; ``script``: the root generate.py; ``pipe``: stdout
    a pipe whose reader is gone)."""
    if case.how == "inproc":
        from paraamr.cli import main

        return _inproc(lambda: main(argv), capfd)
    if case.how == "generate.py":
        from entries import generate

        return _inproc(lambda: generate(argv), capfd)
    env = {**os.environ, "HF_TOKEN": TOKEN, "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
    command = [sys.executable, *(["generate.py"] if case.how == "script" else ["-m", "paraamr"]), *argv]
    if case.how == "script":
        command[1] = str(ROOT / "generate.py")
    stdout = subprocess.PIPE
    if case.how == "pipe":
        read, stdout = os.pipe()
        os.close(read)  # nobody will read: the first write meets a closed pipe
    try:
        proc = subprocess.Popen(
            command, cwd=case_dir, env=env, stdout=stdout, stderr=subprocess.PIPE, text=True
        )
    finally:
        if case.how == "pipe":
            os.close(stdout)
    try:
        out, err = proc.communicate(timeout=case.timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"{case.id}: no exit within {case.timeout} s (a hang)")
    return proc.returncode, out or "", err


def _inproc(call, capfd) -> tuple[int, str, str]:
    capfd.readouterr()
    try:
        code = call()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException as err:  # an exception out of main is what a user sees as a traceback
        out, errtext = capfd.readouterr()
        return -1, out, errtext + f"\nTraceback (escaped main): {type(err).__name__}: {err}"
    out, err = capfd.readouterr()
    return int(code or 0), out, err


@pytest.mark.parametrize("case", list(_params()))
def test_hostile_input(case: Case, tmp_path, monkeypatch, capfd, request, mounts):
    made, why = mounts
    values: dict[str, str] = {}
    for need in case.needs:
        if need in ("ro", "full"):
            if need not in made:
                pytest.skip(f"cannot mount a {need} tmpfs here (needs root): {why.get(need)}")
            values[need] = str(made[need])
        else:
            models = request.getfixturevalue("tiny_models")
            values[need] = str(models[need])
    case_dir = tmp_path / "case"
    case_dir.mkdir()
    for name, content in case.files.items():
        path = case_dir / name
        if content is None:
            path.mkdir(parents=True, exist_ok=True)
        elif isinstance(content, Link):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(content.target)
        elif content is FIFO:
            path.parent.mkdir(parents=True, exist_ok=True)
            os.mkfifo(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
    before = snapshot(case_dir)
    monkeypatch.chdir(case_dir)
    extra = {k: v.replace("{case}", str(case_dir)) for k, v in case.env}
    for key, value in {
        "HF_TOKEN": TOKEN,
        "HF_HUB_OFFLINE": "1",
        "HF_ENDPOINT": "http://127.0.0.1:9",
        **extra,
    }.items():
        monkeypatch.setenv(key, value)
    argv = fill(case.argv, case_dir, values)

    code, out, err = run_case(case, argv, case_dir, capfd)

    shown = f"$ {' '.join(argv)}\nexit {code}\n--- stderr ---\n{err[-3000:]}\n--- stdout ---\n{out[-1000:]}"
    assert "Traceback" not in out + err and "Exception ignored" not in err, shown
    assert TOKEN not in out + err, shown
    assert case.secret is None or case.secret not in out + err, shown
    assert "NaN" not in out and "Infinity" not in out, shown  # JSON output is valid JSON
    assert code in case.codes, shown
    lines = error_lines(err)
    if code in (1, 2):
        prefix = (
            ("paraamr generate", "generate.py")
            if case.command == "generate.py"
            else (f"paraamr {case.command}",)
        )
        errors = [line for line in lines if line.startswith(prefix)]
        assert errors and lines[-1] in errors, f"the error is not the last line\n{shown}"
        assert len(errors) == 1 or not case.single, f"more than one error line\n{shown}"
        other = [line for line in lines if line not in errors]
        assert not [line for line in other if ERRORISH.search(line)], (
            f"an error besides the one line\n{shown}"
        )
        if case.names:
            assert case.names in " ".join(errors), f"the message does not name {case.names!r}\n{shown}"
    if code == 141:
        assert not lines, shown
    after = snapshot(case_dir)
    changed = sorted(name for name, digest in before.items() if after.get(name) != digest)
    assert not changed, f"user files changed or removed: {changed}\n{shown}"
    left = [name for name in case.absent if (case_dir / name).exists()]
    assert not left, f"a failed command left {left} behind\n{shown}"


def test_table_covers_every_command():
    """Every ``paraamr`` command (and generate.py) has rows; every row id is unique."""
    from paraamr.cli import build_parser

    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    commands = set(action.choices) - {"quality"} | {"quality train", "quality score", "generate.py"}
    covered = {case.command for case in CASES}
    assert commands <= covered, commands - covered
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))


def test_the_full_mount_is_full(mounts):
    """The full tmpfs is really full: a write there fails with ENOSPC (the disk-full rows rely on it)."""
    made, why = mounts
    if "full" not in made:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {why.get('full')}")
    probe = made["full"] / "probe"
    with pytest.raises(OSError) as caught:
        probe.write_bytes(b"x" * 65536)
    probe.unlink(missing_ok=True)
    assert caught.value.errno == errno.ENOSPC
