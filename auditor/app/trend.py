"""`auditor trend`: several audits' roll-ups side by side, report by report
(issue 29; docs/regulators.md, "Trends").

Each report folder is checked against its manifest first (every file with
its SHA-256: `auditor.app.verify.check_folder`); one that does not stand is
refused, naming it and the file. Its `rollups.parquet` then gives its rows
and its metadata the report's period (first and last event time). Reports
under different rulesets (content hashes) are refused unless asked for: a
rate under one set of rules is not a rate under another.

Writes `trend.parquet` (one row per report, level, key and code) and
`trend.html` (per site and per code, the rate report by report as a chart;
what is new since the first report and what has stopped), both written
whole (`auditor.atomic`) and the same bytes for the same reports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from markupsafe import escape

from auditor.app.verify import check_folder
from auditor.atomic import atomic_open, commit_together, write_text
from auditor.errors import ReportError, shown_path
from auditor.findings import read_stored
from auditor.report.html_overview import sparkline
from auditor.report.manifest import MANIFEST_NAME
from auditor.report.rollups import ROLLUP_COLUMNS, ROLLUPS_SCHEMA, rate

ROLLUPS = "rollups.parquet"
TREND_SCHEMA = pa.schema([
    ("report", pa.int64()), ("folder", pa.string()), ("period_start", pa.string()),
    ("period_end", pa.string()), ("ruleset", pa.string()), ("ruleset_hash", pa.string()),
    ("level", pa.string()), ("key", pa.string()), ("code", pa.string()),
    ("findings", pa.int64()), ("rolls", pa.int64()), ("per_1000_rolls", pa.float64()),
])


@dataclass
class Report:
    folder: str
    period: tuple[str, str] | tuple[None, None]
    ruleset: str
    ruleset_hash: str
    rows: pd.DataFrame


def read_report(folder: Path) -> Report:
    """One report folder, checked against its manifest; ReportError (exit 2)
    naming the folder and the file when it does not stand."""
    manifest, files, problems = check_folder(folder)
    if problems:
        raise ReportError(f"{folder}: refused, it does not match its manifest: "
                          f"{problems[0]}" + (f" (and {len(problems) - 1} more)"
                                              if len(problems) > 1 else ""))
    listed = {str(f["name"]) for f in manifest["files"]}
    if ROLLUPS not in listed:
        raise ReportError(f"{folder / ROLLUPS}: refused, the report has no roll-ups (`auditor "
                          f"check --format parquet` writes one since roll-ups were added)")
    try:
        table = read_stored(pa.BufferReader(files[ROLLUPS]))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ReportError(f"{folder / ROLLUPS}: not a readable Parquet file: {exc}") from None
    md = table.schema.metadata or {}
    try:  # (its provenance is the manifest's: `check_folder`)
        extra = json.loads(md.get(b"auditor_rollups", b"{}") or b"{}")
    except ValueError:
        extra = None
    period = (extra.get("period") or [None, None]) if isinstance(extra, dict) else None
    if not isinstance(period, list) or len(period) != 2 or \
            not all(p is None or isinstance(p, str) for p in period):
        raise ReportError(f"{folder / ROLLUPS}: refused, its period is not one the auditor "
                          f"writes (two dates, or none)")
    period = tuple(period)
    block = manifest["provenance"].get("ruleset")
    if not isinstance(block, dict) or not all(isinstance(block.get(k), str)
                                              for k in ("id", "content_hash")):
        raise ReportError(f"{folder / MANIFEST_NAME}: refused, its provenance names no "
                          f"ruleset (id, content_hash)")
    wrong = [f.name for f in ROLLUPS_SCHEMA
             if f.name in table.schema.names and table.schema.field(f.name).type != f.type]
    missing = [c for c in ROLLUP_COLUMNS if c not in table.schema.names]
    if missing or wrong:
        raise ReportError(f"{folder / ROLLUPS}: not a roll-ups table ("
                          + "; ".join(([f"no {', '.join(missing)}"] if missing else [])
                                      + ([f"{', '.join(wrong)} not of the auditor's types"]
                                         if wrong else [])) + ")")
    rows = table.replace_schema_metadata(None).to_pandas()
    return Report(shown_path(folder), period, str(block.get("id", "")),
                  str(block.get("content_hash", "")), rows)


def trend(folders: list[Path], out: Path, allow_mixed: bool = False) -> list[str]:
    """Read, check and chart the reports; the files written."""
    if not folders:
        raise ReportError("give at least one report folder")
    _out_apart_from_reports(Path(out), folders)
    reports = [read_report(Path(f)) for f in folders]
    hashes = sorted({r.ruleset_hash for r in reports})
    if len(hashes) > 1 and not allow_mixed:
        used = "; ".join(f"{r.folder}: {r.ruleset} ({r.ruleset_hash})" for r in reports)
        raise ReportError(f"the reports were made under different rulesets ({used}): their "
                          f"rates do not compare; give --allow-mixed-rulesets to chart them "
                          f"anyway (the page then says which report used which)")
    # report by report in time order (then as given)
    reports = sorted(reports, key=lambda r: r.period[0] or "")
    frame = trend_frame(reports)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(frame, schema=TREND_SCHEMA, preserve_index=False)
    with commit_together():  # both files, or neither
        with atomic_open(out / "trend.parquet") as sink:
            pq.write_table(table, sink, compression="zstd", write_statistics=True)
        write_text(out / "trend.html", trend_html(reports, frame, len(hashes) > 1))
    return [str(out / "trend.parquet"), str(out / "trend.html")]


def _out_apart_from_reports(out: Path, folders: list[Path]) -> None:
    """Refuse to write the trend among a report's files: a report folder is
    evidence, its files listed in its manifest, and two more files there
    are not part of it (`auditor verify` would name them). So `--out` may
    be neither one of the folders charted, nor inside one, nor any other
    report folder (one holding a manifest)."""
    where = out.resolve()
    for given in folders:
        folder = Path(given).resolve()
        if where == folder or folder in where.parents:
            raise ReportError(f"{shown_path(out)}: --out is inside the report folder "
                              f"{shown_path(given)}: the trend's files would be written among "
                              "the report's; write them elsewhere")
    if (out / MANIFEST_NAME).exists():
        raise ReportError(f"{shown_path(out)}: --out is a report folder (it holds "
                          f"{MANIFEST_NAME}): write the trend elsewhere")


def trend_frame(reports: list[Report]) -> pd.DataFrame:
    parts = []
    for i, r in enumerate(reports):
        rows = r.rows[["level", "key", "code", "findings", "rolls", "per_1000_rolls"]].copy()
        rows.insert(0, "ruleset_hash", r.ruleset_hash)
        rows.insert(0, "ruleset", r.ruleset)
        rows.insert(0, "period_end", r.period[1])
        rows.insert(0, "period_start", r.period[0])
        rows.insert(0, "folder", r.folder)
        rows.insert(0, "report", i + 1)
        parts.append(rows)
    frame = pd.concat(parts, ignore_index=True)
    for c in ("folder", "period_start", "period_end", "ruleset", "ruleset_hash", "level",
              "key", "code"):
        frame[c] = frame[c].astype(object).where(frame[c].notna(), None)
    return frame


# --- the page --------------------------------------------------------------------------------

_CSS = ("body{font:14px system-ui,sans-serif;margin:2em;color:#222}"
        "table{border-collapse:collapse;margin:.5em 0 1.5em}"
        "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}"
        "td.n{text-align:right}svg{vertical-align:middle}"
        ".new{color:#a00}.gone{color:#070}")


def _spark(values: list[float | None], width: int = 160, height: int = 28) -> str:
    """The rates as an inline SVG line (a gap where a report dealt no rolls),
    drawn from the overview's points (`html_overview.sparkline`)."""
    line = sparkline(values, width, height)
    return (f'<svg width="{width}" height="{height}" role="img" aria-label="rate by report">'
            f'<polyline fill="none" stroke="#36c" stroke-width="1.5" '
            f'points="{line["points"]}"/></svg>')


