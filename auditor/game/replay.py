"""Replay each table's events once, in `seq` order, into state columns beside
the events: who holds the dice, which wagers are active, where every die is,
come-out or point, what each valid roll decided, and what was still owed when
the next thing happened.

The log is not trusted for the state of the game; this module derives it.
It is jurisdiction-neutral but for the bar number, which decides whether a
don't bet was pushed or won. Checks (in `auditor.checks`) then read the state
columns, mostly vectorised; none of them re-implements the game.

The loop is lean on purpose: columns are turned into Python lists once, each
event type has a small handler, and state columns are written sparsely.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from auditor.game.outcomes import POINTS, expected_outcome
from auditor.logs.schema import EVENTS, NO_ROLL_CONDITIONS

# Where a die is.
NEW, BOWL, OFFERED, SHOOTER, LAYOUT, OFF_TABLE, LOST, REMOVED = range(8)
LIVE = frozenset((NEW, BOWL, OFFERED, SHOOTER, LAYOUT))

# Offer rounds.
ROUND_START, ROUND_AFTER_RELINQUISH, ROUND_REPLACEMENT = 0, 1, 2

LINE_KEYS = ("pass", "dont_pass")
COME_FAMILY = ("come", "dont_come")


def bit(seat: int) -> int:
    return 1 << seat if 0 < seat < 63 else 0


class Die:
    """One die: where it is, which set it came with, its inspection record.
    Moving it keeps the table's set of live dice up to date, so nothing has
    to scan every die the table ever had."""

    __slots__ = ("_loc", "checked_use", "failed", "found", "found_inspections", "inspections",
                 "live", "serial", "set_id")

    def __init__(self, serial: str, set_id: int, live: set[str]):
        self.serial = serial
        self.live = live
        self.loc = NEW
        self.set_id = set_id
        self.inspections: list[tuple[str, str]] = []  # passing (role, actor_id)
        self.failed = False
        self.found = False  # left the table and was found: needs its own inspection
        self.found_inspections: list[tuple[str, str]] = []
        self.checked_use = False  # first use since arrival/retrieval already recorded

    @property
    def loc(self) -> int:
        return self._loc

    @loc.setter
    def loc(self, where: int) -> None:
        self._loc = where
        if where in LIVE:
            self.live.add(self.serial)
        else:
            self.live.discard(self.serial)


#: State written only on the rows it concerns (None elsewhere). Every name is
#: always present in the state frame, so checks never meet a missing column.
SPARSE_COLUMNS: tuple[str, ...] = (
    # rolls
    "roll_dice", "roll_total", "roll_counted_total", "roll_point_before", "roll_seven_out",
    "roll_voided", "roll_line_bet", "roll_by_shooter", "roll_after_seven_out",
    "roll_not_selected", "roll_marker_off", "roll_come_wagers", "roll_other_line_bettors",
    "roll_after_point_made",
    "stick_any_wager", "stick_willing", "stick_after_decision", "call_row", "unsettled",
    # calls and settlements
    "call_expected", "call_roll", "settle_expected", "settle_roll", "settled_on_void",
    # offers
    "offer_round", "offer_anchor", "offer_open_seat", "offer_missing_dice",
    # dice custody
    "received_count", "bowl_set_count", "live_count", "first_use", "failed_dice_used",
    "dice_not_at_table",
    "selected_count", "rest_not_in_bowl", "passed_unsettled", "passed_then_settled",
    "offtable_shooter", "lost_shooter", "lost_followup", "old_set_used",
    # references and people
    "seat_unknown", "die_never_received", "relinquish_roles",
)


class StateColumns:
    """The state written beside the events: numpy arrays for what every row or
    many rows carry, dicts {row: value} for what few rows carry."""

    def __init__(self, n: int):
        self.shooter = np.zeros(n, dtype=np.int64)
        self.point = np.zeros(n, dtype=np.int64)
        self.occupied = np.zeros(n, dtype=np.int64)
        self.line_bettors = np.zeros(n, dtype=np.int64)
        self.sparse: dict[str, dict[int, object]] = {name: {} for name in SPARSE_COLUMNS}

    def put(self, column: str, row: int, value) -> None:
        self.sparse[column][row] = value


class TableReplay:
    """State of one table between two `table_open`s."""

    def __init__(self, cols: StateColumns, bar: int):
        self.cols = cols
        self.bar = bar
        self.reset()

    def reset(self) -> None:
        self.point = 0
        self.occupied = 0
        self.open_seat = 0
        self.shooter = 0
        self.seven_out_seat = 0
        self.made_point = False  # the shooter has made a point since accepting the dice
        self.selected: frozenset[str] | None = None
        self.selection_row = -1
        self.wagers: dict[int, dict[str, int]] = {}
        self.line_bettors = 0
        self.dice: dict[str, Die] = {}
        self.live: set[str] = set()  # serials of the dice at the table (see Die.loc)
        self.sets: dict[int, list[Die]] = {}
        self.set_count = 0
        self.set_size = 0  # dice of the current set at the table, as last reported
        self.current_set = 0
        self.round_kind = -1
        self.round_anchor = 0
        self.round_declined = 0
        self.ever_offered = False
        self.last_roll = -1
        self.last_roll_valid = False
        self.last_roll_voided_rows: list[int] = []
        self.pending: list[tuple[int, str, int, str]] = []  # (seat, bet, number, outcome)
        self.pending_roll = -1
        self.passed_rows: list[int] = []
        self.marker_off_dp = False
        self.stick_decided = False
        self.offtable_row = -1
        self.offtable_offered = False
        self.lost_row = -1
        self.lost_shooter = 0
        self.lost_set = 0
        self.lost_count = 0
        self.lost_allowance_over = False
        self.dispute_die: str | None = None

    # --- helpers --------------------------------------------------------

    def seat_wagers(self, seat: int) -> dict[str, int]:
        w = self.wagers.get(seat)
        if w is None:
            w = self.wagers[seat] = {}
        return w

    def refresh_line_bit(self, seat: int) -> None:
        w = self.wagers.get(seat, {})
        if w.get("pass", 0) > 0 or w.get("dont_pass", 0) > 0:
            self.line_bettors |= bit(seat)
        else:
            self.line_bettors &= ~bit(seat)

    def come_wager_count(self) -> int:
        return sum(n for w in self.wagers.values() for k, n in w.items()
                   if k.startswith(("come", "dont_come")))

    def any_line_wager(self) -> bool:
        return any(n > 0 for w in self.wagers.values() for k, n in w.items())

    def live_dice(self) -> set[str]:
        return self.live

    def record_use(self, row: int, serials: tuple[str, ...]) -> None:
        """First use of a die since it arrived (or was found): keep what its
        inspection record was then, for the inspection checks."""
        record = []
        for s in serials:
            d = self.dice.get(s)
            if d is None or d.checked_use:
                continue
            d.checked_use = True
            record.append({
                "die": s, "found": d.found, "failed": d.failed,
                "inspections": [list(x) for x in (d.found_inspections if d.found
                                                  else d.inspections)],
            })
        if record:
            self.cols.put("first_use", row, record)

    def flush_pending(self) -> None:
        """Decisions of the last roll that were never settled."""
        owed = [p for p in self.pending if p[3] != "push"]
        if owed and self.pending_roll >= 0:
            self.cols.put("unsettled", self.pending_roll,
                          [{"seat": s, "bet": _bet_name(b, n), "outcome": o}
                           for s, b, n, o in owed])
        self.pending = []
        self.pending_roll = -1

    def end_lost_allowance(self, row: int, roll_dice: tuple[str, ...] | None) -> None:
        if self.lost_row < 0:
            return
        received_since = self.current_set != self.lost_set
        old_live = sorted(s for s, d in self.dice.items()
                          if d.set_id == self.lost_set and d.loc in LIVE)
        self.cols.put("lost_followup", self.lost_row, {
            "new_set_received": received_since, "old_dice_not_removed": old_live,
            "lost_count": self.lost_count,
        })
        if roll_dice is not None:
            old_used = [s for s in roll_dice
                        if s in self.dice and self.dice[s].set_id == self.lost_set]
            if old_used:
                self.cols.put("old_set_used", row, {"dice": old_used,
                                                    "lost_count": self.lost_count})
        self.lost_row = -1


def _bet_name(bet: str, number: int) -> str:
    return f"{bet}_{number}" if number else bet


@functools.lru_cache(maxsize=1024)
def _split_bet(name: str) -> tuple[str, int]:
    """`come_6` -> (come, 6); `pass` -> (pass, 0)."""
    for family in ("dont_come", "come"):
        if name.startswith(family + "_"):
            tail = name[len(family) + 1:]
            if tail.isdigit():
                return family, int(tail)
    return name, 0


def replay(events: pd.DataFrame, bar: int = 12) -> pd.DataFrame:
    """State columns for `events` (ordered by table, seq), one row per event."""
    n = len(events)
    cols = StateColumns(n)
    if n == 0:
        return _to_frame(cols, n, events.index)
    ev = events["event"].cat.codes.to_numpy()
    table = events["table_id"].cat.codes.to_numpy()
    seat = events["seat"].fillna(0).to_numpy(dtype=np.int64).tolist()
    die1 = events["die1"].fillna(0).to_numpy(dtype=np.int64).tolist()
    die2 = events["die2"].fillna(0).to_numpy(dtype=np.int64).tolist()
    role, actor, dice_col, bet, outcome, reason, flags = (
        _text_list(events[name]) for name in
        ("actor_role", "actor_id", "dice", "bet", "outcome", "reason", "flags"))

    parsed_dice: dict[str, tuple[str, ...]] = {}

    def dice_of(i: int) -> tuple[str, ...]:
        text = dice_col[i]
        if text is None:
            return ()
        got = parsed_dice.get(text)
        if got is None:
            got = parsed_dice[text] = tuple(text.split(","))
        return got

    E = {name: code for code, name in enumerate(EVENTS)}
    st: TableReplay | None = None
    prev_table = -1
    ev_list = ev.tolist()
    table_list = table.tolist()
    shooter_col, point_col = cols.shooter, cols.point
    occupied_col, line_col = cols.occupied, cols.line_bettors
    put = cols.put

    for i in range(n):
        if table_list[i] != prev_table:
            if st is not None:
                st.flush_pending()
            st = TableReplay(cols, bar)
            prev_table = table_list[i]
        e = ev_list[i]
        shooter_col[i] = st.shooter
        point_col[i] = st.point
        occupied_col[i] = st.occupied
        line_col[i] = st.line_bettors
        s = seat[i]

        if e == E["roll"]:
            _on_roll(st, i, s, role[i], dice_of(i), die1[i], die2[i], flags[i], put)
        elif e == E["total_called"] or e == E["die_cocked"] or e == E["dispute"] \
                or e == E["ruling"] or e == E["no_roll"]:
            _on_call_or_void(st, i, e, E, dice_of(i), die1[i], reason[i], put)
        elif e == E["wager_placed"]:
            _check_seat(st, i, s, put)
            fam, num = _split_bet(bet[i])
            if fam in LINE_KEYS or fam in COME_FAMILY:
                w = st.seat_wagers(s)
                key = _bet_name(fam, num)
                w[key] = w.get(key, 0) + 1
                st.refresh_line_bit(s)
        elif e == E["wager_removed"]:
            _check_seat(st, i, s, put)
            fam, num = _split_bet(bet[i])
            _take_wager(st, s, fam, num)
        elif e == E["wager_settled"]:
            _on_settled(st, i, s, bet[i], outcome[i], put)
        elif e == E["settlement_complete"]:
            if st.passed_rows:
                for r in st.passed_rows:
                    put("passed_then_settled", r, True)
                st.passed_rows = []
        elif e in (E["dice_collected"], E["dice_to_shooter"]):
            d = dice_of(i)
            _note_never_received(st, i, d, put)
            for sr in d:
                if sr in st.dice and st.dice[sr].loc in LIVE:
                    st.dice[sr].loc = SHOOTER
            if e == E["dice_to_shooter"]:
                _check_seat(st, i, s, put)
                st.record_use(i, d)
                _note_failed(st, i, d, put)
                owed = [p for p in st.pending if p[3] != "push"]
                if owed:
                    put("passed_unsettled", i, [{"seat": a, "bet": _bet_name(b, c),
                                                 "outcome": o} for a, b, c, o in owed])
                st.passed_rows.append(i)
        else:
            _on_other(st, i, e, E, s, role[i], actor[i], dice_of(i), outcome[i], reason[i],
                      flags[i], put)
    if st is not None:
        st.flush_pending()
    return _to_frame(cols, n, events.index)


def _text_list(column: pd.Series) -> list:
    """A text column as a list with None (never NaN) where nothing was recorded."""
    values = column.astype(object)
    return values.where(values.notna(), None).tolist()


def _check_seat(st: TableReplay, i: int, s: int, put) -> None:
    if s and not st.occupied & bit(s):
        put("seat_unknown", i, True)


def _note_never_received(st: TableReplay, i: int, d: tuple[str, ...], put) -> None:
    missing = [x for x in d if x not in st.dice]
    if missing:
        put("die_never_received", i, missing)


def _note_failed(st: TableReplay, i: int, d: tuple[str, ...], put) -> None:
    """Dice that failed an inspection, put in play or used at row `i`."""
    failed = [x for x in d if x in st.dice and st.dice[x].failed]
    if failed:
        put("failed_dice_used", i, failed)


def _take_wager(st: TableReplay, s: int, fam: str, num: int) -> bool:
    w = st.wagers.get(s)
    if not w:
        return False
    key = _bet_name(fam, num)
    if w.get(key, 0) <= 0 and num == 0 and fam in COME_FAMILY:
        key = next((k for k, v in w.items() if v > 0 and _split_bet(k)[0] == fam), key)
    if w.get(key, 0) > 0:
        w[key] -= 1
        if not w[key]:
            del w[key]
        st.refresh_line_bit(s)
        return True
    return False


def _on_roll(st: TableReplay, i, s, role, d, d1, d2, flags, put) -> None:
    # What the previous roll left unsettled is now missing.
    st.flush_pending()
    st.passed_rows = []
    _note_never_received(st, i, d, put)
    st.record_use(i, d)
    _note_failed(st, i, d, put)
    unknown = [x for x in d if x not in st.dice or st.dice[x].loc not in LIVE]
    if unknown:
        put("dice_not_at_table", i, unknown)
    by_player = role == "player"
    if by_player:
        _check_seat(st, i, s, put)
        w = st.wagers.get(s, {})
        put("roll_line_bet", i, bool(w.get("pass") or w.get("dont_pass")))
        put("roll_by_shooter", i, bool(s) and s == st.shooter)
        if st.seven_out_seat and s == st.seven_out_seat and s == st.shooter:
            put("roll_after_seven_out", i, True)
        # Only a die outside the chosen ones is a breach here; choosing other
        # than two is reported on the `dice_selected` itself.
        if st.selected is not None and s == st.shooter and not frozenset(d) <= st.selected:
            put("roll_not_selected", i, sorted(st.selected))
        put("roll_marker_off", i, st.marker_off_dp)
        put("roll_come_wagers", i, st.come_wager_count())
        put("roll_other_line_bettors", i, bool(st.line_bettors & ~bit(s)))
        put("roll_after_point_made", i, st.made_point and s == st.shooter)
    else:
        put("stick_any_wager", i, st.any_line_wager())
        put("stick_willing", i, bool(st.line_bettors & ~st.round_declined))
        put("stick_after_decision", i, st.stick_decided)
    # The dice chosen by the shooter: the rest must be in the bowl by now.
    if st.selection_row >= 0:
        stray = sorted(x for x in st.live if st.dice[x].loc == OFFERED
                       or (st.dice[x].loc == NEW and st.dice[x].set_id == st.current_set))
        if stray:
            put("rest_not_in_bowl", st.selection_row, stray)
        st.selection_row = -1
    if st.lost_row >= 0 and (st.lost_allowance_over or (by_player and s != st.lost_shooter)
                             or not by_player):
        st.end_lost_allowance(i, d)
    for x in d:
        die = st.dice.get(x)
        if die is not None and die.loc in LIVE:
            die.loc = LAYOUT
    put("roll_dice", i, d)
    put("roll_total", i, d1 + d2)
    put("roll_point_before", i, st.point)
    st.last_roll = i
    st.last_roll_valid = True
    st.last_roll_faces = [d1, d2]
    st.last_roll_dice = d
    st.last_roll_by_player = by_player
    st.last_roll_seat = s
    st.last_roll_voided_rows = []
    st.dispute_die = None  # a dispute concerns the roll it follows
    _decide(st, i)


def _decide(st: TableReplay, i: int) -> None:
    """Apply the last roll's counted total: decide line and come bets, move
    the point, note a 7 Out. Called again if a cocked die or a ruling changes
    the total, after undoing the previous decision."""
    total = sum(st.last_roll_faces)
    point = st.cols.sparse["roll_point_before"][i]
    st.undo = (st.point, {k: dict(v) for k, v in st.wagers.items()}, st.line_bettors,
               st.seven_out_seat, st.stick_decided, st.made_point)
    pending = []
    for seat_no, w in st.wagers.items():
        for key, count in list(w.items()):
            fam, num = _split_bet(key)
            if fam in COME_FAMILY and num == 0 and total in POINTS:
                # An untravelled come bet travels to its number.
                del w[key]
                w[_bet_name(fam, total)] = w.get(_bet_name(fam, total), 0) + count
                continue
            result = expected_outcome(fam, num, point, total, st.bar)
            if result is None:
                continue
            pending.extend([(seat_no, fam, num, result)] * count)
            if result != "push":
                del w[key]
                if fam in LINE_KEYS:
                    st.refresh_line_bit(seat_no)
    st.pending = pending
    st.pending_roll = i
    seven_out = point != 0 and total == 7
    st.cols.put("roll_counted_total", i, total)
    st.cols.put("roll_seven_out", i, seven_out)
    if point == 0:
        st.point = total if total in POINTS else 0
    elif total == point or total == 7:
        st.point = 0
    decision = (point == 0 and total not in POINTS) or (point != 0 and total in (point, 7))
    if st.last_roll_by_player:
        if point != 0 and total == point:
            st.made_point = True
        if seven_out:
            st.seven_out_seat = st.last_roll_seat
            if st.lost_row >= 0 and st.last_roll_seat == st.lost_shooter:
                st.lost_allowance_over = True
    elif decision:
        st.stick_decided = True


def _undo_decision(st: TableReplay) -> None:
    (st.point, st.wagers, st.line_bettors, st.seven_out_seat, st.stick_decided,
     st.made_point) = st.undo
    st.pending = []
    st.pending_roll = -1


def _on_call_or_void(st, i, e, E, d, face, reason, put) -> None:
    if st.last_roll < 0:
        return
    r = st.last_roll
    if e == E["total_called"]:
        if r not in st.cols.sparse["call_row"]:
            put("call_row", r, i)
        put("call_expected", i, sum(st.last_roll_faces))
        put("call_roll", i, r)
        return
    if e == E["no_roll"] or (e == E["ruling"] and reason == "void"):
        if st.last_roll_valid:
            st.last_roll_valid = False
            _undo_decision(st)
            put("roll_voided", r, i)
            for row in st.last_roll_voided_rows:  # settled before the roll was voided
                put("settled_on_void", row, r)
        return
    if e == E["dispute"]:
        st.dispute_die = d[0] if d else None
        return
    # A cocked die counts the face opposite the one resting on the object; a
    # ruling fixes the face of the disputed die. Either may change the total.
    if e == E["die_cocked"]:
        target, counted = (d[0] if d else None), 7 - face if face else 0
    else:  # ruling face_determined
        target, counted = st.dispute_die, face
    if not counted or target not in st.last_roll_dice:
        return
    pos = st.last_roll_dice.index(target)
    if st.last_roll_faces[pos] == counted:
        return
    st.last_roll_faces[pos] = counted
    if st.last_roll_valid:
        _undo_decision(st)
        _decide(st, r)


def _on_settled(st: TableReplay, i, s, bet_name, outcome, put) -> None:
    _check_seat(st, i, s, put)
    if st.passed_rows:
        for r in st.passed_rows:
            put("passed_then_settled", r, True)
        st.passed_rows = []
    # Any wager (not only a line bet) settled on a void roll; one settled on
    # the roll before it was voided is noted for the no roll to mark.
    if st.last_roll >= 0:
        if not st.last_roll_valid:
            put("settled_on_void", i, st.last_roll)
        else:
            st.last_roll_voided_rows.append(i)
    fam, num = _split_bet(bet_name)
    if fam not in LINE_KEYS and fam not in COME_FAMILY:
        return
    # Match the settlement to what the last valid roll decided for that seat.
    match = -1
    for k, (ps, pf, pn, po) in enumerate(st.pending):
        if ps == s and pf == fam and (pn == num or (num == 0 and fam in COME_FAMILY)):
            match = k
            if po == outcome:
                break
    if match >= 0:
        expected = st.pending[match][3]
        put("settle_expected", i, expected)
        put("settle_roll", i, st.pending_roll)
        if expected != "push" or outcome != "push":
            del st.pending[match]
        if expected == "push" and outcome in ("win", "lose"):
            _take_wager(st, s, fam, num)
    else:
        put("settle_expected", i, "undecided")
        put("settle_roll", i, st.last_roll)
        if outcome in ("win", "lose"):
            _take_wager(st, s, fam, num)


def _on_other(st: TableReplay, i, e, E, s, role, actor, d, outcome, reason, flags, put) -> None:
    if e == E["table_open"]:
        st.flush_pending()
        st.reset()
        st.open_seat = s
    elif e == E["table_close"]:
        st.flush_pending()
    elif e == E["player_join"]:
        st.occupied |= bit(s)
    elif e == E["player_leave"]:
        _check_seat(st, i, s, put)
        st.occupied &= ~bit(s)
        st.wagers.pop(s, None)
        st.line_bettors &= ~bit(s)
    elif e == E["dice_received"]:
        st.set_count += 1
        st.current_set = st.set_count
        put("received_count", i, len(d))
        st.set_size = len(d)
        for x in d:
            die = st.dice[x] = Die(x, st.current_set, st.live)
            st.sets.setdefault(st.current_set, []).append(die)
        put("live_count", i, len(st.live_dice()))
    elif e == E["dice_inspected"]:
        _note_never_received(st, i, d, put)
        for x in d:
            die = st.dice.get(x)
            if die is None:
                continue
            if outcome == "fail":
                die.failed = True
            elif die.found:
                die.found_inspections.append((role or "", actor or ""))
            else:
                die.inspections.append((role or "", actor or ""))
    elif e == E["dice_to_bowl"]:
        _note_never_received(st, i, d, put)
        st.record_use(i, d)
        failed = [x for x in d if x in st.dice and st.dice[x].failed]
        if failed:
            put("failed_dice_used", i, failed)
        for x in d:
            if x in st.dice and st.dice[x].loc != REMOVED:
                st.dice[x].loc = BOWL
                st.dice[x].found = False if st.dice[x].checked_use else st.dice[x].found
        put("live_count", i, len(st.live_dice()))
        # The set shrank since it was received (a die removed, e.g. after a
        # failed inspection): this bowl leaves the table with that many dice.
        # A lost die is the lost-die procedure's concern (seed 6.1), not this.
        in_set = st.sets.get(st.current_set, [])
        size = sum(1 for x in in_set if x.loc != REMOVED)
        if st.current_set and size != st.set_size and not any(x.loc == LOST for x in in_set):
            put("bowl_set_count", i, size)
            st.set_size = size
    elif e == E["dice_removed"]:
        _note_never_received(st, i, d, put)
        for x in d:
            if x in st.dice:
                st.dice[x].loc = REMOVED
    elif e == E["dice_offered"]:
        _on_offer(st, i, s, d, put)
    elif e == E["dice_declined"]:
        _check_seat(st, i, s, put)
        st.round_anchor = s
        st.round_declined |= bit(s)
    elif e == E["dice_accepted"]:
        _check_seat(st, i, s, put)
        if st.lost_row >= 0 and s != st.lost_shooter:
            st.lost_allowance_over = True
        st.shooter = s
        st.seven_out_seat = 0
        st.made_point = False
        st.selected = None
        st.round_kind = -1
        st.stick_decided = False
    elif e == E["dice_selected"]:
        _check_seat(st, i, s, put)
        _note_never_received(st, i, d, put)
        held = frozenset(d)
        if st.offtable_offered and st.selected is not None and len(d) < 2:
            # 6.1: a new die chosen to replace one that left the table; the
            # shooter keeps the other die of the pair.
            held |= {x for x in st.selected if x in st.dice and st.dice[x].loc in LIVE}
        st.offtable_offered = False
        put("selected_count", i, len(held))
        unknown = [x for x in d if x not in st.dice or st.dice[x].loc not in LIVE]
        if unknown:
            put("dice_not_at_table", i, unknown)
        st.record_use(i, d)
        failed = [x for x in d if x in st.dice and st.dice[x].failed]
        if failed:
            put("failed_dice_used", i, failed)
        for x in held:
            if x in st.dice and st.dice[x].loc in LIVE:
                st.dice[x].loc = SHOOTER
        st.selected = held
        st.selection_row = i
    elif e == E["die_off_table"]:
        _note_never_received(st, i, d, put)
        for x in d:
            if x in st.dice:
                st.dice[x].loc = OFF_TABLE
        st.offtable_row = i
        st.offtable_offered = False
        put("offtable_shooter", i, st.shooter)
    elif e == E["die_retrieved"]:
        _note_never_received(st, i, d, put)
        for x in d:
            die = st.dice.get(x)
            if die is not None:
                die.loc = NEW
                die.found = True
                die.found_inspections = []
                die.checked_use = False
    elif e == E["die_lost"]:
        _note_never_received(st, i, d, put)
        for x in d:
            die = st.dice.get(x)
            if die is not None:
                die.loc = LOST
                st.lost_set = die.set_id
        # Dice of the set lost so far, whichever shooter lost them (NSW 3.6:
        # a new set when two dice are lost).
        st.lost_count = sum(1 for x in st.dice.values()
                            if x.set_id == st.lost_set and x.loc == LOST) \
            + sum(1 for x in d if x not in st.dice)
        st.lost_row = i
        st.lost_shooter = st.shooter
        st.lost_allowance_over = False
        put("lost_shooter", i, st.shooter)
    elif e == E["marker"]:
        words = set((flags or "").split(","))
        st.marker_off_dp = outcome == "off" and "dont_pass_line" in words
    elif e == E["shooter_relinquish"]:
        _check_seat(st, i, s, put)
        anchor = s or st.shooter
        if st.lost_row >= 0:
            st.lost_allowance_over = True
        st.shooter = 0
        st.seven_out_seat = 0
        st.selected = None
        st.round_kind = ROUND_AFTER_RELINQUISH
        st.round_anchor = anchor
        st.round_declined = 0
        put("relinquish_roles", i, role)


def _on_offer(st: TableReplay, i: int, s: int, d: tuple[str, ...], put) -> None:
    _check_seat(st, i, s, put)
    _note_never_received(st, i, d, put)
    if st.offtable_row >= 0 and st.shooter and s == st.shooter:
        # 6.1: the remaining dice offered to the shooter to replace a die.
        st.offtable_offered = True
        put("offer_round", i, ROUND_REPLACEMENT)
        st.offtable_row = -1
        for x in d:
            if x in st.dice and st.dice[x].loc in LIVE:
                st.dice[x].loc = OFFERED
        st.record_use(i, d)
        _note_failed(st, i, d, put)
        return
    if st.round_kind < 0:
        if st.shooter == 0 and not st.ever_offered:
            st.round_kind, st.round_anchor = ROUND_START, 0
        elif st.shooter and st.seven_out_seat:
            st.round_kind, st.round_anchor = ROUND_AFTER_RELINQUISH, st.shooter
        else:
            st.round_kind, st.round_anchor = ROUND_AFTER_RELINQUISH, st.shooter
        st.round_declined = 0
    st.ever_offered = True
    put("offer_round", i, st.round_kind)
    put("offer_anchor", i, st.round_anchor)
    put("offer_open_seat", i, st.open_seat)
    live = st.live_dice()
    offered = set(d)
    if not live <= offered:
        put("offer_missing_dice", i, sorted(live - offered))
    failed = [x for x in d if x in st.dice and st.dice[x].failed]
    if failed:
        put("failed_dice_used", i, failed)
    st.record_use(i, d)
    for x in d:
        if x in st.dice and st.dice[x].loc in LIVE:
            st.dice[x].loc = OFFERED


def _to_frame(cols: StateColumns, n: int, index) -> pd.DataFrame:
    data = {
        "shooter": cols.shooter, "point": cols.point,
        "occupied": cols.occupied, "line_bettors": cols.line_bettors,
    }
    frame = pd.DataFrame(data, index=index)
    for name, values in cols.sparse.items():
        col = np.empty(n, dtype=object)
        for row, value in values.items():
            col[row] = value
        frame[name] = col
    return frame


def sparse(state: pd.DataFrame, name: str) -> pd.Series:
    """A sparse state column (None where the replay wrote nothing)."""
    if name in state.columns:
        return state[name]
    return pd.Series([None] * len(state), index=state.index, dtype=object)


__all__ = ["NO_ROLL_CONDITIONS", "replay", "sparse"]
