"""How loading uses memory: numpy's huge-page hint is off while a log is
read, typed and ordered (whichever engine does it) and put back after,
whatever happens, unless the environment chose it; a number column held end
to end in one Arrow buffer becomes the frame's column without a copy, and
anything else is copied."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builder import lawful_table

from auditor.errors import LogFileError
from auditor.logs import frame as frame_module
from auditor.logs import load as load_module
from auditor.logs.frame import _float64, _int64, _numbers, _timestamps
from auditor.logs.load import load_logs
from auditor.logs.memory import small_pages
from auditor.logs.schema import COLUMN_NAMES

_set_hugepage = (getattr(np, "_core", None) or np.core).multiarray._set_madvise_hugepage


def _hugepage() -> bool:
    """numpy's current huge-page hint (read by setting it and back)."""
    now = _set_hugepage(True)
    _set_hugepage(now)
    return now


@pytest.fixture
def hugepage_on(monkeypatch):
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    before = _set_hugepage(True)
    yield
    _set_hugepage(before)


def _log(tmp_path, name="log.parquet"):
    b = lawful_table()
    for _ in range(3):
        b.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5)])
    rows = [{k: r.get(k) for k in COLUMN_NAMES} for r in b.rows]
    path = tmp_path / name
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=7)
    return path


def _watched(monkeypatch) -> list[tuple[str, bool]]:
    """The hint as typing and ordering found it."""
    seen = []
    for module, name in ((load_module, "coerce"), (frame_module, "_event_order")):
        real = getattr(module, name)

        def watch(*args, real=real, name=name):
            seen.append((name, _hugepage()))
            return real(*args)
        monkeypatch.setattr(module, name, watch)
    return seen


def test_no_huge_pages_while_loading_and_put_back_after(tmp_path, hugepage_on, monkeypatch):
    seen = _watched(monkeypatch)
    load_logs([_log(tmp_path)], on_file=lambda f: seen.append(("on_file", _hugepage())))
    assert seen == [("coerce", False), ("on_file", True), ("_event_order", False)]
    assert _hugepage() is True
    _set_hugepage(False)
    load_logs([_log(tmp_path)])
    assert _hugepage() is False


def test_no_huge_pages_for_engines_loading_file_by_file(tmp_path, hugepage_on, monkeypatch):
    seen = _watched(monkeypatch)
    events, _, _ = load_module.load_file(_log(tmp_path))
    frame_module.order_events(events)
    assert seen == [("coerce", False), ("_event_order", False)]
    assert _hugepage() is True


def test_hint_put_back_when_loading_fails(tmp_path, hugepage_on):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(LogFileError):
        load_logs([bad])
    assert _hugepage() is True
    with pytest.raises(RuntimeError), small_pages():
        assert _hugepage() is False
        raise RuntimeError
    assert _hugepage() is True


def test_environment_choice_stands(tmp_path, hugepage_on, monkeypatch):
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    seen = _watched(monkeypatch)
    load_logs([_log(tmp_path)])
    assert seen == [("coerce", True), ("_event_order", True)]


def _pieces(values: np.ndarray, cuts: list[int], nulls=()) -> pa.ChunkedArray:
    """One Arrow array cut into slices: pieces end to end in one buffer."""
    mask = np.zeros(len(values), dtype=bool)
    mask[list(nulls)] = True
    whole = pa.array(values, mask=mask if len(nulls) else None)
    bounds = [0, *cuts, len(values)]
    return pa.chunked_array([whole.slice(a, b - a) for a, b in pairwise(bounds)])


def test_numbers_in_one_buffer_are_not_copied():
    col = _pieces(np.arange(10, dtype=np.int64) * 3, [4, 7], nulls=[5])
    values, missing = _numbers(col, np.int64, None)
    buf = col.chunk(0).buffers()[1]
    assert values.__array_interface__["data"][0] == buf.address
    assert values.flags.writeable
    assert list(missing) == [i == 5 for i in range(10)]
    ints = _int64(col, None)
    assert ints.tolist() == [0, 3, 6, 9, 12, pd.NA, 18, 21, 24, 27]


