"""Table identity and caveats through the CLI on real files (issue 14): one
table id in overlapping seq ranges across two files stops the run; sites
(`--site-from-path`, a log `site` column) keep such tables apart; a finding
whose hand holds an unreadable row or a seq gap carries a caveat."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from builder import LogBuilder, lawful_table, report_findings, run_cli

from auditor.logs.schema import COLUMN_NAMES

RULESET = "nz-table-games"


def _night(table: str = "T01") -> LogBuilder:
    """A short lawful night at `table`: a point made, the table closed."""
    b = lawful_table()
    b.play(2, 4, 2)
    b.play(2, 3, 3, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    b.add("table_close", role="game_supervisor")
    for row in b.rows:
        row["table_id"] = table
    return b


def _write(rows: list[dict], path: Path, extra: tuple[str, ...] = ()) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=[*COLUMN_NAMES, *extra])
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k, "") for k in (*COLUMN_NAMES, *extra)})
    return path


def _calls(b: LogBuilder) -> list[int]:
    return [r["seq"] for r in b.rows if r["event"] == "total_called"]


def _without_call(b: LogBuilder) -> tuple[list[dict], int]:
    """The night with its first call of a total missing (call.missing at the
    roll before it), and that call's seq."""
    seq = _calls(b)[0]
    return [r for r in b.rows if r["seq"] != seq], seq


# --- table identity ------------------------------------------------------------------


def test_one_table_id_in_two_folders_stops_the_run_naming_both_files(tmp_path):
    a = _write(_night().rows, tmp_path / "exports" / "casino-a" / "night.csv")
    b = _write(_night().rows, tmp_path / "exports" / "casino-b" / "night.csv")
    res = run_cli("check", tmp_path / "exports", "--ruleset", RULESET, "--out", tmp_path / "o")
    assert res.exit_code == 2, res.output
    assert f"table T01 is in both {a} (seq 1-" in res.output
    assert f"and {b} (seq 1-" in res.output
    assert "two tables with one id, or a file given twice" in res.output
    assert not (tmp_path / "o" / "findings.parquet").exists()


def test_a_file_given_twice_under_two_names_stops_the_run(tmp_path):
    a = _write(_night().rows, tmp_path / "night.csv")
    (tmp_path / "copy.csv").write_bytes(a.read_bytes())
    res = run_cli("check", a, tmp_path / "copy.csv", "--ruleset", RULESET,
                  "--out", tmp_path / "o")
    assert res.exit_code == 2, res.output
    assert "two tables with one id, or a file given twice" in res.output


def test_sites_from_path_keep_the_two_tables_apart(tmp_path):
    lawful = _night()
    broken, seq = _without_call(_night())
    _write(lawful.rows, tmp_path / "exports" / "casino-a" / "night.csv")
    _write(broken, tmp_path / "exports" / "casino-b" / "night.csv")
    res = run_cli("check", tmp_path / "exports", "--site-from-path", "--ruleset", RULESET,
                  "--out", tmp_path / "o", "--format", "parquet", "--format", "csv")
    assert res.exit_code == 1, res.output
    found = report_findings(tmp_path / "o")
    assert list(found.columns[:9]) == ["finding_id", "code", "rule_id", "ruleset", "clause",
                                       "severity", "site", "table_id", "seq"]
    got = sorted(zip(found["code"], found["site"], found["table_id"], found["seq"]))
    assert got == [("call.missing", "casino-b", "T01", seq - 1),
                   ("log.sequence_gap", "casino-b", "T01", seq + 1)]
    header = (tmp_path / "o" / "findings.csv").read_text().splitlines()[0].split(",")
    assert header[6:8] == ["site", "table_id"]
    assert "2 table(s)" in res.output


def test_a_report_audited_with_sites_stands_under_verify(tmp_path):
    """Each input's provenance names the site its path gave it, so verify
    keys the tables as the audit did (and a changed site would not stand)."""
    _write(_night().rows, tmp_path / "exports" / "casino-a" / "night.csv")
    _write(_night().rows, tmp_path / "exports" / "casino-b" / "night.csv")
    res = run_cli("check", tmp_path / "exports", "--site-from-path", "--ruleset", RULESET,
                  "--out", tmp_path / "o", "--format", "parquet", "--format", "csv")
    assert res.exit_code == 0, res.output
    verified = run_cli("verify", tmp_path / "o")
    assert verified.exit_code == 0, verified.output
    assert verified.output.startswith("report stands"), verified.output


