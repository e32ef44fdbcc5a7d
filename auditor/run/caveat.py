"""Caveats: a finding that may exist only because rows around it could not be
read. A finding's *hand* is its table's rows after the last valid roll (or
the `table_open`) before it, up to the finding, widened to what the finding
stands on: back to the valid roll before that one (a quarantined `no_roll`
there changes what the roll decided) and on to the next valid roll or the
session's end (a quarantined call of the total). When the hand holds a
quarantined row or a sequence gap, the finding carries that as its caveat
(`quarantined rows 250-252 in this hand`), for a reader to weigh before
acting on it. Findings about the log itself (`log.*`) are those rows and
gaps: they carry none.

Worked out for all findings of an audit at once: sorted keys of
(table, seq) and binary searches, no loop over events.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from auditor.checks.common import rows_where
from auditor.codes import LOG_CODES

#: A (table, seq) key: the table's code above, the seq below these bits.
_SEQ_BITS = 40
_SEQ_MAX = (1 << _SEQ_BITS) - 1


def caveats(events: pd.DataFrame, state, quarantine: pd.DataFrame, tables,
            seqs, codes) -> np.ndarray:
    """One caveat per finding (None where its hand is whole), for findings
    at table keys `tables`, seqs `seqs` (missing: no caveat), codes `codes`."""
    n = len(codes)
    out = np.full(n, None, dtype=object)
    if not n or not len(events):
        return out
    table_col = events["table_id"]
    names = table_col.cat.categories if isinstance(table_col.dtype, pd.CategoricalDtype) \
        else pd.Index(pd.unique(table_col.astype(object)))
    t_codes = _codes(table_col, names)
    e_seq = events["seq"].to_numpy(dtype=np.int64, na_value=-1)
    quarantined = _quarantined_keys(quarantine, names)
    holes_lo, holes_hi = _gaps(t_codes, e_seq, quarantined)
    if not len(quarantined) and not len(holes_lo):
        return out
    f_seq = pd.array(seqs, dtype="Int64")
    # -1 for a table the events do not hold (or none read)
    f_codes = pd.Index(names).get_indexer(np.asarray(tables, dtype=object)).astype(np.int64)
    about_rules = ~np.isin(np.asarray(codes, dtype=object), LOG_CODES)
    wanted = np.flatnonzero((f_codes >= 0) & ~np.asarray(f_seq.isna()) & about_rules)
    if not len(wanted):
        return out
    f_keys = _keys(f_codes[wanted], f_seq.to_numpy(dtype=np.int64, na_value=0)[wanted])
    starts, opens, ends = _bounds(events, state, t_codes, e_seq)
    at = np.searchsorted(starts, f_keys, side="left") - 1
    back = np.where((at >= 1) & ~opens[np.maximum(at, 0)], at - 1, at)  # the roll before
    first = f_keys & ~np.int64(_SEQ_MAX)  # the table's own first key
    begin = np.where(back >= 0, starts[np.maximum(back, 0)], -1)
    begin = np.maximum(begin, first - 1)  # no hand start before: from the table's start
    nxt = np.searchsorted(ends, f_keys, side="right")
    last = first + _SEQ_MAX + 1  # past the table's last key
    end = np.minimum(np.where(nxt < len(ends), ends[np.minimum(nxt, len(ends) - 1)], last),
                     last)
    q_lo = np.searchsorted(quarantined, begin, side="right")
    q_hi = np.searchsorted(quarantined, end, side="left")
    g_lo = np.searchsorted(holes_lo, begin, side="right")
    g_hi = np.searchsorted(holes_lo, end, side="left")
    for k in np.flatnonzero((q_hi > q_lo) | (g_hi > g_lo)).tolist():
        parts = []
        if q_hi[k] > q_lo[k]:
            rows = quarantined[q_lo[k]:q_hi[k]] & _SEQ_MAX
            parts.append(("quarantined row " if len(rows) == 1 else "quarantined rows ")
                         + _runs(rows) + " in this hand")
        if g_hi[k] > g_lo[k]:
            spans = [(lo & _SEQ_MAX, hi & _SEQ_MAX) for lo, hi in
                     zip(holes_lo[g_lo[k]:g_hi[k]].tolist(), holes_hi[g_lo[k]:g_hi[k]].tolist())]
            missing = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
            parts.append(f"seq {missing} missing in this hand")
        out[wanted[k]] = "; ".join(parts)
    return out


def _codes(column: pd.Series, names: pd.Index) -> np.ndarray:
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy()  # (as stored: `_keys` widens what it keys)
    return pd.Index(names).get_indexer(column.astype(object)).astype(np.int64)


def _keys(table_codes: np.ndarray, seqs: np.ndarray) -> np.ndarray:
    return (table_codes.astype(np.int64) << _SEQ_BITS) | np.clip(seqs, 0, _SEQ_MAX)


def _bounds(events: pd.DataFrame, state, t_codes: np.ndarray, seqs: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted keys of the rows a hand starts after (valid rolls: what the
    replay says a roll decided; and `table_open`: a session is a check's
    horizon, decision 47), which of them open a session, and the sorted
    keys of the rows a hand ends before (valid rolls, `table_open`,
    `table_close`)."""
    rolls = state.rows("roll_counted_total") if hasattr(state, "rows") else np.empty(0, int)
    opened, closed = _event_rows(events, "table_open"), _event_rows(events, "table_close")
    # unions of row numbers through masks: O(rows), where np.union1d sorts
    # or hashes millions of rolls
    is_start = np.zeros(len(seqs), dtype=bool)
    is_start[np.asarray(rolls, dtype=np.int64)] = True
    is_start[opened] = True
    rows = np.flatnonzero(is_start)
    starts = _keys(t_codes[rows], seqs[rows])
    order = np.argsort(starts, kind="stable")
    is_opening = np.zeros(len(seqs), dtype=bool)
    is_opening[opened] = True
    is_open = is_opening[rows][order]
    is_start[closed] = True
    rows = np.flatnonzero(is_start)
    ends = np.sort(_keys(t_codes[rows], seqs[rows]), kind="stable")  # (sorted already, mostly)
    return starts[order], is_open, ends


