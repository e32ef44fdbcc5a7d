"""Log checks: the evidence quality of the log itself.

These are not regulatory findings; every audit runs them, whatever the
ruleset lists, because a finding is only as good as the log it rests on.
"""

from __future__ import annotations

import bisect
from itertools import pairwise

import numpy as np
import pandas as pd

from auditor.checks.common import expand, in_sorted, rows_where
from auditor.checks.registry import Hits, check, no_hits
from auditor.findings import LOCATION_COLUMNS
from auditor.game.inputs import values_and_nulls


@check("sequence_gap", "log.sequence_gap")
def sequence_gap(ctx, params) -> Hits:
    """`seq` skips numbers within a table: events may be missing.

    Fires on: table T1 with seq 1, 2, 5 (3 and 4 were never recorded).
    Quiet on: seq 1, 2, 3; or 1, 2, 4 where row 3 was recorded but quarantined
    as malformed (the row exists; its own finding says what is wrong with it).
    Points at: the first event after the gap.
    """
    ev = ctx.events
    if len(ev) < 2:
        return no_hits()
    sh = ctx.shared
    seq = sh.seq
    # `seq` rising by more than one; compared so that no difference can wrap
    # around int64 (-2**63 then 2**63 - 1 is a gap too).
    rows = rows_where(len(seq), lambda a, b: (seq[a:b] > seq[a - 1:b - 1])
                      & (seq[a:b] - seq[a - 1:b - 1] != 1), start=1)
    rows = rows[~in_sorted(sh.table_starts, rows)]  # a table's first row follows no row of it
    if not len(rows):
        return no_hits()
    quarantined = _quarantined_seqs(ctx)
    keep, messages, evidence = [], [], []
    tids = sh.values_at("table_id", rows)
    for r, tid in zip(rows.tolist(), tids):
        lo, hi = int(seq[r - 1]), int(seq[r])
        tid = str(tid)
        missing = _missing(lo, hi, quarantined.get(tid, []))
        if missing is None:
            continue
        count, first, last = missing
        keep.append(r)
        messages.append(f"seq jumps from {lo} to {hi}: {count} event(s) missing")
        evidence.append({"previous_seq": lo, "missing_count": count,
                         "missing_first": first, "missing_last": last})
    return Hits(np.asarray(keep, dtype=np.int64), messages, evidence)


def _missing(lo: int, hi: int, known: list[int]) -> tuple[int, int, int] | None:
    """How many seqs between `lo` and `hi` (both excluded) are neither
    recorded nor quarantined (`known`: sorted, distinct), and the first and
    last of them; None when there are none. Worked out arithmetically: time
    and memory follow the quarantined rows, never the size of the gap (seq 1
    then 10**12)."""
    start, stop = bisect.bisect_right(known, lo), bisect.bisect_left(known, hi)
    count = hi - lo - 1 - (stop - start)
    if count <= 0:
        return None
    first, at = lo + 1, start  # past the quarantined seqs just after lo
    while at < stop and known[at] == first:
        first, at = first + 1, at + 1
    last, at = hi - 1, stop - 1  # and just before hi
    while at >= start and known[at] == last:
        last, at = last - 1, at - 1
    return count, first, last


def _quarantined_seqs(ctx) -> dict[str, list[int]]:
    """Per table, the seqs of its quarantined rows, sorted and distinct."""
    q = ctx.quarantine
    out: dict[str, set[int]] = {}
    if len(q):
        sub = q[q["seq"].notna() & q["table_id"].notna()]
        for tid, seq in zip(sub["table_id"], sub["seq"]):
            out.setdefault(str(tid), set()).add(int(seq))
    return {tid: sorted(seqs) for tid, seqs in out.items()}


