"""The quick ways text is typed and checked must say exactly what the slow
ways say: a time's offset told from its last bytes (else the expression),
trimming skipped when no value would change, digits-only numbers cast
directly, 64-bit values taken per row by numpy, a CSV's empty cells read as
null, blank records, line breaks in values, and the (event, value) checks."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.logs import validate as validate_module
from auditor.logs.arrays import code_counts, where_valid
from auditor.logs.coerce import TS_OFFSET_RE, TextColumn, _taken_words, _trimmed, _with_offset
from auditor.logs.csv_format import _holds_line_break
from auditor.logs.load import load_logs
from auditor.logs.validate import _by_event

TIMES = st.one_of(
    st.sampled_from(["2026-03-01T20:00:00+00:00", "2026-03-01T20:00:00Z", "2026-03-01T20:00:00z",
                     "2026-03-01T20:00:00-05:30", "2026-03-01T20:00:00+0530",
                     "2026-03-01T20:00:00+05", "2026-03-01T20:00:00", "+00:00", "Z", "",
                     "2026-03-01T20:00:00+0a:00", "2026-03-01T20:00:00 +00:00",
                     "2026-03-01T20:00:00+00:00\n", "x+99:99"]),
    st.text(alphabet="0123456789:+-Zz T", max_size=12))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), TIMES), max_size=20), st.booleans())
def test_offset_as_the_expression_says(values, same_length):
    if same_length:  # (the path that reads the bytes as a matrix)
        values = ["2026-03-01T20:00:00+00:00" if v is None else v for v in values]
    arr = pa.array(values, pa.string())
    want = pc.fill_null(pc.match_substring_regex(arr, TS_OFFSET_RE), False)
    assert _with_offset(arr).to_pylist() == want.to_pylist()
    if len(values) > 1:
        assert _with_offset(arr.slice(1)).to_pylist() == want.slice(1).to_pylist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=6),
                          st.sampled_from([" 12", "12 ", "\t7", "7\u00a0", "\u30007", "ab"])),
                max_size=12))
def test_trimmed_only_when_trimming_changes_nothing(values):
    arr = pa.array(values, pa.string())
    if _trimmed(arr):
        assert pc.utf8_trim_whitespace(arr).to_pylist() == values
        assert "" not in values


def test_trimmed_cases():
    assert _trimmed(pa.array(["12", "x", None]))
    assert not _trimmed(pa.array(["12", " x"]))
    assert not _trimmed(pa.array(["12", ""]))
    assert not _trimmed(pa.array(["12", "x\u00a0"]))
    assert _trimmed(pa.array([None, None], pa.string()))


@pytest.mark.parametrize("kind", [pa.int64(), pa.float64(), pa.timestamp("us", tz="UTC")])
def test_words_taken_as_arrow_takes_them(kind):
    rng = np.random.default_rng(3)
    per_value = pa.array(rng.integers(-5, 1 << 40, 50), pa.int64()).cast(kind) \
        if kind != pa.float64() else pa.array(rng.normal(size=50))
    per_value = pc.if_else(pa.array(rng.random(50) < 0.2), pa.scalar(None, kind), per_value)
    codes = rng.integers(0, 51, 400).astype(np.int32)  # 50: a row with no value
    want = pa.concat_arrays([per_value, pa.nulls(1, kind)]).take(pa.array(codes))
    got = _taken_words(per_value.slice(0), codes)
    assert got.equals(want)
    assert np.array_equal(np.frombuffer(got.buffers()[1], np.int64, count=400),
                          np.frombuffer(want.buffers()[1], np.int64, count=400))
    assert _taken_words(per_value.slice(10, 20), codes % 21).equals(
        pa.concat_arrays([per_value.slice(10, 20), pa.nulls(1, kind)]).take(
            pa.array(codes % 21)))


def test_where_valid():
    values = np.array([3, 4, 5], np.int8)
    assert list(where_valid(values, np.array([True, False, True]), -1)) == [3, -1, 5]
    assert list(values) == [3, 4, 5]
    where_valid(values, np.array([False, True, True]), -1, out=values)
    assert list(values) == [-1, 4, 5]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-1, 6), max_size=40), st.integers(1, 7))
def test_code_counts_as_bincount_of_the_known_codes(codes, block):
    """Counted a block at a time, whatever the block: numpy's bincount of
    the codes that are not missing (-1)."""
    codes = np.array(codes, dtype=np.int8)
    expected = np.bincount(codes[codes >= 0].astype(np.int64), minlength=7)
    assert code_counts(codes, 7, block=block).tolist() == expected.tolist()


def test_checks_by_event_as_one_take():
    rng = np.random.default_rng(5)
    text = TextColumn(pa.array([f"v{i}" for i in range(6)]), rng.integers(0, 7, 300).astype(np.int32))
    ev = rng.integers(0, validate_module._NO_EVENT + 1, 300).astype(np.uint8)
    per_event = {3: rng.random(6) < 0.5, 9: rng.random(6) < 0.5}
    want = np.zeros(300, dtype=bool)
    for code, mask in per_event.items():
        want |= (ev == code) & text.rows(mask)
    assert np.array_equal(_by_event(text, ev, per_event), want)


def test_line_breaks_found_in_the_bytes():
    assert _holds_line_break(pa.array(["a", None, "b\nc"]))
    assert not _holds_line_break(pa.array(["a\nb", "c", "d"]).slice(1))
    assert not _holds_line_break(pa.array([None, None], pa.string()))


HEADER = "table_id,seq,ts,event,actor_role,actor_id,seat,dice,outcome"


def _csv(tmp_path, lines: list[str], name="log.csv"):
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    return path


def test_csv_empty_cells_blank_records_and_line_breaks(tmp_path):
    """Empty cells (plain or quoted "") are not recorded; a record of empty
    cells is not a row; a quoted line break pushes later lines down."""
    path = _csv(tmp_path, [
        'T1,1,2026-03-01T20:00:00+00:00,table_open,game_supervisor,S1,"",,',
        ",,,,,,,,",
        '"",,"",,,,,,',
        'T1,2,2026-03-01T20:00:01+00:00,staff_on,dealer,"D\nX",,,',
        "T1,3,2026-03-01T20:00:02Z,marker,system,S1,,,on",
        " T1 , 4 ,2026-03-01T20:00:03+00:00,marker,system,S1,,,off",
        "T1,99999999999999999999,2026-03-01T20:00:04+00:00,marker,system,S1,,,on",
        "T1,6,2026-03-01T20:00:05,marker,system,S1,,,on",
    ])
    logs = load_logs([path])
    ev = logs.events
    assert ev["seq"].tolist() == [1, 2, 3, 4]
    assert ev["source_line"].tolist() == [2, 5, 7, 8]
    assert ev["actor_id"].astype(str).tolist() == ["S1", "D\nX", "S1", "S1"]
    assert ev["table_id"].astype(str).tolist() == ["T1"] * 4
    assert ev["seat"].isna().all() and ev["outcome"].astype(object).tolist()[2:] == ["on", "off"]
    q = logs.quarantine
    assert q["source_line"].tolist() == [9, 10]
    assert q["reason"].tolist() == ["seq is out of range",
                                    "ts has no UTC offset (ISO-8601 with offset required)"]
