"""The quick ways a CSV log is loaded must give exactly what the plain ways
give: the streamed read (hashed and checked for UTF-8 block by block) what
the whole read gives, times parsed piece by piece what the general path
gives, and a file typed slice by slice into whole-file columns what typing
each slice on its own gives. Equivalence only, never timing."""

from __future__ import annotations

import codecs
import hashlib
import random
import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.errors import LogFileError
from auditor.logs import coerce as coerce_module
from auditor.logs import csv_format
from auditor.logs import load as load_module
from auditor.logs.coerce import _ts_column, coerce
from auditor.logs.csv_format import (
    _CheckedReader,
    _mark_text,
    _marked,
    _NotUtf8,
    _recorded,
    _unmarked_rejected,
    is_utf8,
)
from auditor.logs.frame import _in_place, order_events
from auditor.logs.load import _slices, load_file
from auditor.logs.read import read_log
from auditor.logs.validate import Problems

HEADER = ("table_id,seq,ts,event,actor_role,actor_id,seat,player_id,dice,die1,die2,total,"
          "bet,amount,outcome,reason,flags")


def _rows(n: int, seed: int = 1, actor: str = "D01") -> list[str]:
    r = random.Random(seed)
    rows = []
    for i in range(1, n + 1):
        if r.random() < 0.3:
            rows.append(f"T01,{i},2026-03-01T20:{i // 60 % 60:02d}:{i % 60:02d}+00:00,roll,"
                        f"player,P1,3,P1,\"D1,D2\",{r.randint(1, 6)},{r.randint(1, 6)},"
                        f"{r.randint(2, 12)},,,,,")
        else:
            rows.append(f"T01,{i},2026-03-01T20:{i // 60 % 60:02d}:{i % 60:02d}Z,staff_on,"
                        f"dealer,{actor},,,,,,,,,,,")
    return rows


def _csv(rows: list[str]) -> bytes:
    return (HEADER + "\n" + "\n".join(rows) + "\n").encode("utf-8")


def _as_read(raw) -> tuple:
    return (raw.sha256, raw.table.to_pylist(), raw.lines.tolist(), raw.rejected,
            raw.cell_problems)


def _whole(path):
    """What the whole read gives (the streamed read refused)."""
    return _as_read(_read_with(path, lambda p: None))


def _read_with(path, streamed):
    saved = csv_format.read_csv_streamed
    csv_format.read_csv_streamed = streamed
    try:
        return read_log(path)
    finally:
        csv_format.read_csv_streamed = saved


BAD_BODIES = [
    b"",  # clean
    b'T01,900,2026-03-01T20:00:00Z,staff_on,dealer,"two\nlines",,,,,,,,,,,\n',
    b"T01,901,2026-03-01T20:00:00Z,staff_on\n",  # too few cells
    b"T01,902,2026-03-01T20:00:00Z,staff_on,dealer,D\xffX,,,,,,,,,,,\n",  # not UTF-8
    b"T01,903,2026-03-01T20:00:00Z,staff_on,dealer,D\xff,,,,,,,,,,,,,\n",  # both
    b"\n\n  \n",
    b"T01,904,2026-03-01T20:00:00,staff_on,dealer,D,,,,,,,,,,,\n",  # no offset
    b"T01, 905 ,2026-03-01T20:00:00Z ,staff_on,dealer,D,,,,,,,,,,,\n",
    "T01,906,2026-03-01T20:00:00Z,staff_on,dealer,Dé€😀,,,,,,,,,,,\n".encode(),
    b"T01,907,2026-03-01T20:00:00Z,staff_on,dealer,D,,,,,,,,,,,\n\xe2\x82",  # cut at the end
]


@pytest.mark.parametrize("block", [256, 1000, 1 << 22])
@pytest.mark.parametrize("bad", range(len(BAD_BODIES)))
def test_streamed_read_is_the_whole_read(tmp_path, monkeypatch, block, bad):
    monkeypatch.setattr(csv_format, "CSV_BLOCK_BYTES", block)
    rows = _rows(300, actor="Dé€😀")
    data = _csv(rows[:150]) + BAD_BODIES[bad] + "\n".join(rows[150:]).encode() + b"\n"
    path = tmp_path / "log.csv"
    path.write_bytes(data)
    assert _as_read(read_log(path)) == _whole(path)


@pytest.mark.parametrize("start", [b"\xef\xbb\xbf", b"", b"\n", b"   "])
def test_streamed_read_leaves_odd_starts_to_the_whole_read(tmp_path, start):
    path = tmp_path / "log.csv"
    path.write_bytes(start + _csv(_rows(20)))
    try:
        want = _whole(path)
    except LogFileError as exc:
        with pytest.raises(LogFileError, match=str(exc).split(":")[-1].strip()):
            read_log(path)
    else:
        assert _as_read(read_log(path)) == want


