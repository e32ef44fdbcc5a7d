"""The `csv` format: `findings.csv`, the findings for a spreadsheet.

One header row, then one row per finding in the findings table's order: the
columns of findings.parquet (`auditor.findings.FINDING_COLUMNS`), then
`status` (new, known or waived), `waiver` (the number of the waiver that
waived it) and `waiver_reason`. ts is ISO-8601 UTC with a `Z`; evidence is
its canonical JSON text; a missing value is an empty cell. A clean audit
writes the header alone.

UTF-8 without a byte-order mark, RFC 4180: comma-separated, CRLF line ends,
a cell quoted (inner quotes doubled) when it holds a comma, a quote or a line
break. Same inputs give the same bytes.

Formula neutralisation (OWASP, CSV injection): a text cell that starts with
`=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, so a
spreadsheet shows it as text instead of running it (`=HYPERLINK(...)` from a
log's table id comes out as `'=HYPERLINK(...)`). The whole-number columns
(seq, seat, source_line, waiver) hold digits only and are never changed.
Text that cannot be UTF-8 (a lone surrogate) is written as `\\uXXXX`.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from auditor.atomic import atomic_path
from auditor.escape import one_line
from auditor.findings import FINDING_COLUMNS, findings_columns
from auditor.report.records import INT_COLUMNS, finding_records, finding_statuses, plain

COLUMNS: tuple[str, ...] = (*FINDING_COLUMNS, "status", "waiver", "waiver_reason")
#: what a spreadsheet may take as the start of a formula
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell_text(value) -> str:
    """A text cell as written: empty when missing, a leading `'` when it
    could start a formula."""
    if value is None:
        return ""
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def _number(value) -> str:
    return "" if value is None else str(int(value))


def findings_csv(result, cell=None) -> str:
    """The findings as CSV text; `cell` makes each text cell (default
    `cell_text`)."""
    made = cell or cell_text
    findings = result.findings
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    columns = findings_columns(findings)  # with `site` when a table has one
    writer.writerow((*columns, *COLUMNS[len(FINDING_COLUMNS):]))
    evidence = findings["evidence"].tolist()
    for rec, st, text in zip(finding_records(findings), finding_statuses(findings),
                             evidence):
        row = [_number(rec[c]) if c in INT_COLUMNS else made(rec[c])
               for c in columns if c != "evidence"]
        row.insert(columns.index("evidence"), made(plain(text) or None))
        waiver = st.waiver or {}
        row += [made(st.status), _number(waiver.get("number")),
                made(waiver.get("reason"))]
        writer.writerow(row)
    return buffer.getvalue()


def text(result, meta: dict) -> str:
    """findings.csv for standard output (`--format csv:-`): each cell on one
    line (`one_line`: a line break in a value as a visible `\\n`), so no value
    from a log starts a line of a terminal or a CI log; the file keeps the
    value whole, quoted."""
    return findings_csv(result, cell=lambda value: "" if value is None
                        else one_line(cell_text(value)))


def write(result, meta: dict, out: Path) -> list[str]:
    """The `csv` format: findings.csv."""
    target = out / "findings.csv"
    data = findings_csv(result).encode("utf-8", "backslashreplace")
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)
    return [str(target)]
