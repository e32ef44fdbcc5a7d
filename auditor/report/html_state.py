"""The game as the auditor derived it just before a listed finding's row:
what the HTML report shows beside the rows around it, so a reader sees why
the row is a breach without replaying the log in their head.

Taken where the events and the replay's state are (`auditor.run.collect`),
for the findings the page lists only, and by numpy over all of them at once:

- the shooter, point and line bettors are the replay's dense state at the
  row (`auditor.game.state`); how the shooter got the dice is the row where
  the replay's shooter last changed, and the offer to that seat before it;
- the last valid roll is the replay's last decided roll before the row
  (`roll_counted_total`, less one voided before the row), and what it
  decided follows from `auditor.game.outcomes`;
- the seat's wagers and where each die is are not kept by the replay past
  its loop, so they come from the log rows of the session before the row:
  a wager counts from its `wager_placed` until a `win`/`lose` settlement or a
  `wager_removed` of its bet (a travelled `come_6` settles a `come`); a die
  is where the last custody event naming it put it.

Every value is plain text; the page escapes it as it escapes the log's cells.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from auditor.checks.common import expand
from auditor.game.inputs import coded, serials, values_and_nulls
from auditor.game.outcomes import POINTS, pass_outcome
from auditor.game.state import ReplayState

#: Where the custody event naming a die leaves it (`{seat}`: the row's seat).
DIE_PLACES = {
    "dice_received": "at the table, received",
    "dice_to_bowl": "in the bowl",
    "dice_offered": "offered to seat {seat}",
    "dice_selected": "with the shooter, seat {seat}",
    "dice_collected": "collected by the {role}",
    "dice_to_shooter": "passed to the shooter, seat {seat}",
    "roll": "on the layout, thrown",
    "die_off_table": "off the table",
    "die_retrieved": "retrieved, back at the table",
    "die_lost": "lost",
    "dice_removed": "removed from the table",
}
REMOVED = "dice_removed"
#: removed dice named one by one up to this many; more are counted
MAX_REMOVED_NAMED = 12
#: What a wager row does to the count of a seat's wagers of its bet.
WAGER_EVENTS = ("wager_placed", "wager_removed", "wager_settled")


@dataclass(frozen=True)
class GameAt:
    """The game just before one finding's row, each part as text."""

    shooter: str
    phase: str
    seat: str  # the finding's seat ("" when it names none)
    wagers: str
    line_bet: str
    dice: tuple[str, ...]
    last_roll: str


def game_states(events: pd.DataFrame, state: ReplayState, positions: np.ndarray,
                seats: np.ndarray, runs) -> list[GameAt | None]:
    """The game before each row at `positions` (-1: no row, None), for a
    finding naming `seats` (0: none); `runs`: the events' `table_runs`."""
    positions = np.asarray(positions, dtype=np.int64)
    at = np.flatnonzero(positions >= 0)
    out: list[GameAt | None] = [None] * len(positions)
    if not len(at) or not len(events):
        return out
    rows = positions[at]
    seat = np.asarray(seats, dtype=np.int64)[at]
    log = _Log(events, runs, rows)
    shooter = np.asarray(state["shooter"][rows], dtype=np.int64)
    point = np.asarray(state["point"][rows], dtype=np.int64)
    bettors = np.asarray(state["line_bettors"][rows], dtype=np.int64)
    how = _how_shooter(log, state, rows, shooter)
    wagers = _wagers(log, rows, seat)
    dice = _dice(log, rows)
    rolls = _last_rolls(log, state, rows)
    for j, i in enumerate(at.tolist()):
        s = int(seat[j])
        holds = 0 < s < 63 and (int(bettors[j]) >> s) & 1  # (seat bits: 1..62)
        out[i] = GameAt(
            shooter=how[j],
            phase="come-out" if not point[j] else f"point {int(point[j])}",
            seat=str(s) if s else "",
            wagers=wagers[j] if s else "",
            line_bet=("" if not s else "holds a Pass or Don't Pass bet" if holds
                      else "holds no Pass or Don't Pass bet"),
            dice=dice[j], last_roll=rolls[j])
    return out


