"""`auditor verify` never reads a file of the user's kept in the report
folder (issue 28): a 4 GiB sparse file beside a standing report, under a
1 GiB address-space cap, leaves the report standing (with a note), where
reading it whole would have made it "no report"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from builder import run_cli as run

ROOT = Path(__file__).resolve().parents[2]
NIGHT = ROOT / "sample_logs" / "nz-1996" / "night-planted.jsonl"
CAP = 1 << 30

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="caps memory with RLIMIT_AS")


def verify_capped(folder: Path) -> subprocess.CompletedProcess:
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, "
            f"({CAP}, {CAP})); from auditor.__main__ import run; "
            f"sys.argv = ['auditor', 'verify', {str(folder)!r}]; run()")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.mark.parametrize("size", [4 << 30, 10])
def test_a_big_file_of_the_users_beside_a_report_is_not_read(tmp_path, size):
    out = tmp_path / "out"
    res = run("check", NIGHT, "--ruleset", "nz-1996", "--out", out)
    assert res.exit_code == 1, res.output
    with open(out / "notes.bin", "wb") as fh:  # sparse: no disk used
        fh.truncate(size)
    checked = verify_capped(out)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "notes.bin is not part of the report (not in its manifest)" in checked.stdout
