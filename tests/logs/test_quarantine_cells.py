"""A quarantined row's cells are written a column at a time
(`validate._cells_as_json`): exactly the JSON object `json.dumps(cells,
sort_keys=True, ensure_ascii=False)` wrote a row at a time, whatever the
cells hold."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
from builder import lawful_table
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.logs.load import load_logs
from auditor.logs.validate import _cells_as_json

TEXT = st.one_of(st.none(), st.text(max_size=8), st.sampled_from(['%s', '"', "\\", "é\u202e", ""]))


def _row_at_a_time(table: pa.Table) -> list[str]:
    return [json.dumps({k: None if v is None else str(v) for k, v in row.items()},
                       sort_keys=True, ensure_ascii=False) for row in table.to_pylist()]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(TEXT, st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)),
                          st.one_of(st.none(), st.floats(allow_nan=True)), TEXT),
                max_size=12),
       st.sampled_from([["b", "a%", "z\"", "é"], ["seq", "actor_id", "ts", "flags"]]))
def test_cells_written_a_column_at_a_time_as_a_row_at_a_time(rows, names):
    table = _table(rows, names)
    assert _cells_as_json(table) == _row_at_a_time(table)
    half = len(rows) // 2  # (in two chunks, each its own dictionary)
    chunked = pa.concat_tables([_table(rows[:half], names), _table(rows[half:], names)])
    assert _cells_as_json(chunked) == _row_at_a_time(table)


def _table(rows, names) -> pa.Table:
    return pa.table({names[0]: pa.array([r[0] for r in rows], pa.string()),
                     names[1]: pa.array([r[1] for r in rows], pa.int64()),
                     names[2]: pa.array([r[2] for r in rows], pa.float64()),
                     names[3]: pa.array([r[3] for r in rows], pa.string()).dictionary_encode()})


def test_a_time_past_python_is_written_as_units_since_1970():
    ts = pa.array([0, 9_000_000_000_000_000_000, None], pa.timestamp("us", tz="UTC"))
    got = _cells_as_json(pa.table({"ts": ts, "seq": pa.array(["1", "2", "3"])}))
    assert got == ['{"seq": "1", "ts": "' + str(datetime(1970, 1, 1, tzinfo=UTC)) + '"}',
                   '{"seq": "2", "ts": "9000000000000000000 us since 1970-01-01"}',
                   '{"seq": "3", "ts": null}']


def test_a_quarantined_row_of_a_log_keeps_its_cells(tmp_path: Path):
    b = lawful_table()
    b.play(2, 4, 2)
    path = b.write_csv(tmp_path / "night.csv")
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b",", b",\xe9%s", 1)  # (not UTF-8, and a %)
    path.write_bytes(b"\n".join(lines))
    q = load_logs([path]).quarantine
    assert q["source_line"].tolist() == [4]
    cells = json.loads(q["raw"][0])
    assert cells["seq"].startswith("\\xe9%s")
