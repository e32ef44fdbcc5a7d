"""Baselines and waivers: known and waived findings are reported but do not
fail the run; unused and expired waivers are reported; bad files exit 2
with a located message; `baseline create` round-trips."""

import json
import xml.etree.ElementTree as ET
from datetime import date

import pandas as pd
import pytest
from builder import lawful_table, report_findings, report_provenance
from builder import run_cli as run

from auditor.errors import BaselineError
from auditor.findings import FINDING_COLUMNS, RESPONSIBLE_FIELDS, STATUS_COLUMNS
from auditor.report.json_format import inert_json
from auditor.triage.baseline import (
    Baseline,
    Waiver,
    Waivers,
    load_waivers,
    triage,
)

RULESET = "nz-table-games"


def broken_log(tmp_path, critical: bool = True):
    """A critical (settle.wrong_outcome), a major (call.wrong_total) and a
    minor (dice.stick_not_used) finding."""
    b = lawful_table()
    b.roll(2, 3, 4)
    b.call(8)
    b.collect(flags="no_stick")
    b.settle(2, "pass", "lose" if critical else "win", 0 if critical else 10)
    b.settle(5, "pass", "win", 10)
    b.settle(7, "pass", "win", 10)
    return b.write_csv(tmp_path / "broken.csv")


def check(tmp_path, log, out="out", *extra):
    return run("check", log, "-r", RULESET, "--out", tmp_path / out, *extra)


def findings(tmp_path, out="out"):
    return report_findings(tmp_path / out)


def meta(tmp_path, out="out"):
    return report_provenance(tmp_path / out)


def make_baseline(tmp_path, log, name="baseline.json"):
    check(tmp_path, log, "first")
    target = tmp_path / name
    res = run("baseline", "create", "--from", tmp_path / "first" / "findings.parquet",
              "--out", target)
    assert res.exit_code == 0, res.output
    return target


