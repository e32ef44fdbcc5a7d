"""Cutting loaded logs into groups of whole tables, so each group can be
audited on its own (another process, another machine) and the findings merged.

A group holds whole tables: the replay needs a table's events in order.
Quarantined rows go with the group holding their table, so `log.sequence_gap`
sees them; those naming no table the logs replay go to the first group, so
each `log.malformed` finding is made exactly once.

The dask engine also cuts a long-lived table by day (`day_units`), only at
a `table_open`, each unit audited with the rows the checks read across the
cut (`audit_unit`); see the notes above `DayUnit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd

from auditor.audit.core import replay_state, run_checks, stage
from auditor.checks.context import CheckContext
from auditor.checks.registry import Hits, no_hits
from auditor.logs import tables as table_bounds
from auditor.logs.load import LoadedLogs
from auditor.rules.versions import sessions


def table_spans(events: pd.DataFrame) -> list[tuple[str, int, int]]:
    """(table id, first row, row after the last) of each table's run of rows
    (`auditor.logs.tables.table_runs`)."""
    starts, ends, names = table_bounds.table_runs(events)
    return list(zip(names, starts.tolist(), ends.tolist()))


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
    owner = quarantine_owners(quarantine, lambda table: group_of.get(table, 0))
    return [quarantine.loc[owner == g].reset_index(drop=True) for g in range(len(groups))]


def quarantine_owners(quarantine: pd.DataFrame, owner_of) -> np.ndarray:
    """Each quarantined row's owner (a group's position): `owner_of` the
    table it names (as text), the first (0) for a row naming none, so that
    its `log.malformed` finding is made once."""
    tids = quarantine["table_id"].tolist() if len(quarantine) else []
    return np.array([owner_of(str(t)) if t is not None and not pd.isna(t) else 0
                     for t in tids], dtype=np.int64)


def split_tables(logs: LoadedLogs, groups: int) -> list[LoadedLogs]:
    """`logs` cut into at most `groups` groups of whole tables of about the
    same size (one group: `logs` itself). Where each table's rows lie
    together (as loading orders them) a group is a slice of the rows, not a
    copy: 10M events are 1.7 GB a copy would fault in afresh."""
    runs = table_spans(logs.events)
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


# --- one table cut by day (the dask engine's long-lived tables) ----------------------------
#
# The replay starts a table afresh at each `table_open` (`TableReplay.reset`),
# so a run of whole sessions replays the same alone as within its table. The
# checks are what look across a session boundary; for a row r of a unit's own
# sessions they read (auditor/checks):
#
# - the row just before r (`log.sequence_gap`, `log.out_of_order`: seq
#   skipped, repeated, ts going back; the table's first row is exempt);
# - the row just before r in file order, among the table's rows
#   (`log.out_of_order`, "seq lower than the previous row of this table in
#   its file"): any row of the table, however far;
# - the quarantined rows of the table (`log.sequence_gap`: a seq quarantined
#   is not missing), wherever their seq;
# - the row just after its last session (the next unit's `table_open`): a
#   finding's caveat weighs the gaps and quarantined rows of its hand, which
#   ends at the next valid roll, `table_open` or `table_close`, else at the
#   table's end (`auditor.audit.caveat`); a last session with no
#   `table_close` would otherwise run its hand over every later day;
# - nothing else: every other lookup stops at a `table_open` (`noroll.missing`,
#   `noroll.improper`'s roll, `dice.off_table_procedure`'s replacement offer,
#   `call.wrong_total`'s overrule) or reads the replay's state at r.
#
# A unit's task therefore replays and checks its own rows plus that context
# (`DayUnit.rows`): single rows before its first session (harmless there:
# its own first row is a `table_open`, where the replay starts afresh and
# nothing looks back past the rows listed), the next unit's first row and
# whole sessions after its last (each starts with a `table_open`, so no
# lookup bounded by one runs into them). It keeps only findings at its own rows; the findings made of
# quarantined rows (`log.malformed`) are kept by the table's first unit only.


@dataclass(frozen=True)
class DayUnit:
    """Consecutive whole sessions of one table opened on one UTC day: one
    task of the dask engine. Rows are positions in the table's ordered
    events."""

    day: str                 # "YYYY-MM-DD" (UTC) of its first session's opening
    own: range               # the rows it reports findings on
    context: tuple[range, ...] = ()  # rows it reads besides (see the notes above)

    @property
    def rows(self) -> np.ndarray:
        """Every row its task replays and checks, ascending."""
        return np.unique(np.concatenate([np.arange(r.start, r.stop, dtype=np.int64)
                                         for r in (self.own, *self.context)]))

    def events(self, table: pd.DataFrame) -> pd.DataFrame:
        """Its rows of the table's ordered events: what its task audits."""
        return table.iloc[self.rows].reset_index(drop=True)


