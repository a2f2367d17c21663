"""Input readers, id partitioning, deterministic splits and shard writers (builder rows, readers, folder)."""

from __future__ import annotations

import base64
import hashlib
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paraamr.builder import folder, readers, rows
from paraamr.builder.rows import shown_where
from paraamr.errors import InputError, UsageError
from paraamr.records import DEFAULT_SCHEMA, text_id

HOSTILE = [
    b"A plain sentence.",
    b"",
    b"   \t ",
    b"x" * 100_000,
    b"ctrl\x00\x07\x1bchars",
    b"caf\xe9 \xff",
    "Ceci n'est pas une phrase anglaise. 这不是英语。".encode(),
    b"A plain sentence.",
]


def test_txt_lines_keep_bytes_and_ids(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"\r\n".join(HOSTILE[:3]) + b"\n" + b"\n".join(HOSTILE[3:]))  # mixed line ends
    rows = list(readers.read_input(path))
    assert len(rows) == len(HOSTILE)
    for row, raw in zip(rows, HOSTILE, strict=True):
        assert row.id == hashlib.sha1(raw).hexdigest()[:16]  # DESIGN.md: sha1 of the text as given
    assert rows[0].text == "A plain sentence." and rows[0].id == text_id("A plain sentence.")
    bad = rows[5]
    assert bad.failure.stage == "input" and "invalid UTF-8" in bad.failure.reason
    assert base64.b64decode(bad.raw_b64) == HOSTILE[5] and "\ufffd" in bad.text
    assert str(rows[4].failure) == "input: a NUL character at character 5"  # checked where text enters
    assert [r.failure for i, r in enumerate(rows) if i not in (4, 5)] == [None] * (len(HOSTILE) - 2)
    assert rows[3].where == f"{path}:4"


