"""A JSON Lines file is read by Arrow when it can be, else line by line
(`auditor.logs.jsonl_format`); which read took a file must never show in
what is audited or reported: a file and its pieces (decision 103) may be
taken by different reads. Each case writes the same lines twice, the second
time with a line that is not JSON at the end (which sends the file to the
line-by-line read), and compares the events and the quarantined rows."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from auditor.generate import generate, write_log
from auditor.logs import jsonl_format
from auditor.logs.load import load_logs

CASES = {
    "floats": [1e3, 2.5, 1e-7, 1.5e12, -0.0, 0.1, 7],
    "past int64": [12345678901234567890, 7],
    "past 2**53 beside a fraction": [2 ** 53 + 1, 0.5],
    "true and false": [True, False],
    "nested objects with other keys": [{"a": 1}, {"b": [1, 2.0]}, {"a": None}],
    "lists": [[1, 2], [3.5], []],
    "text": ["é\u2028", "€", ""],
}


def _write_twice(tmp_path: Path, values: list, end: str = "\n") -> tuple[Path, Path]:
    log = tmp_path / "log.jsonl"
    write_log(generate(2, 20, seed=9).table, log)
    rows = [json.loads(line) for line in log.read_bytes().split(b"\n")[:-1]]
    for k, row in enumerate(rows):
        row["extra"] = values[k % len(values)]
        if "amount" in row and k % 2:
            row["amount"] = float(row["amount"]) + (0.5 if k % 4 == 1 else 0)
    del rows[3]["seq"]  # (a row quarantined, shown as recorded)
    rows[3]["extra"] = values[-1]
    text = "".join(json.dumps(row) + end for row in rows)
    fast, slow = tmp_path / "fast" / "night.jsonl", tmp_path / "slow" / "night.jsonl"
    for path, tail in ((fast, ""), (slow, "{not json" + end)):
        path.parent.mkdir()
        path.write_text(text + tail, encoding="utf-8", newline="")
    return fast, slow


def _read_both_ways(tmp_path: Path, data: bytes, tail: bytes, monkeypatch):
    """`data` as a file Arrow reads (checked) and, with `tail` (a line that
    sends it line by line) after it, as a file read line by line: both
    loaded, named alike."""
    fast, slow = tmp_path / "fast" / "night.jsonl", tmp_path / "slow" / "night.jsonl"
    for path, end in ((fast, b""), (slow, tail)):
        path.parent.mkdir()
        path.write_bytes(data + end)
    table = jsonl_format.read_jsonl(fast, fast.read_bytes())[0]
    assert pa.types.is_integer(table.schema.field("seq").type)  # (Arrow read it)
    monkeypatch.chdir(fast.parent)
    by_arrow = load_logs([Path(fast.name)])
    monkeypatch.chdir(slow.parent)
    return by_arrow, load_logs([Path(slow.name)])


@pytest.mark.parametrize("end", ["\n", "\r\n"], ids=["LF", "CR LF"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_cells_are_the_same_whichever_read_takes_the_file(tmp_path, case, monkeypatch, end):
    fast, slow = _write_twice(tmp_path, CASES[case], end)
    monkeypatch.chdir(fast.parent)
    by_arrow = load_logs([Path(fast.name)])
    monkeypatch.chdir(slow.parent)
    by_lines = load_logs([Path(slow.name)])
    assert by_arrow.events.equals(by_lines.events)
    assert len(by_lines.quarantine) == len(by_arrow.quarantine) + 1
    assert by_arrow.quarantine.equals(by_lines.quarantine.iloc[:-1])


@pytest.mark.parametrize("end", ["\n", "\r\n"], ids=["LF", "CR LF"])
def test_arrow_reads_what_it_reads_as_the_lines_do(tmp_path, end):
    """The cases Arrow can read it still reads (the fast read is kept),
    lines ending in CR LF as in LF (a Windows export was read line by line,
    five times the CPU)."""
    for case in ("floats", "true and false", "text"):
        fast, _ = _write_twice(tmp_path / case.replace(" ", "-"), CASES[case], end)
        table = jsonl_format.read_jsonl(fast, fast.read_bytes())[0]
        assert pa.types.is_integer(table.schema.field("seq").type), case  # (not line by line)


@pytest.mark.parametrize("line", [b'{"seq": 1}\r{"seq": 2}', b'{"seq": "1\r2"}'],
                         ids=["two objects a CR apart", "a CR inside a value"])
def test_a_carriage_return_inside_a_line_is_read_line_by_line(tmp_path, line):
    """A CR that does not end a line: Arrow would read two rows on one line
    (or refuse the value), so the line-by-line read takes the file and
    quarantines that line, numbered as the file numbers it."""
    log = tmp_path / "log.jsonl"
    write_log(generate(2, 20, seed=9).table, log)
    lines = log.read_bytes().split(b"\n")[:-1]
    lines[5] = line
    log.write_bytes(b"\r\n".join(lines) + b"\r\n")
    table, numbers, rejected = jsonl_format.read_jsonl(log, log.read_bytes())
    assert rejected.lines == [6] and 6 not in numbers.tolist()
    assert table.num_rows == len(lines) - 1


@pytest.mark.parametrize("blank", ["", " \t", "\r"], ids=["empty", "spaces", "CR"])
def test_blank_lines_are_passed_over_by_arrow_as_by_the_lines(tmp_path, monkeypatch, blank):
    """A blank first line, blank lines between tables and an extra line
    break at the end (one such line sent the file line by line: six times
    the CPU): Arrow reads the file, and its events, quarantined rows and
    their line numbers are the line reading's."""
    log = tmp_path / "log.jsonl"
    write_log(generate(2, 20, seed=9).table, log)
    rows = [json.loads(line) for line in log.read_bytes().split(b"\n")[:-1]]
    del rows[30]["seq"]  # (a row quarantined, by its line number)
    text = [blank]
    for k, row in enumerate(rows):
        if k and row["table_id"] != rows[k - 1]["table_id"]:
            text += [blank, blank]
        text.append(json.dumps(row))
    quarantined = text.index(json.dumps(rows[30])) + 1
    assert quarantined > 31  # (blank lines before it)
    data = ("\n".join(text) + "\n" + blank + "\n").encode("utf-8")
    by_arrow, by_lines = _read_both_ways(tmp_path, data, b"{not json\n", monkeypatch)
    numbers = jsonl_format.read_jsonl(tmp_path / "fast" / "night.jsonl", data)[1]
    assert numbers[0] == 2 and numbers[-1] == len(rows) + 3  # (blank lines counted)
    assert by_arrow.events.equals(by_lines.events)
    assert by_arrow.quarantine.equals(by_lines.quarantine.iloc[:-1])
    assert by_arrow.quarantine["source_line"].tolist() == [quarantined]


