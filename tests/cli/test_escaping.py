"""A table id, a file name or a ruleset's text holding a line break and a
workflow command (`\\n::error ::forged`) or a bidirectional override starts
no line of its own in any output of the command line: validate's lines,
error messages, the summary, the text report, verify's and the rulesets
commands' output (`auditor.escape.one_line`)."""

from __future__ import annotations

import pytest
from builder import lawful_table
from builder import run_cli as run

from auditor.escape import one_line
from auditor.report.formats import STREAMABLE

FORGED = "\n::error ::forged\u202e\r"
TABLE = "T1" + FORGED
FILE_NAME = f"night{FORGED}.csv"
RULESET = f'''[ruleset]
id = "forged-title"
title = "Looks fine{FORGED.encode("unicode_escape").decode()}"
status = "provisional"
notes = "test"
extends = "nz-table-games"
'''


def assert_one_line_each(output: str) -> None:
    """No forged line, no raw bidirectional or control character."""
    assert "\u202e" not in output and "\r" not in output, output
    for line in output.split("\n"):
        assert not line.lstrip().startswith("::error ::forged"), output
        assert line.isprintable(), repr(line)
    assert "::error ::forged" not in output or "\\n::error ::forged" in output \
        or "%0A::error ::forged" in output


@pytest.fixture
def night(tmp_path, monkeypatch):
    """A broken night of table TABLE in logs/FILE_NAME, a seq missing."""
    monkeypatch.chdir(tmp_path)
    b = lawful_table()
    b.table = TABLE
    b.roll(2, 3, 4)
    b.call(7)
    b.collect(flags="no_stick")
    b.add("dice_inspectd", role="dealer")
    b.rows = [{**r, "table_id": TABLE} for r in b.rows]
    del b.rows[3]  # a seq gap: a problem for validate
    (tmp_path / "logs").mkdir()
    b.write_csv(tmp_path / "logs" / FILE_NAME)
    return tmp_path


def test_one_line_escapes_line_breaks_and_invisibles():
    assert one_line(TABLE) == "T1\\n::error ::forged\\u202e\\x0d"
    assert one_line(None) == "-" and one_line("T 1") == "T 1"


def test_validate(night):
    res = run("validate", "logs")
    assert res.exit_code == 1, res.output
    assert_one_line_each(res.output)
    assert "night\\n::error ::forged\\u202e\\x0d.csv:" in res.output


@pytest.mark.parametrize("formats", [(), ("--format", "text", "--format", "html")] + [
    ("--format", f"{name}:-") for name in STREAMABLE])  # every format standard output takes
def test_check_outputs(night, formats):
    res = run("check", "logs", "-r", "nz-table-games", "--out", "reports", *formats)
    assert res.exit_code == 1, res.output
    assert_one_line_each(res.output)
    assert "forged" in res.output or formats == ()


def test_the_summary_names_a_forged_out_folder_on_one_line(night):
    res = run("check", "logs", "-r", "nz-table-games", "--out", f"r{FORGED}")
    assert res.exit_code == 1, res.output
    assert_one_line_each(res.output)
    assert "Written: r\\n::error ::forged" in res.output


def test_error_messages(night):
    res = run("check", f"logs/missing{FORGED}.csv", "-r", "nz-table-games")
    assert res.exit_code == 2
    assert_one_line_each(res.output)
    assert res.output.startswith("error: logs/missing\\n::error ::forged")
    res = run("check", "logs", "-r", f"no-such{FORGED}")
    assert res.exit_code == 2
    assert_one_line_each(res.output)


def test_verify(night):
    assert run("check", "logs", "-r", "nz-table-games", "--out", "reports").exit_code == 1
    log = night / "logs" / FILE_NAME
    log.write_text(log.read_text().replace("no_stick", "stick"))
    res = run("verify", "reports")
    assert res.exit_code == 1, res.output
    assert_one_line_each(res.output)
    assert "input logs/night\\n::error ::forged\\u202e\\x0d.csv: changed" in res.output
    assert "T1\\n::error ::forged" in res.output  # the finding no longer found


def test_rulesets_commands(night):
    path = night / f"rules{FORGED}.toml"
    path.write_text(RULESET)
    for args in (("show", path), ("validate", path), ("show", "no-such" + FORGED)):
        res = run("rulesets", *args)
        assert res.exit_code in (0, 2), res.output
        assert_one_line_each(res.output)
    assert "Looks fine\\n::error ::forged" in run("rulesets", "show", path).output
