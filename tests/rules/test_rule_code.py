"""Each check reports one code, so a rule may leave `code` out: the loader
takes the check's. Stated, it must be that code (a reader's cross-check).
The ruleset's content hash covers the rules as loaded, so a ruleset that
leaves its codes out hashes as the one that states them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from builder import audit, run_cli

from auditor.checks.parameters import ParameterError, validate_value
from auditor.errors import AuditorError, RulesetError
from auditor.rules.ruleset import load_ruleset, shipped_dir

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "nz-1996" / "night-planted.jsonl"


def _without_codes(tmp_path: Path, ruleset_id: str) -> Path:
    text = (shipped_dir() / f"{ruleset_id}.toml").read_text(encoding="utf-8")
    stripped, n = re.subn(r'(?m)^code = "[^"]*"\n', "", text)
    assert n > 5
    path = tmp_path / f"{ruleset_id}.toml"
    path.write_text(stripped, encoding="utf-8")
    return path


@pytest.mark.parametrize("ruleset_id", ["nsw-1992", "nz-1996", "nz-table-games",
                                        "sd-20-18-33"])
def test_a_ruleset_without_codes_is_the_shipped_one(tmp_path, ruleset_id):
    shipped = load_ruleset(ruleset_id)
    bare = load_ruleset(str(_without_codes(tmp_path, ruleset_id)))
    assert [(r.id, r.check, r.code) for r in bare.rules] == \
        [(r.id, r.check, r.code) for r in shipped.rules]
    assert bare.content_hash == shipped.content_hash


def test_a_ruleset_without_codes_finds_what_the_shipped_one_finds(tmp_path):
    shipped = audit([SAMPLE], "nz-1996").findings
    bare = audit([SAMPLE], str(_without_codes(tmp_path, "nz-1996"))).findings
    assert len(shipped) > 0
    assert bare.equals(shipped)


def test_a_stated_code_must_be_the_checks(tmp_path):
    text = (shipped_dir() / "nz-1996.toml").read_text(encoding="utf-8")
    wrong = text.replace('code = "shooter.ineligible"', 'code = "dice.set_size"', 1)
    path = tmp_path / "wrong.toml"
    path.write_text(wrong, encoding="utf-8")
    with pytest.raises(RulesetError, match="reports 'shooter.ineligible', not "
                                           "'dice.set_size'"):
        load_ruleset(str(path))
    res = run_cli("rulesets", "check", path)
    assert res.exit_code == 2 and "key 'code'" in res.output


def test_an_empty_code_is_refused(tmp_path):
    text = (shipped_dir() / "nz-1996.toml").read_text(encoding="utf-8")
    path = tmp_path / "empty.toml"
    path.write_text(text.replace('code = "shooter.ineligible"', 'code = ""', 1),
                    encoding="utf-8")
    with pytest.raises(RulesetError, match="must not be empty"):
        load_ruleset(str(path))


def test_a_parameter_error_is_an_auditor_error():
    with pytest.raises(ParameterError) as caught:
        validate_value("dice_set_size", "five")
    assert isinstance(caught.value, AuditorError) and isinstance(caught.value, ValueError)


def test_an_overlay_may_add_a_rule_without_its_code(tmp_path):
    """A new rule in a ruleset that extends another leaves `code` out: its
    check's code is used (and a `log.*` rule's default severity is looked up
    by that code, not by a stated one)."""
    path = tmp_path / "overlay.toml"
    path.write_text(
        '[ruleset]\nid = "overlay"\ntitle = "Overlay"\nstatus = "provisional"\n'
        'extends = "nz-1996"\n\n'
        '[[rule]]\nid = "extra-gap"\ncheck = "sequence_gap"\nclause = "5.1"\n'
        'summary = "No seq is skipped."\nseverity = "critical"\n', encoding="utf-8")
    rs = load_ruleset(str(path))
    assert [(r.id, r.code, r.severity) for r in rs.rules if r.id == "extra-gap"] == \
        [("extra-gap", "log.sequence_gap", "critical")]
