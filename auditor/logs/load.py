"""Read every input file and gather the events of all of them, grouped by
table and ordered by `seq` whatever the file order.

The result keeps the count that makes the audit trustworthy: for every file,
rows read = rows replayed + rows quarantined.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.compat import datetimes_in_zone, set_madvise_hugepage
from auditor.errors import LogFileError
from auditor.logs import schema
from auditor.logs.arrays import raw_values, valid_rows, where_valid
from auditor.logs.coerce import Placement, coerce
from auditor.logs.discover import discover_logs
from auditor.logs.raw import DEFAULT_READ, RawLog, RawRejected, ReadOptions
from auditor.logs.read import read_log
from auditor.logs.site import with_site


@dataclass(frozen=True)
class InputFile:
    """Provenance of one input: what a report must say about where it stood."""

    path: str
    sha256: str
    format: str
    rows_read: int
    rows_replayed: int
    rows_quarantined: int
    #: The file's columns as read, and the event types its rows name: what
    #: the audit could judge in it (`auditor.audit.coverage`).
    columns: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    #: How the file was read when not as the spec says (`ReadOptions`): the
    #: text encoding it was decoded from, the UTC offset its times without
    #: one were read as (only when some time had none).
    encoding: str | None = None
    assumed_offset: str | None = None
    #: what reading it assumed (a Parquet time without a zone read as UTC)
    notes: tuple[str, ...] = ()
    #: the site the file's path gave it (`--site-from-path`), so that
    #: `auditor verify` keys its tables as the audit did
    site: str | None = None

    def as_dict(self) -> dict:
        """What the provenance says of the file: the counts, the spec's
        columns it lacks, how it was read and what reading it assumed, each
        only when there is any (so every other report's bytes stay as they
        were)."""
        out = {k: getattr(self, k) for k in
               ("path", "sha256", "format", "rows_read", "rows_replayed", "rows_quarantined")}
        absent = [c for c in schema.COLUMN_NAMES if c not in self.columns]
        if absent:
            out["columns_absent"] = absent
        for k in ("encoding", "assumed_offset", "site"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass
class LoadedLogs:
    events: pd.DataFrame
    quarantine: pd.DataFrame
    inputs: list[InputFile]
    #: How the files were read (`--encoding`, `--assume-offset`).
    read: ReadOptions = DEFAULT_READ

    @property
    def rows_read(self) -> int:
        return sum(f.rows_read for f in self.inputs)

    @property
    def rows_replayed(self) -> int:
        return sum(f.rows_replayed for f in self.inputs)

    @property
    def rows_quarantined(self) -> int:
        return sum(f.rows_quarantined for f in self.inputs)


def load_logs(paths: list[str | Path],
              on_file: Callable[[InputFile], object] | None = None,
              options: ReadOptions = DEFAULT_READ,
              sites: dict[str, str] | None = None,
              labels: dict[str, str] | None = None) -> LoadedLogs:
    """Discover, read and type every log under `paths` (LogFileError on a file
    that cannot be a log), as `options` say. `on_file`, when given, is called
    with each file's InputFile as soon as that file is read and typed (before
    the next is read): what a progress display needs. `sites`: each file's
    site (by `str(file)`, `auditor.logs.site.path_sites`), when known.
    `labels` maps a file path (as found) to the name it goes by in the
    reports (`load_file`): how `auditor verify` reads logs that have moved
    since the audit."""
    files = discover_logs(paths)
    use_lean_memory_pool()
    tables, quarantines, inputs = [], [], []
    for path in files:
        label = (labels or {}).get(str(path))
        events, quarantine, loaded = load_file(path, label, options=options,
                                               site=(sites or {}).get(str(path)))
        tables.append(events)
        quarantines.append(quarantine)
        inputs.append(loaded)
        if on_file is not None:
            on_file(loaded)
    events = order_events(tables)  # empties `tables`: freed as the frame is built
    release_memory()
    quarantine = pd.concat(quarantines, ignore_index=True)
    return LoadedLogs(events, quarantine, inputs, options)


@contextmanager
def small_pages() -> Iterator[None]:
    """Numpy arrays of 4 MB or more allocated without numpy's `madvise`
    asking for transparent huge pages (the documented knob the environment
    variable NUMPY_MADVISE_HUGEPAGE sets: when it is set, its choice stands).
    Reading and typing a log (`load_file`, `order_events`, whichever engine
    calls them) touch a few GB of fresh memory once, and a fresh huge page
    was found to cost far more kernel time to fault in than its 512 small
    pages (10M events: the int columns 1.3 s with huge pages, 0.3 s
    without). Process-wide while it lasts; put back afterwards."""
    previous = None if "NUMPY_MADVISE_HUGEPAGE" in os.environ else set_madvise_hugepage(False)
    if previous is None:  # the environment's choice, or numpy's knob is gone
        yield
        return
    try:
        yield
    finally:
        set_madvise_hugepage(previous)


def release_memory() -> None:
    """Hand the memory Arrow freed back to the system. Its allocator keeps
    freed blocks for reuse, which after reading a large file can be as much
    again as the data kept (new in pyarrow 13; a no-op before)."""
    release = getattr(pa.default_memory_pool(), "release_unused", None)
    if release is not None:
        release()


def use_lean_memory_pool() -> None:
    """Allocate Arrow memory with jemalloc where the wheel has it and nobody
    chose otherwise (ARROW_DEFAULT_MEMORY_POOL): mimalloc, the default, keeps
    hundreds of MB of freed blocks while a large log is read (a 10M-event
    audit peaked at 2.9 GB with it, 2.5 GB with jemalloc, at the same speed)."""
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL") or \
            pa.default_memory_pool().backend_name != "mimalloc":
        return
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except (NotImplementedError, pa.ArrowNotImplementedError):
        pass


@small_pages()
def load_file(path: Path, label: str | None = None, options: ReadOptions = DEFAULT_READ,
              site: str | None = None) -> tuple[pa.Table, pd.DataFrame, InputFile]:
    """Read and type one file as `options` say: its events (in file order),
    its quarantined rows and its provenance. `label` is the name the file
    goes by in the reports (default: `path` as given), for a file read
    through another path. A file whose every row is quarantined for one
    reason is one problem, not a finding per row: LogFileError. `site`: the
    file's site (its folder's), keying its tables by site
    (`auditor.logs.site`) as does a `site` column of its own."""
    use_lean_memory_pool()
    raw = read_log(path, options)
    release_memory()
    if label is not None:
        raw.path = label
    # Typed a slice at a time: what a slice is checked with is dropped before
    # the next (its text columns come out dictionary-encoded).
    tables, quarantines, rows_read = [], [], 0
    recorded: set[str] = set()
    assumed = 0
    columns = tuple(raw.table.column_names)
    place = Placement(raw.table.num_rows, raw.lines)
    for start, part in _slices(raw, SLICE_ROWS):
        place.start = start
        coerced = coerce(part, place, options.assume_offset)
        tables.append(coerced.events)
        quarantines.append(coerced.quarantine)
        rows_read += coerced.rows_read
        recorded |= coerced.recorded
        assumed += coerced.assumed
        del coerced
        release_memory()
    events = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    quarantine = quarantines[0]
    if len(quarantines) > 1:  # in line order, as one coercion of the file gives
        quarantine = pd.concat([q for q in quarantines if len(q)] or quarantines[:1],
                               ignore_index=True)
        quarantine = quarantine.sort_values("source_line", kind="stable") \
            .reset_index(drop=True)
    if events.num_rows == 0:
        _one_problem(raw.path, quarantine, options)
    events, quarantine = with_site(events, quarantine, site)
    loaded = InputFile(raw.path, raw.sha256, raw.fmt, rows_read, events.num_rows,
                       len(quarantine), columns,
                       tuple(e for e in schema.EVENTS if e in recorded),
                       options.encoding if raw.fmt != "parquet" else None,
                       options.assume_offset if assumed else None, tuple(raw.notes), site)
    return events, quarantine, loaded


#: What to say after the reason every row of a file was quarantined for.
_FILE_FAULT_HINTS = {
    "ts has no UTC offset": "; if the times are local, give their offset: "
                            "--assume-offset +HH:MM",
    "is not UTF-8 text": "; give the file's encoding: --encoding NAME",
}


#: Between two reasons of one quarantined row (a reason may hold "; " too).
_REASONS_SPLIT = re.compile(r"; (?!a cell may hold)")


def _one_problem(path: str, quarantine: pd.DataFrame, options: ReadOptions) -> None:
    """LogFileError when every row of a file (two or more) was quarantined
    for one same reason (each row may have others too): the file, not its
    rows, is at fault, and thousands of `log.malformed` findings would hide
    it (and every rule would see nothing to judge)."""
    if len(quarantine) < 2:
        return
    reasons = quarantine["reason"].astype(str)
    common = None
    for text in reasons.unique().tolist():
        why = {w.split(" (try --encoding")[0] for w in _REASONS_SPLIT.split(text)}
        common = why if common is None else common & why
        if not common:
            return
    reason = min(common)
    hint = next((h for key, h in _FILE_FAULT_HINTS.items() if key in reason), "")
    raise LogFileError(path, f"every row ({len(quarantine):,}) was quarantined for one "
                             f"reason: {reason}{hint}")


#: Rows typed at a time (see `load_file`).
SLICE_ROWS = 1 << 20


def _slices(raw: RawLog, rows: int):
    """The file as read, cut into slices of about `rows` rows (views, not
    copies), each with its first row; the rows the parser rejected go with
    the last slice."""
    n = raw.table.num_rows
    if n <= rows:
        yield 0, raw
        return
    for a, b in _cuts(raw, rows):
        yield a, replace(raw, table=raw.table.slice(a, b - a), lines=raw.lines[a:b],
                      rejected=raw.rejected if b == n else RawRejected(),
                      cell_problems={r - a: why for r, why in raw.cell_problems.items()
                                     if a <= r < b})


def _cuts(raw: RawLog, rows: int) -> list[tuple[int, int]]:
    """Where to cut the file into slices: every `rows` rows; for Parquet, at
    row group ends (whole row groups up to `rows` rows, a larger one cut in
    `rows`), so each column of a slice is one piece as read and typing it
    copies nothing (a slice across two row groups joins its pieces)."""
    n = raw.table.num_rows
    lengths = [len(c) for c in raw.table.column(0).chunks] if raw.table.num_columns else []
    if raw.fmt != "parquet" or len(lengths) < 2 or any(
            [len(c) for c in col.chunks] != lengths for col in raw.table.columns[1:]):
        return [(a, min(a + rows, n)) for a in range(0, n, rows)]
    cuts, a, end = [], 0, 0
    for length in lengths:
        if end + length - a > rows and end > a:  # this group would overflow the slice
            cuts.append((a, end))
            a = end
        end += length
        while end - a > rows:  # a row group longer than a slice
            cuts.append((a, a + rows))
            a += rows
    if end > a:
        cuts.append((a, end))
    return cuts


#: Columns held as pandas categoricals: few distinct values, compared often.
CATEGORICAL = ("table_id", "event", "actor_role", "actor_id", "player_id", "dice", "bet",
               "outcome", "reason", "flags", "source_file")
#: Categoricals whose categories are not the values held: each file's name
#: (even when none of its rows is kept), the fixed vocabularies of events and
#: roles (set after conversion).
FIXED_CATEGORIES = ("source_file", "event", "actor_role")
NULLABLE_INT = ("seq", "seat", "die1", "die2", "total", "source_line")


@small_pages()
def order_events(table: pa.Table | list[pa.Table]) -> pd.DataFrame:
    """Group by table and order by seq; rows with the same seq keep input
    order, so a repeated seq replays in the order recorded. `source_order`
    keeps the input (file, line) order for checks that need it.

    Categorical columns are turned into pandas codes (in the code width
    pandas picks) before the rows are reordered, so reordering moves small
    integers, not strings; a log already in order (one file per table,
    written in seq order) is not reordered at all. A categorical's
    categories are the values its rows hold, in the order they first appear
    (files in order, rows in file order), whatever dictionaries the pieces
    came with. Every column is written once, a piece at a time, straight
    into the array the frame keeps: no whole-column temporaries. Given a
    list of tables (one per file), it joins them and empties the list, so
    each column's Arrow memory is freed as soon as the frame holds it."""
    if isinstance(table, list):
        tables = table
        table = tables[0] if len(tables) == 1 else \
            pa.concat_tables(tables, promote_options="default")
        tables.clear()
    n = table.num_rows
    names = table.column_names
    pending = dict(zip(names, table.columns))
    codes = {name: _categorical(pending[name], name) for name in names if name in CATEGORICAL}
    order = _event_order(table, codes.get("table_id"))
    del table
    columns = {}
    for name in names:
        col = pending.pop(name)
        if name in codes:
            del col  # (its Arrow memory goes now)
            values, dtype, _ = codes.pop(name)
            if order is not None:
                values = values.take(order)
            columns[name] = pd.Series(pd.Categorical.from_codes(values, dtype=dtype,
                                                                validate=False), copy=False)
        elif name in NULLABLE_INT:
            columns[name] = pd.Series(_int64(col, order), copy=False)
        elif pa.types.is_float64(col.type):
            columns[name] = pd.Series(_float64(col, order), copy=False)
        elif _is_utc_timestamp(col.type):
            columns[name] = pd.Series(_timestamps(col, order), copy=False)
        elif pa.types.is_string(col.type):
            if order is not None:
                col = col.take(pa.array(order))
            columns[name] = pd.Series(col.to_numpy(zero_copy_only=False), dtype=object)
        else:
            if order is not None:
                col = col.take(pa.array(order))
            columns[name] = col.to_pandas()
    columns["source_order"] = pd.Series(
        np.arange(n, dtype=np.int64) if order is None else order.astype(np.int64, copy=False),
        copy=False)
    return pd.DataFrame(columns, copy=False)


