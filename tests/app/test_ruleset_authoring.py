"""Writing and publishing a ruleset: `auditor rulesets new` (a scaffold that
extends another), overlays that tighten or loosen (reported in every audit),
effective dates, and `auditor rulesets docs`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from builder import SHIPPED, lawful_table, report_findings, report_provenance
from builder import run_cli as run

from auditor.app import ruleset_docs as docs
from auditor.errors import RulesetError
from auditor.rules.ruleset import load_ruleset

ROOT = Path(__file__).resolve().parents[2]


def uncomment_all(text: str) -> str:
    """Every commented-out assignment and table of a scaffold, uncommented
    (the example rule of one's own excepted): the author accepting all."""
    text = text.split("# A rule of your own")[0]
    out = []
    for line in text.splitlines():
        m = re.match(r"^# (\[\[?[a-z.]+\]\]?|[a-z_]+ = .*)$", line)
        out.append(m.group(1) if m and not line.startswith("# effective") else line)
    return "\n".join(out) + "\n"


# --- rulesets new --------------------------------------------------------------------------

@pytest.mark.parametrize("base", SHIPPED)
def test_new_loads_as_written_and_judges_as_its_parent(tmp_path, base):
    out = tmp_path / "mine.toml"
    result = run("rulesets", "new", "mine", "--from", base, "--out", out)
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    parent = load_ruleset(base)
    mine = load_ruleset(str(out))
    assert mine.id == "mine" and mine.status == "provisional" and mine.notes
    assert f'extends = "{base}"' in text
    assert mine.content["rules"] == parent.content["rules"]
    assert mine.parameters == parent.parameters and not mine.disabled and not mine.loosened
    # every inherited rule is there, commented out, with its fields and params
    for rule in parent.rules:
        if rule.code.startswith("log."):
            continue
        block = text[text.index(f'# id = "{rule.id}"'):]
        block = block[:block.index("\n\n")] if "\n\n" in block else block
        for line in (f'# check = "{rule.check}"', f'# code = "{rule.code}"',
                     f'# severity = "{rule.severity}"'):
            assert line in block, (rule.id, line)
        assert "# clause = " + json.dumps(rule.clause) in block
        for name in rule.params:
            assert f"# {name} = " in block, (rule.id, name)
    # accepting every override as written changes nothing
    everything = tmp_path / "everything.toml"
    everything.write_text(uncomment_all(text), encoding="utf-8")
    accepted = load_ruleset(str(everything))
    assert [r.__dict__ for r in accepted.rules] == [r.__dict__ for r in parent.rules]
    assert accepted.parameters == parent.parameters
    assert run("rulesets", "check", everything).exit_code == 0


def test_new_prints_when_no_out(tmp_path):
    result = run("rulesets", "new", "nz-2026", "--from", "nz-1996")
    assert result.exit_code == 0, result.output
    path = tmp_path / "x.toml"
    path.write_text(result.output, encoding="utf-8")
    assert load_ruleset(str(path)).id == "nz-2026"


def test_new_from_a_file_extends_it_by_relative_path(tmp_path):
    base = tmp_path / "rules" / "casino.toml"
    base.parent.mkdir()
    base.write_text('[ruleset]\nid = "casino"\ntitle = "c"\nstatus = "verified"\n'
                    'extends = "nz-1996"\n', encoding="utf-8")
    out = tmp_path / "overlays" / "floor.toml"
    out.parent.mkdir()
    result = run("rulesets", "new", "floor", "--from", base, "--out", out)
    assert result.exit_code == 0, result.output
    assert 'extends = "../rules/casino.toml"' in out.read_text()
    assert Path(load_ruleset(str(out)).files[-2]).resolve() == base.resolve()


def test_new_refuses_to_overwrite_and_bad_ids(tmp_path):
    out = tmp_path / "mine.toml"
    out.write_text("keep me", encoding="utf-8")
    result = run("rulesets", "new", "mine", "--from", "nz-1996", "--out", out)
    assert result.exit_code == 2 and "already exists" in result.output
    assert out.read_text() == "keep me"
    assert run("rulesets", "new", "mine", "--from", "nz-1996", "--out", out,
               "--force").exit_code == 0
    result = run("rulesets", "new", "my casino", "--from", "nz-1996")
    assert result.exit_code == 2 and "key 'id'" in result.output
    result = run("rulesets", "new", "mine", "--from", "nosuch")
    assert result.exit_code == 2 and "no such ruleset" in result.output


# --- overlays: tighten, loosen ------------------------------------------------------------

STATE = ROOT / "rulesets" / "nz-1996.toml"

TIGHTEN = """
[ruleset]
id = "casino-strict"
title = "Casino internal controls"
status = "verified"
extends = "nz-1996"

[[rule]]
id = "NZ5.7-stick"
severity = "critical"

[[rule]]
id = "CASINO-order"
check = "offer_order"
code = "offer.order"
clause = "IC 4.2"
summary = "Start-of-play offers go to the lowest seat."
severity = "major"
params = { offer_rounds = "all" }
"""

LOOSEN = """
[ruleset]
id = "casino-lax"
title = "Casino internal controls"
status = "verified"
extends = "nz-1996"

[[rule]]
id = "NZ5.7-stick"
severity = "info"

[[rule]]
id = "NZ5.2-far-end"
enabled = false

[[rule]]
id = "floor-malformed"
check = "row_malformed"
code = "log.malformed"
clause = "IC 9"
severity = "minor"
"""


def _night(tmp_path) -> Path:
    """No stick on a collection; a short throw; the first offer to seat 5."""
    b = lawful_table(shooter=5)  # seat 2 declines first: lawful order
    b.roll(5, 4, 2, flags="one_hand,simultaneous,short")
    b.call(6)
    b.collect(flags="no_stick")
    b.complete()
    b.pass_back(5)
    return b.write_csv(tmp_path / "night.csv")


def _check(tmp_path, toml: str, name: str):
    path = tmp_path / f"{name}.toml"
    path.write_text(toml, encoding="utf-8")
    out = tmp_path / f"out-{name}"
    result = run("check", _night(tmp_path), "--ruleset", path, "--out", out)
    md = report_provenance(out)
    findings = report_findings(out)
    return result, md, findings


def test_an_overlay_that_tightens_reports_nothing_loosened(tmp_path):
    result, md, findings = _check(tmp_path, TIGHTEN, "strict")
    assert result.exit_code == 1, result.output
    assert md["ruleset"]["disabled_rules"] == [] and md["ruleset"]["loosened_rules"] == []
    assert "LOOSENED" not in result.output
    sev = dict(zip(findings["code"], findings["severity"]))
    assert sev["dice.stick_not_used"] == "critical" and sev["throw.short"] == "minor"
    rs = load_ruleset(str(tmp_path / "strict.toml"))
    assert rs.rule("CASINO-order").params["offer_rounds"] == "all"
    assert not rs.loosened and not rs.disabled


def test_an_overlay_that_loosens_is_reported_in_metadata_and_summary(tmp_path):
    result, md, findings = _check(tmp_path, LOOSEN, "lax")
    assert result.exit_code == 0, result.output  # nothing at or above major any more
    assert md["ruleset"]["disabled_rules"] == ["NZ5.2-far-end"]
    assert md["ruleset"]["loosened_rules"] == [
        {"rule": "NZ5.7-stick", "from": "minor", "to": "info", "by": "casino-lax"},
        {"rule": "floor-malformed", "from": "major", "to": "minor", "by": "casino-lax"},
    ]
    assert "throw.short" not in set(findings["code"])
    assert dict(zip(findings["code"], findings["severity"]))["dice.stick_not_used"] == "info"
    line = next(x for x in result.output.splitlines() if x.startswith("LOOSENED"))
    assert "casino-lax:" in line and "NZ5.2-far-end disabled" in line
    assert "NZ5.7-stick lowered from minor to info by casino-lax" in line
    # --quiet prints nothing, but the metadata still says it
    out = tmp_path / "q"
    result = run("check", tmp_path / "night.csv", "-r", tmp_path / "lax.toml", "--out", out, "-q")
    assert result.output == ""
    md = report_provenance(out)
    assert md["ruleset"]["disabled_rules"] == ["NZ5.2-far-end"]


def test_loosening_along_a_chain_and_restoring(tmp_path):
    (tmp_path / "lax.toml").write_text(LOOSEN, encoding="utf-8")
    (tmp_path / "floor.toml").write_text(
        '[ruleset]\nid = "floor"\ntitle = "f"\nstatus = "verified"\nextends = "lax.toml"\n'
        '[[rule]]\nid = "NZ5.7-stick"\nseverity = "minor"\n'
        '[[rule]]\nid = "NZ5.5a-call"\nseverity = "minor"\n', encoding="utf-8")
    rs = load_ruleset(str(tmp_path / "floor.toml"))
    assert rs.disabled == ["NZ5.2-far-end"]  # still disabled further down the chain
    assert rs.loosened == [
        {"rule": "NZ5.5a-call", "from": "major", "to": "minor", "by": "floor"},
        {"rule": "floor-malformed", "from": "major", "to": "minor", "by": "casino-lax"},
    ]  # NZ5.7-stick is back at its original severity: no longer loosened


def test_a_plain_ruleset_reports_empty_lists(tmp_path):
    out = tmp_path / "o"
    result = run("check", _night(tmp_path), "-r", "nz-1996", "--out", out)
    md = report_provenance(out)
    assert md["ruleset"]["loosened_rules"] == [] and md["ruleset"]["disabled_rules"] == []
    assert "versions" not in md and "family" not in md["ruleset"]
    assert "LOOSENED" not in result.output


# --- effective dates ------------------------------------------------------------------------

HEAD = '[ruleset]\nid = "v"\ntitle = "v"\nstatus = "verified"\nextends = "nz-1996"\n'


@pytest.mark.parametrize("lines,key,message", [
    ('effective_from = "2010-13-01"\n', "effective_from", "should be an ISO date"),
    ('effective_to = "1 July 2010"\n', "effective_to", "should be an ISO date"),
    ("effective_from = 2010-07-01T00:00:00Z\n", "effective_from", "should be an ISO date"),
    ("effective_from = 20100701\n", "effective_from", "should be an ISO date"),
    ('effective_from = 2010-07-01\neffective_to = "2010-06-30"\n', "effective_to",
     "is before effective_from (2010-07-01)"),
])
def test_bad_effective_dates(tmp_path, lines, key, message):
    path = tmp_path / "v.toml"
    path.write_text(HEAD + lines, encoding="utf-8")
    with pytest.raises(RulesetError) as err:
        load_ruleset(str(path))
    assert err.value.key == key and message in str(err.value)
    result = run("rulesets", "check", path)
    assert result.exit_code == 2 and f"key {key!r}" in result.output


def test_effective_dates_as_string_or_toml_date_and_not_inherited(tmp_path):
    path = tmp_path / "v.toml"
    path.write_text(HEAD + 'effective_from = "2010-07-01"\neffective_to = 2020-06-30\n',
                    encoding="utf-8")
    rs = load_ruleset(str(path))
    assert (rs.effective_from.isoformat(), rs.effective_to.isoformat()) == \
        ("2010-07-01", "2020-06-30")
    assert rs.content["effective_from"] == "2010-07-01"
    child = tmp_path / "child.toml"
    child.write_text('[ruleset]\nid = "c"\ntitle = "c"\nstatus = "verified"\n'
                     'extends = "v.toml"\n', encoding="utf-8")
    assert load_ruleset(str(child)).effective_from is None
    # a ruleset without dates keeps its old content hash (no new keys)
    assert "effective_from" not in load_ruleset("nz-1996").content


# --- rulesets docs ----------------------------------------------------------------------------

@pytest.mark.parametrize("ruleset_id", SHIPPED)
def test_shipped_docs_are_current(ruleset_id):
    """docs/rulesets/<id>.md is what `auditor rulesets docs` writes today."""
    result = run("rulesets", "docs", ruleset_id, "--format", "md",
                 "--cases", ROOT / "rulesets" / "cases" / ruleset_id)
    assert result.exit_code == 0, result.output
    committed = (ROOT / "docs" / "rulesets" / f"{ruleset_id}.md").read_text(encoding="utf-8")
    assert result.output == committed, (
        f"docs/rulesets/{ruleset_id}.md is stale: run `auditor rulesets docs {ruleset_id} "
        f"--format md --out docs/rulesets/{ruleset_id}.md`")


def test_readme_links_every_shipped_reference():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for ruleset_id in SHIPPED:
        assert f"(docs/rulesets/{ruleset_id}.md)" in readme, ruleset_id


def test_docs_md_has_header_parameters_and_every_rule():
    result = run("rulesets", "docs", "sd-20-18-33",
                 "--cases", ROOT / "rulesets" / "cases" / "sd-20-18-33")
    assert result.exit_code == 0, result.output
    out = result.output
    rs = load_ruleset("sd-20-18-33")
    assert out.startswith(f"# sd-20-18-33: {rs.title}\n")
    for text in ("**Jurisdiction:**", "**Authority:**", "**Source:**", "**Status:** provisional",
                 "**Notes:**", "## Parameters",
                 "| `first_offer_anchor` | `table_open_seat` | ruleset |"):
        assert text in out, text
    for rule in rs.rules:
        if rule.code.startswith("log."):
            continue
        section = out[out.index(f"### {rule.id}\n"):]
        section = section[:section.index("\n### ")] if "\n### " in section else section
        assert f"- **Clause:** {rule.clause}" in section
        assert f"- **Code:** `{rule.code}`: " in section
        assert "- **Check:** `" in section and "- **Example breach:** " in section
        assert "- **Lawful case:** " in section
        assert f"`{rule.id}.fires`" in section and f"`{rule.id}.lawful`" in section


def test_docs_html_is_escaped_and_self_contained(tmp_path):
    path = tmp_path / "evil.toml"
    path.write_text('[ruleset]\nid = "evil"\ntitle = "<script>alert(1)</script>"\n'
                    'status = "provisional"\nnotes = "A & B <b>"\nextends = "nz-1996"\n',
                    encoding="utf-8")
    out = tmp_path / "site" / "evil.html"
    result = run("rulesets", "docs", path, "--format", "html", "--out", out)
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "A &amp; B &lt;b&gt;" in html
    assert "<link" not in html and "src=" not in html and "<style>" in html
    assert html.count('<section class="rule"') == 17
    assert "<code>wager_removed</code>" in html  # docstring code spans
    md = run("rulesets", "docs", path, "--format", "md").output
    assert "&lt;script&gt;" in md and "<script>" not in md


def test_docs_of_an_overlay_says_what_it_loosened(tmp_path, monkeypatch):
    path = tmp_path / "lax.toml"
    path.write_text(LOOSEN, encoding="utf-8")
    out = run("rulesets", "docs", path).output
    assert "**Disabled rules:** NZ5.2-far-end" in out
    assert "NZ5.7-stick (minor to info, by casino-lax)" in out
    assert "**Files:** lax.toml extends nz-1996.toml" in out
    # an installed package has no cases folder: the docstrings alone still serve
    monkeypatch.setattr(docs, "default_cases_dir", lambda rs: None)
    out = run("rulesets", "docs", path).output
    assert "Test cases" not in out and "**Example breach:**" in out


def test_docs_and_new_and_test_have_examples():
    for cmd in ("new", "test", "docs"):
        result = run("rulesets", cmd, "--help")
        assert result.exit_code == 0 and "Example:" in result.output, cmd
