"""Paths that are not what they are named: a link that dangles or loops, a
pipe or a device named like a log, and files the auditor itself reads
beside the logs (a baseline, a waiver file). Each stops the run with exit 2
naming it, and none is ever opened where opening could block (a pipe) or
never end (a device)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from builder import lawful_table, report_provenance
from builder import run_cli as run


def auditor(*args, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """`python -m auditor ARGS` in a real process: a pipe that blocked the
    read would hang it, so it is given a timeout (an expiry fails the test)."""
    return subprocess.run([sys.executable, "-P", "-m", "auditor", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture
def folder(tmp_path) -> Path:
    """A folder holding one lawful log."""
    logs = tmp_path / "logs"
    logs.mkdir()
    b = lawful_table()
    b.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    b.write_csv(logs / "good.csv")
    return logs


NOT_FILES = {
    "dangling": (lambda p: p.symlink_to(p.parent / "missing.csv"),
                 "a symbolic link to a missing file"),
    "loop": (lambda p: p.symlink_to(p), "a symbolic link that loops"),
    "fifo": (lambda p: os.mkfifo(p), "a named pipe (FIFO)"),
    "folder link": (lambda p: p.symlink_to(p.parent.parent), "a symbolic link to a folder"),
}


@pytest.mark.parametrize("kind", sorted(NOT_FILES))
@pytest.mark.parametrize("command", ["validate", "check"])
def test_a_folder_entry_named_like_a_log_that_is_not_a_file_stops_the_run(folder, kind,
                                                                           command):
    make, what = NOT_FILES[kind]
    make(folder / "zz.csv")
    args = ["-r", "nz-table-games", "--out", folder.parent / "out"] if command == "check" \
        else []
    res = auditor(command, folder, *args, cwd=folder.parent, timeout=60)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.startswith(f"error: {folder / 'zz.csv'}: {what}"), res.stderr
    assert "not skipped" in res.stderr and res.stderr.count("\n") == 1
    assert not (folder.parent / "out").exists()
    (folder / "zz.csv").unlink()  # without it, every row of the folder is read
    res = run("check", folder, "-r", "nz-table-games", "--out", folder.parent / "out")
    assert res.exit_code == 0, res.output
    rows = report_provenance(folder.parent / "out")["rows"]
    assert rows["read"] == rows["replayed"] > 0


@pytest.mark.parametrize("command", ["validate", "check"])
def test_an_explicit_fifo_says_what_it_is_and_never_blocks(tmp_path, command):
    os.mkfifo(tmp_path / "pipe.csv")
    args = ["-r", "nz-table-games", "--out", tmp_path / "out"] if command == "check" else []
    res = auditor(command, "pipe.csv", *args, cwd=tmp_path, timeout=60)
    assert res.returncode == 2
    assert res.stderr == ("error: pipe.csv: a named pipe (FIFO), not a regular file; "
                          "a log must be one\n")


def test_an_explicit_device_says_what_it_is(tmp_path):
    res = auditor("validate", "/dev/zero", cwd=tmp_path, timeout=60)
    assert res.returncode == 2
    assert res.stderr == ("error: /dev/zero: a character device, not a regular file; "
                          "a log must be one\n")


def test_an_explicit_dangling_link_is_named_as_one(tmp_path):
    (tmp_path / "gone.csv").symlink_to(tmp_path / "moved.csv")
    res = run("validate", tmp_path / "gone.csv")
    assert res.exit_code == 2
    assert f"{tmp_path / 'gone.csv'}: a symbolic link to a missing file" in res.output
    res = run("validate", tmp_path / "never.csv")
    assert res.exit_code == 2 and "never.csv: no such file or folder" in res.output


def test_a_link_to_a_log_is_read(folder):
    (folder / "also.csv").symlink_to(folder / "good.csv")  # the same file: read once
    (folder.parent / "elsewhere.csv").write_bytes((folder / "good.csv").read_bytes())
    (folder / "linked.csv").symlink_to(folder.parent / "elsewhere.csv")
    res = run("validate", folder)
    assert "2 file(s), 48 row(s) read, 0 quarantined" in res.output  # good.csv and its copy


def test_one_file_named_many_ways_is_one_input(tmp_path):
    """Discovery tells two names of one file apart by the file's real path:
    a link to it, the folder reached through a linked folder, and a path
    climbing out and back in are the same input, found first by the name
    given first; a copy is another input. (Each folder is resolved once.)"""
    from auditor.logs.discover import discover

    logs = tmp_path / "logs"
    (logs / "casino-a").mkdir(parents=True)
    night = logs / "casino-a" / "night.csv"
    night.write_text("table_id,seq\n", encoding="utf-8")
    (logs / "casino-a" / "copy.csv").write_text("table_id,seq\n", encoding="utf-8")
    (logs / "casino-a" / "also.csv").symlink_to(night)
    (tmp_path / "alias").symlink_to(logs / "casino-a")
    climbing = logs / "casino-a" / ".." / "casino-a" / "night.csv"
    found = discover([logs, tmp_path / "alias", climbing, tmp_path / "alias" / "night.csv"])
    assert found == [logs / "casino-a" / "also.csv", logs / "casino-a" / "copy.csv"]
    assert len({p.resolve() for p in found}) == len(found) == 2


# --- files read beside the logs -----------------------------------------------------------

@pytest.mark.parametrize("option", ["--baseline", "--waivers"])
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_baseline_or_waiver_file_that_is_not_a_regular_file_is_refused(folder, option,
                                                                         kind):
    """/dev/zero would be read until memory ran out, a pipe would block
    forever: both are refused before a byte is read, like a ruleset."""
    where = folder.parent / "accepted" if kind == "fifo" else Path("/dev/zero")
    if kind == "fifo":
        os.mkfifo(where)
    out = folder.parent / "out"
    res = auditor("check", folder, "-r", "nz-table-games", "--out", out, option, where,
                  cwd=folder.parent, timeout=60)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr == f"error: {where}: not a regular file\n"
    assert not out.exists()


@pytest.mark.parametrize("option, limit", [("--baseline", 256 << 20), ("--waivers", 1 << 20)])
def test_a_baseline_or_waiver_file_over_its_size_limit_is_refused(folder, option, limit):
    big = folder.parent / "big"
    with open(big, "wb") as fh:
        fh.truncate(limit + 1)  # (sparse: no disk used)
    res = run("check", folder, "-r", "nz-table-games", "--out", folder.parent / "out",
              option, big)
    assert res.exit_code == 2
    what = "a baseline" if option == "--baseline" else "a waiver file"
    assert res.output == (f"error: {big}: file is {limit + 1} bytes; {what} may be at most "
                          f"{limit}\n")


# --- the reports and the logs ---------------------------------------------------------------

@pytest.mark.parametrize("out", [".", "reports", "reports/night"])
def test_out_inside_an_input_folder_is_refused(folder, out):
    """The reports are named like logs (findings.parquet, findings.jsonl,
    findings.csv): written among the logs, the next run would audit them."""
    target = folder / out
    res = run("check", folder, "-r", "nz-table-games", "--out", target, "--format", "json")
    assert res.exit_code == 2
    assert res.output == (f"error: {target}: --out is inside the input folder {folder}: the "
                          "next run would read the reports as logs; write them elsewhere\n")
    assert sorted(p.name for p in folder.rglob("*")) == ["good.csv"]
    res = run("check", folder / "good.csv", "-r", "nz-table-games", "--out", folder / "r")
    assert res.exit_code == 0, res.output  # a file named alone: its folder is not searched


def test_github_annotations_are_printed_only_once_the_report_is_written(tmp_path,
                                                                        monkeypatch):
    import auditor.report.parquet as parquet_format

    b = lawful_table()
    b.roll(2, 3, 4)
    b.call(6)  # a wrong call: a finding to annotate
    log = b.write_csv(tmp_path / "night.csv")

    def disk_full(table, where, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(parquet_format.pq, "write_table", disk_full)
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "out",
              "--format", "github", "--format", "parquet")
    assert res.exit_code == 2
    assert "::" not in res.output and "No space left on device" in res.output
    monkeypatch.undo()
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "out",
              "--format", "github")
    assert res.exit_code == 1 and "::error " in res.output, res.output


# --- a name that is not UTF-8 (decision 118) ---------------------------------------

PLANTED = Path(__file__).resolve().parents[2] / "sample_logs" / "nz-table-games" / \
    "night-planted.csv"
#: A name written in Latin-1 ("Mañana"), as a Windows share may hand one over.
LATIN1 = os.fsdecode(b"Ma\xf1ana.csv")


@pytest.fixture
def latin1_folder(tmp_path) -> Path:
    """A folder of one log named in UTF-8 and one, a copy, named in Latin-1."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "good.csv").write_bytes(PLANTED.read_bytes())
    (logs / LATIN1).write_bytes(PLANTED.read_bytes())
    return logs


