"""Stamping: the engine, not the check, gives each hit its location (from
the events' rows), rule id, clause, severity, ruleset and caveat."""

from __future__ import annotations

import numpy as np
import pandas as pd

from auditor.audit.caveat import caveats
from auditor.checks.context import CheckContext
from auditor.checks.registry import Hits
from auditor.findings import LOCATION_COLUMNS, evidence_jsons, paused_gc


def stamp_hits(ctx: CheckContext, hits: Hits, rule, ruleset_id: str) -> pd.DataFrame:
    """The engine, not the check, stamps rule id, clause and severity."""
    with paused_gc():
        return stamp_all(ctx, [(hits, rule)], ruleset_id)


def stamp_all(ctx: CheckContext, found: list[tuple[Hits, object]],
              ruleset_id: str) -> pd.DataFrame:
    """`stamp_hits` of every rule's hits, in rule order, as one frame: the
    location columns are gathered once for all rows of all rules (a frame
    built and typed per rule costs more than most checks)."""
    found = [(h, r) for h, r in found
             if (len(h.located) if h.located is not None else len(h.rows))]
    if not found:
        return pd.DataFrame()
    blocks: list[dict] = []
    run: list[Hits] = []
    for hits, _ in found:
        if hits.located is None:
            run.append(hits)
            continue
        if run:
            blocks.append(_locate_rows(ctx, np.concatenate([h.rows for h in run])))
            run = []
        blocks.append(_located(ctx, hits.located))
    if run:
        blocks.append(_locate_rows(ctx, np.concatenate([h.rows for h in run])))
    columns = {c: _joined([b[c] for b in blocks]) for c in LOCATION_COLUMNS}
    counts = [len(h.located) if h.located is not None else len(h.rows) for h, _ in found]
    for name, attr in (("code", "code"), ("rule_id", "id"), ("clause", "clause"),
                       ("severity", "severity")):
        columns[name] = np.repeat(np.array([getattr(r, attr) for _, r in found], dtype=object),
                                  counts)
    columns["ruleset"] = np.full(sum(counts), ruleset_id, dtype=object)
    messages: list = []
    evidence: list = []
    for hits, _ in found:
        messages.extend(hits.messages)
        evidence.extend(hits.evidence)
    columns["message"] = _objects(messages)
    # A finding whose hand holds unreadable rows says so (auditor.audit.caveat).
    event_rows = np.concatenate([h.rows if h.located is None else
                                 np.full(len(h.located), -1, dtype=np.int64) for h, _ in found])
    columns["caveat"] = caveats(ctx.events, ctx.state, ctx.quarantine, event_rows,
                                columns["code"])
    for i in np.flatnonzero(pd.notna(columns["caveat"])).tolist():
        evidence[i] = {**(evidence[i] or {}), "caveat": columns["caveat"][i]}
    columns["evidence"] = _objects(evidence_jsons(evidence))
    order = (*LOCATION_COLUMNS, "code", "rule_id", "ruleset", "clause", "severity", "message",
             "evidence", "caveat")
    # Text stays object: a frame built from object arrays of text would
    # infer the str dtype and read None as NaN.
    return pd.DataFrame({c: pd.Series(columns[c], dtype=object, copy=False)
                         if isinstance(columns[c], np.ndarray) and columns[c].dtype == object
                         else columns[c] for c in order})


_CATEGORICAL_LOCATION = ("table_id", "event", "actor_role", "actor_id", "source_file")


def _locate_rows(ctx: CheckContext, rows: np.ndarray) -> dict:
    """The location columns of event `rows`: text as objects (NaN where
    nothing was recorded, as a categorical reads), numbers and time as
    the events hold them."""
    events = ctx.events
    out = {}
    for c in LOCATION_COLUMNS:
        column = events[c]
        if isinstance(column.dtype, pd.CategoricalDtype):
            out[c] = ctx.shared.values_at(c, rows)
        elif c in _CATEGORICAL_LOCATION:
            out[c] = np.asarray(column.array.take(rows), dtype=object)
        else:
            out[c] = column.array.take(rows)
    return out


def _located(ctx: CheckContext, located: pd.DataFrame) -> dict:
    """The location columns of findings about rows that are not events."""
    out = {}
    for c in LOCATION_COLUMNS:
        values = located[c]
        if c in ("seq", "seat", "source_line"):
            out[c] = values.astype("Int64").array
        elif c == "ts":
            ts = pd.to_datetime(values, utc=True)
            like = ctx.events["ts"].dtype if "ts" in ctx.events else None
            if isinstance(like, pd.DatetimeTZDtype) and ts.dtype != like:
                ts = ts.astype(like)  # as the events' times: one dtype to join
            out[c] = ts.array
        else:
            out[c] = values.to_numpy(dtype=object)
    return out


def _joined(arrays: list):
    if len(arrays) == 1:
        return arrays[0]
    if all(isinstance(a, np.ndarray) for a in arrays):
        return np.concatenate(arrays)
    return pd.concat([pd.Series(a) for a in arrays], ignore_index=True).array


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
