"""The machine-readable report formats (json, junit, sarif, github): each is
read back by a real reader and compared with the findings; every format is
byte-for-byte deterministic; text from a log comes out inert."""

import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from datetime import UTC
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow.parquet as pq
import pytest
from builder import STICK, lawful_table, report_provenance
from builder import run_cli as run

from auditor.cli.progress import Progress
from auditor.codes import CODES
from auditor.escape import escape_data, escape_property
from auditor.findings import FINDING_COLUMNS, RESPONSIBLE_FIELDS
from auditor.report.formats import FORMAT_MODULES, FORMATS
from auditor.rules.ruleset import load_ruleset

SCHEMA = Path(__file__).parents[1] / "data" / "sarif-2.1.0-subset.json"
ALL = ("parquet", "json", "junit", "sarif", "github")
#: Markup, a formula and control characters, recorded as ids in the log.
PLAYER = '<script>alert(1)</script>"><img src=x>\x1b[2J\u202egnp.exe'
STAFF = '=HYPERLINK("http://x")\x07%0A,:: end'
LEVELS = {"critical": "error", "major": "error", "minor": "warning", "info": "note"}
COMMANDS = {"critical": "error", "major": "error", "minor": "warning", "info": "notice"}
RULESET = """\
[ruleset]
id = "formats-test"
title = "nz-table-games with the one-hand rule at info"
status = "provisional"
notes = "a test ruleset: one severity of each kind"
extends = "nz-table-games"

[[rule]]
id = "R5.5-one-hand"
severity = "info"
"""


def hostile_log(folder: Path) -> tuple[Path, Path]:
    """A log with a finding of each severity (info, minor, major, critical)
    and a malformed row, with markup and control characters in the ids of
    the rows the findings name and in an unknown event name."""
    b = lawful_table()
    b.add("roll", role="player", seat=2, dice="A1,A2", die1=3, die2=4,
          flags="two_hands,simultaneous,far_end", actor_id=PLAYER, player_id=PLAYER)  # info
    b.call(8)  # major: the dice showed 7
    b.add("dice_collected", role=STICK, dice="A1,A2", flags="no_stick", actor_id=STAFF)  # minor
    b.settle(2, "pass", "lose")  # critical: a natural wins
    b.settle(5, "pass", "win", 10)
    b.settle(7, "pass", "win", 10)
    b.add(PLAYER, role="player", seat=5)  # malformed: an unknown event
    log = b.write_csv(folder / "hostile.csv")
    ruleset = folder / "formats-test.toml"
    ruleset.write_text(RULESET, encoding="utf-8")
    return log, ruleset


def check_all(log: Path, ruleset: Path, out: Path, *extra):
    args = ["check", log, "-r", ruleset, "--out", out]
    for name in ALL:
        args += ["--format", name]
    return run(*args, *extra)


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    folder = tmp_path_factory.mktemp("formats")
    log, ruleset = hostile_log(folder)
    res = check_all(log, ruleset, folder / "out")
    table = pq.read_table(folder / "out" / "findings.parquet")
    meta = report_provenance(folder / "out")
    return {"folder": folder, "log": log, "ruleset": ruleset, "res": res,
            "out": folder / "out", "findings": table.to_pandas(), "rows": table.to_pylist(),
            "meta": meta,
            "rules": load_ruleset(str(ruleset)).rules}


def iso(ts) -> str | None:
    return None if ts is None else ts.astimezone(UTC).isoformat().replace("+00:00", "Z")


def test_registry_and_default():
    assert set(ALL) <= set(FORMATS)
    assert FORMAT_MODULES["parquet"] == "auditor.report.parquet"
    assert "--format [" in run("check", "--help").output
    help_text = " ".join(run("check", "--help").output.split())
    assert "[default: (parquet, and text on a terminal)]" in help_text


