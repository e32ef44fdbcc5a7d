"""Real, imperfect logs through `auditor check`: the planted NZ sample night
with a column removed, without a required column, re-encoded as
Windows-1252, with times written without an offset. Each gives the findings
the auditor can stand behind, and says what it could not judge, or stops
with one line."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
from builder import report_findings, report_provenance, run_cli

from auditor.checks import CHECKS
from auditor.logs import raw, read
from auditor.rules.ruleset import load_ruleset

NIGHT = Path(__file__).resolve().parents[2] / "sample_logs" / "nz-table-games"
PLANTED = NIGHT / "night-planted.csv"
CLEAN = NIGHT / "night-clean.csv"
RULESET = "nz-table-games"
SARIF_SUBSET = Path(__file__).resolve().parents[1] / "data" / "sarif-2.1.0-subset.json"


def night(path: Path = PLANTED) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def audit(tmp_path: Path, log: Path, *options, out: str = "out"):
    res = run_cli("check", log, "-r", RULESET, "--out", tmp_path / out, *options)
    return res, tmp_path / out


def keys(findings: pd.DataFrame) -> set[tuple]:
    return {(r, t, int(s)) for r, t, s in zip(findings["rule_id"], findings["table_id"],
                                              findings["seq"])}


def rules_needing(column: str) -> set[str]:
    return {r.id for r in load_ruleset(RULESET).rules
            if column in CHECKS[r.check].needs.columns}


# --- coverage: a column absent ---------------------------------------------------------------

def test_without_flags_the_rules_that_need_it_are_not_evaluated_and_nothing_else_changes(
        tmp_path):
    whole, whole_out = audit(tmp_path, PLANTED, out="whole")
    assert whole.exit_code == 1
    log = tmp_path / "night-no-flags.csv"
    night().drop(columns=["flags"]).to_csv(log, index=False)
    res, out = audit(tmp_path, log, "--format", "parquet", "--format", "json",
                     "--format", "junit", "--format", "sarif", "--format", "html")
    assert res.exit_code == 1, res.output
    unseen = rules_needing("flags")
    # exactly the throw.*, noroll.* (less who may call one) and stick rules
    assert {r.code for r in load_ruleset(RULESET).rules if r.id in unseen} == {
        "throw.two_hands", "throw.not_simultaneous", "throw.short", "noroll.missing",
        "noroll.improper", "noroll.late", "dice.stick_not_used"}
    meta = report_provenance(out)
    assert sorted(e["rule"] for e in meta["not_evaluated"]) == sorted(unseen)
    assert {(e["file"], e["reason"]) for e in meta["not_evaluated"]} == {
        (str(log), "column `flags` absent")}
    assert meta["inputs"][0]["columns_absent"] == ["flags"]
    # every other finding as with the column; none of the rules not evaluated
    before = keys(report_findings(whole_out))
    assert keys(report_findings(out)) == {k for k in before if k[0] not in unseen}
    assert len(before) == 56 and len(report_findings(out)) == 56 - 14
    assert f"NOT EVALUATED: {len(unseen)} rule(s) in 1 file(s): column `flags` absent" \
        in res.output
    # and in every format
    summary = json.loads((out / "summary.json").read_text())
    assert summary["not_evaluated"] == meta["not_evaluated"]
    junit = ET.parse(out / "junit.xml").getroot()
    skipped = {c.get("name").split()[0] for c in junit.iter("testcase")
               if any(s.get("message", "").startswith("not evaluated: ")
                      for s in c.iter("skipped"))}
    assert skipped == unseen
    sarif = json.loads((out / "findings.sarif").read_text())
    jsonschema.validate(sarif, json.loads(SARIF_SUBSET.read_text()))
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert sorted(n["associatedRule"]["id"] for n in notes) == sorted(unseen)
    html = (out / "report.html").read_text()
    assert 'id="not-evaluated"' in html and "column `flags` absent" in html


def test_the_whole_night_is_evaluated_throughout(tmp_path):
    res, out = audit(tmp_path, PLANTED, "--require-complete")
    assert res.exit_code == 1, res.output
    assert report_provenance(out)["not_evaluated"] == []
    assert "NOT EVALUATED" not in res.output


def test_an_event_never_recorded_beside_its_neighbours_is_said(tmp_path):
    log = tmp_path / "no-calls.csv"
    rows = night(CLEAN)
    rows[rows["event"] != "total_called"].to_csv(log, index=False)
    _, out = audit(tmp_path, log)
    unseen = {e["rule"]: e["reason"] for e in report_provenance(out)["not_evaluated"]}
    assert unseen == {
        "R5.6-6.2-correct-total": "event `total_called` never recorded (the file records `roll`)",
        "R5.6-stickperson-calls": "event `total_called` never recorded (the file records `roll`)"}


def test_require_complete_writes_the_reports_then_exits_2(tmp_path):
    log = tmp_path / "night-no-flags.csv"
    night().drop(columns=["flags"]).to_csv(log, index=False)
    res, out = audit(tmp_path, log, "--require-complete")
    assert res.exit_code == 2
    assert res.output.strip().splitlines()[-1] == \
        f"error: --require-complete: {len(rules_needing('flags'))} rule(s) not evaluated " \
        "(the reports say where and why)"
    assert (out / "findings.parquet").is_file()
    assert len(report_provenance(out)["not_evaluated"]) == len(rules_needing("flags"))


# --- a required column absent --------------------------------------------------------------

@pytest.mark.parametrize("column, event, count", [("actor_role", "staff_on", 10),
                                                  ("die1", "roll", None)])
def test_a_column_the_spec_requires_for_an_event_held_stops_the_run(tmp_path, column, event,
                                                                     count):
    rows = night()
    log = tmp_path / f"night-no-{column}.csv"
    rows.drop(columns=[column]).to_csv(log, index=False)
    count = count or int((rows["event"] == event).sum())
    res, out = audit(tmp_path, log)
    assert res.exit_code == 2
    assert res.output.strip() == (f"error: {log}: no column `{column}`, which the spec "
                                  f"requires for `{event}` events (the file holds {count:,})")
    assert not out.exists() or not any(out.iterdir())


def test_a_column_no_event_held_requires_is_not_needed(tmp_path):
    rows = night(CLEAN)
    rows = rows[~rows["event"].isin(["total_called"])].drop(columns=["total"])
    rows["seq"] = (rows.groupby("table_id").cumcount() + 1).astype(str)  # no gaps left
    log = tmp_path / "no-total.csv"
    rows.to_csv(log, index=False)
    res, out = audit(tmp_path, log)
    assert res.exit_code == 1, res.output  # it runs: no event held needs `total`
    # an uncalled roll is a breach the log shows (call.missing judges an
    # absence, so it needs no call recorded); what judges calls is not evaluated
    assert set(report_findings(out)["code"]) == {"call.missing"}
    assert {e["rule"] for e in report_provenance(out)["not_evaluated"]} == {
        "R5.6-6.2-correct-total", "R5.6-stickperson-calls"}


# --- another encoding ----------------------------------------------------------------------

def _accented(tmp_path: Path) -> tuple[Path, Path]:
    """The lawful night with accented staff ids, as UTF-8 and as Windows-1252."""
    rows = night(CLEAN)
    rows["actor_id"] = rows["actor_id"].replace({"K01": "Kévin", "D01a": "Dédé"})
    utf8, cp1252 = tmp_path / "accented-utf8.csv", tmp_path / "accented-cp1252.csv"
    rows.to_csv(utf8, index=False, encoding="utf-8")
    rows.to_csv(cp1252, index=False, encoding="cp1252")
    return utf8, cp1252


def test_a_windows_1252_night_says_which_encoding_to_try(tmp_path):
    _, cp1252 = _accented(tmp_path)
    res = run_cli("validate", cp1252)
    assert res.exit_code == 1
    hinted = [line for line in res.output.splitlines() if "try --encoding" in line]
    assert len(hinted) == 1
    assert hinted[0].endswith("actor_id is not UTF-8 text (try --encoding cp1252)")


def test_a_byte_windows_1252_leaves_undefined_far_into_the_file_says_latin_1(tmp_path,
                                                                          monkeypatch):
    """The file is looked at a block at a time for the guess: a byte that
    cp1252 does not define (0x81), in a later block than the first text
    that is not UTF-8, still makes it latin-1 (which reads every byte)."""
    _, cp1252 = _accented(tmp_path)
    data = cp1252.read_bytes()
    last = data.rindex(b"D\xe9d\xe9")
    assert last > len(data) // 2
    cp1252.write_bytes(data[:last] + b"D\xe9d\x81" + data[last + 4:])
    monkeypatch.setattr(raw, "SCAN_BLOCK_BYTES", 64)
    monkeypatch.setattr(read, "SCAN_BLOCK_BYTES", 64)
    hinted = [line for line in run_cli("validate", cp1252).output.splitlines()
              if "try --encoding" in line]
    assert len(hinted) == 1 and hinted[0].endswith(
        "actor_id is not UTF-8 text (try --encoding latin-1)")


def test_with_encoding_a_windows_1252_night_audits_as_its_utf8_twin(tmp_path):
    utf8, cp1252 = _accented(tmp_path)
    twin, twin_out = audit(tmp_path, utf8, out="utf8")
    res, out = audit(tmp_path, cp1252, "--encoding", "cp1252")
    assert twin.exit_code == res.exit_code == 0, res.output
    assert report_findings(out).empty and report_findings(twin_out).empty
    meta = report_provenance(out)
    assert meta["read_options"] == {"encoding": "cp1252"}
    assert meta["inputs"][0]["encoding"] == "cp1252"
    assert meta["rows"] == report_provenance(twin_out)["rows"]
    assert run_cli("verify", out).exit_code == 0


# --- times without an offset ---------------------------------------------------------------

def _naive(tmp_path: Path) -> Path:
    rows = night()
    rows["ts"] = rows["ts"].str.replace(r"(Z|[+-]\d\d:\d\d)$", "", regex=True)
    log = tmp_path / "night-local-times.csv"
    rows.to_csv(log, index=False)
    return log


def test_times_without_an_offset_stop_the_run_once(tmp_path):
    log = _naive(tmp_path)
    res, _ = audit(tmp_path, log)
    assert res.exit_code == 2
    assert res.output.strip() == (
        f"error: {log}: every row (3,422) was quarantined for one reason: ts has no UTC "
        "offset (ISO-8601 with offset required); if the times are local, give their "
        "offset: --assume-offset +HH:MM")
    assert run_cli("validate", log).exit_code == 2


def test_assume_offset_reads_them_and_the_provenance_says_so(tmp_path):
    log = _naive(tmp_path)
    _, whole_out = audit(tmp_path, PLANTED, out="whole")
    res, out = audit(tmp_path, log, "--assume-offset", "+13:00")
    assert res.exit_code == 1, res.output
    assert keys(report_findings(out)) == keys(report_findings(whole_out))
    meta = report_provenance(out)
    assert meta["read_options"] == {"assume_offset": "+13:00"}
    assert meta["inputs"][0]["assumed_offset"] == "+13:00"
    first = report_findings(out)["ts"].min()
    assert first == report_findings(whole_out)["ts"].min() - pd.Timedelta(hours=13)
    assert run_cli("verify", out).exit_code == 0
    assert run_cli("validate", log, "--assume-offset", "+13:00").exit_code == 1


@pytest.mark.parametrize("option, value, said", [
    ("--assume-offset", "13:00", "--assume-offset 13:00: write a UTC offset as +HH:MM"),
    ("--encoding", "klingon", "--encoding klingon: not a text encoding Python knows")] + [
    # codecs that are not text encodings (issue 28: were `internal error: LookupError`)
    ("--encoding", name, f"--encoding {name}: not a text encoding Python knows")
    for name in ("rot13", "base64", "zlib")] + [
    # encodings of host names, not of files: their decoders refuse to replace
    # a byte (were `internal error: UnicodeError`, 2026-12-07)
    ("--encoding", name, f"--encoding {name}: not an encoding of text files")
    for name in ("idna", "punycode")])
def test_a_read_option_that_cannot_be_used_stops_the_run(tmp_path, option, value, said):
    res, _ = audit(tmp_path, PLANTED, option, value)
    assert res.exit_code == 2
    assert res.output.startswith(f"error: {said}")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_batches_read_with_the_options_too(tmp_path, monkeypatch, jobs):
    """Files audited a batch at a time (and by worker processes) are read
    with the options as when loaded at once."""
    from auditor.run import stream

    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 100)
    rows = night()
    rows["ts"] = rows["ts"].str.replace(r"(Z|[+-]\d\d:\d\d)$", "", regex=True)
    folder = tmp_path / "split"
    folder.mkdir()
    for table, part in rows.groupby("table_id"):
        part.to_csv(folder / f"{table}.csv", index=False)
    _, whole_out = audit(tmp_path, PLANTED, out="whole")
    res, out = audit(tmp_path, folder, "--assume-offset", "+13:00", "--jobs", jobs)
    assert res.exit_code == 1, res.output
    assert keys(report_findings(out)) == keys(report_findings(whole_out))
    assert report_provenance(out)["read_options"] == {"assume_offset": "+13:00"}


@pytest.mark.parametrize("byte", [0x81, 0x8D, 0x8F, 0x90, 0x9D])
def test_each_byte_windows_1252_leaves_undefined_says_latin_1(tmp_path, byte):
    _, cp1252 = _accented(tmp_path)
    data = cp1252.read_bytes()
    last = data.rindex(b"D\xe9d\xe9")
    cp1252.write_bytes(data[:last] + b"D\xe9d" + bytes([byte]) + data[last + 4:])
    hinted = [line for line in run_cli("validate", cp1252).output.splitlines()
              if "try --encoding" in line]
    assert len(hinted) == 1 and hinted[0].endswith("(try --encoding latin-1)")


def test_bytes_not_utf8_are_marked_a_block_of_lines_at_a_time(tmp_path, monkeypatch):
    """Only the blocks of lines holding bytes that are not UTF-8 are marked
    and decoded again (one Windows-1252 name among 1.9M rows did the whole
    file), and only the cells holding them rebuilt (in `seq` and `ts` too,
    which are not dictionaries): what is loaded is the whole file's marking."""
    from auditor.logs import csv_format
    from auditor.logs.load import load_logs

    _, cp1252 = _accented(tmp_path)
    lines = cp1252.read_bytes().split(b"\n")
    lines[40] = lines[40].replace(b",", b"\xff,", 2)  # (seq and ts: bytes that are not UTF-8)
    cp1252.write_bytes(b"\n".join(lines))
    real = csv_format._marked
    monkeypatch.setattr(csv_format, "_marked", csv_format._mark_text)  # (the whole file at once)
    whole = load_logs([cp1252])
    decoded = []
    monkeypatch.setattr(csv_format, "MARK_BLOCK_BYTES", 200)
    monkeypatch.setattr(csv_format, "_marked", lambda data: decoded.append(data) or real(data))
    by_blocks = load_logs([cp1252])
    assert decoded  # (the file was marked: not UTF-8)
    assert by_blocks.events.equals(whole.events)
    assert by_blocks.quarantine.equals(whole.quarantine)
    assert 41 in by_blocks.quarantine["source_line"].tolist()
    assert len(by_blocks.quarantine) > 1  # (the accented names' rows as well)
