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
        raw = read_log(path)
        coerced = coerce(raw)
        tables.append(coerced.events)
        quarantines.append(coerced.quarantine)
        inputs.append(InputFile(str(path), raw.sha256, raw.fmt, coerced.rows_read,
                                coerced.events.num_rows, len(coerced.quarantine)))
    events = order_events(pa.concat_tables(tables, promote_options="default"))
    quarantine = pd.concat(quarantines, ignore_index=True)
    return LoadedLogs(events, quarantine, inputs)


#: Columns held as pandas categoricals: few distinct values, compared often.
CATEGORICAL = ("table_id", "event", "actor_role", "actor_id", "player_id", "dice", "bet",
               "outcome", "reason", "flags", "source_file")
NULLABLE_INT = ("seq", "seat", "die1", "die2", "total", "source_line")


def order_events(table: pa.Table) -> pd.DataFrame:
    """Group by table and order by seq; rows with the same seq keep input
    order, so a repeated seq replays in the order recorded. `source_order`
    keeps the input (file, line) order for checks that need it."""
    n = table.num_rows
    table = table.append_column("source_order", pa.array(np.arange(n, dtype=np.int64)))
    order = pc.sort_indices(table, sort_keys=[("table_id", "ascending"), ("seq", "ascending"),
                                              ("source_order", "ascending")])
    table = table.take(order)
    columns = {}
    for name in table.column_names:
        col = table.column(name)
        if name in CATEGORICAL:
            columns[name] = pd.Categorical(col.dictionary_encode().to_pandas())
        elif name in NULLABLE_INT:
            columns[name] = col.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
        elif pa.types.is_string(col.type):
            columns[name] = pd.Series(col.to_numpy(zero_copy_only=False), dtype=object)
        else:
            columns[name] = col.to_pandas()
    events = pd.DataFrame(columns)
    events["event"] = events["event"].cat.set_categories(list(schema.EVENTS))
    events["actor_role"] = events["actor_role"].cat.set_categories(list(schema.ROLES))
    return events
