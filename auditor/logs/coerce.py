"""Turn a file as read into typed events, and set aside every row that breaks
the format with the reasons why.

All checks here are vectorised with pyarrow compute over whole columns; a
message is only built for the rows that have a problem. A bad cell costs its
row a place in the quarantine, never the file its place in the audit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.logs import schema
from auditor.logs.reader import RawLog

INT_RE = r"^[+-]?[0-9]+(\.0*)?$"
AMOUNT_RE = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$"
TS_OFFSET_RE = r"(Z|z|[+-][0-9]{2}(:?[0-9]{2})?)$"
DICE_RE = r"^[^,\s]+(,[^,\s]+)*$"

#: Columns of the typed event table, in order.
EVENT_SCHEMA = pa.schema(
    [(name, {"str": pa.string(), "int": pa.int64(), "ts": pa.timestamp("us", tz="UTC"),
             "amount": pa.float64()}[kind]) for name, kind in schema.COLUMNS]
)
#: Columns the auditor adds to every event: a log column of the same name is
#: not carried into the events (the quarantine still shows it as recorded).
RESERVED_COLUMNS = ("source_file", "source_line", "source_order")
QUARANTINE_COLUMNS = ("source_file", "source_line", "table_id", "seq", "event", "reason", "raw")


@dataclass
class CoercedLog:
    """The rows of one file that can be replayed (a typed pyarrow Table with
    `source_file` and `source_line`), and those that cannot."""

    events: pa.Table
    quarantine: pd.DataFrame
    rows_read: int


class _Problems:
    """Collects, per row, every reason it breaks the format. Messages are
    built only for the rows concerned."""

    def __init__(self, n: int):
        self.n = n
        self.bad = np.zeros(n, dtype=bool)
        self.reasons: dict[int, list[str]] = {}

    def add(self, mask, message) -> None:
        """`message` is a string, or a function of the row index."""
        mask = _np(mask)
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


def _np(arr) -> np.ndarray:
    if isinstance(arr, np.ndarray):
        return arr
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return pc.fill_null(arr, False).to_numpy(zero_copy_only=False)


def _flat(col) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    return col


def _as_text(col) -> pa.Array:
    """Any column as trimmed text, empty cells as null."""
    col = _flat(col)
    if col.null_count == len(col):
        return pa.nulls(len(col), pa.string())
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if pa.types.is_timestamp(col.type):
        col = pc.strftime(col, format="%Y-%m-%dT%H:%M:%S")
    elif not pa.types.is_string(col.type):
        col = pc.cast(col, pa.string())
    col = pc.utf8_trim_whitespace(col)
    return pc.if_else(pc.equal(col, ""), pa.scalar(None, pa.string()), col)


def _int_column(name: str, col, problems: _Problems, n: int) -> pa.Array:
    if col is None or col.null_count == n:
        return pa.nulls(n, pa.int64())
    col = _flat(col)
    if pa.types.is_integer(col.type):
        try:
            return pc.cast(col, pa.int64())
        except pa.ArrowInvalid:  # unsigned beyond int64: compare as text below
            pass
    text = _as_text(col)
    good = pc.fill_null(pc.match_substring_regex(text, INT_RE), False)
    problems.add(pc.and_(pc.is_valid(text), pc.invert(good)),
                 f"{name} is not a whole number")
    cleaned = pc.if_else(good, pc.replace_substring_regex(text, r"\.0*$", ""),
                         pa.scalar(None, pa.string()))
    try:
        return pc.cast(cleaned, pa.int64())
    except pa.ArrowInvalid:  # a number beyond int64
        values = pa.array([_safe_int(v) for v in cleaned.to_pylist()], pa.int64())
        problems.add(pc.and_(pc.is_valid(cleaned), pc.is_null(values)), f"{name} is out of range")
        return values


def _safe_int(text):
    if text is None:
        return None
    v = int(text)
    return v if -(2 ** 63) <= v < 2 ** 63 else None


def _amount_column(col, problems: _Problems, n: int) -> pa.Array:
    if col is None or col.null_count == n:
        return pa.nulls(n, pa.float64())
    col = _flat(col)
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or \
            pa.types.is_decimal(col.type):
        values = pc.cast(col, pa.float64(), safe=False)
        nan = pc.is_nan(values)
        problems.add(nan, "amount is not a number")
        return pc.if_else(nan, pa.scalar(None, pa.float64()), values)
    text = _as_text(col)
    ok = pc.fill_null(pc.match_substring_regex(text, AMOUNT_RE), False)
    problems.add(pc.and_(pc.is_valid(text), pc.invert(ok)), "amount is not a number")
    return pc.cast(pc.if_else(ok, text, pa.scalar(None, pa.string())), pa.float64())


def _ts_column(col, problems: _Problems, n: int) -> pa.Array:
    utc = pa.timestamp("us", tz="UTC")
    if col is None:
        problems.add(np.ones(n, dtype=bool), "ts missing")
        return pa.nulls(n, utc)
    col = _flat(col)
    if pa.types.is_timestamp(col.type):
        # Parquet timestamps: with a zone, converted; without one, taken as UTC.
        values = pc.cast(col, pa.timestamp("us", tz=col.type.tz or "UTC"))
        values = values.cast(utc)
        problems.add(pc.is_null(values), "ts missing")
        return values
    text = _as_text(col)
    has_offset = pc.fill_null(pc.match_substring_regex(text, TS_OFFSET_RE), False)
    problems.add(pc.is_null(text), "ts missing")
    problems.add(pc.and_(pc.is_valid(text), pc.invert(has_offset)),
                 "ts has no UTC offset (ISO-8601 with offset required)")
    offset_text = pc.if_else(has_offset, text, pa.scalar(None, pa.string()))
    try:
        # Arrow's ISO-8601 parser reads the common forms (and gives the same
        # instants pandas does); pandas decides when it refuses any value.
        values = pc.cast(offset_text, utc)
    except pa.ArrowInvalid:
        strs = pd.Series(offset_text.to_numpy(zero_copy_only=False), dtype=object)
        parsed = pd.to_datetime(strs, utc=True, format="ISO8601", errors="coerce")
        values = pa.array(parsed.astype("datetime64[us, UTC]"), type=utc)
    problems.add(pc.and_(has_offset, pc.is_null(values)), "ts is not an ISO-8601 time")
    return values


def coerce(raw: RawLog) -> CoercedLog:
    """Typed events and quarantined rows of one file (see module docstring)."""
    table = raw.table
    n = table.num_rows
    problems = _Problems(n)
    problems.add_rows(raw.cell_problems)
    present = set(table.column_names)
    cols: dict[str, pa.Array] = {}
    for name, kind in schema.COLUMNS:
        col = table.column(name) if name in present else None
        if kind == "int":
            cols[name] = _int_column(name, col, problems, n)
        elif kind == "amount":
            cols[name] = _amount_column(col, problems, n)
        elif kind == "ts":
            cols[name] = _ts_column(col, problems, n)
        else:
            cols[name] = _as_text(col) if col is not None else pa.nulls(n, pa.string())
    _validate(cols, problems, n)

    arrays = [cols[name] for name in schema.COLUMN_NAMES]
    names = list(schema.COLUMN_NAMES)
    for name in table.column_names:
        if name not in schema.COLUMN_KINDS and name not in RESERVED_COLUMNS:
            arrays.append(_as_text(table.column(name)))
            names.append(name)
    # One file name for every row: dictionary-encoded, not repeated n times.
    arrays.append(pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)),
                                                 pa.array([raw.path], pa.string())))
    arrays.append(pa.array(raw.lines.astype(np.int64)))
    names += ["source_file", "source_line"]
    typed = pa.table(arrays, names=names)

    quarantine = _quarantine_frame(raw, table, problems, cols)
    keep = ~problems.bad
    events = typed if keep.all() else typed.filter(pa.array(keep))
    return CoercedLog(events=events, quarantine=quarantine,
                      rows_read=n + len(raw.rejected.lines))


def _quoted(arr: pa.Array):
    return lambda r: repr(arr[r].as_py())


def _validate(cols: dict[str, pa.Array], problems: _Problems, n: int) -> None:
    """Row checks that need more than one column: the spec's per-event rules."""
    event = cols["event"]
    problems.add(pc.is_null(cols["table_id"]), "table_id missing")
    seq_flagged = np.zeros(n, dtype=bool)
    seq_flagged[[r for r, why in problems.reasons.items()
                 if any(w.startswith("seq ") for w in why)]] = True
    problems.add(_np(pc.is_null(cols["seq"])) & ~seq_flagged, "seq missing")
    problems.add(pc.is_null(event), "event missing")
    known = pc.is_in(event, value_set=pa.array(schema.EVENTS))
    problems.add(pc.and_(pc.is_valid(event), pc.invert(known)),
                 lambda r: f"unknown event {event[r].as_py()!r}")
    event = pc.if_else(known, event, pa.scalar(None, pa.string()))
    # Rules about events absent from the file need no look (small files are many).
    present = set(pc.unique(event).to_pylist())

    for column, required_by in _required_by_column().items():
        required_by = [e for e in required_by if e in present]
        if not required_by or cols[column].null_count == 0:
            continue
        needs = pc.is_in(event, value_set=pa.array(required_by))
        problems.add(pc.and_(needs, pc.is_null(cols[column])),
                     lambda r, c=column: f"missing {c} required by {event[r].as_py()}")

    def given(column: str) -> bool:
        return cols[column].null_count < n

    role = cols["actor_role"]
    if given("actor_role"):
        problems.add(pc.and_(pc.is_valid(role),
                             pc.invert(pc.is_in(role, pa.array(schema.ROLES)))),
                     lambda r: f"unknown actor_role {role[r].as_py()!r}")
    seat = cols["seat"]
    if given("seat"):
        problems.add(pc.less(seat, 1), "seat must be 1 or more")
        problems.add(pc.greater(seat, schema.MAX_SEAT),
                     f"seat must be {schema.MAX_SEAT} or less")
    for die in ("die1", "die2"):
        d = cols[die]
        if given(die):
            problems.add(pc.or_(pc.less(d, 1), pc.greater(d, 6)), f"{die} must be 1 to 6")
    total = cols["total"]
    if given("total"):
        problems.add(pc.or_(pc.less(total, 2), pc.greater(total, 12)), "total must be 2 to 12")
    amount = cols["amount"]
    if given("amount"):
        problems.add(pc.or_(pc.less(amount, 0), pc.is_inf(amount)), "amount must be 0 or more")
    bet = cols["bet"]
    if given("bet"):
        problems.add(pc.invert(pc.fill_null(pc.match_substring_regex(bet, schema.BET_PATTERN),
                                            True)), "bet is not a lower-case bet name")

    for column, allowed in (("outcome", schema.OUTCOMES), ("reason", schema.REASONS)):
        values = cols[column]
        if not given(column):
            continue
        for name, words in allowed.items():
            if name not in present:
                continue
            mask = pc.and_(pc.and_(pc.equal(event, name), pc.is_valid(values)),
                           pc.invert(pc.is_in(values, pa.array(words))))
            problems.add(mask, lambda r, c=column, e=name, v=values:
                         f"unknown {c} for {e} {v[r].as_py()!r}")
    _validate_flags(cols["flags"], event, problems, n)
    _validate_dice(cols, event, problems)


