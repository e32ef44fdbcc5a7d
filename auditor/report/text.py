"""The `text` format: the audit for a person at a terminal, on standard
output. Writes no file.

    auditor: nz-table-games (provisional); 2 file(s), 2 table(s), 1,204 event(s)
    replayed of 1,206 read (2 quarantined)

    FAIL: 3 new finding(s) at or above major

    Findings: 5 (1 critical, 2 major, 1 minor, 1 info)
      CODE                      SEVERITY  FINDINGS
      settle.wrong_outcome      critical         1
      ...

    Top findings (5 of 5, new first, most severe first):
      SEVERITY  TABLE  SEQ  CODE                  CLAUSE  MESSAGE
      critical  T1      41  settle.wrong_outcome  5.10    ...

The verdict is the one recorded in the provenance (`--fail-on`); the top
findings are at most TOP_FINDINGS, the new ones first, then by severity,
then in the findings' order (table, seq). Each cell is one line: text from
a log goes through `auditor.escape.one_line` (line breaks come out
as `\\n`), so a table id can never forge a line of the report. Colour (ANSI)
only when asked (`color=True`: the command line's choice for a terminal
without `--no-color` or NO_COLOR); alignment counts the visible text only.
"""

from __future__ import annotations

import sys
from pathlib import Path

from auditor.audit.coverage import coverage_line
from auditor.audit.midsession import mid_session_line
from auditor.codes import SEVERITIES, SEVERITY_RANK
from auditor.escape import one_line
from auditor.findings import severity_counts
from auditor.report.records import finding_records, finding_statuses, table_label
from auditor.report.rollups import notes as rollup_notes
from auditor.report.rollups import rollups_of
from auditor.report.summary import (
    excluded_line,
    incomplete_text,
    loosened_line,
    not_audited_lines,
    verdict_line,
    verdict_word,
)

#: how many findings the table lists
TOP_FINDINGS = 20
RESET = "\x1b[0m"
COLOURS = {"critical": "\x1b[1;31m", "major": "\x1b[31m", "minor": "\x1b[33m",
           "info": "\x1b[36m", "FAIL": "\x1b[1;31m", "PASS": "\x1b[1;32m",
           "REPORT ONLY": "\x1b[1;33m", "INCOMPLETE": "\x1b[1;33m",
           "PASS — incomplete": "\x1b[1;33m", "heading": "\x1b[1m"}


def _paint(text: str, key: str, color: bool) -> str:
    return f"{COLOURS[key]}{text}{RESET}" if color and key in COLOURS else text


