"""Decide which typed rows break the format and why: the spec's rules per
event (required columns, vocabularies, ranges, flags, dice), and the
quarantine that keeps every such row as recorded, with its reasons.

Text is checked once per distinct value and events are compared as codes; a
message is only built for the rows that have a problem.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from json.encoder import encode_basestring
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.logs import schema
from auditor.logs.arrays import np_mask, raw_values, valid_rows
from auditor.logs.raw import RawLog

if TYPE_CHECKING:
    from auditor.logs.coerce import TextColumn


DICE_RE = r"^[^,\s]+(,[^,\s]+)*$"
QUARANTINE_COLUMNS = ("source_file", "source_line", "table_id", "seq", "event", "reason", "raw")


class Problems:
    """Collects, per row, every reason it breaks the format. Messages are
    built only for the rows concerned."""

    def __init__(self, n: int):
        self.n = n
        self.bad = np.zeros(n, dtype=bool)
        self.reasons: dict[int, list[str]] = {}

    def add(self, mask, message) -> None:
        """`message` is a string, or a function of the row index."""
        mask = np_mask(mask)
        rows = np.flatnonzero(mask)
        if not len(rows):
            return
        self.bad |= mask
        for r in rows.tolist():
            text = message if isinstance(message, str) else message(r)
            self.reasons.setdefault(r, []).append(text)

    def add_rows(self, reasons: dict[int, list[str]]) -> None:
        """Reasons already known per row (the reader's cell problems)."""
        for r, why in reasons.items():
            self.bad[r] = True
            self.reasons.setdefault(r, []).extend(why)

    def reason(self, r: int) -> str:
        return "; ".join(self.reasons.get(r, []))


#: Event types as Arrow text, to find each value's event code.
_EVENTS = pa.array(schema.EVENTS)


_MAX_FINITE = float(np.finfo(np.float64).max)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: Since 1970 UTC, in seconds: the first instant of the first year in
#: schema.TS_YEARS, and the first instant after the last one.
_FIRST_TS_S = int((datetime(schema.TS_YEARS[0], 1, 1, tzinfo=UTC) - _EPOCH).total_seconds())
_END_TS_S = int((datetime(schema.TS_YEARS[1] + 1, 1, 1, tzinfo=UTC) - _EPOCH).total_seconds())
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
TS_RANGE_MESSAGE = f"ts is out of range: years {schema.TS_YEARS[0]} to {schema.TS_YEARS[1]} only"


def ts_out_of_range(ts: pa.Array) -> pa.Array | None:
    """Per row of a timestamp column (any unit): is it outside
    schema.TS_YEARS; None when no row is (one pass to know)."""
    ticks = pc.cast(ts, pa.int64())
    k = _PER_SECOND[ts.type.unit]
    first, last = _FIRST_TS_S * k, _END_TS_S * k - 1
    if not any(_outside(ticks, first, last)):
        return None
    return pc.fill_null(pc.or_(pc.less(ticks, first), pc.greater(ticks, last)), False)


#: The event code of a row without a (known) event.
_NO_EVENT = len(schema.EVENTS)


def _event_mask(ev: np.ndarray, names) -> np.ndarray:
    """Per row: is its event code one of `names`."""
    lut = np.zeros(_NO_EVENT + 1, dtype=bool)
    lut[[schema.EVENT_CODE[e] for e in names]] = True
    return lut.take(ev)


def _outside(col: pa.Array, low, high) -> tuple[bool, bool]:
    """Whether any value of `col` is below `low`, above `high`: one pass, so
    the checks of a column that holds none (nearly always) are skipped. An
    int64 column is looked at through numpy: Arrow's min_max over a column
    with nulls (most rows' dice and seat) cost 4.4 ms a million rows, this
    0.35. Under a null the buffer holds anything (mostly 0): what is below
    `low` is compared with the validity as booleans; what is above `high`
    only when the largest value of all is."""
    if isinstance(col, pa.Array) and pa.types.is_int64(col.type) and len(col) > col.null_count:
        values = raw_values(col)
        if not col.null_count:
            return bool(values.min() < low), bool(values.max() > high)
        valid = valid_rows(col)
        below = values < low
        below &= valid
        above = False
        if values.max() > high:
            above = values > high
            above &= valid
            above = bool(above.any())
        return bool(below.any()), above
    bounds = pc.min_max(col)
    lo, hi = bounds["min"].as_py(), bounds["max"].as_py()
    if lo is None:
        return False, False
    return lo < low, hi > high


def validate_rows(cols: dict[str, pa.Array], texts: dict[str, TextColumn], problems: Problems,
              n: int) -> None:
    """Row checks that need more than one column: the spec's per-event rules.
    Text is checked once per distinct value; events are compared as codes."""
    event = texts["event"]
    problems.add(texts["table_id"].null, "table_id missing")
    seq_flagged = np.zeros(n, dtype=bool)
    seq_flagged[[r for r, why in problems.reasons.items()
                 if any(w.startswith("seq ") for w in why)]] = True
    if cols["seq"].null_count:
        problems.add(np_mask(pc.is_null(cols["seq"])) & ~seq_flagged, "seq missing")
    problems.add(event.null, "event missing")
    code = pc.index_in(event.values, value_set=_EVENTS)
    problems.add(event.rows(pc.is_null(code)),
                 lambda r: f"unknown event {event.value(r)!r}")
    # Each row's event code; _NO_EVENT for a missing or unknown event.
    ev = np.append(pc.fill_null(code, _NO_EVENT).to_numpy(zero_copy_only=False), _NO_EVENT) \
        .astype(np.uint8).take(event.codes)

    def event_name(r: int) -> str | None:
        return schema.EVENTS[ev[r]] if ev[r] != _NO_EVENT else None

    # Rules about events absent from the file need no look (small files are many).
    counts = np.bincount(ev, minlength=_NO_EVENT + 1)
    present = {schema.EVENTS[i] for i in np.flatnonzero(counts[:_NO_EVENT])}

    def null(column: str) -> np.ndarray:
        if column in texts:
            return texts[column].null
        col = cols[column]
        return ~valid_rows(col) if isinstance(col, pa.Array) else np_mask(pc.is_null(col))

    def null_count(column: str) -> int:
        return texts[column].null_count if column in texts else cols[column].null_count

    # Per row, one bit for each column its event requires.
    required = _REQUIRED_BITS.take(ev)
    for bit, (column, required_by) in enumerate(_required_by_column().items()):
        required_by = [e for e in required_by if e in present]
        if not required_by or null_count(column) == 0:
            continue
        problems.add(((required & (1 << bit)) != 0) & null(column),
                     lambda r, c=column: f"missing {c} required by {event_name(r)}")

    def given(column: str) -> bool:
        return null_count(column) < n

    role = texts["actor_role"]
    if given("actor_role"):
        problems.add(role.rows(pc.invert(pc.is_in(role.values, pa.array(schema.ROLES)))),
                     lambda r: f"unknown actor_role {role.value(r)!r}")
    seat = cols["seat"]
    if given("seat"):
        low, high = _outside(seat, 1, schema.MAX_SEAT)
        if low:
            problems.add(pc.less(seat, 1), "seat must be 1 or more")
        if high:
            problems.add(pc.greater(seat, schema.MAX_SEAT),
                         f"seat must be {schema.MAX_SEAT} or less")
    for die in ("die1", "die2"):
        d = cols[die]
        if given(die) and any(_outside(d, 1, 6)):
            problems.add(pc.or_(pc.less(d, 1), pc.greater(d, 6)), f"{die} must be 1 to 6")
    total = cols["total"]
    if given("total") and any(_outside(total, 2, 12)):
        problems.add(pc.or_(pc.less(total, 2), pc.greater(total, 12)), "total must be 2 to 12")
    amount = cols["amount"]
    # (min_max skips NaN: NaN is neither below 0 nor infinite, nor is it here)
    if given("amount") and any(_outside(amount, 0, _MAX_FINITE)):
        problems.add(pc.or_(pc.less(amount, 0), pc.is_inf(amount)), "amount must be 0 or more")
    if given("ts") and (out := ts_out_of_range(cols["ts"])) is not None:
        problems.add(out, TS_RANGE_MESSAGE)
    bet = texts["bet"]
    if given("bet"):
        problems.add(bet.rows(pc.invert(pc.match_substring_regex(bet.values,
                                                                 schema.BET_PATTERN))),
                     "bet is not a lower-case bet name")

    for column, allowed in (("outcome", schema.OUTCOMES), ("reason", schema.REASONS)):
        values = texts[column]
        if not given(column):
            continue
        unknown = {schema.EVENT_CODE[name]: ~np_mask(pc.is_in(values.values, pa.array(words)))
                   for name, words in allowed.items() if name in present}
        if unknown:  # (a row has one event: one message at most, whichever it is)
            problems.add(_by_event(values, ev, unknown),
                         lambda r, c=column, v=values:
                         f"unknown {c} for {event_name(r)} {v.value(r)!r}")
    _validate_flags(texts["flags"], ev, event_name, problems, n)
    _validate_dice(texts, ev, problems)


def _validate_flags(flags: TextColumn, ev: np.ndarray, event_name, problems: Problems,
                    n: int) -> None:
    """Every word of a row's flags must be one its event takes: judged once
    per distinct flags value and event that takes flags."""
    if flags.null_count == n:
        return
    words = pc.split_pattern(flags.values, ",")
    flat = pc.utf8_trim_whitespace(pc.list_flatten(words))
    parent = pc.list_parent_indices(words).to_numpy()
    value_ok = {}
    for name, allowed in schema.FLAGS.items():
        word_bad = ~np_mask(pc.is_in(flat, pa.array(allowed)))
        value_ok[schema.EVENT_CODE[name]] = \
            np.bincount(parent[word_bad], minlength=len(flags.values)) == 0
    ok = _by_event(flags, ev, value_ok)
    given = ~flags.null
    no_flags = given & ~_event_mask(ev, schema.FLAGS)
    problems.add(given & ~ok & ~no_flags, lambda r: f"unknown flag for {event_name(r)}")
    problems.add(no_flags, "flags given for an event that takes none")


def _by_event(text: TextColumn, ev: np.ndarray, per_event: dict[int, np.ndarray]) -> np.ndarray:
    """Per row: its value's place in the mask over the values given for its
    event code (False for another event, and for a null row), in one take
    of a table (event, value) instead of a take and a comparison per event."""
    width = len(text.values) + 1  # the last: a null row
    table = np.zeros((_NO_EVENT + 1, width), dtype=bool)
    for code, mask in per_event.items():
        table[code, :-1] = mask
    index = ev.astype(np.intp) * width
    index += text.codes
    return table.ravel().take(index)


def _validate_dice(texts: dict[str, TextColumn], ev: np.ndarray, problems: Problems) -> None:
    dice = texts["dice"]
    if dice.null_count == len(dice.null):
        return
    if pc.any(pc.match_substring_regex(dice.values, r"\s")).as_py():
        dice = dice.replaced(pc.replace_substring_regex(dice.values, r"\s+", ""))
        texts["dice"] = dice
    problems.add(dice.rows(pc.invert(pc.match_substring_regex(dice.values, DICE_RE))),
                 "dice is not a comma-separated list of serials")
    count = pc.add(pc.count_substring(dice.values, ","), 1).to_numpy(zero_copy_only=False)
    problems.add((ev == schema.EVENT_CODE["roll"]) & dice.rows(count != 2),
                 "roll must name exactly the two dice thrown")
    problems.add((ev == schema.EVENT_CODE["die_cocked"]) & dice.rows(count != 1),
                 "die_cocked must name one die")


def _required_by_column() -> dict[str, list[str]]:
    by_column: dict[str, list[str]] = {}
    for event, columns in schema.EVENT_REQUIRES.items():
        for column in columns:
            by_column.setdefault(column, []).append(event)
    return by_column


def _required_bits() -> np.ndarray:
    """Per event code (and _NO_EVENT), a bit for each column of
    `_required_by_column()` (in its order) that the event requires."""
    bits = np.zeros(_NO_EVENT + 1, dtype=np.uint32)
    for bit, required_by in enumerate(_required_by_column().values()):
        for event in required_by:
            bits[schema.EVENT_CODE[event]] |= 1 << bit
    return bits


_REQUIRED_BITS = _required_bits()


def quarantine_frame(raw: RawLog, table: pa.Table, problems: Problems,
                      cols: dict[str, pa.Array], texts: dict[str, TextColumn]) -> pd.DataFrame:
    """Quarantined rows as recorded (every cell as text, in a JSON object) with
    where they came from and why they were set aside. Made a column at a
    time, a dictionary's values encoded once each (a row at a time,
    608,003 rows of a night in the wrong encoding took 17 s: 28 us a row)."""
    idx = np.flatnonzero(problems.bad)
    if not len(idx) and not raw.rejected.lines:
        return _empty_quarantine()
    records = []
    if len(idx):
        rows = pa.array(idx)
        records = list(zip([raw.path] * len(idx), raw.lines[idx].tolist(),
                           _as_recorded(texts["table_id"].array().take(rows)),
                           cols["seq"].take(rows).to_pylist(),
                           _as_recorded(texts["event"].array().take(rows)),
                           [problems.reason(i) for i in idx.tolist()],
                           _cells_as_json(table.take(rows))))
    for line, text, reason in zip(raw.rejected.lines, raw.rejected.texts, raw.rejected.reasons):
        records.append((raw.path, int(line), None, None, None, reason,
                        json.dumps({"text": text}, ensure_ascii=False)))
    return _quarantine_records(records)


def _cells_as_json(sub: pa.Table) -> list[str]:
    """Each row's cells as text in a JSON object, as `json.dumps(cells,
    sort_keys=True, ensure_ascii=False)` writes it (a missing cell null):
    each column's cells encoded (`_encoded_cells`), each row filled in by
    one format string."""
    names = sorted(sub.column_names)
    if not names:
        return ["{}"] * sub.num_rows
    encoded = [_encoded_cells(sub.column(name)) for name in names]
    row = "{" + ", ".join(encode_basestring(n).replace("%", "%%") + ": %s" for n in names) + "}"
    return [row % cells for cells in zip(*encoded)]


def _encoded_cells(col: pa.ChunkedArray | pa.Array) -> list[str]:
    """A column's cells as JSON text (`null`, or the cell as text, by the
    encoder `json.dumps` calls for a text)."""
    return _each_row(col, _encoded_values, "null")


def _encoded_values(values: pa.Array) -> list[str]:
    cells = _values_as_recorded(values)
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        return ["null" if v is None else encode_basestring(v) for v in cells]
    texts = [None if v is None else str(v) for v in cells]  # (each distinct one encoded once)
    each = {v: "null" if v is None else encode_basestring(v) for v in dict.fromkeys(texts)}
    return [each[v] for v in texts]


def _as_recorded(col: pa.ChunkedArray | pa.Array) -> list:
    """A column's values in Python (`_values_as_recorded`)."""
    return _each_row(col, _values_as_recorded, None)


def _each_row(col: pa.ChunkedArray | pa.Array, of_values, null) -> list:
    """`of_values(array)` (a list, a value each) for each row of `col`, a
    chunk at a time, a dictionary's values worked out once each (`null` for
    a null row): Arrow's `to_pylist` of a dictionary made a Python scalar a
    row (8 s for 600,000 rows of 17 columns)."""
    if isinstance(col, pa.ChunkedArray):
        return [v for chunk in col.chunks for v in _each_row(chunk, of_values, null)]
    if pa.types.is_dictionary(col.type):
        values = _each_row(col.dictionary, of_values, null) + [null]
        codes = pc.fill_null(col.indices, len(values) - 1).to_numpy(zero_copy_only=False)
        return [values[c] for c in codes.tolist()]
    return of_values(col)


def _values_as_recorded(values: pa.Array) -> list:
    """An array's values in Python; a time no Python datetime holds (a
    Parquet timestamp in the year 300,000) as its count of units since 1970."""
    try:
        return values.to_pylist()
    except (OverflowError, ValueError):
        if not (pa.types.is_timestamp(values.type) or pa.types.is_date(values.type)):
            raise
    return [_time_as_recorded(v) for v in values]


def _time_as_recorded(value: pa.Scalar):
    try:
        return value.as_py()
    except (OverflowError, ValueError):
        unit = getattr(value.type, "unit", "day")
        return f"{value.cast(pa.int64()).as_py()} {unit} since 1970-01-01"


def _quarantine_records(records: list[tuple]) -> pd.DataFrame:
    out = pd.DataFrame.from_records(records, columns=list(QUARANTINE_COLUMNS))
    out["source_line"] = out["source_line"].astype("int64")
    out["seq"] = out["seq"].astype("Int64")
    for name in ("source_file", "table_id", "event", "reason", "raw"):
        out[name] = out[name].astype(object)
    return out.sort_values("source_line", kind="stable").reset_index(drop=True)


_EMPTY_QUARANTINE: pd.DataFrame | None = None


def _empty_quarantine() -> pd.DataFrame:
    """A file with nothing to quarantine (most files): one empty frame built
    once and shared (it is only ever concatenated, never changed in place)."""
    global _EMPTY_QUARANTINE
    if _EMPTY_QUARANTINE is None:
        _EMPTY_QUARANTINE = _quarantine_records([])
    return _EMPTY_QUARANTINE