@check("sequence_order", "log.out_of_order")
def sequence_order(ctx, params) -> Hits:
    """`seq` repeats or goes back, or `ts` goes back as `seq` rises.

    Fires on: two events of table T1 both with seq 7 (the second as read); an
    event whose ts is earlier than that of the event before it by seq; within
    one file, a row whose seq is lower than the previous row of its table.
    Quiet on: seq rising with ts equal or rising; one table split across files
    in any file order.
    Points at: the repeated or backward event.
    """
    ev = ctx.events
    if len(ev) < 2:
        return no_hits()
    sh = ctx.shared
    table = sh.codes("table_id")
    seq = sh.seq
    ts = ev["ts"].to_numpy(dtype="datetime64[us]").view(np.int64)
    n = len(ev)
    # Rows following a row of their own table: seq repeated, or ts going back.
    cand = rows_where(n, lambda a, b: (seq[a:b] == seq[a - 1:b - 1])
                      | (ts[a:b] < ts[a - 1:b - 1]), start=1)
    cand = cand[~in_sorted(sh.table_starts, cand)]
    in_file = _back_in_file(ev["source_order"].to_numpy(), table, sh.codes("source_file"), seq)
    rows = np.union1d(cand, in_file).astype(np.int64)
    same = ~in_sorted(sh.table_starts, rows)
    prev = np.maximum(rows - 1, 0)
    repeated = same & (seq[rows] == seq[prev])
    ts_back = same & (ts[rows] < ts[prev])
    rep, back, in_file = repeated.tolist(), ts_back.tolist(), in_sorted(in_file, rows).tolist()
    went_back = rows[ts_back]
    ts_texts = iter(zip(_utc_texts(ts[went_back - 1]), _utc_texts(ts[went_back])))
    seqs = seq[rows].tolist()
    prev = seq[prev].tolist()
    messages, evidence = [], []
    for i, same_table in enumerate(same.tolist()):
        why = []
        if rep[i]:
            why.append(f"seq {seqs[i]} repeats")
        if back[i]:
            before, after = next(ts_texts)
            why.append(f"ts goes back from {before} to {after}")
        if in_file[i]:
            why.append("seq is lower than the previous row of this table in its file")
        messages.append("; ".join(why))
        evidence.append({"previous_seq": prev[i] if same_table else None})
    return Hits(rows, messages, evidence)


#: 9999-12-31 23:59:59.999999 UTC in microseconds.
_LAST_US = 253402300799999999


def _utc_texts(us: np.ndarray) -> list[str]:
    """`str(pd.Timestamp(v, unit="us", tz="UTC"))` of each value, worked out
    by numpy for the years 1970-9999 (whole seconds without a fraction, as
    pandas prints them)."""
    if not len(us) or us.min() < 0 or us.max() > _LAST_US:
        return [str(pd.Timestamp(v, unit="us", tz="UTC")) for v in us.tolist()]
    whole = us % 1_000_000 == 0
    text = np.where(whole, np.datetime_as_string(us.astype("datetime64[us]"), unit="s"),
                    np.datetime_as_string(us.astype("datetime64[us]"), unit="us"))
    return [t.replace("T", " ") + "+00:00" for t in text.tolist()]


def _back_in_file(order: np.ndarray, table: np.ndarray, files: np.ndarray,
                  seq: np.ndarray) -> np.ndarray:
    """Rows (ascending) whose seq is lower than that of the previous row of
    their table in file (recording) order, that row being in the same file.
    Rows of other tables between the two do not matter: what a row is
    compared with never depends on which other tables are audited with it
    (the engines audit groups of tables apart). Empty when the rows are in
    file order already (a log read in order: seq never goes back within a
    table)."""
    n = len(order)
    if n < 2 or not len(rows_where(n, lambda a, b: order[a:b] <= order[a - 1:b - 1], start=1)):
        return np.empty(0, dtype=np.int64)
    by_file = _file_order(order)
    by_file = by_file[np.argsort(table[by_file], kind="stable")]  # each table's rows together
    f_table, f_file, f_seq = table[by_file], files[by_file], seq[by_file]
    at = rows_where(n, lambda a, b: (f_table[a:b] == f_table[a - 1:b - 1])
                    & (f_file[a:b] == f_file[a - 1:b - 1]) & (f_seq[a:b] < f_seq[a - 1:b - 1]),
                    start=1)
    return np.sort(by_file[at])


