"""Type a file as read into events: each column to text, whole numbers,
amounts or UTC times, every cell that cannot be typed noted for its row.

Typing is vectorised with pyarrow compute over whole columns, text once per
distinct value. Which typed rows then break the format, and the quarantine
that keeps them with the reasons why, are `auditor.logs.validate`'s. A bad
cell costs its row a place in the quarantine, never the file its place in
the audit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.logs import schema
from auditor.logs.arrays import (
    flat,
    np_mask,
    raw_values,
    text_offsets_and_bytes,
    valid_rows,
    where_valid,
)
from auditor.logs.raw import RawLog
from auditor.logs.validate import (
    TS_RANGE_MESSAGE,
    Problems,
    quarantine_frame,
    ts_out_of_range,
    validate_rows,
)

INT_RE = r"^[+-]?[0-9]+(\.0*)?$"
AMOUNT_RE = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$"
TS_OFFSET_RE = r"(Z|z|[+-][0-9]{2}(:?[0-9]{2})?)$"

#: Columns of the typed event table, in order.
EVENT_SCHEMA = pa.schema(
    [(name, {"str": pa.string(), "int": pa.int64(), "ts": pa.timestamp("us", tz="UTC"),
             "amount": pa.float64()}[kind]) for name, kind in schema.COLUMNS]
)
#: Columns the auditor adds to every event: a log column of the same name is
#: not carried into the events (the quarantine still shows it as recorded).
RESERVED_COLUMNS = ("source_file", "source_line", "source_order")


@dataclass
class CoercedLog:
    """The rows of one file that can be replayed (a typed pyarrow Table with
    `source_file` and `source_line`), and those that cannot."""

    events: pa.Table
    quarantine: pd.DataFrame
    rows_read: int
    #: The event types the rows name (replayed or quarantined): what the
    #: file records, for the audit's coverage.
    recorded: frozenset[str] = frozenset()
    #: Times without a UTC offset read as the offset the user gave.
    assumed: int = 0


def _chunks(col) -> list[pa.Array]:
    return col.chunks if isinstance(col, pa.ChunkedArray) else [col]


def _as_text(col) -> pa.Array:
    """Any column as trimmed text, empty cells as null."""
    col = flat(col)
    if col.null_count == len(col):
        return pa.nulls(len(col), pa.string())
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if pa.types.is_timestamp(col.type):
        col = pc.strftime(col, format="%Y-%m-%dT%H:%M:%S")
    elif not pa.types.is_string(col.type):
        col = pc.cast(col, pa.string())
    if not _trimmed(col):
        col = pc.utf8_trim_whitespace(col)
    empty = pc.equal(col, "")
    if not pc.any(empty).as_py():
        return col
    return pc.if_else(empty, pa.scalar(None, pa.string()), col)


def _trimmed(text: pa.Array) -> bool:
    """Whether trimming would change no value of a text array: each value's
    first and last byte printable ASCII (not white space, nor part of a
    multi-byte character), read off the offsets. Trimming copies every value
    (a CSV's seq and ts: 1M values each a slice)."""
    offsets, data = text_offsets_and_bytes(text)
    if data is None:
        return False
    starts, ends = offsets[:-1], offsets[1:]
    if text.null_count:
        valid = valid_rows(text)
        starts, ends = starts[valid], ends[valid]
    if not len(starts) or (ends <= starts).any():
        return not len(starts)
    return bool(_printable(data[starts]).all() and _printable(data[ends - 1]).all())


def _printable(chars: np.ndarray) -> np.ndarray:
    return (chars - 0x21).astype(np.uint8, copy=False) < 0x7F - 0x21


class Placement:
    """Where the typed slices of one file are written: a whole-file int64
    array (values and validity bits) per int column, and the file's line
    numbers. Each slice's pieces then lie end to end in one buffer, which the
    frame keeps as it is (`load._in_place`) instead of a join of copies: a
    10M-event CSV's int columns are not faulted in twice (80 MB each).
    `start` is the first row of the slice being typed."""

    def __init__(self, rows: int, lines: np.ndarray):
        self.rows = rows
        self.start = 0
        self._lines = np.ascontiguousarray(lines, dtype=np.int64)
        self._columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def slot(self, name: str, n: int, kind: pa.DataType | None = None) -> _Slot | None:
        """The `n` rows of column `name` (64-bit values of type `kind`) from
        `start`; None when the slice's validity bits do not start at a byte
        (a Parquet row group's end)."""
        if self.start % 8:
            return None
        return _Slot(self, name, self.start, n, kind or pa.int64())

    def whole(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Column `name`'s values and validity bytes, made when first
        written (a column never typed from text costs nothing)."""
        if name not in self._columns:
            self._columns[name] = (np.empty(self.rows, dtype=np.int64),
                                   np.zeros((self.rows + 7) // 8, dtype=np.uint8))
        return self._columns[name]

    def lines(self, n: int) -> pa.Array:
        """The line numbers of the `n` rows from `start`, over the file's."""
        return pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(self._lines)],
                                     offset=self.start)