def test_a_report_with_sites_and_quarantined_rows_stands_under_verify(tmp_path):
    """A quarantined row of a sited table: the report's quarantine.parquet
    has a `site` column, and verify builds the quarantine it compares as the
    report writes it (it left the column out, so no such report stood)."""
    rows = _night().rows
    rows[3] = {**rows[3], "seat": "0"}
    _write(_night().rows, tmp_path / "exports" / "casino-a" / "night.csv")
    _write(rows, tmp_path / "exports" / "casino-b" / "night.csv")
    res = run_cli("check", tmp_path / "exports", "--site-from-path", "--ruleset", RULESET,
                  "--out", tmp_path / "o")
    assert res.exit_code == 1, res.output
    q = pq.read_table(tmp_path / "o" / "quarantine.parquet").to_pandas()
    assert q[["site", "table_id", "seq"]].values.tolist() == [["casino-b", "T01", 4]]
    verified = run_cli("verify", tmp_path / "o")
    assert verified.exit_code == 0, verified.output
    assert verified.output.startswith("report stands"), verified.output
    assert "1 quarantined row(s) reproduced" in verified.output


def test_sites_from_path_need_a_folder_per_site(tmp_path):
    _write(_night().rows, tmp_path / "exports" / "night.csv")
    res = run_cli("check", tmp_path / "exports", "--site-from-path", "--ruleset", RULESET,
                  "--out", tmp_path / "o")
    assert res.exit_code == 2, res.output
    assert "--site-from-path takes the first folder below each path given" in res.output


def test_a_table_split_over_two_files_in_consecutive_seqs_is_one_table(tmp_path):
    rows = _night().rows
    half = len(rows) // 2
    _write(rows[:half], tmp_path / "logs" / "20h.csv")
    _write(rows[half:], tmp_path / "logs" / "21h.csv")
    res = run_cli("check", tmp_path / "logs", "--ruleset", RULESET, "--out", tmp_path / "o")
    assert res.exit_code == 0, res.output
    assert "1 table(s)" in res.output
    assert len(report_findings(tmp_path / "o")) == 0
    assert "site" not in report_findings(tmp_path / "o").columns


def test_a_table_dealt_over_two_files_with_each_seq_in_one_is_one_table(tmp_path):
    rows = _night().rows
    _write(rows[0::2], tmp_path / "logs" / "even.csv")
    _write(rows[1::2], tmp_path / "logs" / "odd.csv")
    res = run_cli("check", tmp_path / "logs", "--ruleset", RULESET, "--out", tmp_path / "o")
    assert res.exit_code == 0, res.output
    assert "1 table(s)" in res.output


def test_a_site_column_keeps_the_tables_of_one_file_apart(tmp_path):
    lawful = _night()
    broken, seq = _without_call(_night())
    rows = [{**r, "site": "casino-a"} for r in lawful.rows] + \
        [{**r, "site": "casino-b"} for r in broken]
    _write(rows, tmp_path / "both.csv", extra=("site",))
    res = run_cli("check", tmp_path / "both.csv", "--ruleset", RULESET, "--out", tmp_path / "o")
    assert res.exit_code == 1, res.output
    found = report_findings(tmp_path / "o")
    assert sorted(zip(found["code"], found["site"], found["table_id"], found["seq"])) == [
        ("call.missing", "casino-b", "T01", seq - 1),
        ("log.sequence_gap", "casino-b", "T01", seq + 1)]


def test_a_site_column_reaches_the_quarantine(tmp_path):
    rows = [{**r, "site": "casino-a"} for r in _night().rows]
    rows[3]["seat"] = "0"
    _write(rows, tmp_path / "a.csv", extra=("site",))
    res = run_cli("check", tmp_path / "a.csv", "--ruleset", RULESET, "--out", tmp_path / "o")
    assert res.exit_code == 1, res.output
    q = pq.read_table(tmp_path / "o" / "quarantine.parquet").to_pandas()
    assert q[["site", "table_id", "seq"]].values.tolist() == [["casino-a", "T01", 4]]


