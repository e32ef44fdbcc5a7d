"""The findings as the formats read them, derived once per `write_reports`
call (`auditor.report.shared`): each finding as a plain record, and its
status from the STATUS_COLUMNS triage put beside the findings table's own
columns. A format needs nothing else of the findings, so a new one starts
from these two lists and decodes no provenance. The records are also
there column by column (`finding_columns`), with each cell's JSON text
(`column_texts`): a format that writes many findings writes them from the
columns, not a record at a time.
"""

from __future__ import annotations

import json
import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from auditor.findings import findings_columns
from auditor.report.json_text import INT_KINDS, TEXT_KINDS, Template, compact_texts, hole
from auditor.report.shared import made, shared

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
    Shared by the formats of one `write_reports` call: read, never modify
    (one evidence object is shared by the records whose evidence text is
    the same)."""
    return shared(_records, findings)


def _records(findings: pd.DataFrame) -> list[dict]:
    names, values = finding_columns(findings)
    return [dict(zip(names, row)) for row in zip(*values)]


def finding_columns(findings: pd.DataFrame) -> tuple[tuple[str, ...], list[list]]:
    """The records column by column: the findings table's column names (with
    `site` when a table has one) and each column's cells as the records hold
    them. Shared like the records."""
    return shared(_columns, findings)


def _columns(findings: pd.DataFrame) -> tuple[tuple[str, ...], list[list]]:
    # Column by column: at 53,000 findings a cell-by-cell pass (`plain`,
    # `iso_utc` and `json.loads` on each) was 0.5 s of every report.
    names = tuple(findings_columns(findings))
    return names, [_column_values(findings[c], c) for c in names]


def column_texts(findings: pd.DataFrame) -> dict[str, list[str]]:
    """Each record cell's JSON text (`compact_texts`), column by column:
    what the formats writing JSON put in their documents' holes. Shared."""
    return shared(_column_texts, findings)


def _column_texts(findings: pd.DataFrame) -> dict[str, list[str]]:
    names, values = finding_columns(findings)
    return {name: compact_texts(cells) for name, cells in zip(names, values)}


def column_texts_at(findings: pd.DataFrame, positions: list[int],
                    only: tuple[str, ...] | None = None) -> dict[str, list[str]]:
    """`column_texts` of the findings at `positions` alone (of the columns
    `only`, or all): taken from the texts of every finding where this write
    has made them, else made for those findings only (SARIF keeps 25,000
    results of a million findings; JUnit makes its failures a block at a
    time: the texts of the rest would be made for nothing, or all held)."""
    every = made(_column_texts, findings)
    if every is None and (len(positions) < len(findings) or only is not None):
        names, values = finding_columns(findings)
        return {name: compact_texts([cells[p] for p in positions])
                for name, cells in zip(names, values) if only is None or name in only}
    every = column_texts(findings) if every is None else every
    return {name: [column[p] for p in positions] for name, column in every.items()
            if only is None or name in only}


def record_texts(findings: pd.DataFrame) -> list[str]:
    """Each finding record (`finding_records`) as compact JSON text
    (`compact_json`): the json format's lines and the HTML page's findings
    not listed are both made of it. Shared like the records."""
    return shared(_record_texts, findings)


def _record_texts(findings: pd.DataFrame) -> list[str]:
    names, _ = finding_columns(findings)
    return _filled(names, column_texts(findings), len(findings))


def _filled(names: tuple[str, ...], texts: dict[str, list[str]], count: int) -> list[str]:
    # the record's cells put in a template of its keys, not each record
    # encoded whole (a fifth of the time at 53,000 findings)
    holes = {f"c{k}": name for k, name in enumerate(names)}  # (a hole's name is a word)
    template = Template({name: hole(h) for h, name in holes.items()}, None)
    return template.fill([texts[holes[h]] for h in template.names], count)


