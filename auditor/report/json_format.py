"""The `json` format: `findings.jsonl` (one finding per line) and
`summary.json` (provenance, counts, verdict). The schema is in
`docs/formats.md`; same inputs give the same bytes.

All text is JSON-escaped and pure ASCII: every character outside ASCII is a
`\\uXXXX` escape, and so are `<`, `>` and `&`, so a value recorded in a log
(`<script>`, a control character, a line separator) stays a string even if
the file is pasted into an HTML page or split on Unicode line breaks.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from auditor.atomic import write_text
from auditor.escape import html_safe_json
from auditor.findings import FINDING_COLUMNS, severity_counts
from auditor.report.json_text import dumps_indented
from auditor.report.shared import shared
from auditor.triage.baseline import STATUSES, statuses_of, verdict_of, waiver_of

SCHEMA_VERSION = "1"
_INT_COLUMNS = ("seq", "seat", "source_line")


def inert_json(value, indent: int | None = None) -> str:
    """JSON text that is ASCII only, with `<`, `>` and `&` escaped too (they
    can only occur inside strings, so the replacement is exact)."""
    if indent is None:
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    else:  # what json.dumps writes with this indent, written faster
        text = dumps_indented(value, indent)
    return html_safe_json(text)


def iso_utc(ts) -> str | None:
    """A timestamp as ISO-8601 in UTC with a `Z` (None when missing)."""
    if ts is None or ts is pd.NaT or pd.isna(ts):
        return None
    return pd.Timestamp(ts).tz_convert("UTC").isoformat().replace("+00:00", "Z")


def plain(value):
    """A cell as a plain JSON value: missing cells become null."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def finding_records(findings: pd.DataFrame) -> list[dict]:
    """The findings as plain dicts, every column of the findings table in
    order: ts as ISO-8601 UTC, evidence as an object, integers or null.
    Shared by the formats of one `write_reports` call: read, never modify."""
    return shared(_records, findings)


def _records(findings: pd.DataFrame) -> list[dict]:
    records = []
    for row in findings[list(FINDING_COLUMNS)].itertuples(index=False, name=None):
        rec = dict(zip(FINDING_COLUMNS, row))
        for col in FINDING_COLUMNS:
            rec[col] = plain(rec[col])
        for col in _INT_COLUMNS:
            if rec[col] is not None:
                rec[col] = int(rec[col])
        rec["ts"] = iso_utc(row[FINDING_COLUMNS.index("ts")])
        rec["evidence"] = json.loads(rec["evidence"]) if rec["evidence"] else {}
        for col in FINDING_COLUMNS:
            if col not in _INT_COLUMNS and col not in ("ts", "evidence") \
                    and rec[col] is not None:
                rec[col] = str(rec[col])
        records.append(rec)
    return records


def rules_of(result) -> list:
    """The rules of every ruleset the audit used, once per rule id (an audit
    under a family of versions used several; the latest version's rule wins
    but keeps its first place)."""
    rules: dict[str, object] = {}
    for ruleset in getattr(result, "rulesets", None) or [result.ruleset]:
        for rule in ruleset.rules:
            rules[rule.id] = rule
    return list(rules.values())


def findings_jsonl(result, meta: dict) -> str:
    findings = result.findings
    lines = []
    for rec, status in zip(finding_records(findings), statuses_of(findings, meta)):
        waiver = waiver_of(meta, rec["finding_id"]) if status == "waived" else None
        line = {**rec, "status": status,
                "waiver": {"number": waiver["number"], "reason": waiver["reason"]}
                if waiver else None}
        lines.append(inert_json(line) + "\n")
    return "".join(lines)


def summary(result, meta: dict) -> dict:
    findings = result.findings
    statuses = statuses_of(findings, meta)
    by_code = findings["code"].value_counts()
    return {
        "schema_version": SCHEMA_VERSION,
        "provenance": meta,
        "counts": {
            "total": len(findings),
            "by_severity": severity_counts(findings),
            "by_code": {str(c): int(by_code[c]) for c in sorted(by_code.index)},
            "by_status": {s: statuses.count(s) for s in STATUSES},
        },
        "verdict": verdict_of(findings, meta),
        "unused_waivers": (meta.get("statuses") or {}).get("unused_waivers", []),
    }


def write(result, meta: dict, out: Path) -> list[str]:
    """The `json` format: findings.jsonl and summary.json."""
    write_text(out / "findings.jsonl", findings_jsonl(result, meta))
    write_text(out / "summary.json", inert_json(summary(result, meta), indent=2) + "\n")
    return [str(out / "findings.jsonl"), str(out / "summary.json")]
