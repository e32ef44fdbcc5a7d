"""Commands are imported when run, not at start-up: `auditor check` does not
compile and import the generator, verify or the ruleset tools."""

import subprocess
import sys

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
