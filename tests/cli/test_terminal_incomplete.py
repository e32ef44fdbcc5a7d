"""Nothing not evaluated hides on a terminal: a night whose `flags` column is
written `flag` is audited on a pseudo-terminal (as a person at a terminal
runs it); the verdict line says PASS — incomplete, painted as a warning,
with the rules not evaluated beside it, never a plain green PASS. The lawful
twin, the same night with its header right, is a plain green PASS."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

NIGHT = Path(__file__).resolve().parents[2] / "sample_logs" / "nz-table-games" / \
    "night-clean.csv"
GREEN_PASS = "\x1b[1;32mPASS\x1b[0m"
WARNING = "\x1b[1;33m"


def on_a_terminal(*args, cwd: Path) -> tuple[int, str]:
    """`python -P -m auditor ARGS...` with its standard output (and error) a
    pseudo-terminal: its exit status and everything it printed."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["COLUMNS"] = "200"
    proc = subprocess.Popen([sys.executable, "-P", "-m", "auditor", *map(str, args)],
                            stdin=subprocess.DEVNULL, stdout=follower, stderr=follower,
                            cwd=cwd, env=env)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            proc.kill()
            pytest.fail("the auditor printed nothing for 120 s")
        try:
            data = os.read(leader, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


def _night(tmp_path: Path, header_flags: str) -> Path:
    lines = NIGHT.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].replace(",flags", f",{header_flags}")
    path = tmp_path / "night.csv"
    path.write_text(header + "".join(lines[1:]), encoding="utf-8")
    return path


def test_a_misspelled_column_is_never_a_plain_green_pass_on_a_terminal(tmp_path):
    log = _night(tmp_path, "flag")
    status, shown = on_a_terminal("check", log, "-r", "nz-table-games", "--out",
                                  tmp_path / "r", "--no-config", cwd=tmp_path)
    assert status == 0, shown
    assert GREEN_PASS not in shown
    verdict = next(line for line in shown.splitlines() if "PASS" in line)
    assert verdict.startswith(WARNING + "PASS — incomplete: 7 rule(s) not evaluated "
                              "(column `flags` absent); no findings at or above major")
    assert "NOT EVALUATED: 7 rule(s) in 1 file(s): column `flags` absent" in shown
    assert "R6.4-mandatory-no-roll" in shown


def test_the_lawful_twin_is_a_plain_pass_on_a_terminal(tmp_path):
    log = _night(tmp_path, "flags")
    status, shown = on_a_terminal("check", log, "-r", "nz-table-games", "--out",
                                  tmp_path / "r", "--no-config", cwd=tmp_path)
    assert status == 0, shown
    assert GREEN_PASS + ": no findings at or above major" in shown
    assert "incomplete" not in shown and "NOT EVALUATED" not in shown


def test_the_text_format_says_it_too_off_a_terminal(tmp_path):
    log = _night(tmp_path, "flag")
    done = subprocess.run([sys.executable, "-P", "-m", "auditor", "check", str(log), "-r",
                           "nz-table-games", "--out", str(tmp_path / "r"), "--no-config",
                           "--format", "text", "--format", "junit", "--format", "sarif"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "PASS — incomplete: 7 rule(s) not evaluated (column `flags` absent)" in done.stdout
    junit = (tmp_path / "r" / "junit.xml").read_text()
    assert 'name="incomplete" value="PASS — incomplete: 7 rule(s) not evaluated' in junit
    sarif = (tmp_path / "r" / "findings.sarif").read_text()
    assert sarif.count('"id": "not_evaluated"') == 7
