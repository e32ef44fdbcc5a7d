"""Each report format is declared once (`auditor.report.formats.REPORT_FORMATS`):
the files it says it writes are the files it writes, what may stand in a
report folder and what the manifest lists come from those declarations, and
a project configuration naming a format is checked against them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builder import lawful_table
from builder import run_cli as run

from auditor.report.formats import REPORT_FORMATS, STREAMABLE, WRITES_NO_FILE, parse_format
from auditor.report.manifest import MANIFEST_NAME, OWN_NAMES


def _breaches(folder: Path) -> Path:
    b = lawful_table()
    b.roll(2, 3, 4)
    b.call(8)  # the dice showed 7: a finding
    return b.write_csv(folder / "night.csv")


@pytest.mark.parametrize("name", [f for f in REPORT_FORMATS if REPORT_FORMATS[f].files])
def test_a_format_writes_the_files_it_declares(tmp_path, name):
    log = _breaches(tmp_path)
    out = tmp_path / "out"
    res = run("check", log, "-r", "nz-table-games", "--no-config", "--out", out,
              "--format", name, "--fail-on", "none")
    assert res.exit_code == 0, res.output
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted([*REPORT_FORMATS[name].files, MANIFEST_NAME])
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["formats"] == [name]
    assert sorted(f["name"] for f in manifest["files"]) == sorted(REPORT_FORMATS[name].files)


def test_a_format_without_files_prints_its_text_and_writes_no_folder(tmp_path):
    log = _breaches(tmp_path)
    for name in WRITES_NO_FILE:
        out = tmp_path / f"out-{name}"
        res = run("check", log, "-r", "nz-table-games", "--no-config", "--out", out,
                  "--format", name, "--fail-on", "none")
        assert res.exit_code == 0, res.output
        assert "call.wrong_total" in res.output
        assert not out.exists()


def test_what_a_report_folder_may_hold_is_what_the_formats_write():
    declared = {n for f in REPORT_FORMATS.values() for n in f.files}
    assert OWN_NAMES == declared | {MANIFEST_NAME}


def test_a_format_spec_is_read_once_for_the_command_line_and_the_configuration():
    assert parse_format("json") == ("json", False)
    assert parse_format("json:-") == ("json", True)
    assert parse_format("text") == ("text", True)  # no file: always the terminal
    assert set(WRITES_NO_FILE) <= set(STREAMABLE)
    with pytest.raises(ValueError, match="parquet cannot go to standard output"):
        parse_format("parquet:-")
    with pytest.raises(ValueError, match="'pdf' is not a format"):
        parse_format("pdf")


def test_a_configuration_naming_a_format_that_cannot_stream_names_the_file(
        tmp_path, monkeypatch):
    (tmp_path / "auditor.toml").write_text('formats = ["html:-"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = run("check", _breaches(tmp_path), "-r", "nz-table-games")
    assert res.exit_code == 2
    assert "auditor.toml" in res.output and "html cannot go to standard output" in res.output


def test_the_command_line_wins_over_the_configuration(tmp_path, monkeypatch):
    (tmp_path / "auditor.toml").write_text(
        'ruleset = "nz-1996"\nformats = ["csv"]\nout = "elsewhere"\nfail-on = "none"\n',
        encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    res = run("check", _breaches(tmp_path), "-r", "nz-table-games", "--format", "json",
              "--out", tmp_path / "here")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "here").iterdir()) == \
        sorted([*REPORT_FORMATS["json"].files, MANIFEST_NAME])
    assert not (tmp_path / "elsewhere").exists()
    summary = json.loads((tmp_path / "here" / "summary.json").read_text())
    assert summary["provenance"]["ruleset"]["id"] == "nz-table-games"
