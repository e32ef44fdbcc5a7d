"""Waivers and sites (issue 28): a waiver matches only findings at its own
site, so a waiver for `T01` never waives another casino's `T01`; one that
names no site, in an audit whose tables have sites, matches nothing and is
listed as unused saying why. The text report names each finding's site
beside its table, as the other formats do."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from builder import LogBuilder, lawful_table
from builder import run_cli as run

from auditor.logs.schema import COLUMN_NAMES


def night() -> LogBuilder:
    """T01 with its first call of a total missing (call.missing, major)."""
    b = lawful_table()
    b.play(2, 4, 2)
    b.play(2, 3, 3, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    b.add("table_close", role="game_supervisor")
    call = next(r["seq"] for r in b.rows if r["event"] == "total_called")
    kept = [r for r in b.rows if r["seq"] != call]
    b.rows = [dict(r, table_id="T01", seq=n) for n, r in enumerate(kept, 1)]  # (no gap)
    return b


def write(path: Path, b: LogBuilder) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMN_NAMES))
        writer.writeheader()
        writer.writerows({k: r.get(k, "") for k in COLUMN_NAMES} for r in b.rows)


def audit(tmp_path: Path, waiver: str, sites: bool = True):
    exports = tmp_path / "exports"
    if sites:
        write(exports / "casino-a" / "night.csv", night())
        write(exports / "casino-b" / "night.csv", night())
    else:
        write(exports / "night.csv", night())
    waivers = tmp_path / "waivers.toml"
    waivers.write_text('[[waiver]]\nrule = "R5.6-call-total"\ntable = "T01"\n'
                       f'reason = "accepted"\n{waiver}', encoding="utf-8")
    args = ("--site-from-path",) if sites else ()
    res = run("check", exports, *args, "--ruleset", "nz-table-games", "--out", tmp_path / "o",
              "--waivers", waivers, "--format", "json", "--format", "text:-")
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    return res, summary


def test_a_waiver_without_a_site_matches_nothing_where_tables_have_sites(tmp_path):
    res, summary = audit(tmp_path, "")
    assert res.exit_code == 1, res.output
    statuses = summary["statuses"] if "statuses" in summary else summary["provenance"]["statuses"]
    assert statuses["counts"]["waived"] == 0 and statuses["counts"]["new"] == 2
    assert [u["why"] for u in statuses["unused_waivers"]] == [
        ("matched no finding: it names no site, and this audit's tables have sites "
         "(give the waiver's site = \"...\")")]
    assert "it names no site" in res.output


def test_a_waiver_with_a_site_waives_that_sites_table_only(tmp_path):
    res, summary = audit(tmp_path, 'site = "casino-a"\n')
    assert res.exit_code == 1, res.output  # casino-b's finding is new
    statuses = summary["statuses"] if "statuses" in summary else summary["provenance"]["statuses"]
    assert statuses["counts"]["waived"] == 1 and statuses["counts"]["new"] == 1
    assert statuses["unused_waivers"] == []
    lines = res.output.splitlines()
    assert any("T01 (site casino-b)" in x and "call.missing" in x for x in lines)
    assert any("T01 (site casino-a)" in x and "[waived]" in x for x in lines)


def test_without_sites_a_waiver_without_a_site_waives_as_before(tmp_path):
    res, summary = audit(tmp_path, "", sites=False)
    assert res.exit_code == 0, res.output
    statuses = summary["statuses"] if "statuses" in summary else summary["provenance"]["statuses"]
    assert statuses["counts"]["waived"] == 1 and statuses["unused_waivers"] == []
    assert "(site " not in res.output
