"""Exposure: the valid rolls each table session dealt and each staff member
dealt them on duty, taken where the events and their replay are (issue 29).

A count of findings means little without the play it was found in: a casino
dealing ten times the rolls shows ten times the findings. The replay already
knows which rolls were valid (decided, never voided); this module counts
them per table session and per staff duty, and keeps who was on duty in which
role from when to when, so that a finding can be laid at the staff member on
duty (`auditor.audit.responsible`) and every count made a rate
(`auditor.report.rollups`). It is an engine collector (`auditor.audit.collect`):
it runs once per batch of tables, where the events are, and what it keeps is
small (a row per session and per duty), never the events.

A staff member is on duty from their `staff_on` to their `staff_off` (same
id) or the session's end, in the role their `staff_on` recorded. A
`staff_on` without an id names nobody and gives no duty.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from auditor.audit.collect import spilled
from auditor.checks.common import Shared
from auditor.game.state import ReplayState
from auditor.logs.tables import session_starts, table_runs

#: A session: its table key, first and last seq, whether it starts with a
#: `table_open`, the times (UTC, µs) of its first and last rows, its first
#: row's file, its valid rolls.
SESSION_COLUMNS = ("table", "first_seq", "last_seq", "opened", "open_us", "last_us",
                   "source_file", "rolls")
#: A duty: table key, session first seq, role, staff id, the seqs it lies
#: strictly between (the `staff_on` row's and the `staff_off` row's, or
#: the session's last seq + 1), and the valid rolls in it.
DUTY_COLUMNS = ("table", "first_seq", "role", "staff_id", "on_seq", "off_seq", "rolls")
#: A staff member's valid rolls in a session (every role, overlaps once).
STAFF_COLUMNS = ("table", "first_seq", "staff_id", "rolls")


def _empty(columns) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


@dataclass
class Exposure:
    """What the audit dealt: sessions, duties, each staff member's rolls."""

    sessions: pd.DataFrame = field(default_factory=lambda: _empty(SESSION_COLUMNS))
    duties: pd.DataFrame = field(default_factory=lambda: _empty(DUTY_COLUMNS))
    staff: pd.DataFrame = field(default_factory=lambda: _empty(STAFF_COLUMNS))

    @property
    def rolls(self) -> int:
        return int(self.sessions["rolls"].sum()) if len(self.sessions) else 0

    @property
    def period(self) -> tuple[int, int] | None:
        """The first and last event times of the sessions (UTC, µs), or None."""
        if not len(self.sessions):
            return None
        return int(self.sessions["open_us"].min()), int(self.sessions["last_us"].max())

    @property
    def has_staff(self) -> bool:
        """Whether the logs said who was on duty anywhere."""
        return bool(len(self.duties))


def valid_roll_rows(state: ReplayState) -> np.ndarray:
    """The rows of the rolls the replay decided and never voided, ascending."""
    decided = np.asarray(state.rows("roll_counted_total"), dtype=np.int64)
    step = np.diff(decided)
    # (written in row order, a recount's row again right after it: no sort)
    decided = decided[np.r_[True, step != 0]] if len(decided) and (step >= 0).all() \
        else np.unique(decided)
    voided = np.asarray(state.rows("roll_voided"), dtype=np.int64)
    return decided[~np.isin(decided, voided)] if len(voided) else decided


class _SeqAt:
    """`seq[rows]` of the events without copying the whole column."""

    def __init__(self, column: pd.Series):
        self.column = column
        self.n = len(column)

    def __getitem__(self, rows) -> np.ndarray:
        rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
        return self.column.iloc[rows].to_numpy(dtype=np.int64, na_value=-1)

    def __len__(self) -> int:
        return self.n