def test_a_log_named_in_another_encoding_stops_the_run_naming_it(latin1_folder):
    out = latin1_folder.parent / "out"
    res = auditor("check", latin1_folder, "-r", "nz-table-games", "--out", out,
                  cwd=latin1_folder.parent)
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"{latin1_folder}/Ma\\xf1ana.csv: its name is not UTF-8 text" in res.stderr
    assert "internal error" not in res.stderr and res.stderr.count("\n") == 1
    assert not out.exists()


def test_validate_names_a_log_named_in_another_encoding_as_not_a_log(latin1_folder):
    res = auditor("validate", latin1_folder, cwd=latin1_folder.parent)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stdout.startswith(f"{latin1_folder}/Ma\\xf1ana.csv: [not a log] cannot be read "
                                 "as a log: its name is not UTF-8 text"), res.stdout
    assert "1 file(s) not a log" in res.stderr


@pytest.mark.parametrize("jobs", [1, 2])
def test_keep_going_audits_the_rest_and_names_it_not_audited(latin1_folder, jobs):
    out = latin1_folder.parent / f"out{jobs}"
    res = auditor("check", latin1_folder, "-r", "nz-table-games", "--out", out, "--keep-going",
                  "--jobs", jobs, "--format", "parquet", "--format", "json", "--format", "sarif",
                  "--format", "html", "--format", "junit", "--fail-on", "none",
                  cwd=latin1_folder.parent)
    assert res.returncode == 2, res.stdout + res.stderr  # (a file not audited)
    shown = f"{latin1_folder}/Ma\\xf1ana.csv"
    summary = json.loads((out / "summary.json").read_text())
    assert [(e["file"], e["reason"].split(" (")[0]) for e in
            report_provenance(out)["not_audited"]] == [(shown, "its name is not UTF-8 text")]
    assert summary["counts"]["total"] > 0  # good.csv's findings
    assert {f["source_file"] for f in map(json.loads, (out / "findings.jsonl")
                                          .read_text().splitlines())} == \
        {str(latin1_folder / "good.csv")}
    sarif = json.loads((out / "findings.sarif").read_text())
    assert [n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]] == \
        [f"file://{latin1_folder}/Ma%F1ana.csv"]
    verified = auditor("verify", out, cwd=latin1_folder.parent)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_an_output_ruleset_baseline_and_waivers_named_in_another_encoding_work(tmp_path):
    """Names the auditor writes or reads beside the logs: the reports are
    written and stand, each such name in them shown with `\\xNN`."""
    def latin1(name: str) -> Path:
        return tmp_path / os.fsdecode(name.encode("latin-1"))

    ruleset = latin1("règles.toml")
    ruleset.write_bytes((Path(__file__).resolve().parents[2] / "rulesets" /
                         "nz-table-games.toml").read_bytes())
    first = latin1("première")
    formats = [a for f in ("parquet", "html", "json", "sarif", "junit", "csv")
               for a in ("--format", f)]
    res = auditor("check", PLANTED, "-r", ruleset, "--out", first, *formats, "-q",
                  cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr  # (the planted findings)
    provenance = json.loads((first / "summary.json").read_text())["provenance"]
    assert provenance["ruleset"]["files"] == [f"{tmp_path}/r\\xe8gles.toml"]
    baseline = latin1("base-é.json")
    assert auditor("baseline", "create", "--from", first / "findings.parquet", "--out",
                   baseline, cwd=tmp_path).returncode == 0
    waivers = latin1("dérogations.toml")
    waivers.write_text('[[waiver]]\nrule = "NZ5.2-far-end"\nreason = "r"\n')
    second = tmp_path / "second"
    res = auditor("check", PLANTED, "-r", ruleset, "--out", second, "--baseline", baseline,
                  "--waivers", waivers, *formats, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr  # (every finding known)
    assert f"Unused waiver(s) in {tmp_path}/d\\xe9rogations.toml" in res.stdout
    triage = json.loads((second / "summary.json").read_text())["provenance"]["statuses"]
    assert (triage["baseline"]["file"], triage["waivers"]["file"]) == \
        (f"{tmp_path}/base-\\xe9.json", f"{tmp_path}/d\\xe9rogations.toml")
    for folder in (first, second):
        verified = auditor("verify", folder, cwd=tmp_path)
        assert verified.returncode == 0, verified.stdout + verified.stderr
    trend = auditor("trend", first, second, "--out", latin1("évolution"), cwd=tmp_path)
    assert trend.returncode == 0, trend.stdout + trend.stderr
    assert f"Written: {tmp_path}/\\xe9volution/trend.parquet" in trend.stdout


@pytest.mark.parametrize(("recorded", "uri"), [
    ("/logs/Ma\\xf1ana.csv", "file:///logs/Ma%F1ana.csv"),  # a name shown with its bytes
    ("logs/caf\\xe9/n\\xe9.jsonl", "logs/caf%E9/n%E9.jsonl"),
    ("/logs/Mañana.csv", "file:///logs/Ma%C3%B1ana.csv"),  # text: its UTF-8
    ("/logs/a\\x41.csv", "file:///logs/a/x41.csv"),  # \x41 is no byte a name shows so
    ("C:\\xe9\\night.csv", "file:///C:/xe9/night.csv"),  # a Windows drive path
])
def test_sarif_uri_of_a_shown_name_is_its_bytes_and_of_any_other_as_before(recorded, uri):
    from auditor.report.sarif import artifact_uri

    assert artifact_uri(recorded) == uri


#: Where each command takes a path (PATH marks it), with what else it needs.
PATH_ARGUMENTS = [
    ("validate", "PATH"), ("verify", "PATH"), ("verify", "reports", "--inputs-root", "PATH"),
    ("trend", "PATH", "--out", "trend"), ("rulesets", "check", "PATH"),
    ("rulesets", "new", "x-y", "--from", "PATH"),
    ("baseline", "create", "--from", "PATH", "--out", "b.json"),
    ("check", "PATH", "-r", "nz-table-games", "--out", "out"),
]


@pytest.mark.parametrize("args", PATH_ARGUMENTS, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("path", ["lo\x00g.csv", "a" * 5000], ids=["nul", "too-long"])
def test_a_path_the_system_refuses_is_one_line(tmp_path, monkeypatch, args, path):
    """(Each was `internal error: ValueError: embedded null byte` or an
    OSError's, 2026-12-07.) A path no file can have: exit 2 and one line
    (the command's own, or what the system said of the path)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    res = run(*[path if a == "PATH" else a for a in args])
    assert res.exit_code == 2, res.output
    assert "internal error" not in res.output, res.output
    lines = [ln for ln in res.output.splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output


def test_what_the_system_refuses_of_a_path_is_said_as_it_said_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = run("validate", "lo\x00g.csv")
    assert res.output == "error: a path given holds a NUL byte (\\x00), which no file name can\n"
    res = run("validate", "a" * 5000)
    assert res.output == f"error: {'a' * 5000}: File name too long\n"
    assert res.exit_code == 2
