"""Log checks: the evidence quality of the log itself.

These are not regulatory findings; every audit runs them, whatever the
ruleset lists, because a finding is only as good as the log it rests on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from auditor.checks.common import written
from auditor.checks.registry import Hits, check, no_hits
from auditor.findings import LOCATION_COLUMNS


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
    table = ev["table_id"].cat.codes.to_numpy()
    seq = ev["seq"].to_numpy(dtype=np.int64)
    same = table[1:] == table[:-1]
    jump = same & (seq[1:] - seq[:-1] > 1)
    rows = np.flatnonzero(jump) + 1
    if not len(rows):
        return no_hits()
    quarantined = _quarantined_seqs(ctx)
    keep, messages, evidence = [], [], []
    for r in rows:
        lo, hi = int(seq[r - 1]), int(seq[r])
        tid = str(ev["table_id"].iat[r])
        known = quarantined.get(tid, set())
        missing = [s for s in range(lo + 1, hi) if s not in known]
        if not missing:
            continue
        keep.append(r)
        messages.append(f"seq jumps from {lo} to {hi}: {len(missing)} event(s) missing")
        evidence.append({"previous_seq": lo, "missing_count": len(missing),
                         "missing_first": missing[0], "missing_last": missing[-1]})
    return Hits(np.asarray(keep, dtype=np.int64), messages, evidence)


def _quarantined_seqs(ctx) -> dict[str, set[int]]:
    q = ctx.quarantine
    out: dict[str, set[int]] = {}
    if len(q):
        sub = q[q["seq"].notna() & q["table_id"].notna()]
        for tid, seq in zip(sub["table_id"], sub["seq"]):
            out.setdefault(str(tid), set()).add(int(seq))
    return out


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
    table = ev["table_id"].cat.codes.to_numpy()
    seq = ev["seq"].to_numpy(dtype=np.int64)
    ts = ev["ts"].to_numpy(dtype="datetime64[us]").astype(np.int64)
    same = np.concatenate([[False], table[1:] == table[:-1]])
    prev_seq = np.concatenate([[0], seq[:-1]])
    prev_ts = np.concatenate([[0], ts[:-1]])
    repeated = same & (seq == prev_seq)
    ts_back = same & (ts < prev_ts)
    # Within one file, in file (recording) order: seq going back.
    order = ev["source_order"].to_numpy()
    by_file = np.argsort(order, kind="stable")
    f_table = table[by_file]
    f_file = ev["source_file"].cat.codes.to_numpy()[by_file]
    f_seq = seq[by_file]
    back_in_file = np.zeros(len(ev), dtype=bool)
    back_in_file[by_file[1:]] = (f_table[1:] == f_table[:-1]) & (f_file[1:] == f_file[:-1]) \
        & (f_seq[1:] < f_seq[:-1])
    mask = repeated | ts_back | back_in_file
    rows = np.flatnonzero(mask)
    messages, evidence = [], []
    for r in rows:
        why = []
        if repeated[r]:
            why.append(f"seq {seq[r]} repeats")
        if ts_back[r]:
            why.append(f"ts goes back from {pd.Timestamp(prev_ts[r], unit='us', tz='UTC')} "
                       f"to {pd.Timestamp(ts[r], unit='us', tz='UTC')}")
        if back_in_file[r]:
            why.append("seq is lower than the previous row of this table in its file")
        messages.append("; ".join(why))
        evidence.append({"previous_seq": int(prev_seq[r]) if same[r] else None})
    return Hits(rows, messages, evidence)


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


@check("unknown_reference", "log.unknown_reference")
def unknown_reference(ctx, params) -> Hits:
    """An event names a seat with no player, or a die never received.

    Fires on: a `wager_placed` at seat 4 with no `player_join` at seat 4; a
    `roll` of die `Z9` that no `dice_received` brought to the table.
    Quiet on: events that name joined seats and received dice.
    Points at: the event that names the unknown seat or die.
    """
    seat_rows, _ = written(ctx, "seat_unknown")
    die_rows, dice = written(ctx, "die_never_received")
    msgs: dict[int, list[str]] = {}
    evid: dict[int, dict] = {}
    seats = ctx.events["seat"]
    for r in seat_rows:
        msgs.setdefault(r, []).append(f"seat {seats.iat[r]} has no player")
        evid.setdefault(r, {})["seat"] = int(seats.iat[r])
    for r, d in zip(die_rows, dice):
        msgs.setdefault(r, []).append(f"die {', '.join(d)} never received at this table")
        evid.setdefault(r, {})["dice"] = d
    rows = sorted(msgs)
    return Hits(np.asarray(rows, dtype=np.int64), ["; ".join(msgs[r]) for r in rows],
                [evid[r] for r in rows])
