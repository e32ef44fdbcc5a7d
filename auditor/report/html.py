"""The `html` format: `OUT/report.html`, one self-contained page a compliance
officer can open from disk, read, filter and print.

Summary first (ruleset, inputs with SHA-256 and row counts, tables and time
span, findings by severity and by code, the verdict at the --fail-on
threshold), then charts drawn here as inline SVG (findings by code and
severity; per table a timeline of rolls, shooter changes and findings), then
the findings themselves, each opening to its evidence and the log rows
around it.

Safety: the page is rendered by jinja2 with autoescape on, so every value
from a log or a ruleset is text, never markup. Nothing from a log goes into
the page's only script; the script reads `data-` attributes. A Content
Security Policy allows only that script and that stylesheet (by hash) and no
fetch of any kind: no fonts, images, frames or connections.

Volume: counts and charts cover every finding; the findings listed are
capped per code (`MAX_FINDINGS_PER_CODE`) with a note saying how many are
shown, so 100,000 findings still open in seconds. Same audit, same bytes: no
clock is read (the time appears only when `meta` carries `generated_at`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from auditor.codes import CODES, SEVERITIES, SEVERITY_RANK
from auditor.findings import at_or_above, severity_counts
from auditor.logs.schema import COLUMN_NAMES
from auditor.report import html_charts
from auditor.report.atomic import write_text
from auditor.report.provenance import provenance

#: findings listed per code; counts and charts always cover them all
MAX_FINDINGS_PER_CODE = 200
#: findings listed in all: when many codes each pass the per-code cap, the
#: cap is lowered evenly for every code so the page stays quick to open
MAX_FINDINGS_LISTED = 2000
#: events shown before and after a finding's row, in the same table
CONTEXT_EVENTS = 3
#: characters of one cell shown in the rows around a finding (longer ones are cut)
MAX_CELL = 160
#: tables drawn as timelines (those with the most findings when there are more)
MAX_TIMELINES = 60
#: int64 of NaT: a finding with no time (an unreadable row)
NO_TIME = int(np.iinfo(np.int64).min)
#: the threshold assumed when `meta` does not say (the default of `auditor check`)
DEFAULT_FAIL_ON = "major"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TEMPLATES = Path(__file__).resolve().parent / "templates"
REPORT_NAME = "report.html"
#: columns of the loaded events that are the auditor's, not the log's
_INTERNAL_COLUMNS = ("source_file", "source_line", "source_order")
#: context columns always shown, even when empty in a window
_ALWAYS = ("line", "seq", "ts", "event")


def write(result, meta: dict, out: Path) -> list[str]:
    """The `html` format: OUT/report.html, written atomically."""
    target = Path(out) / REPORT_NAME
    write_text(target, render_html(result, meta))
    return [str(target)]


def render_html(result, meta: dict | None = None, per_code: int = MAX_FINDINGS_PER_CODE,
                budget: int = MAX_FINDINGS_LISTED) -> str:
    """The whole page as text."""
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True)
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    js = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    context = report_context(result, meta or {}, per_code, budget)
    context["css"] = Markup(css)  # static files of the package, no log data
    context["js"] = Markup(js)
    context["csp"] = (
        "default-src 'none'; "
        f"style-src '{_csp_hash(css)}'; script-src '{_csp_hash(js)}'; "
        "img-src 'none'; font-src 'none'; connect-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )
    return env.get_template("report.html").render(**context)


def _csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


# --- what the page says --------------------------------------------------


def report_context(result, meta: dict, per_code: int = MAX_FINDINGS_PER_CODE,
                   budget: int = MAX_FINDINGS_LISTED) -> dict:
    """Everything the template shows, as plain data."""
    needed = ("auditor_version", "ruleset", "inputs", "rows")
    prov = dict(meta) if all(k in meta for k in needed) else {**provenance(result), **meta}
    findings = result.findings
    events = result.logs.events
    ts_ns = _ns(events["ts"])

    verdict = _verdict(findings, meta)

    asked = per_code
    per_code = code_cap(findings["code"].value_counts().tolist(), per_code, budget)
    listed = _listed(findings, per_code)
    anchors = {fid: "f-" + fid for fid in listed["finding_id"]}
    by_code = _by_code(findings, result.ruleset, per_code)
    tables = _tables(result, events, ts_ns, findings)

    rs = prov.get("ruleset", {})
    return {
        "version": prov.get("auditor_version", ""),
        "generated_at": meta.get("generated_at"),
        "ruleset": {
            "id": rs.get("id", result.ruleset.id),
            "title": rs.get("title", result.ruleset.title),
            "status": rs.get("status", result.ruleset.status),
            "content_hash": rs.get("content_hash", result.ruleset.content_hash),
            "disabled_rules": rs.get("disabled_rules", []),
            "jurisdiction": result.ruleset.jurisdiction,
            "authority": result.ruleset.authority,
            "notes": result.ruleset.notes,
            "source": result.ruleset.source,
            "rule_count": len(result.ruleset.rules),
        },
        "verdict": verdict,
        "inputs": prov.get("inputs", []),
        "rows": prov.get("rows", {}),
        "balanced": all(f["rows_read"] == f["rows_replayed"] + f["rows_quarantined"]
                        for f in prov.get("inputs", [])),
        "span": _span(ts_ns),
        "tables": tables,
        "severities": _by_severity(findings, verdict["fail_on"], listed),
        "by_code": by_code,
        "code_chart": html_charts.code_bars(
            [(row["code"], row["counts"]) for row in by_code]),
        "timelines": _timelines(events, ts_ns, findings, tables, anchors),
        "timeline_note": _timeline_note(tables),
        "findings": _finding_entries(result, listed),
        "listed_total": len(listed),
        "capped": [row for row in by_code if row["listed"] < row["total"]],
        "per_code": per_code, "per_code_asked": asked, "budget": budget,
        "context_events": CONTEXT_EVENTS,
        "filter_tables": _filter_tables(findings),
        "SEVERITIES": SEVERITIES,
    }


def _ns(ts: pd.Series) -> np.ndarray:
    """UTC nanoseconds since the epoch; NaT becomes NO_TIME."""
    s = pd.to_datetime(pd.Series(ts), utc=True).dt.tz_localize(None)
    return s.to_numpy(dtype="datetime64[ns]").view("int64")


def fmt_time(ns: int) -> str:
    """UTC time as `YYYY-MM-DD HH:MM:SS[.ffffff]` ("" for no time)."""
    if ns == NO_TIME:
        return ""
    ns = int(ns)
    ts = _EPOCH + timedelta(microseconds=ns // 1000)
    text = ts.strftime("%Y-%m-%d %H:%M:%S")
    if ns % 1_000_000_000:
        text += f".{ts.microsecond:06d}".rstrip("0")
    return text


def fmt_duration(ns: int) -> str:
    seconds = int(ns // 1_000_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def _span(ts_ns: np.ndarray) -> dict | None:
    if not len(ts_ns):
        return None
    lo, hi = int(ts_ns.min()), int(ts_ns.max())
    return {"first": fmt_time(lo), "last": fmt_time(hi), "duration": fmt_duration(hi - lo)}


def _verdict(findings: pd.DataFrame, meta: dict) -> dict:
    """Pass or fail at the --fail-on threshold recorded in `meta` (`fail_on`,
    or the `verdict` that `auditor check` records); "major", said to be
    assumed, when it records none. When the recorded verdict counts fewer
    failing findings (known from a baseline, or waived), that count decides,
    as it decided the exit code, and the page says how many were excused."""
    recorded = meta.get("verdict") if isinstance(meta.get("verdict"), dict) else {}
    fail_on = meta.get("fail_on") or recorded.get("fail_on")
    assumed = fail_on not in SEVERITY_RANK
    if assumed:
        fail_on = DEFAULT_FAIL_ON
    at_or_over = at_or_above(findings, fail_on)
    failing = at_or_over
    if recorded.get("fail_on") == fail_on and isinstance(recorded.get("failing"), int):
        failing = min(recorded["failing"], at_or_over)
    return {"passed": not failing, "fail_on": fail_on, "assumed": assumed,
            "failing": failing, "excused": at_or_over - failing, "total": len(findings)}


def _by_severity(findings: pd.DataFrame, fail_on: str, listed: pd.DataFrame) -> list[dict]:
    counts = severity_counts(findings)
    shown = severity_counts(listed)
    limit = SEVERITY_RANK[fail_on]
    return [{"severity": s, "n": counts[s], "listed": shown[s],
             "gating": SEVERITY_RANK[s] <= limit} for s in SEVERITIES]


def _code_order(codes) -> list[str]:
    """Catalogue order (as the spec lists them), then any other code."""
    known = [c for c in CODES if c in codes]
    return known + sorted(set(codes) - set(known))


def _by_code(findings: pd.DataFrame, ruleset, per_code: int) -> list[dict]:
    if not len(findings):
        return []
    sizes = findings.groupby(["code", "severity"]).size()
    rules: dict[str, list[tuple[str, str]]] = {}
    for code, rule_id, clause in findings[["code", "rule_id", "clause"]].drop_duplicates() \
            .itertuples(index=False):
        rules.setdefault(code, []).append((str(rule_id), str(clause)))
    out = []
    for code in _code_order(set(findings["code"])):
        counts = {s: int(sizes.get((code, s), 0)) for s in SEVERITIES}
        total = sum(counts.values())
        out.append({
            "code": code, "counts": counts, "total": total,
            "listed": min(total, per_code), "meaning": CODES.get(code, ""),
            "rules": [{"id": rid, "clause": cl, "summary": _rule_summary(ruleset, rid, code)}
                      for rid, cl in sorted(rules.get(code, []))],
        })
    return out


def _own_summary(ruleset, rule_id: str) -> str:
    """The rule's summary in the ruleset's own words ("" when it has none)."""
    try:
        return ruleset.rule(rule_id).summary or ""
    except KeyError:
        return ""


def _rule_summary(ruleset, rule_id: str, code: str) -> str:
    return _own_summary(ruleset, rule_id) or CODES.get(code, "")


def _tables(result, events: pd.DataFrame, ts_ns: np.ndarray,
            findings: pd.DataFrame) -> list[dict]:
    """One row per table audited: span, events, rolls, shooters, findings."""
    if not len(events):
        return []
    starts, ends, names = table_runs(events)
    is_roll = (events["event"] == "roll").to_numpy()
    is_accept = (events["event"] == "dice_accepted").to_numpy()
    roll_cum = np.r_[0, np.cumsum(is_roll)]
    accept_cum = np.r_[0, np.cumsum(is_accept)]
    f_tables = findings["table_id"].astype(object)
    per_table = findings.groupby(f_tables.fillna(""), sort=False)["severity"]
    totals = per_table.size().to_dict()
    worst = per_table.agg(lambda s: min(s.map(SEVERITY_RANK))).to_dict() if len(findings) \
        else {}
    out = []
    for a, b, name in zip(starts.tolist(), ends.tolist(), names):
        seg = ts_ns[a:b]
        lo, hi = int(seg.min()), int(seg.max())
        out.append({
            "id": name, "start": a, "end": b, "first": fmt_time(lo), "last": fmt_time(hi),
            "t0": lo, "t1": hi, "duration": fmt_duration(hi - lo), "events": b - a,
            "rolls": int(roll_cum[b] - roll_cum[a]),
            "shooters": int(accept_cum[b] - accept_cum[a]),
            "findings": int(totals.get(name, 0)),
            "worst": SEVERITIES[worst[name]] if name in worst else None,
        })
    return sorted(out, key=lambda t: t["id"])


def table_runs(events: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Start and end positions and names of each table's run of events (the
    events are grouped by table)."""
    cat = events["table_id"].astype("category").cat
    codes = cat.codes.to_numpy()
    if not len(codes):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), []
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    ends = np.r_[starts[1:], len(codes)]
    names = [str(cat.categories[c]) for c in codes[starts]]
    return starts, ends, names