def _file_order(order: np.ndarray) -> np.ndarray:
    """The rows in file order: `np.argsort(order, kind="stable")`. A
    permutation's inverse is worked out in one pass, not by sorting."""
    n = len(order)
    lo, hi = int(order.min()), int(order.max())
    if lo >= 0 and hi < 4 * n + 64:
        slot = np.full(hi + 1, -1, dtype=np.int64)
        slot[order] = np.arange(n)
        inverse = slot[slot >= 0]
        if len(inverse) == n:  # no value repeats: the stable sort's result
            return inverse
    return np.argsort(order, kind="stable")


@check("row_malformed", "log.malformed")
def row_malformed(ctx, params) -> Hits:
    """A row that cannot be read: it is quarantined, named by file and line.

    Fires on: an unknown event, a column its event requires left empty, a die
    face of 7, a seat of 0, a negative amount, an unknown outcome or flag, a row
    with the wrong number of cells, a JSON line that is not an object.
    Quiet on: every row that follows the event-log-v1 format.
    Points at: the row's table and seq where they could be read; always its
    source file and line.
    """
    q = ctx.quarantine
    if not len(q):
        return no_hits()
    located = pd.DataFrame({c: [None] * len(q) for c in LOCATION_COLUMNS})
    located["table_id"] = q["table_id"].to_numpy()
    located["seq"] = q["seq"].to_numpy()
    located["event"] = q["event"].to_numpy()
    located["source_file"] = q["source_file"].to_numpy()
    located["source_line"] = q["source_line"].to_numpy()
    messages = ("row quarantined: " + q["reason"].astype(str)).tolist()
    evidence = [{"reason": r, "row": raw} for r, raw in zip(q["reason"], q["raw"])]
    return Hits(np.empty(0, dtype=np.int64), messages, evidence, located=located)


#: Events whose seat must be occupied (a player's roll too: `_seat_unknown`).
_SEATED_EVENTS = ("player_leave", "wager_placed", "wager_removed", "wager_settled",
                  "dice_to_shooter", "dice_offered", "dice_declined", "dice_accepted",
                  "dice_selected", "shooter_relinquish")


def _seat_unknown(ctx) -> np.ndarray:
    """Rows of `_SEATED_EVENTS` and players' rolls naming a seat (not 0)
    that was not occupied just before (seats 1..62 are bits of `occupied`).
    Worked out block by block over every row: most rows are wagers, and one
    pass over cached blocks beats gathering millions of rows."""
    sh = ctx.shared
    events = sh.codes("event")
    wanted = frozenset(_SEATED_EVENTS)
    seated = sh.category_hits("event", ("in", wanted), wanted.__contains__)
    player_roll = sh.written_mask("roll_line_bet")
    seat, null_seat = values_and_nulls(ctx.events["seat"])
    occupied = ctx.state["occupied"]

    def unknown(a: int, b: int) -> np.ndarray:
        s = seat[a:b]
        named = (seated.take(events[a:b]) | player_roll[a:b]) & (s != 0)
        if null_seat is not None:
            named &= ~null_seat[a:b]
        on_table = (s > 0) & (s < 63)
        taken = (occupied.block(a, b) >> np.where(on_table, s, 0).astype(np.int64, copy=False)) & 1
        return named & (~on_table | (taken == 0))

    return rows_where(sh.n, unknown)


#: Events whose dice must have been received at the table.
_DICE_EVENTS = ("dice_inspected", "dice_to_bowl", "dice_removed", "dice_collected",
                "dice_to_shooter", "die_off_table", "die_retrieved", "die_lost", "dice_offered",
                "dice_selected", "roll")


