"""Versions in force (`auditor/rules/versions.py`): a family `nz` of files
`nz@<version>.toml`, each table session judged by the version in force on
its date, and the report saying which version judged which table."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from builder import (
    FAMILY_NEW,
    FAMILY_OLD,
    LogBuilder,
    nz_family,
    report_findings,
    report_provenance,
)
from builder import run_cli as run

from auditor.errors import RulesetError, VersionError
from auditor.logs.load import load_logs
from auditor.rules import versions
from auditor.rules.ruleset import load_ruleset
from auditor.run.family import audit_family
from auditor.run.local import audit_in_process

OLD, NEW = FAMILY_OLD, FAMILY_NEW


@pytest.fixture
def family(tmp_path) -> Path:
    return nz_family(tmp_path / "rules")


def session(b: LogBuilder, start: datetime) -> int:
    """A session opened at `start` whose first offer goes to seat 5 (out of
    turn under nz-table-games; NZ 1996 5.9 does not govern the start of
    play). Returns the offer's seq."""
    b.ts = start
    b.open()
    for s in (2, 5, 7):
        b.bet(s)
    seq = b.offer(5)
    b.accept(5)
    b.play(5, 4, 2)
    b.add("table_close", role="game_supervisor")
    return seq


def night(tmp_path) -> tuple[Path, dict]:
    """T1: a session late on 28 February running past midnight, then one on
    1 March. T2: one session on 1 March."""
    t1 = LogBuilder("T1")
    first = session(t1, datetime(2026, 2, 28, 23, 59, 0, tzinfo=UTC))
    second_open = t1.seq + 1
    second = session(t1, datetime(2026, 3, 1, 20, 0, 0, tzinfo=UTC))
    t2 = LogBuilder("T2")
    third = session(t2, datetime(2026, 3, 1, 21, 0, 0, tzinfo=UTC))
    folder = tmp_path / "logs"
    folder.mkdir()
    t1.write_csv(folder / "t1.csv")
    t2.write_csv(folder / "t2.csv")
    return folder, {"first": first, "second": second, "second_open": second_open,
                    "third": third}


def test_each_session_is_judged_by_the_version_in_force(tmp_path, family):
    logs, seqs = night(tmp_path)
    out = tmp_path / "out"
    result = run("check", logs, "--ruleset", family / "nz", "--out", out)
    assert result.exit_code == 1, result.output
    findings = report_findings(out)
    got = set(zip(findings["code"], findings["table_id"], findings["seq"], findings["ruleset"]))
    # The 28 February session (past midnight, dated by its first event) is
    # judged by nz@1996: its out-of-turn first offer is not a finding there.
    assert got == {("offer.order", "T1", seqs["second"], "nz@2026"),
                   ("offer.order", "T2", seqs["third"], "nz@2026")}
    md = report_provenance(out)
    old, new = load_ruleset(str(family / "nz@1996.toml")), load_ruleset(str(family / "nz@2026.toml"))
    assert md["versions"] == {
        "T1": [{"id": "nz@1996", "content_hash": old.content_hash, "first_seq": 1,
                "date": "2026-02-28"},
               {"id": "nz@2026", "content_hash": new.content_hash,
                "first_seq": seqs["second_open"], "date": "2026-03-01"}],
        "T2": [{"id": "nz@2026", "content_hash": new.content_hash, "first_seq": 1,
                "date": "2026-03-01"}],
    }
    assert md["ruleset"]["family"] == "nz" and md["ruleset"]["id"] == "nz@2026"
    assert [v["id"] for v in md["ruleset_versions"]] == ["nz@1996", "nz@2026"]
    assert md["ruleset_versions"][0]["effective_to"] == "2026-02-28"
    assert md["tables"] == ["T1", "T2"] and md["findings"]["total"] == 2
    summary = result.output
    assert "against family nz: nz@1996 (verified) for T1; nz@2026 (verified) for T1, T2" \
        in summary
    # the same logs under one version named explicitly: every table by it
    result = run("check", logs, "--ruleset", family / "nz@2026.toml", "--out", tmp_path / "o2")
    findings = report_findings(tmp_path / "o2")
    assert ("T1", seqs["first"]) in set(zip(findings["table_id"], findings["seq"]))
    assert "versions" not in report_provenance(tmp_path / "o2")


def test_the_same_inputs_give_the_same_bytes(tmp_path, family):
    logs, _ = night(tmp_path)
    for name in ("a", "b"):
        run("check", logs, "--ruleset", family / "nz", "--out", tmp_path / name)
    assert (tmp_path / "a" / "findings.parquet").read_bytes() == \
        (tmp_path / "b" / "findings.parquet").read_bytes()


