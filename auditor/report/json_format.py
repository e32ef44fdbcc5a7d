"""The `json` format: `findings.jsonl` (one finding per line) and
`summary.json` (provenance, counts, verdict). The schema is in
`docs/formats.md`; same inputs give the same bytes.

All text is JSON-escaped and pure ASCII: every character outside ASCII is a
`\\uXXXX` escape, and so are `<`, `>` and `&`, so a value recorded in a log
(`<script>`, a control character, a line separator) stays a string even if
the file is pasted into an HTML page or split on Unicode line breaks.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from auditor.atomic import atomic_open, write_text
from auditor.codes import SEVERITY_RANK
from auditor.escape import html_safe_json
from auditor.findings import STATUSES, severity_counts
from auditor.report.dice_report import summary_section
from auditor.report.json_text import compact_json, dumps_indented, quote_json
from auditor.report.records import finding_statuses, record_texts_blocks
from auditor.report.rollups import notes as rollup_notes
from auditor.report.rollups import records as rollup_records
from auditor.report.rollups import rollups_of

SCHEMA_VERSION = "1"


def inert_json(value, indent: int | None = None) -> str:
    """JSON text that is ASCII only, with `<`, `>` and `&` escaped too (they
    can only occur inside strings, so the replacement is exact)."""
    if indent is None:
        text = compact_json(value)
    else:  # what json.dumps writes with this indent, written faster
        text = dumps_indented(value, indent)
    return html_safe_json(text)


#: Findings a block of `findings.jsonl` holds: the file is written a block
#: at a time, so its text is never whole in memory (at a million findings,
#: 630 MB of it, and as many again for each step of building it).
LINES_A_BLOCK = 16384


def findings_jsonl(result, meta: dict) -> str:
    """One finding a line: its record (`record_texts`) with its status and
    waiver after the record's own keys, as `inert_json` of
    `{**record, "status": ..., "waiver": ...}` writes it."""
    return "".join(findings_jsonl_blocks(result))


def findings_jsonl_blocks(result):
    """`findings_jsonl`'s text, LINES_A_BLOCK lines at a time."""
    findings = result.findings
    statuses = finding_statuses(findings)
    for start, texts in zip(range(0, len(findings), LINES_A_BLOCK),
                            record_texts_blocks(findings, LINES_A_BLOCK)):
        lines = []
        for text, (status, _, waiver) in zip(texts, statuses[start:start + LINES_A_BLOCK]):
            waived = compact_json({"number": waiver["number"], "reason": waiver["reason"]}) \
                if waiver else "null"
            lines.append(f'{text[:-1]},"status":{quote_json(status)},"waiver":{waived}}}\n')
        yield html_safe_json("".join(lines))  # (as inert_json each line: the same text)


def summary(result, meta: dict, dice_alpha: float | None = None) -> dict:
    findings = result.findings
    statuses = [s.status for s in finding_statuses(findings)]
    by_code = findings["code"].value_counts()
    out = {
        "schema_version": SCHEMA_VERSION,
        "provenance": meta,
        "counts": {
            "total": len(findings),
            "by_severity": severity_counts(findings),
            "by_code": {str(c): int(by_code[c]) for c in sorted(by_code.index)},
            "by_status": {s: statuses.count(s) for s in STATUSES},
        },
        "verdict": meta.get("verdict") or default_verdict(findings, statuses),
        # what the audit could not look at (also in the provenance)
        "not_evaluated": meta.get("not_evaluated", getattr(result, "not_evaluated", [])),
        "unused_waivers": (meta.get("statuses") or {}).get("unused_waivers", []),
        # the site and staff roll-ups (rollups.parquet holds every level)
        "rollups": rollup_records(rollups_of(result)),
        "rollups_notes": rollup_notes(result),
        # dice integrity: statistical signals, not findings (auditor.report.dice_report)
        "dice": summary_section(result, dice_alpha),
    }
    for key in ("not_audited", "excluded"):  # only when some file was left out
        if meta.get(key):
            out[key] = meta[key]
    return out


def default_verdict(findings: pd.DataFrame, statuses: list[str]) -> dict:
    """For a library caller that recorded no verdict: that of `auditor
    check`'s default `--fail-on major` (new findings at or above it fail)."""
    limit = SEVERITY_RANK["major"]
    failing = sum(1 for severity, status in zip(findings["severity"], statuses)
                  if status == "new" and SEVERITY_RANK.get(severity, limit + 1) <= limit)
    return {"fail_on": "major", "failing": failing, "exit_code": 1 if failing else 0,
            "result": "fail" if failing else "pass"}


def text(result, meta: dict, dice_alpha: float | None = None) -> str:
    """`json:-`: the findings, one JSON object a line (summary.json is a file only)."""
    return findings_jsonl(result, meta)


def write(result, meta: dict, out: Path, dice_alpha: float | None = None) -> list[str]:
    """The `json` format: findings.jsonl and summary.json."""
    with atomic_open(out / "findings.jsonl") as sink:
        for block in findings_jsonl_blocks(result):
            sink.write(block.encode("utf-8"))
    write_text(out / "summary.json",
               inert_json(summary(result, meta, dice_alpha), indent=2) + "\n")
    return [str(out / "findings.jsonl"), str(out / "summary.json")]
