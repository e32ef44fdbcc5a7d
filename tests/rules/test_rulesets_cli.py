"""`auditor rulesets list|show|diff|check` and `auditor explain`, driven
through the CLI against small rulesets written into tmp_path."""

from __future__ import annotations

import pytest
from builder import run_cli as run

from auditor.rules import ruleset as ruleset_mod

ALPHA = """
[ruleset]
id = "alpha"
title = "Alpha Rules of Craps"
jurisdiction = "Alphaland"
authority = "Alpha Gaming Board"
status = "verified"
notes = "Test ruleset."

[ruleset.source]
document = "Alpha Rules of Craps"
edition = "2024"

[ruleset.parameters]
dice_set_size = 5

[[rule]]
id = "A-5.3"
check = "line_bet_at_roll"
code = "shooter.ineligible"
clause = "5.3"
summary = "Only a player with a line bet may shoot."
severity = "major"

[[rule]]
id = "A-5.1"
check = "dice_set_size"
code = "dice.set_size"
clause = "5.1"
summary = "Five dice at the table."
severity = "minor"

[[rule]]
id = "A-5.7"
check = "stick_used"
code = "dice.stick_not_used"
clause = "5.7"
summary = "The stick collects and passes the dice."
severity = "minor"
"""

BETA = """
[ruleset]
id = "beta"
title = "Beta Rules of Craps"
jurisdiction = "Betaland"
authority = "Beta Commission"
extends = "alpha"
status = "provisional"
notes = "Clauses not yet checked against the gazette."

[ruleset.parameters]
dice_set_size_mode = "at_least"

[[rule]]
id = "A-5.3"
clause = "(2)"
params = { eligibility = "come_out" }

[[rule]]
id = "A-5.7"
enabled = false

[[rule]]
id = "B-6.3"
check = "dispute_ruling_role"
code = "dispute.wrong_role"
clause = "6.3"
summary = "The game supervisor decides a face dispute."
severity = "major"
"""


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A shipped-rulesets folder holding alpha and beta (beta extends alpha)."""
    folder = tmp_path / "shipped"
    folder.mkdir()
    (folder / "alpha.toml").write_text(ALPHA, encoding="utf-8")
    (folder / "beta.toml").write_text(BETA, encoding="utf-8")
    monkeypatch.setattr(ruleset_mod, "shipped_dir", lambda: folder)
    return folder


# --- list -----------------------------------------------------------------------------------

def test_list_shows_each_shipped_ruleset(shipped):
    result = run("rulesets", "list")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["ID", "TITLE", "STATUS", "RULES"]
    alpha = next(line for line in lines if line.startswith("alpha"))
    beta = next(line for line in lines if line.startswith("beta"))
    assert "Alpha Rules of Craps" in alpha and "verified" in alpha and alpha.endswith(" 3")
    # beta: alpha's 3, less disabled, plus B-6.3; log rules not counted
    assert "provisional" in beta and beta.endswith(" 3")
    # aligned: the status column starts at the same place on every line
    assert lines[0].index("STATUS") == alpha.index("verified") == beta.index("provisional")


def test_list_shows_a_broken_ruleset_as_invalid(shipped):
    (shipped / "gamma.toml").write_text(ALPHA.replace('"stick_used"', '"no_such_check"'),
                                        encoding="utf-8")
    result = run("rulesets", "list")
    assert result.exit_code == 0, result.output
    gamma = next(line for line in result.output.splitlines() if line.startswith("gamma"))
    assert "INVALID:" in gamma and "unknown check 'no_such_check'" in gamma
    assert any(line.startswith("alpha") for line in result.output.splitlines())


def test_list_with_no_shipped_rulesets(tmp_path, monkeypatch):
    monkeypatch.setattr(ruleset_mod, "shipped_dir", lambda: tmp_path)
    result = run("rulesets", "list")
    assert result.exit_code == 0
    assert "no shipped rulesets" in result.output


# --- show -----------------------------------------------------------------------------------

def test_show_resolves_extends(shipped):
    result = run("rulesets", "show", "beta")
    assert result.exit_code == 0, result.output
    out = result.output
    for text in ("id:", "beta", "Betaland", "Beta Commission", "provisional",
                 "Clauses not yet checked", "document: Alpha Rules of Craps; edition: 2024",
                 "content hash:", "sha256:", "alpha.toml", "beta.toml",
                 "disabled rules:  A-5.7"):
        assert text in out, text
    assert out.index("alpha.toml") < out.index("beta.toml")
    params = out[out.index("Parameters"):out.index("Rules (")]
    assert "dice_set_size_mode" in params and "at_least" in params
    rules = out[out.index("Rules ("):]
    assert "Rules (2)" not in rules and "Rules (3)" in rules
    assert "A-5.3" in rules and "shooter.ineligible" in rules and "clause (2)" in rules
    assert "eligibility = come_out (set on rule)" in rules
    assert "B-6.3" in rules and "dispute_roles = [game_supervisor]" in rules
    assert "A-5.7" not in rules  # disabled
    # a rule lists only the parameters its check reads
    line = next(x for x in rules.splitlines() if "check dice_set_size:" in x)
    assert "dice_set_size = 5, dice_set_size_mode = at_least" in line
    assert "eligibility" not in line


def test_show_a_file_path(tmp_path):
    path = tmp_path / "alpha.toml"
    path.write_text(ALPHA, encoding="utf-8")
    result = run("rulesets", "show", str(path))
    assert result.exit_code == 0, result.output
    assert "Alpha Gaming Board" in result.output and "disabled rules:  none" in result.output


def test_show_unknown_ruleset_exits_2(shipped):
    result = run("rulesets", "show", "nosuch")
    assert result.exit_code == 2
    assert "error:" in result.output and "no such ruleset" in result.output
    assert "alpha, beta" in result.output


# --- diff -----------------------------------------------------------------------------------

def test_diff_parameters_rules_only_in_one_and_changed(shipped):
    result = run("rulesets", "diff", "alpha", "beta")
    assert result.exit_code == 0, result.output
    out = result.output
    params = out[out.index("Parameters that differ"):out.index("Rules only in one")]
    assert _row(params, "dice_set_size_mode") == ["dice_set_size_mode", "exact", "at_least"]
    only = out[out.index("Rules only in one"):out.index("Rules that differ")]
    assert _row(only, "dice.stick_not_used") == ["dice.stick_not_used",
                                                 "A-5.7: clause 5.7, minor", "-"]
    assert _row(only, "dispute.wrong_role") == ["dispute.wrong_role", "-",
                                                "B-6.3: clause 6.3, major"]
    changed = out[out.index("Rules that differ"):]
    assert ["shooter.ineligible", "clause", "5.3", "(2)"] in _rows(changed)
    assert ["shooter.ineligible", "params.eligibility", "every_roll", "come_out"] \
        in _rows(changed)
    # the dice_set_size_mode difference is the ruleset parameter's, shown once above
    assert "dice_set_size_mode" not in changed
    assert "identical" not in out


def test_diff_rules_matched_by_code_not_id(tmp_path):
    a = tmp_path / "a.toml"
    b = tmp_path / "b.toml"
    a.write_text(ALPHA, encoding="utf-8")
    b.write_text(ALPHA.replace('"A-5.3"', '"B-9.9"').replace("dice_set_size = 5",
                                                             "dice_set_size = 6"),
                 encoding="utf-8")
    out = run("rulesets", "diff", str(a), str(b)).output
    assert ["dice_set_size", "5", "6"] in _rows(out)
    assert "Rules only in one:\n  none" in out
    assert "Rules that differ:\n  none" in out


def test_diff_identical(shipped):
    result = run("rulesets", "diff", "alpha", str(shipped / "alpha.toml"))
    assert result.exit_code == 0
    assert "identical" in result.output


def _rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("|")] for line in text.splitlines() if "|" in line]


def _row(text: str, first: str) -> list[str]:
    return next(r for r in _rows(text) if r[0] == first)


# --- check ----------------------------------------------------------------------------------

def test_check_ok(tmp_path, shipped):
    path = tmp_path / "mine.toml"
    path.write_text(BETA.replace('extends = "alpha"', 'extends = "shipped/alpha.toml"'),
                    encoding="utf-8")
    result = run("rulesets", "check", str(path))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("OK: beta (3 rules, status provisional, hash sha256:")


BROKEN = {
    "unknown key": (
        ALPHA.replace('severity = "minor"\n', 'sevrity = "minor"\n', 1),
        "A-5.1", "sevrity", "unknown key"),
    "unknown check": (
        ALPHA.replace('"stick_used"', '"stick_usd"'),
        "A-5.7", "check", "unknown check 'stick_usd'"),
    "wrong parameter type": (
        ALPHA.replace('summary = "Five dice at the table."',
                      'summary = "Five dice at the table."\nparams = { dice_set_size = "five" }'),
        "A-5.1", "params.dice_set_size", "should be an integer"),
    "missing clause": (
        ALPHA.replace('clause = "5.7"\n', ""),
        "A-5.7", "clause", "required"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_check_broken_file_names_file_rule_and_key(tmp_path, case):
    text, rule_id, key, message = BROKEN[case]
    path = tmp_path / "broken.toml"
    path.write_text(text, encoding="utf-8")
    result = run("rulesets", "check", str(path))
    assert result.exit_code == 2, result.output
    assert "OK:" not in result.output
    line = result.output.strip()
    assert line.startswith(f"error: {path}: ")
    assert f"rule {rule_id!r}" in line and f"key {key!r}" in line and message in line


def test_check_extends_cycle(tmp_path):
    one, two = tmp_path / "one.toml", tmp_path / "two.toml"
    one.write_text(BETA.replace('extends = "alpha"', 'extends = "two.toml"'), encoding="utf-8")
    two.write_text(BETA.replace('extends = "alpha"', 'extends = "one.toml"'), encoding="utf-8")
    result = run("rulesets", "check", str(one))
    assert result.exit_code == 2, result.output
    assert "extends cycle" in result.output and "key 'extends'" in result.output
    assert "one.toml" in result.output and "two.toml" in result.output


def test_check_missing_file(tmp_path):
    result = run("rulesets", "check", str(tmp_path / "absent.toml"))
    assert result.exit_code == 2
    assert "absent.toml" in result.output and "no such file" in result.output


# --- explain --------------------------------------------------------------------------------

def test_explain_known_code(shipped):
    result = run("explain", "shooter.ineligible")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "without an active Pass or Don't Pass wager" in out  # the catalogue meaning
    assert "line_bet_at_roll" in out and "Fires on:" in out and "Quiet on:" in out
    enforced = out[out.index("Enforced by"):]
    alpha = next(line for line in enforced.splitlines() if line.strip().startswith("alpha"))
    beta = next(line for line in enforced.splitlines() if line.strip().startswith("beta"))
    assert "rule A-5.3" in alpha and "clause 5.3" in alpha and "major" in alpha
    assert "clause (2)" in beta


def test_explain_notes_rulesets_that_do_not_enforce_or_load(shipped):
    (shipped / "gamma.toml").write_text("not toml [", encoding="utf-8")
    result = run("explain", "dice.stick_not_used")
    assert result.exit_code == 0, result.output
    assert "clause 5.7" in result.output
    assert "Not enforced by: beta" in result.output
    assert "skipped gamma" in result.output and "not valid TOML" in result.output


def test_explain_unknown_code_suggests_close_ones(shipped):
    result = run("explain", "shooter.inelegible")
    assert result.exit_code == 2
    assert "unknown code 'shooter.inelegible'" in result.output
    assert "shooter.ineligible" in result.output


def test_every_command_has_an_example():
    for args in (["rulesets", "--help"], ["rulesets", "list", "--help"],
                 ["rulesets", "show", "--help"], ["rulesets", "diff", "--help"],
                 ["rulesets", "check", "--help"], ["explain", "--help"]):
        result = run(*args)
        assert result.exit_code == 0 and "Example:" in result.output, args
