"""The pre-commit hook (`.pre-commit-hooks.yaml`'s `auditor-check`) audits
only the files a commit changes: the second hour of a night is audited
without the first. Run with the real `pre-commit` in a scratch repository
(the hook as the manifest declares it: its files pattern, its arguments,
the filenames passed; its entry run by this interpreter, so that no
environment is installed): the lawful second hour passes (the table starts
mid-session: nothing is raised for want of the first hour), and the same
hour with a wrong call planted is refused, naming it."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_mid_session import _halves

yaml = pytest.importorskip("yaml")
PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or \
    shutil.which("pre-commit")
pytestmark = pytest.mark.skipif(PRE_COMMIT is None or shutil.which("git") is None,
                                reason="needs the pre-commit package and git")
MANIFEST = Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = _env(tmp_path)
    for args in (["init", "-q"], ["config", "user.email", "a@example.org"],
                 ["config", "user.name", "A"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    [hook] = yaml.safe_load(MANIFEST.read_text())
    entry = shlex.split(hook["entry"])
    assert entry[0] == "auditor"
    local = {**{k: v for k, v in hook.items() if k not in ("language", "entry")},
             "language": "system",
             "entry": shlex.join([sys.executable, "-P", "-m", "auditor", *entry[1:]])}
    (repo / ".pre-commit-config.yaml").write_text(
        yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}))
    (repo / "auditor.toml").write_text('ruleset = "nz-table-games"\nout = "../reports"\n')
    return repo


def _env(tmp_path: Path) -> dict:
    env = dict(os.environ)
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    env.pop("NO_COLOR", None)
    return env


def _commit_run(repo: Path, tmp_path: Path, log: Path) -> subprocess.CompletedProcess:
    target = repo / "logs" / log.name
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(log, target)
    subprocess.run(["git", "add", ".pre-commit-config.yaml", "auditor.toml", str(target)],
                   cwd=repo, check=True, env=_env(tmp_path))
    return subprocess.run([PRE_COMMIT, "run", "--files", f"logs/{log.name}"], cwd=repo,
                          capture_output=True, text=True, env=_env(tmp_path), timeout=300,
                          check=False)


def test_the_second_hour_alone_passes_the_hook(tmp_path):
    _, second, _ = _halves(tmp_path)
    done = _commit_run(_repo(tmp_path), tmp_path, second)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Passed" in done.stdout


def test_a_wrong_call_in_the_second_hour_is_refused(tmp_path):
    _, second, _ = _halves(tmp_path, plant=True)
    done = _commit_run(_repo(tmp_path), tmp_path, second)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Failed" in done.stdout
    assert "FAIL: 1 finding(s) at or above major" in done.stdout