def _timeline_tables(tables: list[dict]) -> list[dict]:
    if len(tables) <= MAX_TIMELINES:
        return tables
    chosen = sorted(tables, key=lambda t: (-t["findings"], t["id"]))[:MAX_TIMELINES]
    return sorted(chosen, key=lambda t: t["id"])


def _timeline_note(tables: list[dict]) -> str | None:
    if len(tables) <= MAX_TIMELINES:
        return None
    return (f"Timelines of the {MAX_TIMELINES} tables with the most findings; "
            f"{len(tables) - MAX_TIMELINES} other table(s) are listed above but not drawn.")


def _timelines(events, ts_ns, findings, tables, anchors) -> list[dict]:
    if not tables:
        return []
    is_roll = (events["event"] == "roll").to_numpy()
    is_accept = (events["event"] == "dice_accepted").to_numpy()
    seats = events["seat"]
    f_ts = _ns(findings["ts"]) if len(findings) else np.empty(0, dtype=np.int64)
    f_frame = pd.DataFrame({
        "table_id": findings["table_id"].astype(object).to_numpy(),
        "ts_ns": f_ts,
        "severity": findings["severity"].to_numpy(),
        "code": findings["code"].to_numpy(),
        "anchor": [anchors.get(fid) for fid in findings["finding_id"]],
    })
    f_frame = f_frame[f_frame["ts_ns"] != NO_TIME]
    f_groups = {k: g for k, g in f_frame.groupby("table_id", sort=False)}
    out = []
    for t in _timeline_tables(tables):
        a, b = t["start"], t["end"]
        seg_ts = ts_ns[a:b]
        acc_idx = np.flatnonzero(is_accept[a:b]) + a
        acc_seats = ["?" if pd.isna(v) else str(v) for v in seats.iloc[acc_idx]]
        chart = html_charts.timeline(
            t["t0"], t["t1"], seg_ts[is_roll[a:b]], ts_ns[acc_idx], acc_seats,
            f_groups.get(t["id"], f_frame.iloc[0:0]))
        out.append({"table": t, "chart": chart})
    return out


