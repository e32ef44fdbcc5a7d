"""The `auditor` command: exit codes, outputs, provenance and determinism."""

import hashlib
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from builder import lawful_table, report_findings, report_provenance
from builder import run_cli as run

from auditor import __version__
from auditor.findings import FINDING_COLUMNS, RESPONSIBLE_FIELDS


def _lawful(tmp_path):
    b = lawful_table()
    b.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    return b.write_csv(tmp_path / "lawful.csv")


def _broken(tmp_path):
    b = lawful_table()
    b.roll(2, 3, 4)
    b.call(7)
    b.collect(flags="no_stick")  # minor
    b.settle(2, "pass", "lose")  # critical: a natural wins
    b.settle(5, "pass", "win", 10)
    b.settle(7, "pass", "win", 10)
    return b.write_csv(tmp_path / "broken.csv")


def test_help_and_version():
    assert run("--version").output.strip() == f"auditor, version {__version__}"
    out = run("--help").output
    assert "Exit codes" in out and "check" in out and "validate" in out
    assert "Exit codes" in run("check", "--help").output


def test_python_dash_m_is_the_same_command():
    proc = subprocess.run([sys.executable, "-m", "auditor", "--version"], check=False,
                          capture_output=True,
                          text=True)
    assert proc.returncode == 0 and __version__ in proc.stdout


def test_clean_log_exits_0_and_writes_findings(tmp_path):
    out = tmp_path / "out"
    res = run("check", _lawful(tmp_path), "--ruleset", "nz-table-games", "--out", out)
    assert res.exit_code == 0, res.output
    assert "PASS" in res.output and str(out / "findings.parquet") in res.output
    table = pq.read_table(out / "findings.parquet")
    assert tuple(table.column_names) == (*FINDING_COLUMNS, *(r.name for r in RESPONSIBLE_FIELDS))
    assert table.num_rows == 0


def test_findings_at_or_above_threshold_exit_1(tmp_path):
    log = _broken(tmp_path)
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "o")
    assert res.exit_code == 1 and "FAIL" in res.output
    f = report_findings(tmp_path / "o")
    assert sorted(f["code"]) == ["dice.stick_not_used", "settle.wrong_outcome"]


@pytest.mark.parametrize("threshold,code", [("critical", 1), ("major", 1), ("minor", 1)])
def test_fail_on_threshold(tmp_path, threshold, code):
    res = run("check", _broken(tmp_path), "-r", "nz-table-games", "--out", tmp_path / "o",
              "--fail-on", threshold)
    assert res.exit_code == code


def test_fail_on_critical_passes_minor_only(tmp_path):
    b = lawful_table()
    b.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    b.collect(flags="no_stick")
    log = b.write_csv(tmp_path / "minor.csv")
    args = ("check", log, "-r", "nz-table-games", "--out", tmp_path / "o")
    assert run(*args, "--fail-on", "critical").exit_code == 0
    assert run(*args, "--fail-on", "minor").exit_code == 1


def test_provenance_in_metadata(tmp_path):
    log = _broken(tmp_path)
    run("check", log, "-r", "nz-table-games", "--out", tmp_path / "o")
    md = report_provenance(tmp_path / "o")
    assert md["auditor_version"] == __version__
    assert md["ruleset"]["id"] == "nz-table-games"
    assert md["ruleset"]["content_hash"].startswith("sha256:")
    [inp] = md["inputs"]
    assert inp["sha256"] == hashlib.sha256(log.read_bytes()).hexdigest()
    assert inp["rows_read"] == inp["rows_replayed"] + inp["rows_quarantined"]
    assert "generated_at" not in md


