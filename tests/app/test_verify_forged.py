"""`auditor verify` of a report whose manifest was edited into shapes the
auditor never writes: every edit is a difference (exit 1) named in one
line, never an internal error. Found by replacing each value of a
manifest in turn (2026-12-07): a provenance whose `read_options`,
`inputs`, `rows`, `statuses` or `verdict` held another kind of value
stopped verify with a TypeError, AttributeError, KeyError or a template's
UndefinedError; the manifest's own `manifest_version`, `auditor_version`
and `options` could be edited unseen."""

from __future__ import annotations

import json

import pytest
from builder import audited_night
from builder import run_cli as run


@pytest.fixture
def report(tmp_path, monkeypatch):
    """A night with findings, audited into reports/ with every file format."""
    monkeypatch.chdir(tmp_path)
    return audited_night(tmp_path, "parquet", "json", "html", "sarif", "junit", "csv")


def _edit(report, edit) -> None:
    path = report / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    edit(manifest)
    path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def _verified(report) -> tuple[int, list[str]]:
    res = run("verify", report)
    assert "internal error" not in res.output and "Traceback" not in res.output, res.output
    return res.exit_code, [ln.removeprefix("  - ") for ln in res.output.splitlines()]


def test_the_unedited_report_stands(report):
    code, lines = _verified(report)
    assert code == 0, lines
    assert lines[0].startswith("report stands: 1 input(s) unchanged")


def _provenance(key, value):
    def edit(manifest):
        manifest["provenance"][key] = value
    return edit


def _verdict_fail_on(manifest):
    manifest["provenance"]["verdict"]["fail_on"] = "catastrophic"


@pytest.mark.parametrize(("edit", "problem"), [
    (_provenance("read_options", [1]),
     ("provenance: read_options [1]: not options the auditor records (encoding, "
     "assume_offset, columns)")),
    (_provenance("read_options", {"bogus": 1}),
     ('provenance: read_options {"bogus": 1}: not options the auditor records (encoding, '
     'assume_offset, columns)')),
    (_provenance("read_options", {"encoding": 5}),
     ('provenance: read_options {"encoding": 5}: not options the auditor records (encoding, '
     'assume_offset, columns)')),
    (_provenance("read_options", {"columns": "zz"}),
     ('provenance: read_options {"columns": "zz"}: not options the auditor records '
     '(encoding, assume_offset, columns)')),
    (_provenance("read_options", {"assume_offset": "+99:99"}),
     ("provenance: --assume-offset +99:99: write a UTC offset as +HH:MM or -HH:MM "
     "(e.g. +13:00)")),
    (_provenance("inputs", [1]),
     "provenance: inputs is not a list of inputs, each with its path"),
    (_provenance("statuses", "x"),
     "provenance: statuses does not name a baseline and waivers as the auditor records them"),
    (_provenance("verdict", [1]), "provenance: verdict is not a verdict the auditor records"),
    (_verdict_fail_on, "provenance: verdict is not a verdict the auditor records"),
    (_provenance("not_audited", "x"), "provenance: not_audited is not a list of files"),
])
def test_a_provenance_the_rerun_cannot_read_is_a_difference(report, edit, problem):
    _edit(report, edit)
    code, lines = _verified(report)
    assert code == 1
    assert problem in lines, lines
    assert lines[-1] == "the audit was not re-run from that provenance"


@pytest.mark.parametrize(("key", "value", "where"), [
    ("rows", None, "rows"),
    ("rows", {}, "rows.quarantined, rows.read, rows.replayed"),
    ("tables", [1], "tables[0]"),
    ("findings", {"total": "3", "by_severity": {}},
     ("findings.by_severity.critical, findings.by_severity.info, findings.by_severity.major, "
     "findings.by_severity.minor, findings.total")),
])
def test_a_provenance_of_another_shape_is_not_rendered_from(report, key, value, where):
    _edit(report, _provenance(key, value))
    code, lines = _verified(report)
    assert code == 1
    assert lines[-1] == (f"provenance: {where} not of the kind the auditor writes there; "
                         f"the formats were not rendered again from it"), lines


def _set(key, value):
    def edit(manifest):
        manifest[key] = value
    return edit


@pytest.mark.parametrize(("edit", "problem"), [
    (_set("manifest_version", 2), ("manifest.json: manifest_version 2; this auditor writes "
                                  "and reads 1")),
    (_set("manifest_version", True), ("manifest.json: manifest_version true; this auditor "
                                     "writes and reads 1")),
    (_set("auditor_version", "9.9.9"), ('manifest.json: auditor_version "9.9.9", not its '
                                       "provenance's")),
    (_set("options", "x"), ('manifest.json: options "x" are not options of the formats it '
                           'names')),
    (_set("options", {"sarif": {"max_results": 25000, "bogus": 1}}),
     ('manifest.json: options {"sarif": {"max_results": 25000, "bogus": 1}} are not options '
     'of the formats it names')),
    (_set("options", {"github": {"max_results": 5}}),
     ('manifest.json: options {"github": {"max_results": 5}} are not options of the '
     'formats it names')),
])
def test_the_manifests_own_fields_edited_are_a_difference(report, edit, problem):
    _edit(report, edit)
    code, lines = _verified(report)
    assert code == 1
    assert problem in lines, lines
