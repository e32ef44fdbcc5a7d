"""Parquet times without a zone: a `timestamp` without a time zone is read
as UTC and a `date32` as midnight UTC (the format asks for an offset; these
types carry none). Nothing is quarantined for it, and the report's
provenance says, for that input, what was assumed."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builder import lawful_table, report_provenance
from builder import run_cli as run


@pytest.mark.parametrize("kind, note", [
    ("naive", "ts is a Parquet timestamp without a time zone: read as UTC"),
    ("date32", "ts is a Parquet date (date32[day], no time of day): read as midnight UTC"),
    ("utc", None),
])
def test_a_time_without_a_zone_is_said_in_the_provenance(tmp_path, kind, note):
    b = lawful_table()
    frame = pd.DataFrame([{k: ("" if v is None else str(v)) for k, v in r.items()}
                          for r in b.rows])
    times = pd.to_datetime(frame.pop("ts"), utc=True)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    ts = {"naive": pa.array(times.dt.tz_localize(None)),
          "date32": pa.array(times.dt.date, pa.date32()),
          "utc": pa.array(times)}[kind]
    pq.write_table(table.append_column("ts", ts), tmp_path / "log.parquet")
    res = run("check", tmp_path / "log.parquet", "-r", "nz-table-games", "--out",
              tmp_path / "out")
    assert res.exit_code in (0, 1), res.output
    md = report_provenance(tmp_path / "out")
    (entry,) = md["inputs"]
    assert entry["rows_read"] == len(b.rows) and entry["rows_quarantined"] == 0
    assert entry.get("notes") == ([note] if note else None)
