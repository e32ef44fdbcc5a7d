"""The regulator's view (issue 29): exposure, who answers for each finding,
and rollups.parquet, on real generated logs of three sites over several days."""

from __future__ import annotations

import collections
import csv
import json
import shutil
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
from builder import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.errors import RulesetError
from auditor.generate import generate, write_log
from auditor.report.rollups import NO_STAFF
from auditor.rules.ruleset import load_ruleset

RULESET = "nz-table-games"
SITES = {"alpha": {"tables": 2, "rolls": 60, "days": 3, "seed": 1,
                   "inject": ["shooter.ineligible", "dice.stick_not_used"]},
         "beta": {"tables": 3, "rolls": 40, "days": 2, "seed": 2,
                  "inject": ["shooter.ineligible"]},
         "gamma": {"tables": 1, "rolls": 80, "days": 2, "seed": 3, "inject": []}}


def _audit(logs: Path, out: Path, *extra: str):
    res = run_cli("check", str(logs), "--ruleset", RULESET, "--out", str(out),
                  "--format", "parquet", "--format", "json", *extra)
    assert res.exit_code in (0, 1), res.output
    return (pd.read_parquet(out / "rollups.parquet"), pd.read_parquet(out / "findings.parquet"),
            json.loads((out / "summary.json").read_text()), res)


@pytest.fixture(scope="module")
def three_sites(tmp_path_factory):
    root = tmp_path_factory.mktemp("regulator")
    valid, days = {}, Counter()
    for site, kw in SITES.items():
        log = generate(**kw)
        write_log(log.table, root / "logs" / site / "night.csv")
        for table, rolls in log.valid_rolls.items():
            valid[f"{site}/{table}"] = rolls
        # each session (one a day) deals `rolls` valid rolls
        for table in log.valid_rolls:
            for d in range(kw["days"]):
                days[f"2026-03-0{d + 1}"] += kw["rolls"]
    rollups, findings, summary, _ = _audit(root / "logs", root / "out", "--site-from-path",
                                           "--format", "html")
    return {"root": root, "rollups": rollups, "findings": findings, "summary": summary,
            "valid": valid, "days": days}


def _all_codes(rollups, level):
    rows = rollups[(rollups["level"] == level) & rollups["code"].isna()]
    return rows.set_index("key")


def test_rolls_are_the_valid_rolls_of_the_log(three_sites):
    r = three_sites["rollups"]
    assert _all_codes(r, "table")["rolls"].to_dict() == three_sites["valid"]
    by_site = Counter()
    for key, rolls in three_sites["valid"].items():
        by_site[key.split("/")[0]] += rolls
    assert _all_codes(r, "site")["rolls"].to_dict() == dict(by_site)
    assert _all_codes(r, "day")["rolls"].to_dict() == dict(three_sites["days"])


def test_counts_equal_the_findings_counted_directly(three_sites):
    r, f = three_sites["rollups"], three_sites["findings"]
    assert len(f) > 0
    keys = {"site": f["site"], "table": f["site"] + "/" + f["table_id"],
            "staff": f["site"] + "/" + f["responsible_id"]}
    for level, key in keys.items():
        direct = Counter(zip(key.dropna(), f.loc[key.dropna().index, "code"]))
        rows = r[(r["level"] == level) & r["code"].notna()]
        assert {(k, c): n for k, c, n in zip(rows["key"], rows["code"], rows["findings"])} \
            == dict(direct), level
        totals = _all_codes(r, level)
        assert totals["findings"].sum() == len(key.dropna())
        for sev in ("critical", "major", "minor", "info"):
            assert totals[sev].sum() == int((f.loc[key.dropna().index, "severity"] == sev).sum())
    # the day of a finding is its session's: the generator opens session d on day d
    day = _all_codes(r, "day")
    assert day["findings"].sum() == len(f)


