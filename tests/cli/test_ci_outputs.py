"""The terminal and CI outputs of `auditor check`, through the command line:
the text format and FMT:- on standard output, a closed pipe, --fail-on none,
JUnit and SARIF at volume, the project configuration, the pre-commit hook."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from builder import STICK, lawful_table
from builder import run_cli as run

ROOT = Path(__file__).parents[2]
SCHEMA = ROOT / "tests" / "data" / "sarif-2.1.0-subset.json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: a table id that would forge a line, and a workflow command, if printed raw
FORGED_TABLE = "T9\n::error ::forged"


def breaches(folder: Path, table: str = "T1") -> Path:
    """A log with a critical, a major, a minor and an info finding."""
    b = lawful_table()
    b.table = table
    b.rows = [{**row, "table_id": table} for row in b.rows]
    b.add("roll", role="player", seat=2, dice="A1,A2", die1=3, die2=4,
          flags="two_hands,simultaneous,far_end")  # info under formats-test, minor here
    b.call(8)  # major: the dice showed 7
    b.add("dice_collected", role=STICK, dice="A1,A2", flags="no_stick")  # minor
    b.settle(2, "pass", "lose")  # critical: a natural wins
    b.settle(5, "pass", "win", 10)
    b.settle(7, "pass", "win", 10)
    return b.write_csv(folder / "breaches.csv")


def one_row_tables(path: Path, tables: int, broken: int) -> Path:
    """`tables` one-row tables (a table_open each) and `broken` one-row
    tables whose event is unknown (a log.malformed finding each), built
    with pyarrow in a moment."""
    n = tables + broken
    ids = pc.binary_join_element_wise(pa.array(["T"] * n),
                                      pc.cast(pa.array(range(n)), pa.string()), "")
    pq.write_table(pa.table({
        "table_id": ids, "seq": pa.array([1] * n, pa.int64()),
        "ts": pa.array(["2026-03-01T20:00:00Z"] * n),
        "event": pa.array(["table_open"] * tables + ["not_an_event"] * broken),
    }), path)
    return path


def auditor(*args, stdout=subprocess.PIPE) -> subprocess.Popen:
    env = dict(os.environ)  # (-P below: the installed package, not the checkout)
    return subprocess.Popen([sys.executable, "-P", "-m", "auditor", *map(str, args)],
                            stdout=stdout, stderr=subprocess.PIPE, env=env, cwd=ROOT)


# --- text ---------------------------------------------------------------------------


def test_text_report_on_standard_output(tmp_path):
    log = breaches(tmp_path)
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "out",
              "--format", "text:-")
    assert res.exit_code == 1, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("auditor: nz-table-games (provisional); 1 file(s), 1 table(s)")
    assert "FAIL: 2 finding(s) at or above major" in lines
    assert any(line.startswith("Findings: 4 (1 critical, 1 major, 2 minor, 0 info)")
               for line in lines)
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["SEVERITY", "TABLE"])
    assert lines[header - 1] == "Top findings (4 of 4, new first, most severe first):"
    rows = lines[header + 1:]
    assert [r.split()[0] for r in rows] == ["critical", "major", "minor", "minor"]
    assert rows[0].split()[1:4] == ["T1", rows[0].split()[2], "settle.wrong_outcome"]
    # aligned: every column starts where its heading does
    for name in ("TABLE", "CODE", "CLAUSE", "MESSAGE"):
        at = lines[header].index(name)
        assert all(row[at - 1] == " " and row[at] != " " for row in rows), name
    assert not ANSI.search(res.stdout)  # not a terminal: no colour
    assert not (tmp_path / "out").exists()  # FMT:- writes no file
    assert "Written: nothing." in res.stderr


def test_text_is_the_default_on_a_terminal_with_parquet(tmp_path, monkeypatch):
    """No --format: findings.parquet is written as always, and on a terminal
    the text report replaces the summary paragraph, in colour unless
    --no-color or NO_COLOR (any non-empty value)."""
    log = breaches(tmp_path)
    monkeypatch.setattr("auditor.cli.check_cmd._stdout_is_terminal", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "a")
    assert res.exit_code == 1
    assert "\x1b[1;31mFAIL\x1b[0m: 2 finding(s) at or above major" in res.stdout
    assert "\x1b[1;31mcritical\x1b[0m" in res.stdout
    assert "Audited 1 file(s)" not in res.output
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [
        "dice_stats.parquet", "dice_totals.parquet", "findings.parquet", "manifest.json",
        "quarantine.parquet", "rollups.parquet"]
    plain = ANSI.sub("", res.stdout)
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "b", "--no-color")
    assert res.stdout == plain
    monkeypatch.setenv("NO_COLOR", "1")
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "c")
    assert res.stdout == plain
    monkeypatch.setenv("NO_COLOR", "")  # empty: as if unset
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "d")
    assert ANSI.search(res.stdout)


def test_off_a_terminal_the_default_output_is_unchanged(tmp_path):
    res = run("check", breaches(tmp_path), "-r", "nz-table-games", "--out", tmp_path / "out")
    assert res.exit_code == 1
    assert res.stdout.startswith("Audited 1 file(s), 1 table(s)")
    assert res.stdout.count("\n") == 1


def test_text_keeps_a_line_break_in_a_table_id_on_its_line(tmp_path):
    log = breaches(tmp_path, table=FORGED_TABLE)
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "out",
              "--format", "text:-")
    assert res.exit_code == 1, res.output
    assert not any(line.startswith("::") for line in res.stdout.splitlines())
    assert "T9\\n::error ::forged" in res.stdout
    assert len(res.stdout.splitlines()) == len(run(
        "check", breaches(tmp_path), "-r", "nz-table-games", "--out", tmp_path / "o2",
        "--format", "text:-").stdout.splitlines())


# --- FMT:- ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, file", [("json", "findings.jsonl"), ("junit", "junit.xml"),
                                        ("sarif", "findings.sarif"), ("csv", "findings.csv")])
def test_a_format_on_standard_output_is_its_file(tmp_path, name, file):
    log = breaches(tmp_path)
    to_file = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "f",
                  "--format", name)
    to_stdout = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "s",
                    "--format", f"{name}:-")
    assert to_file.exit_code == to_stdout.exit_code == 1
    assert to_stdout.stdout_bytes == (tmp_path / "f" / file).read_bytes()
    assert not (tmp_path / "s").exists()
    assert to_stdout.stderr.startswith("Audited 1 file(s)")  # the summary moves aside


def test_github_to_standard_output_is_the_same_either_way(tmp_path):
    log = breaches(tmp_path)
    a = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "a", "--format", "github")
    b = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "b",
            "--format", "github:-")
    assert a.stdout == b.stdout and a.stdout.startswith("::warning ")
    assert a.stdout.count("::error ") == 2


@pytest.mark.parametrize("spec, message", [
    ("parquet:-", "parquet cannot go to standard output"),
    ("html:-", "html cannot go to standard output"),
    ("json:x", "'json:x' is not a format"),
    ("json:", "'json:' is not a format"),  # (was an internal error: KeyError)
    (":-", "':-' is not a format"),
])
def test_formats_that_cannot_go_to_standard_output(tmp_path, spec, message):
    res = run("check", breaches(tmp_path), "-r", "nz-table-games", "--format", spec)
    assert res.exit_code == 2 and message in res.output


def test_one_format_at_a_time_on_standard_output(tmp_path):
    res = run("check", breaches(tmp_path), "-r", "nz-table-games", "--format", "json:-",
              "--format", "sarif:-")
    assert res.exit_code == 2 and "one format at a time on standard output" in res.output


@pytest.mark.parametrize("spec", ["text:-", "json:-", None])
def test_a_closed_pipe_ends_quietly_with_the_verdict(tmp_path, spec):
    """`auditor check ... | head -1`: the reader is gone before anything is
    written; the run ends with its verdict's exit code and says nothing."""
    log = breaches(tmp_path)
    args = ["check", log, "-r", "nz-table-games", "--out", tmp_path / "out"]
    proc = auditor(*args, *(["--format", spec] if spec else []))
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait() == 1
    assert "BrokenPipe" not in stderr and "Exception ignored" not in stderr
    assert stderr == ""


