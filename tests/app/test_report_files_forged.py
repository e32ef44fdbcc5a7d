"""Report files edited and their manifest hashed again (whoever can edit the
folder can): `verify`, `trend` and `baseline create` read each of them as
a file the auditor may not have written, and refuse what it never writes
with one line, never an internal error. Found by mutating a report's files
(2026-12-07): a Parquet file whose column names are not UTF-8 (Arrow
reads it, then raises as a name is asked for) stopped all three with
`UnicodeDecodeError`; a manifest whose provenance names no ruleset stopped
`trend` with `AttributeError`."""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builder import audited_night
from builder import run_cli as run


@pytest.fixture
def report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return audited_night(tmp_path)


def _rewrite(report, name: str, data: bytes) -> None:
    """`name` replaced by `data`, the manifest's entry for it hashed again."""
    (report / name).write_bytes(data)
    path = report / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for entry in manifest["files"]:
        if entry["name"] == name:
            entry["sha256"], entry["size"] = hashlib.sha256(data).hexdigest(), len(data)
    path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def _name_not_utf8(report, name: str, column: str) -> None:
    """`column`'s name in the footer's schema (the first place the footer
    names it) with its fourth byte FF."""
    data = (report / name).read_bytes()
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    at = data.index(column.encode(), footer)
    _rewrite(report, name, data[:at + 3] + b"\xff" + data[at + 4:])


def _no_internal_error(res) -> list[str]:
    assert "internal error" not in res.output and "Traceback" not in res.output, res.output
    return res.output.splitlines()


def test_verify_says_findings_whose_column_names_are_not_utf8_are_unreadable(report):
    _name_not_utf8(report, "findings.parquet", "caveat")
    res = run("verify", report)
    lines = _no_internal_error(res)
    assert res.exit_code == 1
    assert (f"  - {report}/findings.parquet: not a readable Parquet file: a column name is not "
            f"UTF-8 text (invalid start byte at byte 3)") in lines, lines


def test_verify_says_a_quarantine_whose_column_names_are_not_utf8_is_unreadable(report):
    _name_not_utf8(report, "quarantine.parquet", "reason")
    res = run("verify", report)
    lines = _no_internal_error(res)
    assert res.exit_code == 1
    assert any(ln.startswith(f"  - {report}/quarantine.parquet: not readable: a column name "
                             f"is not UTF-8 text") for ln in lines), lines


def test_a_baseline_is_not_made_of_findings_whose_column_names_are_not_utf8(report):
    _name_not_utf8(report, "findings.parquet", "caveat")
    res = run("baseline", "create", "--from", report / "findings.parquet", "--out", "b.json")
    assert _no_internal_error(res) == [
        (f"error: {report}/findings.parquet: not a findings.parquet: a column name is not "
        f"UTF-8 text (invalid start byte at byte 3)")]
    assert res.exit_code == 2


def test_trend_refuses_rollups_whose_column_names_are_not_utf8(report):
    _name_not_utf8(report, "rollups.parquet", "rolls")
    res = run("trend", report, "--out", "trend")
    assert _no_internal_error(res) == [
        (f"error: {report}: refused, it does not match its manifest: {report}/rollups.parquet: "
         f"not a readable Parquet file: a column name is not UTF-8 text (invalid start byte "
         f"at byte 3)")]
    assert res.exit_code == 2


def _rollups_provenance(report, edit) -> None:
    """The provenance of the roll-ups, findings, quarantine and manifest all
    edited alike (and the roll-ups' own block)."""
    for name in ("rollups.parquet", "findings.parquet", "quarantine.parquet"):
        table = pq.read_table(report / name)
        meta = dict(table.schema.metadata)
        provenance = json.loads(meta[b"auditor"])
        extra = json.loads(meta.get(b"auditor_rollups", b"{}"))
        edit(provenance, extra)
        meta[b"auditor"] = json.dumps(provenance)
        if name == "rollups.parquet":
            meta[b"auditor_rollups"] = json.dumps(extra)
        sink = pa.BufferOutputStream()
        pq.write_table(table.replace_schema_metadata(meta), sink)
        _rewrite(report, name, sink.getvalue().to_pybytes())
    path = report / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["provenance"] = provenance
    path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def _ruleset(value):
    def edit(provenance, extra):
        provenance["ruleset"] = value
    return edit


