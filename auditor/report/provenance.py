"""What a report must say about where it came from: the auditor's version,
the ruleset (id, content hash, status, files) and every input with its
SHA-256 and row counts. No wall-clock time unless asked for."""

from __future__ import annotations

from datetime import UTC, datetime

from auditor import __version__
from auditor.audit.core import AuditResult
from auditor.errors import shown_path
from auditor.findings import severity_counts
from auditor.logs.columns import suspect_columns as likely_columns


def provenance(result: AuditResult, stamp: bool = False) -> dict:
    logs = result.logs
    rs = result.ruleset
    data = {
        "auditor_version": __version__,
        "ruleset": ruleset_block(rs),
        "inputs": [f.as_dict() for f in logs.inputs],
        "rows": {"read": logs.rows_read, "replayed": logs.rows_replayed,
                 "quarantined": logs.rows_quarantined},
        "tables": result.tables,
        "findings": {"total": len(result.findings),
                     "by_severity": severity_counts(result.findings)},
        # rule, file, reason: what the audit could not look at (its findings
        # there are not in the report); [] when every rule was evaluated
        "not_evaluated": list(result.not_evaluated),
    }
    partial = getattr(result, "mid_session", None)
    if partial:  # tables whose log here starts or ends mid-session (only when any)
        data["mid_session"] = list(partial)
    suspects = suspect_columns(logs.inputs, result.not_evaluated)
    if suspects:  # columns that look like typos of the spec's (only when there are any)
        data["suspect_columns"] = suspects
    read = getattr(logs, "read", None)
    if read is not None and read.as_dict():
        data["read_options"] = read.as_dict()  # --encoding, --assume-offset
    versions = getattr(result, "versions", None)
    if versions is not None:
        # A family of versions (auditor.rules.versions): which version judged
        # which table session, and each version used.
        data["ruleset"]["family"] = result.family
        data["versions"] = versions
        data["ruleset_versions"] = [ruleset_block(v) for v in result.rulesets]
    if stamp:
        data["generated_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    return data


def suspect_columns(inputs, not_evaluated: list[dict]) -> list[dict]:
    """Per file, each column that is not in event-log-v1 but looks like a
    typo of a spec column the file lacks: {file, column, likely, rules},
    `rules` the rules not evaluated there for want of that column."""
    out = []
    for f in inputs:
        for name, likely in likely_columns(tuple(f.columns)):
            needing = {e["rule"] for e in not_evaluated
                       if e["file"] == f.path and f"column `{likely}`" in e["reason"]}
            out.append({"file": f.path, "column": name, "likely": likely,
                        "rules": len(needing)})
    return out


def suspect_line(entry: dict) -> str:
    """The warning for one suspect column."""
    need = f" {entry['rules']} rule(s) need it." if entry.get("rules") else ""
    return (f"{entry['file']}: column `{entry['column']}` is not in event-log-v1; did you "
            f"mean `{entry['likely']}`?{need}")


def ruleset_block(rs) -> dict:
    """What the report says about one ruleset, including what its overlays
    loosened (rules disabled, severities lowered)."""
    block = {
        "id": rs.id, "title": rs.title, "status": rs.status,
        "content_hash": rs.content_hash,
        "disabled_rules": sorted(rs.disabled),
        "loosened_rules": sorted(rs.loosened, key=lambda x: x["rule"]),
        # the extends chain, root first, as found: what `auditor verify` re-reads
        "files": [shown_path(f) for f in rs.files],
    }
    for k in ("effective_from", "effective_to"):
        if getattr(rs, k, None) is not None:
            block[k] = getattr(rs, k).isoformat()
    if getattr(rs, "not_shipped", None) is not None:
        # a file declaring a shipped ruleset's id without being it
        block["not_shipped"] = dict(rs.not_shipped)
    return block
