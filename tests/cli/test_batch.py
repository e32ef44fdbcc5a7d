"""A regulator's batch as it arrives: many casinos' files, some of them not
logs at all (a truncated gzip, a truncated Parquet file, an empty file, a
staff roster). Under --keep-going every readable file is audited and every
other one is named, with its reason, as NOT AUDITED in every report, and
the run exits 2; without it the run stops, naming every unreadable file.
`--exclude` leaves files out on purpose, and says so."""

from __future__ import annotations

import gzip
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from builder import one_roll_table, report_findings, report_provenance
from builder import run_cli as run

RULESET = "nz-table-games"
EVERY_FILE_FORMAT = ("parquet", "json", "html", "junit", "sarif", "csv")
BAD = {
    "casino-c/hour-02.csv.gz": "cannot be read: Compressed file ended before the "
                               "end-of-stream marker was reached",
    "casino-c/hour-03.parquet": "not a readable Parquet file",
    "casino-c/hour-04.csv": "the file is empty",
    "casino-c/staff-roster.csv": "missing required column(s): table_id, seq, ts, event",
}


@pytest.fixture
def batch(tmp_path) -> Path:
    """month/: casino-a (one file), casino-b (two files, one with a wrong
    call: one finding), casino-c (only files that are not logs)."""
    month = tmp_path / "month"
    for folder in ("casino-a", "casino-b", "casino-c"):
        (month / folder).mkdir(parents=True)
    one_roll_table("A1").write_csv(month / "casino-a" / "night.csv")
    one_roll_table("B1").write_csv(month / "casino-b" / "t1.csv")
    one_roll_table("B2", wrong_call=True).write_csv(month / "casino-b" / "t2.csv")
    whole = gzip.compress((month / "casino-a" / "night.csv").read_bytes())
    (month / "casino-c" / "hour-02.csv.gz").write_bytes(whole[: len(whole) // 2])
    table = pa_csv.read_csv(month / "casino-b" / "t1.csv")
    pq.write_table(table, month / "casino-c" / "hour-03.parquet")
    data = (month / "casino-c" / "hour-03.parquet").read_bytes()
    (month / "casino-c" / "hour-03.parquet").write_bytes(data[: len(data) // 2])
    (month / "casino-c" / "hour-04.csv").write_bytes(b"")
    (month / "casino-c" / "staff-roster.csv").write_text("name,role\nAnn,dealer\n")
    return month


def _named(month: Path) -> dict[str, str]:
    return {str(month / rel): why for rel, why in BAD.items()}


def test_without_keep_going_the_run_stops_naming_every_unreadable_file(batch, tmp_path):
    res = run("check", batch, "-r", RULESET, "--out", tmp_path / "r", "--no-config")
    assert res.exit_code == 2
    assert "4 file(s) cannot be read as logs" in res.output
    for path, why in _named(batch).items():
        assert f"{path}: {why}" in res.output
    assert not (tmp_path / "r" / "findings.parquet").exists()


def test_the_line_names_twenty_unreadable_files_and_counts_the_rest(tmp_path):
    """20,000 files that could not be read (out of memory, each) made one
    line of 2.5 MB: the line names 20 and counts the others."""
    folder = tmp_path / "rosters"
    folder.mkdir()
    for i in range(25):
        (folder / f"r{i:02d}.csv").write_text("name,role\nAnn,dealer\n")
    res = run("check", folder, "-r", RULESET, "--out", tmp_path / "r", "--no-config")
    assert res.exit_code == 2
    assert len(res.output.strip().splitlines()) == 1
    assert "25 file(s) cannot be read as logs" in res.output
    assert f"{folder / 'r19.csv'}: missing required column(s)" in res.output
    assert "r20.csv" not in res.output and res.output.strip().endswith("; and 5 more")


def test_keep_going_audits_every_readable_file_and_names_the_others_everywhere(batch,
                                                                              tmp_path):
    out = tmp_path / "r"
    args = ["check", batch, "-r", RULESET, "--out", out, "--no-config", "--keep-going",
            "--site-from-path"]
    for f in EVERY_FILE_FORMAT:
        args += ["--format", f]
    res = run(*args)
    assert res.exit_code == 2, res.output  # incomplete, whatever --fail-on says
    # the three good files audited, the one wrong call found
    found = report_findings(out)
    assert [(c, t) for c, t in zip(found["code"], found["table_id"])] \
        == [("call.wrong_total", "B2")]
    meta = report_provenance(out)
    assert [i["path"] for i in meta["inputs"]] == [
        str(batch / "casino-a" / "night.csv"), str(batch / "casino-b" / "t1.csv"),
        str(batch / "casino-b" / "t2.csv")]
    named = {e["file"]: e["reason"] for e in meta["not_audited"]}
    assert set(named) == set(_named(batch))
    for path, why in _named(batch).items():
        assert named[path].startswith(why)
    assert all(len(e["sha256"]) == 64 for e in meta["not_audited"])
    assert meta["verdict"]["exit_code"] == 2 and meta["verdict"]["incomplete"]
    # the terminal summary says so first
    assert "INCOMPLETE (exit 2): 4 file(s) not audited" in res.output
    for path in _named(batch):
        assert f"NOT AUDITED: {path}: " in res.output
    # every format names each file
    summary = json.loads((out / "summary.json").read_text())
    assert {e["file"] for e in summary["not_audited"]} == set(_named(batch))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["provenance"]["not_audited"] == meta["not_audited"]
    html = (out / "report.html").read_text()
    assert 'verdict-word">INCOMPLETE' in html
    junit = ET.parse(out / "junit.xml").getroot()
    errors = [e.get("message") for e in junit.iter("error")]
    sarif = json.loads((out / "findings.sarif").read_text())
    invocation = sarif["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notes = [n["message"]["text"] for n in invocation["toolExecutionNotifications"]
             if n["descriptor"]["id"] == "not_audited"]
    github = run("check", batch, "-r", RULESET, "--out", tmp_path / "g", "--no-config",
                 "--keep-going", "--format", "github:-", "-q")
    text = run("check", batch, "-r", RULESET, "--out", tmp_path / "t", "--no-config",
               "--keep-going", "--format", "text", "-q")
    assert github.exit_code == text.exit_code == 2
    assert text.output.splitlines()[2].startswith("INCOMPLETE (exit 2): 4 file(s) not audited")
    for path, why in _named(batch).items():
        assert path in html and why.replace("'", "&#39;") in html
        assert any(m.startswith(f"{path}: not audited: {why}") for m in errors)
        assert any(n.startswith(f"{path} not audited: {why}") for n in notes)
        assert f"::error file={path},title=not audited::" in github.output
        assert f"NOT AUDITED: {path}: {why}" in text.output


def test_keep_going_fails_on_findings_too_but_exits_2(batch, tmp_path):
    """--fail-on none cannot turn a batch with unreadable files into a pass."""
    res = run("check", batch, "-r", RULESET, "--out", tmp_path / "r", "--no-config",
              "--keep-going", "--fail-on", "none")
    assert res.exit_code == 2
    assert "INCOMPLETE (exit 2)" in res.output


def test_the_lawful_twin_a_batch_of_logs_only_is_complete(batch, tmp_path):
    """The same batch without its bad files: no NOT AUDITED anywhere, the
    provenance as before (no `not_audited` key), the exit of the findings."""
    for rel in BAD:
        (batch / rel).unlink()
    out = tmp_path / "r"
    res = run("check", batch, "-r", RULESET, "--out", out, "--no-config", "--keep-going",
              "--format", "parquet", "--format", "json")
    assert res.exit_code == 1, res.output  # the wrong call is major
    meta = report_provenance(out)
    assert "not_audited" not in meta and "excluded" not in meta
    assert "incomplete" not in meta["verdict"]
    assert "NOT AUDITED" not in res.output and "INCOMPLETE" not in res.output
    assert "not_audited" not in json.loads((out / "summary.json").read_text())


def test_keep_going_in_the_project_configuration(batch, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "auditor.toml").write_text(f'ruleset = "{RULESET}"\nkeep_going = true\n'
                                          f'out = "{tmp_path / "r"}"\n')
    monkeypatch.chdir(project)
    res = run("check", batch)
    assert res.exit_code == 2
    assert len(report_provenance(tmp_path / "r")["not_audited"]) == 4


def test_verify_of_a_keep_going_report(batch, tmp_path):
    """It stands while each file not audited is the same bytes, unreadable
    for the same reason; not once one of them changes."""
    out = tmp_path / "r"
    assert run("check", batch, "-r", RULESET, "--out", out, "--no-config",
               "--keep-going", "-q").exit_code == 2
    res = run("verify", out)
    assert res.exit_code == 0, res.output
    (batch / "casino-c" / "hour-04.csv").write_bytes(b"table_id\n")
    res = run("verify", out)
    assert res.exit_code == 1
    assert f"not audited {batch / 'casino-c' / 'hour-04.csv'}: changed" in res.output


def test_validate_lists_every_file_that_is_not_a_log_and_validates_the_rest(batch):
    res = run("validate", batch)
    assert res.exit_code == 2
    for path, why in _named(batch).items():
        assert f"{path}: [not a log] cannot be read as a log: {why}" in res.output
    assert "3 file(s), 4 file(s) not a log" in res.output


def test_validate_of_logs_only_is_clean(batch):
    for rel in BAD:
        (batch / rel).unlink()
    res = run("validate", batch)
    assert res.exit_code == 0
    assert "not a log" not in res.output


# --- --exclude ---------------------------------------------------------------------------

def test_exclude_leaves_files_out_and_lists_them(batch, tmp_path):
    out = tmp_path / "r"
    res = run("check", batch, "-r", RULESET, "--out", out, "--no-config",
              "--exclude", "casino-c/*", "--exclude", "t2.csv")
    assert res.exit_code == 0, res.output  # the wrong call's file is left out
    meta = report_provenance(out)
    assert [i["path"] for i in meta["inputs"]] == [str(batch / "casino-a" / "night.csv"),
                                                   str(batch / "casino-b" / "t1.csv")]
    assert meta["excluded"] == sorted(
        [{"file": str(batch / rel), "glob": "casino-c/*"} for rel in BAD]
        + [{"file": str(batch / "casino-b" / "t2.csv"), "glob": "t2.csv"}],
        key=lambda e: e["file"])
    assert "not_audited" not in meta
    assert "Excluded: 5 file(s)" in res.output


def test_exclude_in_the_project_configuration(batch, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "auditor.toml").write_text(
        f'ruleset = "{RULESET}"\nexclude = ["*roster*", "hour-0*"]\n'
        f'out = "{tmp_path / "r"}"\n')
    monkeypatch.chdir(project)
    res = run("check", batch)
    assert res.exit_code == 1, res.output  # every bad file left out; the wrong call found
    assert len(report_provenance(tmp_path / "r")["excluded"]) == 4


def test_without_exclude_nothing_is_left_out(batch, tmp_path):
    for rel in BAD:
        (batch / rel).unlink()
    out = tmp_path / "r"
    res = run("check", batch, "-r", RULESET, "--out", out, "--no-config",
              "--exclude", "nothing-matches-*")
    assert res.exit_code == 1
    assert len(report_provenance(out)["inputs"]) == 3
    assert "excluded" not in report_provenance(out)


@pytest.mark.parametrize("engine", [("--jobs", "2"), ("--engine", "dask", "--jobs", "2")],
                         ids=["jobs2", "dask"])
def test_keep_going_under_every_engine_writes_the_one_process_report(batch, tmp_path,
                                                                     engine):
    """--jobs and dask audit the readable files and name the others exactly
    as one process does: every report file byte for byte, exit 2."""
    def audit(out, *more):
        args = ["check", batch, "-r", RULESET, "--out", out, "--no-config", "--keep-going",
                "--site-from-path", "-q", *more]
        for f in EVERY_FILE_FORMAT:
            args += ["--format", f]
        return run(*args)

    one = audit(tmp_path / "one")
    many = audit(tmp_path / "many", *engine)
    assert one.exit_code == many.exit_code == 2, many.output
    found = report_findings(tmp_path / "many")
    assert list(zip(found["code"], found["table_id"])) == [("call.wrong_total", "B2")]
    named = {e["file"] for e in report_provenance(tmp_path / "many")["not_audited"]}
    assert named == set(_named(batch))
    files = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "many").iterdir())
    for name in files:
        one_bytes = (tmp_path / "one" / name).read_bytes()
        assert one_bytes == (tmp_path / "many" / name).read_bytes(), name