def day_units(events: pd.DataFrame) -> list[DayUnit]:
    """One table's ordered events cut into `DayUnit`s: its sessions (as a
    ruleset family dates them: `auditor.rules.versions.sessions`, each by
    its first event, in UTC) grouped, in order, by day; a session running
    past midnight stays whole with its day. One unit (no context) when the
    table has a single session or all its sessions open on one day."""
    n = len(events)
    found = sessions(events)
    if not found:
        return [DayUnit("", range(n))]
    cut = [0]
    for k in range(1, len(found)):
        if found[k].day != found[cut[-1]].day:
            cut.append(k)
    if len(cut) == 1:
        return [DayUnit(found[0].day.isoformat(), range(n))]
    context = _Context(events, np.array([s.start for s in found], dtype=np.int64))
    bounds = [*(found[k].start for k in cut), n]
    return [DayUnit(found[k].day.isoformat(), range(a, b), context.of(a, b))
            for k, a, b in zip(cut, bounds, bounds[1:])]


class _Context:
    """What the checks read outside a run of sessions (see the notes above),
    worked out once per table."""

    def __init__(self, events: pd.DataFrame, starts: np.ndarray):
        self.n = len(events)
        self.starts = starts
        by_file = np.argsort(events["source_order"].to_numpy(), kind="stable")
        self.file_before = np.full(self.n, -1, dtype=np.int64)
        self.file_before[by_file[1:]] = by_file[:-1]

    def of(self, a: int, b: int) -> tuple[range, ...]:
        """The context of own rows [a, b): the row before a, the row after
        b (the next session's `table_open`), the rows before its rows in
        file order (single rows when earlier, their whole sessions when
        later)."""
        single = {a - 1} if a else set()
        if b < self.n:
            single.add(b)
        previous = self.file_before[a:b]
        single.update(previous[(previous >= 0) & (previous < a)].tolist())
        later = [range(s, self._session_end(s))
                 for s in sorted({self._session_of(int(r)) for r in previous[previous >= b]})]
        single = {r for r in single if not any(r in whole for whole in later)}
        return (*(range(r, r + 1) for r in sorted(single)), *later)

    def _session_of(self, row: int) -> int:
        return int(self.starts[np.searchsorted(self.starts, row, side="right") - 1])

    def _session_end(self, start: int) -> int:
        k = np.searchsorted(self.starts, start, side="right")
        return int(self.starts[k]) if k < len(self.starts) else self.n


def audit_unit(frame: pd.DataFrame, unit: DayUnit, quarantine: pd.DataFrame, ruleset,
               first: bool, timings: dict[str, float] | None = None) -> list[pd.DataFrame]:
    """The stamped findings of one unit (as `auditor.audit.audit_tables`
    gives them): its events (`unit.events(table)`, own rows and context)
    replayed and checked, the findings at its own rows kept, and those made
    of the table's quarantined rows only by the table's `first` unit."""
    lo = int(np.searchsorted(unit.rows, unit.own.start))
    with stage(timings, "replay"):
        state = replay_state(frame, ruleset)
    with stage(timings, "checks"):
        part = run_checks(CheckContext(frame, state, quarantine), ruleset,
                          keep=lambda hits: _owned(hits, lo, lo + len(unit.own), first))
    return [part] if len(part) else []


def _owned(hits: Hits, lo: int, hi: int, quarantined: bool) -> Hits:
    """The hits at rows [lo, hi); hits located at quarantined rows (not
    events) all or none, as `quarantined` says."""
    if hits.located is not None:
        return hits if quarantined else no_hits()
    keep = np.flatnonzero((hits.rows >= lo) & (hits.rows < hi))
    if len(keep) == len(hits.rows):
        return hits
    return Hits(hits.rows[keep], [hits.messages[i] for i in keep.tolist()],
                [hits.evidence[i] for i in keep.tolist()])
