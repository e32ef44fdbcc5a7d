"""The findings as the formats read them, derived once per `write_reports`
call (`auditor.report.shared`): each finding as a plain record, and its
status from the STATUS_COLUMNS triage put beside the findings table's own
columns. A format needs nothing else of the findings, so a new one starts
from these two lists and decodes no provenance.
"""

from __future__ import annotations

import json
import math
from typing import NamedTuple

import pandas as pd

from auditor.findings import STATUS_COLUMNS, findings_columns
from auditor.report.shared import shared

#: the findings table's whole-number columns
INT_COLUMNS = ("seq", "seat", "source_line")


def iso_utc(ts) -> str | None:
    """A timestamp as ISO-8601 in UTC with a `Z` (None when missing)."""
    if ts is None or ts is pd.NaT or pd.isna(ts):
        return None
    return pd.Timestamp(ts).tz_convert("UTC").isoformat().replace("+00:00", "Z")


def plain(value):
    """A cell as a plain JSON value: missing cells become null."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def finding_records(findings: pd.DataFrame) -> list[dict]:
    """The findings as plain dicts, every column of the findings table in
    order: ts as ISO-8601 UTC, evidence as an object, integers or null.
    Shared by the formats of one `write_reports` call: read, never modify."""
    return shared(_records, findings)


def _records(findings: pd.DataFrame) -> list[dict]:
    records = []
    columns = findings_columns(findings)  # with `site` when a table has one
    for row in findings[list(columns)].itertuples(index=False, name=None):
        rec = dict(zip(columns, row))
        for col in columns:
            rec[col] = plain(rec[col])
        for col in INT_COLUMNS:
            if rec[col] is not None:
                rec[col] = int(rec[col])
        rec["ts"] = iso_utc(row[columns.index("ts")])
        rec["evidence"] = json.loads(rec["evidence"]) if rec["evidence"] else {}
        for col in columns:
            if col not in INT_COLUMNS and col not in ("ts", "evidence") \
                    and rec[col] is not None:
                rec[col] = str(rec[col])
        records.append(rec)
    return records


def table_label(rec: dict) -> str | None:
    """A finding's table as a person reads it: `T01`, or `T01 (site casino-a)`
    when its site is known (None when no table was read)."""
    if rec["table_id"] is None:
        return None
    site = rec.get("site")
    return rec["table_id"] if site is None else f"{rec['table_id']} (site {site})"


class FindingStatus(NamedTuple):
    """A finding's triage: `status` (new, known or waived); `in_baseline`,
    None when the audit had no baseline; the waiver that waived it as
    {number, reason, expires}, else None."""

    status: str
    in_baseline: bool | None
    waiver: dict | None


NEW = FindingStatus("new", None, None)


def finding_statuses(findings: pd.DataFrame) -> list[FindingStatus]:
    """Each finding's status, aligned with `finding_records`. Findings that
    went through no triage (no STATUS_COLUMNS: a library caller's audit) are
    all new. Shared like the records: read, never modify."""
    return shared(_statuses, findings)


def _statuses(findings: pd.DataFrame) -> list[FindingStatus]:
    if "status" not in findings.columns:
        return [NEW] * len(findings)
    waivers: dict[int, dict] = {}
    statuses = []
    for status, in_baseline, number, reason, expires in \
            findings[list(STATUS_COLUMNS)].itertuples(index=False, name=None):
        waiver = None
        if plain(number) is not None:
            number = int(number)
            waiver = waivers.setdefault(number, {"number": number, "reason": reason,
                                                 "expires": plain(expires)})
        statuses.append(FindingStatus(str(status), plain(in_baseline), waiver))
    return statuses


def rules_of(result) -> list:
    """The rules of every ruleset the audit used, once per rule id (an audit
    under a family of versions used several; the latest version's rule wins
    but keeps its first place)."""
    rules: dict[str, object] = {}
    for ruleset in getattr(result, "rulesets", None) or [result.ruleset]:
        for rule in ruleset.rules:
            rules[rule.id] = rule
    return list(rules.values())
