"""Read every input file and gather the events of all of them, grouped by
table and ordered by `seq` whatever the file order.

The result keeps the count that makes the audit trustworthy: for every file,
rows read = rows replayed + rows quarantined.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.logs import schema
from auditor.logs.coerce import coerce
from auditor.logs.reader import LogFileError, RawLog, RawRejected, discover, read_log


@dataclass(frozen=True)
class InputFile:
    """Provenance of one input: what a report must say about where it stood."""

    path: str
    sha256: str
    format: str
    rows_read: int
    rows_replayed: int
    rows_quarantined: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class LoadedLogs:
    events: pd.DataFrame
    quarantine: pd.DataFrame
    inputs: list[InputFile]

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
              on_file: Callable[[InputFile], object] | None = None) -> LoadedLogs:
    """Discover, read and type every log under `paths` (LogFileError on a file
    that cannot be a log). `on_file`, when given, is called with each file's
    InputFile as soon as that file is read and typed (before the next is
    read): what a progress display needs."""
    files = discover(paths)
    if not files:
        raise LogFileError(", ".join(map(str, paths)), "no log files found "
                           "(.csv, .jsonl, .ndjson, .parquet, optionally .gz)")
    use_lean_memory_pool()
    tables, quarantines, inputs = [], [], []
    for path in files:
        events, quarantine, loaded = load_file(path)
        tables.append(events)
        quarantines.append(quarantine)
        inputs.append(loaded)
        if on_file is not None:
            on_file(loaded)
    events = order_events(tables)  # empties `tables`: freed as the frame is built
    release_memory()
    quarantine = pd.concat(quarantines, ignore_index=True)
    return LoadedLogs(events, quarantine, inputs)


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


def load_file(path: Path, label: str | None = None
              ) -> tuple[pa.Table, pd.DataFrame, InputFile]:
    """Read and type one file: its events (in file order), its quarantined
    rows and its provenance. `label` is the name the file goes by in the
    reports (default: `path` as given), for a file read through another path."""
    use_lean_memory_pool()
    raw = read_log(path)
    release_memory()
    if label is not None:
        raw.path = label
    # Typed a slice at a time: what a slice is checked with is dropped before
    # the next (its text columns come out dictionary-encoded).
    tables, quarantines, rows_read = [], [], 0
    for part in _slices(raw, SLICE_ROWS):
        coerced = coerce(part)
        tables.append(coerced.events)
        quarantines.append(coerced.quarantine)
        rows_read += coerced.rows_read
        del coerced
        release_memory()
    events = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    quarantine = quarantines[0]
    if len(quarantines) > 1:  # in line order, as one coercion of the file gives
        quarantine = pd.concat([q for q in quarantines if len(q)] or quarantines[:1],
                               ignore_index=True)
        quarantine = quarantine.sort_values("source_line", kind="stable") \
            .reset_index(drop=True)
    loaded = InputFile(raw.path, raw.sha256, raw.fmt, rows_read, events.num_rows,
                       len(quarantine))
    return events, quarantine, loaded


#: Rows typed at a time (see `load_file`).
SLICE_ROWS = 1 << 20


def _slices(raw: RawLog, rows: int):
    """The file as read, cut into slices of `rows` rows (views, not copies);
    the rows the parser rejected go with the last slice."""
    n = raw.table.num_rows
    if n <= rows:
        yield raw
        return
    for a in range(0, n, rows):
        b = min(a + rows, n)
        yield replace(raw, table=raw.table.slice(a, b - a), lines=raw.lines[a:b],
                      rejected=raw.rejected if b == n else RawRejected(),
                      cell_problems={r - a: why for r, why in raw.cell_problems.items()
                                     if a <= r < b})


#: Columns held as pandas categoricals: few distinct values, compared often.
CATEGORICAL = ("table_id", "event", "actor_role", "actor_id", "player_id", "dice", "bet",
               "outcome", "reason", "flags", "source_file")
#: Categoricals whose categories are not the values held: each file's name
#: (even when none of its rows is kept), the fixed vocabularies of events and
#: roles (set after conversion).
FIXED_CATEGORIES = ("source_file", "event", "actor_role")
NULLABLE_INT = ("seq", "seat", "die1", "die2", "total", "source_line")


def order_events(table: pa.Table | list[pa.Table]) -> pd.DataFrame:
    """Group by table and order by seq; rows with the same seq keep input
    order, so a repeated seq replays in the order recorded. `source_order`
    keeps the input (file, line) order for checks that need it.

    Text columns held as categoricals are dictionary-encoded before the rows
    are reordered, so reordering moves small integer codes, not strings; a
    log already in order (one file per table, written in seq order) is not
    reordered at all. A categorical's categories are the values its rows
    hold, in the order they first appear (files in order, rows in file
    order), whatever dictionaries the pieces came with. Given a list of
    tables (one per file), it joins them and empties the list, so each
    column's Arrow memory is freed as soon as the frame holds it."""
    if isinstance(table, list):
        tables = table
        table = tables[0] if len(tables) == 1 else \
            pa.concat_tables(tables, promote_options="default")
        tables.clear()
    n = table.num_rows
    table = table.append_column("source_order", pa.array(np.arange(n, dtype=np.int64)))
    names = table.column_names
    pending = dict(zip(names, table.columns))
    for name in names:
        if name in CATEGORICAL:
            pending[name] = _first_seen(pending[name], held_only=name not in FIXED_CATEGORIES)
    order = _event_order(table, pending.get("table_id"))
    del table
    take = None if order is None else pa.array(order)
    columns = {}
    for name in names:
        col = pending.pop(name)
        if take is not None:
            col = col.take(take)
        if name in CATEGORICAL:
            columns[name] = pd.Categorical(col.to_pandas())
        elif name in NULLABLE_INT:  # (one piece: pandas would join the pieces, a copy)
            columns[name] = _flat(col).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
        elif pa.types.is_string(col.type):
            columns[name] = pd.Series(col.to_numpy(zero_copy_only=False), dtype=object)
        else:
            columns[name] = col.to_pandas()
    events = pd.DataFrame(columns, copy=False)
    events["event"] = events["event"].cat.set_categories(list(schema.EVENTS))
    events["actor_role"] = events["actor_role"].cat.set_categories(list(schema.ROLES))
    return events