class _Log:
    """The columns of the events read here, as numbers: event names and
    seats per row, each row's table and session (a `table_open` starts one),
    and the session of the state before each finding's row."""

    def __init__(self, events: pd.DataFrame, runs, rows: np.ndarray):
        starts, ends, _ = runs
        self.events = events
        codes, names = coded(events["event"])
        self.event_codes, self.event_names = codes, names
        seat, no_seat = values_and_nulls(events["seat"])
        self.seat = _PerRow(lambda r: np.where(no_seat[r], 0, seat[r]).astype(np.int64)
                            if no_seat is not None else seat[r].astype(np.int64))
        self.seq = events["seq"].to_numpy(dtype=np.int64, na_value=-1)
        self.role_codes, self.role_names = coded(events["actor_role"], missing="(no role recorded)")
        self.table = _PerRow(lambda r: np.searchsorted(starts, r, side="right") - 1)
        self.opens = self.rows_of(("table_open",))
        # a row's session: the table_opens at or before it (the table tells
        # sessions of different tables apart); the state before a row is that
        # of the session the row before it was in
        self.session = _PerRow(lambda r: np.searchsorted(self.opens, r, side="right"))
        self.asked = rows
        self.asked_session = np.searchsorted(self.opens, rows, side="left")
        self.asked_table = self.table[rows]

    def asked_rows(self, rows: np.ndarray) -> np.ndarray:
        """Those of `rows` (ascending) that some finding's state is read
        from: in its session, before its row."""
        keys = _session_keys(self.asked_table, self.asked_session)
        sessions, at = np.unique(keys, return_inverse=True)
        last = np.zeros(len(sessions), dtype=np.int64)
        np.maximum.at(last, at, self.asked)
        rows = rows[rows < last.max()]
        own = _session_keys(self.table[rows], self.session[rows])
        k = np.minimum(np.searchsorted(sessions, own), len(sessions) - 1)
        return rows[(sessions[k] == own) & (rows < last[k])]

    def rows_of(self, names: tuple[str, ...]) -> np.ndarray:
        wanted = np.array([n in names for n in self.event_names], dtype=bool)
        return np.flatnonzero(wanted[self.event_codes])

    def is_event(self, rows: np.ndarray, name: str) -> np.ndarray:
        return np.array([n == name for n in self.event_names], dtype=bool)[self.event_codes[rows]]

    def event(self, row: int) -> str:
        return str(self.event_names[self.event_codes[row]])

    def where(self, row: int) -> str:
        """`event at seq N` of a row, as the page names it."""
        return f"{self.event(row)} at seq {self.seq[row]}"


def _coded_at(column: pd.Series, rows: np.ndarray) -> tuple[np.ndarray, list]:
    """`coded` of the column at `rows` (a categorical's codes read there,
    not a copy of the rows made first)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy()[rows], [*column.cat.categories, None]
    return coded(column.iloc[rows])


class _PerRow:
    """A per-row column worked out for the rows asked only (`column[rows]`):
    the state is read from a few rows of millions."""

    def __init__(self, at):
        self.at = at

    def __getitem__(self, rows):
        return self.at(np.asarray(rows, dtype=np.int64))


class _Groups:
    """Entries (event rows) in groups (integer keys), sorted by group then
    row, to find a group's last entry before a given row: one binary search
    for every question at once."""

    def __init__(self, group: np.ndarray, rows: np.ndarray, n: int):
        # rows ascend: a stable sort by group keeps them so within a group
        self.order = np.argsort(group, kind="stable")
        group = group[self.order]
        first = np.r_[True, group[1:] != group[:-1]] if len(group) else np.empty(0, bool)
        self.keys = group[first]
        self.gid = np.cumsum(first) - 1
        self.width = np.int64(n + 1)
        self.rows = rows[self.order]
        self.combined = self.gid * self.width + self.rows

    def ids(self, keys: np.ndarray) -> np.ndarray:
        """The group of each key (-1: no entry has it)."""
        if not len(self.keys):
            return np.full(len(keys), -1, dtype=np.int64)
        k = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        return np.where(self.keys[k] == keys, k, -1)

    def within(self, lo_keys: np.ndarray, hi_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every (question, group) pair whose group key is in [lo, hi) of
        that question: the questions' positions and the groups."""
        lo = np.searchsorted(self.keys, lo_keys, side="left")
        hi = np.searchsorted(self.keys, hi_keys, side="left")
        return expand(lo, hi - lo)

    def last_before(self, gid: np.ndarray, before: np.ndarray) -> np.ndarray:
        """For each group, the position (in the sorted entries) of its last
        entry at a row below `before` (-1: none)."""
        if not len(self.rows):
            return np.full(len(gid), -1, dtype=np.int64)
        at = np.searchsorted(self.combined, np.maximum(gid, 0) * self.width + before,
                             side="left") - 1
        ok = (gid >= 0) & (at >= 0)
        ok &= self.gid[np.maximum(at, 0)] == gid
        return np.where(ok, at, -1)


