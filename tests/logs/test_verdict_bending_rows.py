"""Rows that would quietly change the verdict (issue 28): a JSON line that
names one key twice is quarantined with the reason (as CSV and Parquet
refuse a duplicate column); a column present but empty on every row of a
file that records the events it is filled on is judged as absent (its rules
not evaluated, `--require-complete` fails). Each beside its lawful twin."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from builder import LogBuilder, lawful_table, report_findings, report_provenance
from builder import run_cli as run

from auditor.logs.schema import COLUMN_NAMES


def write_jsonl(b: LogBuilder, path: Path, twice_at: int | None = None,
                first: str = "lose") -> Path:
    """The log as JSON Lines; the row of seq `twice_at` names `outcome`
    twice: `first`, then its own value."""
    lines = []
    for row in b.rows:
        text = json.dumps({k: str(v) for k, v in row.items()})
        if row["seq"] == twice_at:
            text = text[:-1] + f', "outcome": "{row["outcome"]}"}}'
            text = text.replace(f'"outcome": "{row["outcome"]}"', f'"outcome": "{first}"', 1)
        lines.append(text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def planted_wrong_outcome() -> tuple[LogBuilder, int]:
    """Point 6 made; the pass bets settled `win` (lawful): seat 2's settlement's seq."""
    b = lawful_table()
    b.play(2, 4, 2)
    seq = b.play(2, 3, 3, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)],
                 pass_back=False)
    return b, seq + 3  # roll, call, collect, then the settlement


def test_a_json_line_naming_a_key_twice_is_quarantined_with_the_reason(tmp_path):
    b, settled = planted_wrong_outcome()
    log = write_jsonl(b, tmp_path / "t.jsonl", twice_at=settled, first="lose")
    result = run("validate", log)
    assert result.exit_code == 1
    assert (f"t.jsonl:{settled}: [log.malformed] row quarantined: key 'outcome' appears "
            "twice in the line") in result.output
    check = run("check", log, "--ruleset", "nz-table-games", "--out", tmp_path / "out",
                "--format", "parquet")
    prov = report_provenance(tmp_path / "out")
    assert prov["rows"]["quarantined"] == 1
    found = report_findings(tmp_path / "out")
    # the line is a finding of its own; neither of its values is judged
    assert "log.malformed" in set(found["code"])
    assert "settle.wrong_outcome" not in set(found["code"])
    assert check.exit_code == 1


def test_the_same_line_with_the_key_once_is_read(tmp_path):
    b, _settled = planted_wrong_outcome()
    log = write_jsonl(b, tmp_path / "t.jsonl")
    assert run("validate", log).exit_code == 0
    result = run("check", log, "--ruleset", "nz-table-games", "--out", tmp_path / "out",
                 "--format", "parquet")
    assert result.exit_code == 0, result.output
    assert report_provenance(tmp_path / "out")["rows"]["quarantined"] == 0


def stick_log(tmp_path: Path, fill_flags: bool) -> Path:
    """A lawful table whose dice are once collected without the stick; with
    `fill_flags` false the `flags` column is there but empty on every row."""
    b, _ = planted_wrong_outcome()
    b.pass_back(2, flags="no_stick")
    path = tmp_path / "t.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMN_NAMES))
        writer.writeheader()
        for row in b.rows:
            cells = {k: row.get(k, "") for k in COLUMN_NAMES}
            if not fill_flags:
                cells["flags"] = ""
            writer.writerow(cells)
    return path


def test_a_column_never_filled_is_judged_as_absent(tmp_path):
    log = stick_log(tmp_path, fill_flags=False)
    result = run("check", log, "--ruleset", "nz-table-games", "--out", tmp_path / "out",
                 "--format", "parquet", "--require-complete")
    assert result.exit_code == 2, result.output
    assert "error: --require-complete:" in result.output
    prov = report_provenance(tmp_path / "out")
    unseen = {e["rule"]: e["reason"] for e in prov["not_evaluated"]}
    assert unseen["R5.7-stick"] == "column `flags` empty on every row"
    assert "NOT EVALUATED" in result.output and "column `flags` empty on every row" \
        in result.output
    # exactly as a file without the column at all
    absent = tmp_path / "absent.csv"
    with open(log, newline="", encoding="utf-8") as src, \
            open(absent, "w", newline="", encoding="utf-8") as dst:
        rows = list(csv.DictReader(src))
        names = [c for c in COLUMN_NAMES if c != "flags"]
        writer = csv.DictWriter(dst, fieldnames=names, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    run("check", absent, "--ruleset", "nz-table-games", "--out", tmp_path / "o2",
        "--format", "parquet")
    other = report_provenance(tmp_path / "o2")["not_evaluated"]
    assert {e["rule"] for e in other} == set(unseen)


def test_the_filled_column_is_judged(tmp_path):
    log = stick_log(tmp_path, fill_flags=True)
    result = run("check", log, "--ruleset", "nz-table-games", "--out", tmp_path / "out",
                 "--format", "parquet", "--require-complete")
    prov = report_provenance(tmp_path / "out")
    assert prov["not_evaluated"] == [], result.output
    found = report_findings(tmp_path / "out")
    assert "dice.stick_not_used" in set(found["code"])