def test_numbers_copied_when_not_in_one_piece_or_reordered():
    a = _pieces(np.arange(6, dtype=np.int64), [3])
    joined = pa.chunked_array(a.chunks[:1] + pa.chunked_array([np.arange(3, 6)]).chunks)
    for col, order in ((joined, None), (a, np.array([5, 4, 3, 2, 1, 0]))):
        values, _ = _numbers(col, np.int64, order)
        for chunk in col.chunks:
            assert not np.shares_memory(values, np.frombuffer(chunk.buffers()[1], np.int64))
        assert list(values) == (list(range(6)) if order is None else list(range(5, -1, -1)))


def test_read_only_memory_is_copied():
    data = np.arange(4, dtype=np.int64)
    data.flags.writeable = False
    col = pa.Array.from_buffers(pa.int64(), 4, [None, pa.py_buffer(data)])
    values, _ = _numbers(pa.chunked_array([col]), np.int64, None)
    assert values.flags.writeable and not np.shares_memory(values, data)


def test_floats_null_as_nan_over_the_column_without_changing_it():
    """NaN written under the nulls of the column's own memory (no copy):
    what Arrow holds there is undefined, and the column stays equal to
    itself, every valid value unchanged."""
    col = _pieces(np.array([1.5, 2.0, -3.0, 4.25]), [2], nulls=[1])
    expected = col.to_pandas().to_numpy()
    before = pa.chunked_array([c.to_pylist() for c in col.chunks], col.type)
    got = _float64(col, None)
    assert np.shares_memory(got, np.frombuffer(col.chunk(0).buffers()[1], np.float64))
    assert np.isnan(got[1]) and list(got[[0, 2, 3]]) == [1.5, -3.0, 4.25]
    assert col.equals(before) and col.to_pylist() == [1.5, None, -3.0, 4.25]
    assert np.array_equal(got, expected, equal_nan=True)


def test_frame_from_parquet_columns_as_read(tmp_path, monkeypatch):
    """Typed a row group at a time (slices of columns read whole), with and
    without a row set aside: the same frame as typed in one piece."""
    path = _log(tmp_path)
    whole = load_logs([path]).events
    monkeypatch.setattr(load_module, "SLICE_ROWS", 7)
    sliced = load_logs([path]).events
    pd.testing.assert_frame_equal(whole, sliced, check_exact=True)
    sliced["seq"].array[0] = 99  # the frame's columns can be written to


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("zone", ["UTC", "+00:00"])
def test_utc_timestamps_as_to_pandas_gives_them(unit, zone):
    """Nulls, pieces and a new order: the values, unit and time zone that
    pyarrow's `to_pandas` gives, NaT where null."""
    whole = pa.array([1, None, 3, -5, 2**33], pa.int64()).cast(pa.timestamp(unit, tz=zone))
    col = pa.chunked_array([whole.slice(0, 2), whole.slice(2)])
    for order in (None, np.array([4, 3, 2, 1, 0])):
        got = pd.Series(_timestamps(col, order), copy=False)
        expected = (col if order is None else col.take(pa.array(order))).to_pandas()
        assert got.dtype == expected.dtype
        assert type(got.dt.tz) is type(expected.dt.tz)
        pd.testing.assert_series_equal(got, expected, check_exact=True)


def test_utc_timestamps_in_one_buffer_are_not_copied():
    col = _pieces(np.arange(6, dtype=np.int64) * 1_000_000, [2]).cast(pa.timestamp("us", tz="UTC"))
    got = _timestamps(col, None)
    assert np.shares_memory(np.asarray(got.asi8), np.frombuffer(col.chunk(0).buffers()[1], np.int64))
    assert str(got[5]) == "1970-01-01 00:00:05+00:00"