def test_the_log_has_every_severity(audited):
    f = audited["findings"]
    assert audited["res"].exit_code == 1, audited["res"].output
    assert set(f["severity"]) == {"critical", "major", "minor", "info"}
    assert "log.malformed" in set(f["code"])
    assert PLAYER in set(f["actor_id"]) and STAFF in set(f["actor_id"])
    assert tuple(f.columns) == (*FINDING_COLUMNS, *(r.name for r in RESPONSIBLE_FIELDS))


# --- json ---------------------------------------------------------------------------


def test_json_findings_read_back(audited):
    f = audited["findings"]
    lines = (audited["out"] / "findings.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == len(f)
    for rec, row in zip(records, audited["rows"]):
        assert list(rec) == [*FINDING_COLUMNS, "status", "waiver"]
        for col in FINDING_COLUMNS:
            if col not in ("ts", "evidence"):
                assert rec[col] == row[col], col
        assert rec["ts"] == iso(row["ts"])
        assert rec["ts"] is None or rec["ts"].endswith("Z")
        assert isinstance(rec["evidence"], dict)
        assert rec["evidence"] == json.loads(row["evidence"])
        assert rec["status"] == "new" and rec["waiver"] is None


@pytest.mark.parametrize(("block", "page"), [(1, False), (2, False), (3, True), (2, True)])
def test_json_findings_written_a_block_at_a_time_are_the_same_bytes(audited, tmp_path,
                                                                    monkeypatch, block, page):
    """findings.jsonl is written LINES_A_BLOCK findings at a time (its text
    never whole in memory; the records' texts made a block at a time, or
    taken from the page's when it made them all): any block size gives the
    file and the `json:-` text one whole writing gives, a line a finding."""
    from auditor.report import json_format

    monkeypatch.setattr(json_format, "LINES_A_BLOCK", block)
    res = run("check", audited["log"], "-r", audited["ruleset"], "--out", tmp_path / "out",
              "--format", "json", "--format", "json:-", *(["--format", "html"] if page else []))
    assert res.exit_code == 1, res.output
    whole = (audited["out"] / "findings.jsonl").read_bytes()
    assert (tmp_path / "out" / "findings.jsonl").read_bytes() == whole
    assert whole.count(b"\n") == len(audited["findings"]) > 3 and whole.endswith(b"}\n")
    assert res.output.encode("utf-8").startswith(whole)


def test_json_summary(audited):
    summary = json.loads((audited["out"] / "summary.json").read_text(encoding="utf-8"))
    f = audited["findings"]
    assert summary["schema_version"] == "1"
    assert summary["provenance"] == audited["meta"]
    counts = summary["counts"]
    assert counts["total"] == len(f)
    assert counts["by_severity"] == {s: int((f["severity"] == s).sum())
                                     for s in ("critical", "major", "minor", "info")}
    assert counts["by_code"] == {c: int((f["code"] == c).sum()) for c in sorted(set(f["code"]))}
    assert counts["by_status"] == {"new": len(f), "known": 0, "waived": 0}
    assert summary["verdict"] == {"fail_on": "major", "failing": 3, "exit_code": 1,
                                  "result": "fail"}
    assert summary["verdict"]["exit_code"] == audited["res"].exit_code
    assert summary["unused_waivers"] == []


# --- junit --------------------------------------------------------------------------


def test_junit_shape(audited):
    """One suite (the ruleset), one test case per rule; a new finding at or
    above --fail-on (major) is a failure of its rule's case, one below it
    is listed in the case's system-out and fails nothing."""
    root = ET.parse(audited["out"] / "junit.xml").getroot()
    f, rules = audited["findings"], audited["rules"]
    assert root.tag == "testsuites"
    [suite] = root.findall("testsuite")
    assert suite.get("name") == "formats-test"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["fail_on"] == "major" and props["tables"] == "1"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [f"{r.id} {r.code}" for r in rules]
    assert {c.get("classname") for c in cases} == {"formats-test"}
    failed = [c for c in cases if c.find("failure") is not None]
    assert suite.get("tests") == root.get("tests") == str(len(cases))
    assert suite.get("failures") == root.get("failures") == str(len(failed))
    assert suite.get("errors") == "0" and suite.get("skipped") == "0"
    got = sorted((c.get("name"), fail.get("message"), fail.get("type"))
                 for c in cases for fail in c.findall("failure"))
    failing = f[f["severity"].isin(["critical", "major"])]
    want = sorted(zip(failing["rule_id"] + " " + failing["code"],
                      failing["table_id"] + " seq " + failing["seq"].astype(str) + ": "
                      + failing["message"], failing["severity"]))
    assert got == want and len(got) == 3
    below = f[f["severity"].isin(["minor", "info"])]
    outs = {c.get("name"): c.findtext("system-out") for c in cases}
    for row in below.itertuples():
        out = outs[f"{row.rule_id} {row.code}"]
        assert out.startswith("Not failing: 1 new finding(s) below major, 0 known, 0 waived.")
        assert f"finding_id: {row.finding_id}" in out


@pytest.mark.parametrize("block", [1, 2])
def test_junit_failures_made_a_block_at_a_time_are_the_same_bytes(audited, tmp_path,
                                                                  monkeypatch, block):
    """A rule's failures are made FAILURES_A_BLOCK at a time (their details
    never all in memory): any block size gives the same junit.xml."""
    from auditor.report import junit

    monkeypatch.setattr(junit, "FAILURES_A_BLOCK", block)
    res = check_all(audited["log"], audited["ruleset"], tmp_path / "out")
    assert res.exit_code == 1, res.output
    whole = (audited["out"] / "junit.xml").read_bytes()
    assert whole.count(b"<failure ") > block
    assert (tmp_path / "out" / "junit.xml").read_bytes() == whole


def test_junit_failure_text_names_the_event(audited):
    root = ET.parse(audited["out"] / "junit.xml").getroot()
    texts = {fail.get("message").split(": ", 1)[1]: fail.text
             for fail in root.iter("failure")}
    texts.update({out.text.split("finding_id: ")[1][:20]: out.text
                  for out in root.iter("system-out")})
    for row in audited["rows"]:
        text = texts.get(row["message"]) or texts[row["finding_id"]]
        assert f"table: {row['table_id']}" in text
        assert f"code: {row['code']}" in text
        assert f"clause: {row['clause']}" in text
        assert f"seq: {row['seq']}" in text
        assert f"ts: {iso(row['ts']) or '-'}" in text
        assert "status: new" in text
        assert "evidence: {" in text
        if row["actor_id"] is not None:
            assert "actor: " in text


def junit_of(log: Path, ruleset: Path, out: Path, *extra) -> ET.Element:
    res = run("check", log, "-r", ruleset, "--out", out, "--format", "junit", *extra)
    assert res.exit_code in (0, 1), res.output
    return ET.parse(out / "junit.xml").getroot()


def test_junit_failures_follow_fail_on(audited, tmp_path):
    """--fail-on minor: the minor finding fails too; --fail-on none: nothing
    fails, every finding is in system-out; the suite says which."""
    f = audited["findings"]
    root = junit_of(audited["log"], audited["ruleset"], tmp_path / "minor",
                    "--fail-on", "minor")
    assert len(list(root.iter("failure"))) == int(f["severity"].ne("info").sum()) == 4
    root = junit_of(audited["log"], audited["ruleset"], tmp_path / "none",
                    "--fail-on", "none")
    assert list(root.iter("failure")) == [] and root.get("failures") == "0"
    assert {p.get("name"): p.get("value") for p in root.iter("property")}["fail_on"] == "none"
    outs = "\n".join(out.text for out in root.iter("system-out"))
    assert outs.count("finding_id: ") == len(f)
    assert "not failing under --fail-on none" in outs


def test_junit_known_findings_are_skipped_not_failed(audited, tmp_path):
    baseline = tmp_path / "baseline.json"
    res = run("baseline", "create", "--from", audited["out"] / "findings.parquet",
              "--out", baseline)
    assert res.exit_code == 0, res.output
    root = junit_of(audited["log"], audited["ruleset"], tmp_path / "out",
                    "--baseline", baseline)
    assert list(root.iter("failure")) == []
    skipped = [c for c in root.iter("testcase") if c.find("skipped") is not None]
    assert root.get("skipped") == str(len(skipped)) == str(audited["findings"]["rule_id"]
                                                          .nunique())


# --- sarif --------------------------------------------------------------------------


def sarif_of(audited) -> dict:
    return json.loads((audited["out"] / "findings.sarif").read_text(encoding="utf-8"))


def test_sarif_validates_against_the_schema_subset(audited):
    jsonschema = pytest.importorskip("jsonschema")
    doc = sarif_of(audited)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(doc)
    # the properties SARIF 2.1.0 itself requires
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].startswith("https://") and doc["$schema"].endswith(
        "sarif-schema-2.1.0.json")
    [run_] = doc["runs"]
    assert run_["tool"]["driver"]["name"] == "auditor"
    assert all(r["message"]["text"] for r in run_["results"])
    for r in run_["results"]:  # uri-reference (jsonschema does not check the format)
        uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert " " not in uri and urlsplit(uri).path