def test_events_outside_every_version_stop_the_audit(tmp_path, family):
    logs, _ = night(tmp_path)
    early = LogBuilder("T9")
    session(early, datetime(1995, 6, 1, 20, 0, 0, tzinfo=UTC))
    early.write_csv(logs / "t9.csv")
    out = tmp_path / "out"
    result = run("check", logs, "--ruleset", family / "nz", "--out", out)
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert line.startswith("error: nz: no version in force for table T9 from seq 1 on "
                           "1995-06-01 (UTC)")
    assert "nz@1996: 1996-01-01 to 2026-02-28; nz@2026: from 2026-03-01" in line
    assert not (out / "findings.parquet").exists()


def test_a_gap_between_versions_is_outside_too(tmp_path, family):
    (family / "nz@2026.toml").write_text(NEW.replace("2026-03-01", "2026-03-02"),
                                         encoding="utf-8")
    logs, seqs = night(tmp_path)
    result = run("check", logs, "--ruleset", family / "nz", "--out", tmp_path / "o")
    assert result.exit_code == 2
    assert f"table T1 from seq {seqs['second_open']} on 2026-03-01 (UTC)" in result.output
    assert "table T2 from seq 1 on 2026-03-01 (UTC)" in result.output


def test_overlapping_versions_are_refused_before_any_log_is_read(tmp_path, family):
    (family / "nz@2026.toml").write_text(NEW.replace("2026-03-01", "2026-02-28"),
                                         encoding="utf-8")
    result = run("check", tmp_path / "no-such-logs", "--ruleset", family / "nz")
    assert result.exit_code == 2
    assert "nz@2026.toml: key 'effective_from': in force from 2026-02-28, which overlaps " \
        "nz@1996 (1996-01-01 to 2026-02-28)" in result.output


def test_a_version_must_declare_a_family_id(tmp_path, family):
    (family / "nz@2030.toml").write_text(
        NEW.replace('id = "nz@2026"', 'id = "other"').replace("2026-03-01", "2030-01-01"),
        encoding="utf-8")
    result = run("check", tmp_path, "--ruleset", family / "nz")
    assert result.exit_code == 2 and "must declare the id 'nz' or nz@<version>" in result.output


def test_a_plain_ruleset_is_not_a_family(tmp_path):
    assert versions.resolve_family("nz-1996") is None
    assert versions.resolve_family("nz@2026") is None
    assert versions.resolve_family(str(tmp_path / "x.toml")) is None
    assert versions.family_files(str(tmp_path / "nz")) is None


def test_shipped_family_lookup(tmp_path, monkeypatch, family):
    from auditor.rules import ruleset as ruleset_mod

    for name in ("nz@1996", "nz@2026"):  # extends by path: the shipped folder moves
        path = family / f"{name}.toml"
        parent = path.read_text().split('extends = "')[1].split('"')[0]
        real = (ruleset_mod.shipped_dir() / f"{parent}.toml").as_posix()
        path.write_text(path.read_text().replace(f'"{parent}"', f'"{real}"'))
    monkeypatch.setattr(ruleset_mod, "shipped_dir", lambda: family)
    (family / "nz.toml").write_text(
        '[ruleset]\nid = "nz"\ntitle = "t"\nstatus = "verified"\n'
        'effective_to = "1995-12-31"\n', encoding="utf-8")
    fam = versions.resolve_family("nz")
    assert [v.id for v in fam.versions] == ["nz", "nz@1996", "nz@2026"]
    assert versions.version_on(fam, date(1995, 12, 31)).id == "nz"
    assert versions.version_on(fam, date(1996, 1, 1)).id == "nz@1996"
    assert versions.version_on(fam, date(2026, 2, 28)).id == "nz@1996"
    assert versions.version_on(fam, date(2026, 3, 1)).id == "nz@2026"
    assert versions.version_on(fam, date(9999, 1, 1)).id == "nz@2026"


def test_sessions_and_split(tmp_path, family):
    logs_dir, seqs = night(tmp_path)
    bad = logs_dir / "t1.csv"
    lines = bad.read_text().splitlines()
    # a malformed row in T1's second session: a die face of 9
    i = next(n for n, x in enumerate(lines[1:], 1)
             if int(x.split(",")[1]) > seqs["second"] and ",roll," in x)
    lines[i] = lines[i].replace(",4,2,", ",9,2,")
    bad.write_text("\n".join(lines) + "\n")
    logs = load_logs([logs_dir])
    found = versions.sessions(logs.events)
    assert [(s.table, s.first_seq, s.day.isoformat()) for s in found] == [
        ("T1", 1, "2026-02-28"), ("T1", seqs["second_open"], "2026-03-01"),
        ("T2", 1, "2026-03-01")]
    fam = versions.resolve_family(str(family / "nz"))
    parts = versions.split_by_version(logs, versions.assign(fam, found))
    by_id = {p.ruleset.id: p for p in parts}
    assert set(by_id) == {"nz@1996", "nz@2026"}
    assert len(by_id["nz@1996"].logs.events) + len(by_id["nz@2026"].logs.events) == \
        len(logs.events)
    assert len(by_id["nz@2026"].logs.quarantine) == 1
    assert len(by_id["nz@1996"].logs.quarantine) == 0
    result = audit_family(logs, fam, audit_in_process)
    malformed = result.findings[result.findings["code"] == "log.malformed"]
    assert list(malformed["ruleset"]) == ["nz@2026"]