def _event_rows(events: pd.DataFrame, name: str) -> np.ndarray:
    """Rows whose event is `name` (through the category codes, when coded)."""
    event = events["event"]
    if isinstance(event.dtype, pd.CategoricalDtype):
        if name not in event.cat.categories:
            return np.empty(0, dtype=np.int64)
        code = event.cat.categories.get_loc(name)
        return np.flatnonzero(event.cat.codes.to_numpy() == code)
    return np.flatnonzero((event == name).to_numpy(dtype=bool))


def _quarantined_keys(quarantine: pd.DataFrame, names: pd.Index) -> np.ndarray:
    """Sorted keys of the quarantined rows whose table and seq were read."""
    if not len(quarantine):
        return np.empty(0, dtype=np.int64)
    seq = pd.array(quarantine["seq"], dtype="Int64")
    codes = pd.Index(names).get_indexer(quarantine["table_id"].astype(object))
    keep = (codes >= 0) & ~np.asarray(seq.isna())
    return np.sort(_keys(codes[keep], seq.to_numpy(dtype=np.int64, na_value=0)[keep]))


def _gaps(t_codes: np.ndarray, seqs: np.ndarray, quarantined: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """Keys of the first and last seq of each run of seqs missing between
    two events of one table, quarantined rows not counted as missing (a
    run some of whose seqs were quarantined is still a gap)."""
    if len(seqs) < 2:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    step = rows_where(len(seqs) - 1, lambda a, b: (seqs[a + 1:b + 1] - seqs[a:b] > 1)
                      & (t_codes[a + 1:b + 1] == t_codes[a:b]))
    if not len(step):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    lo = _keys(t_codes[step], seqs[step] + 1)
    hi = _keys(t_codes[step], seqs[step + 1] - 1)
    inside = np.searchsorted(quarantined, hi, side="right") - \
        np.searchsorted(quarantined, lo, side="left")
    gap = inside < (hi - lo + 1)
    return lo[gap], hi[gap]


def _runs(seqs: np.ndarray) -> str:
    """Seqs as runs: `250-252, 260`."""
    values = sorted(set(seqs.tolist()))
    runs, start, prev = [], values[0], values[0]
    for v in values[1:]:
        if v != prev + 1:
            runs.append((start, prev))
            start = v
        prev = v
    runs.append((start, prev))
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