def test_sarif_rules_are_the_rulesets(audited):
    driver = sarif_of(audited)["runs"][0]["tool"]["driver"]
    rules = audited["rules"]
    assert [r["id"] for r in driver["rules"]] == [r.id for r in rules]
    for got, rule in zip(driver["rules"], rules):
        assert got["shortDescription"]["text"] == (rule.summary or CODES[rule.code])
        assert got["fullDescription"]["text"] == CODES[rule.code]
        assert got["properties"] == {"clause": rule.clause, "code": rule.code,
                                     "severity": rule.severity}


def test_sarif_results_are_the_findings(audited):
    run_ = sarif_of(audited)["runs"][0]
    f = audited["findings"]
    rule_ids = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    assert len(run_["results"]) == len(f)
    for res, row in zip(run_["results"], audited["rows"]):
        assert res["ruleId"] == row["rule_id"] == rule_ids[res["ruleIndex"]]
        assert res["level"] == LEVELS[row["severity"]]
        assert res["message"]["text"] == row["message"]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == Path(row["source_file"]).as_uri()
        assert loc["region"]["startLine"] == row["source_line"]
        assert res["partialFingerprints"] == {"auditorFindingId/v1": row["finding_id"]}
        props = res["properties"]
        assert props["table_id"] == row["table_id"] and props["seq"] == row["seq"]
        assert props["evidence"] == json.loads(row["evidence"])
        assert props["status"] == "new"
        assert "baselineState" not in res and "suppressions" not in res