def test_jsonl_json_csv_parquet_give_the_same_rows(tmp_path):
    texts = ["One.", "Two, with a comma.", 'Three "quoted".', "Ünïcödé."]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"sentence": t}) + "\n" for t in texts))
    (tmp_path / "a.json").write_text(json.dumps([{"sentence": t} for t in texts]))
    import csv

    with open(tmp_path / "a.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["n", "sentence"])
        w.writerows([i, t] for i, t in enumerate(texts))
    pq.write_table(pa.table({"sentence": texts}), tmp_path / "a.parquet", row_group_size=2)
    for suffix in ("jsonl", "json", "csv", "parquet"):
        rows = list(readers.read_input(tmp_path / f"a.{suffix}", column="sentence"))
        assert [(r.id, r.text, r.failure) for r in rows] == [(text_id(t), t, None) for t in texts], suffix
    with pytest.raises(InputError, match="no column 'text'"):
        list(readers.read_input(tmp_path / "a.csv"))


def test_a_text_that_cannot_enter_a_run_has_the_same_failure_id_in_every_format(tmp_path):
    """The id of a failure row is the sha1 of its text, as a good row's (docs/dataset.md), whatever
    the format: before, a JSON or Parquet row's was the sha1 of its JSON line or encoding, so failures
    could not be joined back to the same input in another format. A lone surrogate (JSON can escape
    one) is the sha1 of the bytes a text file would hold."""
    texts = ["Good one.", "bad\x00nul here.", "   ", "lone \ud800 surrogate"]  # blank: refused later
    (tmp_path / "a.txt").write_bytes(b"\n".join(t.encode("utf-8", "surrogatepass") for t in texts))
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    (tmp_path / "a.json").write_text(json.dumps([{"text": t} for t in texts]))
    pq.write_table(pa.table({"text": texts[:3]}), tmp_path / "a.parquet")  # Arrow cannot hold a surrogate
    ids = [hashlib.sha1(t.encode("utf-8", "surrogatepass")).hexdigest()[:16] for t in texts]
    for suffix in ("txt", "jsonl", "json", "parquet"):
        found = list(readers.read_input(tmp_path / f"a.{suffix}"))
        assert [r.id for r in found] == ids[: len(found)], suffix
        assert [r.failure is None for r in found] == [True, False, True, False][: len(found)], suffix


def test_parquet_columns_of_other_types_are_rows_not_an_internal_error(tmp_path):
    """A binary column is read as UTF-8 text; dates and decimals are failure rows naming their type
    (before: 'internal error: TypeError: Object of type bytes is not JSON serializable')."""
    import datetime
    import decimal

    columns = {
        "binary": pa.array([b"The boy runs.", b"\xff\xfe"], pa.binary()),
        "timestamp": pa.array([datetime.datetime(2020, 1, 1)] * 2),
        "decimal": pa.array([decimal.Decimal("1.5")] * 2),
    }
    for name, column in columns.items():
        pq.write_table(pa.table({"text": column}), tmp_path / f"{name}.parquet")
        rows = list(readers.read_input(tmp_path / f"{name}.parquet"))
        reasons = [r.failure and r.failure.reason for r in rows]
        if name == "binary":
            assert [rows[0].text, rows[0].id] == ["The boy runs.", text_id("The boy runs.")]
            assert reasons == [None, "invalid UTF-8 at byte 0"]
        else:
            kind = {"timestamp": "datetime", "decimal": "Decimal"}[name]
            assert reasons == [f"column 'text' not a string ({kind})"] * 2 and rows[0].id == rows[1].id


def test_count_rows_is_the_number_of_rows_read(tmp_path):
    """The dry run's count: blank JSON lines are no row, bad lines are (failure rows), as read_input."""
    files = {
        "a.txt": b"\r\n".join(HOSTILE) + b"\n",
        "a.jsonl": b'{"text": "ok"}\n\n{not json\n \t\n\xff\xfe\n"bare"',
        "lines.json": b'\xef\xbb\xbf{"text": "ok"}\n\n{"text": 7}\n\n',
        "array.json": json.dumps(["a", {"text": "b"}, 3]).encode(),
        "a.csv": b'text\n"two\nlines"\n\nlast\n',
    }
    for name, body in files.items():
        (tmp_path / name).write_bytes(body)
        assert readers.count_rows(tmp_path / name) == len(list(readers.read_input(tmp_path / name))), name
    # before: a first line of a byte order mark alone, and an AMR release's header after one, counted
    (tmp_path / "bom.jsonl").write_bytes(b'\xef\xbb\xbf\n{"text": "a"}\n')
    (tmp_path / "bom.amr").write_bytes(b"\xef\xbb\xbf# AMR release 3.0\n\n# ::id a\n(d / dog)\n")
    for name, fmt in (("bom.jsonl", None), ("bom.amr", "amr")):
        rows = list(readers.read_input(tmp_path / name, fmt=fmt))
        assert readers.count_rows(tmp_path / name, fmt=fmt) == len(rows) == 1, name


def test_odd_files_are_rows_failures_or_one_line_errors(tmp_path):
    """Before: a JSON line of U+3000 or U+001C (no JSON white space) vanished, neither row nor
    failure, while the dry run counted it; a CSV field over the csv module's 131,072 characters
    refused the whole file; a duplicated text column was taken silently (the last copy in a CSV,
    the first in Parquet); a Parquet page damaged past the footer was an error naming no file."""
    (tmp_path / "s.jsonl").write_bytes('{"text": "a"}\n\u3000\n\x1c\n \t\n'.encode())
    rows = list(readers.read_input(tmp_path / "s.jsonl"))
    assert [r.failure and r.failure.reason[:12] for r in rows] == [None, "invalid JSON", "invalid JSON"]
    assert readers.count_rows(tmp_path / "s.jsonl") == 3
    long = "word " * 40_000  # 200,000 characters in one quoted field
    (tmp_path / "big.csv").write_text(f'text\nfirst\n"{long}"\nlast\n')
    assert [r.text for r in readers.read_input(tmp_path / "big.csv")] == ["first", long, "last"]
    assert readers.count_rows(tmp_path / "big.csv") == 3
    (tmp_path / "dup.csv").write_text("text,text\na,b\n")
    table = pa.Table.from_arrays([pa.array(["a"]), pa.array(["b"])], names=["text", "text"])
    pq.write_table(table, tmp_path / "dup.parquet")
    for name in ("dup.csv", "dup.parquet"):
        with pytest.raises(InputError, match=r"column 'text' appears 2 times \(columns: \['text', 'te"):
            list(readers.read_input(tmp_path / name))
    path = tmp_path / "damaged.parquet"
    pq.write_table(pa.table({"text": [f"Sentence {i}." for i in range(600)]}), path, row_group_size=500)
    data = bytearray(path.read_bytes())
    at = pq.ParquetFile(path).metadata.row_group(1).column(0).data_page_offset
    data[at + 20 : at + 80] = b"\xab" * 60
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"damaged\.parquet: unreadable Parquet data after row 500 ") as err:
        list(readers.read_input(path))  # (its row groups read one at a time: the first whole)
    assert "\n" not in str(err.value)