#: Cells of the per-session tables (`_suspects_by_session`) worked through
#: beyond four per row, before the rows' own (session, dice value) pairs are
#: worked through instead (a year of daily sessions of many tables).
BY_SESSION_CELLS = 1 << 22


class _DiceSpelled:
    """The serials of every distinct `dice` value as ids (`Shared.dice_values`),
    and the serials by id (`names`)."""

    def __init__(self, sh):
        self.values = sh.dice_values
        self.ids, self.starts, self.counts = self.values.ids, self.values.starts, \
            self.values.counts
        self.names = self.values.serials

    def of(self, rows: np.ndarray, codes: np.ndarray, starts: np.ndarray):
        """(row, session, serial id) of each die the rows name (their dice
        values `codes`), in order; `starts`: the sessions' first rows."""
        rows = rows[codes[rows] >= 0]
        which, ids = self.values.rows_of(codes[rows])
        row = rows[which]
        return row, np.searchsorted(starts, row, side="right") - 1, ids


class _FirstReceipts:
    """Each (session, serial)'s first `dice_received` row, by key
    session * span + serial (ascending): `span` is one more than the serials."""

    NONE = np.iinfo(np.int64).max  # (the row of a receipt there is none of)

    def __init__(self, row: np.ndarray, session: np.ndarray, serial: np.ndarray, span: int):
        self.span = span
        key = session * span + serial
        order = np.lexsort((row, key))
        self.key, first = np.unique(key[order], return_index=True)
        self.row = row[order][first]

    def of(self, session: np.ndarray, serial: np.ndarray) -> np.ndarray:
        """The first receipt row of each (session, serial); NONE where none."""
        want = session * self.span + serial
        if not len(self.key):
            return np.full(len(want), self.NONE)
        at = np.minimum(np.searchsorted(self.key, want), len(self.key) - 1)
        return np.where(self.key[at] == want, self.row[at], self.NONE)


def _dice_never_received(ctx) -> tuple[np.ndarray, list[list[str]]]:
    """Rows of `_DICE_EVENTS` naming a die that no `dice_received` of their
    session brought to the table before them, and those dice (in the row's
    order). The dice of each row are spelled out through the distinct `dice`
    values, then matched by (session, serial) to the first receipt."""
    sh = ctx.shared
    codes = sh.codes("dice")
    spelled = _DiceSpelled(sh)
    starts = sh.session_starts
    receipts = _FirstReceipts(*spelled.of(sh.event_rows("dice_received"), codes, starts),
                              span=len(spelled.names) + 1)
    # A row is suspect only where some die of its dice value was first
    # received (in its session) at or after it: worked out per (session,
    # dice value), not per die of every row.
    rows = sh.event_rows(*_DICE_EVENTS)
    c = codes.take(rows)
    if len(starts) * (len(spelled.ids) + receipts.span) <= 4 * len(rows) + BY_SESSION_CELLS:
        # (a row naming no dice reads the last slot: never suspect)
        suspect = _suspects_by_session(rows, c, starts, receipts, spelled)
    else:  # (many sessions: only the (session, dice value) pairs the rows hold)
        suspect = _suspects_by_pair(rows, c, starts, receipts, spelled)
    row, session, serial = spelled.of(suspect, codes, starts)
    known = receipts.of(session, serial) < row
    row, serial = row[~known], serial[~known]  # (rows ascending, dice in the row's order)
    out, begin = np.unique(row, return_index=True)
    ids = serial.tolist()
    return out, [[spelled.names[x] for x in ids[a:b]]
                 for a, b in pairwise([*begin.tolist(), len(ids)])]


