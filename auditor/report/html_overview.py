"""The HTML report's overview, a regulator's starting point (issue 29;
docs/regulators.md): shown first when the audit covers more than one site or
more than 20 tables, and only then (every other page is as before).

- one row per site: valid rolls, findings by severity, the rate per 1,000
  valid rolls, its worst codes, and a sparkline of its rate per gaming day;
- the staff members with the highest rates among those with at least
  `MIN_STAFF_ROLLS` valid rolls on duty (a rate over a few rolls says little);
- the tables ranked by rate (the first `MAX_TABLES_RANKED`).

Each row links to the findings list filtered to it (`#site=`, `#staff=`,
`#table=` in the page's address: the page's script reads them). Everything
comes from the roll-ups (`auditor.report.rollups`): a few hundred rows of
markup however many tables and findings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from auditor.codes import SEVERITIES
from auditor.findings import SITE_SEPARATOR, missing
from auditor.logs.site import shown_table
from auditor.report.rollups import finding_days, rate, rollups_of

#: Staff members with fewer valid rolls on duty are not ranked.
MIN_STAFF_ROLLS = 200
#: How many staff members and tables are ranked on the page (all are in
#: rollups.parquet).
MAX_STAFF = 25
MAX_TABLES_RANKED = 100
#: Worst codes shown per site.
WORST_CODES = 3
#: The overview is shown past this many tables, or with more than one site.
MAX_TABLES_WITHOUT = 20


def sparkline(values: list[float | None], width: int = 120, height: int = 24) -> dict:
    """A rate series as the points of an SVG polyline (a gap: no rolls)."""
    got = [v for v in values if v is not None]
    top = max(got) if got and max(got) > 0 else 1.0
    step = width / max(len(values) - 1, 1)
    points = " ".join(f"{i * step:.1f},{height - 2 - (v / top) * (height - 4):.1f}"
                      for i, v in enumerate(values) if v is not None)
    return {"width": width, "height": height, "points": points}


def staff_key(site: str | None, staff_id, with_sites: bool) -> str:
    """A staff member as the roll-ups key them (`site/id` with sites)."""
    if missing(staff_id):
        return ""
    return f"{site}/{staff_id}" if with_sites and site is not None else str(staff_id)


def overview(result) -> dict | None:
    """What the overview shows, or None when the audit is small enough to
    read without it (one site or none, at most MAX_TABLES_WITHOUT tables)."""
    exposure = getattr(result, "exposure", None)
    if exposure is None:
        return None
    frame = rollups_of(result)
    totals = frame[frame["code"].isna()]
    sites = totals[totals["level"] == "site"]
    tables = totals[totals["level"] == "table"]
    if len(sites) <= 1 and len(tables) <= MAX_TABLES_WITHOUT:
        return None
    with_sites = bool(len(sites))
    return {
        "sites": _sites(frame, sites, result, exposure) if with_sites else [],
        "staff": _staff(totals[totals["level"] == "staff"]),
        "staff_min_rolls": MIN_STAFF_ROLLS,
        "staff_recorded": exposure.has_staff,
        "tables": _tables(tables, exposure, with_sites),
        "tables_total": len(tables),
        "severities": SEVERITIES,
        "with_sites": with_sites,
    }


def _rate_text(value) -> str:
    return "–" if missing(value) else f"{value:.2f}"


def _sites(frame, sites, result, exposure) -> list[dict]:
    coded = frame[(frame["level"] == "site") & frame["code"].notna()]
    daily = _site_days(result, exposure)
    days = sorted({d for (_, d) in daily})
    out = []
    for row in sites.to_dict("records"):
        worst = coded[coded["key"] == row["key"]].sort_values(
            ["findings", "code"], ascending=[False, True], kind="stable").head(WORST_CODES)
        series = []
        for d in days:
            found, rolls = daily.get((row["key"], d), (0, 0))
            series.append(None if not rolls else float(rate(found, rolls)))
        out.append({"key": row["key"], "rolls": int(row["rolls"]),
                    "findings": int(row["findings"]),
                    "counts": [int(row[s]) for s in SEVERITIES],
                    "rate": _rate_text(row["per_1000_rolls"]),
                    "worst": [(c, int(n)) for c, n in zip(worst["code"], worst["findings"])],
                    "spark": sparkline(series), "days": len(days),
                    "first_day": days[0] if days else "", "last_day": days[-1] if days else ""})
    return out


def _site_days(result, exposure) -> dict[tuple[str, str], tuple[int, int]]:
    """(site, gaming day) -> (findings, valid rolls)."""
    sessions = exposure.sessions
    if not len(sessions):
        return {}
    site_of = sessions["table"].astype(str).map(
        lambda k: k.split(SITE_SEPARATOR, 1)[0] if SITE_SEPARATOR in k else None)
    rolls = pd.DataFrame({"site": site_of, "day": sessions["day"], "rolls": sessions["rolls"]}) \
        .dropna(subset=["site"]).groupby(["site", "day"])["rolls"].sum()
    findings = result.findings
    found = pd.Series(dtype="int64")
    if len(findings) and "site" in findings:
        sites = findings["site"].astype(object).where(findings["site"].notna(), None)
        days = finding_days(findings, sessions, sites, True)
        found = pd.DataFrame({"site": sites, "day": days}).dropna().groupby(
            ["site", "day"]).size()
    keys = set(rolls.index) | set(found.index)
    return {k: (int(found.get(k, 0)), int(rolls.get(k, 0))) for k in keys}


def _staff(staff: pd.DataFrame) -> list[dict]:
    ranked = staff[staff["rolls"] >= MIN_STAFF_ROLLS].sort_values(
        ["per_1000_rolls", "findings", "key"], ascending=[False, False, True], kind="stable")
    return [{"key": r["key"], "rolls": int(r["rolls"]), "findings": int(r["findings"]),
             "counts": [int(r[s]) for s in SEVERITIES], "rate": _rate_text(r["per_1000_rolls"])}
            for r in ranked.head(MAX_STAFF).to_dict("records")]


def _tables(tables: pd.DataFrame, exposure, with_sites: bool) -> list[dict]:
    """The tables by rate, each with the value the page's table filter
    knows it by (`shown_table` of its key)."""
    shown = {}
    for key in exposure.sessions["table"].astype(str).unique().tolist():
        site, sep, tid = key.partition(SITE_SEPARATOR)
        shown[f"{site}/{tid}" if sep and with_sites and site else (tid if sep else key)] = \
            shown_table(key)
    dealt = tables[tables["rolls"] > 0].copy()
    dealt["rank_rate"] = np.nan_to_num(dealt["per_1000_rolls"].astype(float), nan=-1.0)
    ranked = dealt.sort_values(["rank_rate", "findings", "key"],
                               ascending=[False, False, True], kind="stable")
    return [{"key": r["key"], "filter": shown.get(r["key"], r["key"]), "rolls": int(r["rolls"]),
             "findings": int(r["findings"]), "counts": [int(r[s]) for s in SEVERITIES],
             "rate": _rate_text(r["per_1000_rolls"])}
            for r in ranked.head(MAX_TABLES_RANKED).to_dict("records")]


def entry_keys(findings: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Each listed finding's site and staff key (what `#site=`/`#staff=`
    filter on), from the listed frame (tables keyed with their sites)."""
    tables = findings["table_id"].astype(object).tolist()
    sites = [t.split(SITE_SEPARATOR, 1)[0] if isinstance(t, str) and SITE_SEPARATOR in t
             else "" for t in tables]
    with_sites = any(sites)
    who = findings["responsible_id"].astype(object).tolist() \
        if "responsible_id" in findings else [None] * len(findings)
    return sites, [staff_key(s or None, w, with_sites) for s, w in zip(sites, who)]