def test_a_site_without_findings_reads_zero_not_missing(three_sites):
    site = _all_codes(three_sites["rollups"], "site").loc["gamma"]
    assert (site["findings"], site["rolls"], site["per_1000_rolls"]) == (0, 160, 0.0)
    assert _all_codes(three_sites["rollups"], "table").loc["gamma/T01", "per_1000_rolls"] == 0.0


def test_the_rate_is_per_1000_valid_rolls(three_sites):
    rows = three_sites["rollups"]
    dealt = rows[rows["rolls"] > 0]
    assert (dealt["per_1000_rolls"].round(6)
            == (dealt["findings"] * 1000 / dealt["rolls"]).round(6)).all()


def test_responsible_is_the_stickperson_on_duty_or_the_actor(three_sites):
    f = three_sites["findings"]
    ineligible = f[f["code"] == "shooter.ineligible"]
    assert len(ineligible) and (ineligible["actor_role"] == "player").all()
    # generated tables put stickperson K0n on table T0n
    assert (ineligible["responsible_id"] == "K" + ineligible["table_id"].str[1:]).all()
    assert (ineligible["responsible_role"] == "stickperson").all()
    stick = f[f["code"] == "dice.stick_not_used"]
    assert len(stick) and (stick["responsible_id"] == stick["actor_id"]).all()
    assert (stick["responsible_role"] == stick["actor_role"]).all()


def test_summary_has_the_site_and_staff_rows(three_sites):
    s, r = three_sites["summary"], three_sites["rollups"]
    assert {row["level"] for row in s["rollups"]} == {"site", "staff"}
    assert len(s["rollups"]) == int(r["level"].isin(["site", "staff"]).sum())
    assert s["rollups_notes"] == []


def test_the_lawful_night_reads_zero_rates(tmp_path):
    write_log(generate(tables=2, rolls=30, seed=5).table, tmp_path / "n.csv")
    rollups, findings, _, _ = _audit(tmp_path / "n.csv", tmp_path / "o")
    assert len(findings) == 0
    tables = _all_codes(rollups, "table")
    assert tables["rolls"].to_dict() == {"T01": 30, "T02": 30}
    assert (tables["per_1000_rolls"] == 0.0).all() and (tables["findings"] == 0).all()
    assert set(rollups["level"]) == {"table", "day", "staff"}  # no sites: no site level


def test_a_log_without_staff_events_lays_nothing_at_anyone(tmp_path):
    log = generate(tables=1, rolls=40, seed=4, inject=["shooter.ineligible"]).table
    frame = log.to_pandas()
    frame = frame[~frame["event"].isin(["staff_on", "staff_off"])]
    for site in ("alpha", "beta"):
        (tmp_path / "logs" / site).mkdir(parents=True)
        frame.to_csv(tmp_path / "logs" / site / "n.csv", index=False)
    rollups, findings, summary, res = _audit(tmp_path / "logs", tmp_path / "o",
                                             "--site-from-path", "--format", "text",
                                             "--format", "html")
    by_player = findings[findings["actor_role"] == "player"]
    assert len(by_player) and findings["responsible_id"].isna().sum() == len(by_player)
    # only a finding whose own event names a staff actor is laid at anyone:
    # no duty known, no rolls
    staff = rollups[rollups["level"] == "staff"]
    assert (staff["rolls"] == 0).all() and staff["per_1000_rolls"].isna().all()
    named = findings["responsible_id"].dropna()
    assert (named == findings.loc[named.index, "actor_id"]).all()
    assert summary["rollups_notes"] == [NO_STAFF]
    assert "staff level is empty" in res.output
    page = (tmp_path / "o" / "report.html").read_text()
    assert "The logs record no <code>staff_on</code>" in page