def test_utc_timestamps_without_pandas_private_constructor(monkeypatch):
    """pandas without `DatetimeArray._simple_new`: its public localisation,
    the same column."""
    col = _pieces(np.array([7, 0, -2], dtype=np.int64), [1], nulls=[1]).cast(
        pa.timestamp("ms", tz="UTC"))
    monkeypatch.delattr(pd.arrays.DatetimeArray, "_simple_new")
    got = pd.Series(_timestamps(col, None), copy=False)
    pd.testing.assert_series_equal(got, col.to_pandas(), check_exact=True)


# --- many small files: joined as read ------------------------------------------------------

def _small_files(folder, count: int):
    """`count` tiny logs: one table each, 4 rows, some with a column of
    their own, some leaving a column out, one a table split over two files,
    and every tenth with a row quarantined."""
    folder.mkdir()
    for i in range(count):
        extra = f",note{i % 3}" if i % 7 == 0 else ""
        head = "table_id,seq,ts,event,actor_role" + ("" if i % 5 == 0 else ",actor_id") + extra
        table = "T00000" if i == count - 1 else f"T{i:05d}"
        first = 5 if i == count - 1 else 1
        lines = [head]
        for k, event in enumerate(("table_open", "staff_on", "staff_off", "table_close")):
            seq = first + k
            when = "not a time" if i % 10 == 3 and k == 1 else f"2026-03-01T20:00:0{k}+00:00"
            row = f"{table},{seq},{when},{event},game_supervisor"
            row += "" if i % 5 == 0 else f",S{i % 4}"
            lines.append(row + ("," + f"n{k}" if extra else ""))
        (folder / f"t{i:05d}.csv").write_text("\n".join(lines) + "\n")
    return folder


def test_small_files_are_joined_as_read_into_the_frame_one_by_one_gives(tmp_path, monkeypatch):
    """A table kept per file costs ~32 KB of Arrow's objects however few its
    rows (20,000 files of 4 rows held 700 MB): small files' tables are
    joined every JOIN_FILES files, and the frame, the quarantine and the
    inputs are what the tables kept one by one give."""
    folder = _small_files(tmp_path / "logs", 520)
    seen = []
    order = load_module.order_events
    monkeypatch.setattr(load_module, "order_events", lambda tables: (
        seen.append(len(tables)), order(tables))[1])
    joined = load_logs([folder])
    monkeypatch.setattr(load_module, "JOIN_FILES", 10**9)
    monkeypatch.setattr(load_module, "JOIN_ROWS", 0)  # (every file kept as read)
    one_by_one = load_logs([folder])
    # (joined every 256 tables, a table a file or a batch of files typed
    # together: at most 256 + 256 + 8 files)
    assert seen[0] <= 3 and seen[1] == 520
    pd.testing.assert_frame_equal(joined.events, one_by_one.events)
    pd.testing.assert_frame_equal(joined.quarantine, one_by_one.quarantine)
    assert joined.inputs == one_by_one.inputs
    assert len(joined.quarantine) == 52 and joined.rows_read == 520 * 4
    assert joined.rows_read == joined.rows_replayed + joined.rows_quarantined


def test_a_file_of_many_rows_is_kept_as_read_between_joined_small_ones(tmp_path,
                                                                         monkeypatch):
    """A file of JOIN_ROWS rows or more is not copied into a join: those
    before it are joined, it is kept as read, and the frame is the same."""
    folder = _small_files(tmp_path / "logs", 20)
    monkeypatch.setattr(load_module, "JOIN_ROWS", 4)  # (a file of 4 events: "large")
    pieces = []
    order = load_module.order_events
    monkeypatch.setattr(load_module, "order_events", lambda tables: (
        pieces.append([t.num_rows for t in tables]), order(tables))[1])
    joined = load_logs([folder])
    assert pieces == [[3 if i % 10 == 3 else 4 for i in range(20)]]
    monkeypatch.setattr(load_module, "JOIN_ROWS", 1 << 16)
    pd.testing.assert_frame_equal(joined.events, load_logs([folder]).events)
    assert pieces[1] == [78]
