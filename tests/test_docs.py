"""The generated reference pages (docs/cli.md, docs/checks.md,
docs/parameters.md) are what `python -P tools/docs.py` writes from the code
now: a command, option, check or parameter changed without regenerating
them fails here."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("auditor_docs_tool", ROOT / "tools" / "docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()


def test_the_generated_pages_are_current():
    """Generated in a process of its own, as `python -P tools/docs.py` does:
    what other tests set up in this process (rulesets, commands loaded) must
    not enter the comparison."""
    done = subprocess.run([sys.executable, "-P", str(ROOT / "tools" / "docs.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_cli_page_names_every_option_of_every_command():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for path, command in GENERATOR._commands():
        assert f"## {' '.join(path)}\n" in text
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("-"):
                    assert opt in text, (path, opt)


def test_check_mode_names_a_stale_page(tmp_path, capsys):
    for name, render in GENERATOR.PAGES.items():
        (tmp_path / name).write_text(render(), encoding="utf-8")
    assert GENERATOR.stale(tmp_path) == []
    (tmp_path / "parameters.md").write_text("old\n", encoding="utf-8")
    assert GENERATOR.stale(tmp_path) == ["parameters.md"]


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_reaches_a_file_and_heading(page):
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target}"
        if anchor and linked.suffix == ".md":
            headings = re.findall(r"(?m)^#+ (.+)$", linked.read_text(encoding="utf-8"))
            assert anchor in {_anchor(h) for h in headings}, f"{page.name}: {target}"