def test_a_table_returning_to_a_version_is_audited_apart(tmp_path):
    """v1, v2, v1 on one table (its clock went back): the two v1 stretches
    are not joined into one (that would be a false seq gap)."""
    a = tmp_path / "f@1.toml"
    b = tmp_path / "f@2.toml"
    a.write_text('[ruleset]\nid = "f@1"\ntitle = "1"\nstatus = "verified"\n'
                 'extends = "nz-1996"\neffective_to = "2026-02-28"\n', encoding="utf-8")
    b.write_text('[ruleset]\nid = "f@2"\ntitle = "2"\nstatus = "verified"\n'
                 'extends = "nz-1996"\neffective_from = "2026-03-01"\n', encoding="utf-8")
    t = LogBuilder("T1")
    session(t, datetime(2026, 2, 27, 20, tzinfo=UTC))
    session(t, datetime(2026, 3, 1, 20, tzinfo=UTC))
    session(t, datetime(2026, 2, 27, 22, tzinfo=UTC))
    t.write_csv(tmp_path / "t.csv")
    logs = load_logs([tmp_path / "t.csv"])
    fam = versions.resolve_family(str(tmp_path / "f"))
    parts = versions.split_by_version(logs, versions.assign(fam, versions.sessions(logs.events)))
    assert [p.ruleset.id for p in parts] == ["f@1", "f@2", "f@1"]
    result = audit_family(logs, fam, audit_in_process)
    assert "log.sequence_gap" not in set(result.findings["code"])


def test_version_error_is_a_ruleset_error():
    assert issubclass(VersionError, RulesetError)


def test_rulesets_show_says_when_a_version_is_in_force(family):
    lines = {name: [line for line in run("rulesets", "show", str(family / name)).output
                    .splitlines() if line.startswith("in force:")]
             for name in ("nz@1996.toml", "nz@2026.toml")}
    assert lines["nz@1996.toml"] == [("in force:        1996-01-01 to 2026-02-28 "
                                     "(both days included)")]
    assert lines["nz@2026.toml"] == [("in force:        from 2026-03-01 (included) "
                                     "until replaced")]
    shipped = run("rulesets", "show", "nz-table-games").output
    assert "in force:        always (no effective dates)" in shipped


def test_a_baseline_and_waivers_under_a_family_span_its_versions(tmp_path, family):
    """A baseline made under a family stays good when a newer version joins
    it (its findings keep their versions' ids), and a waiver may name a rule
    of any version, not only the latest's."""
    logs, _ = night(tmp_path)
    out = tmp_path / "out"
    assert run("check", logs, "--ruleset", family / "nz", "--out", out).exit_code == 1
    baseline = tmp_path / "baseline.json"
    assert run("baseline", "create", "--from", out / "findings.parquet",
               "--out", baseline).exit_code == 0
    (family / "nz@2026.toml").write_text(NEW + 'effective_to = "2029-12-31"\n', encoding="utf-8")
    (family / "nz@2030.toml").write_text(NEW.replace("nz@2026", "nz@2030").replace(
        '"2026-03-01"', '"2030-01-01"'), encoding="utf-8")
    waivers = tmp_path / "waivers.toml"
    waivers.write_text('[[waiver]]\nrule = "NZ5.4-one-hand"\nreason = "of nz@1996"\n',
                       encoding="utf-8")
    result = run("check", logs, "--ruleset", family / "nz", "--out", tmp_path / "again",
                 "--baseline", baseline, "--waivers", waivers, "--format", "json")
    assert result.exit_code == 0, result.output  # every finding known
    summary = json.loads((tmp_path / "again" / "summary.json").read_text(encoding="utf-8"))
    # (not "the ruleset has no rule with this id")
    assert [w["why"] for w in summary["unused_waivers"]] == ["matched no finding"]
    # a baseline of a ruleset outside the family is still refused
    other = run("check", logs, "--ruleset", "nz-table-games", "--out", tmp_path / "o3",
                "--baseline", baseline)
    assert other.exit_code == 2 and "baseline of ruleset 'nz@2026'" in other.output
