"""The one-paragraph terminal summary of an audit. Each of its lines goes
through `auditor.escape.one_line`: a table id, a file name or a ruleset's
text can never start a line of its own."""

from __future__ import annotations

from auditor.audit.core import AuditResult
from auditor.audit.coverage import coverage_line
from auditor.audit.midsession import mid_session_line
from auditor.codes import REPORT_ONLY
from auditor.escape import one_line
from auditor.findings import severity_counts


def summary_text(result: AuditResult, outputs: list[str], fail_on: str, failing: int,
                 meta: dict | None = None) -> str:
    logs = result.logs
    counts = severity_counts(result.findings)
    by_sev = ", ".join(f"{n} {s}" for s, n in counts.items()) if len(result.findings) else "none"
    caveated = int(result.findings["caveat"].notna().sum()) \
        if "caveat" in result.findings else 0
    if caveated:  # auditor.audit.caveat
        by_sev += f"; {caveated} of them next to unreadable rows"
    meta = meta or {}
    recorded = meta.get("verdict") or {"fail_on": fail_on, "failing": failing}
    not_audited = meta.get("not_audited", [])
    verdict = verdict_line(recorded, incomplete_text(result.not_evaluated, not_audited))
    rs = result.ruleset
    against = f"{rs.shown} ({rs.status})"
    if getattr(result, "versions", None) is not None:
        against = f"family {result.family}: " + "; ".join(
            f"{v.shown} ({v.status}) for {', '.join(result.tables_of(v.id))}"
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
    lines = (text, *not_audited_lines(not_audited), excluded_line(meta.get("excluded", [])),
             mid_session_line(getattr(result, "mid_session", [])), unseen, loosened)
    return "\n".join(one_line(line) for line in lines if line)


def incomplete_text(not_evaluated: list[dict], not_audited: list[dict]) -> str:
    """What the audit could not look at, in a few words for beside the
    verdict: "3 file(s) not audited; 7 rule(s) not evaluated (column `flags`
    absent)", or "" when it looked at everything."""
    parts = []
    if not_audited:
        parts.append(f"{len(not_audited)} file(s) not audited (cannot be read as logs)")
    if not_evaluated:
        rules = {e["rule"] for e in not_evaluated}
        reasons = dict.fromkeys(why for e in not_evaluated for why in e["reason"].split("; "))
        shown = list(reasons)[:3]
        more = f"; {len(reasons) - 3} more reason(s)" if len(reasons) > 3 else ""
        parts.append(f"{len(rules)} rule(s) not evaluated ({'; '.join(shown)}{more})")
    return "; ".join(parts)


def verdict_word(verdict: dict, incomplete: str) -> str:
    """The verdict's first word, which is also its colour: INCOMPLETE first
    when a file was not audited (exit 2 whatever --fail-on says), never a
    plain PASS when something was not evaluated."""
    fail_on = verdict.get("fail_on", "major")
    if verdict.get("incomplete"):
        return "INCOMPLETE"
    if fail_on == REPORT_ONLY:
        return "REPORT ONLY"
    if verdict.get("failing", 0):
        return "FAIL"
    return "PASS — incomplete" if incomplete else "PASS"


def verdict_line(verdict: dict, incomplete: str) -> str:
    """The verdict as one line: the plain verdict when the audit looked at
    everything (as before); else what it could not look at beside it, first
    when a file was not audited."""
    said = verdict_text(verdict.get("fail_on", "major"), verdict.get("failing", 0))
    if not incomplete:
        return said
    if verdict.get("incomplete"):
        return f"INCOMPLETE (exit 2): {incomplete}; {said}"
    if said.startswith("PASS: "):
        return f"PASS — incomplete: {incomplete}; {said.removeprefix('PASS: ')}"
    return f"{said} — incomplete: {incomplete}"


def not_audited_lines(not_audited: list[dict]) -> list[str]:
    """One line per file not audited: its path and why."""
    return [one_line(f"NOT AUDITED: {e['file']}: {e['reason']}") for e in not_audited]


def excluded_line(excluded: list[dict]) -> str:
    """One line counting the files left out by --exclude, or ""."""
    if not excluded:
        return ""
    globs = ", ".join(dict.fromkeys(e["glob"] for e in excluded))
    return one_line(f"Excluded: {len(excluded)} file(s) matching {globs} (listed in the "
                    "provenance).")


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
        what = []
        if r.not_shipped is not None:
            ns = r.not_shipped
            what.append(f"{ns['file']} is not the shipped {ns['id']}: it drops "
                        f"{len(ns['dropped'])} and changes {len(ns['changed'])} of the shipped "
                        f"ruleset's {ns['rules']} rules"
                        + (f" (dropped: {_some(ns['dropped'])})" if ns["dropped"] else ""))
        what += [f"{rid} disabled" for rid in sorted(r.disabled)]
        what += [_loosening_words(x) for x in sorted(r.loosened, key=lambda x: x["rule"])]
        if what:
            parts.append(f"{r.id}: " + ", ".join(what))
    return ("LOOSENED: " + "; ".join(parts) + ".") if parts else ""


def _loosening_words(x: dict) -> str:
    if x.get("what") == "check":
        return f"{x['rule']} made to check {x['to']} instead of {x['from']} by {x['by']}"
    return f"{x['rule']} lowered from {x['from']} to {x['to']} by {x['by']}"


def _some(ids: list[str], most: int = 10) -> str:
    more = f" and {len(ids) - most} more" if len(ids) > most else ""
    return ", ".join(ids[:most]) + more
