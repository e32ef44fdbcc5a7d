"""The `csv` format: findings.csv holds one row per finding (the columns of
findings.parquet, then the status), RFC 4180, the same bytes every run, and
a cell that could start a spreadsheet formula neutralised with a `'`."""

import csv
import io

import pyarrow.parquet as pq
from builder import lawful_table
from builder import run_cli as run

from auditor.report.formats import FORMAT_MODULES

HOSTILE_TABLE = '=HYPERLINK("http://x","y")'
HEADER = ["finding_id", "code", "rule_id", "ruleset", "clause", "severity", "table_id",
          "seq", "ts", "event", "seat", "actor_role", "actor_id", "message", "evidence",
          "source_file", "source_line", "caveat", "status", "waiver", "waiver_reason"]


def hostile_log(tmp_path):
    """A call.wrong_total (called by the stickperson, actor id `-K1`), a
    dice.stick_not_used and a settle.wrong_outcome, at a table whose id is a
    formula."""
    b = lawful_table()
    b.roll(2, 3, 4)
    b.call(8)
    b.collect(flags="no_stick")
    b.settle(2, "pass", "lose", 0)
    b.settle(5, "pass", "win", 10)
    b.settle(7, "pass", "win", 10)
    for row in b.rows:
        row["table_id"] = HOSTILE_TABLE
        if row.get("actor_id") == "K1":
            row["actor_id"] = "-K1"
    return b.write_csv(tmp_path / "hostile.csv")


def check_csv(tmp_path, log, out, *extra):
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / out,
              "--format", "csv", "--format", "parquet", *extra)
    data = (tmp_path / out / "findings.csv").read_bytes()
    return res, data, list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def test_one_row_per_finding_neutralised_with_its_status(tmp_path):
    assert FORMAT_MODULES["csv"] == "auditor.report.csv_format"
    log = hostile_log(tmp_path)
    waivers = tmp_path / "waivers.toml"
    waivers.write_text('[[waiver]]\nrule = "R5.7-stick"\nreason = "+stick mended"\n',
                       encoding="utf-8")
    res, data, rows = check_csv(tmp_path, log, "out", "--waivers", waivers)
    assert res.exit_code == 1, res.output
    assert rows[0] == HEADER
    got = [dict(zip(HEADER, r)) for r in rows[1:]]
    assert [(r["code"], r["table_id"], r["seq"]) for r in got] == [
        ("call.wrong_total", "'" + HOSTILE_TABLE, "18"),
        ("dice.stick_not_used", "'" + HOSTILE_TABLE, "19"),
        ("settle.wrong_outcome", "'" + HOSTILE_TABLE, "20"),
    ]
    call = got[0]
    assert call["actor_id"] == "'-K1" and call["actor_role"] == "stickperson"
    assert [(r["status"], r["waiver"], r["waiver_reason"]) for r in got] == [
        ("new", "", ""), ("waived", "1", "'+stick mended"), ("new", "", "")]
    assert call["ts"].endswith("Z") and call["source_line"] == "19"
    # the same findings as findings.parquet, in its order
    parquet = pq.read_table(tmp_path / "out" / "findings.parquet").to_pylist()
    assert [r["finding_id"] for r in got] == [p["finding_id"] for p in parquet]
    assert [r["evidence"] for r in got] == [p["evidence"] for p in parquet]
    # RFC 4180: CRLF line ends, the quoted table id's quotes doubled
    assert data.count(b"\r\n") == 4 and b"\n" not in data.replace(b"\r\n", b"")
    assert b'"\'=HYPERLINK(""http://x"",""y"")"' in data
    assert check_csv(tmp_path, log, "again", "--waivers", waivers)[1] == data


def test_a_clean_log_writes_the_header_alone(tmp_path):
    log = lawful_table().write_csv(tmp_path / "clean.csv")
    res, data, _ = check_csv(tmp_path, log, "out")
    assert res.exit_code == 0, res.output
    assert data == (",".join(HEADER) + "\r\n").encode()


def test_the_file_is_written_as_it_goes_the_same_bytes_as_the_text(tmp_path):
    """findings.csv is written row by row into the file (its text never whole
    in memory): the bytes are the text's, a lone surrogate (text that cannot
    be UTF-8) written as its `\\uXXXX` escape."""
    from builder import audit, broken_table

    from auditor.report import csv_format

    result = audit([broken_table().write_csv(tmp_path / "t1.csv")], "nz-table-games")
    assert len(result.findings) == 2
    result.findings.loc[result.findings.index[1], "actor_id"] = "D\ud800,x"
    (tmp_path / "out").mkdir()
    csv_format.write(result, {}, tmp_path / "out")
    data = (tmp_path / "out" / "findings.csv").read_bytes()
    assert data == csv_format.findings_csv(result).encode("utf-8", "backslashreplace")
    assert b'"D\\ud800,x"' in data and data.count(b"\r\n") == len(result.findings) + 1