#: bits of a group key: table, session (each below 2**21), then what is grouped
TABLE_SHIFT, SESSION_SHIFT = 42, 21


def _session_keys(table: np.ndarray, session: np.ndarray) -> np.ndarray:
    return (table.astype(np.int64) << TABLE_SHIFT) | (session.astype(np.int64) << SESSION_SHIFT)


# --- the shooter ---------------------------------------------------------------------------


def _how_shooter(log: _Log, state: ReplayState, rows: np.ndarray,
                 shooter: np.ndarray) -> list[str]:
    """The shooter and the row that made them so (or took the dice away):
    the row before the one where the replay's shooter last changed, in the
    same table; for a shooter, the last offer to their seat before it."""
    steps = state["shooter"]
    values = np.asarray(steps.values, dtype=np.int64)
    change_rows = np.asarray(steps.starts, dtype=np.int64)[
        np.flatnonzero(np.r_[True, values[1:] != values[:-1]])]
    made = change_rows[np.searchsorted(change_rows, rows, side="right") - 1] - 1
    in_table = (made >= 0) & (log.table[np.maximum(made, 0)] == log.table[rows])
    offers = log.asked_rows(log.rows_of(("dice_offered",)))
    groups = _Groups(_session_keys(log.table[offers], log.session[offers]) | log.seat[offers],
                     offers, len(log.events))
    m = np.maximum(made, 0)
    offered = groups.last_before(
        groups.ids(_session_keys(log.table[m], log.session[m]) | shooter), m)
    out = []
    for j in range(len(rows)):
        s, row = int(shooter[j]), int(made[j])
        if not s:
            out.append(f"no shooter, since {log.where(row)}" if in_table[j] else "no shooter")
        elif not in_table[j]:
            out.append(f"seat {s}")
        else:
            k = int(offered[j])
            offer = f" (offered by the {_role(log, int(groups.rows[k]))} at seq " \
                f"{log.seq[groups.rows[k]]})" if k >= 0 else \
                f" (no offer to seat {s} before it in the session)"
            how = f"accepted the dice at seq {log.seq[row]}" \
                if log.event(row) == "dice_accepted" else f"since {log.where(row)}"
            out.append(f"seat {s}, {how}{offer}")
    return out


def _role(log: _Log, row: int) -> str:
    return str(log.role_names[log.role_codes[row]])


# --- the seat's wagers ---------------------------------------------------------------------

#: bits of a wager group's own part: the seat, then the bet
SEAT_SHIFT = 14
#: seats told apart when picking the asked seats' wagers (a seat is 1..62)
_SEATS = 1 << 10


def _bet_family(name: str) -> str:
    """The bet a wager row counts toward: a travelled `come_6` is a `come`."""
    for family in ("dont_come", "come"):
        tail = name[len(family) + 1:]
        if name.startswith(family + "_") and tail.isdigit():
            return family
    return name