def _filter_tables(findings: pd.DataFrame) -> list[dict]:
    ids = findings["table_id"].astype(object)
    names = sorted({str(v) for v in ids.dropna()})
    out = [{"value": n, "label": n} for n in names]
    if ids.isna().any():
        out.append({"value": "", "label": "(no table: unreadable row)"})
    return out


# --- the findings listed -------------------------------------------------


def code_cap(sizes: list[int], per_code: int, budget: int) -> int:
    """The findings listed per code: `per_code`, lowered to the largest cap
    that lists at most `budget` findings in all (never below 1)."""
    def listed(cap: int) -> int:
        return sum(min(n, cap) for n in sizes)

    cap = per_code
    if listed(cap) <= budget:
        return cap
    lo, hi = 1, cap  # listed(lo) may pass the budget only when codes > budget
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if listed(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _listed(findings: pd.DataFrame, per_code: int) -> pd.DataFrame:
    """The first `per_code` findings of each code, in finding order."""
    if not len(findings):
        return findings
    rank = findings.groupby("code", sort=False).cumcount()
    return findings[rank.to_numpy() < per_code].reset_index(drop=True)


def _finding_entries(result, listed: pd.DataFrame) -> list[dict]:
    if not len(listed):
        return []
    events = result.logs.events
    positions = _event_positions(events, listed)
    context = _Context(events)
    context.prepare(positions)
    quarantine = _quarantine_rows(result.logs.quarantine, listed, positions)
    times = [fmt_time(v) for v in _ns(listed["ts"])]
    entries = []
    cols = ("finding_id", "code", "rule_id", "clause", "severity", "table_id", "seq", "event",
            "seat", "actor_role", "actor_id", "message", "evidence", "source_file",
            "source_line")
    for i, row in enumerate(listed[list(cols)].itertuples(index=False, name=None)):
        (fid, code, rule_id, clause, severity, table_id, seq, event, seat, role, actor,
         message, evidence, source_file, source_line) = row
        pos = int(positions[i])
        entries.append({
            "anchor": "f-" + str(fid), "finding_id": fid, "code": code, "rule_id": rule_id,
            "clause": clause, "severity": severity,
            "rule_summary": _own_summary(result.ruleset, rule_id),
            "table": _text(table_id), "seq": _text(seq), "time": times[i],
            "event": _text(event), "seat": _text(seat),
            "actor": " ".join(x for x in (_text(role), _text(actor)) if x),
            "message": _text(message),
            "where": f"{_text(source_file)}:{_text(source_line)}" if _text(source_file)
            else "",
            "evidence": _pretty_json(evidence),
            "context": context.window(pos) if pos >= 0 else None,
            "raw": quarantine.get(i),
        })
    return entries


def _event_positions(events: pd.DataFrame, listed: pd.DataFrame) -> np.ndarray:
    """The position in `events` of each listed finding's row (-1: none, as
    for a quarantined row), by source file and line."""
    if not len(events):
        return np.full(len(listed), -1, dtype=np.int64)
    files = events["source_file"].astype("category").cat
    ev_lines = events["source_line"].to_numpy(dtype=np.int64, na_value=-1)
    ev_keys = (files.codes.to_numpy().astype(np.int64) << 32) | (ev_lines & 0xFFFFFFFF)
    # -1 for a file no event came from (every row of it quarantined)
    f_codes = files.categories.get_indexer(listed["source_file"].astype(object)) \
        .astype(np.int64)
    f_lines = listed["source_line"].to_numpy(dtype=np.int64, na_value=-1)
    wanted = (f_codes << 32) | (f_lines & 0xFFFFFFFF)
    # Only the rows holding a listed key are indexed (a few hundred findings
    # against millions of events); the first row of a key wins.
    positions = np.flatnonzero(np.isin(ev_keys, wanted))
    if not len(positions):  # every listed finding is of a quarantined row
        return np.full(len(listed), -1, dtype=np.int64)
    index = pd.Index(ev_keys[positions])
    first = ~index.duplicated()
    index, positions = pd.Index(ev_keys[positions][first]), positions[first]
    found = index.get_indexer(wanted)
    ok = (found >= 0) & (f_codes >= 0) & (f_lines >= 0)
    return np.where(ok, positions[np.maximum(found, 0)], -1).astype(np.int64)


class _Context:
    """The log rows around a finding: the CONTEXT_EVENTS events before and
    after it in the same table, in recorded (seq) order, each cell as text."""

    def __init__(self, events: pd.DataFrame):
        self.events = events
        self.starts, self.ends, self.names = table_runs(events)
        extras = [c for c in events.columns
                  if c not in COLUMN_NAMES and c not in _INTERNAL_COLUMNS]
        self.columns = ["source_line", *COLUMN_NAMES[1:], *extras]  # table_id is per window
        self.labels = ["line", *COLUMN_NAMES[1:], *extras]
        self.cells: dict[int, list[str]] = {}

    def _bounds(self, pos: int) -> tuple[int, int, str]:
        k = int(np.searchsorted(self.starts, pos, side="right") - 1)
        lo = max(int(self.starts[k]), pos - CONTEXT_EVENTS)
        hi = min(int(self.ends[k]), pos + CONTEXT_EVENTS + 1)
        return lo, hi, self.names[k]

    def prepare(self, positions: np.ndarray) -> None:
        """Format, once, every row any window shows."""
        wanted: set[int] = set()
        for pos in positions.tolist():
            if pos >= 0:
                lo, hi, _ = self._bounds(pos)
                wanted.update(range(lo, hi))
        if not wanted:
            return
        rows = np.array(sorted(wanted), dtype=np.int64)
        sub = self.events.iloc[rows]
        columns = [_column_text(sub[c], c) for c in self.columns]
        for j, pos in enumerate(rows.tolist()):
            self.cells[pos] = [col[j] for col in columns]

    def window(self, pos: int) -> dict:
        lo, hi, table_name = self._bounds(pos)
        rows = [self.cells[p] for p in range(lo, hi)]
        show = [k for k, label in enumerate(self.labels)
                if label in _ALWAYS or any(r[k] for r in rows)]
        table = aligned([self.labels[k] for k in show],
                        [[r[k] for k in show] for r in rows], pos - lo)
        table["table"] = table_name
        return table


def _cell(text: str) -> str:
    """A cell on one line of an aligned table: control characters shown as
    escapes, so a value never breaks the layout (the page escapes markup),
    and a value longer than MAX_CELL cut short, saying by how much."""
    if len(text) > MAX_CELL:
        text = text[:MAX_CELL] + f"\u2026[+{len(text) - MAX_CELL:,} chars]"
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def aligned(labels: list[str], rows: list[list[str]], mark: int) -> dict:
    """A small table as aligned monospace text (one text node, not hundreds
    of cells: a page listing thousands of findings stays light), split
    around the row to highlight: {"before", "this", "after"}, each plain
    text that the template escapes."""
    labels = [_cell(x) for x in labels]
    rows = [[_cell(x) for x in r] for r in rows]
    widths = [max(len(labels[k]), *(len(r[k]) for r in rows)) for k in range(len(labels))]

    def line(cells: list[str]) -> str:
        return " ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    full = sum(widths) + len(widths) - 1 + 2
    lines = ["  " + line(r) for r in rows]
    lines[mark] = ("\u25b6 " + line(rows[mark])).ljust(full)
    head = ["  " + line(labels), "  " + " ".join("-" * w for w in widths)]
    return {"before": "\n".join(head + lines[:mark]) + "\n", "this": lines[mark],
            "after": "".join("\n" + x for x in lines[mark + 1:])}


def _column_text(series: pd.Series, name: str) -> list[str]:
    if name == "ts" or pd.api.types.is_datetime64_any_dtype(series):
        return [fmt_time(v) for v in _ns(series)]
    return [_text(v) for v in series.astype(object).tolist()]


def _text(value) -> str:
    """A cell as text: empty when not recorded, integers without `.0`."""
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, (np.integer,)):
        return str(int(value))
    if isinstance(value, np.floating):
        return _text(float(value))
    return str(value)


