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
the page's only script; the script reads `data-` attributes, and on a page
listing many findings inserts their details from an inert comment holding
markup this template wrote (escaped as everywhere else). A Content
Security Policy allows only that script and that stylesheet (by hash) and no
fetch of any kind: no fonts, images, frames or connections.

Volume: counts and charts cover every finding; the findings listed are
capped per table and code (`MAX_FINDINGS_PER_TABLE_CODE`) with a note saying how many are
shown, so 100,000 findings still open in seconds; the findings not listed
travel in the page as JSON lines up to `MAX_UNLISTED_CARRIED` of them, and past
that the page carries none and says where they are (decision 119). Of the events the page
shows only what `auditor.report.html_events` takes from them (each table's
counts and timeline series, the rows around the findings listed), so a
timeline is a few SVG elements however many events, and an audit by
batches gives that digest without reading the events again; where the
audit runs in workers they also render the details of the findings sure
to be listed (`PageCollector`, decision 117), so the main process only
places them. Each listed finding shows the game just before its row
(`auditor.report.html_state`), taken with the rows around it. A page listing more than
`MAX_FINDINGS_EMBEDDED` findings carries their details as markup in an inert
comment that its script builds into rows as the page opens and into details
as each is opened or printed, so tens of thousands of critical findings open
in seconds too. Same audit, same bytes: no
clock is read (the time appears only when `meta` carries `generated_at`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
from markupsafe import Markup

from auditor.atomic import atomic_path
from auditor.audit.collect import Collectors, taken_by
from auditor.audit.core import replay_state
from auditor.audit.coverage import scope
from auditor.codes import CODES, SEVERITIES, SEVERITY_RANK
from auditor.findings import at_or_above, joined_sites, severity_counts
from auditor.logs.schema import COLUMN_NAMES
from auditor.logs.site import shown_table
from auditor.report import html_charts, html_overview
from auditor.report.dice_report import html_context as dice_context
from auditor.report.dice_tally import COLLECTOR as DICE_COLLECTOR
from auditor.report.html_events import (
    CONTEXT_EVENTS,
    NO_TIME,
    EventCollector,
    EventDigest,
    digest,
    fmt_time,
    group_keys,
    is_critical,
    listed_findings,
    natural_key,
    utc_ns,
    windows_of,
)
from auditor.report.html_events import text as _text
from auditor.report.page import FINDING, PAGE, TEMPLATES, environment
from auditor.report.provenance import provenance
from auditor.report.records import record_texts
from auditor.report.summary import incomplete_text, loosened_line

#: findings listed per table and code; counts and charts always cover them all
MAX_FINDINGS_PER_TABLE_CODE = 200
#: What the engines keep of each batch's events for this page (`auditor.audit.collect`):
#: the rows around its findings and the dice tally of its dice section.
COLLECTOR = Collectors(html=EventCollector(MAX_FINDINGS_PER_TABLE_CODE), dice=DICE_COLLECTOR)
#: findings listed in all: when many codes each pass the per-code cap, the
#: cap is lowered evenly for every code so the page stays quick to open
MAX_FINDINGS_LISTED = 2000
#: findings listed whose details are markup in the page: past this many the
#: details travel in an inert comment and the script builds each row as the
#: page opens and each finding's details as it is opened (or printed), so tens of
#: thousands of critical findings still open in a second or two
MAX_FINDINGS_EMBEDDED = 3000
#: findings not listed that the page carries as JSON lines: past this many it
#: carries none of them (a page of 650,000 was 496 MB, which no browser opens
#: with ease, and its text was held whole in memory) and says so, naming the
#: report files that hold every finding (decision 119)
MAX_UNLISTED_CARRIED = 100_000
#: characters of one cell shown in the rows around a finding (longer ones are cut)
MAX_CELL = 160
#: tables drawn as timelines (those with the most findings when there are more)
MAX_TIMELINES = 60
#: the threshold assumed when `meta` does not say (the default of `auditor check`)
DEFAULT_FAIL_ON = "major"

REPORT_NAME = "report.html"


def write(result, meta: dict, out: Path, dice_alpha: float | None = None) -> list[str]:
    """The `html` format: OUT/report.html, written atomically, piece by
    piece as the template makes it (the text `render_html` gives: a page
    carrying 650,000 findings not listed is 500 MB, joined and encoded
    whole it was twice that again in memory)."""
    target = Path(out) / REPORT_NAME
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8") as page:
        page.writelines(page_pieces(result, meta, dice_alpha=dice_alpha))
    return [str(target)]


def render_html(result, meta: dict | None = None,
                per_table_code: int = MAX_FINDINGS_PER_TABLE_CODE,
                budget: int = MAX_FINDINGS_LISTED, dice_alpha: float | None = None,
                carried: int | None = None) -> str:
    """The whole page as text."""
    return "".join(page_pieces(result, meta, per_table_code, budget, dice_alpha, carried))


def page_pieces(result, meta: dict | None = None,
                per_table_code: int = MAX_FINDINGS_PER_TABLE_CODE,
                budget: int = MAX_FINDINGS_LISTED, dice_alpha: float | None = None,
                carried: int | None = None):
    """The page's text in the pieces the template makes it in."""
    template, static = _template()
    context = report_context(result, meta or {}, per_table_code, budget, dice_alpha, carried)
    return template.generate(**context, **static)


@functools.cache
def _template():
    """The page's template, compiled, and its static parts (style, script and
    the policy allowing just them): the same for every report, so made once
    per process (compiled when the package was built: `auditor.report.page`)."""
    env = environment()
    css = (TEMPLATES / "report.css").read_text(encoding="utf-8")
    js = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    csp = ("default-src 'none'; "
           f"style-src '{_csp_hash(css)}'; script-src '{_csp_hash(js)}'; "
           "img-src 'none'; font-src 'none'; connect-src 'none'; "
           "base-uri 'none'; form-action 'none'")
    # static files of the package, no log data
    return env.get_template(PAGE), {"css": Markup(css), "js": Markup(js), "csp": csp}


def _csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


# --- what the page says --------------------------------------------------


def report_context(result, meta: dict, per_table_code: int = MAX_FINDINGS_PER_TABLE_CODE,
                   budget: int = MAX_FINDINGS_LISTED, dice_alpha: float | None = None,
                   carried: int | None = None) -> dict:
    """Everything the template shows, as plain data."""
    needed = ("auditor_version", "ruleset", "inputs", "rows")
    prov = dict(meta) if all(k in meta for k in needed) else {**provenance(result), **meta}
    findings = joined_sites(result.findings)  # tables keyed as the events are

    verdict = _verdict(findings, meta)
    # What the audit could not look at stands in the verdict's banner.
    verdict["incomplete"] = incomplete_text(
        prov.get("not_evaluated", getattr(result, "not_evaluated", [])),
        prov.get("not_audited", []))
    verdict["not_audited"] = bool(prov.get("not_audited"))

    asked = per_table_code
    per_table_code = code_cap(_group_sizes(findings), per_table_code, budget)
    listed = listed_order(listed_findings(findings, per_table_code))
    anchors = {fid: "f-" + fid for fid in listed["finding_id"]}
    by_code = _by_code(findings, result.ruleset, listed)
    events = event_digest(result, per_table_code)
    tables = _tables(events, findings, listed)
    not_listed = len(findings) - len(listed)
    carried = unlisted_limit(carried)
    # (as recorded: the site apart)
    unlisted = _unlisted(result.findings, listed) if not_listed <= carried else None

    rs = prov.get("ruleset", {})
    entries = _finding_entries(result, events, listed)
    regulator = html_overview.overview(result)  # None: the page as before
    if regulator is not None:
        for entry, site, staff in zip(entries, *html_overview.entry_keys(listed)):
            entry.site, entry.staff = site, staff
    return {
        "overview": regulator,
        "version": prov.get("auditor_version", ""),
        "generated_at": meta.get("generated_at"),
        "ruleset": {
            "id": rs.get("id", result.ruleset.id),
            "title": rs.get("title", result.ruleset.title),
            "status": rs.get("status", result.ruleset.status),
            "content_hash": rs.get("content_hash", result.ruleset.content_hash),
            "disabled_rules": rs.get("disabled_rules", []),
            # what an overlay or a file not the shipped ruleset loosened
            "loosened_line": loosened_line(getattr(result, "rulesets", None)
                                           or [result.ruleset]),
            "shown": result.ruleset.shown,
            "jurisdiction": result.ruleset.jurisdiction,
            "authority": result.ruleset.authority,
            "notes": result.ruleset.notes,
            "source": result.ruleset.source,
            "rule_count": len(result.ruleset.rules),
        },
        "verdict": verdict,
        "not_evaluated": [{**e, "scope": scope(e)} for e in
                          prov.get("not_evaluated", getattr(result, "not_evaluated", []))],
        "not_audited": prov.get("not_audited", []),
        "excluded": prov.get("excluded", []),
        "inputs": prov.get("inputs", []),
        "rows": prov.get("rows", {}),
        "balanced": all(f["rows_read"] == f["rows_replayed"] + f["rows_quarantined"]
                        for f in prov.get("inputs", [])),
        "span": _span(events),
        "tables": tables,
        "severities": _by_severity(findings, verdict["fail_on"], listed),
        "by_code": by_code,
        "code_chart": html_charts.code_bars(
            [(row["code"], row["counts"]) for row in by_code]),
        "timelines": _timelines(events, findings, tables, anchors),
        "timeline_note": _timeline_note(tables),
        "findings": entries,
        "lazy": len(listed) > MAX_FINDINGS_EMBEDDED,
        "listed_total": len(listed),
        "capped": [row for row in by_code if row["listed"] < row["total"]],
        "per_table_code": per_table_code, "per_table_code_asked": asked, "budget": budget,
        "critical_listed": int(is_critical(listed).sum()),
        "unlisted": unlisted,  # None: not carried (past `carried`)
        "unlisted_count": not_listed,
        "unlisted_carried_at_most": carried,
        "context_events": CONTEXT_EVENTS,
        "filter_tables": _filter_tables(findings, listed),
        "SEVERITIES": SEVERITIES,
        "dice": dice_context(result, dice_alpha),  # auditor.report.dice_report
    }


def event_digest(result, per_table_code: int) -> EventDigest:
    """What the page needs of the events: gathered where they were audited
    (`auditor.audit.collect`) when that covers the findings listed, else taken
    now from the events, replayed once more for the game at each finding."""
    ready = taken_by(getattr(result.logs, "digest", None), "html", alone=True)
    if ready is not None and ready.per_table_code >= per_table_code:
        return ready
    events = result.logs.events
    return digest(events, result.findings, per_table_code, replay_state(events, result.ruleset))


def fmt_duration(ns: int) -> str:
    """A span as a person reads it: days and hours over a day
    (`6 d 23 h 59 min`), else hours and minutes, or minutes and seconds."""
    seconds = int(ns // 1_000_000_000)
    days, seconds = divmod(seconds, 86_400)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days:,} d {hours:02d} h {minutes:02d} min"
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


def _span(events: EventDigest) -> dict | None:
    if events.span is None:
        return None
    lo, hi = events.span
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


def _by_code(findings: pd.DataFrame, ruleset, listed: pd.DataFrame) -> list[dict]:
    if not len(findings):
        return []
    sizes = findings.groupby(["code", "severity"]).size()
    shown = listed["code"].astype(object).value_counts().to_dict()
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
            "listed": int(shown.get(code, 0)), "meaning": CODES.get(code, ""),
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


def _tables(events: EventDigest, findings: pd.DataFrame, listed: pd.DataFrame) -> list[dict]:
    """One row per table audited, in natural order (T2 before T10): span,
    events, rolls, shooters, findings and how many of them are listed."""
    if not events.tables:
        return []
    f_tables = findings["table_id"].astype(object).fillna("")
    totals = findings.groupby(f_tables, sort=False).size().to_dict()
    shown = listed["table_id"].astype(object).fillna("").value_counts().to_dict()
    worst = _worst_ranks(findings["severity"], f_tables)
    return [{
        "key": t.id, "id": shown_table(t.id), "first": fmt_time(t.t0), "last": fmt_time(t.t1), "t0": t.t0, "t1": t.t1,
        "duration": fmt_duration(t.t1 - t.t0), "events": t.events, "rolls": t.rolls,
        "shooters": t.shooters, "findings": int(totals.get(t.id, 0)),
        "listed": int(shown.get(t.id, 0)),
        "worst": SEVERITIES[worst[t.id]] if t.id in worst else None, "series": t,
    } for t in events.tables]


def _worst_ranks(severity: pd.Series, keys: pd.Series) -> dict:
    """The rank of the worst severity of each key's findings: by a grouped
    min, or one by one (as Python's min has it) when a severity is unknown."""
    ranks = severity.astype(object).map(SEVERITY_RANK)
    if not ranks.isna().any():
        return ranks.astype(np.int64).groupby(keys, sort=False).min().to_dict()
    return severity.groupby(keys, sort=False).agg(lambda s: min(s.map(SEVERITY_RANK))).to_dict()


def _timeline_tables(tables: list[dict]) -> list[dict]:
    if len(tables) <= MAX_TIMELINES:
        return tables
    chosen = sorted(tables, key=lambda t: (-t["findings"], natural_key(t["id"])))
    return sorted(chosen[:MAX_TIMELINES], key=lambda t: natural_key(t["id"]))


def _timeline_note(tables: list[dict]) -> str | None:
    if len(tables) <= MAX_TIMELINES:
        return None
    return (f"Timelines of the {MAX_TIMELINES} tables with the most findings; "
            f"{len(tables) - MAX_TIMELINES} other table(s) are listed above but not drawn.")


def _timelines(events: EventDigest, findings, tables, anchors) -> list[dict]:
    if not tables:
        return []
    f_ts = utc_ns(findings["ts"]) if len(findings) else np.empty(0, dtype=np.int64)
    dated = np.flatnonzero(f_ts != NO_TIME)  # a finding with no time is not marked
    f_ts = f_ts[dated]
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    f_sev = np.array([rank.get(s, len(SEVERITIES) - 1) for s in findings["severity"]],
                     dtype=np.int64)[dated]
    f_code = findings["code"].astype(str).to_numpy(dtype=object)[dated]
    f_anchor = [anchors.get(fid) for fid in findings["finding_id"].to_numpy()[dated]]
    f_table = findings["table_id"].astype(object).to_numpy()[dated]
    by_table: dict[str, list[int]] = {}
    for i, name in enumerate(f_table.tolist()):
        by_table.setdefault(name, []).append(i)
    out = []
    for t in _timeline_tables(tables):
        at = np.array(by_table.get(t["key"], []), dtype=np.int64)
        marked = html_charts.Marked(f_ts[at], f_sev[at], f_code[at],
                                    [f_anchor[i] for i in at.tolist()])
        series = t["series"]
        chart = html_charts.timeline(t["t0"], t["t1"], series.roll_bins, series.shooter_bins,
                                     marked)
        out.append({"table": t, "chart": chart})
    return out


def _filter_tables(findings: pd.DataFrame, listed: pd.DataFrame) -> list[dict]:
    """The table filter's choices, in natural order, each with its findings
    in all and how many of them are listed (the rest: in the download)."""
    ids = findings["table_id"].astype(object)
    totals = ids.fillna("").map(shown_table).where(ids.notna(), "").value_counts()
    l_ids = listed["table_id"].astype(object)
    shown = l_ids.fillna("").map(shown_table).where(l_ids.notna(), "").value_counts()
    names = sorted((n for n in totals.index if n != ""), key=natural_key)
    if ids.isna().any():
        names.append("")
    return [{"value": n, "label": n or "(no table: unreadable row)",
             "total": int(totals[n]), "listed": int(shown.get(n, 0)),
             "unlisted": int(totals[n]) - int(shown.get(n, 0))} for n in names]


# --- the findings listed -------------------------------------------------


def unlisted_count(findings: pd.DataFrame, per_table_code: int = MAX_FINDINGS_PER_TABLE_CODE,
                   budget: int = MAX_FINDINGS_LISTED) -> int:
    """How many of these findings the page does not list: counted from the
    cap, not by listing them."""
    findings = joined_sites(findings)
    sizes = _group_sizes(findings)
    cap = code_cap(sizes, per_table_code, budget)
    return len(findings) - int(is_critical(findings).sum()) - sum(min(n, cap) for n in sizes)


def unlisted_limit(carried: int | None = None) -> int:
    """The most findings not listed that a page carries (decision 119):
    `carried`, else MAX_UNLISTED_CARRIED as it is at the call (tests lower it)."""
    return MAX_UNLISTED_CARRIED if carried is None else carried


def carries_unlisted(findings: pd.DataFrame, per_table_code: int = MAX_FINDINGS_PER_TABLE_CODE,
                     budget: int = MAX_FINDINGS_LISTED,
                     carried: int | None = None) -> bool:
    """Whether the page of these findings carries those it does not list
    (and so reads every finding's record text)."""
    return unlisted_count(findings, per_table_code, budget) <= unlisted_limit(carried)


def _group_sizes(findings: pd.DataFrame) -> list[int]:
    """How many non-critical findings each table and code has (the critical
    ones are all listed, outside the cap)."""
    others = findings[~is_critical(findings)]
    if not len(others):
        return []
    return others.groupby(group_keys(others), sort=False).size().tolist()


def listed_order(listed: pd.DataFrame) -> pd.DataFrame:
    """The findings listed, by severity (worst first), time, table (in
    natural order), seq, then finding order; a finding without a time or a
    seq after those with one."""
    if not len(listed):
        return listed
    rank = listed["severity"].astype(object).map(SEVERITY_RANK).fillna(len(SEVERITIES))
    ts = utc_ns(listed["ts"]).copy()
    ts[ts == NO_TIME] = np.iinfo(np.int64).max
    tables = listed["table_id"].astype(object).fillna("")
    order = {t: i for i, t in enumerate(sorted(set(tables), key=natural_key))}
    seq = pd.array(listed["seq"], dtype="Int64").to_numpy(dtype=np.float64, na_value=np.inf)
    keys = (np.arange(len(listed)), seq, tables.map(order).to_numpy(dtype=np.int64), ts,
            rank.to_numpy(dtype=np.int64))
    return listed.iloc[np.lexsort(keys)].reset_index(drop=True)


def _unlisted(findings: pd.DataFrame, listed: pd.DataFrame) -> str:
    """The findings not listed, one JSON object a line (as `--format json`
    writes them, in finding order: a table's site in `site`, apart from
    its id): carried in the page, inert, for its download button, so no
    finding is left out of the page."""
    if len(listed) == len(findings):
        return ""
    texts = record_texts(findings)  # (as the json format's lines: made once)
    rest = np.flatnonzero(~findings["finding_id"].isin(listed["finding_id"]).to_numpy())
    return "\n".join([texts[i] for i in rest.tolist()]) + "\n" if len(rest) else ""


def code_cap(sizes: list[int], per_table_code: int, budget: int) -> int:
    """The findings listed per table and code (besides every critical one):
    `per_table_code`, lowered to the largest cap that lists at most `budget` of
    them in all (never below 1: each table and code keeps one)."""
    def listed(cap: int) -> int:
        return sum(min(n, cap) for n in sizes)

    cap = per_table_code
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


#: What the template reads of a finding (and of the rows around it): fields
#: as attributes, which jinja reads at once, where a dict's keys cost it a
#: failed attribute lookup first (about 0.7 us each, some 60 a finding).
Fields = SimpleNamespace


def _finding_entries(result, events: EventDigest, listed: pd.DataFrame) -> list:
    """What the page shows of each listed finding: its details as rendered
    where its table was audited (`events.details`), or the fields to render
    them from here."""
    if not len(listed):
        return []
    rendered = [events.details.get(fid) for fid in listed["finding_id"].astype(object).tolist()]
    todo = [i for i, done in enumerate(rendered) if done is None]
    entries: list = [Fields(opening=done[0], rest=done[1]) if done is not None else None
                     for done in rendered]
    if todo:
        rows = listed.iloc[todo]
        windows = windows_of(events, rows)
        quarantine = _quarantine_rows(result.logs.quarantine, rows, windows)
        unreadable = _unreadable_around(result.logs.quarantine, rows, windows)
        made = _entries(rows, windows, events.columns(),
                        functools.partial(_own_summary, result.ruleset), quarantine, unreadable)
        for i, entry in zip(todo, made):
            entries[i] = entry
    return entries


_ENTRY_COLUMNS = ("finding_id", "code", "rule_id", "clause", "severity", "table_id", "seq",
                  "event", "seat", "actor_role", "actor_id", "message", "evidence",
                  "source_file", "source_line")


def _entries(listed: pd.DataFrame, windows: list, columns: list[str], summary_of,
             quarantine: dict, unreadable: dict) -> list[Fields]:
    """Each finding of `listed` as the template's `finding_details` renders
    it (`opening` and `rest` None: made from the other fields)."""
    times = [fmt_time(v) for v in utc_ns(listed["ts"])]
    caveats = listed["caveat"].astype(object).tolist() if "caveat" in listed else None
    entries = []
    for i, row in enumerate(listed[list(_ENTRY_COLUMNS)].itertuples(index=False, name=None)):
        (fid, code, rule_id, clause, severity, table_id, seq, event, seat, role, actor,
         message, evidence, source_file, source_line) = row
        entries.append(Fields(
            opening=None, rest=None,
            anchor="f-" + str(fid), finding_id=fid, code=code, rule_id=rule_id,
            clause=clause, severity=severity,
            rule_summary=summary_of(rule_id),
            table=shown_table(_text(table_id)), seq=_text(seq), time=times[i],
            event=_text(event), seat=_text(seat),
            actor=" ".join(x for x in (_text(role), _text(actor)) if x),
            message=_text(message),
            where=f"{_text(source_file)}:{_text(source_line)}" if _text(source_file) else "",
            evidence=_pretty_json(evidence) if _has_evidence(evidence) else None,
            context=_context(windows[i], columns) if windows[i] is not None else None,
            game=windows[i].game if windows[i] is not None else None,
            raw=quarantine.get(i),
            caveat=_text(caveats[i]) if caveats is not None else "",
            unreadable=unreadable.get(i, []),
        ))
    return entries


# --- the details rendered where the findings' tables were audited ---------


@dataclass(frozen=True)
class PageCollector(EventCollector):
    """The page's collector when the ruleset is known: the rows around the
    findings (`EventCollector`), and the details of those sure to be listed
    (every critical finding and the first of each table and code, whatever
    the cap is lowered to) rendered where their table was audited, in the
    worker, rather than in the main process once the audit is done: the
    page's costliest part, tens of thousands of details when the findings
    are many. All but the attributes only the whole audit knows (a
    finding's site and staff member on duty), which the page adds. A
    finding next to unreadable rows, or with no row of its own, is left to
    the page (its details read the quarantine of every file)."""

    #: each rule's summary in the ruleset's own words, by rule id
    summaries: tuple[tuple[str, str], ...] = ()

    def take(self, events: pd.DataFrame, findings: pd.DataFrame, state) -> EventDigest:
        taken = super().take(events, findings, state)
        taken.details = rendered_details(taken, findings, dict(self.summaries))
        # (a window whose every finding is rendered is not needed again)
        rendered = _rendered_rows(findings, taken.details)
        taken.windows = {key: window for key, window in taken.windows.items()
                         if key not in rendered}
        return taken


def page_collector(ruleset) -> Collectors:
    """`COLLECTOR`, with the listed findings' details rendered by the engines
    (`PageCollector`): the same page, made faster."""
    summaries = tuple((r.id, r.summary or "") for r in ruleset.rules)
    return Collectors(html=PageCollector(MAX_FINDINGS_PER_TABLE_CODE, summaries),
                      dice=DICE_COLLECTOR)


def rendered_details(taken: EventDigest, findings: pd.DataFrame,
                     summaries: dict[str, str]) -> dict[str, tuple[str, str]]:
    """The details of each finding of a batch sure to be listed, rendered as
    the page would (its opening tag and the rest), by finding id."""
    sure = listed_findings(joined_sites(findings), 1)
    if not len(sure):
        return {}
    windows = windows_of(taken, sure)
    caveats = sure["caveat"].astype(object) if "caveat" in sure else None
    keep = [i for i, window in enumerate(windows) if window is not None
            and (caveats is None or not _text(caveats.iat[i]))]
    if not keep:
        return {}
    entries = _entries(sure.iloc[keep], [windows[i] for i in keep], taken.columns(),
                       lambda rule_id: summaries.get(rule_id, ""), {}, {})
    macros = _template_module()
    return {str(e.finding_id): (macros.finding_opening(e),
                                macros.finding_rest(e, CONTEXT_EVENTS)) for e in entries}


def _rendered_rows(findings: pd.DataFrame, details: dict) -> set[tuple[str, int]]:
    """The rows (source file, line) all of whose findings are rendered."""
    if not details or not len(findings):
        return set()
    ids = findings["finding_id"].astype(object).tolist()
    rows = zip(findings["source_file"].astype(object).tolist(),
               findings["source_line"].astype(object).tolist())
    done: dict[tuple[str, int], bool] = {}
    for fid, (f, line) in zip(ids, rows):
        try:
            key = (str(f), int(line))
        except (TypeError, ValueError):
            continue
        done[key] = done.get(key, True) and str(fid) in details
    return {key for key, all_rendered in done.items() if all_rendered}


@functools.cache
def _template_module():
    """The macros of the findings' template (`finding.html`), made once per
    process."""
    return environment().get_template(FINDING).module


def _context(window, columns: list[str]) -> Fields:
    """The rows around a finding as an aligned table, its own row marked."""
    shown = [c for c in columns if c in window.cells]
    rows = [list(r) for r in zip(*(window.cells[c] for c in shown))]
    labels = ["line" if c == "source_line" else c for c in shown]
    table = aligned(labels, rows, window.mark)
    table.table = window.table
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


def aligned(labels: list[str], rows: list[list[str]], mark: int) -> Fields:
    """A small table as aligned monospace text (one text node, not hundreds
    of cells: a page listing thousands of findings stays light), split
    around the row to highlight: `before`, `this`, `after`, each plain
    text that the template escapes."""
    labels = [_cell(x) for x in labels]
    rows = [[x if len(x) <= MAX_CELL and x.isprintable() else _cell(x) for x in r]
            for r in rows]
    widths = [max(map(len, column)) for column in zip(labels, *rows)]

    def line(cells: list[str]) -> str:
        return " ".join([c.ljust(w) for c, w in zip(cells, widths)]).rstrip()

    full = sum(widths) + len(widths) - 1 + 2
    lines = ["  " + line(r) for r in rows]
    lines[mark] = ("\u25b6 " + line(rows[mark])).ljust(full)
    head = ["  " + line(labels), "  " + " ".join("-" * w for w in widths)]
    return Fields(before="\n".join(head + lines[:mark]) + "\n", this=lines[mark],
                  after="".join("\n" + x for x in lines[mark + 1:]))


def _has_evidence(text) -> bool:
    """Whether the finding recorded any evidence (not none, not `{}`)."""
    if text is None or text is pd.NA or (isinstance(text, float) and np.isnan(text)):
        return False
    return str(text).strip() not in ("", "{}", "null", "[]")


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


def _unreadable_around(quarantine: pd.DataFrame, listed: pd.DataFrame,
                       windows: list) -> dict[int, list[Fields]]:
    """For each listed finding with a caveat (`auditor.audit.caveat`): the
    quarantined rows of its table whose seq lies within the rows shown
    around it, in seq order (a quarantined row is no event, so the rows
    around it leave it out)."""
    if "caveat" not in listed or not len(quarantine):
        return {}
    flagged = [i for i, c in enumerate(listed["caveat"].tolist())
               if c is not None and not pd.isna(c) and windows[i] is not None]
    if not flagged:
        return {}
    q_seq = pd.array(quarantine["seq"], dtype="Int64")
    q = pd.DataFrame({"table": quarantine["table_id"].astype(object),
                      "seq": q_seq, "line": quarantine["source_line"],
                      "reason": quarantine["reason"], "raw": quarantine["raw"]}).dropna(
        subset=["table", "seq"]).sort_values(["seq", "line"], kind="stable")
    tables = listed["table_id"].astype(object).tolist()
    out = {}
    for i in flagged:
        seqs = [int(s) for s in windows[i].cells.get("seq", []) if str(s).strip().isdigit()]
        if not seqs:
            continue
        near = q[(q["table"] == tables[i]) & (q["seq"] >= min(seqs)) & (q["seq"] <= max(seqs))]
        out[i] = [Fields(line=int(line), seq=int(seq), reason=_text(reason), raw=_text(raw))
                  for seq, line, reason, raw in zip(near["seq"], near["line"],
                                                    near["reason"], near["raw"])]
    return out


def _quarantine_rows(quarantine: pd.DataFrame, listed: pd.DataFrame,
                     windows: list) -> dict[int, Fields]:
    """For each listed finding with no replayed row: the quarantined row as
    recorded (every cell as text) and why it was set aside."""
    need = [i for i in range(len(listed)) if windows[i] is None]
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
            out[i] = Fields(reason=_text(reason), text=_text(cells["text"]), table=None)
            continue
        keys = [c for c in COLUMN_NAMES if c in cells] + sorted(
            c for c in cells if c not in COLUMN_NAMES)
        table = aligned(keys, [[_text(cells[k]) for k in keys]], 0)
        out[i] = Fields(reason=_text(reason), text=None, table=table)
    return out
