"""Table identity: one table id held by two files that both record one seq of
it is two tables (two casinos both calling a table `T01`, each counting from
seq 1), or one file given twice. Merged, their events would replay as one
impossible table and report thousands of false findings, so the audit
stops instead.

A table legitimately split across files holds each seq in one file only:
consecutive seq ranges (one file per hour), or rows dealt out over many
files (each file every 200th row). It is one table, audited whole.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from auditor.errors import AuditorError
from auditor.logs.arrays import category_codes
from auditor.logs.site import shown_table


class TableIdentityError(AuditorError):
    """Two files hold one table id and a seq of it each."""

    def __init__(self, table: str, first: tuple[str, int, int],
                 second: tuple[str, int, int]):
        self.table, self.first, self.second = table, first, second
        self.files = (first[0], second[0])
        super().__init__(
            f"table {shown_table(table)} is in both {first[0]} (seq {first[1]}-{first[2]}) "
            f"and {second[0]} (seq {second[1]}-{second[2]}), which both hold one seq of it: "
            "two tables with one id, or a file given twice (audit them apart, or give "
            "each casino's exports a site: --site-from-path or a `site` column)")

    def __reduce__(self):  # raised on a dask worker, read on the client
        return (TableIdentityError, (self.table, self.first, self.second))


def overlapping(ranges: Iterable[tuple[str, str, int, int]]) -> list[str]:
    """The tables (sorted) held by two files whose (min seq, max seq)
    overlap: only these can hold one seq twice. `ranges`: (table, file,
    min seq, max seq), one per table and file."""
    by_table: dict[str, list[tuple[int, int]]] = {}
    for table, _, lo, hi in ranges:
        by_table.setdefault(table, []).append((int(lo), int(hi)))
    out = []
    for table in sorted(by_table):
        spans = sorted(by_table[table])
        reach = spans[0][1]
        for lo, hi in spans[1:]:
            if lo <= reach:
                out.append(table)
                break
            reach = max(reach, hi)
    return out


def check_events(events: pd.DataFrame) -> None:
    """TableIdentityError when loaded events (grouped by table, ordered by
    seq) hold one seq of one table from two files: the first such table by
    id, and of it the two files holding its lowest such seq (in file
    order), each with its seq range. One pass of comparisons of neighbours."""
    if len(events) < 2 or "source_file" not in events:
        return
    tables, files = _codes(events["table_id"]), _codes(events["source_file"])
    seq = events["seq"].to_numpy(dtype=np.int64, na_value=-1)
    twice = np.flatnonzero((tables[1:] == tables[:-1]) & (seq[1:] == seq[:-1])
                           & (files[1:] != files[:-1]))
    if not len(twice):
        return
    names = events["table_id"]
    at = {}
    for k in twice.tolist():  # the first (lowest seq) of each table
        at.setdefault(str(names.iat[k]), k)
    table = min(at)
    k = at[table]
    pair = sorted((int(files[k]), int(files[k + 1])))
    rows = np.flatnonzero(tables == tables[k])
    spans = []
    for code in pair:
        own = seq[rows[files[rows] == code]]
        where = rows[files[rows] == code][0]
        spans.append((str(events["source_file"].iat[where]), int(own.min()), int(own.max())))
    raise TableIdentityError(table, spans[0], spans[1])


def _codes(column: pd.Series) -> np.ndarray:
    if isinstance(column.dtype, pd.CategoricalDtype):
        return category_codes(column)
    return pd.factorize(column)[0]
