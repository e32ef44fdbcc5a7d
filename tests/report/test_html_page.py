"""The HTML report's template, compiled when the package is built
(`auditor.report.page`, `setup.py`): the page read from that bytecode is the
page compiled afresh, byte for byte, and a file that no longer matches its
template, its jinja2 or its Python, or is damaged, is passed over."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from builder import audit
from jinja2 import Environment

from auditor.report import html as html_report
from auditor.report import page
from auditor.report.provenance import provenance

ROOT = Path(__file__).resolve().parents[2]
PLANTED = ROOT / "sample_logs" / "nz-table-games" / "night-planted.csv"


@pytest.fixture(scope="module")
def context() -> dict:
    """What the page of the planted NZ night is rendered with."""
    result = audit([PLANTED], "nz-table-games")
    return {**html_report.report_context(result, provenance(result)),
            **html_report._template()[1]}


@pytest.fixture
def folder(tmp_path) -> Path:
    """The page's template files alone (no bytecode), in a folder of their own."""
    for name in ("report.html", "finding.html", "report.css", "report.js"):
        shutil.copy(page.TEMPLATES / name, tmp_path / name)
    return tmp_path


@pytest.fixture
def compiles(monkeypatch) -> list[str]:
    """The names of the templates jinja compiles from source, as it does."""
    names: list[str] = []
    compile_ = Environment.compile

    def counted(self, source, name=None, filename=None, raw=False, defer_init=False):
        names.append(name)
        return compile_(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(Environment, "compile", counted)
    return names


def _render(folder: Path, context: dict) -> str:
    return page.environment(folder).get_template(page.PAGE).render(**context)


def test_the_page_from_the_built_bytecode_is_the_page_compiled_afresh(folder, context,
                                                                      compiles):
    fresh = _render(folder, context)
    assert compiles == [page.PAGE, page.FINDING]  # (the page imports the findings' macros)
    written = page.write_all_compiled(folder)
    assert written == [page.compiled_path(folder, name) for name in page.TEMPLATE_NAMES]
    assert all(path.stat().st_size > 0 for path in written)
    compiles.clear()
    assert _render(folder, context) == fresh
    assert compiles == []  # read, not compiled


def test_a_template_changed_after_the_build_is_compiled_again(folder, context, compiles):
    page.write_all_compiled(folder)
    template = folder / page.PAGE
    template.write_text(template.read_text(encoding="utf-8") + "changed\n", encoding="utf-8")
    compiles.clear()
    assert _render(folder, context).endswith("changed\n")
    assert compiles == [page.PAGE]


def test_a_changed_findings_template_is_compiled_again(folder, context, compiles):
    page.write_all_compiled(folder)
    fresh = _render(folder, context)
    template = folder / page.FINDING
    source = template.read_text(encoding="utf-8")
    template.write_text(source.replace('<div class="finding-body">',
                                       '<div class="finding-body changed">'), encoding="utf-8")
    compiles.clear()
    changed = _render(folder, context)
    assert compiles == [page.FINDING]
    assert changed.count("finding-body changed") == fresh.count('"finding-body"') > 0


@pytest.mark.parametrize("spoil", ["other jinja2", "damaged", "empty"])
def test_bytecode_of_another_jinja2_or_damaged_is_passed_over(folder, context, compiles,
                                                               spoil):
    fresh = _render(folder, context)
    written = page.write_all_compiled(folder)[0]  # (the page's own)
    data = written.read_bytes()
    if spoil == "other jinja2":
        written.rename(written.with_name(written.name.replace("jinja2-", "jinja2-0.0.")))
    elif spoil == "damaged":  # the header and the checksum intact, the code cut short
        written.write_bytes(data[:len(data) // 2])
    else:
        written.write_bytes(b"")
    compiles.clear()
    assert _render(folder, context) == fresh
    assert compiles == [page.PAGE]


def test_nothing_is_written_at_run_time(folder, context):
    _render(folder, context)
    assert sorted(p.name for p in folder.iterdir()) == ["finding.html", "report.css",
                                                        "report.html", "report.js"]