def _rates(frame: pd.DataFrame, level: str, n: int) -> list[tuple[str, list]]:
    """(key, rate per report) of every all-codes row of `level`."""
    rows = frame[(frame["level"] == level) & frame["code"].isna()]
    out = []
    for key, g in sorted(rows.groupby("key", sort=False), key=lambda kv: str(kv[0])):
        by = dict(zip(g["report"].tolist(), g["per_1000_rolls"].tolist()))
        out.append((str(key), [None if by.get(i) is None or by.get(i) != by.get(i)
                               else float(by[i]) for i in range(1, n + 1)]))
    return out


def _code_rates(frame: pd.DataFrame, reports: list[Report]) -> list[tuple[str, list]]:
    """Per code, its findings per 1,000 of every report's rolls (over tables)."""
    tables = frame[frame["level"] == "table"]
    rolls = tables[tables["code"].isna()].groupby("report")["rolls"].sum()
    found = tables[tables["code"].notna()].groupby(["code", "report"])["findings"].sum()
    out = []
    for code in sorted({c for c, _ in found.index}):
        values = []
        for i in range(1, len(reports) + 1):
            dealt = int(rolls.get(i, 0))
            values.append(None if not dealt else
                          float(rate(int(found.get((code, i), 0)), dealt)))
        out.append((code, values))
    return out


