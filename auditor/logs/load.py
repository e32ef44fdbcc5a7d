"""Read every input file and gather the events of all of them, grouped by
table and ordered by `seq` whatever the file order.

The result keeps the count that makes the audit trustworthy: for every file,
rows read = rows replayed + rows quarantined.
"""

from __future__ import annotations

import os
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


def load_logs(paths: list[str | Path]) -> LoadedLogs:
    """Discover, read and type every log under `paths` (LogFileError on a file
    that cannot be a log)."""
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
    # Typed a slice at a time: the text a slice is checked as is dropped
    # before the next, and what is kept is dictionary-encoded.
    tables, quarantines, rows_read = [], [], 0
    for part in _slices(raw, SLICE_ROWS):
        coerced = coerce(part)
        tables.append(_encoded(coerced.events))
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


def _encoded(table: pa.Table) -> pa.Table:
    """The text columns held as categoricals dictionary-encoded: a file's
    events then take a fraction of the memory until all files are ordered."""
    for i, name in enumerate(table.column_names):
        if name in CATEGORICAL and not pa.types.is_dictionary(table.column(i).type):
            table = table.set_column(i, name, table.column(i).dictionary_encode())
    return table


#: Columns held as pandas categoricals: few distinct values, compared often.
CATEGORICAL = ("table_id", "event", "actor_role", "actor_id", "player_id", "dice", "bet",
               "outcome", "reason", "flags", "source_file")
NULLABLE_INT = ("seq", "seat", "die1", "die2", "total", "source_line")


def order_events(table: pa.Table | list[pa.Table]) -> pd.DataFrame:
    """Group by table and order by seq; rows with the same seq keep input
    order, so a repeated seq replays in the order recorded. `source_order`
    keeps the input (file, line) order for checks that need it.

    Text columns held as categoricals are dictionary-encoded before the rows
    are reordered, so reordering moves small integer codes, not strings; a
    log already in order (one file per table, written in seq order) is not
    reordered at all. Given a list of tables (one per file), it joins them
    and empties the list, so each column's Arrow memory is freed as soon as
    the frame holds it."""
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
            pending[name] = _flat(pending[name]).dictionary_encode()
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
        elif name in NULLABLE_INT:
            columns[name] = col.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
        elif pa.types.is_string(col.type):
            columns[name] = pd.Series(col.to_numpy(zero_copy_only=False), dtype=object)
        else:
            columns[name] = col.to_pandas()
    events = pd.DataFrame(columns, copy=False)
    events["event"] = events["event"].cat.set_categories(list(schema.EVENTS))
    events["actor_role"] = events["actor_role"].cat.set_categories(list(schema.ROLES))
    return events


def _flat(col) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        if not col.num_chunks:
            return pa.array([], col.type)
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
    rank = ranks[table_ids.indices.to_numpy(zero_copy_only=False)]
    seqs = _flat(seq).to_numpy(zero_copy_only=False)
    step_rank, step_seq = rank[1:] - rank[:-1], seqs[1:] >= seqs[:-1]
    if ((step_rank > 0) | ((step_rank == 0) & step_seq)).all():
        return None
    return np.lexsort((np.arange(len(rank)), seqs, rank))
