"""Roll-ups: the findings counted per site, table, gaming day and staff
member, beside the valid rolls each dealt, so that every count is also a
rate per 1,000 valid rolls (issue 29; docs/regulators.md).

One row per (`level`, `key`, `code`): `level` is `site`, `table`, `day` or
`staff`; `key` the site, the table (`site/table_id`, or the table id
without sites), the gaming day (ISO date) or the staff member (`site/id`,
or the id without sites); `code` None for the row over every code. Every key
the audit dealt rolls at has its all-codes row, with zero findings where it
had none (a lawful night reads 0.0 per 1,000, not nothing). Made from the
findings and the exposure the audit already holds (`auditor.audit.exposure`):
no second read of the logs.

Where a finding counts: its site and table; the gaming day of its table
session (a finding at a row with no seq, a quarantined row, has none); the
staff member it is laid at (`responsible_id`). Where a roll counts: its
session's site, table and day; each staff member on duty at it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from auditor.codes import SEVERITIES
from auditor.findings import SITE_SEPARATOR, missing

LEVELS: tuple[str, ...] = ("site", "table", "day", "staff")
#: rollups.parquet's schema.
ROLLUPS_SCHEMA = pa.schema([
    ("level", pa.string()), ("key", pa.string()), ("code", pa.string()),
    ("findings", pa.int64()), *((s, pa.int64()) for s in SEVERITIES),
    ("rolls", pa.int64()), ("per_1000_rolls", pa.float64()),
])
ROLLUP_COLUMNS: tuple[str, ...] = tuple(ROLLUPS_SCHEMA.names)
#: What the report says when no log said who was on duty.
NO_STAFF = ("no staff_on events with a staff id in the logs: nobody is known to have been "
            "on duty, so no finding is laid at a staff member and the staff level is empty")


def rate(findings, rolls):
    """Findings per 1,000 valid rolls (None where no roll was dealt), to 6 places."""
    findings = np.asarray(findings, dtype=np.float64)
    rolls = np.asarray(rolls, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.round(findings * 1000.0 / rolls, 6)
    return np.where(rolls > 0, out, np.nan)


def _split(keys: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(site or None, id as recorded) of exposure keys (`site` + separator + id)."""
    keys = keys.astype(object)
    has = keys.map(lambda k: isinstance(k, str) and SITE_SEPARATOR in k)
    parts = keys.where(~has, keys.astype(str).str.split(SITE_SEPARATOR, n=1).str[1])
    sites = pd.Series([None] * len(keys), index=keys.index, dtype=object)
    if has.any():
        first = keys[has].astype(str).str.split(SITE_SEPARATOR, n=1).str[0]
        sites[has] = first.where(first != "", None)
    return sites, parts


def _shown(sites: pd.Series, ids: pd.Series, with_sites: bool) -> pd.Series:
    if not with_sites:
        return ids.astype(object)
    return pd.Series([i if s is None else f"{s}/{i}" for s, i in zip(sites, ids)],
                     index=ids.index, dtype=object)


def rollups(findings: pd.DataFrame, exposure) -> pd.DataFrame:
    """Every roll-up row, ordered by level, key and code (None first)."""
    sessions, staff = exposure.sessions, exposure.staff
    s_sites, s_tables = _split(sessions["table"]) if len(sessions) else \
        (pd.Series(dtype=object), pd.Series(dtype=object))
    f_sites = findings["site"].astype(object).where(findings["site"].notna(), None) \
        if "site" in findings else pd.Series([None] * len(findings), index=findings.index,
                                             dtype=object)
    with_sites = bool(f_sites.notna().any() or s_sites.notna().any())
    # --- the rolls dealt, per level and key
    dealt = []
    if len(sessions):
        table_keys = _shown(s_sites, s_tables, with_sites)
        if with_sites:
            dealt.append(pd.DataFrame({"level": "site", "key": s_sites,
                                       "rolls": sessions["rolls"]}).dropna(subset=["key"]))
        dealt.append(pd.DataFrame({"level": "table", "key": table_keys,
                                   "rolls": sessions["rolls"]}))
        dealt.append(pd.DataFrame({"level": "day", "key": sessions["day"],
                                   "rolls": sessions["rolls"]}))
    if len(staff):
        st_sites, _ = _split(staff["table"])
        dealt.append(pd.DataFrame({"level": "staff",
                                   "key": _shown(st_sites, staff["staff_id"], with_sites),
                                   "rolls": staff["rolls"]}))
    rolls = pd.concat(dealt, ignore_index=True).groupby(["level", "key"], sort=False)["rolls"] \
        .sum() if dealt else pd.Series(dtype="int64")
    # --- the findings, per level and key
    found = []
    if len(findings):
        tables = findings["table_id"].astype(object)
        code, severity = findings["code"].astype(object), findings["severity"].astype(object)

        def level(name, keys):
            found.append((name, keys.to_numpy(dtype=object)))

        if with_sites:
            level("site", f_sites)
        level("table", _shown(f_sites, tables, with_sites).where(tables.notna(), None))
        level("day", finding_days(findings, sessions, f_sites, with_sites))
        if "responsible_id" in findings:
            who = findings["responsible_id"].astype(object)
            level("staff", _shown(f_sites, who, with_sites).where(who.notna(), None))
    return _rows(_counted(found, code, severity) if found else [], rolls)