def _suspects_by_session(rows, codes, starts, receipts: _FirstReceipts,
                         spelled: _DiceSpelled) -> np.ndarray:
    """Those of `rows` (their dice values `codes`) that some die of their
    value was not received before, in their session: a session at a time,
    each dice value's latest first receipt from a table of the session's
    first receipts by serial."""
    span, lens = receipts.span, spelled.counts
    cut = np.searchsorted(rows, starts, side="left")
    ends = np.append(cut[1:], len(rows))
    bounds = np.searchsorted(receipts.key, np.arange(len(starts) + 1) * span)
    has = np.flatnonzero(lens > 0)  # (a value naming no dice is never suspect)
    out = []
    for k in np.flatnonzero(ends > cut).tolist():
        first = np.full(span, receipts.NONE, dtype=np.int64)
        got = slice(bounds[k], bounds[k + 1])
        first[receipts.key[got] % span] = receipts.row[got]
        latest = np.full(len(lens), -1, dtype=np.int64)
        if len(has):
            latest[has] = np.maximum.reduceat(first.take(spelled.ids), spelled.starts[has])
        mine = rows[cut[k]:ends[k]]
        out.append(mine[mine <= latest.take(codes[cut[k]:ends[k]])])
    return np.concatenate(out) if out else rows[:0]


def _suspects_by_pair(rows, codes, starts, receipts: _FirstReceipts,
                      spelled: _DiceSpelled) -> np.ndarray:
    """`_suspects_by_session` for many sessions (a year of daily sessions
    of many tables): worked out over the (session, dice value) pairs the
    rows hold only."""
    rows, codes = rows[codes >= 0], codes[codes >= 0].astype(np.int64)
    offsets, lens = spelled.starts[:-1], spelled.counts[:-1]
    cut = np.searchsorted(rows, starts, side="left")
    session = np.repeat(np.arange(len(starts)), np.diff(np.append(cut, len(rows))))
    distinct, which = _distinct(session * len(lens) + codes, len(starts) * len(lens))
    entry, at = expand(offsets[distinct % len(lens)], lens[distinct % len(lens)]) \
        if len(lens) else (distinct, distinct)
    count = lens[distinct % len(lens)] if len(lens) else distinct
    latest = np.maximum.reduceat(receipts.of(distinct[entry] // len(lens), spelled.ids[at]),
                                 np.cumsum(count) - count) if len(distinct) else distinct
    return rows[latest[which] >= rows] if len(rows) else rows


def _distinct(keys: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(keys, return_inverse=True)` of keys in [0, bound): through
    a table of `bound` slots where that is not much larger than the keys
    (no sort of millions of keys), else by sorting."""
    if bound > 4 * len(keys) + (1 << 20):
        return np.unique(keys, return_inverse=True)
    present = np.zeros(bound, dtype=bool)
    present[keys] = True
    slot = np.cumsum(present) - 1
    return np.flatnonzero(present), slot.take(keys)


@check("unknown_reference", "log.unknown_reference")
def unknown_reference(ctx, params) -> Hits:
    """An event names a seat with no player, or a die never received.

    Fires on: a `wager_placed` at seat 4 with no `player_join` at seat 4; a
    `roll` of die `Z9` that no `dice_received` brought to the table.
    Quiet on: events that name joined seats and received dice.
    Points at: the event that names the unknown seat or die.
    """
    seat_rows = _seat_unknown(ctx)
    die_rows, dice = _dice_never_received(ctx)
    msgs: dict[int, list[str]] = {}
    evid: dict[int, dict] = {}
    seats = ctx.shared.ints_at("seat", seat_rows)
    for r, seat in zip(seat_rows, seats):
        msgs.setdefault(r, []).append(f"seat {seat} has no player")
        evid.setdefault(r, {})["seat"] = int(seat)
    for r, d in zip(die_rows, dice):
        msgs.setdefault(r, []).append(f"die {', '.join(d)} never received at this table")
        evid.setdefault(r, {})["dice"] = d
    rows = sorted(msgs)
    return Hits(np.asarray(rows, dtype=np.int64), ["; ".join(msgs[r]) for r in rows],
                [evid[r] for r in rows])
