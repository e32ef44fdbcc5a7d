"""The one-paragraph terminal summary of an audit."""

from __future__ import annotations

from auditor.audit import AuditResult
from auditor.findings import severity_counts


def summary_text(result: AuditResult, outputs: list[str], fail_on: str, failing: int) -> str:
    logs = result.logs
    counts = severity_counts(result.findings)
    by_sev = ", ".join(f"{n} {s}" for s, n in counts.items()) if len(result.findings) else "none"
    verdict = (f"FAIL: {failing} finding(s) at or above {fail_on}" if failing
               else f"PASS: no findings at or above {fail_on}")
    rs = result.ruleset
    return (
        f"Audited {len(logs.inputs)} file(s), {len(result.tables)} table(s), "
        f"{logs.rows_replayed} event(s) replayed of {logs.rows_read} read "
        f"({logs.rows_quarantined} quarantined) against {rs.id} ({rs.status}). "
        f"Findings: {len(result.findings)} ({by_sev}). {verdict}. "
        f"Written: {', '.join(outputs) if outputs else 'nothing'}."
    )
