"""Times in a JSON Lines log are read as the text the line holds, as a CSV
file's are. Arrow's JSON reader types text that looks like a time: it
turned `2026-03-01T15:00:05-05:00` into UTC and dropped the offset (the
table's gaming day was dated in UTC, not at -05:00), took a time written
without an offset as UTC (a CSV file's such row is quarantined: the spec
requires the offset), and under `--assume-offset +10:00` shifted times
whose offset was written by ten hours more."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from builder import lawful_table, run_cli

from auditor.logs.load import load_logs
from auditor.logs.raw import ReadOptions

EAST_OF_NEW_YORK = timezone(timedelta(hours=-5))
NO_OFFSET = "ts has no UTC offset (ISO-8601 with offset required)"


def _night(tmp_path: Path, ts=lambda t: t.astimezone(EAST_OF_NEW_YORK).isoformat(),
           rename: str | None = None) -> tuple[Path, Path]:
    """The same lawful table as CSV and as JSON Lines, its times written by
    `ts` (at -05:00 unless told); `rename`: the JSON Lines file names the
    time column so."""
    b = lawful_table()
    for row in b.rows:
        row["ts"] = ts(datetime.fromisoformat(row["ts"]))
    csv_path = b.write_csv(tmp_path / "night.csv")
    jsonl_path = tmp_path / "night.jsonl"
    with open(jsonl_path, "w", encoding="utf-8") as fh:
        for row in b.rows:
            if rename:
                row = {(rename if k == "ts" else k): v for k, v in row.items()}
            fh.write(json.dumps(row) + "\n")
    return csv_path, jsonl_path


def _read(path: Path, **options):
    logs = load_logs([path], options=ReadOptions(**options))
    (read,) = logs.inputs
    return (logs.events["ts"].tolist(), read.open_offsets, read.assumed_offset,
            sorted(zip(logs.quarantine["seq"].tolist(), logs.quarantine["reason"].tolist())))


def test_a_written_offset_is_kept_as_a_csv_keeps_it(tmp_path):
    csv_path, jsonl_path = _night(tmp_path)
    ts, offsets, assumed, quarantined = _read(jsonl_path)
    assert offsets == (("T1", 1, -300),)  # the gaming day is dated at -05:00
    assert ts[0].isoformat() == "2026-03-01T20:00:05+00:00"
    assert (ts, offsets, assumed, quarantined) == _read(csv_path)


def test_assume_offset_leaves_a_written_offset_alone(tmp_path):
    csv_path, jsonl_path = _night(tmp_path)
    ts, offsets, assumed, _ = _read(jsonl_path, assume_offset="+10:00")
    assert ts[0].isoformat() == "2026-03-01T20:00:05+00:00"
    assert offsets == (("T1", 1, -300),)
    assert assumed is None
    assert _read(jsonl_path, assume_offset="+10:00") == _read(csv_path, assume_offset="+10:00")


def test_a_time_without_an_offset_is_quarantined_as_in_a_csv_file(tmp_path):
    written = iter(range(1, 1000))

    def sixth_without(t):  # the sixth row's time written with no offset
        text = t.astimezone(EAST_OF_NEW_YORK).isoformat()
        return text[:19] if next(written) == 6 else text

    csv_path, jsonl_path = _night(tmp_path, ts=sixth_without)
    _, _, _, quarantined = _read(jsonl_path)
    assert quarantined == [(6, NO_OFFSET)]
    assert _read(jsonl_path) == _read(csv_path)


def test_times_without_offsets_read_at_the_offset_given(tmp_path):
    csv_path, jsonl_path = _night(tmp_path, ts=lambda t: t.astimezone(EAST_OF_NEW_YORK)
                                  .isoformat()[:19])
    ts, offsets, assumed, quarantined = _read(jsonl_path, assume_offset="-05:00")
    assert (offsets, assumed, quarantined) == ((("T1", 1, -300),), "-05:00", [])
    assert ts[0].isoformat() == "2026-03-01T20:00:05+00:00"
    assert _read(jsonl_path, assume_offset="-05:00") == _read(csv_path, assume_offset="-05:00")


def test_a_renamed_time_column_is_read_as_text_too(tmp_path):
    csv_path, jsonl_path = _night(tmp_path, rename="when")
    read = _read(jsonl_path, columns=(("when", "ts"),))
    assert read[1] == (("T1", 1, -300),)
    assert read == _read(csv_path)


def test_the_columns_keep_the_order_the_lines_give(tmp_path):
    _, jsonl_path = _night(tmp_path)
    lines = jsonl_path.read_text().splitlines()
    first = json.loads(lines[0])
    lines[0] = json.dumps({"note": "2026-03-01T15:00:00-05:00", **first})  # a time, first
    jsonl_path.write_text("\n".join(lines) + "\n")
    (read,) = load_logs([jsonl_path]).inputs
    assert read.columns[:4] == ("note", "table_id", "seq", "ts")


@pytest.mark.parametrize("form", ["csv", "jsonl"])
def test_the_report_dates_the_session_at_its_offset(tmp_path, form):
    csv_path, jsonl_path = _night(tmp_path, ts=lambda t: (t + timedelta(hours=7))
                                  .astimezone(EAST_OF_NEW_YORK).isoformat())
    # 22:00 at -05:00 is 03:00 UTC the next day: the session is of the 1st
    out = tmp_path / "out"
    run_cli("check", str(csv_path if form == "csv" else jsonl_path), "-r", "nz-table-games",
            "--out", str(out), "--format", "parquet")
    rollups = pq.read_table(out / "rollups.parquet").to_pylist()
    assert [r["key"] for r in rollups if r["level"] == "day"] == ["2026-03-01"]
