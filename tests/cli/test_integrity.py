"""Evidence integrity, through the command line: a report folder is written
as a set (manifest.json, a lock, a swap, no file of an earlier run left), and
`auditor verify` notices any change to any file of it or to its provenance,
and still stands after the logs or the installation moved."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from builder import lawful_table
from builder import run_cli as run

import auditor.report.html as html_format
from auditor import atomic
from auditor.report.manifest import file_entry

ALL_FILES = ("--format", "parquet", "--format", "html", "--format", "json", "--format",
             "junit", "--format", "sarif", "--format", "csv")
REPORT_FILES = ("findings.parquet", "quarantine.parquet", "rollups.parquet", "report.html",
                "findings.jsonl", "summary.json", "junit.xml", "findings.sarif", "findings.csv",
                "dice_stats.parquet", "dice_totals.parquet")


def breached_night(folder: Path, table: str = "T1") -> Path:
    """A night with two findings and a quarantined row, as logs/night.csv."""
    b = lawful_table()
    b.table = table
    b.rows = [{**r, "table_id": table} for r in b.rows]
    b.roll(2, 3, 4)
    b.call(7)
    b.collect(flags="no_stick")
    b.add("dice_inspectd", role="dealer")
    (folder / "logs").mkdir(exist_ok=True)
    return b.write_csv(folder / "logs" / "night.csv")


def lawful_night(folder: Path) -> Path:
    b = lawful_table()
    b.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    (folder / "logs").mkdir(exist_ok=True)
    return b.write_csv(folder / "logs" / "lawful.csv")


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def siblings(folder: Path) -> list[str]:
    """What else than the report folder is beside it (leftovers would be)."""
    return sorted(p.name for p in folder.parent.iterdir() if p.name.startswith("."))


@pytest.fixture
def report(tmp_path, monkeypatch):
    """Every file format written for a broken night, from its folder."""
    monkeypatch.chdir(tmp_path)
    breached_night(tmp_path)
    res = run("check", "logs", "-r", "nz-table-games", "--out", "reports", *ALL_FILES)
    assert res.exit_code == 1, res.output
    return tmp_path / "reports"


def verify(*args):
    res = run("verify", *args)
    assert "Traceback" not in res.output and "internal error" not in res.output, res.output
    return res


def does_not_stand(res, *expected: str) -> None:
    assert res.exit_code == 1, res.output
    assert res.output.startswith("report does not stand"), res.output
    for text in expected:
        assert text in res.output, (text, res.output)


# --- the folder and its manifest ---------------------------------------------------------------

def test_the_manifest_lists_every_file_with_its_hash(report):
    manifest = json.loads((report / "manifest.json").read_text())
    assert sorted(f["name"] for f in manifest["files"]) == sorted(REPORT_FILES)
    for entry in manifest["files"]:
        assert entry == file_entry(entry["name"], report / entry["name"])
    assert manifest["formats"] == ["parquet", "html", "json", "junit", "sarif", "csv"]
    assert manifest["auditor_version"] == manifest["provenance"]["auditor_version"]
    meta = json.loads(pq.read_schema(report / "findings.parquet").metadata[b"auditor"])
    assert manifest["provenance"] == meta and meta["verdict"]["result"] == "fail"
    assert sorted(p.name for p in report.iterdir()) == sorted((*REPORT_FILES, "manifest.json"))
    assert siblings(report) == []  # no lock file, no half-built folder left beside it


def test_a_fresh_report_stands(report):
    res = verify("reports")
    assert res.exit_code == 0, res.output
    assert "report stands: 1 input(s) unchanged, ruleset nz-table-games unchanged" in res.output
    assert "11 file(s) as listed, every format rendered again the same." in res.output


# --- tampering ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", REPORT_FILES)
def test_a_changed_byte_in_any_file_breaks_it(report, name):
    path = report / name
    data = bytearray(path.read_bytes())
    i = len(data) // 2
    data[i] = (data[i] + 1) % 256
    path.write_bytes(bytes(data))
    does_not_stand(verify("reports"), f"{name}: changed since it was written")


@pytest.mark.parametrize("name", REPORT_FILES)
def test_an_edited_file_with_its_manifest_updated_breaks_it(report, name):
    """The manifest is no signature: whoever edits a file can fix its hash.
    Rendering every format again still shows the file is not the audit's."""
    path = report / name
    if name.endswith(".parquet"):
        table = pq.read_table(path)
        pq.write_table(table.slice(0, max(table.num_rows - 1, 0)), path)
    else:
        text = path.read_text()
        path.write_text(text.replace("T1", "T9", 1) if "T1" in text else text + " ")
    manifest = json.loads((report / "manifest.json").read_text())
    manifest["files"] = [file_entry(f["name"], report / f["name"]) for f in manifest["files"]]
    (report / "manifest.json").write_text(json.dumps(manifest, indent=2))
    res = verify("reports")
    does_not_stand(res, f"{name}: not what the audit renders now")
    assert "changed since it was written" not in res.output