class _Slot:
    """Rows `start`..`start + n` of a whole-file column of 64-bit values
    (`kind`): `values` (as int64) and `bits` (its validity bytes) to write,
    `array` to read them as Arrow."""

    __slots__ = ("_name", "_place", "kind", "n", "start")

    def __init__(self, place: Placement, name: str, start: int, n: int, kind: pa.DataType):
        self._place, self._name, self.start, self.n, self.kind = place, name, start, n, kind

    @property
    def values(self) -> np.ndarray:
        return self._place.whole(self._name)[0][self.start:self.start + self.n]

    @property
    def bits(self) -> np.ndarray:
        return self._place.whole(self._name)[1][self.start // 8:(self.start + self.n + 7) // 8]

    def array(self, null_count: int) -> pa.Array:
        """The rows written, `null_count` of them null (their bits 0)."""
        values, bits = self._place.whole(self._name)
        bitmap = pa.py_buffer(bits) if null_count else None
        return pa.Array.from_buffers(self.kind, self.n, [bitmap, pa.py_buffer(values)],
                                     null_count=null_count, offset=self.start)

    def put(self, typed) -> pa.Array:
        """`typed` (of `kind`, one or more pieces) copied in, the values'
        bits as they are."""
        values, a = self.values, 0
        for piece in _chunks(typed):
            b = a + len(piece)
            np.copyto(values[a:b], raw_values(piece, np.int64))
            a = b
        if typed.null_count:
            valid = np.concatenate([valid_rows(p) for p in _chunks(typed)])
            self.bits[:] = np.packbits(valid, bitorder="little")
        return self.array(typed.null_count)


class TextColumn:
    """A text column, trimmed, empty cells null: its distinct values and each
    row's code into them (`codes`, int32, len(values) for a null row), so a
    check runs once per distinct value and reaches the rows through the codes
    only when some value fails it. With `codes` None, `values` is the column
    itself, one cell per row (the columns whose values are nearly all
    distinct: seq, ts)."""

    __slots__ = ("_array", "_null", "codes", "values")

    def __init__(self, values: pa.Array, codes: np.ndarray | None,
                 array: pa.DictionaryArray | None = None):
        self.values = values
        self.codes = codes
        self._array = array  # the column as a dictionary array, when at hand
        self._null = None

    def __len__(self) -> int:
        return len(self.values) if self.codes is None else len(self.codes)

    @property
    def null(self) -> np.ndarray:
        """Per row: no value."""
        if self._null is None:
            self._null = np_mask(pc.is_null(self.values)) if self.codes is None \
                else self.codes == len(self.values)
        return self._null

    @property
    def null_count(self) -> int:
        if self.codes is None:
            return self.values.null_count
        if self._array is not None:
            return self._array.null_count
        return int(np.count_nonzero(self.null))

    def rows(self, per_value) -> np.ndarray:
        """A mask over the values as a mask over the rows (null rows False)."""
        mask = np_mask(per_value)
        if self.codes is None:
            return mask
        if not mask.any():
            return np.zeros(len(self.codes), dtype=bool)
        if mask.all():  # (every value: every row that has one)
            return ~self.null
        return np.append(mask, False).take(self.codes)

    def take(self, per_value: pa.Array, slot: _Slot | None = None) -> pa.Array:
        """An array over the values as an array over the rows (null rows
        null), written into `slot` when given (int64 values)."""
        if self.codes is None:
            return per_value if slot is None else slot.put(per_value)
        if per_value.type in _WORDS:
            return _taken_words(per_value, self.codes, slot)
        with_null = pa.concat_arrays([per_value, pa.nulls(1, per_value.type)])
        return with_null.take(pa.array(self.codes))

    def value(self, r: int):
        if self.codes is None:
            return self.values[r].as_py()
        code = int(self.codes[r])
        return None if code == len(self.values) else self.values[code].as_py()

    def array(self) -> pa.Array:
        """The column: dictionary-encoded (int32 indices), or as it is."""
        if self.codes is None:
            return self.values
        if self._array is None:
            null = self.null
            if null.any():
                indices = pa.array(np.where(null, 0, self.codes).astype(np.int32, copy=False),
                                   mask=null)
            else:
                indices = pa.array(self.codes)
            self._array = pa.DictionaryArray.from_arrays(indices, self.values, safe=False)
        return self._array

    def replaced(self, values: pa.Array) -> TextColumn:
        """Each value replaced by the one at its place in `values` (equal
        results become one value again)."""
        if self.codes is None:
            return TextColumn(values, None)
        return TextColumn(*_distinct(values, self.codes))


#: Types of 64-bit values, taken by `_taken_words`.
_WORDS = (pa.int64(), pa.float64(), pa.timestamp("us", tz="UTC"))


def _taken_words(per_value: pa.Array, codes: np.ndarray, slot: _Slot | None = None
                 ) -> pa.Array:
    """`TextColumn.take` for 64-bit values, by numpy (Arrow's take costs three
    times more): each row's value, null (and zero, as Arrow gives it) where
    the value is null or the row has none (code len(per_value)); written
    into `slot` when given."""
    n = len(per_value)
    words = np.zeros(n + 1, dtype=np.int64)  # (the bits of any 64-bit value)
    valid = np.zeros(n + 1, dtype=bool)
    if n and per_value.null_count < n:
        words[:n] = raw_values(per_value, np.int64)
        valid[:n] = valid_rows(per_value)
    # (codes lie in 0..n: "clip" changes nothing, and spares numpy a
    # buffered copy of the output; with every value valid, the rows that
    # have one are those not coded n)
    row_valid = codes != n if valid[:n].all() else valid.take(codes, mode="clip")
    values = words.take(codes, out=None if slot is None else slot.values, mode="clip")
    missing = len(codes) - int(np.count_nonzero(row_valid))
    if slot is not None:
        if missing:
            values *= row_valid
            slot.bits[:] = np.packbits(row_valid, bitorder="little")
        return slot.array(missing)
    if not missing:
        return pa.Array.from_buffers(per_value.type, len(codes), [None, pa.py_buffer(values)])
    values *= row_valid
    bitmap = pa.py_buffer(np.packbits(row_valid, bitorder="little"))
    return pa.Array.from_buffers(per_value.type, len(codes), [bitmap, pa.py_buffer(values)],
                                 null_count=missing)


def _distinct(values: pa.Array, codes: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """`values` (possibly repeated or null) made distinct and non-null, with
    `codes` (into `values`, len(values) = null) pointing into the result."""
    encoded = pc.dictionary_encode(values)
    unique = encoded.dictionary
    if len(unique) == len(values) and not encoded.indices.null_count:
        return unique, codes  # distinct already, in the same order
    remap = np.append(pc.fill_null(encoded.indices, len(unique)).to_numpy(zero_copy_only=False),
                      len(unique)).astype(np.int32, copy=False)
    return unique, remap.take(codes)


def _text_chunk(col: pa.Array) -> pa.Array:
    """Any plain column's cells as text, untrimmed (as `_as_text` reads them)."""
    if col.null_count == len(col):
        return pa.nulls(len(col), pa.string())
    if pa.types.is_timestamp(col.type):
        return pc.strftime(col, format="%Y-%m-%dT%H:%M:%S")
    if not pa.types.is_string(col.type):
        return pc.cast(col, pa.string())
    return col


def _cleaned(values: pa.Array) -> pa.Array:
    """Text trimmed, empty text null."""
    trimmed = pc.utf8_trim_whitespace(values)
    return pc.if_else(pc.equal(trimmed, ""), pa.scalar(None, pa.string()), trimmed)


#: Dictionaries up to this many values are first looked at in Python (`_plainly_clean`).
PLAIN_DICTIONARY = 256


def _plainly_clean(values: pa.Array) -> bool:
    """Whether a small dictionary's values are clean beyond doubt: each
    printable ASCII, neither empty nor starting or ending with a space (so
    trimming changes none: no other whitespace is printable ASCII), and no
    two alike. Such a dictionary is what `_cleaned` and `_distinct` would
    give back as it is; looked at in Python, it spares a small file five
    Arrow calls a text column (a file of one table and night has ten)."""
    if len(values) > PLAIN_DICTIONARY or values.null_count:
        return False
    try:
        texts = values.to_pylist()
    except (UnicodeDecodeError, pa.ArrowException):  # (not UTF-8: Arrow's own look decides)
        return False
    return len(set(texts)) == len(texts) and all(
        t and t.isascii() and t.isprintable() and t[0] != " " and t[-1] != " "
        for t in texts)


_INDICES = pa.int32()


def _int32(indices: pa.Array) -> pa.Array:
    return indices if indices.type == _INDICES else indices.cast(_INDICES)


def _text(col, n: int, distinct: bool = True) -> TextColumn:
    """Any column as `TextColumn`. A dictionary-encoded column keeps its
    dictionaries (one per chunk: put side by side, no unification); a plain
    one is dictionary-encoded unless `distinct` is False."""
    if col is None:
        return TextColumn(pa.array([], pa.string()), np.zeros(n, dtype=np.int32))
    chunks = _chunks(col)
    if not distinct and not any(pa.types.is_dictionary(c.type) for c in chunks):
        return TextColumn(_as_text(col), None)
    if len(chunks) > 1 and all(pa.types.is_dictionary(c.type) and
                               pa.types.is_string(c.type.value_type) for c in chunks):
        # (a CSV's: a dictionary per block read) one dictionary for them all
        try:
            chunks = [pa.chunked_array(chunks).combine_chunks()]
        except pa.ArrowNotImplementedError:  # an older Arrow: dictionaries not unified
            pass
    if len(chunks) == 1 and pa.types.is_dictionary(chunks[0].type):
        # The common case (Parquet): one dictionary, usually clean already.
        chunk = chunks[0]
        values = chunk.dictionary
        as_is = pa.types.is_string(values.type) and chunk.type.index_type == _INDICES
        if not pa.types.is_string(values.type):
            values = _text_chunk(values)
        codes = _codes(_int32(chunk.indices), len(values))
        if _plainly_clean(values):
            return TextColumn(values, codes, chunk if as_is else None)
        clean = _cleaned(values)
        # Values already trimmed, none empty, each once: the column stays as it is.
        if not clean.null_count and pc.all(pc.equal(clean, values)).as_py() is not False \
                and _distinct(values, codes)[1] is codes:
            return TextColumn(values, codes, chunk if as_is else None)
        return TextColumn(*_distinct(clean, codes))
    dictionaries, codes, offset = [], [], 0
    for chunk in chunks:
        if not pa.types.is_dictionary(chunk.type):
            text = _text_chunk(chunk)
            chunk = pc.dictionary_encode(text) if len(text) else \
                pa.DictionaryArray.from_arrays(pa.array([], pa.int32()), pa.array([], pa.string()))
        values = chunk.dictionary
        if not pa.types.is_string(values.type):
            values = _text_chunk(values)
        indices = _int32(chunk.indices)
        if indices.null_count:
            indices = pc.fill_null(indices, -1)  # a null row: given the null code below
        part = indices.to_numpy(zero_copy_only=False).astype(np.int32)
        if offset:
            part[part >= 0] += offset
        dictionaries.append(values)
        codes.append(part)
        offset += len(values)
    raw = pa.concat_arrays(dictionaries) if dictionaries else pa.array([], pa.string())
    codes = codes[0] if len(codes) == 1 else np.concatenate(codes) if codes \
        else np.zeros(0, dtype=np.int32)  # (no chunk: a part of no row)
    codes[codes < 0] = len(raw)
    return TextColumn(*_distinct(_cleaned(raw), codes))


def _codes(indices: pa.Array, null_code: int) -> np.ndarray:
    """Int32 dictionary indices as numpy, `null_code` for a null row."""
    if not indices.null_count:
        return indices.to_numpy(zero_copy_only=False)
    return where_valid(raw_values(indices), valid_rows(indices), null_code)


def _int_column(name: str, col, problems: Problems, n: int,
                slot: _Slot | None = None) -> pa.Array:
    """The column as int64; a value typed from text is written into `slot`
    when given (an integer column as read is kept as it is: no copy)."""
    if col is None or col.null_count == n:
        return pa.nulls(n, pa.int64())
    if not any(pa.types.is_dictionary(c.type) for c in _chunks(col)):
        if pa.types.is_integer(col.type):
            col = flat(col)
            try:
                return pc.cast(col, pa.int64())
            except pa.ArrowInvalid:  # unsigned beyond int64: compare as text below
                pass
        elif pa.types.is_string(col.type) and pc.all(pc.ascii_is_decimal(col)).as_py():
            # Digits only (a CSV's seq): whole numbers as written, nothing to
            # trim; typed piece by piece (the text is not joined first).
            try:
                ints = pc.cast(col, pa.int64())
            except pa.ArrowInvalid:  # a number beyond int64: told below
                pass
            else:
                return _joined(ints, slot)
    text = _text(col, n, distinct=name != "seq")
    values = text.values
    good = pc.fill_null(pc.match_substring_regex(values, INT_RE), False)
    problems.add(text.rows(pc.and_(pc.is_valid(values), pc.invert(good))),
                 f"{name} is not a whole number")
    if pc.any(pc.match_substring(values, ".")).as_py():
        values = pc.replace_substring_regex(values, r"\.0*$", "")
    if (pc.sum(good).as_py() or 0) + values.null_count == len(values):
        cleaned = values  # every value a whole number (as a CSV's seq nearly always is)
    else:
        cleaned = pc.if_else(good, values, pa.scalar(None, pa.string()))
    try:
        ints = pc.cast(cleaned, pa.int64())
    except pa.ArrowInvalid:  # a number beyond int64
        ints = pa.array([_safe_int(v) for v in cleaned.to_pylist()], pa.int64())
        problems.add(text.rows(pc.and_(pc.is_valid(cleaned), pc.is_null(ints))),
                     f"{name} is out of range")
    return text.take(ints, slot)


def _safe_int(text):
    if text is None:
        return None
    v = int(text)
    return v if -(2 ** 63) <= v < 2 ** 63 else None


def _amount_column(col, problems: Problems, n: int) -> pa.Array:
    if col is None or col.null_count == n:
        return pa.nulls(n, pa.float64())
    if not any(pa.types.is_dictionary(c.type) for c in _chunks(col)):
        col = flat(col)
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or \
                pa.types.is_decimal(col.type):
            values = pc.cast(col, pa.float64(), safe=False)
            nan = pc.is_nan(values)
            if not pc.any(nan).as_py():
                return values
            problems.add(nan, "amount is not a number")
            return pc.if_else(nan, pa.scalar(None, pa.float64()), values)
    text = _text(col, n)
    values = text.values
    ok = pc.fill_null(pc.match_substring_regex(values, AMOUNT_RE), False)
    problems.add(text.rows(pc.and_(pc.is_valid(values), pc.invert(ok))),
                 "amount is not a number")
    return text.take(pc.cast(pc.if_else(ok, values, pa.scalar(None, pa.string())),
                             pa.float64()))


def _ts_column(col, problems: Problems, n: int, slot: _Slot | None = None,
               assume_offset: str | None = None, notes: dict | None = None) -> pa.Array:
    """The column as UTC times; times typed from text are written into `slot`
    when given. A time without a UTC offset is read as `assume_offset`
    (`+HH:MM`) when given (`notes["assumed"]` counts them), else its row is
    quarantined."""
    utc = pa.timestamp("us", tz="UTC")
    notes = {} if notes is None else notes
    if col is None:
        problems.add(np.ones(n, dtype=bool), "ts missing")
        return pa.nulls(n, utc)
    parsed = _ts_as_written(col)
    if parsed is not None:
        return _joined(parsed, slot)
    if not any(pa.types.is_dictionary(c.type) for c in _chunks(col)):
        col = flat(col)
        if pa.types.is_timestamp(col.type):
            # Parquet timestamps: with a zone, converted; without one, taken as UTC
            # (or as the offset the user gave). Times out of range quarantined
            # first: in seconds they may lie beyond what microseconds can hold.
            if col.null_count:
                problems.add(pc.is_null(col), "ts missing")
            out = ts_out_of_range(col)
            if out is not None:
                problems.add(out, TS_RANGE_MESSAGE)
                col = pc.if_else(out, pa.scalar(None, col.type), col)
            values = pc.cast(col, pa.timestamp("us", tz=col.type.tz or "UTC"))
            values = values.cast(utc)
            if col.type.tz is None and assume_offset is not None:
                notes["assumed"] = notes.get("assumed", 0) + len(values) - values.null_count
                shift = _offset_seconds(assume_offset) * 1_000_000
                values = pc.subtract(values.cast(pa.int64()), shift).cast(utc)
            return values
    text = _text(col, n, distinct=False)
    values = text.values
    has_offset = _with_offset(values)
    if assume_offset is not None:
        naive = pc.and_(pc.is_valid(values), pc.invert(has_offset))
        count = pc.sum(naive).as_py() or 0
        if count:
            notes["assumed"] = notes.get("assumed", 0) + count
            values = pc.if_else(naive, pc.binary_join_element_wise(values, assume_offset, ""),
                                values)
            has_offset = pc.or_(has_offset, naive)
    problems.add(text.null, "ts missing")
    problems.add(text.rows(pc.and_(pc.is_valid(values), pc.invert(has_offset))),
                 "ts has no UTC offset (ISO-8601 with offset required)")
    if (pc.sum(has_offset).as_py() or 0) + values.null_count == len(values):
        offset_text = values  # every time with its offset (nearly always)
    else:
        offset_text = pc.if_else(has_offset, values, pa.scalar(None, pa.string()))
    try:
        # Arrow's ISO-8601 parser reads the common forms (and gives the same
        # instants pandas does); pandas decides when it refuses any value.
        parsed = pc.cast(offset_text, utc)
    except pa.ArrowInvalid:
        strs = pd.Series(offset_text.to_numpy(zero_copy_only=False), dtype=object)
        parsed = pd.to_datetime(strs, utc=True, format="ISO8601", errors="coerce")
        parsed = pa.array(parsed.astype("datetime64[us, UTC]"), type=utc)
    problems.add(text.rows(pc.and_(has_offset, pc.is_null(parsed))),
                 "ts is not an ISO-8601 time")
    return text.take(parsed)


def _offset_seconds(offset: str) -> int:
    """`+HH:MM` in seconds east of UTC."""
    sign = -1 if offset[0] == "-" else 1
    return sign * (int(offset[1:3]) * 3600 + int(offset[4:6]) * 60)


def _ts_as_written(col) -> pa.Array | pa.ChunkedArray | None:
    """Times as a CSV gives them (text pieces, no cell empty or untrimmed,
    every time ending with a UTC offset) parsed piece by piece, without
    joining the text first (a 1M-row slice: 25 MB copied). None when any
    piece or time is otherwise: the general path decides then, and would
    find no problem where this gives times."""
    chunks = _chunks(col)
    if not chunks or any(not pa.types.is_string(c.type) or c.null_count or not _trimmed(c)
                         for c in chunks):
        return None
    if not all(pc.all(_with_offset(c)).as_py() for c in chunks):
        return None
    try:
        return pc.cast(col, pa.timestamp("us", tz="UTC"))
    except pa.ArrowInvalid:  # (pandas may read what Arrow does not)
        return None


def _joined(values, slot: _Slot | None) -> pa.Array:
    """A column typed piece by piece as one array: written into `slot` when
    given, else joined."""
    return flat(values) if slot is None else slot.put(values)


def _with_offset(values: pa.Array) -> pa.Array:
    """Per value: does it end with a UTC offset (TS_OFFSET_RE; null: False).
    Every value ending `Z`, `z` or `+hh:mm` (as nearly every log writes
    them) is told from its last bytes; the expression is run only when some
    value does not (it costs three times the rest of typing a time)."""
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        offsets, data = text_offsets_and_bytes(values)
        valid = valid_rows(values) if values.null_count else slice(None)
        ends = offsets[1:][valid]
        lengths = ends - offsets[:-1][valid]
        if data is not None and len(lengths) and (lengths >= 6).all():
            if values.null_count or (lengths != lengths[0]).any():
                def back(k: int) -> np.ndarray:
                    return data[ends - k]
            else:  # every time as long: the bytes as a matrix, a row a time
                width = int(lengths[0])
                rows = data[offsets[0]:offsets[-1]].reshape(len(values), width)

                def back(k: int) -> np.ndarray:
                    return rows[:, width - k]
            digits = [(back(k) - ord("0")).astype(np.uint8, copy=False) < 10 for k in (5, 4, 2, 1)]
            zone = (back(1) == ord("Z")) | (back(1) == ord("z")) | (
                ((back(6) == ord("+")) | (back(6) == ord("-"))) & (back(3) == ord(":"))
                & digits[0] & digits[1] & digits[2] & digits[3])
            if zone.all():
                with_offset = np.zeros(len(values), dtype=bool)
                with_offset[valid] = True
                return pa.array(with_offset)
    return pc.fill_null(pc.match_substring_regex(values, TS_OFFSET_RE), False)


def coerce(raw: RawLog, place: Placement | None = None,
           assume_offset: str | None = None) -> CoercedLog:
    """Typed events and quarantined rows of one file (see module docstring),
    or of one slice of it, typed into `place` when given; a time without a
    UTC offset read as `assume_offset` when given."""
    notes: dict = {}
    table = raw.table
    n = table.num_rows
    problems = Problems(n)
    problems.add_rows(raw.cell_problems)
    present = set(table.column_names)
    cols: dict[str, pa.Array] = {}
    texts: dict[str, TextColumn] = {}
    for name, kind in schema.COLUMNS:
        col = table.column(name) if name in present else None
        if kind == "int":
            cols[name] = _int_column(name, col, problems, n,
                                     None if place is None else place.slot(name, n))
        elif kind == "amount":
            cols[name] = _amount_column(col, problems, n)
        elif kind == "ts":
            cols[name] = _ts_column(col, problems, n, None if place is None
                                    else place.slot(name, n, EVENT_SCHEMA.field(name).type),
                                    assume_offset, notes)
        else:
            texts[name] = _text(col, n)
    validate_rows(cols, texts, problems, n)

    # Text columns dictionary-encoded: a file's events take a fraction of the
    # memory until all files are ordered.
    arrays = [texts[name].array() if name in texts else cols[name]
              for name in schema.COLUMN_NAMES]
    names = list(schema.COLUMN_NAMES)
    for name in table.column_names:
        if name not in schema.COLUMN_KINDS and name not in RESERVED_COLUMNS:
            arrays.append(_as_text(table.column(name)))
            names.append(name)
    # One file name for every row: dictionary-encoded, not repeated n times.
    arrays.append(pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)),
                                                 pa.array([raw.path], pa.string())))
    arrays.append(pa.array(raw.lines.astype(np.int64, copy=False)) if place is None
                  else place.lines(n))  # (no copy)
    names += ["source_file", "source_line"]
    typed = pa.table(arrays, names=names)

    quarantine = quarantine_frame(raw, table, problems, cols, texts)
    keep = ~problems.bad
    events = typed if keep.all() else typed.filter(pa.array(keep))
    return CoercedLog(events=events, quarantine=quarantine,
                      rows_read=n + len(raw.rejected.lines),
                      recorded=_spec_events(texts["event"].values, texts["event"].codes),
                      assumed=notes.get("assumed", 0))


def recorded_events(events: pa.Table) -> frozenset[str]:
    """The event types of the spec that some row of typed `events` (or a
    slice of them) names: what `coerce` says its rows record when none is
    quarantined."""
    held: frozenset[str] = frozenset()
    for chunk in events.column("event").chunks:
        if pa.types.is_dictionary(chunk.type):
            held |= _spec_events(chunk.dictionary, _codes(chunk.indices, len(chunk.dictionary)))
        else:
            held |= _spec_events(chunk, None)
    return held


def _spec_events(values: pa.Array, codes: np.ndarray | None) -> frozenset[str]:
    """The spec's event types among `values` that some row's code names
    (`codes`: each row's, len(values) for none; None: every value is a
    row's)."""
    if codes is None:
        held = pc.unique(values).drop_null().to_pylist()
    else:
        counts = np.bincount(codes, minlength=len(values) + 1)
        held = values.take(pa.array(np.flatnonzero(counts[:len(values)]))).to_pylist()
    return frozenset(held) & frozenset(schema.EVENTS)