def trend_html(reports: list[Report], frame: pd.DataFrame, mixed: bool) -> str:
    n = len(reports)
    e = escape
    lines = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
             ("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
              "style-src 'unsafe-inline'\">"),
             "<title>auditor trend</title>", f"<style>{_CSS}</style></head><body>",
             f"<h1>Trend over {n} report(s)</h1>"]
    lines.append("<h2>Reports</h2><table><tr><th>#</th><th>folder</th><th>period</th>"
                 "<th>ruleset</th><th>content hash</th></tr>")
    for i, r in enumerate(reports, 1):
        lines.append(f"<tr><td class=n>{i}</td><td>{e(r.folder)}</td>"
                     f"<td>{e(r.period[0] or '?')} – {e(r.period[1] or '?')}</td>"
                     f"<td>{e(r.ruleset)}</td><td>{e(r.ruleset_hash)}</td></tr>")
    lines.append("</table>")
    if mixed:
        lines.append("<p><strong>The reports were made under different rulesets</strong> "
                     "(--allow-mixed-rulesets): the table above says which report used "
                     "which; a change of rate may be a change of rules.</p>")
    for title, series in (("Per site", _rates(frame, "site", n)),
                          ("Per code", _code_rates(frame, reports))):
        lines.append(f"<h2>{title}: findings per 1,000 valid rolls, report by report</h2>")
        if not series:
            lines.append("<p>None.</p>")
            continue
        lines.append("<table><tr><th>key</th><th>chart</th>"
                     + "".join(f"<th>#{i}</th>" for i in range(1, n + 1)) + "</tr>")
        for key, values in series:
            cells = "".join(f"<td class=n>{'–' if v is None else f'{v:.2f}'}</td>"
                            for v in values)
            lines.append(f"<tr><td>{e(key)}</td><td>{_spark(values)}</td>{cells}</tr>")
        lines.append("</table>")
    lines += _changes(frame, n)
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"


def _changes(frame: pd.DataFrame, n: int) -> list[str]:
    """What is found in the last report and not the first (new), and the
    reverse (stopped), per site, table and staff member and code (a gaming
    day is in one report only: not compared)."""
    coded = frame[frame["code"].notna() & (frame["findings"] > 0) & (frame["level"] != "day")]
    first = {tuple(x) for x in coded[coded["report"] == 1][["level", "key", "code"]]
             .itertuples(index=False)}
    last = {tuple(x) for x in coded[coded["report"] == n][["level", "key", "code"]]
            .itertuples(index=False)}
    out = []
    for title, css, items in (("New since the first report", "new", sorted(last - first)),
                              ("Stopped since the first report", "gone", sorted(first - last))):
        out.append(f"<h2>{title}</h2>")
        if not items:
            out.append("<p>Nothing.</p>")
            continue
        out.append("<table><tr><th>level</th><th>key</th><th>code</th></tr>")
        out += [f'<tr class="{css}"><td>{escape(lv)}</td><td>{escape(k)}</td>'
                f"<td>{escape(c)}</td></tr>" for lv, k, c in items]
        out.append("</table>")
    return out