def finding_days(findings, sessions, f_sites, with_sites) -> pd.Series:
    """Each finding's gaming day: its table session's (None without a seq):
    the last of its table's sessions (in their order) whose first seq is
    at or before the finding's. Numpy a table at a time, not a pandas
    assignment: a state's hundreds of tables are hundreds of loop turns."""
    out = np.full(len(findings), None, dtype=object)
    if not len(sessions):
        return pd.Series(out, index=findings.index, dtype=object)
    keys = findings["table_id"].astype(object)
    if with_sites:
        keys = pd.Series([t if s is None or t is None else f"{s}{SITE_SEPARATOR}{t}"
                          for s, t in zip(f_sites, keys)], index=findings.index, dtype=object)
    # each session's table as a number (-1: none), the sessions of a table
    # side by side in their order
    s_code, tables = pd.factorize(sessions["table"], use_na_sentinel=True)
    firsts = sessions["first_seq"].to_numpy(dtype=np.int64)
    days = sessions["day"].to_numpy(dtype=object)
    by_table = np.argsort(s_code, kind="stable")
    bounds = np.searchsorted(s_code[by_table], np.arange(len(tables) + 1))
    seq = findings["seq"]
    f_code = pd.Index(tables).get_indexer(keys)  # (-1: a table no session names)
    asked = np.flatnonzero(seq.notna().to_numpy(dtype=bool) & (f_code >= 0))
    if not len(asked):
        return pd.Series(out, index=findings.index, dtype=object)
    seqs = seq.to_numpy(dtype=np.int64, na_value=0)
    asked = asked[np.argsort(f_code[asked], kind="stable")]
    starts = np.flatnonzero(np.diff(f_code[asked], prepend=-1))
    for rows in np.split(asked, starts[1:]):
        mine = by_table[bounds[f_code[rows[0]]]:bounds[f_code[rows[0]] + 1]]
        at = np.searchsorted(firsts[mine], seqs[rows], side="right") - 1
        ok = at >= 0
        out[rows[ok]] = days[mine[at[ok]]]
    return pd.Series(out, index=findings.index, dtype=object)


def _counted(found: list[tuple[str, np.ndarray]], code: pd.Series,
             severity: pd.Series) -> list[pd.DataFrame]:
    """The findings counted per (level, key) and per (level, key, code),
    each severity apart: keys and codes numbered once, the counts taken by
    `np.bincount` (a pandas group-by of every level's rows, copied a level
    at a time, was 0.15 s of the main process's at 53,000 findings, a cost
    that grows with the findings)."""
    code_no, code_names = pd.factorize(code.to_numpy(dtype=object))
    code_names = np.asarray(code_names, dtype=object)
    seen, seen_names = pd.factorize(severity.to_numpy(dtype=object))
    severity_no = np.array([SEVERITIES.index(n) if n in SEVERITIES else -1
                            for n in seen_names] + [-1], dtype=np.int64)[seen]
    overall, by_code = [], []
    for name, keys in found:
        key_no, key_names = pd.factorize(keys)  # (-1: no key, not counted at this level)
        kept = key_no >= 0
        key_no, severities = key_no[kept], severity_no[kept]
        key_names = np.asarray(key_names, dtype=object)
        overall.append(_tally(name, key_no, severities, key_names, None))
        # (a key and a code as one number)
        pair = key_no.astype(np.int64) * len(code_names) + code_no[kept]
        by_code.append(_tally(name, pair, severities, key_names, code_names))
    return [pd.concat(overall, ignore_index=True), pd.concat(by_code, ignore_index=True)]