def _between(rolls: np.ndarray, after: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Per pair, the rolls at rows strictly between `after` and `before`."""
    return np.searchsorted(rolls, before, side="left") - \
        np.searchsorted(rolls, after, side="right")


def exposure_of(events: pd.DataFrame, state: ReplayState) -> Exposure:
    """The exposure of one batch of replayed events."""
    n = len(events)
    if not n:
        return Exposure()
    rolls = valid_roll_rows(state)
    table_starts, table_ends, names = table_runs(events)
    sh = Shared.of(events, state)  # (the rows of each event, as the checks found them)
    opens = sh.event_rows("table_open")
    starts = session_starts(table_starts, opens)
    stops = np.minimum(np.append(starts[1:], n),
                       table_ends[np.searchsorted(table_starts, starts, side="right") - 1])
    table_of = np.searchsorted(table_starts, starts, side="right") - 1
    seq = _SeqAt(events["seq"])
    ts = events["ts"]
    open_us, last_us = (ts.iloc[at].astype("datetime64[us, UTC]").astype("int64").to_numpy()
                        for at in (starts, stops - 1))
    files = events["source_file"].iloc[starts].astype(object).to_numpy()
    session_tables = np.array([names[t] for t in table_of.tolist()], dtype=object)
    sessions = pd.DataFrame({
        "table": session_tables, "first_seq": seq[starts], "last_seq": seq[stops - 1],
        "opened": np.isin(starts, opens), "open_us": open_us, "last_us": last_us,
        "source_file": files,
        "rolls": _between(rolls, starts - 1, stops)})
    duties, staff = _duties(events, sh, seq, rolls, starts, stops, session_tables)
    return Exposure(sessions, duties, staff)


def _duties(events: pd.DataFrame, sh: Shared, seq: np.ndarray, rolls: np.ndarray,
            starts: np.ndarray, stops: np.ndarray, session_tables: np.ndarray):
    """Who was on duty, from when to when, in each session (a pass over the
    staff rows only: a few per session)."""
    event = events["event"]
    staff_rows = sh.event_rows("staff_on", "staff_off")
    if not len(staff_rows):
        return _empty(DUTY_COLUMNS), _empty(STAFF_COLUMNS)
    kinds = event.iloc[staff_rows].astype(object).tolist()
    roles = events["actor_role"].iloc[staff_rows].astype(object).tolist()
    ids = events["actor_id"].iloc[staff_rows].astype(object).tolist()
    session = np.searchsorted(starts, staff_rows, side="right") - 1
    duty: list[tuple[int, str, str, int, int]] = []  # session, role, id, on row, off row
    open_: dict[str, tuple[str, int]] = {}
    current = -1
    for row, s, kind, role, sid in zip(staff_rows.tolist(), session.tolist(), kinds, roles,
                                       ids):
        if s != current:
            for held, (r, on) in open_.items():
                duty.append((current, r, held, on, int(stops[current])))
            open_, current = {}, s
        if not isinstance(sid, str) or not sid:
            continue
        if kind == "staff_on":
            if sid in open_ and open_[sid][0] != role:  # a new role ends the old one
                r, on = open_.pop(sid)
                duty.append((s, r, sid, on, row))
            if isinstance(role, str) and role and sid not in open_:
                open_[sid] = (role, row)
        elif sid in open_:
            r, on = open_.pop(sid)
            duty.append((s, r, sid, on, row))
    for held, (r, on) in open_.items():
        duty.append((current, r, held, on, int(stops[current])))
    which = np.array([d[0] for d in duty], dtype=np.int64)
    on = np.array([d[3] for d in duty], dtype=np.int64)
    off = np.array([d[4] for d in duty], dtype=np.int64)
    ends_session = off >= stops[which]
    off_seq = np.where(ends_session, seq[stops[which] - 1] + 1,
                       seq[np.minimum(off, len(seq) - 1)])
    duties = pd.DataFrame({
        "table": session_tables[which], "first_seq": seq[starts[which]],
        "role": [d[1] for d in duty], "staff_id": [d[2] for d in duty],
        "on_seq": seq[on], "off_seq": off_seq, "rolls": _between(rolls, on, off)})
    duties = duties.sort_values(["table", "first_seq", "on_seq", "staff_id", "role"],
                                kind="stable").reset_index(drop=True)
    return duties, _staff_rolls(duty, rolls, seq[starts], session_tables)


def _staff_rolls(duty, rolls, first_seqs, session_tables) -> pd.DataFrame:
    """Each staff member's valid rolls per session: their duties' rows
    joined, so a member on in two roles at once is counted once a roll."""
    spans: dict[tuple[int, str], list[tuple[int, int]]] = {}
    for s, _role, sid, on, off in duty:
        spans.setdefault((s, sid), []).append((on, off))
    rows = []
    for (s, sid), held in sorted(spans.items()):
        held.sort()
        count, end = 0, -1  # rows before `end` already counted
        for on, off in held:  # rows strictly between `on` and `off`
            lo = max(on, end - 1)
            if off > lo + 1:
                count += int(_between(rolls, np.array([lo]), np.array([off]))[0])
                end = max(end, off)
        rows.append((session_tables[s], int(first_seqs[s]), sid, count))
    return pd.DataFrame(rows, columns=list(STAFF_COLUMNS))


class ExposureCollector:
    """The engines' collector (`auditor.audit.collect`) of the exposure."""

    def take(self, events: pd.DataFrame, findings: pd.DataFrame, state: ReplayState
             ) -> Exposure:
        return exposure_of(events, state)

    def join(self, taken: list[Exposure]) -> Exposure:
        taken = [t for t in taken if t is not None]
        if not taken:
            return Exposure()
        return Exposure(*(pd.concat([getattr(t, name) for t in taken], ignore_index=True)
                          .sort_values(["table", "first_seq"], kind="stable")
                          .reset_index(drop=True)
                          for name in ("sessions", "duties", "staff")))


EXPOSURE = ExposureCollector()


class Paired:
    """Two collectors as one: `take` and `join` give a pair (the exposure
    every audit collects, and a report's own, such as the HTML's)."""

    def __init__(self, first, second):
        self.first, self.second = first, second

    def take(self, events, findings, state):
        return (self.first.take(events, findings, state),
                self.second.take(events, findings, state))

    def join(self, taken: list) -> tuple:
        return (self.first.join([t[0] for t in taken]),
                self.second.join([t[1] for t in taken]))

    def spill(self, taken: tuple, folder: str) -> tuple:
        return (spilled(self.first, taken[0], folder), spilled(self.second, taken[1], folder))


def with_exposure(result, paired: bool):
    """An engine's result whose digest is what `EXPOSURE` (alone, or first of
    a `Paired` with the report's collector) took: the exposure moved to
    `result.exposure`, the report's own digest left as the logs' digest."""
    digest = getattr(result.logs, "digest", None)
    if paired and isinstance(digest, tuple):
        result.exposure, result.logs.digest = digest
    elif not paired and isinstance(digest, Exposure):
        result.exposure = digest
        result.logs.digest = None
    return result
