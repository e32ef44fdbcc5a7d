"""Turn a file as read into typed events, and set aside every row that breaks
the format with the reasons why.

All checks here are vectorised over whole columns: a bad cell costs its row a
place in the quarantine, never the file its place in the audit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.logs import schema
from auditor.logs.reader import RawLog

CATEGORICAL = ("event", "actor_role", "bet", "outcome", "reason", "flags", "table_id")
INT_RE = r"^[+-]?[0-9]+$"
AMOUNT_RE = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$"
TS_OFFSET_RE = r"(Z|z|[+-][0-9]{2}(:?[0-9]{2})?)$"
DICE_RE = r"^[^,\s]+(,[^,\s]+)*$"


@dataclass
class CoercedLog:
    """The rows of one file that can be replayed, and those that cannot."""

    events: pd.DataFrame
    quarantine: pd.DataFrame
    rows_read: int


class _Problems:
    """Collects, per row, every reason it breaks the format."""

    def __init__(self, n: int):
        self.reasons = np.full(n, "", dtype=object)

    def add(self, mask, message) -> None:
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():
            return
        if isinstance(message, str):
            cur = self.reasons[mask]
            self.reasons[mask] = np.where(cur == "", message, cur + "; " + message)
        else:
            msgs = np.asarray(message, dtype=object)[mask]
            cur = self.reasons[mask]
            self.reasons[mask] = np.where(cur == "", msgs, cur + "; " + msgs)

    @property
    def bad(self) -> np.ndarray:
        return self.reasons != ""


def _as_text(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        if pa.types.is_timestamp(col.type):
            col = pc.strftime(col, format="%Y-%m-%dT%H:%M:%S")
        else:
            col = pc.cast(col, pa.string())
    return pc.utf8_trim_whitespace(pc.cast(col, pa.string()))


def _null_mask(arr: pa.Array) -> np.ndarray:
    return arr.is_null().to_numpy(zero_copy_only=False)


def _int_column(name, col, problems: _Problems, n: int) -> pd.Series:
    if col is None:
        return pd.Series(pd.array([pd.NA] * n, dtype="Int64"))
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    if pa.types.is_integer(col.type):
        return pd.Series(pd.array(pc.cast(col, pa.int64()).to_pandas(types_mapper=pd.ArrowDtype)
                                  .astype("Int64")))
    text = _as_text(col)
    present = ~_null_mask(text)
    ok = pc.fill_null(pc.match_substring_regex(text, INT_RE), False).to_numpy(
        zero_copy_only=False)
    floatish = pc.fill_null(pc.match_substring_regex(text, r"^[+-]?[0-9]+\.0*$"), False) \
        .to_numpy(zero_copy_only=False)
    good = ok | floatish
    problems.add(present & ~good, f"{name} is not a whole number")
    cleaned = pc.if_else(pa.array(good), pc.replace_substring_regex(text, r"\.0*$", ""),
                         pa.scalar(None, pa.string()))
    try:
        values = pc.cast(cleaned, pa.int64())
    except pa.ArrowInvalid:  # out of int64 range
        values = pa.array([_safe_int(v) for v in cleaned.to_pylist()], pa.int64())
        problems.add(present & good & _null_mask(values), f"{name} is out of range")
    return pd.Series(values.to_pandas(types_mapper=pd.ArrowDtype).astype("Int64"))


def _safe_int(text):
    if text is None:
        return None
    v = int(text)
    return v if -(2 ** 63) <= v < 2 ** 63 else None


def _amount_column(col, problems: _Problems, n: int) -> pd.Series:
    if col is None:
        return pd.Series(np.full(n, np.nan))
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or \
            pa.types.is_decimal(col.type):
        return pd.Series(pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False))
    text = _as_text(col)
    present = ~_null_mask(text)
    ok = pc.fill_null(pc.match_substring_regex(text, AMOUNT_RE), False).to_numpy(
        zero_copy_only=False)
    problems.add(present & ~ok, "amount is not a number")
    cleaned = pc.if_else(pa.array(ok), text, pa.scalar(None, pa.string()))
    return pd.Series(pc.cast(cleaned, pa.float64()).to_numpy(zero_copy_only=False))


def _ts_column(col, problems: _Problems, n: int) -> pd.Series:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    if pa.types.is_timestamp(col.type):
        # Parquet timestamps: with a zone, convert; without one, taken as UTC.
        values = pc.cast(col, pa.timestamp("us", tz=col.type.tz or "UTC"))
        ser = pd.Series(values.to_pandas()).dt.tz_convert("UTC")
        problems.add(ser.isna().to_numpy(), "ts missing")
        return ser.astype("datetime64[us, UTC]")
    text = _as_text(col)
    present = ~_null_mask(text)
    has_offset = pc.fill_null(pc.match_substring_regex(text, TS_OFFSET_RE), False).to_numpy(
        zero_copy_only=False)
    strs = pd.Series(text.to_pandas(), dtype=object)
    parsed = pd.to_datetime(strs.where(has_offset), utc=True, format="ISO8601", errors="coerce")
    problems.add(~present, "ts missing")
    problems.add(present & ~has_offset, "ts has no UTC offset (ISO-8601 with offset required)")
    problems.add(present & has_offset & parsed.isna().to_numpy(), "ts is not an ISO-8601 time")
    return parsed.astype("datetime64[us, UTC]")


def coerce(raw: RawLog) -> CoercedLog:
    """Typed events and quarantined rows of one file (see module docstring)."""
    table = raw.table
    n = table.num_rows
    problems = _Problems(n)
    cols: dict[str, pd.Series] = {}
    present_names = set(table.column_names)
    text_cols: dict[str, pa.Array] = {}
    for name, kind in schema.COLUMNS:
        col = table.column(name) if name in present_names else None
        if kind == "int":
            cols[name] = _int_column(name, col, problems, n)
        elif kind == "amount":
            cols[name] = _amount_column(col, problems, n)
        elif kind == "ts":
            cols[name] = _ts_column(col, problems, n)
        else:
            arr = _as_text(col) if col is not None else pa.nulls(n, pa.string())
            arr = pc.if_else(pc.equal(arr, ""), pa.scalar(None, pa.string()), arr)
            text_cols[name] = arr
            cols[name] = pd.Series(arr.to_pandas(), dtype=object)
    _validate(cols, problems, n)

    frame = pd.DataFrame(cols)
    for name in table.column_names:
        if name not in schema.COLUMN_KINDS and name not in ("source_file", "source_line"):
            frame[name] = pd.Series(_as_text(table.column(name)).to_pandas(), dtype=object)
    frame["source_file"] = raw.path
    frame["source_line"] = raw.lines.astype(np.int64)

    bad = problems.bad
    quarantine = _quarantine_frame(raw, table, bad, problems.reasons, frame)
    events = frame.loc[~bad].reset_index(drop=True)
    return CoercedLog(events=events, quarantine=quarantine, rows_read=n + len(raw.rejected.lines))


def _validate(cols: dict[str, pd.Series], problems: _Problems, n: int) -> None:
    """Row checks that need more than one column: the spec's per-event rules."""
    event = cols["event"]
    table_id = cols["table_id"]
    problems.add(table_id.isna().to_numpy(), "table_id missing")
    seq_unread = cols["seq"].isna().to_numpy() & ~_mentions(problems.reasons, "seq ")
    problems.add(seq_unread, "seq missing")
    problems.add(event.isna().to_numpy(), "event missing")
    known = event.isin(schema.EVENTS).to_numpy()
    problems.add(event.notna().to_numpy() & ~known,
                 "unknown event " + event.fillna("").astype(str).map(repr).to_numpy(object))
    ev = event.where(pd.Series(known), None)

    for column, required_by in _required_by_column().items():
        missing = cols[column].isna().to_numpy()
        needs = ev.isin(required_by).to_numpy()
        mask = needs & missing
        problems.add(mask, "missing " + column + " required by " + ev.fillna("").to_numpy(object))

    role = cols["actor_role"]
    problems.add(role.notna().to_numpy() & ~role.isin(schema.ROLES).to_numpy(),
                 "unknown actor_role " + role.fillna("").astype(str).map(repr).to_numpy(object))
    seat = cols["seat"]
    problems.add((seat.notna() & (seat < 1)).fillna(False).to_numpy(bool), "seat must be 1 or more")
    for die in ("die1", "die2"):
        d = cols[die]
        problems.add(((d < 1) | (d > 6)).fillna(False).to_numpy(bool), f"{die} must be 1 to 6")
    total = cols["total"]
    problems.add(((total < 2) | (total > 12)).fillna(False).to_numpy(bool), "total must be 2 to 12")
    amount = cols["amount"]
    problems.add((amount < 0).to_numpy() | np.isinf(amount.to_numpy()), "amount must be 0 or more")
    bet = cols["bet"]
    problems.add(bet.notna().to_numpy() & ~bet.fillna("").str.match(schema.BET_PATTERN).to_numpy(),
                 "bet is not a lower-case bet name")

    for column, allowed in (("outcome", schema.OUTCOMES), ("reason", schema.REASONS)):
        values = cols[column]
        for name, words in allowed.items():
            mask = (ev == name).to_numpy() & values.notna().to_numpy() & \
                ~values.isin(words).to_numpy()
            problems.add(mask, f"unknown {column} for {name} " +
                         values.fillna("").astype(str).map(repr).to_numpy(object))

    flags = cols["flags"]
    has_flags = flags.notna().to_numpy()
    if has_flags.any():
        for name, words in schema.FLAGS.items():
            rows = np.flatnonzero((ev == name).to_numpy() & has_flags)
            if not len(rows):
                continue
            allowed = set(words)
            bad = [i for i in rows
                   if not set(w.strip() for w in flags.iat[i].split(",")) <= allowed]
            if bad:
                mask = np.zeros(n, dtype=bool)
                mask[bad] = True
                problems.add(mask, f"unknown flag for {name}")
        other = has_flags & ~ev.isin(list(schema.FLAGS)).to_numpy()
        problems.add(other, "flags given for an event that takes none")

    dice = cols["dice"]
    has_dice = dice.notna().to_numpy()
    if has_dice.any():
        compact = dice.fillna("").str.replace(r"\s+", "", regex=True)
        problems.add(has_dice & ~compact.str.match(DICE_RE).to_numpy(),
                     "dice is not a comma-separated list of serials")
        count = compact.str.count(",") + 1
        problems.add((ev == "roll").to_numpy() & has_dice & (count != 2).to_numpy(),
                     "roll must name exactly the two dice thrown")
        problems.add((ev == "die_cocked").to_numpy() & has_dice & (count != 1).to_numpy(),
                     "die_cocked must name one die")
        cols["dice"] = compact.where(pd.Series(has_dice), None)


