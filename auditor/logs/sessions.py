"""Where each table's log in a file begins and ends, and the rows that
establish the table's state again: what the audit needs to know whether a
table's log in this audit starts or ends in the middle of a session
(`auditor.audit.midsession`). Taken as each file is loaded (a few rows per
table: the first, the last and the rare events below), so it travels with
the file's provenance through every engine."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

#: The events that establish some of a table's state (see docs/decisions.md).
MARKERS = ("table_open", "table_close", "dice_received", "dice_accepted", "player_join")
#: Frequent events of which only each table's last seq is kept.
LAST_ONLY = ("roll", "settlement_complete")


@dataclass(frozen=True)
class TableMarks:
    """One table's log in one file: its first and last rows (seq, event) and
    the seqs of its marker events (event -> seqs; `player_join` as
    (seq, seat) pairs; those of LAST_ONLY: the last one's only)."""

    first: tuple[int, str]
    last: tuple[int, str]
    markers: dict = field(default_factory=dict)


def table_marks(events: pa.Table) -> dict[str, TableMarks]:
    """Per table id (as keyed in `events`), its marks in this file."""
    if events.num_rows == 0:
        return {}
    table = _text(events.column("table_id"))
    event = _text(events.column("event"))
    seq = events.column("seq")
    frame = pa.table({"t": table, "s": seq})
    bounds = frame.group_by("t").aggregate([("s", "min"), ("s", "max")])
    lo = dict(zip(bounds.column("t").to_pylist(), bounds.column("s_min").to_pylist()))
    hi = dict(zip(bounds.column("t").to_pylist(), bounds.column("s_max").to_pylist()))
    wanted = pc.is_in(event, value_set=pa.array(MARKERS))
    at_bounds = pc.or_(pc.equal(seq, pc.cast(_mapped(table, lo), pa.int64())),
                       pc.equal(seq, pc.cast(_mapped(table, hi), pa.int64())))
    keep = pc.fill_null(pc.or_(wanted, at_bounds), False)
    rows = pa.table({"t": table, "s": seq, "e": event,
                     "seat": events.column("seat") if "seat" in events.column_names
                     else pa.nulls(events.num_rows, pa.int64())}).filter(keep)
    first: dict[str, tuple[int, str]] = {}
    last: dict[str, tuple[int, str]] = {}
    markers: dict[str, dict] = {}
    for t, s, e, seat in zip(*(rows.column(c).to_pylist() for c in ("t", "s", "e", "seat"))):
        if t is None or s is None:
            continue
        if s == lo.get(t) and t not in first:
            first[t] = (s, e)
        if s == hi.get(t):
            last[t] = (s, e)
        if e in MARKERS:
            got = markers.setdefault(t, {})
            got.setdefault(e, []).append((s, seat) if e == "player_join" else s)
    for name in LAST_ONLY:  # (the last only: what a procedure pending at the end needs)
        rows = frame.filter(pc.fill_null(pc.equal(event, name), False)) \
            .group_by("t").aggregate([("s", "max")])
        for t, s in zip(rows.column("t").to_pylist(), rows.column("s_max").to_pylist()):
            if t in first:
                markers.setdefault(t, {})[name] = [s]
    return {t: TableMarks(first[t], last.get(t, first[t]), markers.get(t, {}))
            for t in first}


def _text(col) -> pa.ChunkedArray:
    if isinstance(col, pa.ChunkedArray) and pa.types.is_dictionary(col.type):
        return pc.cast(col, col.type.value_type)
    return col


def _mapped(table: pa.ChunkedArray, values: dict) -> pa.ChunkedArray:
    keys = list(values)
    index = pc.index_in(table, value_set=pa.array(keys, pa.string()))
    return pc.take(pa.array([values[k] for k in keys], pa.int64()), index)
