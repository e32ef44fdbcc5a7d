"""Read every input file and gather the events of all of them, grouped by
table and ordered by `seq` whatever the file order.

The result keeps the count that makes the audit trustworthy: for every file,
rows read = rows replayed + rows quarantined.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.logs import schema
from auditor.logs.coerce import coerce
from auditor.logs.reader import LogFileError, discover, read_log


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
    tables, quarantines, inputs = [], [], []
    for path in files:
        events, quarantine, loaded = load_file(path)
        tables.append(events)
        quarantines.append(quarantine)
        inputs.append(loaded)
    events = order_events(pa.concat_tables(tables, promote_options="default"))
    quarantine = pd.concat(quarantines, ignore_index=True)
    return LoadedLogs(events, quarantine, inputs)


def load_file(path: Path, label: str | None = None
              ) -> tuple[pa.Table, pd.DataFrame, InputFile]:
    """Read and type one file: its events (in file order), its quarantined
    rows and its provenance. `label` is the name the file goes by in the
    reports (default: `path` as given), for a file read through another path."""
    raw = read_log(path)
    if label is not None:
        raw.path = label
    coerced = coerce(raw)
    loaded = InputFile(raw.path, raw.sha256, raw.fmt, coerced.rows_read,
                       coerced.events.num_rows, len(coerced.quarantine))
    return coerced.events, coerced.quarantine, loaded


#: Columns held as pandas categoricals: few distinct values, compared often.
CATEGORICAL = ("table_id", "event", "actor_role", "actor_id", "player_id", "dice", "bet",
               "outcome", "reason", "flags", "source_file")
NULLABLE_INT = ("seq", "seat", "die1", "die2", "total", "source_line")


def order_events(table: pa.Table) -> pd.DataFrame:
    """Group by table and order by seq; rows with the same seq keep input
    order, so a repeated seq replays in the order recorded. `source_order`
    keeps the input (file, line) order for checks that need it.

    Text columns held as categoricals are dictionary-encoded before the rows
    are reordered, so reordering moves small integer codes, not strings; a
    log already in order (one file per table, written in seq order) is not
    reordered at all."""
    n = table.num_rows
    table = table.append_column("source_order", pa.array(np.arange(n, dtype=np.int64)))
    encoded = {name: _flat(table.column(name)).dictionary_encode()
               for name in table.column_names if name in CATEGORICAL}
    order = _event_order(table, encoded.get("table_id"))
    take = None if order is None else pa.array(order)
    columns = {}
    for name in table.column_names:
        col = encoded[name] if name in encoded else table.column(name)
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
        order = pc.sort_indices(table, sort_keys=[("table_id", "ascending"),
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
