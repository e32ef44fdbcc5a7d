"""Table identity: one table id held by two files whose seq ranges overlap is
two tables (two casinos both calling a table `T01`), or one file given twice.
Merged, their events would replay as one impossible table and report
thousands of false findings, so the audit stops instead.

A table legitimately split across files (one file per hour) holds
consecutive seq ranges: it is one table, audited whole.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from auditor.errors import AuditorError
from auditor.logs.site import shown_table


class TableIdentityError(AuditorError):
    """Two files hold one table id in overlapping seq ranges."""

    def __init__(self, table: str, first: tuple[str, int, int],
                 second: tuple[str, int, int]):
        self.table, self.files = table, (first[0], second[0])
        super().__init__(
            f"table {shown_table(table)} is in both {first[0]} (seq {first[1]}-{first[2]}) "
            f"and {second[0]} (seq {second[1]}-{second[2]}), whose seq ranges overlap: "
            "two tables with one id, or a file given twice (audit them apart, or give "
            "each casino's exports a site: --site-from-path or a `site` column)")


def check_ranges(ranges: Iterable[tuple[str, str, int, int]], file_order: list[str]) -> None:
    """TableIdentityError for the first table (by id) held by two files whose
    (min seq, max seq) overlap, naming the first such pair in file order.
    `ranges`: (table, file, min seq, max seq), one per table and file."""
    by_table: dict[str, list[tuple[int, int, str]]] = {}
    position = {f: i for i, f in enumerate(file_order)}
    for table, file, lo, hi in ranges:
        by_table.setdefault(table, []).append((int(lo), int(hi), file))
    for table in sorted(by_table):
        spans = by_table[table]
        if len(spans) < 2:
            continue
        spans.sort(key=lambda s: position.get(s[2], len(position)))
        for j, (lo, hi, file) in enumerate(spans):
            for lo0, hi0, file0 in spans[:j]:
                if lo <= hi0 and lo0 <= hi:
                    raise TableIdentityError(table, (file0, lo0, hi0), (file, lo, hi))


def check_events(events: pd.DataFrame) -> None:
    """`check_ranges` over loaded events (grouped by table, ordered by seq).
    Cheap where each table lies in one file: only the tables whose rows come
    from more than one file are looked at further."""
    n = len(events)
    if n < 2 or "source_file" not in events:
        return
    tables, files = _codes(events["table_id"]), _codes(events["source_file"])
    crossing = (tables[1:] == tables[:-1]) & (files[1:] != files[:-1])
    if not crossing.any():
        return
    shared = np.unique(tables[1:][crossing])
    rows = np.flatnonzero(np.isin(tables, shared))
    seq = events["seq"].array.take(rows)
    frame = pd.DataFrame({"table": events["table_id"].array.take(rows).astype(object),
                          "file": events["source_file"].array.take(rows).astype(object),
                          "seq": seq})
    spans = frame.groupby(["table", "file"], sort=False, observed=True)["seq"].agg(["min", "max"])
    names = events["source_file"]
    order = [str(c) for c in names.cat.categories] \
        if isinstance(names.dtype, pd.CategoricalDtype) else []
    check_ranges(((str(t), str(f), lo, hi) for (t, f), lo, hi
                  in zip(spans.index, spans["min"], spans["max"])), order)


def _codes(column: pd.Series) -> np.ndarray:
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy()
    return pd.factorize(column)[0]