def test_streamed_read_is_used_for_a_plain_file(tmp_path):
    path = tmp_path / "log.csv"
    path.write_bytes(_csv(_rows(50)))
    assert csv_format.read_csv_streamed(path) is not None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"a", b",", b"\n", b'"', "é".encode(), "€".encode(),
                                 "😀".encode(), b"\x80", b"\xc3", b"\xe2\x82", b"\xf0\x9f",
                                 b"\xff", b"\xed\xa0\x80"]), max_size=40),
       st.integers(min_value=1, max_value=9))
def test_utf8_checked_and_marked_block_by_block_as_whole(pieces, size):
    """The bytes handed to the parser, read `size` at a time, are the whole
    file's marking (`_marked`), each read as long as asked, or the reader
    gives up (`_NotUtf8`) only where bytes that are not UTF-8 were handed
    on unmarked (a read ending inside what began no character)."""
    data = b"".join(pieces)

    class Bytes:
        def __init__(self):
            self.at = 0

        def read(self, n):
            out = data[self.at:self.at + (len(data) if n < 0 else n)]
            self.at += len(out)
            return out

    source = _CheckedReader(Bytes())
    reads = []
    try:
        while got := source.read(size):
            reads.append(got)
        source.finish()
    except _NotUtf8:
        assert not is_utf8(data)
        return
    assert b"".join(reads) == _marked(data)
    assert all(len(r) == size for r in reads[:-1])
    assert source.marked == (not is_utf8(data))
    assert source.quoted == (b'"' in data)
    assert source.hexdigest() == hashlib.sha256(data).hexdigest()


def _each_byte_marked(err: UnicodeDecodeError):
    """The marking as written out: each byte that is not UTF-8, b, as U+F700 + b."""
    return "".join(chr(0xF700 + b) for b in err.object[err.start:err.end]), err.end


codecs.register_error("test-mark-each-byte", _each_byte_marked)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"\n", "é".encode(), "€".encode(), "😀".encode(),
                                 "\uf780".encode(), "\ud7ff".encode(), b"\x80", b"\xc3",
                                 b"\xe2\x82", b"\xf0\x9f", b"\xff", b"\xed\xa0\x80",
                                 b"\xed\xb2\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80"]),
                max_size=40))
def test_each_byte_not_utf8_is_marked_as_itself(pieces):
    """The marks made in C (`_mark_text`) are each byte's own, U+F700 + b,
    the rest of the text as it was (a private-use character included)."""
    data = b"".join(pieces)
    marked = _mark_text(data)
    assert marked == data.decode("utf-8", "test-mark-each-byte").encode("utf-8")
    if "\uf780".encode() not in data:  # (a private-use character taken for a mark)
        assert _recorded(marked) == data
        escaped = re.sub("[\uf780-\uf7ff]", lambda m: f"\\x{ord(m.group()) - 0xF700:02x}",
                         marked.decode("utf-8"))
        assert _unmarked_rejected([(1, marked.decode("utf-8"), 17, 3)]) == [(1, escaped, 17, 3)]


@pytest.mark.parametrize("bad", [b"\xe9", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xff\xfe",
                                 b"\x80\x80\x80\x80"])
@pytest.mark.parametrize("shift", [-3, -2, -1, 0, 1, 2])
def test_bytes_not_utf8_where_a_read_ends_read_as_whole(tmp_path, monkeypatch, bad, shift):
    """Bytes that are not UTF-8 about the end of one of the reader's reads
    (a character they seem to begin going on in the next, or not): marked
    as they stream or the file read whole, the rows the whole read's."""
    monkeypatch.setattr(csv_format, "CSV_BLOCK_BYTES", 4096)
    data = _csv(_rows(200, actor="Dé€😀"))
    at = 2 * 4096 + shift
    path = tmp_path / "log.csv"
    path.write_bytes(data[:at] + bad + data[at:])
    assert _as_read(read_log(path)) == _whole(path)


@pytest.mark.parametrize("slice_chars", [1, 3, 7, 1 << 16])
def test_marks_escaped_slice_by_slice_as_whole(monkeypatch, slice_chars):
    data = random.Random(slice_chars).randbytes(3000)
    text = _mark_text(data).decode("utf-8")
    want = re.sub("[\uf780-\uf7ff]", lambda m: f"\\x{ord(m.group()) - 0xF700:02x}", text)
    monkeypatch.setattr(csv_format, "_ESCAPE_SLICE", slice_chars)
    assert _unmarked_rejected([(7, text, 17, 2)]) == [(7, want, 17, 2)]
    assert "\\x" in want


