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

Worked out for all findings of an audit at once: binary searches per
finding in the rows of rolls, opens and closes, and sorted (table, seq) keys
of the quarantined rows and gaps; no loop over events.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from auditor.checks.common import Shared, next_after, rows_where
from auditor.codes import LOG_CODES
from auditor.logs.arrays import category_codes

#: A (table, seq) key: the table's code above, the seq below these bits.
_SEQ_BITS = 40
_SEQ_MAX = (1 << _SEQ_BITS) - 1


def caveats(events: pd.DataFrame, state, quarantine: pd.DataFrame, rows, codes
            ) -> np.ndarray:
    """One caveat per finding (None where its hand is whole), for findings
    at event `rows` (-1: not an event, no caveat) with codes `codes`."""
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
    rows = np.asarray(rows, dtype=np.int64)
    about_rules = ~np.isin(np.asarray(codes, dtype=object), LOG_CODES)
    wanted = np.flatnonzero((rows >= 0) & about_rules)
    if not len(wanted):
        return out
    begin, end = _hands(events, state, t_codes, e_seq, rows[wanted])
    q_lo = np.searchsorted(quarantined, begin, side="right")
    q_hi = np.searchsorted(quarantined, end, side="left")
    g_lo = np.searchsorted(holes_lo, begin, side="right")
    g_hi = np.searchsorted(holes_lo, end, side="left")
    run_last = _run_ends(quarantined)
    for k in np.flatnonzero((q_hi > q_lo) | (g_hi > g_lo)).tolist():
        parts = []
        if q_hi[k] > q_lo[k]:
            rows_in = int(q_hi[k] - q_lo[k])
            stop = min(q_hi[k], q_lo[k] + _LISTED_ROWS)
            # (the run of the last row looked at, to its end in the hand)
            last = min(int(run_last[stop - 1]), int(quarantined[q_hi[k] - 1]))
            parts.append(("quarantined row " if rows_in == 1 else "quarantined rows ")
                         + _runs(quarantined[q_lo[k]:stop] & _SEQ_MAX, rows_in, "rows",
                                 last & _SEQ_MAX, last == quarantined[q_hi[k] - 1])
                         + " in this hand")
        if g_hi[k] > g_lo[k]:
            gaps_in = int(g_hi[k] - g_lo[k])
            listed = slice(g_lo[k], min(g_hi[k], g_lo[k] + CAVEAT_RUNS))
            spans = [(lo & _SEQ_MAX, hi & _SEQ_MAX) for lo, hi in
                     zip(holes_lo[listed].tolist(), holes_hi[listed].tolist())]
            parts.append(f"seq {_listed(spans, gaps_in, 'gaps')} missing in this hand")
        out[wanted[k]] = "; ".join(parts)
    return out


#: The runs of quarantined rows, and the gaps, a caveat lists at most; past
#: them it says how many there are in all. A hand of a night of unreadable
#: rows held thousands, each listed in each of its findings' caveats: 80,000
#: rows of such a night took 12 s and 0.8 GB, 1.9M rows past 11 GB.
CAVEAT_RUNS = 10
#: The quarantined rows looked at for those runs (a run may repeat a seq).
_LISTED_ROWS = 20 * CAVEAT_RUNS