def write_waivers(tmp_path, text, name="waivers.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- baseline ---------------------------------------------------------------------------


def test_without_baseline_the_run_fails(tmp_path):
    res = check(tmp_path, broken_log(tmp_path))
    assert res.exit_code == 1
    assert "Known (in baseline)" not in res.output
    assert meta(tmp_path)["statuses"]["counts"] == {"new": 3, "known": 0, "waived": 0}
    assert meta(tmp_path)["verdict"]["exit_code"] == 1


def test_baseline_create_round_trip(tmp_path):
    log = broken_log(tmp_path)
    target = make_baseline(tmp_path, log)
    doc = json.loads(target.read_text(encoding="utf-8"))
    f = findings(tmp_path, "first")
    md = meta(tmp_path, "first")
    assert doc["schema_version"] == "1"
    assert doc["ruleset"] == {"id": RULESET, "content_hash": md["ruleset"]["content_hash"]}
    want = sorted(({"finding_id": i, "code": c, "rule_id": r, "table_id": t, "seq": int(s)}
                   for i, c, r, t, s in zip(f["finding_id"], f["code"], f["rule_id"],
                                            f["table_id"], f["seq"])),
                  key=lambda e: (e["table_id"], e["seq"], e["rule_id"], e["finding_id"]))
    assert doc["findings"] == want
    again = tmp_path / "again.json"
    run("baseline", "create", "--from", tmp_path / "first" / "findings.parquet", "--out", again)
    assert again.read_bytes() == target.read_bytes()


def test_baseline_that_knows_every_finding_passes(tmp_path):
    log = broken_log(tmp_path)
    baseline = make_baseline(tmp_path, log)
    res = check(tmp_path, log, "out", "--baseline", baseline, "--format", "parquet",
                "--format", "json", "--format", "sarif", "--format", "junit",
                "--format", "github")
    assert res.exit_code == 0, res.output
    assert "PASS" in res.output
    assert "Known (in baseline): 3, waived: 0" in res.output
    f = findings(tmp_path)
    # the table is unchanged (who answers for each finding: issue 29's columns)
    assert tuple(f.columns) == (*FINDING_COLUMNS, *(r.name for r in RESPONSIBLE_FIELDS)) \
        and len(f) == 3
    st = meta(tmp_path)["statuses"]
    assert st["counts"] == {"new": 0, "known": 3, "waived": 0}
    assert st["known"] == sorted(f["finding_id"])
    assert st["baseline"]["ruleset_hash_matches"] is True
    assert st["baseline"]["entries"] == 3 and st["baseline"]["not_found"] == 0
    out = tmp_path / "out"
    statuses = [json.loads(line)["status"] for line in
                (out / "findings.jsonl").read_text().splitlines()]
    assert statuses == ["known"] * 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["by_status"] == {"new": 0, "known": 3, "waived": 0}
    assert summary["verdict"]["exit_code"] == 0
    results = json.loads((out / "findings.sarif").read_text())["runs"][0]["results"]
    assert [r["baselineState"] for r in results] == ["unchanged"] * 3
    assert [r["properties"]["status"] for r in results] == ["known"] * 3
    root = ET.parse(out / "junit.xml").getroot()
    assert root.get("failures") == "0" and root.get("skipped") == "3"
    assert "status: known" in "".join(el.text for el in root.iter("system-out"))
    lines = [line for line in res.output.splitlines() if line.startswith("::")]
    assert len(lines) == 3
    assert all(line.startswith("::notice ") and line.endswith("[known]") for line in lines)


def test_baseline_that_knows_every_major_finding_passes_at_major(tmp_path):
    log = broken_log(tmp_path)
    baseline = make_baseline(tmp_path, log)
    f = findings(tmp_path, "first")
    minor = set(f.loc[f["severity"] == "minor", "finding_id"])
    doc = json.loads(baseline.read_text())
    doc["findings"] = [e for e in doc["findings"] if e["finding_id"] not in minor]
    baseline.write_text(json.dumps(doc))
    assert check(tmp_path, log, "a", "--baseline", baseline).exit_code == 0
    res = check(tmp_path, log, "b", "--baseline", baseline, "--fail-on", "minor")
    assert res.exit_code == 1 and "FAIL: 1 finding(s) at or above minor" in res.output


def test_a_new_finding_beyond_the_baseline_fails(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    baseline = make_baseline(tmp_path, broken_log(old, critical=False))
    res = check(tmp_path, broken_log(tmp_path), "out", "--baseline", baseline,
                "--format", "sarif")
    assert res.exit_code == 1
    assert "FAIL: 1 finding(s) at or above major" in res.output
    assert "Known (in baseline): 2" in res.output
    results = json.loads((tmp_path / "out" / "findings.sarif").read_text())["runs"][0][
        "results"]
    states = {r["properties"]["code"]: r["baselineState"] for r in results}
    assert states == {"call.wrong_total": "unchanged", "dice.stick_not_used": "unchanged",
                      "settle.wrong_outcome": "new"}


def test_baseline_of_another_ruleset_exits_2(tmp_path):
    log = broken_log(tmp_path)
    baseline = make_baseline(tmp_path, log)
    res = run("check", log, "-r", "nz-1996", "--out", tmp_path / "o", "--baseline", baseline)
    assert res.exit_code == 2
    assert f"{baseline}: baseline of ruleset 'nz-table-games', but this audit uses " \
        "'nz-1996'" in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize("content,message", [
    ("{not json", "not valid JSON"),
    ('{"schema_version": "9", "ruleset": {"id": "x", "content_hash": "y"}, "findings": []}',
     "key 'schema_version': expected '1'"),
    ('{"schema_version": "1", "findings": []}', "key 'ruleset'"),
    (('{"schema_version": "1", "ruleset": {"id": "nz-table-games", "content_hash": "y"}, '
      '"findings": [{"code": "x"}]}'), "finding 1: key 'finding_id'"),
    (None, "no such file"),
])
def test_bad_baseline_file_exits_2_before_reading_logs(tmp_path, content, message):
    path = tmp_path / "baseline.json"
    if content is not None:
        path.write_text(content)
    res = run("check", tmp_path / "no-such-log.csv", "-r", RULESET, "--out", tmp_path / "o",
              "--baseline", path)
    assert res.exit_code == 2
    assert f"error: {path}: " in res.output and message in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize("make", ["not-parquet", "missing", "no-provenance"])
def test_baseline_create_from_a_bad_file_exits_2(tmp_path, make):
    source = tmp_path / "findings.parquet"
    if make == "not-parquet":
        source.write_text("hello")
    elif make == "no-provenance":
        pd.DataFrame({"finding_id": ["a"]}).to_parquet(source)
    res = run("baseline", "create", "--from", source, "--out", tmp_path / "b.json")
    assert res.exit_code == 2 and f"error: {source}: " in res.output
    assert not (tmp_path / "b.json").exists()


def test_baseline_help_has_an_example():
    for args in (("baseline", "--help"), ("baseline", "create", "--help")):
        assert "Example:" in run(*args).output


# --- waivers ----------------------------------------------------------------------------


def test_waived_findings_do_not_fail_the_run(tmp_path):
    log = broken_log(tmp_path)
    waivers = write_waivers(tmp_path, """
[[waiver]]
rule = "R5.7-settled-as-decided"
table = "T1"
reason = "settlement corrected by the pit, see incident 42 <b>"
""")
    res = check(tmp_path, log, "out", "--waivers", waivers, "--fail-on", "critical",
                "--format", "parquet", "--format", "json", "--format", "sarif")
    assert res.exit_code == 0, res.output
    assert "Known (in baseline): 0, waived: 1" in res.output
    f = findings(tmp_path)
    wid = f.loc[f["code"] == "settle.wrong_outcome", "finding_id"].item()
    st = meta(tmp_path)["statuses"]
    assert st["waived"] == [wid] and st["waived_by"] == {wid: 1}
    assert st["waivers"]["entries"][0]["matched"] == 1 and st["unused_waivers"] == []
    out = tmp_path / "out"
    recs = {json.loads(line)["finding_id"]: json.loads(line) for line in
            (out / "findings.jsonl").read_text().splitlines()}
    assert recs[wid]["status"] == "waived"
    assert recs[wid]["waiver"] == {"number": 1, "reason": "settlement corrected by the pit, "
                                   "see incident 42 <b>"}
    results = json.loads((out / "findings.sarif").read_text())["runs"][0]["results"]
    [waived] = [r for r in results if r["partialFingerprints"]["auditorFindingId/v1"] == wid]
    assert waived["suppressions"][0]["kind"] == "external"
    assert waived["suppressions"][0]["justification"].startswith("settlement corrected")
    assert "baselineState" not in waived  # no baseline was given
    # still failing at major: the major finding is new
    assert check(tmp_path, log, "o2", "--waivers", waivers).exit_code == 1


def test_a_waiver_matching_nothing_is_reported(tmp_path):
    log = broken_log(tmp_path)
    waivers = write_waivers(tmp_path, """
[[waiver]]
rule = "R5.6-6.2-correct-total"
reason = "caller retrained"

[[waiver]]
rule = "R5.7-stick"
table = "T9"
reason = "another table"

[[waiver]]
rule = "R5.7-stick"
seq_from = 1
seq_to = 5
reason = "another stretch of the night"

[[waiver]]
rule = "R9.9-no-such-rule"
reason = "typo"
""")
    res = check(tmp_path, log, "out", "--waivers", waivers, "--format", "json")
    assert res.exit_code == 1  # the critical finding is new
    assert "waived: 1" in res.output
    assert "waiver 2 (rule R5.7-stick): matched no finding" in res.output
    assert "waiver 3 (rule R5.7-stick): matched no finding" in res.output
    assert "waiver 4 (rule R9.9-no-such-rule): the ruleset has no rule with this id" \
        in res.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [(u["number"], u["why"]) for u in summary["unused_waivers"]] == [
        (2, "matched no finding"), (3, "matched no finding"),
        (4, "the ruleset has no rule with this id")]
    # each line as json.dumps writes the finding's object, its waiver included
    lines = (tmp_path / "out" / "findings.jsonl").read_text().splitlines()
    assert [inert_json(json.loads(line)) for line in lines] == lines
    waived = [json.loads(line) for line in lines if '"status":"waived"' in line]
    assert [w["waiver"]["number"] for w in waived] == [1]


def test_an_expired_waiver_does_not_apply(tmp_path):
    log = broken_log(tmp_path)
    text = """
[[waiver]]
rule = "R5.7-settled-as-decided"
reason = "temporary"
expires = {when}
"""
    expired = write_waivers(tmp_path, text.format(when="2000-01-01"), "old.toml")
    res = check(tmp_path, log, "a", "--waivers", expired, "--fail-on", "critical")
    assert res.exit_code == 1
    assert "waiver 1 (rule R5.7-settled-as-decided): expired on 2000-01-01" in res.output
    assert meta(tmp_path, "a")["statuses"]["counts"]["waived"] == 0
    current = write_waivers(tmp_path, text.format(when='"2999-12-31"'), "new.toml")
    assert check(tmp_path, log, "b", "--waivers", current, "--fail-on", "critical"
                 ).exit_code == 0


def test_baseline_and_waivers_together(tmp_path):
    log = broken_log(tmp_path)
    baseline = make_baseline(tmp_path, log)
    waivers = write_waivers(tmp_path, '[[waiver]]\nrule = "R5.7-stick"\nreason = "ok"\n')
    res = check(tmp_path, log, "out", "--baseline", baseline, "--waivers", waivers,
                "--format", "sarif")
    assert res.exit_code == 0
    assert "Known (in baseline): 2, waived: 1" in res.output
    results = json.loads((tmp_path / "out" / "findings.sarif").read_text())["runs"][0][
        "results"]
    by_code = {r["properties"]["code"]: r for r in results}
    stick = by_code["dice.stick_not_used"]
    assert stick["properties"]["status"] == "waived"
    assert stick["baselineState"] == "unchanged" and stick["suppressions"]


@pytest.mark.parametrize("text,message", [
    ('[[waiver]]\nrule = "R5.7-stick"\n', "waiver 1: key 'reason': required"),
    ('[[waiver]]\nrule = "R5.7-stick"\nreason = "a"\n[[waiver]]\nreason = "b"\n',
     "waiver 2: key 'rule': required"),
    ('[[waiver]]\nrule = "R5.7-stick"\nreason = "  "\n',
     "waiver 1: key 'reason': should be a non-empty string"),
    ('[[waiver]]\nrule = "R5.7-stick"\nreason = "a"\ntabel = "T1"\n',
     "waiver 1: key 'tabel': unknown key"),
    ('[[waiver]]\nrule = "R5.7-stick"\nreason = "a"\nseq_from = 9\nseq_to = 3\n',
     "waiver 1: key 'seq_to': 3 is below seq_from 9"),
    ('[[waiver]]\nrule = "R5.7-stick"\nreason = "a"\nseq_from = "9"\n',
     "waiver 1: key 'seq_from': should be a whole number"),
    ('[[waiver]]\nrule = "R5.7-stick"\nreason = "a"\nexpires = "soon"\n',
     "waiver 1: key 'expires': should be a date"),
    ('[[waiver]]\nrule = "R5.7-stick"\nreason = "a"\nexpires = 2026-01-01T10:00:00Z\n',
     "waiver 1: key 'expires': should be a date (YYYY-MM-DD), not a date and time"),
    ('[[waiver]]\nrule = 5\nreason = "a"\n', "waiver 1: key 'rule': should be a non-empty"),
    ('waiver = "x"\n', "key 'waiver': should be an array of tables"),
    ('[[waivers]]\nrule = "x"\n', "key 'waivers': unknown key"),
    ('[[waiver]\n', "not valid TOML"),
])
def test_invalid_waiver_file_exits_2_with_a_located_message(tmp_path, text, message):
    path = write_waivers(tmp_path, text)
    res = run("check", tmp_path / "no-such-log.csv", "-r", RULESET, "--out", tmp_path / "o",
              "--waivers", path)
    assert res.exit_code == 2, res.output
    assert f"error: {path}: {message}" in res.output
    assert "Traceback" not in res.output


def test_missing_waiver_file_exits_2(tmp_path):
    res = check(tmp_path, broken_log(tmp_path), "o", "--waivers", tmp_path / "nope.toml")
    assert res.exit_code == 2 and "nope.toml: no such file" in res.output


# --- the statuses, as a library ---------------------------------------------------------


def _frame(rows):
    return pd.DataFrame(rows, columns=["finding_id", "rule_id", "table_id", "seq",
                                       "severity"]).astype({"seq": "Int64"})


FRAME = _frame([("a", "R1", "T1", 5, "major"), ("b", "R1", "T1", 10, "major"),
                ("c", "R1", "T2", 7, "minor"), ("d", "R2", "T1", None, "critical")])


def _waivers(*items):
    return Waivers("w.toml", "0" * 64, tuple(items))


def test_waiver_scope_table_and_inclusive_seq_range():
    w = _waivers(Waiver(1, "R1", "why", table="T1", seq_from=5, seq_to=9))
    t = triage(FRAME, waivers=w)
    assert list(t.status) == ["waived", "new", "new", "new"]
    t = triage(FRAME, waivers=_waivers(Waiver(1, "R1", "why", seq_to=7)))
    assert list(t.status) == ["waived", "new", "waived", "new"]
    t = triage(FRAME, waivers=_waivers(Waiver(1, "R2", "why", seq_from=0)))
    assert list(t.status) == ["new"] * 4  # a finding without seq is outside any range
    t = triage(FRAME, waivers=_waivers(Waiver(1, "R2", "why")))
    assert list(t.status) == ["new", "new", "new", "waived"]


def test_waiver_beats_baseline_and_first_waiver_is_recorded():
    baseline = Baseline("b.json", "0" * 64, "rs", "h", ({"finding_id": "a"},
                                                         {"finding_id": "b"}))
    w = _waivers(Waiver(1, "R1", "first", table="T1"), Waiver(2, "R1", "second"))
    t = triage(FRAME, baseline=baseline, waivers=w)
    assert list(t.status) == ["waived", "waived", "waived", "new"]
    assert t.known == ["a", "b"]
    assert t.waived_by == {"a": 1, "b": 1, "c": 2}
    assert t.unused_waivers == []
    assert t.counts() == {"new": 1, "known": 0, "waived": 3}


def test_annotate_puts_each_status_and_its_waiver_beside_the_findings():
    baseline = Baseline("b.json", "0" * 64, "rs", "h", ({"finding_id": "a"},
                                                         {"finding_id": "c"}))
    w = _waivers(Waiver(1, "R1", "why", table="T1", expires=date(2099, 1, 2)))
    t = triage(FRAME, baseline=baseline, waivers=w, today=date(2026, 1, 1))
    got = t.annotate(FRAME)
    assert list(got.columns) == list(FRAME.columns) + list(STATUS_COLUMNS)
    assert got[list(STATUS_COLUMNS)].values.tolist() == [
        ["waived", True, 1, "why", "2099-01-02"], ["waived", False, 1, "why", "2099-01-02"],
        ["known", True, None, None, None], ["new", False, None, None, None]]
    plain = triage(FRAME).annotate(FRAME)
    assert plain["in_baseline"].tolist() == [None] * 4  # no baseline given
    assert list(FRAME.columns) == ["finding_id", "rule_id", "table_id", "seq", "severity"]


def test_expiry_is_inclusive_of_the_day():
    w = _waivers(Waiver(1, "R2", "why", expires=date(2026, 5, 1)))
    assert list(triage(FRAME, waivers=w, today=date(2026, 5, 1)).status)[-1] == "waived"
    later = triage(FRAME, waivers=w, today=date(2026, 5, 2))
    assert list(later.status)[-1] == "new"
    assert later.unused_waivers[0]["why"] == "expired on 2026-05-01"


def test_load_waivers_reads_dates_and_defaults(tmp_path):
    path = write_waivers(tmp_path, '[[waiver]]\nrule = "R1"\nreason = " r "\n'
                         'expires = 2026-02-03\n')
    [w] = load_waivers(path).items
    assert (w.number, w.rule, w.reason, w.table, w.seq_from, w.seq_to, w.expires) == (
        1, "R1", "r", None, None, None, date(2026, 2, 3))
    with pytest.raises(BaselineError, match="no such file"):
        load_waivers(tmp_path / "missing.toml")


def test_waiver_text_reaches_the_terminal_inert(tmp_path):
    waivers = write_waivers(tmp_path, '[[waiver]]\nrule = "R1\\u001b]0;pwned\\u0007"\n'
                            'reason = "x"\n')
    res = check(tmp_path, broken_log(tmp_path), "o", "--waivers", waivers)
    assert "\x1b" not in res.output and "\x07" not in res.output
    assert "waiver 1 (rule R1\\u001b]0;pwned\\u0007): the ruleset has no rule" in res.output