#: Rows worked on at a time where a whole column would be a large temporary.
BLOCK_ROWS = 1 << 20


def table_runs(events: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The first row, the row after the last, and the table id of each run
    of rows of one table (loaded events hold each table's rows together):
    found on the categorical's codes, not the text, a block at a time. The
    one place table bounds are worked out: the replay, the checks
    (`Shared.table_starts`), the sessions and the engines' cuts read them here."""
    col = events["table_id"]
    codes = np.asarray(col.array.codes) if isinstance(col.dtype, pd.CategoricalDtype) \
        else pd.factorize(col)[0]
    n = len(codes)
    if not n:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), []
    starts = np.concatenate([[0], *(np.flatnonzero(codes[a:b] != codes[a - 1:b - 1]) + a
                                    for a, b in _blocks(1, n))]).astype(np.int64)
    ends = np.append(starts[1:], n)
    return starts, ends, [str(col.iat[a]) for a in starts.tolist()]


def session_starts(table_starts: np.ndarray, opens: np.ndarray) -> np.ndarray:
    """The first row of every table session (ascending): each table's first
    row (`table_starts`, of `table_runs`) and each `table_open` (`opens`,
    their rows), where the replay starts a table afresh."""
    return np.union1d(table_starts, opens).astype(np.int64)


def _blocks(start: int, n: int) -> Iterator[tuple[int, int]]:
    for a in range(start, n, BLOCK_ROWS):
        yield a, min(a + BLOCK_ROWS, n)


def _code_dtype(count: int) -> np.dtype:
    """The code width pandas gives a categorical of `count` categories."""
    for dtype in (np.int8, np.int16, np.int32):
        if count < np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def _dictionary_chunks(col) -> list[pa.DictionaryArray]:
    return [c if pa.types.is_dictionary(c.type) else c.dictionary_encode()
            for c in (col.chunks if isinstance(col, pa.ChunkedArray) else [col])]


def _categorical(col, name: str) -> tuple[np.ndarray, pd.CategoricalDtype, pa.Array]:
    """A text column, plain or dictionary-encoded (one dictionary per chunk,
    with values no row holds, even repeated), as pandas categorical codes
    and dtype (and the categories as Arrow text): the categories are the values held, in the order rows first
    hold them (what pandas gives for the plain text), found by scanning only
    as far as the last of them first appears. `source_file` keeps every
    chunk's values in chunk order (each file's name, even when none of its
    rows is kept); `event` and `actor_role` have the fixed vocabularies of
    the schema (a value outside them is missing)."""
    chunks = _dictionary_chunks(col)
    n = sum(len(c) for c in chunks)
    dictionaries = [c.dictionary if pa.types.is_string(c.dictionary.type)
                    else c.dictionary.cast(pa.string()) for c in chunks]
    # One dictionary for all chunks (equal values of different chunks are
    # one), and each chunk's place in it; -1 for a null value.
    if len(chunks) == 1 and not dictionaries[0].null_count:
        values = dictionaries[0]
        luts = [np.arange(len(values), dtype=np.int64)]
    else:
        encoded = pc.dictionary_encode(pa.concat_arrays(dictionaries) if dictionaries
                                       else pa.array([], pa.string()))
        values = encoded.dictionary
        unified = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
        offsets = np.cumsum([0] + [len(d) for d in dictionaries])
        luts = [unified[offsets[i]:offsets[i + 1]] for i in range(len(chunks))]
    dtype = _code_dtype(len(values))
    codes = np.empty(n, dtype=dtype)
    a = 0
    for chunk, lut in zip(chunks, luts):  # one gather per chunk; a null row -1
        b = a + len(chunk)
        lut = np.append(lut, -1).astype(dtype)  # (the extra -1: a chunk with no values)
        np.take(lut, raw_values(chunk.indices), out=codes[a:b], mode="clip")
        if chunk.null_count:
            where_valid(codes[a:b], valid_rows(chunk), -1, out=codes[a:b])
        a = b
    fixed = {"event": schema.EVENTS, "actor_role": schema.ROLES}.get(name)
    if fixed is not None:
        rank = pc.fill_null(pc.index_in(values, value_set=pa.array(fixed, pa.string())), -1) \
            .to_numpy(zero_copy_only=False)
        codes = _recode(codes, rank, _code_dtype(len(fixed)))
        return codes, pd.CategoricalDtype(list(fixed)), pa.array(fixed, pa.string())
    if name in FIXED_CATEGORIES:  # source_file: every value, held or not
        return codes, _categories(values), values
    held = _held_in_first_seen_order(codes, len(values))
    if len(held) != len(values) or (held != np.arange(len(held))).any():
        rank = np.full(len(values), -1, dtype=np.int64)
        rank[held] = np.arange(len(held))
        codes = _recode(codes, rank, _code_dtype(len(held)))
        values = values.take(pa.array(held))
    return codes, _categories(values), values


def _categories(values: pa.Array) -> pd.CategoricalDtype:
    """The dtype pandas gives an Arrow dictionary of these values."""
    empty = pa.DictionaryArray.from_arrays(pa.array([], pa.int32()), values)
    return empty.to_pandas().dtype


def _recode(codes: np.ndarray, rank: np.ndarray, dtype: np.dtype,
            block: int = BLOCK_ROWS) -> np.ndarray:
    """`codes` (-1 missing) mapped through `rank` (-1 missing) a block at a
    time: in place when the width stays, else into one new array."""
    lut = np.append(rank, -1).astype(dtype)  # codes[-1] -> the last entry: missing
    out = codes if dtype == codes.dtype else np.empty(len(codes), dtype=dtype)
    for a in range(0, len(codes), block):
        out[a:a + block] = lut.take(codes[a:a + block])
    return out


def _held_in_first_seen_order(codes: np.ndarray, count: int,
                              block: int = BLOCK_ROWS) -> np.ndarray:
    """The codes (0 to count-1; -1 missing) rows hold, in the order rows
    first hold them: read in growing blocks until every code is met, often
    within the first few thousand rows (a pass first counting which codes
    are held, to stop at the last, cost more than it saved: a log of many
    tables, players or dice meets its last ones near its end anyway)."""
    found = np.zeros(count + 1, dtype=bool)  # the last: -1, a missing row
    found[count] = True
    order, a, step, wanted = [], 0, 4096, count
    while wanted and a < len(codes):
        new = pd.unique(codes[a:a + step])
        new = new[~found[new]]
        if len(new):
            found[new] = True
            order.append(new)
            wanted -= len(new)
        a += step
        step = min(step * 2, block)
    return np.concatenate(order).astype(np.int64) if order else np.zeros(0, dtype=np.int64)


def _int64(col, order: np.ndarray | None) -> pd.arrays.IntegerArray:
    """An int64 column as pandas Int64: over the column's own memory where it
    can be (see `_numbers`), else each chunk copied once into the array the
    frame keeps (pandas' own conversion copies twice)."""
    return pd.arrays.IntegerArray(*_numbers(col, np.int64, order), copy=False)


def _float64(col, order: np.ndarray | None) -> np.ndarray:
    """A float64 column as pandas holds it, NaN where null (as `to_pandas`
    gives it), written under the nulls of the column's own memory where
    `_numbers` gives that (10M events: no 76 MB copy)."""
    return _filled(col, np.float64, order, np.nan)


def _is_utc_timestamp(arrow_type: pa.DataType) -> bool:
    return pa.types.is_timestamp(arrow_type) and arrow_type.tz in ("UTC", "+00:00")


def _timestamps(col, order: np.ndarray | None):
    """A UTC timestamp column as `to_pandas` gives it (its unit, its time
    zone, NaT where null), its values copied at most once: `to_pandas`
    joins the pieces, then copies them again to attach the time zone
    (0.2 to 0.5 s for the `ts` of 10M events; over the values as read, 4 ms)."""
    values = _filled(col, np.int64, order, np.iinfo(np.int64).min)  # (NaT)
    dtype = pa.array([], col.type).to_pandas().dtype
    return datetimes_in_zone(values.view(f"M8[{col.type.unit}]"), dtype)


def _filled(col, dtype, order: np.ndarray | None, missing_value) -> np.ndarray:
    """`_numbers`' values with `missing_value` written under the nulls."""
    values, missing = _numbers(col, dtype, order)
    if missing.any():
        values[missing] = missing_value
    return values


def _numbers(col, dtype, order: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The values (anything where null) and the nulls of an int64 or float64
    column, in `order` when given. The values are the column's own memory
    when it holds them end to end and in order (a Parquet column as read,
    typed slice by slice without a row set aside): 10M events are 76 MB a
    column not copied, nor faulted in afresh; else each chunk is copied once.
    A null row's value is the caller's to write (Arrow leaves it undefined:
    `_filled` writes NaN or NaT there); no valid value of the column is ever
    changed."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    n = sum(len(c) for c in chunks)
    dtype = np.dtype(dtype)
    arrow_type = pa.from_numpy_dtype(dtype)
    chunks = [c if c.type == arrow_type else c.cast(arrow_type) for c in chunks]
    values = None if order is not None else _in_place(chunks, dtype)
    if values is None:
        values = np.empty(n, dtype=dtype)
        a = 0
        for chunk in chunks:
            b = a + len(chunk)
            values[a:b] = raw_values(chunk, dtype)
            a = b
    missing = np.zeros(n, dtype=bool)
    a = 0
    for chunk in chunks:
        b = a + len(chunk)
        if chunk.null_count:
            np.logical_not(valid_rows(chunk), out=missing[a:b])
        a = b
    if order is not None:
        values, missing = values.take(order), missing.take(order)
    return values, missing


def _in_place(chunks: list[pa.Array], dtype: np.dtype) -> np.ndarray | None:
    """The chunks' values as one writable numpy array over their own memory
    (which the array keeps alive), when they lie end to end in one mutable
    buffer; else None."""
    if not chunks:
        return None
    first = chunks[0].buffers()[1]
    if first is None or not first.is_mutable:
        return None
    end = chunks[0].offset
    for chunk in chunks:
        buf = chunk.buffers()[1]
        if buf is None or buf.address != first.address or chunk.offset != end:
            return None
        end += len(chunk)
    start = chunks[0].offset
    return np.frombuffer(first, dtype=dtype, count=end - start, offset=start * dtype.itemsize)


def _flat(col) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        if not col.num_chunks:
            return pa.array([], col.type)
        if col.num_chunks == 1:
            return col.chunk(0)
        try:
            return col.combine_chunks()
        except pa.ArrowNotImplementedError:  # an older Arrow: dictionaries not unified
            return pa.chunked_array([c.dictionary_decode() for c in col.chunks]).combine_chunks()
    return col


def _event_order(table: pa.Table, table_ids: tuple | None) -> np.ndarray | None:
    """The row order by (table_id, seq, source_order), or None when the rows
    are in that order already. `table_ids`: the table_id column as
    `_categorical` gives it."""
    seq = table.column("seq")
    n = table.num_rows
    codes, _, values = table_ids if table_ids is not None else (None, None, None)
    if codes is None or seq.null_count or n < 2 or (codes < 0).any():
        if codes is None:
            tids = _flat(table.column("table_id"))
            if pa.types.is_dictionary(tids.type):
                tids = tids.dictionary_decode()
        else:
            tids = pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0),
                                                  values).dictionary_decode()
        keys = pa.table({"table_id": tids, "seq": seq,
                         "source_order": pa.array(np.arange(n, dtype=np.int64))})
        order = pc.sort_indices(keys, sort_keys=[("table_id", "ascending"),
                                                 ("seq", "ascending"),
                                                 ("source_order", "ascending")])
        return order.to_numpy().astype(np.int64)
    # Rank of each distinct table id in the order Arrow sorts text in.
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[pc.sort_indices(values).to_numpy()] = np.arange(len(ranks))
    if _in_order(ranks, codes, seq):
        return None
    rank = ranks[codes]
    seqs = _flat(seq).to_numpy(zero_copy_only=False)
    return np.lexsort((np.arange(len(rank)), seqs, rank))


def _in_order(ranks: np.ndarray, codes: np.ndarray, seq: pa.ChunkedArray,
              block: int = 1 << 20) -> bool:
    """Whether the rows (table rank `ranks[codes]`, `seq`, no nulls) are in
    (table, seq) order: a block of rows at a time, so a large log is checked
    without temporaries as long as itself. Codes are compared as they are
    when they rank as they are (table ids first met in sorted order), and
    `seq` is read in place when it lies in one piece of memory."""
    n = len(codes)
    same = (ranks == np.arange(len(ranks))).all()
    whole = _in_place(seq.chunks, np.dtype(np.int64)) if seq.type == pa.int64() else None
    for a in range(0, n, block):
        lo = max(a - 1, 0)  # one row of overlap with the block before
        rank = codes[lo:a + block] if same else ranks[codes[lo:a + block]]
        seqs = whole[lo:a + block] if whole is not None else \
            _flat(seq.slice(lo, a + block - lo)).to_numpy(zero_copy_only=False)
        step_rank, step_seq = rank[1:] - rank[:-1], seqs[1:] >= seqs[:-1]
        if not ((step_rank > 0) | ((step_rank == 0) & step_seq)).all():
            return False
    return True
