"""Every example runs as written, with the exit code it documents.

- Each `--help` text's examples (the lines under "Example:") run in order in
  one scratch folder holding the shipped files (sample_logs/, rulesets/,
  docs/), as a user in a checkout would run them. An example that names a
  file that is not there (the reader's own `night.csv.gz`, `year/`) and
  that no earlier example of the same text wrote is shown, not run.
- Each ```sh block of README.md, docs/*.md and the READMEs of sample_logs/
  and rulesets/cases/ runs whole as a bash script,
  the blocks of one page in order in one scratch folder. Commands showing
  the reader's own files are written in ```text blocks instead.

A command's documented exit code is a trailing comment ending `exits N`
(`# exits 1`, `# 56 findings, exit 1`; default 0). In README's set-up lines, the set-up itself (`python3 -m venv`,
`. .venv/bin/activate`, `pip install`, the test command) is left to
`.ci/run`, which runs it in a fresh virtual environment; the `auditor`
commands chained after it run here."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from auditor.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("sample_logs", "rulesets", "docs")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
         ROOT / "sample_logs" / "README.md", ROOT / "rulesets" / "cases" / "README.md"]
EXITS = re.compile(r"\s+#[^#\n]*\bexits?\s+(\d+)\s*$")
SETUP = ("python3 -m venv", ". .venv/bin/activate", "pip install", "python -P -m pytest",
         "python -m pip")
OUTPUT_OPTIONS = ("--out", "-o", ">")
PATHLIKE = re.compile(r"/|\.(csv|gz|parquet|jsonl|ndjson|toml|json|html|md)$")

pytestmark = pytest.mark.slow


def _scratch(tmp_path: Path) -> Path:
    for name in SHIPPED:
        shutil.copytree(ROOT / name, tmp_path / name)
    return tmp_path


def _environment() -> dict[str, str]:
    """The installed `auditor` script first on PATH; no colour, no config."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CLICOLOR_FORCE")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    return env


def _as_script(lines: list[str]) -> str:
    """A block's lines as a bash script that stops at the first command whose
    exit code is not the one documented."""
    out = ["set -eu"]
    for line in lines:
        segments = line.split(" && ")
        if any(line.startswith(s) for s in SETUP):
            kept = [s for s in segments if not s.startswith(SETUP)]
            if not kept:
                continue
            line = " && ".join(kept)
        match = EXITS.search(line)
        if match:
            command, code = line[:match.start()], match.group(1)
            out.append(f"{command} && rc=0 || rc=$?; if [ $rc -ne {code} ]; then "
                       f"echo \"exit $rc, documented {code}: \"{shlex.quote(command)} >&2; "
                       f"exit 99; fi")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _blocks(page: Path) -> list[tuple[int, list[str]]]:
    """The ```sh blocks of a page: (line number, lines)."""
    blocks, current, start = [], None, 0
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if current is None and line.strip() == "```sh":
            current, start = [], number
        elif current is not None and line.strip() == "```":
            blocks.append((start, current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def _run(script: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=_environment(),
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_sh_block_of_the_page_runs_with_its_documented_exit_codes(page, tmp_path):
    cwd = _scratch(tmp_path)
    for start, lines in _blocks(page):
        result = _run(_as_script(lines), cwd)
        assert result.returncode == 0, (f"{page.name}:{start}: {result.stderr[-2000:]}"
                                        f"{result.stdout[-2000:]}")


def test_the_readme_opens_with_its_two_set_up_commands_in_a_venv():
    blocks = _blocks(ROOT / "README.md")
    first = blocks[0][1]
    assert first[0].startswith("python3 -m venv .venv && . .venv/bin/activate && pip install . "
                               "&& auditor check sample_logs/")
    assert first[1].startswith("python3 -m venv .venv && . .venv/bin/activate && "
                               "pip install '.[test]' && python -P -m pytest")


def _help_examples() -> list[tuple[str, list[str]]]:
    found = []

    def walk(path, command, ctx):
        text = command.get_help(ctx)
        if "Example:" in text:
            lines, joined = [], ""
            for line in text.split("Example:", 1)[1].splitlines()[1:]:
                if not line.startswith("      "):
                    break
                joined += line.strip()
                if joined.endswith("\\"):
                    joined = joined[:-1]
                    continue
                lines.append(joined)
                joined = ""
            found.append((" ".join(path), lines))
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                walk([*path, name], sub, click.Context(sub, info_name=name, parent=ctx))

    walk(["auditor"], main, click.Context(main, info_name="auditor"))
    return found


HELP_EXAMPLES = _help_examples()


def _names_missing_input(command: str, cwd: Path) -> bool:
    words = shlex.split(EXITS.sub("", command))
    for before, word in zip(["", *words], words):
        if before in OUTPUT_OPTIONS or word.startswith("-") or not PATHLIKE.search(word):
            continue
        if not (cwd / word).exists():
            return True
    return False


@pytest.mark.parametrize("name,examples", HELP_EXAMPLES, ids=[n for n, _ in HELP_EXAMPLES])
def test_every_help_example_on_shipped_files_runs_with_its_documented_exit_code(
        name, examples, tmp_path):
    cwd = _scratch(tmp_path)
    ran = []
    for example in examples:
        if _names_missing_input(example, cwd):
            continue
        result = _run(_as_script([example]), cwd)
        assert result.returncode == 0, f"{name}: {example}: {result.stderr[-2000:]}"
        ran.append(example)
    assert ran, f"{name}: no example runs on the shipped files"