def _wagers(log: _Log, rows: np.ndarray, seat: np.ndarray) -> list[str]:
    """Each finding's seat's wagers placed and not yet settled (win or lose)
    or removed, from its session's rows before the finding's: `pass, come x2`."""
    w = log.rows_of(WAGER_EVENTS)
    # only the wagers of the seats the findings name, in their tables
    pair = log.table[w] * _SEATS + np.clip(log.seat[w], 0, _SEATS - 1)
    asked_pairs = np.unique(log.asked_table * _SEATS + np.clip(seat, 0, _SEATS - 1))
    k = np.minimum(np.searchsorted(asked_pairs, pair), len(asked_pairs) - 1)
    w = log.asked_rows(w[asked_pairs[k] == pair])
    bet_codes, bet_names = _coded_at(log.events["bet"], w)
    families = sorted({_bet_family(str(b)) for b in bet_names[:-1]})
    number = {f: i for i, f in enumerate(families)}
    family_of = np.array([number[_bet_family(str(b))] for b in bet_names[:-1]] + [-1],
                         dtype=np.int64)
    fam = family_of[bet_codes]
    outcome_codes, outcomes = _coded_at(log.events["outcome"], w)
    decided = np.array([o in ("win", "lose") for o in outcomes], dtype=bool)[outcome_codes]
    delta = np.where(log.is_event(w, "wager_placed"), 1, -1)
    delta[log.is_event(w, "wager_settled") & ~decided] = 0  # a push leaves the wager standing
    keep = (fam >= 0) & (delta != 0) & (log.seat[w] > 0)
    w, fam, delta = w[keep], fam[keep], delta[keep]
    own = (log.seat[w] << SEAT_SHIFT) | fam
    groups = _Groups(_session_keys(log.table[w], log.session[w]) | own, w, len(log.events))
    walk = pd.Series(delta[groups.order]).groupby(groups.gid).cumsum().to_numpy()
    held = walk - np.minimum(pd.Series(walk).groupby(groups.gid).cummin().to_numpy(), 0)
    base = _session_keys(log.asked_table, log.asked_session) | (seat << SEAT_SHIFT)
    asked, gid = groups.within(base, base + (1 << SEAT_SHIFT))
    at = groups.last_before(gid, rows[asked])
    count = np.where(at >= 0, held[np.maximum(at, 0)], 0) if len(at) else at
    names: list[list[str]] = [[] for _ in rows]
    for j, g, c in zip(asked.tolist(), gid.tolist(), count.tolist()):
        if c > 0:  # (no group holds seat 0: the finding names no seat)
            name = families[int(groups.keys[g]) & ((1 << SEAT_SHIFT) - 1)]
            names[j].append(name if c == 1 else f"{name} \u00d7{c}")
    return [", ".join(n) or "none" for n in names]


# --- the dice ------------------------------------------------------------------------------