@pytest.mark.parametrize("change", ["missing", "extra", "manifest_gone", "manifest_garbled",
                                    "corrupt_parquet"])
def test_missing_extra_and_unreadable_files(report, change):
    expected = {
        "missing": "summary.json: missing (listed in the manifest)",
        "extra": "report.htm: ",  # not an auditor name: only a note
        "manifest_gone": "manifest.json: missing",
        "manifest_garbled": "manifest.json: not readable JSON",
        "corrupt_parquet": "findings.parquet: not a readable Parquet file",
    }[change]
    if change == "missing":
        (report / "summary.json").unlink()
    elif change == "extra":
        (report / "report.htm").write_text("<p>forged</p>")
        res = verify("reports")
        assert res.exit_code == 0 and "note: report.htm is not part of the report" in res.output
        return
    elif change == "manifest_gone":
        (report / "manifest.json").unlink()
    elif change == "manifest_garbled":
        (report / "manifest.json").write_text("{not json")
    else:
        (report / "findings.parquet").write_bytes(b"PAR1 garbage PAR1")
    does_not_stand(verify("reports"), expected)


def test_a_report_file_that_no_run_wrote_breaks_it(report, tmp_path):
    res = run("check", "logs", "-r", "nz-table-games", "--out", "only-parquet")
    assert res.exit_code == 1
    shutil.copy(report / "report.html", tmp_path / "only-parquet" / "report.html")
    does_not_stand(verify("only-parquet"), "report.html: not in the manifest")


def _rewrite_provenance(path: Path, meta: dict) -> None:
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({"auditor": json.dumps(meta)}), path)


def _rehash(report: Path) -> None:
    manifest = json.loads((report / "manifest.json").read_text())
    manifest["files"] = [file_entry(f["name"], report / f["name"]) for f in manifest["files"]]
    (report / "manifest.json").write_text(json.dumps(manifest, indent=2))


@pytest.mark.parametrize("field", ["verdict", "findings", "statuses", "rows"])
def test_edited_provenance_in_the_parquet_breaks_it(report, field):
    meta = json.loads(pq.read_schema(report / "findings.parquet").metadata[b"auditor"])
    edits = {"verdict": ("result", "pass"), "findings": ("total", 0),
             "statuses": ("counts", {"new": 0, "known": 0, "waived": 2}),
             "rows": ("quarantined", 0)}
    key, value = edits[field]
    meta[field][key] = value
    _rewrite_provenance(report / "findings.parquet", meta)
    _rehash(report)  # only the provenance differs now
    does_not_stand(verify("reports"),
                   "findings.parquet: its provenance differs from the manifest's (in "
                   f"{field}.{key})")


