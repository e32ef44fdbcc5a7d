"""The game as the auditor derived it just before a listed finding's row:
what the HTML report shows beside the rows around it, so a reader sees why
the row is a breach without replaying the log in their head.

Taken where the events and the replay's state are (`auditor.audit.collect`),
for the findings the page lists only, and by numpy over all of them at once:

- the shooter, point and line bettors are the replay's dense state at the
  row (`auditor.game.state`); how the shooter got the dice is the row where
  the replay's shooter last changed, and the offer to that seat before it;
- the last valid roll is the replay's last decided roll before the row
  (`roll_counted_total`, less one voided before the row), and what it
  decided follows from `auditor.game.outcomes`;
- where each die is is the replay's log of the dice's moves
  (`state.dice_moves`): the place its last move in the session put it in,
  and the event that moved it;
- the seat's wagers are not kept by the replay past its loop, so they come
  from the log rows of the session before the row, of the seats asked only:
  a wager counts from its `wager_placed` until a `win`/`lose` settlement or a
  `wager_removed` of its bet (a travelled `come_6` settles a `come`).

Every value is plain text; the page escapes it as it escapes the log's cells.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from auditor.checks.common import BLOCK, Shared, code_is, expand, next_after, searchsorted_ascending
from auditor.game.inputs import coded, values_and_nulls
from auditor.game.outcomes import POINTS, pass_outcome
from auditor.game.state import DIE_LOCATIONS, ReplayState
from auditor.logs.tables import session_starts

#: Where a die is, by the replay's place of its last move (`DIE_LOCATIONS`);
#: `{seat}`: the seat of the event that moved it.
DIE_PLACES = {
    "new": "at the table, not yet in the bowl",
    "bowl": "in the bowl",
    "offered": "offered to seat {seat}",
    "in_play": "in play",
    "off_table": "off the table",
    "lost": "lost",
    "removed": "removed from the table",
}
#: removed dice named one by one up to this many; more are counted
MAX_REMOVED_NAMED = 12
#: What a wager row does to the count of a seat's wagers of its bet (a
#: settlement neither won nor lost, a push, does nothing).
WAGER_CHANGE = {"wager_placed": 1, "wager_removed": -1, "wager_settled": -1}


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
    log = _Log(events, runs, rows, state)
    shooter = np.asarray(state["shooter"][rows], dtype=np.int64)
    point = np.asarray(state["point"][rows], dtype=np.int64)
    bettors = np.asarray(state["line_bettors"][rows], dtype=np.int64)
    how = _how_shooter(log, state, rows, shooter)
    wagers = _wagers(log, rows, seat)
    dice = _dice(log, state, rows)
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
    and the sessions the findings' states are of."""

    def __init__(self, events: pd.DataFrame, runs, rows: np.ndarray, state=None):
        starts, ends, _ = runs
        self.events = events
        self.n = len(events)
        codes, names = coded(events["event"])
        self.event_codes, self.event_names = codes, names
        self.seat_values, self.no_seat = seat, no_seat = values_and_nulls(events["seat"])
        self.seat = _PerRow(lambda r: np.where(no_seat[r], 0, seat[r]).astype(np.int64)
                            if no_seat is not None else seat[r].astype(np.int64))
        self.seq = events["seq"].to_numpy(dtype=np.int64, na_value=-1)
        self.role_codes, self.role_names = coded(events["actor_role"], missing="(no role recorded)")
        self.table = _PerRow(lambda r: np.searchsorted(starts, r, side="right") - 1)
        self.table_ends = np.asarray(ends, dtype=np.int64)
        # every session's first row (the table bounds' one source, decision 85)
        self.shared = Shared.of(events, state)  # (its rows of each event, as the checks found them)
        self.sessions = session_starts(np.asarray(starts, dtype=np.int64),
                                       self.shared.event_rows("table_open"))
        self.asked_table = self.table[rows]
        # the state before a row is that of the session the row before it
        # was in (the row itself at a table's first row: nothing before it)
        before = self.sessions[np.maximum(np.searchsorted(self.sessions, rows) - 1, 0)]
        since = np.maximum(starts[self.asked_table], before)
        # the sessions asked, each up to its last finding's row
        self.session_starts, self.asked_index = np.unique(since, return_inverse=True)
        self.session_ends = np.zeros(len(self.session_starts), dtype=np.int64)
        np.maximum.at(self.session_ends, self.asked_index, rows)

    def in_asked(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Those of `rows` (ascending) that some finding's state is read
        from (in its session, before its row), and the index of that
        session (`session_starts`)."""
        lo = np.searchsorted(rows, self.session_starts, side="left")
        session, at = expand(lo, np.searchsorted(rows, self.session_ends, side="left") - lo)
        return rows[at], session

    def state_reach(self, rows: np.ndarray) -> np.ndarray:
        """The last row whose state before it a change at each of `rows`
        can be: the next session's first row if a `table_open` of the same
        table (its state is the session before it), else the table's last."""
        return np.minimum(next_after(self.sessions, rows, self.n),
                          self.table_ends[self.table[rows]] - 1)

    def event(self, row: int) -> str:
        return str(self.event_names[self.event_codes[row]])

    def where(self, row: int) -> str:
        """`event at seq N` of a row, as the page names it."""
        return f"{self.event(row)} at seq {self.seq[row]}"


class _PerRow:
    """A per-row column worked out for the rows asked only (`column[rows]`):
    the state is read from a few rows of millions."""

    def __init__(self, at):
        self.at = at

    def __getitem__(self, rows):
        return self.at(np.asarray(rows, dtype=np.int64))


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """`np.argsort(keys, kind="stable")` of keys in [0, 2**32): two passes of
    numpy's radix sort on 16-bit halves, not a merge sort of 64-bit keys."""
    if not len(keys) or keys.min() < 0 or keys.max() >= 1 << 32:
        return np.argsort(keys, kind="stable")
    if keys.max() < 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    return order[np.argsort((keys[order] >> 16).astype(np.uint16), kind="stable")]


#: bits of a group key below the session asked (`_Log.session_starts`)
SESSION_SHIFT = 20


class _Groups:
    """Entries (event rows) in groups (integer keys), sorted by group then
    row, to find a group's last entry before a given row: one binary search
    for every question at once."""

    def __init__(self, group: np.ndarray, rows: np.ndarray, n: int):
        # rows ascend: a stable sort by group keeps them so within a group
        self.order = _stable_order(group)
        group = group[self.order]
        first = np.r_[True, group[1:] != group[:-1]] if len(group) else np.empty(0, bool)
        self.keys = group[first]
        self.firsts = np.flatnonzero(first)  # each group's first sorted entry
        self.gid = np.cumsum(first) - 1
        self.width = np.int64(n + 1)
        self.rows = rows[self.order]
        self.combined = self.gid * self.width + self.rows

    def running_count(self, delta: np.ndarray) -> np.ndarray:
        """Per sorted entry, the sum of its group's `delta` (in entry order)
        up to and with it, never below none: a count taken below zero (a
        wager settled that the log never placed) starts again from zero."""
        delta = delta[self.order]
        walk = np.cumsum(delta)
        first = self.firsts
        walk -= np.repeat(walk[first] - delta[first], np.diff(np.r_[first, len(walk)]))
        if not len(walk) or walk.min() >= 0:
            return walk  # (no count taken below zero: nothing starts again)
        # the running minimum within each group: groups shifted ever lower, so
        # one running minimum over all restarts at each group's first entry
        shift = 2 * (int(np.abs(walk).max()) + 1) if len(walk) else 1
        lowest = np.minimum.accumulate(walk - self.gid * shift) + self.gid * shift
        return walk - np.minimum(lowest, 0)

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


# --- the shooter ---------------------------------------------------------------------------


def _how_shooter(log: _Log, state: ReplayState, rows: np.ndarray,
                 shooter: np.ndarray) -> list[str]:
    """The shooter and the row that made them so (or took the dice away):
    the row before the one where the replay's shooter last changed, in the
    same table; for a shooter, the last offer to their seat before it."""
    change_rows = np.asarray(state["shooter"].starts, dtype=np.int64)  # (its own changes only)
    made = change_rows[np.searchsorted(change_rows, rows, side="right") - 1] - 1
    in_table = (made >= 0) & (log.table[np.maximum(made, 0)] == log.asked_table)
    offers, session = log.in_asked(log.shared.event_rows("dice_offered"))
    groups = _Groups((session << SESSION_SHIFT) | log.seat[offers], offers, log.n)
    m = np.maximum(made, 0)
    in_session = m >= log.session_starts[log.asked_index]
    offered = groups.last_before(
        groups.ids(np.where(in_session, (log.asked_index << SESSION_SHIFT) | shooter, -1)), m)
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

#: seats told apart when picking the asked seats' wagers (a seat is 1..62)
_SEATS = 64


def _bet_family(name: str) -> str:
    """The bet a wager row counts toward: a travelled `come_6` is a `come`."""
    for family in ("dont_come", "come"):
        tail = name[len(family) + 1:]
        if name.startswith(family + "_") and tail.isdigit():
            return family
    return name


def _wagers(log: _Log, rows: np.ndarray, seat: np.ndarray) -> list[str]:
    """Each finding's seat's wagers placed and not yet settled (win or lose)
    or removed, from its session's rows before the finding's: `pass, come x2`.
    Worked out a session at a time (its rows stay in the CPU's cache), for
    the seats its findings name."""
    events = log.events
    # what each row does to its seat's count of its bet: by event, then a
    # settlement neither won nor lost (a push) leaves the wager standing
    adds = [k for k, e in enumerate(log.event_names[:-1]) if WAGER_CHANGE.get(str(e)) == 1]
    takes = [k for k, e in enumerate(log.event_names[:-1]) if WAGER_CHANGE.get(str(e)) == -1]
    settled = log.event_names.index("wager_settled") if "wager_settled" in log.event_names \
        else -2
    bet_codes, bet_names = coded(events["bet"])
    families = sorted({_bet_family(str(b)) for b in bet_names[:-1]})
    number = {f: i for i, f in enumerate(families)}
    family_of = np.array([number[_bet_family(str(b))] for b in bet_names[:-1]] + [-1],
                         dtype=np.int64)
    outcome_codes, outcomes = coded(events["outcome"])
    undecided = np.array([o not in ("win", "lose") for o in outcomes], dtype=bool)
    seat_values = log.seat_values
    width = max(len(families), 1)
    names: list[list[str]] = [[] for _ in rows]
    for k in range(len(log.session_starts)):
        mine = np.flatnonzero(log.asked_index == k)
        # the few seats the session's findings name (a seat is 1..62), compared
        # one by one with the rows' seats
        asked = np.unique(seat[mine])
        asked = asked[(asked > 0) & (asked < _SEATS)].tolist() or [-1]
        lo, hi = int(log.session_starts[k]), int(log.session_ends[k])
        at, d = _seat_wager_rows(log, lo, hi, adds or [-2], takes or [-2], asked)
        # the bet of those rows only (a look-up over the session's every row
        # first widens each code to a 64-bit index)
        fam = family_of.take(bet_codes[lo + at])
        d = d.astype(np.int64)
        d[(log.event_codes[lo + at] == settled) & undecided[outcome_codes[lo + at]]] = 0
        keep = (d != 0) & (fam >= 0)
        at, d, fam = at[keep], d[keep], fam[keep]
        groups = _Groups(seat_values[lo + at].astype(np.int64) * width + fam, lo + at, log.n)
        held = groups.running_count(d)
        asked_at, gid = groups.within(seat[mine] * width, seat[mine] * width + width)
        last = groups.last_before(gid, rows[mine][asked_at])
        count = np.where(last >= 0, held[np.maximum(last, 0)], 0) if len(last) else last
        for j, g, c in zip(mine[asked_at].tolist(), gid.tolist(), count.tolist()):
            if c > 0:  # (no group holds seat 0: the finding names no seat)
                name = families[int(groups.keys[g]) % width]
                names[j].append(name if c == 1 else f"{name} \u00d7{c}")
    return [", ".join(n) or "none" for n in names]


def _seat_wager_rows(log: _Log, lo: int, hi: int, adds: list[int], takes: list[int],
                     asked: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The rows of [lo, hi) (as offsets from lo) whose event adds a wager
    (+1) or takes one (-1) at one of the `asked` seats, and that +1 or -1:
    found a block of rows at a time (a session is often most of a log: its
    temporaries stay in the CPU's cache and their memory is reused)."""
    seat_values, no_seat = log.seat_values, log.no_seat
    found, signs = [], []
    for a in range(lo, hi, BLOCK):
        b = min(a + BLOCK, hi)
        ev = log.event_codes[a:b]
        delta = code_is(ev, adds).view(np.int8) - code_is(ev, takes).view(np.int8)
        keep = (delta != 0) & code_is(seat_values[a:b], asked)
        if no_seat is not None:
            keep &= ~no_seat[a:b]
        hit = np.flatnonzero(keep)
        found.append(hit + (a - lo))
        signs.append(delta[hit])
    if not found:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int8)
    return np.concatenate(found).astype(np.int64, copy=False), np.concatenate(signs)


# --- the dice ------------------------------------------------------------------------------

_REMOVED = DIE_LOCATIONS.index("removed")


def _dice(log: _Log, state: ReplayState, rows: np.ndarray) -> list[tuple[str, ...]]:
    """Where each die of the session is before each finding's row: the place
    the replay's last move of it put it in, up to its next move, within the
    session (dice removed from the table on one line). A move at row m
    holds for the rows r with m < r <= its die's next move."""
    moves = state.dice_moves
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    lo = searchsorted_ascending(sorted_rows, moves.rows, side="right")
    hi = np.searchsorted(sorted_rows, moves.until(), side="right")
    # most moves hold no finding's row before the die's next move: the end
    # of the session is worked out for the others only
    some = np.flatnonzero(hi > lo)
    hi[some] = np.minimum(hi[some], np.searchsorted(
        sorted_rows, log.state_reach(moves.rows[some]), side="right"))
    move, k = expand(lo, hi - lo)
    asked = order[k]
    gone = moves.where[move] == _REMOVED
    # a long session removes hundreds of dice: those are counted, and named
    # only where few
    gone_count = np.bincount(asked[gone], minlength=len(rows))
    named_gone = gone & (gone_count[asked] <= MAX_REMOVED_NAMED)
    keep = np.flatnonzero(~gone | named_gone)
    serials = moves.serials
    rank = {d: i for i, d in enumerate(sorted({serials[d] for d in
                                                np.unique(moves.die[move[keep]]).tolist()},
                                               key=_natural))}
    places: list[list[tuple[int, str]]] = [[] for _ in rows]
    removed: list[list[tuple[int, str]]] = [[] for _ in rows]
    # each move's text, once (findings share them), its seat read with the others'
    told = np.unique(move[keep][~gone[keep]])
    said = {m: DIE_PLACES[DIE_LOCATIONS[where]].format(seat=seat or "(none recorded)")
            + f" ({log.where(row)})"
            for m, where, row, seat in zip(told.tolist(), moves.where[told].tolist(),
                                           moves.rows[told].tolist(),
                                           log.seat[moves.rows[told]].tolist())}
    for j, m, out in zip(asked[keep].tolist(), move[keep].tolist(), gone[keep].tolist()):
        die = serials[int(moves.die[m])]
        if out:
            removed[j].append((rank[die], die))
            continue
        places[j].append((rank[die], f"{die}: {said[m]}"))
    return [tuple([t for _, t in sorted(p)] +
                  ([f"removed from the table: {', '.join(d for _, d in sorted(r))}"] if r else
                   [f"removed from the table: {c} dice"] if c else []))
            for p, r, c in zip(places, removed, gone_count.tolist())]


def _natural(serial: str) -> tuple:
    from auditor.report.html_events import natural_key

    return natural_key(serial)


# --- the last valid roll -------------------------------------------------------------------


def _last_rolls(log: _Log, state: ReplayState, rows: np.ndarray) -> list[str]:
    """The last roll of the session before each finding's row that the
    replay counted and had not voided by then, its total and what it decided."""
    rolled, totals = state.arrays("roll_counted_total")
    voided_rows, voided_by = state.arrays("roll_voided")
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
    same = (pick >= 0) & (log.table[roll_row] == log.asked_table) & \
        (roll_row >= log.session_starts[log.asked_index])
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
