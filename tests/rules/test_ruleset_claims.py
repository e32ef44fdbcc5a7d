"""A ruleset reference means one thing (issue 28): a bare id names only a
shipped ruleset or family, never a file lying in the current folder; a file
that declares a shipped ruleset's id without being it is never presented as
that ruleset; an overlay that makes a rule check something else is
reported as loosening. Each through the CLI on the sample night, beside
its lawful twin."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from builder import report_findings, report_provenance
from builder import run_cli as run

from auditor.rules.ruleset import shipped_dir

ROOT = Path(__file__).resolve().parents[2]
NIGHT = ROOT / "sample_logs" / "nz-table-games" / "night-planted.csv"
#: the shipped file as the installed package holds it (the checkout's rulesets/
#: in an editable install, the package's _shipped_rulesets/ in a regular one)
SHIPPED = shipped_dir() / "nz-table-games.toml"
PLANTED = 56  # sample_logs/README.md


def one_rule_copy(path: Path) -> Path:
    """The shipped nz-table-games cut to its first rule, id kept."""
    text = SHIPPED.read_text(encoding="utf-8")
    head, first = text.split("[[rule]]")[:2]
    path.write_text(head + "[[rule]]" + first, encoding="utf-8")
    return path


def audit(tmp_path, *args, out="out"):
    result = run("check", NIGHT, "--out", tmp_path / out, "--format", "parquet",
                 "--format", "text:-", *args)
    assert result.exit_code in (0, 1), result.output
    return result, report_findings(tmp_path / out), report_provenance(tmp_path / out)


def test_a_bare_id_never_loads_a_stray_file_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_rule_copy(tmp_path / "nz-table-games")
    result, findings, prov = audit(tmp_path, "--ruleset", "nz-table-games")
    assert len(findings) == PLANTED
    assert prov["ruleset"]["files"] == [str(SHIPPED)]
    assert "not the shipped" not in result.output and "LOOSENED" not in result.output


def test_the_stray_file_named_as_a_path_is_read_and_says_it_is_not_shipped(tmp_path,
                                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_rule_copy(tmp_path / "nz-table-games")
    result, findings, prov = audit(tmp_path, "--ruleset", "./nz-table-games")
    assert len(findings) < PLANTED
    assert prov["ruleset"]["not_shipped"]["file"] == "nz-table-games"
    assert len(prov["ruleset"]["not_shipped"]["dropped"]) == 33
    assert "nz-table-games from nz-table-games, not the shipped nz-table-games" in result.output


def test_an_unknown_bare_id_beside_a_file_of_that_name_is_refused_naming_the_path(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_rule_copy(tmp_path / "mine")
    result = run("check", NIGHT, "--ruleset", "mine", "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert "no shipped ruleset of that id" in result.output
    assert "name it as a path, ./mine" in result.output


def test_a_configured_bare_id_names_the_shipped_ruleset_not_a_file_beside_the_config(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_rule_copy(tmp_path / "nz-table-games")
    (tmp_path / "auditor.toml").write_text('ruleset = "nz-table-games"\n', encoding="utf-8")
    _result, findings, prov = audit(tmp_path)
    assert len(findings) == PLANTED and prov["ruleset"]["files"] == [str(SHIPPED)]
    # the twin: a configured path is the file, relative to the configuration
    (tmp_path / "auditor.toml").write_text('ruleset = "./nz-table-games"\n', encoding="utf-8")
    _result, findings, prov = audit(tmp_path, out="out2")
    assert len(findings) < PLANTED and "not_shipped" in prov["ruleset"]


def test_a_file_declaring_a_shipped_id_says_whose_it_is_and_what_it_drops(tmp_path):
    copy = one_rule_copy(tmp_path / "copy.toml")
    result, _findings, prov = audit(tmp_path, "--ruleset", copy)
    header = result.output.splitlines()[0]
    assert header.startswith(f"auditor: nz-table-games from {copy}, not the shipped "
                             "nz-table-games (provisional)")
    block = prov["ruleset"]["not_shipped"]
    assert block["id"] == "nz-table-games" and block["file"] == str(copy)
    assert block["rules"] == 38 and len(block["dropped"]) == 33 and block["changed"] == []
    loosened = next(x for x in result.output.splitlines() if x.startswith("LOOSENED"))
    assert f"{copy} is not the shipped nz-table-games: it drops 33 and changes 0" in loosened
    summary = run("check", NIGHT, "--ruleset", copy, "--out", tmp_path / "o3",
                  "--format", "html")
    assert "from " + str(copy) + ", not the shipped nz-table-games" in summary.output
    page = (tmp_path / "o3" / "report.html").read_text(encoding="utf-8")
    assert f"nz-table-games from {copy}, not the shipped nz-table-games" in page


def test_an_exact_copy_of_a_shipped_ruleset_is_that_ruleset(tmp_path):
    copy = tmp_path / "copy.toml"
    shutil.copy(SHIPPED, copy)
    result, findings, prov = audit(tmp_path, "--ruleset", copy)
    assert len(findings) == PLANTED and "not_shipped" not in prov["ruleset"]
    assert "LOOSENED" not in result.output and "not the shipped" not in result.output


def overlay(tmp_path: Path, rule: str) -> Path:
    path = tmp_path / "overlay.toml"
    path.write_text('[ruleset]\nid = "casino"\ntitle = "c"\nstatus = "verified"\n'
                    f'extends = "nz-table-games"\n\n[[rule]]\nid = "R5.7-settled-as-decided"\n'
                    f'{rule}', encoding="utf-8")
    return path


def test_an_overlay_that_swaps_a_rules_check_is_loosening(tmp_path):
    path = overlay(tmp_path, 'check = "stick_used"\ncode = "dice.stick_not_used"\n')
    result, findings, prov = audit(tmp_path, "--ruleset", path)
    assert "settle.wrong_outcome" not in set(findings["code"])
    assert prov["ruleset"]["loosened_rules"] == [
        {"rule": "R5.7-settled-as-decided", "what": "check", "from": "line_bet_outcome",
         "to": "stick_used", "by": "casino"}]
    line = next(x for x in result.output.splitlines() if x.startswith("LOOSENED"))
    assert ("R5.7-settled-as-decided made to check stick_used instead of line_bet_outcome "
            "by casino") in line
    page = run("check", NIGHT, "--ruleset", path, "--out", tmp_path / "h", "--format", "html")
    assert page.exit_code == 1
    assert "made to check stick_used" in (tmp_path / "h" / "report.html").read_text()


def test_an_overlay_restating_a_rules_own_check_loosens_nothing(tmp_path):
    path = overlay(tmp_path, 'check = "line_bet_outcome"\nseverity = "critical"\n')
    result, findings, prov = audit(tmp_path, "--ruleset", path)
    assert "settle.wrong_outcome" in set(findings["code"])
    assert prov["ruleset"]["loosened_rules"] == [] and "LOOSENED" not in result.output


def test_a_swapped_check_restored_by_a_later_overlay_is_no_longer_loosened(tmp_path):
    first = overlay(tmp_path, 'check = "stick_used"\ncode = "dice.stick_not_used"\n')
    (tmp_path / "again.toml").write_text(
        '[ruleset]\nid = "again"\ntitle = "a"\nstatus = "verified"\nextends = "overlay.toml"\n'
        '\n[[rule]]\nid = "R5.7-settled-as-decided"\ncheck = "line_bet_outcome"\n'
        'code = "settle.wrong_outcome"\n', encoding="utf-8")
    assert first.is_file()
    _result, _findings, prov = audit(tmp_path, "--ruleset", tmp_path / "again.toml")
    assert prov["ruleset"]["loosened_rules"] == []
    assert json.dumps(prov).count("stick_used") == 0