def _period(value):
    def edit(provenance, extra):
        extra["period"] = value
    return edit


@pytest.mark.parametrize(("edit", "problem"), [
    (_ruleset("x"), "manifest.json: refused, its provenance names no ruleset (id, content_hash)"),
    (_ruleset({"id": 7, "content_hash": "sha256:0"}),
     "manifest.json: refused, its provenance names no ruleset (id, content_hash)"),
    (_period("2026"), ("rollups.parquet: refused, its period is not one the auditor writes "
                      "(two dates, or none)")),
    (_period([1, 2]), ("rollups.parquet: refused, its period is not one the auditor writes "
                      "(two dates, or none)")),
])
def test_trend_refuses_a_provenance_it_never_writes(report, edit, problem):
    _rollups_provenance(report, edit)
    res = run("trend", report, "--out", "trend")
    assert _no_internal_error(res) == [f"error: {report}/{problem}"]
    assert res.exit_code == 2


def test_trend_refuses_a_manifest_whose_provenance_is_not_its_files(report):
    path = report / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["provenance"]["ruleset"]["id"] = "nz-1996"
    path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    res = run("trend", report, "--out", "trend")
    assert _no_internal_error(res) == [
        (f"error: {report}: refused, it does not match its manifest: findings.parquet: its "
         f"provenance differs from the manifest's (in ruleset.id) (and 2 more)")]
    assert res.exit_code == 2


def _rollups_only(report) -> None:
    """rollups.parquet's provenance alone names another ruleset (the file
    hashed again in the manifest)."""
    table = pq.read_table(report / "rollups.parquet")
    meta = dict(table.schema.metadata)
    provenance = json.loads(meta[b"auditor"])
    provenance["ruleset"]["id"] = "nz-1996"
    meta[b"auditor"] = json.dumps(provenance)
    sink = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(meta), sink)
    _rewrite(report, "rollups.parquet", sink.getvalue().to_pybytes())


def test_trend_and_verify_refuse_roll_ups_of_another_provenance(report):
    _rollups_only(report)
    res = run("trend", report, "--out", "trend")
    assert _no_internal_error(res) == [
        (f"error: {report}: refused, it does not match its manifest: rollups.parquet: its "
         f"provenance differs from the manifest's (in ruleset.id)")]
    assert res.exit_code == 2
    res = run("verify", report)
    assert res.exit_code == 1
    assert "  - rollups.parquet: its provenance differs from the manifest's (in ruleset.id)" \
        in _no_internal_error(res)


def test_trend_of_the_unedited_report_charts_it(report):
    res = run("trend", report, "--out", "trend")
    assert res.exit_code == 0, res.output
    assert res.output.startswith("1 report(s) charted.")


def test_verify_says_an_emptied_quarantine_is_not_readable(report):
    _rewrite(report, "quarantine.parquet", b"")
    res = run("verify", report)
    assert res.exit_code == 1
    assert any(ln.startswith(f"  - {report}/quarantine.parquet: not a readable Parquet file")
               for ln in _no_internal_error(res)), res.output


def test_a_provenance_differing_only_in_the_version_is_named_so(report):
    table = pq.read_table(report / "rollups.parquet")
    meta = dict(table.schema.metadata)
    provenance = json.loads(meta[b"auditor"])
    provenance["auditor_version"] = "0.0.1"
    meta[b"auditor"] = json.dumps(provenance)
    sink = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(meta), sink)
    _rewrite(report, "rollups.parquet", sink.getvalue().to_pybytes())
    res = run("verify", report)
    assert res.exit_code == 1
    assert "  - rollups.parquet: its provenance differs from the manifest's (in " \
        "auditor_version)" in _no_internal_error(res), res.output
