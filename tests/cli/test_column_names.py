"""Column names that look like typos of event-log-v1's (`flag`, `Flags`,
`die_1`, `actor role`): `check` and `validate` name them in a warning with
the likely column and how many rules need it; a project configuration's
`columns` mapping renames them on read, recorded in the provenance, and the
audit is then that of the night written right."""

from __future__ import annotations

from pathlib import Path

import pytest
from builder import report_findings, report_provenance
from builder import run_cli as run

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "nz-table-games"


def _night(tmp_path: Path, name: str, **renames: str) -> Path:
    lines = (SAMPLES / name).read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\r\n").split(",")
    header = [renames.get(h, h) for h in header]
    path = tmp_path / name
    path.write_text(",".join(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    return path


def _codes(out: Path) -> list[tuple[str, str, int]]:
    f = report_findings(out)
    return [(c, t, int(s)) for c, t, s in zip(f["code"], f["table_id"], f["seq"])]


@pytest.mark.parametrize(("written", "likely"), [("flag", "flags"), ("Flags", "flags"),
                                                 ("flag_s", "flags")])
def test_a_column_like_a_spec_column_is_named_in_check_and_validate(tmp_path, written,
                                                                    likely):
    log = _night(tmp_path, "night-clean.csv", **{likely: written})
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "r", "--no-config")
    warning = f"warning: {log}: column `{written}` is not in event-log-v1; did you mean " \
              f"`{likely}`?"
    assert warning in res.output
    meta = report_provenance(tmp_path / "r")
    [entry] = meta["suspect_columns"]
    assert entry["column"] == written and entry["likely"] == likely
    if likely == "flags":
        assert entry["rules"] == 7 and f"{warning} 7 rule(s) need it." in res.output
    checked = run("validate", log)
    assert warning in checked.output
    assert "1 column(s) that look like typos" in checked.output


def test_spec_columns_raise_no_warning(tmp_path):
    log = _night(tmp_path, "night-clean.csv")
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "r", "--no-config")
    assert res.exit_code == 0 and "warning" not in res.output
    assert "suspect_columns" not in report_provenance(tmp_path / "r")
    assert "warning" not in run("validate", log).output


def test_the_columns_mapping_renames_on_read(tmp_path, monkeypatch):
    """The planted night with `flags` written `flag` and `die1` written
    `die_1`: without the mapping fewer criticals (the no-roll rule cannot be
    evaluated; the dice cannot be read); with it, exactly the findings of
    the night written right, and the renames in the provenance."""
    right = tmp_path / "right"
    right.mkdir()
    assert run("check", SAMPLES / "night-planted.csv", "-r", "nz-table-games", "--out",
               right, "--no-config").exit_code == 1
    log = _night(tmp_path, "night-planted.csv", flags="flag", die1="die_1")
    (tmp_path / "auditor.toml").write_text(
        'ruleset = "nz-table-games"\nout = "mapped"\n[columns]\nflag = "flags"\n'
        'die_1 = "die1"\n')
    monkeypatch.chdir(tmp_path)
    res = run("check", log)
    assert res.exit_code == 1, res.output
    assert "warning" not in res.output
    assert _codes(tmp_path / "mapped") == _codes(right)
    meta = report_provenance(tmp_path / "mapped")
    assert meta["read_options"] == {"columns": {"die_1": "die1", "flag": "flags"}}
    assert meta["inputs"][0]["notes"] == [  # (in the file's column order)
        "column `die_1` read as `die1` (columns in the project configuration)",
        "column `flag` read as `flags` (columns in the project configuration)"]
    assert run("verify", tmp_path / "mapped").exit_code == 0


def test_a_mapping_onto_a_column_the_file_holds_is_refused(tmp_path, monkeypatch):
    log = _night(tmp_path, "night-clean.csv")
    (tmp_path / "auditor.toml").write_text(
        'ruleset = "nz-table-games"\nout = "r"\n[columns]\nreason = "flags"\n')
    monkeypatch.chdir(tmp_path)
    res = run("check", log)
    assert res.exit_code == 2
    assert "column `reason` is to be read as `flags`" in res.output


@pytest.mark.parametrize(("written", "likely", "said"), [
    ("tableid", "table_id", "missing required column(s): table_id"),
    ("die_1", "die1", ("no column `die1`, which the spec requires for `roll` events "
                       "(the file holds 249)")),
    ("actor role", "actor_role", ("no column `actor_role`, which the spec requires for "
                                  "`staff_on` events (the file holds 10)"))])
def test_a_required_column_misspelt_is_named_in_the_error(tmp_path, written, likely, said):
    log = _night(tmp_path, "night-clean.csv", **{likely: written})
    res = run("check", log, "-r", "nz-table-games", "--out", tmp_path / "r", "--no-config")
    assert res.exit_code == 2
    assert f"{said} (`{written}` looks like `{likely}`; a project configuration's " \
           "[columns] can rename it)" in res.output
