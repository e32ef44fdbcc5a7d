"""The one-paragraph terminal summary of an audit. Each of its lines goes
through `auditor.escape.one_line`: a table id, a file name or a ruleset's
text can never start a line of its own."""

from __future__ import annotations

from auditor.audit.core import AuditResult
from auditor.audit.coverage import coverage_line
from auditor.codes import REPORT_ONLY
from auditor.escape import one_line
from auditor.findings import severity_counts


def summary_text(result: AuditResult, outputs: list[str], fail_on: str, failing: int) -> str:
    logs = result.logs
    counts = severity_counts(result.findings)
    by_sev = ", ".join(f"{n} {s}" for s, n in counts.items()) if len(result.findings) else "none"
    caveated = int(result.findings["caveat"].notna().sum()) \
        if "caveat" in result.findings else 0
    if caveated:  # auditor.audit.caveat
        by_sev += f"; {caveated} of them next to unreadable rows"
    verdict = verdict_text(fail_on, failing)
    rs = result.ruleset
    against = f"{rs.id} ({rs.status})"
    if getattr(result, "versions", None) is not None:
        against = f"family {result.family}: " + "; ".join(
            f"{v.id} ({v.status}) for {', '.join(result.tables_of(v.id))}"
            for v in result.rulesets)
    text = (
        f"Audited {len(logs.inputs)} file(s), {len(result.tables)} table(s), "
        f"{logs.rows_replayed} event(s) replayed of {logs.rows_read} read "
        f"({logs.rows_quarantined} quarantined) against {against}. "
        f"Findings: {len(result.findings)} ({by_sev}). {verdict}. "
        f"Written: {', '.join(outputs) if outputs else 'nothing'}."
    )
    loosened = loosened_line(getattr(result, "rulesets", [rs]))
    unseen = coverage_line(result.not_evaluated)
    return "\n".join(one_line(line) for line in (text, unseen, loosened) if line)


def verdict_text(fail_on: str, failing: int) -> str:
    """The verdict in words: PASS, FAIL, or REPORT ONLY under `--fail-on none`."""
    if fail_on == REPORT_ONLY:
        return "REPORT ONLY (--fail-on none): findings never fail the run"
    return (f"FAIL: {failing} finding(s) at or above {fail_on}" if failing
            else f"PASS: no findings at or above {fail_on}")


def loosened_line(rulesets) -> str:
    """One line naming every rule an overlay disabled or made less severe, or
    "" when none was."""
    parts = []
    for r in rulesets:
        what = [f"{rid} disabled" for rid in sorted(r.disabled)]
        what += [f"{x['rule']} lowered from {x['from']} to {x['to']} by {x['by']}"
                 for x in sorted(r.loosened, key=lambda x: x["rule"])]
        if what:
            parts.append(f"{r.id}: " + ", ".join(what))
    return ("LOOSENED: " + "; ".join(parts) + ".") if parts else ""
