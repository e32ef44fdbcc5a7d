"""The `github` format: GitHub Actions workflow annotations on standard
output, one line per finding (and a warning per rule not evaluated in a file). Writes no file.

    ::error file=<source_file>,line=<source_line>,title=<code> <rule_id>::<table> seq <seq>: <message> (clause <clause>)

`error` for a critical or major finding, `warning` for a minor one,
`notice` for info. A known or waived finding is a `notice` whatever its
severity (it does not fail the run), its message ending in `[known]` or
`[waived: reason]`.

Escaping is GitHub's: `%`, `\\r` and `\\n` become `%25`, `%0D`, `%0A` in the
message, and `:` and `,` also `%3A`, `%2C` in the properties. Every other
control or format character (bidirectional overrides, zero-width characters)
is written as `%XX` of its UTF-8 bytes too, so a value from a log can never
start a new workflow command or reach a terminal or log viewer as a control
sequence.
"""

from __future__ import annotations

import sys
from pathlib import Path

from auditor.atomic import after_commit
from auditor.audit.coverage import scoped
from auditor.escape import escape_data, escape_property
from auditor.report.records import finding_records, finding_statuses, table_label

COMMANDS = {"critical": "error", "major": "error", "minor": "warning", "info": "notice"}


def annotation(rec: dict, status: str, waiver: dict | None = None) -> str:
    command = COMMANDS[rec["severity"]] if status == "new" else "notice"
    props = []
    if rec["source_file"]:
        props.append(f"file={escape_property(rec['source_file'])}")
        if rec["source_line"] is not None:
            props.append(f"line={rec['source_line']}")
    props.append("title=" + escape_property(f"{rec['code']} {rec['rule_id']}"))
    table = table_label(rec) or "?"
    seq = rec["seq"] if rec["seq"] is not None else "?"
    text = f"{table} seq {seq}: {rec['message']} (clause {rec['clause']})"
    if status == "known":
        text += " [known]"
    elif status == "waived":
        text += f" [waived: {waiver['reason'] if waiver else 'waiver'}]"
    return f"::{command} {','.join(props)}::{escape_data(text)}"


def annotations(result, meta: dict) -> list[str]:
    findings = result.findings
    return [annotation(rec, st.status, st.waiver)
            for rec, st in zip(finding_records(findings), finding_statuses(findings))] + [
        f"::warning file={escape_property(e['file'])},title="
        f"{escape_property('not evaluated ' + e['rule'])}::"
        + escape_data(scoped(e, f"rule {e['rule']} ({e['code']}) not evaluated")
                    + f": {e['reason']}")
        for e in meta.get("not_evaluated", getattr(result, "not_evaluated", []))] + [
        f"::error file={escape_property(e['file'])},title=not audited::"
        + escape_data(f"{e['file']} not audited (cannot be read as a log): {e['reason']}")
        for e in meta.get("not_audited", [])]


def text(result, meta: dict) -> str:
    lines = annotations(result, meta)
    return "\n".join(lines) + "\n" if lines else ""


def write(result, meta: dict, out: Path) -> list[str]:
    """The `github` format: annotation lines on standard output, once every
    report file is in place (never for a report whose write failed); no file."""
    lines = annotations(result, meta)
    if lines:
        after_commit(lambda: _print(lines))
    return []


def _print(lines: list[str]) -> None:
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