def test_bytes_that_are_not_utf8_in_a_value_are_read_alike_by_both(tmp_path, monkeypatch):
    """A value holding bytes that are not UTF-8 (a name saved in cp1252):
    Arrow's read keeps the row, its text escaped (`\\xe9`) and the column
    named as not UTF-8; the line-by-line read rejected the whole line, its
    table unknown, so that the table's next event was reported as a gap in
    `seq` when the file (or one of its pieces) was read line by line and
    not when Arrow read it. Now both give the row as Arrow does; a line
    whose key holds such bytes is still rejected whole."""
    log = tmp_path / "log.jsonl"
    write_log(generate(2, 20, seed=9).table, log)
    rows = [json.loads(line) for line in log.read_bytes().split(b"\n")[:-1]]
    staffed = next(k for k, row in enumerate(rows) if row.get("actor_id") and k > 10)
    rows[staffed]["actor_id"] = "Ren@e"
    text = "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")
    text = text.replace(b"Ren@e", b"Ren\xe9e")
    by_arrow, by_lines = _read_both_ways(tmp_path, text, b'{"table\xff_id": "T01"}\n',
                                         monkeypatch)
    assert by_arrow.events.equals(by_lines.events)
    assert by_arrow.quarantine.equals(by_lines.quarantine.iloc[:-1])
    bad = by_lines.quarantine.iloc[0]
    assert (bad["source_line"], bad["table_id"], bad["seq"]) == \
        (staffed + 1, rows[staffed]["table_id"], rows[staffed]["seq"])
    assert json.loads(bad["raw"])["actor_id"] == "Ren\\xe9e"
    assert bad["reason"].startswith("actor_id is not UTF-8 text (try --encoding cp1252)")
    assert by_lines.quarantine.iloc[-1][["source_line", "reason"]].tolist() == \
        [len(rows) + 1, "the line is not UTF-8 text"]