def _pretty_json(text) -> str:
    """Evidence as indented JSON, short lists of plain values on one line."""
    if text is None or text is pd.NA:
        return "{}"
    try:
        return _pretty(json.loads(text), 0)
    except (TypeError, ValueError, RecursionError):
        return str(text)


def _pretty(value, depth: int) -> str:
    pad = "  " * depth
    if isinstance(value, dict) and value:
        items = [f"{pad}  {json.dumps(k, ensure_ascii=False)}: {_pretty(v, depth + 1)}"
                 for k, v in sorted(value.items())]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and value:
        flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        if len(flat) <= 72 and not any(isinstance(v, (dict, list)) for v in value):
            return flat
        items = [pad + "  " + _pretty(v, depth + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


def _quarantine_rows(quarantine: pd.DataFrame, listed: pd.DataFrame,
                     positions: np.ndarray) -> dict[int, dict]:
    """For each listed finding with no replayed row: the quarantined row as
    recorded (every cell as text) and why it was set aside."""
    need = [i for i in range(len(listed)) if positions[i] < 0]
    if not need or not len(quarantine):
        return {}
    index = {(str(f), int(line)): (raw, reason) for f, line, raw, reason in zip(
        quarantine["source_file"], quarantine["source_line"], quarantine["raw"],
        quarantine["reason"])}
    out = {}
    files = listed["source_file"].astype(object).tolist()
    lines = listed["source_line"].astype(object).tolist()
    for i in need:
        if files[i] is None or lines[i] is None or lines[i] is pd.NA:
            continue
        hit = index.get((str(files[i]), int(lines[i])))
        if hit is None:
            continue
        raw, reason = hit
        try:
            cells = json.loads(raw)
        except (TypeError, ValueError, RecursionError):
            cells = {"text": str(raw)}
        if not isinstance(cells, dict):
            cells = {"text": str(raw)}
        if set(cells) == {"text"}:
            out[i] = {"reason": _text(reason), "text": _text(cells["text"]), "table": None}
            continue
        keys = [c for c in COLUMN_NAMES if c in cells] + sorted(
            c for c in cells if c not in COLUMN_NAMES)
        table = aligned(keys, [[_text(cells[k]) for k in keys]], 0)
        out[i] = {"reason": _text(reason), "text": None, "table": table}
    return out
