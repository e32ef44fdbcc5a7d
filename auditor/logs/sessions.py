"""Where each table's log in a file begins and ends, and the rows that
establish the table's state again: what the audit needs to know whether a
table's log in this audit starts or ends in the middle of a session
(`auditor.audit.midsession`). Taken as each file is loaded (a few rows per
table: the first, the last and the rare events below), so it travels with
the file's provenance through every engine."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: The events that establish some of a table's state (see docs/decisions.md).
MARKERS = ("table_open", "table_close", "dice_received", "dice_accepted", "player_join")
#: The dice custody events whose dice are kept (+1: the dice come to the
#: table, -1: they leave it for good), under the marker "dice".
DICE_MOVES = (("dice_received", 1), ("dice_removed", -1))
#: Frequent events of which only each table's last seq is kept.
LAST_ONLY = ("roll", "settlement_complete")


@dataclass(frozen=True)
class TableMarks:
    """One table's log in one file: its first and last rows (seq, event) and
    its marker events (event -> its first and last seq; LAST_ONLY's: the
    last only; `player_join`: (first seq, seat) per seat; "dice": (seq, +1
    or -1, serials) per DICE_MOVES row)."""

    first: tuple[int, str]
    last: tuple[int, str]
    markers: dict = field(default_factory=dict)


def table_marks(events: pa.Table) -> dict[str, TableMarks]:
    """Per table id (as keyed in `events`), its marks in this file. Worked
    on the columns' dictionary codes (no text per row): a few ms a million
    events."""
    if events.num_rows == 0:
        return {}
    t, tables = _coded(events.column("table_id"))
    e, names = _coded(events.column("event"))
    seq_col = events.column("seq")
    seq = (pc.fill_null(seq_col, -1) if seq_col.null_count else seq_col).to_numpy()
    seq = seq.astype(np.int64, copy=False)
    n = len(tables)
    lo = np.full(n + 1, np.iinfo(np.int64).max, dtype=np.int64)  # (slot n: no table)
    hi = np.full(n + 1, -1, dtype=np.int64)
    np.minimum.at(lo, t, seq)
    np.maximum.at(hi, t, seq)
    code = {name: i for i, name in enumerate(names)}
    first: dict[str, tuple[int, str]] = {}
    last: dict[str, tuple[int, str]] = {}
    for r in np.flatnonzero((seq == lo[t]) | (seq == hi[t])).tolist():
        k = int(t[r])
        if k < 0:
            continue
        name, s, ev = tables[k], int(seq[r]), names[e[r]] if e[r] >= 0 else None
        if s == lo[k] and name not in first:
            first[name] = (s, ev)
        if s == hi[k]:
            last[name] = (s, ev)
    markers: dict[str, dict] = {}
    # Each marker's first and last seq per table (all that is asked of them:
    # the first after the table's start, whether any follows a row); the
    # last only of LAST_ONLY's; a player_join's first per seat.
    for ev in (*MARKERS, *LAST_ONLY):
        if ev not in code or ev == "player_join":
            continue
        at = np.flatnonzero(e == code[ev])
        low = np.full(n + 1, np.iinfo(np.int64).max, dtype=np.int64)
        top = np.full(n + 1, -1, dtype=np.int64)
        np.minimum.at(low, t[at], seq[at])
        np.maximum.at(top, t[at], seq[at])
        for k in np.flatnonzero(top[:n] >= 0).tolist():
            if tables[k] in first:
                markers.setdefault(tables[k], {})[ev] = \
                    [int(top[k])] if ev in LAST_ONLY else sorted({int(low[k]), int(top[k])})
    if "player_join" in code and "seat" in events.column_names:
        at = np.flatnonzero(e == code["player_join"])
        seats = events.column("seat").take(pa.array(at)).to_pylist()
        joined: dict[tuple[int, object], int] = {}
        for r, seat in zip(at.tolist(), seats):
            key = (int(t[r]), seat)
            joined[key] = min(joined.get(key, int(seq[r])), int(seq[r]))
        for (k, seat), s in sorted(joined.items(), key=lambda kv: kv[1]):
            if k >= 0 and tables[k] in first:
                markers.setdefault(tables[k], {}).setdefault("player_join", []).append((s, seat))
    # The dice each dice_received brings and each dice_removed takes away
    # (a few rows a night): whether those received since a mid-session start
    # form a full set again.
    if "dice" in events.column_names:
        moves = [(code[ev], sign) for ev, sign in DICE_MOVES if ev in code]
        if moves:
            at = np.flatnonzero(np.isin(e, [c for c, _ in moves]))
            named = events.column("dice").take(pa.array(at)).to_pylist()
            sign_of = dict(moves)
            for r, text in zip(at.tolist(), named):
                k = int(t[r])
                if k >= 0 and tables[k] in first:
                    serials = tuple(sorted({d.strip() for d in str(text or "").split(",")
                                            if d.strip()}))
                    markers.setdefault(tables[k], {}).setdefault("dice", []).append(
                        (int(seq[r]), sign_of[e[r]], serials))
    return {name: TableMarks(first[name], last.get(name, first[name]), markers.get(name, {}))
            for name in first}


def _coded(col) -> tuple[np.ndarray, list]:
    """A text column as integer codes (-1: null) and the values they name.
    A dictionary column (as loaded) is read chunk by chunk into one array of
    codes, not joined, filled and widened whole (10M events: 0.2 s -> 15 ms
    a column)."""
    if isinstance(col, pa.ChunkedArray) and pa.types.is_dictionary(col.type) \
            and col.num_chunks:
        unified = col.unify_dictionaries() if col.num_chunks > 1 else col
        codes = np.empty(len(col), dtype=np.int32)
        at = 0
        for chunk in unified.chunks:
            indices = chunk.indices
            part = (pc.fill_null(indices, -1) if indices.null_count else indices) \
                .to_numpy(zero_copy_only=False)
            codes[at:at + len(part)] = part
            at += len(part)
        values = unified.chunk(0).dictionary
        if not pa.types.is_string(values.type):
            values = pc.cast(values, pa.string())
        return codes, values.to_pylist()
    if isinstance(col, pa.ChunkedArray):
        if pa.types.is_dictionary(col.type) and col.num_chunks > 1:
            col = col.unify_dictionaries()
        col = col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    if not pa.types.is_dictionary(col.type):
        col = pc.dictionary_encode(col)
    values = col.dictionary
    if not pa.types.is_string(values.type):
        values = pc.cast(values, pa.string())
    codes = pc.fill_null(col.indices, -1).to_numpy(zero_copy_only=False)
    return codes.astype(np.int64, copy=False), values.to_pylist()