def test_two_on_duty_in_the_role_is_not_guessed(tmp_path):
    """A ruleset laying settlement at the dealer: two dealers on duty and the
    event names none, so nobody; with one dealer, that dealer."""
    log = generate(tables=1, rolls=40, seed=4, inject=["shooter.ineligible"]).table
    rules = tmp_path / "r.toml"
    rules.write_text(f'[ruleset]\nextends = "{RULESET}"\nid = "dealers"\ntitle = "t"\n'
                     f'status = "verified"\n\n[[rule]]\nid = "R5.3-eligible-shooter"\n'
                     f'check = "line_bet_at_roll"\ncode = "shooter.ineligible"\n'
                     f'clause = "x"\nseverity = "major"\nresponsible_role = "dealer"\n')
    write_log(log, tmp_path / "two.csv")
    res = run_cli("check", str(tmp_path / "two.csv"), "--ruleset", str(rules), "--out",
                  str(tmp_path / "a"))
    assert res.exit_code in (0, 1), res.output
    f = pd.read_parquet(tmp_path / "a" / "findings.parquet")
    f = f[f["actor_role"] == "player"]
    assert len(f) and f[f["code"] == "shooter.ineligible"]["responsible_id"].isna().all()
    frame = log.to_pandas()
    frame = frame[~((frame["event"] == "staff_on") & (frame["actor_id"] == "D01b"))]
    frame.to_csv(tmp_path / "one.csv", index=False)
    res = run_cli("check", str(tmp_path / "one.csv"), "--ruleset", str(rules), "--out",
                  str(tmp_path / "b"))
    f = pd.read_parquet(tmp_path / "b" / "findings.parquet")
    got = f[(f["code"] == "shooter.ineligible") & (f["actor_role"] == "player")]
    assert len(got) and (got["responsible_id"] == "D01a").all()
    assert (got["responsible_role"] == "dealer").all()


def test_a_responsible_role_not_of_staff_is_refused(tmp_path):
    rules = tmp_path / "r.toml"
    rules.write_text(f'[ruleset]\nextends = "{RULESET}"\nid = "bad"\ntitle = "t"\n'
                     f'status = "verified"\n\n[[rule]]\nid = "R5.3-eligible-shooter"\n'
                     f'check = "line_bet_at_roll"\ncode = "shooter.ineligible"\n'
                     f'clause = "x"\nseverity = "major"\nresponsible_role = "player"\n')
    with pytest.raises(RulesetError, match="responsible_role"):
        load_ruleset(str(rules))


def test_a_shipped_ruleset_hashes_as_before():
    """The default roles live in the check registry: no shipped ruleset's
    content hash moved."""
    assert load_ruleset("nz-1996").content_hash == \
        "sha256:0a2b7ded892fa6958273dee1e45b3c38075fbc893bfbbb3f2d6dd2b54d088c30"


def _shifted(src: Path, dst: Path, hours: int) -> None:
    """The log with its times written in UTC+`hours` (the same instants)."""
    tz = timedelta(hours=hours)
    with open(src, newline="") as f, open(dst, "w", newline="") as g:
        rows = csv.DictReader(f)
        out = csv.DictWriter(g, rows.fieldnames)
        out.writeheader()
        for row in rows:
            at = datetime.fromisoformat(row["ts"]).astimezone(UTC)
            row["ts"] = at.astimezone(timezone(tz)).isoformat()
            out.writerow(row)


def test_the_gaming_day_is_the_open_date_in_the_recorded_offset(tmp_path):
    """Opened 20:00 UTC on 1 March: the 2nd in Auckland (+13:00), the 1st in
    UTC; the session runs past local midnight in neither way split."""
    write_log(generate(tables=1, rolls=30, seed=5).table, tmp_path / "utc.csv")
    _shifted(tmp_path / "utc.csv", tmp_path / "nz.csv", 13)
    utc, *_ = _audit(tmp_path / "utc.csv", tmp_path / "o1")
    nz, *_ = _audit(tmp_path / "nz.csv", tmp_path / "o2")
    assert _all_codes(utc, "day")["rolls"].to_dict() == {"2026-03-01": 30}
    assert _all_codes(nz, "day")["rolls"].to_dict() == {"2026-03-02": 30}
    _shifted(tmp_path / "utc.csv", tmp_path / "late.csv", 3)  # opens 23:00, ends past midnight
    late, *_ = _audit(tmp_path / "late.csv", tmp_path / "o3")
    assert _all_codes(late, "day")["rolls"].to_dict() == {"2026-03-01": 30}


