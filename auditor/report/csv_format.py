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
from auditor.findings import FINDING_COLUMNS
from auditor.report.records import (
    INT_COLUMNS,
    each_once,
    finding_columns,
    finding_statuses,
    plain,
)

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
    buffer = io.StringIO()
    _write_rows(buffer, result, cell)
    return buffer.getvalue()


def _write_rows(sink, result, cell=None) -> None:
    """The findings as CSV into the text stream `sink`: made column by
    column (each distinct text once), the rows then written by the csv
    module as it goes (a file's text is never whole in memory)."""
    made = cell or cell_text
    findings = result.findings
    names, values = finding_columns(findings)  # with `site` when a table has one
    statuses = finding_statuses(findings)
    waivers = [st.waiver or {} for st in statuses]
    columns = [
        each_once(lambda text: made(plain(text) or None), findings["evidence"].tolist())
        if name == "evidence" else [_number(v) for v in cells] if name in INT_COLUMNS
        else each_once(made, cells) for name, cells in zip(names, values)]
    columns += [each_once(made, [st.status for st in statuses]),
                [_number(w.get("number")) for w in waivers],
                each_once(made, [w.get("reason") for w in waivers])]
    writer = csv.writer(sink, lineterminator="\r\n")
    writer.writerow((*names, *COLUMNS[len(FINDING_COLUMNS):]))
    writer.writerows(zip(*columns))


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
    with atomic_path(target) as tmp, \
            open(tmp, "w", encoding="utf-8", errors="backslashreplace", newline="") as sink:
        _write_rows(sink, result)
    return [str(target)]
