"""Values a Parquet file holds that Python cannot: a footer's `table_id`
statistics that are not UTF-8 (written so by any writer that stores such
ids as the log does) stopped every audit with `internal error:
UnicodeDecodeError` as the file was planned, and a `table_open` whose
time lies past the year 9999 stopped it with `OverflowError` as its
gaming day's offset was read (both found by fuzzing mutated Parquet logs,
2026-12-07). The file is audited; the row is quarantined as any such row
is, and the plan goes by the rows, not the footer's word."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builder import report_findings, report_provenance, run_cli

from auditor.generate import generate
from auditor.run.pieces import _bounds

TIME_REASON = "ts is out of range: years 1970 to 2261 only"


def _ids_not_utf8(path, row_group_size: int) -> int:
    """A generated night whose last row's table id ends in a lead byte with
    nothing after it (C2): its row group's `max` statistic is not UTF-8.
    Returns the last row's seq."""
    table = generate(2, 30, seed=3).table
    ids = [t.encode() for t in table.column("table_id").to_pylist()]
    ids[-1] = ids[-1] + b"\xc2"
    at = table.schema.get_field_index("table_id")
    table = table.set_column(at, "table_id", pa.array(ids, pa.binary()).view(pa.string()))
    pq.write_table(table, path, row_group_size=row_group_size)
    stats = pq.read_metadata(path).row_group(0).column(at).statistics
    assert _bounds(stats) is not None  # (the bounds as bytes: what the plan reads)
    return table.column("seq")[-1].as_py()


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("groups", ["one", "many"])
def test_statistics_that_are_not_utf8_leave_the_file_audited(tmp_path, jobs, groups):
    path = tmp_path / "night.parquet"
    seq = _ids_not_utf8(path, 100_000 if groups == "one" else 100)
    res = run_cli("check", path, "-r", "nz-table-games", "--out", tmp_path / "out",
                  "--jobs", jobs)
    assert "internal error" not in res.output, res.output
    assert res.exit_code == 1, res.output
    found = report_findings(tmp_path / "out")
    assert found[["code", "seq"]].values.tolist() == [["log.malformed", seq]]
    assert found["table_id"].tolist() == ["T02\\xc2"]
    quarantine = pq.read_table(tmp_path / "out" / "quarantine.parquet").to_pylist()
    assert [(r["seq"], r["reason"]) for r in quarantine] == [(seq, "table_id is not UTF-8 text")]
    assert report_provenance(tmp_path / "out")["rows"]["quarantined"] == 1


def test_bounds_that_cannot_be_read_are_none():
    class Unreadable:
        has_min_max = True

        @property
        def min_raw(self):
            raise UnicodeDecodeError("utf-8", b"\xc2", 0, 1, "unexpected end of data")

    class Without:
        has_min_max = False

    assert _bounds(Unreadable()) is None
    assert _bounds(Without()) is None
    assert _bounds(None) is None


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_table_open_past_the_year_9999_is_quarantined(tmp_path, jobs):
    """T2 opens at 10**18 microseconds (the year 33,658): a datetime cannot
    hold it. T1's own gaming day is read as before."""
    micros = [1772395200_000000, 1772395201_000000, 10 ** 18, -10 ** 18, 1772395209_000000]
    table = pa.table({
        "table_id": ["T1", "T1", "T2", "T3", "T1"], "seq": [1, 2, 1, 1, 3],
        "ts": pa.array(micros, pa.timestamp("us", tz="UTC")),
        "event": ["table_open", "staff_on", "table_open", "table_open", "table_close"],
        "actor_role": ["game_supervisor"] * 5})
    path = tmp_path / "times.parquet"
    pq.write_table(table, path)
    res = run_cli("check", path, "-r", "nz-1996", "--out", tmp_path / "out", "--jobs", jobs,
                  "--format", "parquet", "--format", "html", "--format", "json")
    assert "internal error" not in res.output, res.output
    assert res.exit_code == 1, res.output
    quarantine = pq.read_table(tmp_path / "out" / "quarantine.parquet").to_pylist()
    assert [(r["table_id"], r["seq"], r["reason"]) for r in quarantine] == [
        ("T2", 1, TIME_REASON), ("T3", 1, TIME_REASON)]
    found = report_findings(tmp_path / "out")
    assert sorted(found[["code", "table_id", "seq"]].values.tolist()) == [
        ["log.malformed", "T2", 1], ["log.malformed", "T3", 1]]
    assert report_provenance(tmp_path / "out")["rows"] == {
        "read": 5, "replayed": 3, "quarantined": 2}


def _lacking_actor_role(path, events: list[bytes]) -> None:
    """A Parquet log without `actor_role` whose `event` cells are `events`
    (text that need not be UTF-8)."""
    n = len(events)
    pq.write_table(pa.table({
        "table_id": ["T1"] * n, "seq": list(range(1, n + 1)),
        "ts": pa.array([1772395200_000000 + k for k in range(n)],
                       pa.timestamp("us", tz="UTC")),
        "event": pa.array(events, pa.binary()).view(pa.string())}), path)


@pytest.mark.parametrize("command", ["check", "validate"])
def test_an_event_that_is_not_utf8_beside_a_lacking_column(tmp_path, command):
    """(Was `internal error: UnicodeDecodeError` as the events were counted
    for the columns they need.) The events that need the column are named;
    the one that is not UTF-8 is none of them."""
    path = tmp_path / "night.parquet"
    _lacking_actor_role(path, [b"table_open", b"staff_on", b"staff_\xffon", b"staff_on"])
    args = ("check", path, "-r", "nz-table-games", "--out", tmp_path / "out") \
        if command == "check" else ("validate", path)
    res = run_cli(*args)
    assert "internal error" not in res.output, res.output
    assert res.exit_code == 2 if command == "check" else 1, res.output
    assert ("no column `actor_role`, which the spec requires for `staff_on` events (the file "
            "holds 2)") in res.output


def test_an_event_that_is_not_utf8_and_no_event_that_lacks_a_column(tmp_path):
    path = tmp_path / "night.parquet"
    _lacking_actor_role(path, [b"table_open", b"staff_\xffon", b"table_close"])
    res = run_cli("check", path, "-r", "nz-table-games", "--out", tmp_path / "out")
    assert "internal error" not in res.output and "no column" not in res.output, res.output
    assert res.exit_code == 1, res.output
    quarantine = pq.read_table(tmp_path / "out" / "quarantine.parquet").to_pylist()
    assert [(r["seq"], r["reason"]) for r in quarantine] == [
        (2, "event is not UTF-8 text; unknown event 'staff_\\\\xffon'")]