# --- --fail-on none -----------------------------------------------------------------


def test_fail_on_none_reports_only(tmp_path):
    out = tmp_path / "out"
    res = run("check", breaches(tmp_path), "-r", "nz-table-games", "--out", out,
              "--fail-on", "none", "--format", "json")
    assert res.exit_code == 0, res.output
    assert "Findings: 4 (1 critical, 1 major, 2 minor, 0 info). REPORT ONLY (--fail-on " \
           "none): findings never fail the run." in res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdict"] == {"fail_on": "none", "failing": 0, "exit_code": 0,
                                  "result": "report only"}
    assert summary["counts"]["total"] == 4
    text = run("check", breaches(tmp_path), "-r", "nz-table-games", "--fail-on", "none",
               "--format", "text:-")
    assert text.exit_code == 0
    assert "REPORT ONLY (--fail-on none): findings never fail the run" in text.stdout


# --- JUnit and SARIF at volume ----------------------------------------------------------


#: `auditor ARGS...` that writes its own peak resident memory (VmHWM, kB) to
#: standard error as it exits. (Not the rusage's `ru_maxrss`: Linux keeps
#: it across exec, so a child forked from a large test process reports the
#: parent's size.)
PEAK_REPORTING = """
import atexit, sys
def _peak():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                sys.stderr.write("peak-kB " + line.split()[1] + "\\n")
atexit.register(_peak)
sys.argv = ["auditor", *sys.argv[1:]]
from auditor.__main__ import run
run()
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_junit_of_100000_tables_is_small(tmp_path):
    """100,000 one-row tables (and 20,000 findings): junit.xml under 20 MB,
    the run's peak memory under 500 MB (its high-water resident set, as the
    kernel counted it). It was 351 MB and 2.7 GB, one test case per table
    and rule."""
    log = one_row_tables(tmp_path / "many.parquet", 100_000, 20_000)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-P", "-c", PEAK_REPORTING, "check", str(log), "-r",
                           "nz-table-games", "--out", str(out), "--format", "junit"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          cwd=ROOT, check=False)
    assert proc.returncode == 1, proc.stderr
    [peak] = [line.split()[1] for line in proc.stderr.splitlines() if line.startswith("peak-kB")]
    peak_mb = int(peak) / 1024
    assert peak_mb < 500, f"peak memory {peak_mb:.0f} MB"
    size = (out / "junit.xml").stat().st_size
    assert size < 20_000_000, size
    root = ET.parse(out / "junit.xml").getroot()
    [suite] = root.findall("testsuite")
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["tables"] == \
        "100000"
    assert len(list(root.iter("failure"))) == 20_000
    assert root.get("failures") == "1"  # one rule, log.malformed


def test_sarif_of_92000_findings_stays_within_githubs_limits(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    # (one lawful row: a file whose every row is quarantined for one reason
    # stops the run, as one fault of the file)
    log = one_row_tables(tmp_path / "broken.parquet", 1, 92_000)
    out = tmp_path / "out"
    res = run("check", log, "-r", "nz-table-games", "--out", out, "--format", "sarif")
    assert res.exit_code == 1, res.output
    data = (out / "findings.sarif").read_bytes()
    assert len(data) <= 10_000_000
    doc = json.loads(data)
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(doc)
    [run_] = doc["runs"]
    kept = len(run_["results"])
    assert 0 < kept <= 25_000
    omitted = run_["properties"]["omittedResults"]
    assert omitted["total"] == 92_000 - kept
    assert omitted["by_rule"] == {"log.malformed": {"total": 92_000 - kept,
                                                    "by_severity": {"major": 92_000 - kept}}}
    notes = run_["invocations"][0]["toolExecutionNotifications"]
    # (beside the rules this log could not evaluate: it has no flags column)
    [note] = [n for n in notes if n.get("descriptor", {}).get("id") != "not_evaluated"]
    assert note["level"] == "warning"
    assert note["message"]["text"].startswith(f"92000 findings: {kept} are results here")
    ids = [r["partialFingerprints"]["auditorFindingId/v1"] for r in run_["results"]]
    assert len(set(ids)) == kept


def test_sarif_max_results_keeps_the_new_and_most_severe(tmp_path):
    log = breaches(tmp_path)
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "one",
              "--format", "sarif", "--sarif-max-results", "2")
    assert res.exit_code == 1, res.output
    run_ = json.loads((tmp_path / "one" / "findings.sarif").read_text())["runs"][0]
    assert [r["properties"]["severity"] for r in run_["results"]] == ["major", "critical"]
    omitted = run_["properties"]["omittedResults"]
    assert omitted["total"] == 2 and omitted["max_results"] == 2
    assert sum(r["total"] for r in omitted["by_rule"].values()) == 2


def test_sarif_under_the_limits_is_unchanged(tmp_path):
    log = breaches(tmp_path)
    run("check", log, "-r", "nz-table-games", "--out", tmp_path / "a", "--format", "sarif")
    run("check", log, "-r", "nz-table-games", "--out", tmp_path / "b", "--format", "sarif",
        "--sarif-max-results", "0")
    a = (tmp_path / "a" / "findings.sarif").read_bytes()
    assert a == (tmp_path / "b" / "findings.sarif").read_bytes()
    run_ = json.loads(a)["runs"][0]
    assert len(run_["results"]) == 4
    assert "invocations" not in run_ and "omittedResults" not in run_["properties"]


# --- project configuration ----------------------------------------------------------


def test_auditor_toml_found_upward(tmp_path, monkeypatch):
    log = breaches(tmp_path)
    (tmp_path / "auditor.toml").write_text(
        'ruleset = "nz-table-games"\nformats = ["json", "sarif"]\nfail-on = "critical"\n'
        'out = "ci-reports"\n', encoding="utf-8")
    (tmp_path / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "deep" / "er")
    res = run("check", log)
    assert res.exit_code == 1, res.output  # the critical finding
    assert res.stderr.startswith(f"config: {tmp_path / 'auditor.toml'}\n")
    assert sorted(p.name for p in (tmp_path / "ci-reports").iterdir()) == [
        "findings.jsonl", "findings.sarif", "manifest.json", "summary.json"]
    # the command line wins
    res = run("check", log, "--fail-on", "none", "--out", tmp_path / "mine", "--format",
              "csv")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == [
        "findings.csv", "manifest.json"]
    res = run("check", log, "--no-config")
    assert res.exit_code == 2 and "Missing option '--ruleset'" in res.output


def test_pyproject_tool_auditor(tmp_path, monkeypatch):
    log = breaches(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "casino"\n\n[tool.auditor]\nruleset = "nz-table-games"\n'
        'fail-on = "none"\nformats = "json"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = run("check", log)
    assert res.exit_code == 0, res.output
    assert res.stderr.startswith(f"config: {tmp_path / 'pyproject.toml'} [tool.auditor]\n")
    assert (tmp_path / "reports" / "summary.json").exists()
    # auditor.toml beside it wins
    (tmp_path / "auditor.toml").write_text('ruleset = "nz-table-games"\n', encoding="utf-8")
    res = run("check", log, "--out", tmp_path / "b")
    assert res.exit_code == 1 and res.stderr.startswith(f"config: {tmp_path / 'auditor.toml'}")


def test_a_pyproject_without_the_table_is_passed_over(tmp_path, monkeypatch):
    (tmp_path / "auditor.toml").write_text('ruleset = "nz-table-games"\n', encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    monkeypatch.chdir(tmp_path / "sub")
    res = run("check", breaches(tmp_path), "--out", tmp_path / "out")
    assert res.exit_code == 1 and f"config: {tmp_path / 'auditor.toml'}" in res.stderr


def test_paths_in_the_configuration_are_relative_to_it(tmp_path, monkeypatch):
    log = breaches(tmp_path)
    (tmp_path / "waivers.toml").write_text(
        '[[waiver]]\nrule = "R5.7-settle-outcome"\nreason = "known"\n', encoding="utf-8")
    (tmp_path / "auditor.toml").write_text(
        'ruleset = "nz-table-games"\nwaivers = "waivers.toml"\nformats = ["json"]\n'
        'out = "reports"\n',
        encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    res = run("check", log)
    assert res.exit_code in (0, 1), res.output
    summary = json.loads((tmp_path / "reports" / "summary.json").read_text())
    assert summary["provenance"]["statuses"]["waivers"]["file"] == str(tmp_path / "waivers.toml")


@pytest.mark.parametrize("content, message", [
    ('rules = "x"\n', "unknown key 'rules'"),
    ('fail-on = "loud"\n', "fail-on must be one of critical, major, minor, info, none"),
    ('out = 3\n', "out must be a string"),
    ('formats = [1]\n', "formats must be a format name or a list of them"),
    ('ruleset = \n', "not valid TOML"),
])
def test_a_bad_configuration_stops_the_run(tmp_path, monkeypatch, content, message):
    (tmp_path / "auditor.toml").write_text(content, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = run("check", breaches(tmp_path), "-r", "nz-table-games")
    assert res.exit_code == 2
    assert res.output.startswith("error: ") and message in res.output
    assert "auditor.toml" in res.output


def test_a_format_named_in_the_configuration_is_checked(tmp_path, monkeypatch):
    (tmp_path / "auditor.toml").write_text('formats = ["pdf"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = run("check", breaches(tmp_path), "-r", "nz-table-games")
    assert res.exit_code == 2 and "'pdf' is not a format" in res.output


# --- pre-commit -----------------------------------------------------------------------


def test_the_pre_commit_hook_runs_auditor_check():
    yaml = pytest.importorskip("yaml")
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "auditor-check"
    assert hook["entry"].split()[:2] == ["auditor", "check"]
    assert hook["language"] == "python" and hook["pass_filenames"] is True
    for name in ("night.csv", "night.jsonl.gz", "night.ndjson", "night.parquet",
                 "night.csv.gz"):
        assert re.search(hook["files"], name), name
    assert not re.search(hook["files"], "notes.txt")


def test_junit_keeps_a_line_break_in_a_table_id_on_its_line(tmp_path):
    """Each finding's detail is `key: value` lines; a line break inside a
    value is written as a visible `\\n`, so a CI log printing the XML shows
    no line of the log's own making (and one without it is left alone)."""
    res = run("check", breaches(tmp_path), "-r", "nz-table-games", "--out", tmp_path / "o1",
              "--format", "junit:-")
    plain = res.stdout
    assert res.exit_code == 1, res.output
    assert "table: T1\n" in plain
    forged = run("check", breaches(tmp_path, table=FORGED_TABLE), "-r", "nz-table-games",
                 "--out", tmp_path / "o2", "--format", "junit:-").stdout
    assert "table: T9\\n::error ::forged\n" in forged
    assert not any(line.lstrip().startswith("::") for line in forged.splitlines())
    assert len(forged.splitlines()) == len(plain.splitlines())
