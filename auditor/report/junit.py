"""The `junit` format: `junit.xml` for CI dashboards.

One `<testsuite>` per table; in it one `<testcase>` per rule of the ruleset
(classname = table id, name = "rule id + code"); one `<failure>` per new
finding of that rule at that table (message = the finding's message, type =
its severity, text = status, code, clause, seq, ts, actor, evidence, source).
A rule whose findings at a table are all known or waived is `<skipped>`, and
those findings are listed in the test case's `<system-out>`. Counts: `tests`
test cases, `failures` test cases with a new finding, `skipped` test cases
with only known or waived findings, `errors` always 0.

Built with xml.etree.ElementTree, so `&`, `<`, `>` and quotes are escaped;
characters XML 1.0 cannot carry, other control characters and format
characters (bidirectional overrides) are written as visible `\\uXXXX`
text. Same inputs give the same bytes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from auditor.atomic import atomic_path
from auditor.escape import xml_text
from auditor.logs.site import shown_table
from auditor.report.json_format import inert_json
from auditor.report.records import (
    FindingStatus,
    finding_records,
    finding_statuses,
    rules_of,
    table_label,
)

NO_TABLE = "(no table)"


def _detail(rec: dict, status: str, waiver: dict | None) -> str:
    actor = " ".join(str(v) for v in (rec["actor_role"], rec["actor_id"]) if v) or "-"
    lines = [
        f"status: {status}",
        f"code: {rec['code']}",
        f"clause: {rec['clause']}",
        f"severity: {rec['severity']}",
        f"seq: {rec['seq'] if rec['seq'] is not None else '-'}",
        f"ts: {rec['ts'] or '-'}",
        f"event: {rec['event'] or '-'}",
        f"actor: {actor}",
        f"evidence: {inert_json(rec['evidence'])}",
        f"source: {rec['source_file']}:{rec['source_line']}",
        f"finding_id: {rec['finding_id']}",
    ]
    if waiver:
        lines.append(f"waiver: {waiver['number']}: {waiver['reason']}")
    return "\n".join(lines)


def junit_tree(result, meta: dict) -> ET.Element:
    findings = result.findings
    records = finding_records(findings)
    statuses = finding_statuses(findings)
    rules = [(r.id, r.code) for r in rules_of(result)]
    by_case: dict[tuple[str, str], list[tuple[dict, FindingStatus]]] = {}
    for rec, st in zip(records, statuses):
        by_case.setdefault((table_label(rec) or NO_TABLE, rec["rule_id"]), []).append(
            (rec, st))
    tables = sorted({shown_table(t) for t in result.tables}
                    | {t for t, _ in by_case if t != NO_TABLE})
    if any(t == NO_TABLE for t, _ in by_case):
        tables.append(NO_TABLE)
    extra_rules = sorted({(rec["rule_id"], rec["code"]) for rec in records} - set(rules))
    rules += extra_rules

    root = ET.Element("testsuites", {"name": xml_text(f"auditor {result.ruleset.id}")})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for table in tables:
        suite = ET.SubElement(root, "testsuite", {"name": xml_text(table)})
        props = ET.SubElement(suite, "properties")
        for name, value in (("ruleset", result.ruleset.id),
                            ("ruleset_hash", result.ruleset.content_hash),
                            ("auditor_version", meta.get("auditor_version", ""))):
            ET.SubElement(props, "property", {"name": name, "value": xml_text(value)})
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for rule_id, code in rules:
            case = ET.SubElement(suite, "testcase", {"classname": xml_text(table),
                                                     "name": xml_text(f"{rule_id} {code}")})
            counts["tests"] += 1
            hits = by_case.get((table, rule_id), [])
            new = [(rec, st) for rec, st in hits if st.status == "new"]
            other = [(rec, st) for rec, st in hits if st.status != "new"]
            for rec, st in new:
                fail = ET.SubElement(case, "failure", {"message": xml_text(rec["message"]),
                                                       "type": xml_text(rec["severity"])})
                fail.text = xml_text(_detail(rec, st.status, None))
            if new:
                counts["failures"] += 1
            elif other:
                n_known = sum(1 for _, st in other if st.status == "known")
                ET.SubElement(case, "skipped", {
                    "message": f"{n_known} known, {len(other) - n_known} waived finding(s)"})
                counts["skipped"] += 1
            if other:
                out = ET.SubElement(case, "system-out")
                out.text = xml_text("\n\n".join(
                    _detail(rec, st.status, st.waiver) for rec, st in other))
        for key, n in counts.items():
            suite.set(key, str(n))
            totals[key] += n
    for key, n in totals.items():
        root.set(key, str(n))
    return root


def junit_bytes(result, meta: dict) -> bytes:
    root = junit_tree(result, meta)
    ET.indent(root)
    return xml_bytes(root) + b"\n"


def xml_bytes(root: ET.Element) -> bytes:
    """The bytes of `ET.tostring(root, encoding="utf-8", xml_declaration=True)`,
    serialized as text and encoded once rather than through an encoder per
    write."""
    text = "<?xml version='1.0' encoding='utf-8'?>\n" + ET.tostring(root, encoding="unicode")
    return text.encode("utf-8", "xmlcharrefreplace")


def write(result, meta: dict, out: Path) -> list[str]:
    """The `junit` format: junit.xml."""
    target = out / "junit.xml"
    data = junit_bytes(result, meta)
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)
    return [str(target)]