def _dice(log: _Log, rows: np.ndarray) -> list[tuple[str, ...]]:
    """Where each die of the session is before each finding's row: the place
    the last custody event naming it put it in (dice removed from the table
    on one line)."""
    custody = log.asked_rows(log.rows_of(tuple(DIE_PLACES)))
    dice_codes, texts = _coded_at(log.events["dice"], custody)
    # only the texts these rows hold are split (a column's categories may be many more)
    used = np.unique(dice_codes[dice_codes >= 0])
    named = [()] * len(texts)
    for c in used.tolist():
        named[c] = serials(texts[c])
    distinct = sorted({x for d in named for x in d}, key=_natural)
    number = {x: i for i, x in enumerate(distinct)}
    sizes = np.array([len(d) for d in named], dtype=np.int64)
    flat = np.array([number[x] for d in named for x in d], dtype=np.int64)
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    serial = flat[expand(offsets[dice_codes], sizes[dice_codes])[1]]
    entry_rows = np.repeat(custody, sizes[dice_codes])
    groups = _Groups(_session_keys(log.table[entry_rows], log.session[entry_rows]) | serial,
                     entry_rows, len(log.events))
    base = _session_keys(log.asked_table, log.asked_session)
    asked, gid = groups.within(base, base + (1 << SESSION_SHIFT))
    at = groups.last_before(gid, rows[asked])
    found = at >= 0
    asked, gid, at = asked[found], gid[found], at[found]
    gone = log.is_event(groups.rows[at], REMOVED)
    # a long session removes hundreds of dice: those are counted, and named
    # only where few
    gone_count = np.bincount(asked[gone], minlength=len(rows))
    named_gone = gone & (gone_count[asked] <= MAX_REMOVED_NAMED)
    places: list[list[str]] = [[] for _ in rows]
    removed: list[list[str]] = [[] for _ in rows]
    said: dict[int, str] = {}  # each entry's text, once (findings share them)
    keep = np.flatnonzero(~gone | named_gone)
    for j, g, a, out in zip(asked[keep].tolist(), gid[keep].tolist(), at[keep].tolist(),
                            gone[keep].tolist()):
        die = distinct[int(groups.keys[g]) & ((1 << SESSION_SHIFT) - 1)]
        if out:
            removed[j].append(die)
            continue
        if a not in said:
            row = int(groups.rows[a])
            said[a] = DIE_PLACES[log.event(row)].format(
                seat=log.seat[row] or "(none recorded)", role=_role(log, row)) + \
                f" ({log.where(row)})"
        places[j].append(f"{die}: {said[a]}")
    return [tuple(p + ([f"removed from the table: {', '.join(r)}"] if r else
                       [f"removed from the table: {c} dice"] if c else []))
            for p, r, c in zip(places, removed, gone_count.tolist())]


def _natural(serial: str) -> tuple:
    from auditor.report.html_events import natural_key

    return natural_key(serial)


# --- the last valid roll -------------------------------------------------------------------


def _last_rolls(log: _Log, state: ReplayState, rows: np.ndarray) -> list[str]:
    """The last roll of the session before each finding's row that the
    replay counted and had not voided by then, its total and what it decided."""
    rolled, totals = state.written("roll_counted_total")
    rolled, totals = np.asarray(rolled, dtype=np.int64), np.asarray(totals, dtype=np.int64)
    voided_rows, voided_by = state.written("roll_voided")
    never = np.iinfo(np.int64).max
    void_at = np.full(len(rolled), never)
    void_at[np.searchsorted(rolled, voided_rows)] = voided_by
    # A no roll voids only the last roll: the last roll before the row, or
    # when that was voided before the row, the last one never voided.
    last = np.searchsorted(rolled, rows, side="left") - 1
    kept = np.maximum.accumulate(np.where(void_at == never, np.arange(len(rolled)), -1)) \
        if len(rolled) else np.empty(0, dtype=np.int64)
    at = np.maximum(last, 0)
    pick = np.where((last >= 0) & (void_at[at] < rows), kept[at], last) if len(rolled) \
        else last
    roll_row = rolled[np.maximum(pick, 0)] if len(rolled) else np.zeros(len(rows), np.int64)
    same = (pick >= 0) & (log.table[roll_row] == log.table[rows]) & \
        (log.session[roll_row] == log.asked_session)
    points = np.asarray(state["point"][roll_row], dtype=np.int64)
    out = []
    for j in range(len(rows)):
        if not same[j]:
            out.append("none in this session before this row")
            continue
        r, total, point = int(roll_row[j]), int(totals[pick[j]]), int(points[j])
        out.append(f"seq {log.seq[r]}, total {total}"
                   f"{' on the come-out' if not point else f' with the point at {point}'}"
                   f": {decided(point, total)}")
    return out


def decided(point: int, total: int) -> str:
    """What a valid roll of `total` with the table at `point` (0: come-out)
    decided for the line bets, in words."""
    result = pass_outcome(point, total)
    if not point:
        if result == "win":
            return "a natural: Pass wins, Don't Pass loses"
        if result == "lose":
            return "craps: Pass loses"
        return f"the point is set at {total}" if total in POINTS else "no decision"
    if result == "win":
        return "the point is made: Pass wins, Don't Pass loses"
    if result == "lose":
        return "seven out: Pass loses, Don't Pass wins"
    return "no line decision"
