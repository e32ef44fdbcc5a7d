"""`auditor explain --list` lists every violation code, and the catalogue
`explain` cites ships inside the package, the same text as the spec's."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli import main
from auditor.cli.explain_cmd import catalogue_path
from auditor.codes import CODES

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "violations.md"


def _explain(*args):
    return CliRunner().invoke(main, ["explain", *args])


def test_list_names_every_code_once_in_catalogue_order_with_its_meaning():
    result = _explain("--list")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    listed = [line.split()[0] for line in lines[:len(CODES)]]
    assert listed == list(CODES)
    for line, (code, meaning) in zip(lines, CODES.items()):
        assert line.endswith(meaning), code
    assert lines[-1] == f"{len(CODES)} codes; the catalogue: {catalogue_path()}"


def test_explaining_a_code_names_the_shipped_catalogue_last():
    result = _explain("dice.set_size")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        f"The violation catalogue (every code, the clauses per jurisdiction): {catalogue_path()}")


def test_list_and_a_code_together_are_refused():
    result = _explain("--list", "dice.set_size")
    assert result.exit_code == 2 and "not both" in result.output


def test_no_code_and_no_list_is_a_usage_error_naming_list():
    result = _explain()
    assert result.exit_code == 2 and "--list" in result.output


def test_an_unknown_code_without_a_close_one_points_at_the_list():
    result = _explain("zzz.qqq")
    assert result.exit_code == 2
    assert "`auditor explain --list` lists every code" in result.output
    assert "shared/spec" not in result.output


def test_the_catalogue_ships_with_the_package_and_lists_the_codes_explain_knows():
    text = Path(catalogue_path()).read_text(encoding="utf-8")
    codes = re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \|", text, re.MULTILINE)
    assert codes == list(CODES)


@pytest.mark.skipif(not SPEC.is_file(), reason="shared/spec not beside the checkout")
def test_the_shipped_catalogue_is_the_spec_word_for_word():
    assert Path(catalogue_path()).read_bytes() == SPEC.read_bytes()