def record_texts_blocks(findings: pd.DataFrame, size: int):
    """`record_texts`, `size` findings at a time: sliced from the texts of
    every record where this write has made them, else made a block at a
    time (the json format's lines, written as they are made, so that a
    million findings' texts are never all in memory at once)."""
    every = made(_record_texts, findings)
    if every is not None:
        for start in range(0, len(every), size):
            yield every[start:start + size]
        return
    names, values = finding_columns(findings)
    cells = made(_column_texts, findings)
    for start in range(0, len(findings), size):
        stop = min(start + size, len(findings))
        texts = {name: compact_texts(column[start:stop]) for name, column in zip(names, values)} \
            if cells is None else {name: column[start:stop] for name, column in cells.items()}
        yield _filled(names, texts, stop - start)


def _column_values(column: pd.Series, name: str) -> list:
    """A findings column's cells as `finding_records` gives them: missing
    cells None; `ts` ISO-8601 UTC; `evidence` parsed ({} when empty); the
    whole-number columns ints; any other cell as text."""
    if name == "ts":
        return iso_utc_all(column)
    cells = column.tolist()
    for i in np.flatnonzero(column.isna().to_numpy()).tolist():
        cells[i] = None
    if name == "evidence":
        parsed: dict[str, dict] = {}

        def evidence(text):
            if not text:
                return {}
            if text not in parsed:
                parsed[text] = json.loads(text)
            return parsed[text]

        return [evidence(t) for t in cells]
    kinds = set(map(type, cells))  # (a column of the plain kinds is left as it is)
    if name in INT_COLUMNS:
        return cells if kinds <= INT_KINDS else [None if v is None else int(v) for v in cells]
    return cells if kinds <= TEXT_KINDS else \
        [v if v is None or type(v) is str else str(v) for v in cells]


def iso_utc_all(column: pd.Series) -> list[str | None]:
    """`iso_utc` of each cell of a timestamp column, worked out at once for
    a column of microseconds (or coarser) of years 1-9999 (its whole-second
    cells without a fraction, as `isoformat` writes them); any other cell
    by `iso_utc`."""
    try:
        stamps = pd.to_datetime(column, utc=True).dt.tz_localize(None).to_numpy()
    except (TypeError, ValueError, OverflowError):
        return [iso_utc(t) for t in column.tolist()]
    known = ~np.isnat(stamps)
    if not known.any():
        return [None] * len(stamps)
    micros = stamps.astype("datetime64[us]")
    exact = micros.astype(stamps.dtype) == stamps  # no finer part lost
    low, high = micros[known].min(), micros[known].max()
    if not exact[known].all() or low < np.datetime64("0001-01-01") \
            or high >= np.datetime64("10000-01-01"):
        return [iso_utc(t) for t in column.tolist()]
    whole = micros.astype(np.int64) % 1_000_000 == 0
    text = np.where(whole, np.datetime_as_string(micros.astype("datetime64[s]"), unit="s"),
                    np.datetime_as_string(micros, unit="us"))
    return [t + "Z" if k else None for t, k in zip(text.tolist(), known.tolist())]


def each_once(make, values: list, by_id: bool = False) -> list:
    """`make` of each of `values`, worked out once per distinct value (per
    object, `by_id`: `values` holds each meanwhile): a column of a few
    codes, tables or files, written a finding at a time."""
    known: dict = {}
    out = []
    for value in values:
        key = id(value) if by_id else value
        if key not in known:
            known[key] = make(value)
        out.append(known[key])
    return out


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
    # Column by column; a finding no waiver waived shares its status with
    # every other of the same status and baseline (one tuple each).
    status = [str(v) for v in findings["status"].tolist()]
    in_baseline = [plain(v) for v in findings["in_baseline"].tolist()]
    numbers = findings["waiver"].tolist()
    waived = np.flatnonzero(findings["waiver"].notna().to_numpy()).tolist()
    same: dict[tuple, FindingStatus] = {}
    statuses = []
    for s, b in zip(status, in_baseline):
        key = (s, b)
        made = same.get(key)
        if made is None:
            made = same[key] = FindingStatus(s, b, None)
        statuses.append(made)
    waivers: dict[int, dict] = {}
    reasons, expiries = findings["waiver_reason"].tolist(), findings["waiver_expires"].tolist()
    for i in waived:
        number = int(numbers[i])
        waiver = waivers.setdefault(number, {"number": number, "reason": reasons[i],
                                             "expires": plain(expiries[i])})
        statuses[i] = FindingStatus(status[i], in_baseline[i], waiver)
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