def test_same_inputs_same_bytes(tmp_path):
    log = _broken(tmp_path)
    run("check", log, "-r", "nz-table-games", "--out", tmp_path / "a")
    run("check", log, "-r", "nz-table-games", "--out", tmp_path / "b")
    for name in ("findings.parquet", "quarantine.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_finding_ids_are_stable_and_unique(tmp_path):
    log = _broken(tmp_path)
    run("check", log, "-r", "nz-table-games", "--out", tmp_path / "a")
    ids = pq.read_table(tmp_path / "a" / "findings.parquet").column("finding_id").to_pylist()
    assert len(set(ids)) == len(ids)


def test_stamp_adds_time(tmp_path):
    run("check", _lawful(tmp_path), "-r", "nz-1996", "--out", tmp_path / "a", "--stamp")
    md = report_provenance(tmp_path / "a")
    assert "generated_at" in md


def test_quarantine_file_names_rows(tmp_path):
    log = _lawful(tmp_path)
    text = log.read_text().splitlines()
    text[3] = text[3].replace("dice_inspected", "dice_inspectd")
    log.write_text("\n".join(text) + "\n")
    res = run("check", log, "-r", "nz-1996", "--out", tmp_path / "o")
    assert res.exit_code == 1
    q = pq.read_table(tmp_path / "o" / "quarantine.parquet").to_pandas()
    assert q["source_line"].tolist() == [4]
    assert "unknown event" in q["reason"].iat[0]
    assert "1 quarantined" in res.output


@pytest.mark.parametrize("args,message", [
    (("check", "missing.csv", "-r", "nz-1996"), "no such file or folder"),
    (("check", "{log}", "-r", "no-such-ruleset"), "no such ruleset"),
    (("check", "{log}"), "Missing option"),
])
def test_could_not_run_exits_2(tmp_path, args, message):
    log = _lawful(tmp_path)
    res = run(*[a.format(log=log) for a in args])
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output


def test_out_is_a_file_exits_2_and_keeps_it(tmp_path):
    target = tmp_path / "afile"
    target.write_text("keep me")
    res = run("check", _lawful(tmp_path), "-r", "nz-1996", "--out", target)
    assert res.exit_code == 2 and "not a folder" in res.output
    assert target.read_text() == "keep me"


def test_unreadable_log_exits_2_with_file_and_problem(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("table_id,seq,event\nT1,1,table_open\n")
    res = run("check", bad, "-r", "nz-1996", "--out", tmp_path / "o")
    assert res.exit_code == 2
    assert f"{bad}: missing required column(s): ts" in res.output


def test_validate_lists_located_problems(tmp_path):
    log = _lawful(tmp_path)
    lines = log.read_text().splitlines()
    lines[5] = lines[5].replace(",2,", ",0,", 1) if ",2," in lines[5] else lines[5]
    lines.pop(8)
    log.write_text("\n".join(lines) + "\n")
    res = run("validate", log)
    assert res.exit_code == 1
    assert f"{log}:" in res.output and "[log.sequence_gap]" in res.output


def test_validate_clean_log_exits_0(tmp_path):
    res = run("validate", _lawful(tmp_path))
    assert res.exit_code == 0
    assert "no problems" in res.output


def test_folder_is_searched_recursively(tmp_path):
    sub = tmp_path / "night" / "t1"
    sub.mkdir(parents=True)
    _lawful(sub)
    (tmp_path / "night" / "notes.txt").write_text("not a log")
    res = run("check", tmp_path / "night", "-r", "nz-1996", "--out", tmp_path / "o")
    assert res.exit_code == 0 and "Audited 1 file(s)" in res.output


def test_the_audit_and_its_reports_ask_for_small_pages_and_put_the_hint_back(
        tmp_path, monkeypatch):
    """numpy's transparent-huge-page hint is off while `auditor check` audits
    and writes its reports (faulting huge pages in cost more kernel time than
    it saved), and is as it was afterwards; NUMPY_MADVISE_HUGEPAGE, when
    set, is left to decide."""
    import numpy as np

    from auditor.report import formats

    multiarray = np._core.multiarray
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    seen = []
    real = formats.write_and_render

    def spy(*args, **kwargs):
        seen.append(multiarray._get_madvise_hugepage())
        return real(*args, **kwargs)

    monkeypatch.setattr("auditor.app.check.write_and_render", spy)
    before = multiarray._set_madvise_hugepage(True)
    try:
        res = run("check", _lawful(tmp_path), "--ruleset", "nz-table-games", "--out",
                  tmp_path / "out")
        assert res.exit_code == 0, res.output
        assert seen == [False] and multiarray._get_madvise_hugepage() is True
        monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
        res = run("check", _lawful(tmp_path), "--ruleset", "nz-table-games", "--out",
                  tmp_path / "out2")
        assert res.exit_code == 0, res.output
        assert seen == [False, True]
    finally:
        multiarray._set_madvise_hugepage(before)