def _mentions(reasons: np.ndarray, word: str) -> np.ndarray:
    return np.fromiter((word in r for r in reasons), dtype=bool, count=len(reasons))


def _required_by_column() -> dict[str, list[str]]:
    by_column: dict[str, list[str]] = {}
    for event, columns in schema.EVENT_REQUIRES.items():
        for column in columns:
            by_column.setdefault(column, []).append(event)
    return by_column


QUARANTINE_COLUMNS = ("source_file", "source_line", "table_id", "seq", "event", "reason", "raw")


def _quarantine_frame(raw: RawLog, table: pa.Table, bad: np.ndarray, reasons,
                      frame: pd.DataFrame) -> pd.DataFrame:
    """Quarantined rows as recorded (every cell as text, in a JSON object) with
    where they came from and why they were set aside."""
    import json

    idx = np.flatnonzero(bad)
    records = []
    if len(idx):
        sub = table.take(pa.array(idx)).to_pylist()
        for i, row in zip(idx, sub):
            cells = {k: (None if v is None else str(v)) for k, v in row.items()}
            seq = frame["seq"].iat[i]
            records.append((raw.path, int(raw.lines[i]), frame["table_id"].iat[i],
                            None if pd.isna(seq) else int(seq), frame["event"].iat[i],
                            reasons[i], json.dumps(cells, sort_keys=True, ensure_ascii=False)))
    for line, text, reason in zip(raw.rejected.lines, raw.rejected.texts, raw.rejected.reasons):
        records.append((raw.path, int(line), None, None, None, reason,
                        json.dumps({"text": text}, ensure_ascii=False)))
    out = pd.DataFrame.from_records(records, columns=list(QUARANTINE_COLUMNS))
    out["source_line"] = out["source_line"].astype("int64")
    out["seq"] = out["seq"].astype("Int64")
    out["table_id"] = out["table_id"].astype(object)
    out["event"] = out["event"].astype(object)
    return out.sort_values("source_line", kind="stable").reset_index(drop=True)
