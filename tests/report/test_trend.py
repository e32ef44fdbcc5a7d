"""`auditor trend` (issue 29): three monthly audits charted; a tampered one
refused; one under another ruleset refused, then accepted with the flag."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
from builder import run_cli

from auditor.generate import generate, write_log

RULESET = "nz-table-games"


def _month(root: Path, month: int, inject: dict[str, list[str]], ruleset: str = RULESET) -> Path:
    logs = root / f"logs-{month}"
    for i, (site, codes) in enumerate(sorted(inject.items())):
        log = generate(tables=2, rolls=40, seed=month * 10 + i, inject=codes,
                       start=datetime(2026, month, 1, 20, tzinfo=UTC))
        write_log(log.table, logs / site / "night.csv")
    out = root / f"report-{month}"
    res = run_cli("check", str(logs), "--site-from-path", "--ruleset", ruleset, "--out",
                  str(out))
    assert res.exit_code in (0, 1), res.output
    return out


@pytest.fixture(scope="module")
def months(tmp_path_factory):
    root = tmp_path_factory.mktemp("trend")
    ineligible = ["shooter.ineligible"]
    return root, [
        _month(root, 1, {"alpha": ineligible, "beta": ineligible}),
        _month(root, 2, {"alpha": ineligible, "beta": ineligible}),
        _month(root, 3, {"alpha": ["dice.stick_not_used"], "beta": []}),
    ]


def test_three_months_are_charted_report_by_report(months, tmp_path):
    _, reports = months
    res = run_cli("trend", *map(str, reversed(reports)), "--out", str(tmp_path / "t"))
    assert res.exit_code == 0, res.output
    t = pd.read_parquet(tmp_path / "t" / "trend.parquet")
    # in time order, whatever order given
    assert t.groupby("report")["period_start"].first().str[:7].tolist() == \
        ["2026-01", "2026-02", "2026-03"]
    for i, folder in enumerate(reports, 1):
        rollups = pd.read_parquet(folder / "rollups.parquet")
        got = t[t["report"] == i][["level", "key", "code", "findings", "rolls"]]
        assert got.reset_index(drop=True).equals(
            rollups[["level", "key", "code", "findings", "rolls"]].reset_index(drop=True))
    beta = t[(t["level"] == "site") & (t["key"] == "beta") & t["code"].isna()]
    assert beta["per_1000_rolls"].tolist() == [25.0, 25.0, 0.0]
    page = (tmp_path / "t" / "trend.html").read_text()
    assert "<polyline" in page and "shooter.ineligible" in page
    new = page.split("New since the first report")[1].split("Stopped since")[0]
    stopped = page.split("Stopped since the first report")[1]
    assert "dice.stick_not_used" in new and "shooter.ineligible" not in new
    assert "shooter.ineligible" in stopped and "dice.stick_not_used" not in stopped


def test_the_same_reports_give_the_same_bytes(months, tmp_path):
    _, reports = months
    for out in ("a", "b"):
        assert run_cli("trend", *map(str, reports), "--out", str(tmp_path / out)).exit_code == 0
    for name in ("trend.parquet", "trend.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_tampered_report_is_refused_naming_it_and_the_file(months, tmp_path):
    _, reports = months
    forged = tmp_path / "forged"
    shutil.copytree(reports[1], forged)
    frame = pd.read_parquet(forged / "rollups.parquet")
    frame.loc[0, "findings"] = 0
    frame.to_parquet(forged / "rollups.parquet")
    res = run_cli("trend", str(reports[0]), str(forged), str(reports[2]), "--out",
                  str(tmp_path / "t"))
    assert res.exit_code == 2
    assert str(forged) in res.output and "rollups.parquet" in res.output
    assert not (tmp_path / "t" / "trend.parquet").exists()


def test_another_ruleset_is_refused_unless_allowed(months, tmp_path):
    root, reports = months
    other = _month(root, 4, {"alpha": ["shooter.ineligible"]}, ruleset="nz-1996")
    res = run_cli("trend", *map(str, reports), str(other), "--out", str(tmp_path / "t"))
    assert res.exit_code == 2 and "different rulesets" in res.output
    res = run_cli("trend", *map(str, reports), str(other), "--out", str(tmp_path / "t"),
                  "--allow-mixed-rulesets")
    assert res.exit_code == 0, res.output
    page = (tmp_path / "t" / "trend.html").read_text()
    assert "different rulesets" in page and "nz-1996" in page and RULESET in page


@pytest.mark.parametrize("where", ["a report charted", "inside one", "another report"])
def test_the_trend_is_never_written_among_a_report_s_files(months, tmp_path, where):
    _, reports = months
    out = {"a report charted": reports[1], "inside one": reports[1] / "trend",
           "another report": reports[2]}[where]
    charted = reports[:2] if where == "another report" else reports
    before = sorted(p.name for p in out.parent.rglob("*"))
    res = run_cli("trend", *map(str, charted), "--out", str(out))
    assert res.exit_code == 2, res.output
    if where == "another report":
        assert f"{out}: --out is a report folder (it holds manifest.json)" in res.output
    else:
        assert f"{out}: --out is inside the report folder {reports[1]}" in res.output
    assert sorted(p.name for p in out.parent.rglob("*")) == before
    res = run_cli("trend", *map(str, charted), "--out", str(tmp_path / "t"))
    assert res.exit_code == 0, res.output
