"""A Parquet file of many row groups is typed a row group at a time
(`load._cuts`) and its frame built straight from the pieces: the events,
their categories (values held, first-seen order) and the quarantine must be
exactly those of typing the file in one piece."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from builder import lawful_table

from auditor.logs import load as load_module
from auditor.logs.frame import _held_in_first_seen_order
from auditor.logs.load import _cuts, load_logs
from auditor.logs.raw import RawLog, RawRejected
from auditor.logs.schema import COLUMN_NAMES


def _rows() -> list[dict]:
    b = lawful_table()
    for _ in range(6):
        b.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
        b.play(2, 6, 5)
    rows = [{k: r.get(k) for k in COLUMN_NAMES} for r in b.rows]
    rows[7]["seat"] = 99  # quarantined: a value no kept row holds
    rows[11]["bet"] = "Not A Bet"
    rows[len(rows) // 2]["seq"] = None
    return rows


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert a.dtypes.equals(b.dtypes)
    for c in a.columns:
        if isinstance(a[c].dtype, pd.CategoricalDtype):
            pd.testing.assert_index_equal(a[c].cat.categories, b[c].cat.categories, exact=True)
            assert a[c].cat.codes.dtype == b[c].cat.codes.dtype


def test_row_groups_type_as_one_piece(tmp_path, monkeypatch):
    rows = _rows()
    table = pa.Table.from_pylist(rows)
    one, many = tmp_path / "one.parquet", tmp_path / "many.parquet"
    pq.write_table(table, one)
    pq.write_table(table, many, row_group_size=7)
    whole = load_logs([one])
    for slice_rows in (5, 7, 16, 1000):
        monkeypatch.setattr(load_module, "SLICE_ROWS", slice_rows)
        got = load_logs([many])
        _same(whole.events.drop(columns="source_file"), got.events.drop(columns="source_file"))
        pd.testing.assert_frame_equal(whole.quarantine.drop(columns="source_file"),
                                      got.quarantine.drop(columns="source_file"))
        assert len(got.quarantine) == 3


def test_cuts_end_at_row_groups():
    def raw(lengths, fmt="parquet"):
        col = pa.chunked_array([pa.array(np.zeros(n)) for n in lengths])
        return RawLog("x", "", fmt, pa.table({"a": col, "b": col}), np.zeros(0), RawRejected())
    assert _cuts(raw([950] * 3), 1000) == [(0, 950), (950, 1900), (1900, 2850)]
    assert _cuts(raw([300] * 7), 1000) == [(0, 900), (900, 1800), (1800, 2100)]
    assert _cuts(raw([2500, 100]), 1000) == [(0, 1000), (1000, 2000), (2000, 2600)]
    assert _cuts(raw([950] * 3, "csv"), 1000) == [(0, 1000), (1000, 2000), (2000, 2850)]


def test_first_seen_order_of_held_codes():
    rng = np.random.default_rng(7)
    for n, k in ((0, 3), (10, 5), (70_000, 40), (300_000, 120)):
        codes = rng.integers(-1, k, n).astype(np.int8)
        if n > 1000:
            codes[: n - 10] = np.where(codes[: n - 10] == k - 1, -1, codes[: n - 10])
        expected = pd.unique(codes)
        assert list(_held_in_first_seen_order(codes, k)) == list(expected[expected >= 0])