def test_verify_reproves_the_rollups_and_refuses_an_edit(three_sites, tmp_path):
    out = three_sites["root"] / "out"
    res = run_cli("verify", str(out))
    assert res.exit_code == 0, res.output
    assert 'id="overview"' in (out / "report.html").read_text()  # re-rendered the same
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    frame = pd.read_parquet(copy / "rollups.parquet")
    frame.loc[0, "findings"] += 1
    frame.to_parquet(copy / "rollups.parquet")
    res = run_cli("verify", str(copy))
    assert res.exit_code != 0 and "rollups.parquet" in res.output


def test_each_finding_is_dated_by_its_tables_session_at_or_before_its_seq():
    """The day of the last session of the finding's table (sites kept apart)
    that starts at or before its seq; none before a table's first session,
    without a seq, or for a table no session names."""
    from auditor.findings import SITE_SEPARATOR
    from auditor.report.rollups import finding_days

    sep = SITE_SEPARATOR
    sessions = pd.DataFrame({
        "table": [f"a{sep}T1", f"b{sep}T1", f"a{sep}T1", f"a{sep}T2", f"a{sep}T1"],
        "first_seq": [1, 1, 50, 10, 90],
        "day": ["2026-03-01", "2026-03-05", "2026-03-02", "2026-03-01", "2026-03-03"]})
    findings = pd.DataFrame({
        "table_id": ["T1", "T1", "T1", "T1", "T1", "T2", "T2", "T9", None],
        "seq": pd.array([49, 50, 200, 7, None, 9, 10, 5, 3], dtype="Int64")},
        index=range(10, 19))
    sites = pd.Series(["a", "a", "a", "b", "a", "a", "a", "a", "a"], index=findings.index,
                      dtype=object)
    days = finding_days(findings, sessions, sites, True)
    assert list(days.index) == list(findings.index)
    assert days.tolist() == ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-05", None,
                             None, "2026-03-01", None, None]
    unsited = finding_days(findings, sessions.assign(table=["T1", "T3", "T1", "T2", "T1"]),
                           pd.Series([None] * 9, index=findings.index, dtype=object), False)
    assert unsited.tolist() == ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-01", None,
                                None, "2026-03-01", None, None]
    assert finding_days(findings, sessions.iloc[:0], sites, True).tolist() == [None] * 9


# --- the counts, against a count made finding by finding ------------------

_SEP = "\x1f"  # auditor.findings.SITE_SEPARATOR
_SEVERITIES = ("critical", "major", "minor", "info")


@st.composite
def _findings_and_exposure(draw):
    """Findings and the sessions and staff they were dealt in: sites or
    none, findings without a seq, at tables no session names, laid at
    nobody, codes and severities in any mix."""
    sited = draw(st.booleans())
    sites = ["alpha", "beta"] if sited else [None]
    tables = ["T1", "T2", "T3"]
    sessions = []
    for site in sites:
        for table in tables[:draw(st.integers(0, 3))]:
            key = table if site is None else f"{site}{_SEP}{table}"
            for first in sorted(draw(st.sets(st.integers(1, 60), max_size=3))):
                sessions.append({"table": key, "first_seq": first, "rolls": draw(
                    st.integers(0, 50)), "day": draw(st.sampled_from(["2026-03-01",
                                                                       "2026-03-02"]))})
    staff = [{"table": s["table"], "first_seq": s["first_seq"],
              "staff_id": draw(st.sampled_from(["S1", "S2"])), "rolls": s["rolls"]}
             for s in sessions if draw(st.booleans())]
    rows = draw(st.lists(st.fixed_dictionaries({
        "site": st.sampled_from(sites), "table_id": st.sampled_from([*tables, "T9"]),
        "seq": st.one_of(st.none(), st.integers(0, 70)),
        "code": st.sampled_from(["SHOOTER_INELIGIBLE", "DICE_STICK", "LOG_GAP"]),
        "severity": st.sampled_from(_SEVERITIES),
        "responsible_id": st.sampled_from([None, "S1", "S2"])}), max_size=40))
    findings = pd.DataFrame(rows, columns=["site", "table_id", "seq", "code", "severity",
                                           "responsible_id"])
    findings["seq"] = findings["seq"].astype("Int64")
    if not sited:
        findings = findings.drop(columns="site")
    return findings, sessions, staff