@pytest.mark.parametrize("case", list(CASES))
def test_a_large_file_with_a_bad_line_is_read_a_block_at_a_time(tmp_path, case, monkeypatch):
    """A line that is not JSON in the middle of a large file: the blocks of
    lines about it are still read by Arrow, the one holding it line by line
    (one bad line among 1.9M sent every line through Python: 6.5 -> 40 s,
    1.2 -> 4 GB), and what is loaded is the line-by-line read's of the
    whole file: events, quarantined rows, their line numbers."""
    fast, _ = _write_twice(tmp_path, CASES[case])
    lines = fast.read_bytes().split(b"\n")
    middle = len(lines) // 2
    bad = tmp_path / "bad" / "night.jsonl"
    bad.parent.mkdir()
    bad.write_bytes(b"\n".join([*lines[:middle], b"{not json", *lines[middle:]]))
    monkeypatch.chdir(bad.parent)
    by_lines = load_logs([Path(bad.name)])  # (no file past BLOCK_BYTES here: one read)
    slow_reads = []
    slow = jsonl_format._read_jsonl_slow
    monkeypatch.setattr(jsonl_format, "_read_jsonl_slow",
                        lambda *a: slow_reads.append(a) or slow(*a))
    monkeypatch.setattr(jsonl_format, "BLOCK_BYTES", 2000)
    by_blocks = load_logs([Path(bad.name)])
    assert by_blocks.events.equals(by_lines.events)
    assert by_blocks.quarantine.equals(by_lines.quarantine)
    assert middle + 1 in by_blocks.quarantine["source_line"].tolist()
    blocks = -(-bad.stat().st_size // 2000)
    if case in ("floats", "true and false", "text"):  # (cases Arrow reads)
        assert len(slow_reads) == 1 and blocks > 10
        assert len(slow_reads[0][1]) < len(lines) / 5  # (the bad line's block alone)
    else:
        assert 1 <= len(slow_reads) <= blocks


def test_blocks_of_no_row_and_of_other_keys_join_as_one_read(tmp_path, monkeypatch):
    """Blocks whose every line is bad, and a key first met in a late block:
    the columns in the order their keys first appear, no column added for a
    block of no row, the line numbers the file's."""
    rows = [{"table_id": "T01", "seq": k, "event": "roll"} for k in range(60)]
    rows[50]["note"] = "late key"
    text = [json.dumps(r) for r in rows[:20]] + ["not json"] * 40 + \
        [json.dumps(r) for r in rows[20:]]
    data = ("\n".join(text) + "\n").encode()
    whole = jsonl_format._read_jsonl_slow(tmp_path / "x.jsonl", data.split(b"\n"))
    monkeypatch.setattr(jsonl_format, "BLOCK_BYTES", 300)
    table, numbers, rejected = jsonl_format.read_jsonl(tmp_path / "x.jsonl", data)
    assert table.column_names == ["table_id", "seq", "event", "note"]
    assert table.cast(whole[0].schema).equals(whole[0])
    assert numbers.tolist() == whole[1].tolist() and numbers[20] == 61
    assert rejected.lines == whole[2].lines == list(range(21, 61))
