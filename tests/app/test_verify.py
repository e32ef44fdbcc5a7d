"""`auditor verify DIR`: a fresh report stands; a changed input, a changed or
missing ruleset, a missing input or findings that differ break it; no report
is exit 2."""

from __future__ import annotations

import os
import shutil

import pyarrow.parquet as pq
import pytest
from builder import broken_table, lawful_table, report_provenance
from builder import run_cli as run

RULESET = """[ruleset]
id = "verify-test"
title = "Verify test"
status = "provisional"
notes = "test"
extends = "nz-table-games"
"""


@pytest.fixture
def night(tmp_path, monkeypatch):
    """A broken night (two findings, one quarantined row) audited against a
    ruleset file that extends a shipped one, with relative paths as a user
    would type them."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    b = broken_table()
    b.add("dice_inspectd", role="dealer")
    b.write_csv(tmp_path / "logs" / "t1.csv")
    c = lawful_table()
    c.table = "T2"
    c.rows = [{**r, "table_id": "T2"} for r in c.rows]
    c.write_csv(tmp_path / "logs" / "t2.csv")
    (tmp_path / "rules.toml").write_text(RULESET)
    res = run("check", "logs", "--ruleset", "rules.toml", "--out", "reports")
    assert res.exit_code == 1, res.output
    return tmp_path


def verify(folder="reports"):
    res = run("verify", folder)
    assert "Traceback" not in res.output and "internal error" not in res.output, res.output
    return res


def test_a_fresh_report_stands(night):
    res = verify()
    assert res.exit_code == 0, res.output
    assert res.output.startswith("report stands: 2 input(s) unchanged, ruleset verify-test")
    n = pq.read_metadata(night / "reports" / "findings.parquet").num_rows
    assert n >= 3 and f"{n} finding(s) and 1 quarantined row(s) reproduced" in res.output


def test_the_provenance_names_the_ruleset_files(night):
    md = report_provenance(night / "reports")
    files = md["ruleset"]["files"]
    assert files[-1] == "rules.toml" and files[0].endswith("nz-table-games.toml")


def test_a_stamped_report_stands(night):
    assert run("check", "logs", "-r", "rules.toml", "--out", "stamped", "--stamp").exit_code == 1
    assert verify("stamped").exit_code == 0


def test_one_changed_input_byte_breaks_it(night):
    log = night / "logs" / "t2.csv"
    data = bytearray(log.read_bytes())
    i = data.index(b"2026-03-01T20:00:05")
    data[i + 18] = ord("6")  # the first event 1 s later: nothing else changes
    log.write_bytes(bytes(data))
    res = verify()
    assert res.exit_code == 1, res.output
    assert res.output.startswith("report does not stand")
    assert "input logs/t2.csv: changed (sha256 was" in res.output
    assert "finding" not in res.output.split("changed", 1)[1]  # the same findings


def test_a_changed_input_that_changes_findings(night):
    log = night / "logs" / "t1.csv"
    log.write_text(log.read_text().replace("no_stick", "stick"))
    res = verify()
    assert res.exit_code == 1
    assert "input logs/t1.csv: changed" in res.output
    assert "(dice.stick_not_used, T1 seq" in res.output and "not found now" in res.output


def test_a_missing_input(night):
    os.remove(night / "logs" / "t1.csv")
    res = verify()
    assert res.exit_code == 1
    assert "input logs/t1.csv: missing" in res.output
    assert "could not be re-run" in res.output


def test_a_changed_ruleset_breaks_it(night):
    (night / "rules.toml").write_text(RULESET + """
[[rule]]
id = "R5.7-stick"
severity = "critical"
""")
    res = verify()
    assert res.exit_code == 1, res.output
    assert "ruleset verify-test: changed (content hash was sha256:" in res.output
    assert "now differs in severity" in res.output


def test_a_reformatted_ruleset_still_stands(night):
    (night / "rules.toml").write_text("# a comment\n\n" + RULESET.replace(" = ", "="))
    assert verify().exit_code == 0


def test_a_ruleset_that_no_longer_loads(night):
    (night / "rules.toml").write_text(RULESET + "colour = 1\n")
    res = verify()
    assert res.exit_code == 1
    assert "ruleset verify-test: no longer loads" in res.output and "colour" in res.output


def test_a_missing_ruleset_file(night):
    os.remove(night / "rules.toml")
    res = verify()
    assert res.exit_code == 1 and "ruleset verify-test: file rules.toml missing" in res.output


def test_findings_edited_in_the_report(night):
    path = night / "reports" / "findings.parquet"
    table = pq.read_table(path)
    table = table.slice(1)  # a finding removed from the report
    pq.write_table(table, path)
    res = verify()
    assert res.exit_code == 1
    assert "is found now, not in the report" in res.output


def test_quarantine_missing(night):
    os.remove(night / "reports" / "quarantine.parquet")
    res = verify()
    assert res.exit_code == 1 and "quarantine.parquet: missing" in res.output


@pytest.mark.parametrize("setup", ["empty", "absent", "not_parquet", "no_provenance"])
def test_no_report_exits_2(night, setup):
    folder = night / "elsewhere"
    if setup != "absent":
        folder.mkdir()
    if setup == "not_parquet":
        (folder / "findings.parquet").write_text("not parquet")
    if setup == "no_provenance":
        shutil.copy(night / "reports" / "findings.parquet", folder / "x.parquet")
        table = pq.read_table(folder / "x.parquet").replace_schema_metadata(None)
        pq.write_table(table, folder / "findings.parquet")
    res = verify(folder)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "elsewhere" in lines[0]


FAMILY = {
    "nz@1996.toml": '[ruleset]\nid = "nz@1996"\ntitle = "Old"\nstatus = "verified"\n'
                    'extends = "nz-1996"\neffective_from = 1996-01-01\n'
                    'effective_to = 2026-02-28\n',
    "nz@2026.toml": '[ruleset]\nid = "nz@2026"\ntitle = "New"\nstatus = "verified"\n'
                    'extends = "nz-table-games"\neffective_from = 2026-03-01\n',
}


def test_a_report_judged_by_a_family_of_versions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rules").mkdir()
    for name, text in FAMILY.items():
        (tmp_path / "rules" / name).write_text(text)
    b = lawful_table()
    b.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    b.write_csv(tmp_path / "night.csv")
    res = run("check", "night.csv", "--ruleset", "rules/nz", "--out", "reports")
    assert res.exit_code == 0, res.output
    assert verify().exit_code == 0
    (tmp_path / "rules" / "nz@2026.toml").write_text(
        FAMILY["nz@2026.toml"].replace('"New"', '"Newer"'))
    res = verify()
    assert res.exit_code == 1 and "ruleset nz@2026: changed" in res.output, res.output


@pytest.mark.parametrize("at", [4, -12, -2])
def test_a_bit_flipped_report_does_not_stand(night, at):
    """A report damaged since it was written (a bit flipped in a page
    header, the footer, its closing magic number) does not stand: exit 1,
    never the exit 2 of no report. (verify compares what the report holds:
    a flip in bytes no reader looks at changes nothing it holds.)"""
    path = night / "reports" / "findings.parquet"
    data = bytearray(path.read_bytes())
    data[at] ^= 0x10
    path.write_bytes(bytes(data))
    res = verify()
    assert res.exit_code == 1, res.output
    assert res.output.startswith("report does not stand: "), res.output  # (with the manifest, the hash too)
    assert "findings.parquet: " in res.output
