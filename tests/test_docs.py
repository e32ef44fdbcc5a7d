"""The generated reference pages (docs/cli.md, docs/checks.md,
docs/parameters.md) are what `python -P tools/docs.py` writes from the code
now: a command, option, check or parameter changed without regenerating
them fails here."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("auditor_docs_tool", ROOT / "tools" / "docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()


@pytest.mark.parametrize("name", sorted(GENERATOR.PAGES))
def test_the_generated_page_is_current(name):
    page = ROOT / "docs" / name
    assert page.read_text(encoding="utf-8") == GENERATOR.PAGES[name](), \
        f"docs/{name} is stale: run `python -P tools/docs.py`"


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
