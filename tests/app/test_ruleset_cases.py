"""Rule test cases as data (`rulesets/cases/<id>/`, `auditor rulesets test`):
the shipped cases all pass, every shipped rule has a firing case and a lawful
twin, and broken case folders give located errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from builder import SHIPPED, lawful_table
from builder import run_cli as run

from auditor.app import cases
from auditor.rules.describe import regulatory_rules
from auditor.rules.ruleset import load_ruleset

CASES = Path(__file__).resolve().parents[2] / "rulesets" / "cases"


def shipped_cases():
    out = []
    for rs_id in SHIPPED:
        found, problems = cases.collect_cases(CASES / rs_id)
        assert not problems, problems
        out += [pytest.param(rs_id, c, id=f"{rs_id}/{c.name}") for c in found]
    return out


# --- the shipped cases -------------------------------------------------------------------

@pytest.mark.parametrize("ruleset_id,case", shipped_cases())
def test_shipped_case(ruleset_id, case):
    rs = _loaded(cases.folder_ruleset(case.folder))
    assert rs.id == ruleset_id
    result = cases.run_case(case, rs)
    assert not isinstance(result, list), [str(p) for p in result]
    assert result.passed, "\n".join(cases.format_result(result))


_RULESETS: dict = {}


def _loaded(ref):
    if ref not in _RULESETS:
        _RULESETS[ref] = load_ruleset(ref)
    return _RULESETS[ref]


@pytest.mark.parametrize("ruleset_id", SHIPPED)
def test_every_shipped_rule_has_a_firing_case_and_a_lawful_twin(ruleset_id):
    folder = CASES / ruleset_id
    assert cases.folder_ruleset(folder) == str(folder.parent.parent / f"{ruleset_id}.toml")
    found = {c.name: c for c in cases.collect_cases(folder)[0]}
    for rule in regulatory_rules(load_ruleset(ruleset_id)):
        fires, lawful = found.get(f"{rule.id}.fires"), found.get(f"{rule.id}.lawful")
        assert fires and lawful, f"{ruleset_id}: rule {rule.id} lacks a case"
        want, problems = cases.parse_expect(fires.expect)
        assert not problems and rule.code in {e.code for e in want}, fires.expect
        want, problems = cases.parse_expect(lawful.expect)
        assert not problems and want == [], lawful.expect
        # an author reads them: small plain CSV
        assert fires.log.suffix == ".csv" and len(fires.log.read_text().splitlines()) < 80


def test_cli_runs_a_shipped_folder():
    result = run("rulesets", "test", CASES / "nsw-1992")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "PASS  nsw-1992/AU1.1-stickperson-announces.fires" in lines
    # (two per rule, five more for the readings of decisions 62, 64 and 65, and
    # one for "A void roll decides nothing")
    assert lines[-1] == "24 case(s): 24 passed, 0 failed"


def test_rulesets_list_ignores_the_cases_folder():
    result = run("rulesets", "list")
    assert result.exit_code == 0
    assert "cases" not in result.output
    assert sorted(line.split()[0] for line in result.output.splitlines()[1:]) == sorted(SHIPPED)


# --- a folder of one's own -----------------------------------------------------------------

def _folder(tmp_path, name="nz-1996") -> Path:
    folder = tmp_path / "cases" / name
    folder.mkdir(parents=True)
    for case in ("NZ5.7-stick.fires", "NZ5.7-stick.lawful"):
        for ext in (".csv", ".expect"):
            shutil.copy(CASES / "nz-1996" / f"{case}{ext}", folder / f"{case}{ext}")
    return folder


def test_a_failing_case_shows_missing_and_unexpected(tmp_path):
    folder = _folder(tmp_path)
    (folder / "NZ5.7-stick.fires.expect").write_text(
        "# wrong on purpose\ncall.missing 12\ndice.stick_not_used T1 19\n", encoding="utf-8")
    (folder / "NZ5.7-stick.lawful.expect").write_text("", encoding="utf-8")
    fires = folder / "NZ5.7-stick.fires.csv"
    shutil.copy(fires, folder / "extra.csv")
    (folder / "extra.expect").write_text("", encoding="utf-8")
    result = run("rulesets", "test", folder)
    assert result.exit_code == 1, result.output
    out = result.output.splitlines()
    assert "PASS  nz-1996/NZ5.7-stick.lawful" in out
    i = out.index("FAIL  nz-1996/NZ5.7-stick.fires: 1 missing (ruleset nz-1996)")
    assert out[i + 1].split() == ["missing:", "call.missing", "T1", "12"]
    j = out.index("FAIL  nz-1996/extra: 1 unexpected (ruleset nz-1996)")
    assert out[j + 1].split() == ["unexpected:", "dice.stick_not_used", "T1", "19", "(rule",
                                  "NZ5.7-stick)"]
    assert out[-1] == "3 case(s): 1 passed, 2 failed"


def test_ruleset_option_overrides_the_folder_name(tmp_path):
    folder = _folder(tmp_path, name="anything")
    assert run("rulesets", "test", folder).exit_code == 2  # no ruleset "anything"
    result = run("rulesets", "test", folder, "--ruleset", "nz-1996")
    assert result.exit_code == 0, result.output
    # the ruleset two levels up, named like the folder
    (tmp_path / "anything.toml").write_text(
        '[ruleset]\nid = "anything"\ntitle = "t"\nstatus = "verified"\nextends = "nz-1996"\n'
        '[[rule]]\nid = "NZ5.7-stick"\nenabled = false\n', encoding="utf-8")
    result = run("rulesets", "test", folder)
    assert result.exit_code == 1, result.output
    assert "missing:    dice.stick_not_used T1 19" in result.output


def test_a_folder_of_folders(tmp_path):
    _folder(tmp_path, "nz-1996")
    _folder(tmp_path, "nz-table-games")  # the same play, another ruleset: a 5.7 rule too
    result = run("rulesets", "test", tmp_path / "cases")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "4 case(s): 4 passed, 0 failed"


def test_table_column_form_and_comments(tmp_path):
    folder = tmp_path / "cases" / "nz-1996"
    folder.mkdir(parents=True)
    b = lawful_table()
    b.roll(2, 4, 2)
    seq = b.call(6)
    b.collect(flags="no_stick")
    b.write_csv(folder / "two.csv")
    (folder / "two.expect").write_text(
        f"# the stick is not used\n\n  dice.stick_not_used T1 {seq + 1}   # the collect\n",
        encoding="utf-8")
    result = run("rulesets", "test", folder)
    assert result.exit_code == 0, result.output


# --- broken folders: located errors, exit 2 --------------------------------------------

BROKEN_LINES = {
    "one word": ("dice.stick_not_used\n", 1, "expected `code seq` or `code table seq`"),
    "unknown code": ("# c\ndice.stick_unused 19\n", 2, "unknown code 'dice.stick_unused'"),
    "bad seq": ("\n\ndice.stick_not_used T1 nineteen\n", 3, "seq should be a whole number"),
    "four words": ("dice.stick_not_used T1 19 extra\n", 1, "expected `code seq`"),
}


@pytest.mark.parametrize("case", list(BROKEN_LINES))
def test_unreadable_expect_line_is_located(tmp_path, case):
    text, line, message = BROKEN_LINES[case]
    folder = _folder(tmp_path)
    expect = folder / "NZ5.7-stick.fires.expect"
    expect.write_text(text, encoding="utf-8")
    result = run("rulesets", "test", folder)
    assert result.exit_code == 2, result.output
    assert f"error: {expect}:{line}: {message}" in result.output
    assert "PASS  nz-1996/NZ5.7-stick.lawful" in result.output  # the others still run


def test_missing_log_and_missing_expect_are_located(tmp_path):
    folder = _folder(tmp_path)
    (folder / "NZ5.7-stick.fires.csv").unlink()
    (folder / "NZ5.7-stick.lawful.expect").unlink()
    result = run("rulesets", "test", folder)
    assert result.exit_code == 2, result.output
    assert f"error: {folder / 'NZ5.7-stick.fires.expect'}: no log beside this expect file" \
        in result.output
    assert f"error: {folder / 'NZ5.7-stick.lawful.csv'}: no NZ5.7-stick.lawful.expect " \
        "beside this log" in result.output


def test_two_tables_need_the_table_named(tmp_path):
    folder = _folder(tmp_path)
    log = folder / "NZ5.7-stick.fires.csv"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines + [x.replace("T1,", "T2,", 1) for x in lines[1:]]) + "\n")
    result = run("rulesets", "test", folder)
    assert result.exit_code == 2, result.output
    assert f"{folder / 'NZ5.7-stick.fires.expect'}:3: the log holds tables T1, T2: " \
        "name the table" in result.output


def test_a_log_that_cannot_be_read(tmp_path):
    folder = _folder(tmp_path)
    (folder / "NZ5.7-stick.fires.csv").write_text("", encoding="utf-8")
    result = run("rulesets", "test", folder)
    assert result.exit_code == 2, result.output
    assert str(folder / "NZ5.7-stick.fires.csv") in result.output


def test_no_cases_and_no_folder(tmp_path):
    result = run("rulesets", "test", tmp_path)
    assert result.exit_code == 2 and "no test cases here" in result.output
    result = run("rulesets", "test", tmp_path / "absent")
    assert result.exit_code == 2 and "no such folder" in result.output


def test_a_ruleset_that_does_not_load(tmp_path):
    folder = _folder(tmp_path)
    result = run("rulesets", "test", folder, "--ruleset", tmp_path / "nope.toml")
    assert result.exit_code == 2, result.output
    assert f"error: {folder}: cannot load its ruleset" in result.output
