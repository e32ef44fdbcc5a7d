"""The `sarif` format: `findings.sarif`, SARIF 2.1.0 for code-scanning
dashboards.

One run. `tool.driver` is the auditor, its `rules` the ruleset's rules (id,
summary, the code's meaning from the violation catalogue, clause, code and
severity). One result per finding: level by severity (critical and major
are errors, minor warnings, info notes), the log file and line as its
location, the finding id as a partial fingerprint, table, seq, evidence and
status as properties. With a baseline, `baselineState` is "unchanged" for a
known finding and "new" otherwise; a waived finding carries an external,
accepted suppression whose justification is the waiver's reason.

JSON-escaped like the `json` format (ASCII only, `<`, `>`, `&` escaped).
Same inputs give the same bytes.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from urllib.parse import quote

from auditor import __version__
from auditor.atomic import write_text
from auditor.codes import CODES
from auditor.report.json_format import inert_json
from auditor.report.records import finding_records, finding_statuses, rules_of

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
LEVELS = {"critical": "error", "major": "error", "minor": "warning", "info": "note"}
FINGERPRINT = "auditorFindingId/v1"


def artifact_uri(path: str) -> str:
    """A log's path as a URI reference: a relative path stays relative (with
    `/` separators, percent-encoded), an absolute one becomes a file: URI."""
    posix = str(path).replace("\\", "/")
    if PurePosixPath(posix).is_absolute():
        return "file://" + quote(posix, safe="/")
    if len(posix) > 1 and posix[1] == ":":  # a Windows drive letter
        return "file:///" + posix[:2] + quote(posix[2:], safe="/")
    return quote(posix, safe="/")


def _rule(rule) -> dict:
    meaning = CODES.get(rule.code, rule.code)
    return {
        "id": rule.id,
        "shortDescription": {"text": rule.summary or meaning},
        "fullDescription": {"text": meaning},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"clause": rule.clause, "code": rule.code, "severity": rule.severity},
    }


def sarif_log(result, meta: dict) -> dict:
    findings = result.findings
    rules = [_rule(r) for r in rules_of(result)]
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for rec, (status, in_baseline, waiver) in zip(finding_records(findings),
                                                  finding_statuses(findings)):
        res = {"ruleId": rec["rule_id"]}
        if rec["rule_id"] in index:
            res["ruleIndex"] = index[rec["rule_id"]]
        res["level"] = LEVELS[rec["severity"]]
        res["message"] = {"text": rec["message"] or rec["code"]}
        if rec["source_file"]:
            loc = {"artifactLocation": {"uri": artifact_uri(rec["source_file"])}}
            if rec["source_line"] is not None and rec["source_line"] >= 1:
                loc["region"] = {"startLine": rec["source_line"]}
            res["locations"] = [{"physicalLocation": loc}]
        res["partialFingerprints"] = {FINGERPRINT: rec["finding_id"]}
        if in_baseline is not None:  # the audit had a baseline
            res["baselineState"] = "unchanged" if in_baseline else "new"
        if status == "waived":
            waiver = waiver or {}
            res["suppressions"] = [{
                "kind": "external", "status": "accepted",
                "justification": waiver.get("reason", ""),
                "properties": {"waiver": waiver.get("number"),
                               "expires": waiver.get("expires")},
            }]
        res["properties"] = {
            "status": status, "finding_id": rec["finding_id"], "code": rec["code"],
            "clause": rec["clause"], "severity": rec["severity"],
            **({"site": rec["site"]} if "site" in rec else {}),
            "table_id": rec["table_id"], "seq": rec["seq"], "ts": rec["ts"],
            "event": rec["event"], "seat": rec["seat"], "actor_role": rec["actor_role"],
            "actor_id": rec["actor_id"], "evidence": rec["evidence"],
        }
        results.append(res)
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {
                "name": "auditor",
                "fullName": "auditor, craps compliance auditor",
                "version": meta.get("auditor_version", __version__),
                "rules": rules,
                "properties": {"ruleset": result.ruleset.id,
                               "ruleset_hash": result.ruleset.content_hash},
            }},
            "results": results,
            "properties": {"provenance": meta},
        }],
    }


def write(result, meta: dict, out: Path) -> list[str]:
    """The `sarif` format: findings.sarif."""
    target = out / "findings.sarif"
    write_text(target, inert_json(sarif_log(result, meta), indent=2) + "\n")
    return [str(target)]