def _hands(events: pd.DataFrame, state, t_codes: np.ndarray, seqs: np.ndarray,
           found: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (table, seq) keys each hand lies strictly between, for findings
    at event rows `found`: a hand starts after the valid roll (what the
    replay says a roll decided) or `table_open` before the finding, or
    after the valid roll before that one when the nearer start is a roll
    (from the table's start where there is none), and ends before the next
    valid roll, `table_open` or `table_close` (or the table's end). Binary
    searches per finding in the rows of each kind: no pass over the events."""
    rolls = np.asarray(state.rows("roll_counted_total") if hasattr(state, "rows") else [],
                       dtype=np.int64)
    sh = Shared.of(events, state)  # (the rows of an event and the table bounds, as checks found them)
    opens, closes = sh.event_rows("table_open"), sh.event_rows("table_close")
    table_starts = sh.table_starts
    at = np.searchsorted(table_starts, found, side="right") - 1
    table_lo = table_starts[at]
    table_hi = np.append(table_starts[1:], len(t_codes))[at]
    first, last = _equal_key_runs(t_codes, seqs, found)
    roll, opened = _last_before(rolls, first), _last_before(opens, first)
    # the roll before the nearer start, when that is a roll
    earlier = np.maximum(_last_before(rolls, np.maximum(roll, 0)), opened)
    start = np.where(opened > roll, opened, earlier)
    table_key = _keys(t_codes[found], np.zeros(len(found), dtype=np.int64))
    begin = np.where(start >= table_lo, _keys(t_codes[np.maximum(start, 0)],
                                              seqs[np.maximum(start, 0)]), table_key - 1)
    far = np.iinfo(np.int64).max  # (past every event: no end before the table's)
    stop = np.minimum(np.minimum(next_after(rolls, last, far), next_after(opens, last, far)),
                      next_after(closes, last, far))
    end = np.where(stop < table_hi, _keys(t_codes[np.minimum(stop, len(seqs) - 1)],
                                          seqs[np.minimum(stop, len(seqs) - 1)]),
                   table_key + _SEQ_MAX + 1)
    return begin, end


def _last_before(sorted_rows: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """For each of `rows`, the last of `sorted_rows` before it (-1: none)."""
    if not len(sorted_rows):
        return np.full(len(rows), -1, dtype=np.int64)
    at = np.searchsorted(sorted_rows, rows, side="left") - 1
    return np.where(at >= 0, sorted_rows[np.maximum(at, 0)], -1)


def _equal_key_runs(t_codes: np.ndarray, seqs: np.ndarray, found: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The first and last row of each found row's run of rows with its
    (table, seq): a repeated seq is one place in the table's order."""
    repeats = rows_where(len(seqs), lambda a, b: (seqs[a:b] == seqs[a - 1:b - 1])
                         & (t_codes[a:b] == t_codes[a - 1:b - 1]), start=1)
    if not len(repeats):
        return found, found
    # consecutive repeated rows are one run (a run's first row is not a repeat)
    new_block = np.r_[True, np.diff(repeats) != 1]
    block = np.cumsum(new_block) - 1
    block_first = repeats[new_block] - 1
    block_last = repeats[np.r_[new_block[1:], True]]
    here = np.minimum(np.searchsorted(repeats, found), len(repeats) - 1)
    first = np.where(repeats[here] == found, block_first[block[here]], found)
    after = np.minimum(np.searchsorted(repeats, found + 1), len(repeats) - 1)
    last = np.where(repeats[after] == found + 1, block_last[block[after]], found)
    return first, last


def _codes(column: pd.Series, names: pd.Index) -> np.ndarray:
    if isinstance(column.dtype, pd.CategoricalDtype):
        return category_codes(column)  # (as stored: `_keys` widens what it keys)
    return pd.Index(names).get_indexer(column.astype(object)).astype(np.int64)


def _keys(table_codes: np.ndarray, seqs: np.ndarray) -> np.ndarray:
    return (table_codes.astype(np.int64) << _SEQ_BITS) | np.clip(seqs, 0, _SEQ_MAX)


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
    gap = np.flatnonzero(inside < (hi - lo + 1))
    # sorted by key, to be searched: the rows hold their tables in the order
    # the input gave them, their keys in the order of the tables' codes
    gap = gap[np.argsort(lo[gap], kind="stable")]
    return lo[gap], hi[gap]


def _runs(seqs: np.ndarray, count: int, what: str, last: int | None = None,
          to_the_end: bool = True) -> str:
    """Seqs as runs, `250-252, 260`: the first `CAVEAT_RUNS` of them, and
    where there are more (of `count` rows in all), `…` and that count.
    `seqs`: the first rows of the hand only; `last`: where the run of the
    last of them ends, and `to_the_end`, whether that is the hand's last
    row (a long run is shown whole, not cut where the rows looked at end)."""
    values = sorted(set(seqs.tolist()))
    runs, start, prev = [], values[0], values[0]
    for v in values[1:]:
        if v != prev + 1:
            runs.append((start, prev))
            start = v
        prev = v
    runs.append((start, prev if last is None else max(prev, last)))
    return _listed(runs, count, what, complete=to_the_end)


def _run_ends(keys: np.ndarray) -> np.ndarray:
    """For each of the sorted `keys`, the last key of its run of
    consecutive ones (a repeated key in the run): worked out once for all
    findings, so that a caveat shows a long run whole at no cost a row."""
    if not len(keys):
        return keys
    new = np.r_[True, np.diff(keys) > 1]
    starts = np.flatnonzero(new)
    ends = keys[np.r_[starts[1:] - 1, len(keys) - 1]]
    return ends[np.cumsum(new) - 1]


def _listed(spans: list[tuple[int, int]], count: int, what: str,
            complete: bool | None = None) -> str:
    """`spans` as `300, 305-307`; where some are left out (more than
    `CAVEAT_RUNS`, or `complete` False), the first of them, `…` and how
    many `what` there are in all: `300, 305-307, … (1,210 rows in all)`."""
    shown = spans[:CAVEAT_RUNS]
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in shown)
    whole = len(shown) == len(spans) and (complete if complete is not None
                                          else len(spans) == count)
    return text if whole else f"{text}, … ({count:,} {what} in all)"