def test_provenance_edited_everywhere_breaks_it(report):
    """The verdict and counts changed alike in the manifest and both Parquet
    files: they no longer are what the audit gives."""
    manifest = json.loads((report / "manifest.json").read_text())
    meta = manifest["provenance"]
    meta["verdict"].update(result="pass", failing=0, exit_code=0)
    meta["findings"]["total"] = 0
    for name in ("findings.parquet", "quarantine.parquet"):
        _rewrite_provenance(report / name, meta)
    manifest["provenance"] = meta
    (report / "manifest.json").write_text(json.dumps(manifest, indent=2))
    _rehash(report)
    does_not_stand(verify("reports"), "provenance: findings.total, verdict.exit_code, "
                   "verdict.failing, verdict.result not what the audit gives now")


@pytest.mark.parametrize("setup", ["empty", "absent", "other_files"])
def test_no_report_is_exit_2(report, tmp_path, setup):
    folder = tmp_path / "elsewhere"
    if setup != "absent":
        folder.mkdir()
    if setup == "other_files":
        (folder / "notes.txt").write_text("mine")
    res = verify(folder)
    assert res.exit_code == 2, res.output
    assert res.output.startswith("error: ") and len(res.output.strip().splitlines()) == 1


# --- written as a set --------------------------------------------------------------------------

def test_an_earlier_report_html_does_not_survive_a_parquet_only_run(report):
    res = run("check", "logs", "-r", "nz-table-games", "--out", "reports")
    assert res.exit_code == 1, res.output
    assert sorted(p.name for p in report.iterdir()) == [
        "dice_stats.parquet", "dice_totals.parquet", "findings.parquet", "manifest.json",
        "quarantine.parquet", "rollups.parquet"]
    assert verify("reports").exit_code == 0


def test_an_interrupted_write_keeps_the_earlier_report_whole(report, tmp_path, monkeypatch):
    before = snapshot(report)
    lawful_night(tmp_path)
    real_write = html_format.write

    def write(result, meta, out):
        raise KeyboardInterrupt  # after the Parquet files, before the page
    monkeypatch.setattr(html_format, "write", write)
    res = run("check", "logs/lawful.csv", "-r", "nz-table-games", "--out", "reports", *ALL_FILES)
    assert res.exit_code == 130 and "interrupted" in res.output
    assert snapshot(report) == before
    assert siblings(report) == []
    monkeypatch.setattr(html_format, "write", real_write)
    assert verify("reports").exit_code == 0