def test_without_a_site_the_outputs_have_no_site_column(tmp_path):
    broken, _ = _without_call(_night())
    _write(broken, tmp_path / "a.csv")
    res = run_cli("check", tmp_path / "a.csv", "--ruleset", RULESET, "--out", tmp_path / "o")
    assert res.exit_code == 1, res.output
    assert "site" not in pq.read_schema(tmp_path / "o" / "findings.parquet").names
    assert "site" not in pq.read_schema(tmp_path / "o" / "quarantine.parquet").names


# --- caveats ---------------------------------------------------------------------------


def _with_bad_bytes(path: Path, seq: int) -> None:
    """The row of `seq` given a staff name that is not UTF-8 (as a file saved
    in Windows-1252 has it): that row is quarantined."""
    lines = path.read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(f"T01,{seq},".encode()))
    cells = lines[at].split(b",")
    cells[5] += b"\xe9"
    lines[at] = b",".join(cells)
    path.write_bytes(b"\n".join(lines))


def test_a_finding_next_to_a_quarantined_row_says_so(tmp_path):
    b = _night()
    seq = _calls(b)[0]
    log = _write(b.rows, tmp_path / "a.csv")
    _with_bad_bytes(log, seq)
    res = run_cli("check", log, "--ruleset", RULESET, "--out", tmp_path / "o",
                  "--format", "parquet", "--format", "html")
    assert res.exit_code == 1, res.output
    found = report_findings(tmp_path / "o")
    rules = found[found["code"] != "log.malformed"]
    assert _rows(rules) == [
        ["call.missing", seq - 1, f"quarantined row {seq} in this hand"]]
    assert f'"caveat":"quarantined row {seq} in this hand"' in rules["evidence"].iat[0]
    assert found.loc[found["code"] == "log.malformed", "caveat"].isna().all()
    assert "1 of them next to unreadable rows" in res.output
    page = (tmp_path / "o" / "report.html").read_text()
    assert '<span class="badge caveat"' in page
    assert f"seq {seq}: actor_id is not UTF-8 text" in page


def test_the_lawful_twin_has_no_caveat(tmp_path):
    log = _write(_night().rows, tmp_path / "a.csv")
    res = run_cli("check", log, "--ruleset", RULESET, "--out", tmp_path / "o")
    assert res.exit_code == 0, res.output
    assert "unreadable" not in res.output
    assert len(report_findings(tmp_path / "o")) == 0


def test_a_breach_with_a_whole_hand_has_no_caveat(tmp_path):
    b = _night()
    seq = _calls(b)[0]
    rows = [{**r, "total": 9} if r["seq"] == seq else r for r in b.rows]
    _write(rows, tmp_path / "a.csv")
    res = run_cli("check", tmp_path / "a.csv", "--ruleset", RULESET, "--out", tmp_path / "o")
    assert res.exit_code == 1, res.output
    found = report_findings(tmp_path / "o")
    assert found[["code", "seq"]].values.tolist() == [["call.wrong_total", seq]]
    assert found["caveat"].isna().all()
    assert "unreadable" not in res.output


def test_a_finding_next_to_a_seq_gap_says_so(tmp_path):
    broken, seq = _without_call(_night())
    _write(broken, tmp_path / "a.csv")
    res = run_cli("check", tmp_path / "a.csv", "--ruleset", RULESET, "--out", tmp_path / "o")
    assert res.exit_code == 1, res.output
    found = report_findings(tmp_path / "o")
    assert _rows(found) == [
        ["call.missing", seq - 1, f"seq {seq} missing in this hand"],
        ["log.sequence_gap", seq + 1, None]]


def _rows(found: pd.DataFrame) -> list[list]:
    """(code, seq, caveat) of each finding, a missing caveat as None."""
    return [[code, seq, None if pd.isna(caveat) else caveat]
            for code, seq, caveat in zip(found["code"], found["seq"], found["caveat"])]


