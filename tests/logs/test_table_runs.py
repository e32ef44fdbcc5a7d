"""Table bounds, worked out in one place (`auditor.logs.tables.table_runs`),
block by block, as the replay, the checks and the sessions read them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from auditor.logs import tables

TABLES = ["T1", "T1", "T1", "T2", "T2", "T10", "T10", "T10", "T10", "T3"]


@pytest.mark.parametrize("categorical", [True, False])
@pytest.mark.parametrize("block", [2, 3, 1 << 20])
def test_runs_are_found_across_block_edges(monkeypatch, categorical, block):
    monkeypatch.setattr(tables, "BLOCK_ROWS", block)
    column = pd.Series(TABLES, dtype="category" if categorical else object)
    starts, ends, names = tables.table_runs(pd.DataFrame({"table_id": column}))
    assert starts.tolist() == [0, 3, 5, 9]
    assert ends.tolist() == [3, 5, 9, 10]
    assert names == ["T1", "T2", "T10", "T3"]


def test_sessions_start_at_each_table_and_each_table_open():
    starts, _, _ = tables.table_runs(pd.DataFrame({"table_id": pd.Series(TABLES)}))
    opens = np.array([0, 1, 6], dtype=np.int64)  # a table_open on a table's first row too
    assert tables.session_starts(starts, opens).tolist() == [0, 1, 3, 5, 6, 9]


def test_no_rows_no_runs():
    starts, ends, names = tables.table_runs(pd.DataFrame({"table_id": pd.Series([], dtype=object)}))
    assert (starts.tolist(), ends.tolist(), names) == ([], [], [])
