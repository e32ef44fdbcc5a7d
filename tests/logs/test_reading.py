"""Reading logs in every form, quarantining bad rows, and the log.* checks."""

import gzip
import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builder import LogBuilder, audit, found, lawful_table

from auditor.errors import LogFileError
from auditor.logs.load import load_logs
from auditor.logs.schema import COLUMN_NAMES
from auditor.rules.ruleset import load_ruleset
from auditor.run import AuditJob, run_audit


def _frame(b: LogBuilder) -> pd.DataFrame:
    return pd.DataFrame([{k: r.get(k) for k in COLUMN_NAMES} for r in b.rows])


def write_jsonl(b: LogBuilder, path, opener=open):
    with opener(path, "wt", encoding="utf-8") as fh:
        for r in b.rows:
            fh.write(json.dumps({k: v for k, v in r.items() if v not in (None, "")}) + "\n")
    return path


def write_parquet(b: LogBuilder, path):
    frame = _frame(b)
    frame["ts"] = pd.to_datetime(frame["ts"], utc=True)
    for c in ("seat", "die1", "die2", "total", "seq"):
        frame[c] = frame[c].astype("Int64")
    frame["amount"] = frame["amount"].astype("float64")
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    return path


def _session():
    b = lawful_table()
    b.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    return b


@pytest.mark.parametrize("form", ["csv", "csv.gz", "jsonl", "ndjson.gz", "parquet"])
def test_every_form_reads_the_same_events(tmp_path, form):
    b = _session()
    base = tmp_path / "log"
    if form == "csv":
        path = b.write_csv(tmp_path / "log.csv")
    elif form == "csv.gz":
        raw = b.write_csv(tmp_path / "plain.csv").read_bytes()
        path = tmp_path / "log.csv.gz"
        path.write_bytes(gzip.compress(raw))
    elif form == "jsonl":
        path = write_jsonl(b, tmp_path / "log.jsonl")
    elif form == "ndjson.gz":
        path = write_jsonl(b, tmp_path / "log.ndjson.gz", opener=gzip.open)
    else:
        path = write_parquet(b, tmp_path / "log.parquet")
    del base
    logs = load_logs([path])
    assert logs.rows_read == len(b.rows) == logs.rows_replayed
    assert logs.rows_quarantined == 0
    ev = logs.events
    assert ev["seq"].tolist() == list(range(1, len(b.rows) + 1))
    assert str(ev["ts"].dt.tz) == "UTC"
    assert isinstance(ev["event"].dtype, pd.CategoricalDtype)
    assert audit([path], "nz-table-games").findings.empty


def test_offsets_become_utc(tmp_path):
    b = LogBuilder()
    b.add("table_open", role="game_supervisor")
    b.rows[0]["ts"] = "2026-03-01T22:00:00+02:00"
    logs = load_logs([b.write_csv(tmp_path / "a.csv")])
    assert logs.events["ts"].iat[0] == pd.Timestamp("2026-03-01T20:00:00Z")