def test_every_table_s_gaps_reach_its_caveats_whatever_order_the_file_gives_tables(tmp_path):
    """Two tables, each missing a call of a total, `T09` written before
    `T01`: both findings carry their gap. (The gaps were looked up as if
    the tables lay in the order of their names: the rows of a file that
    gives `T09` first held `T01`'s gap after `T09`'s, and `T01`'s finding
    went without its caveat.)"""
    late, seq = _without_call(_night("T09"))
    early, _ = _without_call(_night("T01"))
    _write(late + early, tmp_path / "a.csv")
    res = run_cli("check", tmp_path / "a.csv", "--ruleset", RULESET, "--out", tmp_path / "o")
    assert res.exit_code == 1, res.output
    found = report_findings(tmp_path / "o")
    assert sorted(zip(found["table_id"], found["code"], found["seq"],
                      found["caveat"].fillna("-"))) == [
        ("T01", "call.missing", seq - 1, f"seq {seq} missing in this hand"),
        ("T01", "log.sequence_gap", seq + 1, "-"),
        ("T09", "call.missing", seq - 1, f"seq {seq} missing in this hand"),
        ("T09", "log.sequence_gap", seq + 1, "-")]


def test_a_hand_of_many_unreadable_rows_lists_the_first_and_counts_them(tmp_path,
                                                                        monkeypatch):
    """A caveat lists at most `CAVEAT_RUNS` runs, then how many rows (or
    gaps) there are in all: a night whose every hand held thousands had
    each listed in each finding (1.9M rows: 11 GB before the run was
    stopped). Here two quarantined rows apart, at most one run listed."""
    from auditor.audit import caveat

    b = _night()
    seq = _calls(b)[0]
    log = _write(b.rows, tmp_path / "a.csv")
    _with_bad_bytes(log, seq)
    _with_bad_bytes(log, seq + 2)
    monkeypatch.setattr(caveat, "CAVEAT_RUNS", 1)
    res = run_cli("check", log, "--ruleset", RULESET, "--out", tmp_path / "o")
    assert res.exit_code == 1, res.output
    found = report_findings(tmp_path / "o")
    rules = found[found["code"] != "log.malformed"]
    assert _rows(rules) == [
        ["call.missing", seq - 1, f"quarantined rows {seq}, … (2 rows in all) in this hand"]]
    monkeypatch.setattr(caveat, "CAVEAT_RUNS", 2)
    res = run_cli("check", log, "--ruleset", RULESET, "--out", tmp_path / "o2")
    rules = report_findings(tmp_path / "o2").query("code != 'log.malformed'")
    assert _rows(rules) == [
        ["call.missing", seq - 1, f"quarantined rows {seq}, {seq + 2} in this hand"]]
    # a run longer than the rows looked at is shown whole
    _with_bad_bytes(log, seq + 1)
    monkeypatch.setattr(caveat, "_LISTED_ROWS", 1)
    res = run_cli("check", log, "--ruleset", RULESET, "--out", tmp_path / "o3")
    rules = report_findings(tmp_path / "o3").query("code != 'log.malformed'")
    assert _rows(rules) == [
        ["call.missing", seq - 1, f"quarantined rows {seq}-{seq + 2} in this hand"]]


def test_runs_and_gaps_past_the_listed_are_counted():
    from auditor.audit.caveat import CAVEAT_RUNS, _listed, _run_ends, _runs

    assert _runs(np.array([250, 251, 252, 260, 260]), 5, "rows") == "250-252, 260"
    apart = np.arange(0, 40, 2)  # (20 runs of one seq)
    listed = ", ".join(str(s) for s in apart[:CAVEAT_RUNS])
    assert _runs(apart, 20, "rows") == f"{listed}, … (20 rows in all)"
    # (only the first rows looked at: the count is the hand's)
    assert _runs(np.array([5, 6]), 1_234, "rows", 6, False) == "5-6, … (1,234 rows in all)"
    # (a long run shown whole where the rows looked at end inside it)
    assert _runs(np.array([5, 6]), 1_234, "rows", 1_238, True) == "5-1238"
    assert _runs(np.array([5, 6]), 1_234, "rows", 1_238, False) == \
        "5-1238, … (1,234 rows in all)"
    assert _run_ends(np.array([3, 4, 4, 5, 9, 11, 12])).tolist() == [5, 5, 5, 5, 9, 12, 12]
    assert _listed([(300, 300), (305, 307)], 2, "gaps") == "300, 305-307"
    spans = [(k, k) for k in range(0, 30, 2)]
    assert _listed(spans[:CAVEAT_RUNS], 15, "gaps").endswith(", … (15 gaps in all)")
