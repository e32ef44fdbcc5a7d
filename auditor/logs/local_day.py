"""The UTC offset a log wrote each `table_open` in: what dates a table
session's gaming day (issue 29, docs/decisions.md "Gaming day").

The events hold every time as UTC (the spec stores them so); the offset a
recorder wrote (`2026-03-01T20:00:00+13:00`) is gone once a time is typed.
A session's gaming day is the date of its `table_open` where the casino
stands, so the offset is kept here, for those rows only: a few per table,
read off the file's raw cells before they are typed (no second read, no
column as long as the log).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: A recorded time's UTC offset at its end: `Z`, `+HH`, `+HHMM`, `+HH:MM`.
_OFFSET = re.compile(r"(?:([zZ])|([+-])([0-9]{2}):?([0-9]{2})?)$")


def open_offsets(table: pa.Table, assume_offset: str | None = None
                 ) -> tuple[tuple[str, int, int], ...]:
    """(table_id as recorded, seq, offset in minutes east of UTC) of every
    `table_open` row of a raw (untyped) log whose table, seq and time can be
    read: the offset its time was written in; a time without one, the
    offset it was read as (`--assume-offset`, else UTC); a Parquet time
    column, its zone's offset at that instant (none: UTC)."""
    return offsets_by_file(table, [table.num_rows], assume_offset)[0]


def offsets_by_file(table: pa.Table, rows: list[int], assume_offset: str | None = None
                    ) -> list[tuple[tuple[str, int, int], ...]]:
    """`open_offsets` of each file of small files typed together (`table`:
    their raw rows joined; `rows`: each file's row count, in file order),
    read in one pass."""
    out: list[list[tuple[str, int, int]]] = [[] for _ in rows]
    names = table.column_names
    opens = _table_opens(table.column("event")) \
        if all(c in names for c in ("table_id", "seq", "ts", "event")) else None
    if opens is not None:
        opens = pc.fill_null(opens, False)
        picked = table.select(["table_id", "seq", "ts"]).filter(opens)
        at = np.flatnonzero(opens.to_numpy()) if picked.num_rows else []
        files = np.searchsorted(np.cumsum(rows), at, side="right").tolist()
        assumed = _minutes(assume_offset) if assume_offset else 0
        ts_type = picked.schema.field("ts").type
        for file, tid, seq, ts in zip(files, *(_as_python(picked.column(c))
                                               for c in ("table_id", "seq", "ts"))):
            try:
                seq = int(str(seq).strip())
            except ValueError:
                continue
            if tid is None or ts is None:
                continue
            if isinstance(ts, datetime):
                minutes = _zone_minutes(ts, ts_type, assumed)
            else:
                found = _OFFSET.search(str(ts).strip())
                minutes = assumed if found is None else _minutes(found.group(0))
            out[file].append((str(tid).strip(), seq, minutes))
    return [tuple(o) for o in out]


def _as_python(column: pa.ChunkedArray) -> list:
    """The column's values as Python's, a value Python cannot hold (a time
    past year 9999 in a damaged Parquet file, a zone it does not know) as
    None: its row is quarantined when typed, and no offset is read off it.
    Only `table_open` rows come here: a few per table."""
    try:
        return column.to_pylist()
    except (pa.ArrowException, OverflowError, ValueError):
        pass
    values = []
    for chunk in column.chunks:
        for k in range(len(chunk)):
            try:
                values.append(chunk[k].as_py())
            except (pa.ArrowException, OverflowError, ValueError):
                values.append(None)
    return values


def _table_opens(event: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """Which rows are a `table_open` (None: the column is not text). A
    dictionary column is matched on its dictionary and its codes, not cast
    to a string per row (at 10M events: 0.4 s -> a few ms)."""
    if not pa.types.is_dictionary(event.type):
        if not pa.types.is_string(event.type) and not pa.types.is_large_string(event.type):
            return None
        return pc.equal(pc.utf8_trim_whitespace(event), "table_open")
    value_type = event.type.value_type
    if not pa.types.is_string(value_type) and not pa.types.is_large_string(value_type):
        return None
    chunks = []
    for chunk in event.chunks:
        named = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(chunk.dictionary),
                                      "table_open"), False)
        codes = pa.array(np.flatnonzero(named.to_numpy(zero_copy_only=False)),
                         type=chunk.indices.type)
        chunks.append(pc.is_in(chunk.indices, value_set=codes))
    return pa.chunked_array(chunks, pa.bool_())


def _minutes(offset: str) -> int:
    """`+HH:MM` (or `Z`, `+HH`, `+HHMM`) in minutes east of UTC."""
    found = _OFFSET.search(offset.strip())
    if found is None or found.group(1):
        return 0
    sign = -1 if found.group(2) == "-" else 1
    return sign * (int(found.group(3)) * 60 + int(found.group(4) or 0))


def _zone_minutes(ts: datetime, ts_type: pa.DataType, assumed: int) -> int:
    """A typed time's offset: its column's zone at that instant; a column
    without a zone, the assumed offset (UTC unless one was given)."""
    if not pa.types.is_timestamp(ts_type) or ts.tzinfo is None:
        return assumed
    offset = ts.utcoffset() or timedelta(0)
    return int(offset.total_seconds() // 60)