def test_extra_columns_are_kept(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("table_id,seq,ts,event,camera\nT1,1,2026-03-01T20:00:00Z,table_open,C4\n")
    logs = load_logs([path])
    assert logs.events["camera"].tolist() == ["C4"]


def test_table_split_across_files_in_any_order(tmp_path):
    b = _session()
    half = len(b.rows) // 2
    whole = b.rows
    b.rows = whole[half:]
    second = b.write_csv(tmp_path / "a_second.csv")
    b.rows = whole[:half]
    first = b.write_csv(tmp_path / "b_first.csv")
    logs = load_logs([tmp_path])
    assert logs.events["seq"].tolist() == list(range(1, len(whole) + 1))
    assert audit([second, first], "nz-table-games").findings.empty


def test_many_tables_in_one_file(tmp_path):
    a, b = _session(), _session()
    for r in b.rows:
        r["table_id"] = "T2"
    a.rows = [x for pair in zip(a.rows, b.rows) for x in pair]
    result = audit([a.write_csv(tmp_path / "two.csv")], "nz-table-games")
    assert result.tables == ["T1", "T2"]
    assert result.findings.empty


BAD_ROWS = [
    ("event", "dice_tossed", "unknown event"),
    ("die1", "7", "die1 must be 1 to 6"),
    ("seat", "0", "seat must be 1 or more"),
    ("amount", "-5", "amount must be 0 or more"),
    ("outcome", "maybe", "unknown outcome"),
    ("flags", "one_hand,levitating", "unknown flag"),
    ("dice", "", "missing dice required by roll"),
]


@pytest.mark.parametrize("column,value,reason", BAD_ROWS)
def test_bad_row_is_quarantined_and_named(tmp_path, column, value, reason):
    b = _session()
    target = next(r for r in b.rows if r["event"] == "roll") if column in (
        "die1", "flags", "dice") else next(r for r in b.rows if r["event"] == "wager_settled")
    if column == "seat":
        target = next(r for r in b.rows if r["event"] == "wager_placed")
    if column == "amount":
        target = next(r for r in b.rows if r["event"] == "wager_placed")
    target[column] = value
    path = b.write_csv(tmp_path / "bad.csv")
    result = audit([path], "nz-table-games")
    logs = result.logs
    assert logs.rows_read == logs.rows_replayed + logs.rows_quarantined
    assert logs.rows_quarantined == 1
    line = b.rows.index(target) + 2
    malformed = result.findings[result.findings["code"] == "log.malformed"]
    assert malformed[["table_id", "seq", "source_line"]].values.tolist() == [
        ["T1", target["seq"], line]]
    assert reason in malformed["message"].iat[0]
    assert logs.quarantine["source_line"].tolist() == [line]


def test_row_with_unreadable_seq_is_named_by_file_and_line(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("table_id,seq,ts,event\nT1,1,2026-03-01T20:00:00Z,table_open\n"
                    "T1,two,2026-03-01T20:00:05Z,table_close\nT1,3,2026-03-01T20:00:09Z,x,y\n")
    f = audit([path], "nz-1996").findings
    mal = f[f["code"] == "log.malformed"]
    assert mal["seq"].isna().all()
    assert sorted(mal["source_line"].tolist()) == [3, 4]


def test_sequence_gap_fires_on_the_first_event_after_it(tmp_path):
    b = _session()
    del b.rows[5]
    after = b.rows[5]["seq"]
    assert found(b, tmp_path, "nz-1996", "log.") == {("log.sequence_gap", "T1", after)}


def test_sequence_gap_quiet_when_missing_row_was_quarantined(tmp_path):
    b = _session()
    b.rows[5]["event"] = "bogus_event"
    assert found(b, tmp_path, "nz-1996", "log.") == {("log.malformed", "T1", b.rows[5]["seq"])}


def test_repeated_seq_is_out_of_order(tmp_path):
    b = _session()
    b.rows[6]["seq"] = b.rows[5]["seq"]
    seq = b.rows[5]["seq"]
    assert ("log.out_of_order", "T1", seq) in found(b, tmp_path, "nz-1996", "log.")


def test_ts_going_back_is_out_of_order(tmp_path):
    b = _session()
    b.rows[6]["ts"] = b.rows[2]["ts"]
    assert found(b, tmp_path, "nz-1996", "log.") == {
        ("log.out_of_order", "T1", b.rows[6]["seq"])}


def test_seq_going_back_within_a_file_is_out_of_order(tmp_path):
    b = _session()
    b.rows[6], b.rows[7] = b.rows[7], b.rows[6]  # file: seq 6, 8, 7, 9
    assert found(b, tmp_path, "nz-1996", "log.") == {("log.out_of_order", "T1", 7)}
    # With the times in file order too, seq 7 goes back in its file and, in
    # seq order, the ts of seq 8 goes back: both are reported.
    b.rows[6]["ts"], b.rows[7]["ts"] = b.rows[7]["ts"], b.rows[6]["ts"]
    assert found(b, tmp_path, "nz-1996", "log.") == {
        ("log.out_of_order", "T1", 7), ("log.out_of_order", "T1", 8)}


@pytest.mark.parametrize("swapped", [True, False])
def test_seq_going_back_across_another_tables_rows_is_out_of_order(tmp_path, swapped):
    """The previous row of a table in its file is that table's, whatever other
    tables' rows lie between: the same finding however the tables are grouped
    (one process, or tables audited apart with --jobs); two tables
    interleaved in order find nothing."""
    t1, t2 = _session(), lawful_table()
    t2.table = "T2"
    for row in t2.rows:
        row["table_id"] = "T2"
    if swapped:
        t1.rows[6], t1.rows[7] = t1.rows[7], t1.rows[6]  # T1 in its file: seq 6, 8, 7, 9
    rows = [*t1.rows[:7], t2.rows[0], *t1.rows[7:], *t2.rows[1:]]  # a T2 row between 8 and 7
    mixed = LogBuilder()
    mixed.rows = rows
    path = mixed.write_csv(tmp_path / "both.csv")
    for jobs in (1, 2):
        f = run_audit(AuditJob.of([path], load_ruleset("nz-1996"), jobs=jobs)).findings
        assert {(c, t, int(s)) for c, t, s in zip(f["code"], f["table_id"], f["seq"])
                if c.startswith("log.")} == ({("log.out_of_order", "T1", 7)} if swapped
                                             else set()), jobs


def test_in_order_log_has_no_log_findings(tmp_path):
    assert found(_session(), tmp_path, "nz-1996", "log.") == set()


def test_unknown_seat_and_die_are_unknown_references(tmp_path):
    b = _session()
    seat_seq = b.bet(9)
    die_seq = b.add("dice_to_bowl", role="stickperson", dice="Z9")
    assert found(b, tmp_path, "nz-1996", "log.") == {
        ("log.unknown_reference", "T1", seat_seq), ("log.unknown_reference", "T1", die_seq)}


@pytest.mark.parametrize("content,problem", [
    (b"", "empty"),
    (b"table_id,seq,event\nT1,1,table_open\n", "missing required column(s): ts"),
    (b"table_id,seq,ts,event\n", "holds no events"),
])
def test_file_that_cannot_be_a_log(tmp_path, content, problem):
    path = tmp_path / "x.csv"
    path.write_bytes(content)
    with pytest.raises(LogFileError) as err:
        load_logs([path])
    assert str(path) in str(err.value) and problem in str(err.value)


def test_broken_gzip_and_parquet_are_file_errors(tmp_path):
    gz = tmp_path / "x.csv.gz"
    gz.write_bytes(gzip.compress(b"table_id,seq,ts,event\n" * 50)[:30])
    pqf = tmp_path / "y.parquet"
    pqf.write_bytes(b"PAR1 this is not parquet")
    for path in (gz, pqf):
        with pytest.raises(LogFileError) as err:
            load_logs([path])
        assert str(path) in str(err.value)


def test_jsonl_bad_line_is_quarantined_with_its_line(tmp_path):
    b = _session()
    path = write_jsonl(b, tmp_path / "a.jsonl")
    lines = path.read_text().splitlines()
    lines.insert(3, "{not json")
    path.write_text("\n".join(lines) + "\n")
    logs = load_logs([path])
    assert logs.quarantine["source_line"].tolist() == [4]
    assert logs.rows_read == len(b.rows) + 1