def _first_seen(col, held_only: bool = True) -> pa.DictionaryArray:
    """A text column, plain or dictionary-encoded (one dictionary per chunk,
    with values no row holds, even repeated), as one dictionary array whose
    dictionary is the values held, in the order rows first hold them: what
    dictionary-encoding the plain text would give, without building it.
    With `held_only` False, the dictionary is every chunk's values in chunk
    order (`source_file`: each file's name, even when none of its rows is
    kept)."""
    chunks = [c if pa.types.is_dictionary(c.type) else c.dictionary_encode()
              for c in (col.chunks if isinstance(col, pa.ChunkedArray) else [col])]
    if not chunks:  # (every row of a lone file filtered out)
        return pa.array([], pa.string()).dictionary_encode()
    if len(chunks) == 1 and chunks[0].type.index_type == pa.int32() \
            and pa.types.is_string(chunks[0].type.value_type):
        chunk = chunks[0]
        if not held_only:
            return chunk
        held = pc.unique(chunk.indices).drop_null().to_numpy(zero_copy_only=False)
        if len(held) == len(chunk.dictionary) and \
                (held == np.arange(len(held), dtype=held.dtype)).all():
            return chunk  # (a single file, nothing quarantined: nearly always)
    # One dictionary for all chunks: equal values of different chunks are one.
    offsets = np.cumsum([0] + [len(c.dictionary) for c in chunks])
    encoded = pc.dictionary_encode(pa.concat_arrays([c.dictionary.cast(pa.string())
                                                    for c in chunks]))
    unified = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
    values = encoded.dictionary
    # Per chunk, its dictionary's place in the final one: the values held, by
    # the first row holding them (a value first held in an earlier chunk
    # comes first; within a chunk, in the chunk's own first-seen order).
    if held_only:
        seen = [unified[offsets[i]:offsets[i + 1]][
                    pc.unique(c.indices).drop_null().to_numpy(zero_copy_only=False)]
                for i, c in enumerate(chunks)]
        held = pd.unique(np.concatenate(seen))
        held = held[held >= 0]
        rank = np.full(len(values) + 1, -1, dtype=np.int64)  # the last: a null value
        rank[held] = np.arange(len(held))
        values = values.take(pa.array(held))
    else:
        rank = np.append(np.arange(len(values)), -1)
    parts = []
    for i, chunk in enumerate(chunks):  # one gather per chunk; a null stays null
        lut = rank[unified[offsets[i]:offsets[i + 1]]]
        parts.append(pc.take(pa.array(lut.astype(np.int32), mask=lut < 0),
                             chunk.indices.cast(pa.int32())))
    indices = parts[0] if len(parts) == 1 else pa.concat_arrays(parts)
    return pa.DictionaryArray.from_arrays(indices, values)


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


def _event_order(table: pa.Table, table_ids: pa.DictionaryArray | None) -> np.ndarray | None:
    """The row order by (table_id, seq, source_order), or None when the rows
    are in that order already."""
    seq = table.column("seq")
    if table_ids is None or table_ids.null_count or seq.null_count or table.num_rows < 2:
        tids = _flat(table.column("table_id"))
        if pa.types.is_dictionary(tids.type):
            tids = tids.dictionary_decode()
        keys = pa.table({"table_id": tids, "seq": seq,
                         "source_order": table.column("source_order")})
        order = pc.sort_indices(keys, sort_keys=[("table_id", "ascending"),
                                                 ("seq", "ascending"),
                                                 ("source_order", "ascending")])
        return order.to_numpy()
    # Rank of each distinct table id in the order Arrow sorts text in.
    ranks = np.empty(len(table_ids.dictionary), dtype=np.int64)
    ranks[pc.sort_indices(table_ids.dictionary).to_numpy()] = np.arange(len(ranks))
    if _in_order(ranks, table_ids.indices, seq):
        return None
    rank = ranks[table_ids.indices.to_numpy(zero_copy_only=False)]
    seqs = _flat(seq).to_numpy(zero_copy_only=False)
    return np.lexsort((np.arange(len(rank)), seqs, rank))


def _in_order(ranks: np.ndarray, indices: pa.Array, seq: pa.ChunkedArray,
              block: int = 1 << 20) -> bool:
    """Whether the rows (table rank `ranks[indices]`, `seq`, no nulls) are in
    (table, seq) order: a block of rows at a time, so a large log is checked
    without temporaries as long as itself."""
    n = len(indices)
    for a in range(0, n, block):
        lo = max(a - 1, 0)  # one row of overlap with the block before
        rank = ranks[indices.slice(lo, a + block - lo).to_numpy(zero_copy_only=False)]
        seqs = _flat(seq.slice(lo, a + block - lo)).to_numpy(zero_copy_only=False)
        step_rank, step_seq = rank[1:] - rank[:-1], seqs[1:] >= seqs[:-1]
        if not ((step_rank > 0) | ((step_rank == 0) & step_seq)).all():
            return False
    return True