def _tally(level: str, group: np.ndarray, severities: np.ndarray, key_names: np.ndarray,
           code_names: np.ndarray | None) -> pd.DataFrame:
    """A row per distinct `group` (a key's number, or key * codes + code):
    its key, its code (None: every code), its findings and each severity's."""
    at, present = pd.factorize(group)  # (hashed, not sorted: the rows are sorted after)
    per_key = 1 if code_names is None else len(code_names)
    frame = pd.DataFrame({"level": level, "key": key_names[present // per_key],
                          "code": None if code_names is None else code_names[present % per_key]})
    frame["findings"] = np.bincount(at, minlength=len(present)).astype(np.int64)
    for i, name in enumerate(SEVERITIES):
        frame[name] = np.bincount(at[severities == i], minlength=len(present)).astype(np.int64)
    return frame


def _rows(counted: list[pd.DataFrame], rolls: pd.Series) -> pd.DataFrame:
    keys = pd.DataFrame({"level": [k[0] for k in rolls.index], "key": [k[1] for k in rolls.index],
                         "code": None}) if len(rolls) else \
        pd.DataFrame({"level": [], "key": [], "code": []}, dtype=object)
    rows = pd.concat([keys, *counted], ignore_index=True)
    rows = rows.drop_duplicates(["level", "key", "code"], keep="last") if counted else rows
    for c in ("findings", *SEVERITIES):
        rows[c] = rows[c].fillna(0).astype(np.int64) if c in rows else np.int64(0)
    # (each row's rolls looked up at once: a row at a time was a third of
    # the roll-ups at 10,000 tables)
    at = pd.MultiIndex.from_arrays([rows["level"].to_numpy(dtype=object),
                                    rows["key"].to_numpy(dtype=object)])
    rows["rolls"] = rolls.reindex(at, fill_value=0).to_numpy(dtype=np.int64) if len(rolls) \
        else np.zeros(len(rows), dtype=np.int64)
    rows["per_1000_rolls"] = rate(rows["findings"], rows["rolls"])
    rows["order"] = rows["level"].map({lv: i for i, lv in enumerate(LEVELS)})
    rows["has_code"] = rows["code"].notna()
    rows["code_key"] = rows["code"].fillna("")
    rows = rows.sort_values(["order", "key", "has_code", "code_key"], kind="stable")
    rows = rows[list(ROLLUP_COLUMNS)].reset_index(drop=True)
    for c in ("level", "key", "code"):
        rows[c] = rows[c].astype(object).where(rows[c].notna(), None)
    return rows


def rollups_of(result) -> pd.DataFrame:
    """The roll-ups of an audit (empty without an exposure)."""
    exposure = getattr(result, "exposure", None)
    if exposure is None:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in ROLLUP_COLUMNS})
    if "day" not in exposure.sessions:  # a result the library made, never `regulated`
        from auditor.audit.responsible import dated

        exposure.sessions = dated(exposure.sessions, result.logs.inputs)
    # made once per result and findings (every format of one report reads them)
    cached = result.__dict__.get("_rollups")
    if cached is not None and cached[0] is result.findings:
        return cached[1]
    made = rollups(result.findings, exposure)
    result.__dict__["_rollups"] = (result.findings, made)
    return made


def records(frame: pd.DataFrame, levels=("site", "staff")) -> list[dict]:
    """Rows of `levels` as JSON-able dicts (a rate over no rolls: None)."""
    picked = frame[frame["level"].isin(levels)]
    out = []
    for row in picked.to_dict("records"):
        rate_ = row["per_1000_rolls"]
        row["per_1000_rolls"] = None if missing(rate_) else float(rate_)
        for c in ("findings", *SEVERITIES, "rolls"):
            row[c] = int(row[c])
        out.append(row)
    return out


def notes(result) -> list[str]:
    """What the roll-ups could not say, for the reports to say it."""
    exposure = getattr(result, "exposure", None)
    if exposure is None or exposure.has_staff:
        return []
    return [NO_STAFF]


def rollups_meta(result) -> dict:
    """What rollups.parquet's metadata says beside the provenance: the
    audit's period (first and last event time, ISO UTC; what `auditor
    trend` dates a report by) and the notes."""
    exposure = getattr(result, "exposure", None)
    period = exposure.period if exposure is not None else None
    shown = None if period is None else [
        pd.Timestamp(us, unit="us", tz="UTC").isoformat() for us in period]
    return {"period": shown, "notes": notes(result)}