def test_stdin_is_read_as_lines_only(tmp_path, monkeypatch):
    """Before: ``--input - --input-format csv`` (or json, parquet) read a file named ``-`` in the
    working folder, or said "-: no such file or directory"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-").write_text("text\nFROM THE FILE.\n")
    for fmt in ("csv", "json", "parquet"):
        with pytest.raises(UsageError, match=f"--input - --input-format {fmt}: standard input is read as"):
            list(readers.read_input("-", fmt=fmt))


def test_jsonl_bad_lines_become_failures(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_bytes(b'{"text": "ok"}\n{not json\n{"text": 7}\n{"other": 1}\n\xff\xfe\n')
    rows = list(readers.read_input(path))
    assert [r.failure and r.failure.stage for r in rows] == [None, "input", "input", "input", "input"]
    assert "invalid JSON" in rows[1].failure.reason and "not a string" in rows[2].failure.reason
    assert "missing" in rows[3].failure.reason and rows[4].raw_b64 is not None
    assert len({r.id for r in rows}) == 5


def test_unknown_format_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="unknown input format"):
        list(readers.read_input(tmp_path / "x.docx"))
    with pytest.raises(InputError, match="no such file"):
        list(readers.read_input(tmp_path / "x.txt"))
    (tmp_path / "d.txt").mkdir()
    with pytest.raises(InputError, match="a folder, not a file"):
        list(readers.read_input(tmp_path / "d.txt"))
    os.mkfifo(tmp_path / "fifo.txt")  # never opened: a FIFO nobody writes would wait forever
    with pytest.raises(InputError, match=r"fifo\.txt: a pipe or a device, not a file"):
        list(readers.read_input(tmp_path / "fifo.txt"))


def test_amr_input_ids(tmp_path):
    path = tmp_path / "g.amr"
    path.write_text(
        "# AMR release header\n\n# ::id g1\n# ::snt The boy wants.\n"
        "(w / want-01 :ARG0 (b / boy))\n\n# ::snt Dogs bark.\n"
        "(b / bark-01 :ARG0 (d / dog))\n\n(x / xx)\n"
    )
    rows = list(readers.read_input(path, fmt="amr"))
    assert [r.id for r in rows] == ["g1", text_id("Dogs bark."), text_id("(x / xx)")]
    assert [r.text for r in rows] == ["The boy wants.", "Dogs bark.", ""]
    assert rows[0].amr.startswith("# ::id g1") and rows[2].where.endswith(":graph 3")


@pytest.mark.parametrize("end", ["\n", "\r", "\r\n"])
def test_amr_graphs_without_a_blank_line_between_them_are_all_read_and_counted(tmp_path, end):
    """penman reads a comment line after a finished graph as the next graph's metadata, and a lone
    carriage return as a line end: before, such a file was one block, the first graph a failure
    "text after the graph: '(g / girl)'" and the second in no row (inputs 1), and a CR-only file
    read as one line; ``--dry-run`` counted as many."""
    path = tmp_path / "g.amr"
    lines = ["# ::id a.1", "# ::snt The boy.", "(b / boy)", "# a note", "# ::id a.2", "(g / girl)", "# end"]
    path.write_bytes(end.join(lines).encode() + end.encode())
    found = list(readers.read_input(path, fmt="amr"))
    assert [(r.id, r.text, r.failure) for r in found] == [("a.1", "The boy.", None), ("a.2", "", None)]
    assert found[1].amr == "# a note\n# ::id a.2\n(g / girl)\n# end" and found[1].where.endswith(":graph 2")
    assert readers.count_rows(path, fmt="amr") == 2


def test_amr_text_after_the_graph_names_the_graph(tmp_path):
    """The failure was "text after the graph: 'junk'" alone, where every other graph failure names
    the file (by its name: the failure rows are published), the graph's position and its id."""
    path = tmp_path / "g.amr"
    path.write_text("(a / aa)\n\n# ::id j\n(g / girl) junk\n")
    reasons = [r.failure and r.failure.reason for r in readers.read_input(path, fmt="amr")]
    assert reasons == [None, "g.amr:graph 2 (id j): not valid PENMAN: text after the graph: 'junk'"]


