"""The pre-commit recipes of docs/ci.md, run by the real `pre-commit` in a
scratch git repository: a commit of a night with planted breaches is
refused, the clean night passes. The recipe that names this repository is
pinned to this checkout's commit (pre-commit clones it and pip-installs the
auditor from it: a minute or two, with the machine's pip configuration);
the `repo: local` recipe uses the auditor installed here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pre_commit")
yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
NIGHTS = ROOT / "sample_logs" / "nz-table-games"


def _recipes() -> list[str]:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    return [b for b in re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
            if b.startswith("# .pre-commit-config.yaml")]


def _head() -> str | None:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def _repository(tmp_path: Path, recipe: str) -> tuple[Path, dict]:
    repo = tmp_path / "project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for night in ("night-planted.csv", "night-clean.csv"):
        shutil.copy(NIGHTS / night, repo / night)
    (repo / "auditor.toml").write_text(
        f'ruleset = "nz-table-games"\nout = "{(tmp_path / "reports").as_posix()}"\n',
        encoding="utf-8")
    (repo / ".pre-commit-config.yaml").write_text(recipe, encoding="utf-8")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return repo, env


def _pre_commit(repo: Path, env: dict, night: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--files", night],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=1200,
                          check=False)


def _refuses_the_planted_night_and_passes_the_clean_one(repo, env):
    planted = _pre_commit(repo, env, "night-planted.csv")
    assert planted.returncode == 1, planted.stdout + planted.stderr
    assert "auditor check (craps event logs)" in planted.stdout and "Failed" in planted.stdout
    assert "FAIL: 42 finding(s) at or above major" in planted.stdout
    clean = _pre_commit(repo, env, "night-clean.csv")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Passed" in clean.stdout


def test_docs_offer_the_two_recipes_for_the_hook_this_repository_defines():
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    pinned, local = (yaml.safe_load(r)["repos"][0] for r in _recipes())
    assert re.fullmatch(r"[0-9a-f]{40}", pinned["rev"])  # a commit: the repository has no tags
    assert pinned["hooks"][0]["id"] == hook["id"]
    assert local["repo"] == "local" and local["hooks"][0]["entry"] == hook["entry"]
    assert local["hooks"][0]["files"] == hook["files"]


@pytest.mark.slow
def test_the_local_recipe_refuses_a_commit_with_breaches(tmp_path):
    recipe = _recipes()[1]
    _refuses_the_planted_night_and_passes_the_clean_one(*_repository(tmp_path, recipe))


@pytest.mark.slow
@pytest.mark.skipif(_head() is None, reason="not a git checkout: no commit to pin")
def test_the_recipe_pinned_to_a_commit_of_this_repository_installs_and_refuses(tmp_path):
    recipe = _recipes()[0]
    recipe = re.sub(r"(?m)^(\s+- repo: )\S+.*$", rf"\g<1>{ROOT.as_posix()}", recipe)
    recipe = re.sub(r"(?m)^(\s+rev: )\S+.*$", rf"\g<1>{_head()}", recipe)
    _refuses_the_planted_night_and_passes_the_clean_one(*_repository(tmp_path, recipe))