def _counted_one_by_one(findings, sessions, staff):
    """{(level, key, code or None): [findings, *severities]} and
    {(level, key): rolls}, a finding and a session at a time."""
    sited = "site" in findings
    shown = (lambda site, x: x if site is None else f"{site}/{x}") if sited else \
        (lambda site, x: x)
    counts = collections.defaultdict(lambda: [0] * (1 + len(_SEVERITIES)))
    rolls = collections.Counter()
    for s in sessions:
        site, _, table = s["table"].rpartition(_SEP)
        site = site or None
        if sited and site is not None:
            rolls[("site", site)] += s["rolls"]
        rolls[("table", shown(site, table))] += s["rolls"]
        rolls[("day", s["day"])] += s["rolls"]
    for s in staff:
        site = s["table"].rpartition(_SEP)[0] or None
        rolls[("staff", shown(site, s["staff_id"]))] += s["rolls"]
    for f in findings.to_dict("records"):
        f = {k: None if pd.isna(v) else v for k, v in f.items()}
        site = f.get("site")
        key_of_table = f["table_id"] if site is None else f"{site}{_SEP}{f['table_id']}"
        day = None
        if f["seq"] is not None:
            earlier = [s for s in sessions
                       if s["table"] == key_of_table and s["first_seq"] <= f["seq"]]
            day = max(earlier, key=lambda s: s["first_seq"])["day"] if earlier else None
        keys = {"table": shown(site, f["table_id"]), "day": day,
                "staff": None if f["responsible_id"] is None
                else shown(site, f["responsible_id"])}
        if sited:
            keys["site"] = site
        for level, key in keys.items():
            if key is None:
                continue
            for code in (None, f["code"]):
                tally = counts[(level, key, code)]
                tally[0] += 1
                tally[1 + _SEVERITIES.index(f["severity"])] += 1
    for level, key in rolls:
        counts.setdefault((level, key, None), [0] * (1 + len(_SEVERITIES)))
    return dict(counts), rolls


@settings(max_examples=150, deadline=None)
@given(_findings_and_exposure())
def test_the_counts_are_those_of_each_finding_counted_alone(case):
    from auditor.audit.exposure import Exposure
    from auditor.report.rollups import rollups

    findings, sessions, staff = case
    exposure = Exposure()
    if sessions:
        exposure.sessions = pd.DataFrame(sessions)
    if staff:
        exposure.staff = pd.DataFrame(staff)
    got = rollups(findings, exposure)
    want, rolls = _counted_one_by_one(findings, sessions, staff)
    assert {(r["level"], r["key"], r["code"]): [r["findings"], *(r[s] for s in _SEVERITIES)]
            for r in got.to_dict("records")} == want
    assert {(r["level"], r["key"]): r["rolls"] for r in got.to_dict("records")
            if r["code"] is None and (r["level"], r["key"]) in rolls} == dict(rolls)
    order = [(("site", "table", "day", "staff").index(r["level"]), r["key"],
              r["code"] is not None, r["code"] or "") for r in got.to_dict("records")]
    assert order == sorted(order)