# --- github -------------------------------------------------------------------------

LINE = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


def unescape(text: str) -> str:
    return re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def github_lines(output: str) -> list[str]:
    return [line for line in output.split("\n") if line.startswith("::")]


def test_github_annotations(audited):
    lines = github_lines(audited["res"].output)
    f = audited["findings"]
    assert len(lines) == len(f)
    for line, row in zip(lines, audited["rows"]):
        m = LINE.match(line)
        assert m, line
        assert m.group(1) == COMMANDS[row["severity"]]
        props = dict(p.split("=", 1) for p in m.group(2).split(","))
        assert list(props) == ["file", "line", "title"]
        assert unescape(props["file"]) == row["source_file"]
        assert props["line"] == str(row["source_line"])
        assert unescape(props["title"]) == f"{row['code']} {row['rule_id']}"
        assert unescape(m.group(3)) == (f"{row['table_id']} seq {row['seq']}: "
                                        f"{row['message']} (clause {row['clause']})")
    assert not list(audited["out"].glob("*github*"))


def test_github_escaping():
    assert escape_data("100% sure\r\nnext") == "100%25 sure%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    assert escape_data("bell\x07esc\x1b[2J") == "bell%07esc%1B[2J"


# --- determinism --------------------------------------------------------------------


def test_every_format_is_deterministic(audited, tmp_path):
    log, ruleset = audited["log"], audited["ruleset"]
    first = check_all(log, ruleset, tmp_path / "a")
    second = check_all(log, ruleset, tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    assert {"findings.jsonl", "summary.json", "junit.xml", "findings.sarif",
            "findings.parquet"} <= set(names)
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), \
            name
    assert github_lines(first.output) == github_lines(second.output)
    assert github_lines(first.output) == github_lines(audited["res"].output)


# --- text from the log comes out inert ---------------------------------------------


def _no_raw_controls(data: bytes) -> bool:
    return not re.search(rb"[\x00-\x09\x0b-\x1f\x7f]", data)


@pytest.mark.parametrize("name", ["findings.jsonl", "summary.json", "findings.sarif"])
def test_json_outputs_are_inert(audited, name):
    data = (audited["out"] / name).read_bytes()
    assert data.isascii() and _no_raw_controls(data)
    for bad in (b"<script", b"<img", b"</", b'"><'):
        assert bad not in data
    text = data.decode()
    values = [json.loads(line) for line in text.splitlines()] if name.endswith(".jsonl") \
        else [json.loads(text)]
    if name != "summary.json":  # the values survive, exactly
        found = json.dumps(values)
        assert json.dumps(PLAYER)[1:-1] in found and json.dumps(STAFF)[1:-1] in found


def test_junit_is_inert(audited):
    data = (audited["out"] / "junit.xml").read_bytes()
    assert _no_raw_controls(data.replace(b"\r", b""))
    for bad in (b"<script", b"<img", b'"><'):
        assert bad not in data
    root = ET.fromstring(data)
    assert {el.tag for el in root.iter()} <= {"testsuites", "testsuite", "properties",
                                               "property", "testcase", "failure",
                                               "skipped", "system-out"}
    texts = "\n".join(el.text or "" for el in root.iter() if el.tag in ("failure",
                                                                          "system-out"))
    messages = "\n".join(el.get("message") for el in root.iter("failure"))
    assert "<script>alert(1)</script>\"><img src=x>\\u001b[2J\\u202egnp.exe" in texts
    assert '=HYPERLINK("http://x")\\u0007%0A,:: end' in texts
    assert "unknown event '<script>" in messages


def test_sarif_keeps_the_exact_values(audited):
    results = sarif_of(audited)["runs"][0]["results"]
    actors = {r["properties"]["actor_id"] for r in results}
    assert PLAYER in actors and STAFF in actors


def test_github_lines_are_inert(audited):
    output = audited["res"].output
    lines = github_lines(output)
    assert all(LINE.match(line) for line in lines)
    assert not [ch for ch in output if ch != "\n" and unicodedata.category(ch) in
                ("Cc", "Cf", "Zl", "Zp")]
    malformed = [line for line in lines if "log.malformed" in line]
    assert malformed and "<script>" in unescape(malformed[0])


# --- progress -----------------------------------------------------------------------


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_prints_files_events_and_rate():
    import io

    stream, clock = io.StringIO(), _Clock()
    p = Progress(stream=stream, enabled=True, clock=clock, interval=0)
    p.start(files=2)
    clock.now = 2.0
    p.advance(files=1, events=1000)
    p.advance(files=1, events=1000)
    p.finish()
    text = stream.getvalue()
    assert "reading: 2/2 file(s), 2,000 event(s), 1,000 events/s" in text
    assert text.endswith("\n") and "\r" in text


def test_progress_is_silent_off_a_terminal_or_when_quiet():
    import io

    class Tty(io.StringIO):
        def isatty(self):
            return True

    for p, stream in ((Progress(stream=(s := io.StringIO())), s),
                      (Progress(stream=(t := Tty()), quiet=True), t)):
        p.start()
        p.advance(files=1, events=10)
        p.finish()
        assert stream.getvalue() == ""
    shown = Tty()
    p = Progress(stream=shown)
    p.start()
    p.finish()
    assert "reading: 0 file(s)" in shown.getvalue()


def test_check_shows_no_progress_when_not_a_terminal(audited):
    assert "events/s" not in audited["res"].output