def _validate_flags(flags: pa.Array, event: pa.Array, problems: _Problems, n: int) -> None:
    if flags.null_count == n:
        return
    words = pc.split_pattern(flags, ",")
    flat = pc.utf8_trim_whitespace(pc.list_flatten(words))
    parent = pc.list_parent_indices(words).to_numpy()
    event_of_word = event.take(pa.array(parent))
    ok = np.zeros(len(flat), dtype=bool)
    for name, allowed in schema.FLAGS.items():
        ok |= _np(pc.and_(pc.equal(event_of_word, name), pc.is_in(flat, pa.array(allowed))))
    bad_rows = np.zeros(n, dtype=bool)
    bad_rows[parent[~ok]] = True
    takes = pc.is_in(event, pa.array(list(schema.FLAGS)))
    no_flags = _np(pc.and_(pc.is_valid(flags), pc.invert(takes)))
    problems.add(bad_rows & ~no_flags, lambda r: f"unknown flag for {event[r].as_py()}")
    problems.add(no_flags, "flags given for an event that takes none")


def _validate_dice(cols: dict[str, pa.Array], event: pa.Array, problems: _Problems) -> None:
    dice = cols["dice"]
    if dice.null_count == len(dice):
        return
    if pc.any(pc.match_substring_regex(dice, r"\s")).as_py():
        dice = pc.replace_substring_regex(dice, r"\s+", "")
        cols["dice"] = dice
    problems.add(pc.invert(pc.fill_null(pc.match_substring_regex(dice, DICE_RE), True)),
                 "dice is not a comma-separated list of serials")
    count = pc.add(pc.count_substring(dice, ","), 1)
    problems.add(pc.and_(pc.equal(event, "roll"), pc.not_equal(count, 2)),
                 "roll must name exactly the two dice thrown")
    problems.add(pc.and_(pc.equal(event, "die_cocked"), pc.not_equal(count, 1)),
                 "die_cocked must name one die")


