"""Times no report can hold: a `ts` outside the years 1677-2262 stopped every
report when HTML was asked (`internal error: OutOfBoundsDatetime`, no Parquet
either), as did two times more than 292 years apart; a Parquet time in
seconds beyond what microseconds hold stopped the read. A `ts` outside
1970-2261 is quarantined as out of range; every format is written."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builder import report_provenance, run_cli

from auditor.report.formats import FORMATS

REASON = "ts is out of range: years 1970 to 2261 only"
TIMES = ["2026-03-01T20:00:00+00:00", "2500-03-01T20:00:05+00:00", "1600-03-01T20:00:05Z",
         "1969-12-31T23:59:59.999999+00:00", "1970-01-01T00:00:00+00:00",
         "2261-12-31T23:59:59.999999+00:00", "2262-01-01T00:00:00+00:00",
         "9999-12-31T23:59:59+00:00", "2026-03-01T20:00:09+00:00"]
OUT_OF_RANGE = [2, 3, 4, 7, 8]  # seqs
EVENTS = ["table_open"] + ["staff_on"] * (len(TIMES) - 2) + ["table_close"]


def _rows() -> list[dict]:
    return [{"table_id": "T1", "seq": i, "ts": ts, "event": ev, "actor_role": "game_supervisor"}
            for i, (ts, ev) in enumerate(zip(TIMES, EVENTS), start=1)]


def _every_format(path, out):
    args = ["check", path, "-r", "nz-1996", "--out", out]
    for name in FORMATS:
        args += ["--format", name]
    return run_cli(*args)


def _quarantined(out) -> list[tuple[int, str]]:
    q = pq.read_table(out / "quarantine.parquet").to_pylist()
    return [(r["seq"], r["reason"]) for r in q]


@pytest.mark.parametrize("form", ["csv", "jsonl"])
def test_a_time_outside_1970_to_2261_is_quarantined_and_html_written(tmp_path, form):
    rows = _rows()
    path = tmp_path / f"times.{form}"
    if form == "csv":
        path.write_text("table_id,seq,ts,event,actor_role\n" + "".join(
            f"{r['table_id']},{r['seq']},{r['ts']},{r['event']},{r['actor_role']}\n"
            for r in rows))
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = _every_format(path, tmp_path / "out")
    assert res.exit_code == 1, res.output
    assert "internal error" not in res.output
    assert report_provenance(tmp_path / "out")["rows"] == {
        "read": len(rows), "replayed": len(rows) - 5, "quarantined": 5}
    assert _quarantined(tmp_path / "out") == [(s, REASON) for s in OUT_OF_RANGE]
    assert (tmp_path / "out" / "report.html").stat().st_size > 0


@pytest.mark.parametrize("zone", ["UTC", None])
def test_a_parquet_time_in_seconds_beyond_microseconds_is_quarantined(tmp_path, zone):
    """10**13 seconds (the year 318,857): microseconds cannot hold it."""
    seconds = [1772395200, -1, 10 ** 13, -10 ** 13, 1772395209]
    table = pa.table({"table_id": ["T1"] * 5, "seq": [1, 2, 3, 4, 5],
                      "ts": pa.array(seconds, pa.timestamp("s", tz=zone)),
                      "event": ["table_open", "staff_on", "staff_on", "staff_on", "table_close"],
                      "actor_role": ["game_supervisor"] * 5})
    path = tmp_path / "times.parquet"
    pq.write_table(table, path)
    res = _every_format(path, tmp_path / "out")
    assert res.exit_code == 1, res.output
    assert report_provenance(tmp_path / "out")["rows"] == {
        "read": 5, "replayed": 2, "quarantined": 3}
    assert _quarantined(tmp_path / "out") == [(2, REASON), (3, REASON), (4, REASON)]
    raw = [json.loads(r["raw"])["ts"]
           for r in pq.read_table(tmp_path / "out" / "quarantine.parquet").to_pylist()]
    assert raw[1:] == ["10000000000000000 ms since 1970-01-01",  # (Parquet keeps seconds as ms)
                       "-10000000000000000 ms since 1970-01-01"]