@pytest.mark.parametrize("body", [BAD_BODIES[3], BAD_BODIES[4],
                                  b"T01,908,2026-03-01T20:00:00Z,staff_on,dealer,D\xe9d\xe9,,,,,,,,,,,\n"])
def test_a_file_not_all_utf8_is_read_once(tmp_path, monkeypatch, body):
    """Bytes that are not UTF-8 inside the file are marked as the streamed
    read goes (no second, whole read); the rows are the whole read's."""
    rows = _rows(3000, actor="Dé€😀")
    path = tmp_path / "log.csv"
    path.write_bytes(_csv(rows[:1500]) + body + "\n".join(rows[1500:]).encode()
                     + b"\n")
    whole = _whole(path)
    opened = []
    real = csv_format.read_csv
    monkeypatch.setattr(csv_format, "read_csv", lambda *a, **k: opened.append(a) or real(*a, **k))
    assert _as_read(read_log(path)) == whole
    assert not opened
    said = [w for why in whole[4].values() for w in why] + list(whole[3].texts)
    assert any("not UTF-8" in s or "\\xff" in s for s in said)  # (its row, or its record)


TIMES = ["2026-03-01T20:00:00+00:00", "2026-03-01T20:00:00Z", "2026-03-01T20:00:00-05:30",
         "2026-03-01T20:00:00+0530", "2026-03-01T20:00:00", "2026-13-01T20:00:00Z",
         " 2026-03-01T20:00:00Z", "2026-03-01 20:00:00Z", "2026-03-01T20:00:00.123456Z", None]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(TIMES), min_size=1, max_size=6), min_size=1,
                max_size=4))
def test_times_parsed_piece_by_piece_as_the_general_path(pieces):
    col = pa.chunked_array([pa.array(p, pa.string()) for p in pieces], pa.string())
    n = len(col)
    quick, plain = Problems(n), Problems(n)
    got = _ts_column(col, quick, n)
    saved = coerce_module._ts_as_written
    coerce_module._ts_as_written = lambda c: None
    try:
        want = _ts_column(col, plain, n)
    finally:
        coerce_module._ts_as_written = saved
    assert got.to_pylist() == want.to_pylist()
    assert quick.reasons == plain.reasons


def _log(tmp_path, rows):
    path = tmp_path / "log.csv"
    path.write_bytes(_csv(rows))
    return path


@pytest.mark.parametrize("slice_rows", [64, 100, 1 << 20])
def test_typed_into_whole_columns_as_slice_by_slice(tmp_path, monkeypatch, slice_rows):
    """Every slice typed on its own (no placement) and joined gives the same
    events; quarantined rows, seats out of range and bad numbers included."""
    monkeypatch.setattr(load_module, "SLICE_ROWS", slice_rows)
    rows = _rows(1000, seed=3)
    rows[10] = rows[10].replace(",3,P1,", ",x,P1,")
    rows[300] = rows[300].replace(",3,P1,", ",99,P1,")
    rows[500] = rows[500].replace(",staff_on,", ",nonsense,")
    rows[700] = rows[700].split(",", 2)[0] + ",99999999999999999999," + rows[700].split(",", 2)[2]
    path = _log(tmp_path, rows)
    events, quarantine, _ = load_file(path)
    raw = read_log(path)
    parts = [coerce(part) for _, part in _slices(raw, slice_rows)]
    plain = pa.concat_tables([p.events for p in parts])
    assert events.to_pylist() == plain.to_pylist()
    assert 0 < len(quarantine) == sum(len(p.quarantine) for p in parts)
    assert order_events([events]).equals(order_events([plain]))


def test_int_columns_of_a_clean_file_are_kept_where_typed(tmp_path, monkeypatch):
    """A multi-slice file without quarantined rows: each int column's pieces
    lie end to end in one buffer, so the frame takes them without a copy."""
    monkeypatch.setattr(load_module, "SLICE_ROWS", 128)
    events, quarantine, _ = load_file(_log(tmp_path, _rows(1000, seed=4)))
    assert not len(quarantine)
    for name in ("seq", "seat", "die1", "die2", "total", "source_line"):
        col = events.column(name)
        assert col.num_chunks > 1
        values = _in_place(col.chunks, np.dtype(np.int64))
        assert values is not None, name
        assert np.array_equal(values[np.asarray(col.is_valid())],
                              np.asarray(col.drop_null()))