def test_partition_and_splits_are_deterministic_and_balanced():
    ids = [text_id(f"sentence {i}") for i in range(4000)]
    owners = [rows.row_task(i) % 3 for i in ids]
    assert owners == [rows.row_task(i) % 3 for i in ids]
    assert all(1200 < owners.count(k) < 1470 for k in range(3))
    splits = [rows.split_of(i, validation=0.1, test=0.05) for i in ids]
    assert 300 < splits.count("validation") < 500 and 130 < splits.count("test") < 270
    assert rows.split_of(ids[0], validation=0.1, test=0.05) == splits[0]
    assert {rows.split_of(i, train="all") for i in ids} == {"all"}


def test_shard_writer_leaves_nothing_on_error(tmp_path):
    with pytest.raises(RuntimeError), folder.ShardWriter(tmp_path, "default", "train", DEFAULT_SCHEMA) as w:
        w.write({"id": "1", "text": "t", "paraphrases": []})
        raise RuntimeError("killed")
    assert not list(tmp_path.rglob("*.parquet"))


def test_text_lines_longer_than_the_cap_are_failure_rows_read_in_flat_memory():
    import hashlib
    import io

    from paraamr import texts
    from paraamr.builder import readers

    line = b"y" * (texts.MAX_LINE_BYTES + 10)
    got = list(readers.read_lines(io.BytesIO(b"ok\n" + line + b"\r\nlast\n")))
    assert [r.text for r in got[::2]] == ["ok", "last"] and got[1].failure.stage == "input"
    assert got[1].id == hashlib.sha1(line).hexdigest()[:16]  # the id a short line would have
    assert len(got[1].text) < 2000 and "over the cap" in got[1].failure.reason


BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("in.txt", b"The boy left.\nA cat sat.\n"),
        ("in.jsonl", b'{"text": "The boy left."}\n{"text": "A cat sat."}\n'),
        ("in.json", b'[{"text": "The boy left."}, {"text": "A cat sat."}]'),
        ("in.csv", b"text,label\nThe boy left.,1\nA cat sat.,0\n"),
    ],
)
def test_a_utf8_byte_order_mark_is_not_text(tmp_path, name, body):
    """Files saved by Notepad or Excel ("CSV UTF-8") start with a UTF-8 BOM: it is not part of the
    first text (before, it was kept in it, the first JSON line failed, and a CSV's header was
    refused as "no column 'text' (columns: ['\\ufefftext', ...])")."""
    path = tmp_path / name
    path.write_bytes(BOM + body)
    found = list(readers.read_input(path))
    assert [(r.text, r.failure) for r in found] == [("The boy left.", None), ("A cat sat.", None)]
    graphs = tmp_path / "in.amr"
    graphs.write_bytes(BOM + b"(l / leave-11 :ARG0 (b / boy))\n")
    [row] = readers.read_input(graphs, fmt="amr")
    assert row.failure is None and row.amr.startswith("(l / leave-11")


def test_a_dataset_folder_without_the_text_column_is_refused_before_any_row(tmp_path):
    """A streamed CSV knows its columns only from its first row: the check was skipped, and every row
    became a failure 'column 'text' missing' after the models had loaded."""
    (tmp_path / "ds" / "data").mkdir(parents=True)
    (tmp_path / "ds" / "data" / "train.csv").write_text("sentence\nThe boy left.\n")
    with pytest.raises(InputError, match=r"no column .text. \(columns: \[.sentence.\]\); name the text"):
        next(readers.read_dataset(str(tmp_path / "ds")))
    rows = list(readers.read_dataset(str(tmp_path / "ds"), column="sentence"))
    assert [(r.text, r.failure) for r in rows] == [("The boy left.", None)]
    # a folder given with its last slash: the failure rows named it "[train]:row 1", without the name
    (row,) = readers.read_dataset(f"{tmp_path / 'ds'}/", column="sentence")
    assert shown_where(row.where) == "ds[train]:row 1"
