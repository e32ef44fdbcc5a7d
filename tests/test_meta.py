"""Meta-tests: every shipped rule cites a clause and names a known check and
code; every check documents itself; the code catalogue is the spec's."""

import re
from pathlib import Path

import click
import pytest
from builder import SHIPPED
from click.testing import CliRunner

from auditor.checks import CHECKS
from auditor.checks.parameters import PARAMETERS
from auditor.cli import main
from auditor.codes import CODES
from auditor.rules.ruleset import load_ruleset, shipped_ids

SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec" / "violations.md"
SECTIONS = ("Fires on:", "Quiet on:", "Points at:")


def test_every_shipped_ruleset_is_listed():
    assert sorted(shipped_ids()) == sorted(SHIPPED)


@pytest.mark.parametrize("ruleset_id", SHIPPED)
def test_every_rule_cites_a_clause_and_a_known_check_and_code(ruleset_id):
    rs = load_ruleset(ruleset_id)
    assert rs.status in ("verified", "provisional")
    assert rs.status == "verified" or rs.notes
    ids = [r.id for r in rs.rules]
    assert len(ids) == len(set(ids))
    for rule in rs.rules:
        assert rule.clause.strip(), rule.id
        assert rule.check in CHECKS, rule.id
        assert rule.code in CODES and CHECKS[rule.check].code == rule.code, rule.id
        assert set(rule.params) == set(CHECKS[rule.check].params), rule.id
        if not rule.code.startswith("log."):
            assert rule.summary, rule.id


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_every_check_documents_itself(name):
    doc = CHECKS[name].doc
    assert CHECKS[name].description.endswith("."), name
    for section in SECTIONS:
        assert section in doc, f"{name} lacks {section!r}"
    for param in CHECKS[name].params:
        assert f"`{param}`" in doc, f"{name} does not document parameter {param}"


def test_every_check_lives_in_the_module_named_like_its_code():
    """`auditor.checks.dice` holds the `dice.*` checks, and only those."""
    misplaced = {name: (c.family, c.code) for name, c in CHECKS.items()
                 if c.code.split(".", 1)[0] != c.family}
    assert not misplaced


def test_every_code_has_a_check():
    assert {c.code for c in CHECKS.values()} == set(CODES)


def test_every_parameter_is_read_by_some_check_or_the_replay():
    from auditor.report.dice_stats import PARAMETERS_READ  # the dice statistics'

    used = {p for c in CHECKS.values() for p in c.params} | {"bar_number", *PARAMETERS_READ}
    assert used == set(PARAMETERS)


@pytest.mark.skipif(not SPEC.is_file(), reason="shared/spec not beside the checkout")
def test_code_catalogue_matches_the_spec():
    text = SPEC.read_text(encoding="utf-8")
    spec_codes = re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \|", text, re.MULTILINE)
    assert spec_codes == list(CODES)


def test_every_command_has_an_example():
    runner = CliRunner()
    with click.Context(main) as ctx:
        commands = [[name] for name in main.list_commands(ctx)]
        commands += [["rulesets", sub] for sub in main.get_command(ctx, "rulesets").commands]
    assert {"check", "validate", "verify", "baseline", "generate", "explain"} <= \
        {cmd[0] for cmd in commands}
    for cmd in commands:
        out = runner.invoke(main, [*cmd, "--help"]).output
        if cmd == ["rulesets"]:
            continue
        assert "Example:" in out, cmd


def test_the_gating_run_draws_the_same_examples_every_time(request):
    """The README's test command runs the property tests derandomized (the
    same draws on every run: tests/conftest.py); `--fuzz-examples N` or a
    hypothesis seed explores instead."""
    from hypothesis import settings

    fixed = request.config.option.draws_fixed
    assert fixed is (request.config.getoption("--fuzz-examples") == 25
                     and request.config.getoption("hypothesis_seed", None) is None)
    assert settings.default.derandomize is fixed
