"""Who answers for each finding, and the gaming day of each session
(issue 29): what the regulator's roll-ups (`auditor.report.rollups`) group by.

A finding's `responsible_id` / `responsible_role` is the actor of its event
when that actor is staff and named; otherwise the one staff member on duty in
the role its rule makes responsible (`Rule.responsible`), at its row
(`auditor.audit.exposure`). When nobody in that role was on duty, or two were
(two dealers) and the event does not say which, it stays empty: never
guessed.

A session's gaming day is the date of its `table_open` in the UTC offset the
log wrote that time in (`auditor.logs.local_day`); a session crossing
midnight stays on the day it opened (docs/decisions.md, "Gaming day").
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from auditor.audit.exposure import Exposure
from auditor.checks.registry import STAFF_ROLES
from auditor.findings import SITE_SEPARATOR

#: The columns added to the findings, after `caveat` (findings.parquet only).
RESPONSIBLE_COLUMNS = ("responsible_id", "responsible_role")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def regulated(result):
    """`result` with its sessions dated (`exposure.sessions["day"]`) and each
    finding's responsible staff member; an audit without exposure (none
    collected) gets empty columns."""
    exposure = getattr(result, "exposure", None)
    if exposure is None:
        exposure = result.exposure = Exposure()
    exposure.sessions = dated(exposure.sessions, result.logs.inputs)
    rulesets = getattr(result, "rulesets", None) or [result.ruleset]
    result.findings = with_responsible(result.findings, exposure, rulesets)
    return result


def dated(sessions: pd.DataFrame, inputs) -> pd.DataFrame:
    """`sessions` with `day` (ISO date) and `offset_minutes` (the offset
    it was dated in)."""
    sessions = sessions.copy()
    if not len(sessions):
        sessions["day"] = pd.Series(dtype=object)
        sessions["offset_minutes"] = pd.Series(dtype="int64")
        return sessions
    exact: dict[tuple[str, str, int], int] = {}
    by_file: dict[str, int] = {}
    for f in inputs:
        for tid, seq, minutes in getattr(f, "open_offsets", ()):
            exact[(str(f.path), tid, int(seq))] = minutes
            by_file.setdefault(str(f.path), minutes)
    offsets, days = [], []
    for table, first, opened, us, source in zip(
            sessions["table"].tolist(), sessions["first_seq"].tolist(),
            sessions["opened"].tolist(), sessions["open_us"].tolist(),
            sessions["source_file"].tolist()):
        recorded = str(table).split(SITE_SEPARATOR, 1)[-1]
        minutes = exact.get((str(source), recorded, int(first))) if opened else None
        if minutes is None:  # no table_open read: the file's own offset, else UTC
            minutes = by_file.get(str(source), 0)
        offsets.append(int(minutes))
        local = _EPOCH + timedelta(microseconds=int(us), minutes=int(minutes))
        days.append(local.date().isoformat())
    sessions["day"] = days
    sessions["offset_minutes"] = np.asarray(offsets, dtype=np.int64)
    return sessions


def _table_keys(findings: pd.DataFrame) -> pd.Series:
    """Each finding's table as the exposure keys it (site + separator + id)."""
    tables = findings["table_id"].astype(object)
    if "site" not in findings:
        return tables
    sites = findings["site"].astype(object)
    has = sites.notna() & tables.notna()
    return tables.where(~has, sites.astype(str) + SITE_SEPARATOR + tables.astype(str))


def _each_distinct(values: np.ndarray, func, dtype=object) -> np.ndarray:
    """`func` of each value, called once a distinct value (the findings are
    many, their actors and rules few); a missing value passed as None."""
    numbers, distinct = pd.factorize(values)
    return np.array([func(v) for v in distinct] + [func(None)], dtype=dtype)[numbers]


def _responsible_roles(findings: pd.DataFrame, rulesets) -> np.ndarray:
    """The role each finding's rule lays it at (`responsible`), or None:
    looked up once a (ruleset, rule) pair, not once a finding."""
    role_of = {(rs.id, r.id): r.responsible for rs in rulesets for r in rs.rules}
    ruleset_no, ruleset_ids = pd.factorize(findings["ruleset"].astype(object))
    rule_no, rule_ids = pd.factorize(findings["rule_id"].astype(object))
    # (the last row and column: a missing ruleset or rule id, numbered -1)
    grid = np.full((len(ruleset_ids) + 1, len(rule_ids) + 1), None, dtype=object)
    for i, ruleset_id in enumerate(ruleset_ids):
        for j, rule_id in enumerate(rule_ids):
            grid[i, j] = role_of.get((ruleset_id, rule_id))
    return grid[ruleset_no, rule_no]


def with_responsible(findings: pd.DataFrame, exposure: Exposure, rulesets) -> pd.DataFrame:
    """`findings` with RESPONSIBLE_COLUMNS (objects, None where nobody)."""
    findings = findings.copy()
    n = len(findings)
    ids = np.full(n, None, dtype=object)
    roles = np.full(n, None, dtype=object)
    if n:
        actor_role = findings["actor_role"].astype(object).to_numpy()
        actor_id = findings["actor_id"].astype(object).to_numpy()
        staff = np.isin(actor_role, STAFF_ROLES) & _each_distinct(
            actor_id, lambda a: isinstance(a, str) and a != "", bool)
        ids[staff], roles[staff] = actor_id[staff], actor_role[staff]
        wanted = _responsible_roles(findings, rulesets)
        seq = findings["seq"]
        ask = ~staff & pd.notna(wanted) & seq.notna().to_numpy()
        if ask.any() and len(exposure.duties):
            at = np.flatnonzero(ask)
            asked = pd.DataFrame({"at": at, "table": _table_keys(findings).to_numpy()[at],
                                  "role": wanted[at],
                                  "seq": seq.to_numpy(dtype="float64", na_value=np.nan)[at]})
            duties = exposure.duties[["table", "role", "staff_id", "on_seq", "off_seq"]]
            joined = asked.merge(duties, on=["table", "role"], how="inner")
            joined = joined[(joined["on_seq"] < joined["seq"]) &
                            (joined["seq"] < joined["off_seq"])]
            counts = joined.groupby("at")["staff_id"].nunique()
            one = counts[counts == 1].index
            named = joined[joined["at"].isin(one)].drop_duplicates("at")
            rows = named["at"].to_numpy(dtype=np.int64)
            ids[rows] = named["staff_id"].to_numpy(dtype=object)
            roles[rows] = named["role"].to_numpy(dtype=object)
    findings["responsible_id"] = pd.Series(ids, index=findings.index, dtype=object)
    findings["responsible_role"] = pd.Series(roles, index=findings.index, dtype=object)
    return findings
