"""The events frame: the typed Arrow tables of every file joined, grouped by
table and ordered by `seq` (`order_events`), each column written once into
the array the pandas frame keeps: categoricals as codes, nullable integers,
floats and UTC times over the column's own memory where it can be.

Its own module because building the frame is the loader's largest and most
memory-careful part, apart from reading the files (`auditor.logs.load`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.compat import datetimes_in_zone
from auditor.logs import schema
from auditor.logs.arrays import BLOCK_ROWS, raw_values, valid_rows, where_valid
from auditor.logs.memory import small_pages

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
        if (lut == np.arange(len(lut))).all():
            # The chunk's own dictionary is the start of the whole one (the
            # first chunk, a file's first row group): its indices are the
            # codes, cast (a tenth of a gather's cost, which first widens
            # every index to 64 bits); what a null row holds is overwritten.
            np.copyto(codes[a:b], raw_values(chunk.indices), casting="unsafe")
        else:
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
    `_numbers` gives that (no copy of the column)."""
    return _filled(col, np.float64, order, np.nan)


def _is_utc_timestamp(arrow_type: pa.DataType) -> bool:
    return pa.types.is_timestamp(arrow_type) and arrow_type.tz in ("UTC", "+00:00")


def _timestamps(col, order: np.ndarray | None):
    """A UTC timestamp column as `to_pandas` gives it (its unit, its time
    zone, NaT where null), its values copied at most once: `to_pandas`
    joins the pieces, then copies them again to attach the time zone."""
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
    typed slice by slice without a row set aside): a column not copied, nor
    faulted in afresh; else each chunk is copied once.
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
    (table, seq) order: a block of rows of a chunk at a time, so a large log
    is checked without temporaries as long as itself, and `seq` is read over
    each chunk's own memory (not joined first: a batch of files is a chunk
    a file). Codes are compared as they are when they rank as they are
    (table ids first met in sorted order)."""
    same = (ranks == np.arange(len(ranks))).all()
    a, before = 0, None  # the first row of a block, and (rank, seq) of the row before it
    for chunk in (seq.chunks if isinstance(seq, pa.ChunkedArray) else [seq]):
        values = raw_values(chunk) if chunk.type == pa.int64() \
            else chunk.to_numpy(zero_copy_only=False)
        for b in range(0, len(values), block):
            seqs = values[b:b + block]
            rank = codes[a:a + len(seqs)] if same else ranks[codes[a:a + len(seqs)]]
            a += len(seqs)
            if before is not None and not _follows(before, int(rank[0]), int(seqs[0])):
                return False
            step_rank, step_seq = rank[1:] - rank[:-1], seqs[1:] >= seqs[:-1]
            if not ((step_rank > 0) | ((step_rank == 0) & step_seq)).all():
                return False
            before = int(rank[-1]), int(seqs[-1])
    return True


def _follows(before: tuple[int, int], rank: int, seq: int) -> bool:
    """Whether a row of table rank `rank` and `seq` may come after one of
    (rank, seq) `before` in (table, seq) order."""
    return rank > before[0] or (rank == before[0] and seq >= before[1])