def _required_by_column() -> dict[str, list[str]]:
    by_column: dict[str, list[str]] = {}
    for event, columns in schema.EVENT_REQUIRES.items():
        for column in columns:
            by_column.setdefault(column, []).append(event)
    return by_column


def _quarantine_frame(raw: RawLog, table: pa.Table, problems: _Problems,
                      cols: dict[str, pa.Array]) -> pd.DataFrame:
    """Quarantined rows as recorded (every cell as text, in a JSON object) with
    where they came from and why they were set aside."""
    idx = np.flatnonzero(problems.bad)
    if not len(idx) and not raw.rejected.lines:
        return _empty_quarantine()
    records = []
    if len(idx):
        sub = table.take(pa.array(idx)).to_pylist()
        for i, row in zip(idx.tolist(), sub):
            cells = {k: (None if v is None else str(v)) for k, v in row.items()}
            seq = cols["seq"][i].as_py()
            records.append((raw.path, int(raw.lines[i]), cols["table_id"][i].as_py(), seq,
                            cols["event"][i].as_py(), problems.reason(i),
                            json.dumps(cells, sort_keys=True, ensure_ascii=False)))
    for line, text, reason in zip(raw.rejected.lines, raw.rejected.texts, raw.rejected.reasons):
        records.append((raw.path, int(line), None, None, None, reason,
                        json.dumps({"text": text}, ensure_ascii=False)))
    return _quarantine_records(records)


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