def aligned(header: tuple[str, ...], rows: list[tuple[str, ...]], color: bool,
            right: tuple[int, ...] = (), paint_column: int | None = None) -> list[str]:
    """Rows as columns padded to their widest cell (the last, unless right
    aligned, left unpadded);
    `paint_column`'s cells are coloured by their own text, after padding."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    lines = []
    for n, row in enumerate((header, *rows)):
        cells = []
        for i, cell in enumerate(row):
            last = i == len(row) - 1
            if i in right:
                padded = cell.rjust(widths[i])
            else:
                padded = cell if last else cell.ljust(widths[i])
            if n == 0:
                padded = _paint(padded, "heading", color)
            elif i == paint_column:
                padded = _paint(padded, cell, color)
            cells.append(padded)
        lines.append("  " + "  ".join(cells).rstrip())
    return lines


def text(result, meta: dict, color: bool = False, top: int = TOP_FINDINGS,
         dice_alpha: float | None = None) -> str:
    findings = result.findings
    records = finding_records(findings)
    statuses = finding_statuses(findings)
    logs = result.logs
    rs = result.ruleset
    verdict = meta.get("verdict") or {}
    unseen = meta.get("not_evaluated", getattr(result, "not_evaluated", []))
    not_audited = meta.get("not_audited", [])
    lines = [one_line(
        f"auditor: {rs.shown} ({rs.status}); {len(logs.inputs)} file(s), "
        f"{len(result.tables)} table(s), {logs.rows_replayed:,} event(s) replayed of "
        f"{logs.rows_read:,} read ({logs.rows_quarantined:,} quarantined)"), ""]
    # What was not looked at stands beside the verdict, in its colour: never
    # a plain green PASS over files not audited or rules not evaluated.
    incomplete = incomplete_text(unseen, not_audited)
    word = verdict_word(verdict, incomplete)
    said = verdict_line(verdict, incomplete)
    lines += [_paint(one_line(said), word, color) if incomplete else
              _paint(word, word, color) + one_line(said[len(word):])]
    lines += not_audited_lines(not_audited)
    lines += [line for line in (excluded_line(meta.get("excluded", [])),
                                one_line(mid_session_line(meta.get("mid_session", []))),
                                one_line(coverage_line(unseen))) if line]
    lines.append("")
    loosened = loosened_line(getattr(result, "rulesets", None) or [rs])
    if loosened:
        lines += [one_line(loosened), ""]
    lines += _per_site(result, color)
    if not records:
        lines.append("Findings: none")
        return "\n".join(lines + _rollup_notes(result) + _dice_lines(result, dice_alpha)) + "\n"

    by_sev = ", ".join(f"{n} {s}" for s, n in severity_counts(findings).items())
    lines.append(f"Findings: {len(records):,} ({by_sev})")
    by_status = {}
    for st in statuses:
        by_status[st.status] = by_status.get(st.status, 0) + 1
    if set(by_status) - {"new"}:
        lines.append("  " + ", ".join(f"{by_status.get(s, 0):,} {s}"
                                      for s in ("new", "known", "waived")))
    codes: dict[str, list] = {}
    for rec in records:
        entry = codes.setdefault(rec["code"], [rec["severity"], 0])
        if SEVERITY_RANK.get(rec["severity"], 9) < SEVERITY_RANK.get(entry[0], 9):
            entry[0] = rec["severity"]
        entry[1] += 1
    code_rows = [(one_line(code), sev, f"{n:,}") for code, (sev, n) in
                 sorted(codes.items(), key=lambda kv: (SEVERITY_RANK.get(kv[1][0], 9),
                                                       -kv[1][1], kv[0]))]
    lines += aligned(("CODE", "SEVERITY", "FINDINGS"), code_rows, color, right=(2,),
                     paint_column=1)
    order = sorted(range(len(records)), key=lambda i: (
        statuses[i].status != "new", SEVERITY_RANK.get(records[i]["severity"], 9), i))[:top]
    rows = []
    for i in order:
        rec, st = records[i], statuses[i]
        message = rec["message"] or rec["code"]
        if st.status != "new":
            message += f" [{st.status}]"
        rows.append((rec["severity"], one_line(table_label(rec)), one_line(rec["seq"]),
                     one_line(rec["code"]), one_line(rec["clause"]), one_line(message)))
    lines += ["", (f"Top findings ({len(rows):,} of {len(records):,}, new first, "
                   f"most severe first):")]
    lines += aligned(("SEVERITY", "TABLE", "SEQ", "CODE", "CLAUSE", "MESSAGE"), rows, color,
                     right=(2,), paint_column=0)
    return "\n".join(lines + _rollup_notes(result) + _dice_lines(result, dice_alpha)) + "\n"


# --- the regulator's view (issue 29) ---------------------------------------------------------

def _per_site(result, color: bool) -> list[str]:
    """A short table of each site's rolls, findings and rate (only with sites)."""
    frame = rollups_of(result)
    sites = frame[(frame["level"] == "site") & frame["code"].isna()]
    if not len(sites):
        return []
    rows = [(one_line(r["key"]), f"{int(r['rolls']):,}", f"{int(r['findings']):,}",
             *(f"{int(r[s]):,}" for s in SEVERITIES),
             "-" if r["per_1000_rolls"] != r["per_1000_rolls"] else f"{r['per_1000_rolls']:.2f}")
            for r in sites.to_dict("records")]
    return aligned(("SITE", "ROLLS", "FINDINGS", *(s.upper() for s in SEVERITIES),
                    "PER 1,000 ROLLS"), rows, color, right=tuple(range(1, 8))) + [""]


def _rollup_notes(result) -> list[str]:
    """The roll-ups' notes, with the per-site table (a report of one casino
    or none reads as before; summary.json and the HTML say them always)."""
    frame = rollups_of(result)
    if not (frame["level"] == "site").any() or not rollup_notes(result):
        return []
    return ["", *(f"Note: {one_line(n)}" for n in rollup_notes(result))]


def _dice_lines(result, dice_alpha) -> list[str]:
    """A line per flagged die (auditor.report.dice_report): signals, not findings."""
    from auditor.report.dice_report import flagged_lines

    flagged = flagged_lines(result, dice_alpha)
    return ["", "Dice integrity (signals for inspection, not findings):", *flagged] \
        if flagged else []


def write(result, meta: dict, out: Path, color: bool = False,
          dice_alpha: float | None = None) -> list[str]:
    """The `text` format: the report on standard output; no file."""
    sys.stdout.write(text(result, meta, color=color, dice_alpha=dice_alpha))
    sys.stdout.flush()
    return []
