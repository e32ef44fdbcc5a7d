"""What a report must say about where it came from: the auditor's version,
the ruleset (id, content hash, status, files) and every input with its
SHA-256 and row counts. No wall-clock time unless asked for."""

from __future__ import annotations

from datetime import UTC, datetime

from auditor import __version__
from auditor.audit import AuditResult
from auditor.findings import severity_counts


def provenance(result: AuditResult, stamp: bool = False) -> dict:
    logs = result.logs
    rs = result.ruleset
    data = {
        "auditor_version": __version__,
        "ruleset": {
            "id": rs.id, "title": rs.title, "status": rs.status,
            "content_hash": rs.content_hash,
            "disabled_rules": sorted(rs.disabled),
        },
        "inputs": [f.as_dict() for f in logs.inputs],
        "rows": {"read": logs.rows_read, "replayed": logs.rows_replayed,
                 "quarantined": logs.rows_quarantined},
        "tables": result.tables,
        "findings": {"total": len(result.findings),
                     "by_severity": severity_counts(result.findings)},
    }
    if stamp:
        data["generated_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    return data