KILLED_RUN = """
import os, signal, sys
import auditor.report.html as html
def write(result, meta, out):
    os.kill(os.getpid(), signal.SIGKILL)  # no handler, no cleanup: what a power cut leaves
html.write = write
from auditor.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_run_leaves_the_earlier_report_and_the_next_run_cleans_up(report, tmp_path):
    before = snapshot(report)
    lawful_night(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_RUN, "check", "logs/lawful.csv", "-r", "nz-table-games",
         "--out", "reports", *ALL_FILES], cwd=tmp_path, capture_output=True, text=True,
        check=False, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert snapshot(report) == before  # the old report, whole
    left = siblings(report)
    assert len(left) == 1 and left[0].startswith(".reports.new-"), left
    assert any((tmp_path / left[0]).iterdir())  # the half-built folder
    assert verify("reports").exit_code == 0
    (report / ".findings.parquet.abc.tmp").write_bytes(b"half")  # an older run's leftover
    res = run("check", "logs/lawful.csv", "-r", "nz-table-games", "--out", "reports")
    assert res.exit_code == 0, res.output
    assert siblings(report) == []
    assert sorted(p.name for p in report.iterdir()) == [
        "dice_stats.parquet", "dice_totals.parquet", "findings.parquet", "manifest.json",
        "quarantine.parquet", "rollups.parquet"]
    assert verify("reports").exit_code == 0


def test_a_run_killed_between_two_renames_is_undone(report, tmp_path):
    """Where the system cannot swap two folders, the earlier one is renamed
    aside, then the new one in: a run killed between the two leaves no
    folder; the next run puts the earlier one back first."""
    before = snapshot(report)
    os.rename(report, tmp_path / ".reports.old-4242")
    (tmp_path / ".reports.new-4242").mkdir()
    res = run("check", "logs/missing.csv", "-r", "nz-table-games", "--out", "reports")
    assert res.exit_code == 2 and "no such file or folder" in res.output
    assert snapshot(report) == before and siblings(report) == []


def test_two_renames_where_the_system_cannot_swap(report, monkeypatch):
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    res = run("check", "logs", "-r", "nz-table-games", "--out", "reports")
    assert res.exit_code == 1, res.output
    assert "report.html" not in {p.name for p in report.iterdir()}
    assert siblings(report) == [] and verify("reports").exit_code == 0


def test_a_second_audit_into_the_same_folder_fails_clearly(report):
    before = snapshot(report)
    fd = os.open(report, os.O_RDONLY | os.O_DIRECTORY)  # what a running audit holds
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        res = run("check", "logs", "-r", "nz-table-games", "--out", "reports")
    finally:
        os.close(fd)
    assert res.exit_code == 2, res.output
    assert res.output == ("error: reports: another audit is writing this report folder; "
                          "wait for it to end, or choose another --out\n")
    assert snapshot(report) == before
    assert run("check", "logs", "-r", "nz-table-games", "--out", "reports").exit_code == 1


def test_the_users_own_files_are_kept_and_folders_refused(report, tmp_path):
    (report / "notes.txt").write_text("my notes")
    (report / ".gitkeep").write_text("")
    res = run("check", "logs", "-r", "nz-table-games", "--out", "reports")
    assert res.exit_code == 1, res.output
    assert (report / "notes.txt").read_text() == "my notes" and (report / ".gitkeep").exists()
    assert not (report / "report.html").exists()
    res = verify("reports")
    assert res.exit_code == 0 and "note: notes.txt is not part of the report" in res.output
    (report / "drafts").mkdir()
    res = run("check", "logs", "-r", "nz-table-games", "--out", "reports")
    assert res.exit_code == 2
    assert "reports: holds folders the auditor did not write (drafts)" in res.output
    res = run("check", "logs", "-r", "nz-table-games", "--out", ".")
    assert res.exit_code == 2 and "--out is the current folder" in res.output
    assert (tmp_path / "logs" / "night.csv").is_file()


# --- after a move --------------------------------------------------------------------------------

def test_verify_finds_the_logs_under_inputs_root(report, tmp_path):
    shutil.move(tmp_path / "logs", tmp_path / "archive")
    does_not_stand(verify("reports"), "input logs/night.csv: missing")
    res = verify("reports", "--inputs-root", "archive")
    assert res.exit_code == 0, res.output
    (tmp_path / "archive" / "night.csv").write_text("changed")
    does_not_stand(verify("reports", "--inputs-root", "archive"),
                   "input logs/night.csv (looked for at archive/night.csv): changed")


def test_verify_finds_shipped_rulesets_wherever_installed(tmp_path, monkeypatch):
    """The report was made by an installation whose shipped rulesets are
    gone now: they are found by id in this one, and judged by content hash."""
    monkeypatch.chdir(tmp_path)
    breached_night(tmp_path)
    old_install = tmp_path / "old-site-packages" / "rulesets"
    shutil.copytree(Path(__file__).resolve().parents[2] / "rulesets", old_install)
    monkeypatch.setattr("auditor.rules.ruleset.shipped_dir", lambda: old_install)
    res = run("check", "logs", "-r", "nz-table-games", "--out", "reports", *ALL_FILES)
    assert res.exit_code == 1, res.output
    manifest = json.loads((tmp_path / "reports" / "manifest.json").read_text())
    assert manifest["provenance"]["ruleset"]["files"] == [
        str(old_install / "nz-table-games.toml")]
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    shutil.rmtree(old_install.parent)
    res = verify("reports")
    assert res.exit_code == 0, res.output
