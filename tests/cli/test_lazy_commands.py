"""Commands are imported when run, not at start-up: `auditor check` does not
compile and import the generator, verify or the ruleset tools."""

import subprocess
import sys

from builder import lawful_table
from click.testing import CliRunner

from auditor.cli import COMMANDS, main


def test_check_imports_no_other_command(tmp_path):
    code = ("import sys\n"
            "from auditor.cli import main\n"
            "try:\n"
            "    main(['check', '--help'], standalone_mode=False)\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('auditor'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert "auditor.cli.check_cmd" in out
    for unused in ("auditor.cli.generate_cmd", "auditor.generate", "auditor.cli.verify_cmd",
                   "auditor.app.verify", "auditor.cli.rulesets_cmd", "auditor.rules.describe",
                   "auditor.cli.baseline_cmd", "auditor.run.dask_engine"):
        assert unused not in out, unused


def test_every_command_is_listed_and_runs():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert f"  {name} " in result.output, name
        assert CliRunner().invoke(main, [name, "--help"]).exit_code == 0, name


def test_an_unknown_command_is_an_error():
    result = CliRunner().invoke(main, ["chek"])
    assert result.exit_code == 2
    assert "No such command 'chek'" in result.output


def _modules_after_check(tmp_path, *formats: str) -> set[str]:
    """The modules loaded by `auditor check` of a small log writing `formats`."""
    tmp_path.mkdir()
    log = lawful_table().write_csv(tmp_path / "night.csv")
    args = ["check", str(log), "-r", "nz-table-games", "--out", str(tmp_path / "out")]
    for name in formats:
        args += ["--format", name]
    code = ("import sys\n"
            "from auditor.cli import main\n"
            "try:\n"
            f"    main({args!r}, standalone_mode=False)\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(' '.join(sorted(sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return set(proc.stdout.split())


def test_the_html_page_modules_load_only_for_the_page(tmp_path):
    """jinja2 and the page's modules are some 40 ms of a start: a run that
    writes no page does not load them; one that writes it does."""
    without = _modules_after_check(tmp_path / "a", "parquet", "json")
    assert (tmp_path / "a" / "out" / "findings.parquet").exists()
    assert not {"jinja2", "auditor.report.html", "auditor.report.html_events"} & without
    with_page = _modules_after_check(tmp_path / "b", "html")
    assert (tmp_path / "b" / "out" / "report.html").exists()
    assert {"jinja2", "auditor.report.html", "auditor.report.html_events"} <= with_page
