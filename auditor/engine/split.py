"""Cutting loaded logs into groups of whole tables, so each group can be
audited on its own (another process, another machine) and the findings merged.

A table is never split: the replay needs all of a table's events in order.
Quarantined rows go with the group holding their table, so `log.sequence_gap`
sees them; those naming no table the logs replay go to the first group, so
each `log.malformed` finding is made exactly once.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pandas as pd

from auditor.logs.load import LoadedLogs


def table_runs(events: pd.DataFrame) -> list[tuple[str, int, int]]:
    """(table id, first row, row after the last) of each table's run of rows
    (the events are grouped by table)."""
    if not len(events):
        return []
    col = events["table_id"]
    codes = col.cat.codes.to_numpy() if isinstance(col.dtype, pd.CategoricalDtype) \
        else pd.factorize(col)[0]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    ends = np.r_[starts[1:], len(codes)]
    return [(str(col.iat[a]), int(a), int(b)) for a, b in zip(starts, ends)]


def balance(sizes: dict[str, int], groups: int) -> list[list[str]]:
    """Tables into at most `groups` groups of about the same number of events:
    the largest table first, each to the lightest group so far. Deterministic;
    every group non-empty."""
    groups = max(1, min(groups, len(sizes)))
    load = [0] * groups
    out: list[list[str]] = [[] for _ in range(groups)]
    for table in sorted(sizes, key=lambda t: (-sizes[t], t)):
        g = min(range(groups), key=lambda j: (load[j], j))
        out[g].append(table)
        load[g] += sizes[table]
    return [sorted(g) for g in out if g]


def contiguous(sizes: list[int], groups: int) -> list[range]:
    """Consecutive runs (their sizes, in row order) cut into at most `groups`
    groups of about the same total, each cut at the run boundary nearest its
    share: a group is then one slice of the rows, which a worker can read
    where they lie instead of a copy. Deterministic; every group non-empty."""
    groups = max(1, min(groups, len(sizes)))
    before = np.concatenate([[0], np.cumsum(sizes)])  # rows before each run
    bounds = [0]
    for g in range(1, groups):
        goal = before[-1] * g / groups
        lo = bounds[-1] + 1  # this group holds at least one run
        hi = len(sizes) - (groups - g)  # and leaves one for each group after it
        bounds.append(min(range(lo, hi + 1), key=lambda i: (abs(before[i] - goal), i)))
    bounds.append(len(sizes))
    return [range(a, b) for a, b in pairwise(bounds)]


def quarantine_groups(quarantine: pd.DataFrame, groups: list[list[str]]) -> list[pd.DataFrame]:
    """The quarantined rows each group of tables gets (see module docstring)."""
    group_of = {t: g for g, tables in enumerate(groups) for t in tables}
    tids = quarantine["table_id"].tolist() if len(quarantine) else []
    owner = np.array([group_of.get(str(t), 0) if t is not None and not pd.isna(t) else 0
                      for t in tids], dtype=np.int64)
    return [quarantine.loc[owner == g].reset_index(drop=True) for g in range(len(groups))]


def split_logs(logs: LoadedLogs, groups: int) -> list[LoadedLogs]:
    """`logs` cut into at most `groups` groups of whole tables of about the
    same size (one group: `logs` itself). Where each table's rows lie
    together (as loading orders them) a group is a slice of the rows, not a
    copy: 10M events are 1.7 GB a copy would fault in afresh."""
    runs = table_runs(logs.events)
    if groups <= 1 or len(runs) <= 1:
        return [logs]
    if len({table for table, _, _ in runs}) == len(runs):  # each table one run
        parts = contiguous([b - a for _, a, b in runs], groups)
        tables = [sorted({runs[i][0] for i in part}) for part in parts]
        quarantines = quarantine_groups(logs.quarantine, tables)
        return [LoadedLogs(logs.events.iloc[runs[part[0]][1]:runs[part[-1]][2]]
                           .reset_index(drop=True), quarantine, logs.inputs)
                for part, quarantine in zip(parts, quarantines)]
    sizes: dict[str, int] = {}
    where: dict[str, list[tuple[int, int]]] = {}
    for table, a, b in runs:
        sizes[table] = sizes.get(table, 0) + b - a
        where.setdefault(table, []).append((a, b))
    tables = balance(sizes, groups)
    quarantines = quarantine_groups(logs.quarantine, tables)
    out = []
    for group, quarantine in zip(tables, quarantines):
        rows = np.concatenate([np.arange(a, b) for t in group for a, b in where[t]])
        rows.sort()
        events = logs.events.iloc[rows].reset_index(drop=True)
        out.append(LoadedLogs(events, quarantine, logs.inputs))
    return out
