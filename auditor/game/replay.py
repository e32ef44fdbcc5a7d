"""Replay each table's events once, in `seq` order, into state beside the
events: who holds the dice, which wagers are active, where every die is,
come-out or point, what each valid roll decided, and what was still owed when
the next thing happened.

The log is not trusted for the state of the game; this module derives it.
It is jurisdiction-neutral but for the bar number, which decides whether a
don't bet was pushed or won. Checks (in `auditor.checks`) then read the state
(`auditor.game.state.ReplayState`), mostly vectorised; none of them re-implements the game.

This module holds the loop and one handler per event type (`TableReplay`);
what they work on is cut at its seams, each a module of its own:

- `auditor.game.table_state`: the table's state, one declared record
  (`TableState`, which `TableReplay` extends with the handlers);
- `auditor.game.wagers`: the wagers held, what a roll decides, what is owed;
- `auditor.game.dice_places`: where each die is, and every move it makes;
- `auditor.game.buffers`: the growing integer columns all of them write;
- `auditor.game.inputs` and `auditor.game.output`: the columns read, a chunk
  at a time, and where the state is written (plain Python, run once).

The loop is the audit's hot path and is kept lean on purpose:

- everything that can be worked out per distinct value is worked out once,
  vectorised, before the loop: event codes index a list of handlers (one
  method per event type), dice lists are split once per distinct text, bet
  names parsed once per distinct bet into integer keys, what a roll does to
  each key looked up in a table built once per (point, total);
- the per-row inputs reach the loop as integer arrays (text as codes into
  the distinct values) a chunk of rows at a time, so memory stays flat
  however long the log;
- the wagers (`Wagers`) and what a roll decided (`Decided`) are integer
  arrays, kept in the orders the settlement matching depends on; a roll's
  decision can be undone (no roll, cocked die, ruling) by copying a few
  integers back;
- state written on few rows (`SPARSE_COLUMNS`) is appended to growing arrays,
  never to a column as long as the log;
- the dense state is recorded only where it changes, and kept so (`state.Steps`);
- this module and the four it is cut into (`COMPILED_MODULES`) are compiled
  by Cython at install time (`setup.py`), each with the C types of its
  `.pxd` (the C calls between them go through `cimport`); the `.py` files
  stay the one source, and run as they are where nothing could be compiled
  (`COMPILED` says which runs).
"""

from __future__ import annotations

import gc
import importlib

import pandas as pd

try:
    import cython  # compiled: directives Cython reads (see the methods using them)
except ImportError:  # run uncompiled without Cython: the directives do nothing
    from auditor.game import cython_shim as cython

from auditor.game.dice_places import Die
from auditor.game.ids import (
    BOWL,
    COME,
    FAMILIES,
    LAYOUT,
    LIVE,
    LOSE,
    LOST,
    NEW,
    NO_DECISION,
    OFF_TABLE,
    OFFERED,
    OUTCOMES,
    PUSH,
    REMOVED,
    SHOOTER,
    TRAVEL,
    WIN,
)
from auditor.game.inputs import CHUNK_ROWS, Inputs
from auditor.game.outcomes import POINTS
from auditor.game.output import Output
from auditor.game.state import UNDECIDED, ReplayState, sparse
from auditor.game.table_state import TableState
from auditor.game.wagers import bet_name
from auditor.logs.arrays import code_counts
from auditor.logs.schema import EVENTS, NO_ROLL_CONDITIONS
from auditor.logs.tables import table_runs

#: The replay's modules compiled by Cython (setup.py builds each from its
#: `.py` with its `.pxd`), this one last.
COMPILED_MODULES = ("auditor.game.buffers", "auditor.game.dice_places", "auditor.game.wagers",
                    "auditor.game.table_state", "auditor.game.replay")

#: True when the replay runs compiled: this module and every module it is
#: cut into are C extensions built from their sources.
COMPILED = not __file__.endswith(".py") and all(
    not importlib.import_module(name).__file__.endswith(".py") for name in COMPILED_MODULES)


# Offer rounds.
ROUND_START, ROUND_AFTER_RELINQUISH, ROUND_REPLACEMENT = 0, 1, 2

#: Codes of the events `TableReplay.run` calls directly (the most frequent).
(WAGER_SETTLED, WAGER_PLACED, ROLL, DICE_COLLECTED, SETTLEMENT_COMPLETE, TOTAL_CALLED,
 DICE_TO_SHOOTER, DICE_OFFERED, DICE_TO_BOWL, DICE_SELECTED, DICE_ACCEPTED, SHOOTER_RELINQUISH,
 DICE_INSPECTED) = (EVENTS.index(e) for e in (
    "wager_settled", "wager_placed", "roll", "dice_collected", "settlement_complete",
    "total_called", "dice_to_shooter", "dice_offered", "dice_to_bowl", "dice_selected",
    "dice_accepted", "shooter_relinquish", "dice_inspected"))


def bit(seat: int) -> int:
    return 1 << seat if 0 < seat < 63 else 0


# --- the replay ----------------------------------------------------------------

def replay(events: pd.DataFrame, bar: int = 12) -> ReplayState:
    """State for `events` (ordered by table, seq), one row per event."""
    n = len(events)
    if n == 0:
        return Output(0).finish()
    # The replay allocates many small objects that live until it ends and
    # makes no garbage cycles worth chasing meanwhile: the cyclic collector
    # would only traverse them again and again (15% of the replay's time).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _replay(events, bar)
    finally:
        if enabled:
            gc.enable()


def _replay(events: pd.DataFrame, bar: int) -> ReplayState:
    n = len(events)
    inputs = Inputs(events, bar)
    out = Output(n, code_counts(inputs.event, len(EVENTS)))
    bounds = [*table_runs(events)[0].tolist(), n]
    st: TableReplay | None = None
    t = 0  # index of the table segment holding row a
    for a in range(0, n, CHUNK_ROWS):
        b = min(a + CHUNK_ROWS, n)
        rows = inputs.chunk(a, b)
        lo = a
        while lo < b:
            while bounds[t + 1] <= lo:
                t += 1
            if lo == bounds[t]:  # a new table starts here
                if st is not None:
                    st.end_session()
                    st.close()
                st = TableReplay(out, inputs)
            hi = min(bounds[t + 1], b)
            st.bind(rows, a)
            st.run(lo - a, hi - a)
            lo = hi
        out.flush()
    if st is not None:
        st.end_session()
        st.close()
    state = out.finish(inputs.serial_names)
    # (the dice values as split for the replay: the checks and the dice
    # tally read the same split, `Shared.dice_values`)
    state.derived["dice_values"] = inputs.dice_values
    return state


class TableReplay(TableState):
    """One table's replay: its state (`TableState`), wired to the inputs and
    the output, and one handler per event type (`on_<event>`), each called
    with the row's position `i` and its index `k` in the current chunk's lists."""

    def __init__(self, out: Output, inputs: Inputs):
        self.out = out
        self.inputs = inputs
        self.decisions = inputs.decisions
        self.sinks = out.sinks
        self.handlers = [getattr(self, "on_" + e, self.on_nothing) for e in EVENTS]
        self.handlers.append(self.on_nothing)  # code -1: not an event we know
        self.roles, self.outcomes, self.dice_values = inputs.roles, inputs.outcomes, inputs.dice
        self.player, self.outcome_id = inputs.player, inputs.outcome_id
        self.die_cache, self.die_generation = inputs.die_cache, inputs.die_generation
        self.bet_key, self.bet_fam, self.bet_num = inputs.bet_key, inputs.bet_fam, inputs.bet_num
        TableState.__init__(self, self.decisions.width, self.decisions.key_fam)
        # The records written most often: rows and values.
        self.decision_rows, self.decision_totals = out.decisions
        (self.player_roll_rows, self.roll_total, self.roll_line_bet, self.roll_by_shooter,
         self.roll_marker_off, self.roll_come_wagers, self.roll_other_line_bettors,
         self.roll_after_point_made) = out.player_rolls
        self.settle_rows, self.settle_expected, self.settle_decided_by = out.settlements
        self.call_rows, self.call_rolls = out.calls
        self.reset(inputs.next_generation())


    def bind(self, rows: dict, base: int) -> None:
        """The current chunk's columns (row `i` is `base + k`; see `Inputs.chunk`)."""
        self.seat, self.die1, self.die2 = rows["seat"], rows["die1"], rows["die2"]
        self.role, self.dice_code = rows["role"], rows["dice"]
        self.bet, self.outcome = rows["bet"], rows["outcome"]
        self.event = rows["event"]
        self.base = base

    def close(self) -> None:
        """Drop the handlers (bound to self: a cycle) and the chunk, so the
        table's state is freed at once, the cyclic collector being off."""
        self.handlers = []
        self.bind(dict.fromkeys(("seat", "die1", "die2", "role", "dice", "bet", "outcome",
                                 "event")), 0)
        self.inputs = None

    def dice_of(self, k: int) -> tuple[str, ...]:
        """The serials the row names (empty if none)."""
        return self.dice_values[self.dice_code[k]]

    def dies_of(self, k: int) -> tuple:
        """The table's `Die` of each serial the row names (None for a serial
        it never received), looked up once per distinct `dice` value until
        the table receives dice again (a new generation): most rows name the
        shooter's two dice, as the rows before them did."""
        code = self.dice_code[k]
        if self.die_generation[code] == self.generation:
            return self.die_cache[code]
        dice = self.dice
        dies = tuple([dice.get(x) for x in self.dice_values[code]])
        self.die_cache[code] = dies
        self.die_generation[code] = self.generation
        return dies

    def role_of(self, k: int) -> str | None:
        return self.roles[self.role[k]]

    def outcome_of(self, k: int) -> str | None:
        return self.outcomes[self.outcome[k]]

    # (no index check: rows lo..hi-1 are within the bound chunk, `_replay`'s cut)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def run(self, lo: int, hi: int) -> None:
        """Rows [lo, hi) of the bound chunk. The dense state before each row
        is recorded only where it changed; the most frequent events are
        called directly (a C call once compiled), the rest through
        `handlers`."""
        handlers = self.handlers
        base = self.base
        changes = self.out.changes
        rows, shooters, points, occupieds, bettors, seven_outs = changes
        if rows.size:
            shooter, point = shooters.last(), points.last()
            occupied, line_bettors = occupieds.last(), bettors.last()
            seven_out = seven_outs.last()
        else:
            shooter = point = occupied = line_bettors = seven_out = -1
        ev = self.event
        for k in range(lo, hi):
            if self.shooter != shooter or self.point != point \
                    or self.occupied != occupied or self.line_bettors != line_bettors \
                    or self.seven_out_seat != seven_out:
                shooter, point = self.shooter, self.point
                occupied, line_bettors = self.occupied, self.line_bettors
                seven_out = self.seven_out_seat
                rows.append(base + k)
                shooters.append(shooter)
                points.append(point)
                occupieds.append(occupied)
                bettors.append(line_bettors)
                seven_outs.append(seven_out)
            e = ev[k]
            if e == WAGER_SETTLED:
                self.on_wager_settled(base + k, k)
            elif e == WAGER_PLACED:
                self.on_wager_placed(base + k, k)
            elif e == ROLL:
                self.on_roll(base + k, k)
            elif e == DICE_COLLECTED:
                self.on_dice_collected(base + k, k)
            elif e == SETTLEMENT_COMPLETE:
                pass  # (frequent, and changes no state: no handler call)
            elif e == TOTAL_CALLED:
                self.on_total_called(base + k, k)
            elif e == DICE_TO_SHOOTER:
                self.on_dice_to_shooter(base + k, k)
            elif e == DICE_OFFERED:
                self.on_dice_offered(base + k, k)
            elif e == DICE_TO_BOWL:
                self.on_dice_to_bowl(base + k, k)
            elif e == DICE_SELECTED:
                self.on_dice_selected(base + k, k)
            elif e == DICE_ACCEPTED:
                self.on_dice_accepted(base + k, k)
            elif e == SHOOTER_RELINQUISH:
                self.on_shooter_relinquish(base + k, k)
            elif e == DICE_INSPECTED:
                self.on_dice_inspected(base + k, k)
            else:
                handlers[e](base + k, k)

    # --- output ------------------------------------------------------------

    def put(self, column: str, row: int, value) -> None:
        sink = self.sinks[column]
        rows, values = sink
        rows.append(row)
        values.append(value)

    # --- helpers -------------------------------------------------------------

    def refresh_line_bit(self, seat: int) -> None:
        """The seat's bit in `line_bettors`: set while it holds a pass or don't
        pass wager (a count held is never 0: the key goes at 0)."""
        if self.wagers.holds_line(seat):
            self.line_bettors |= bit(seat)
        else:
            self.line_bettors &= ~bit(seat)

    def any_line_wager(self) -> bool:
        wagers = self.wagers
        for j in range(wagers.n_seats):
            if wagers.held[wagers.order[j]]:
                return True
        return False

    # (The helpers below take the row's index `k` in the chunk: its serials
    # are `dice_of(k)`, its dice `dies_of(k)`.)

    def not_at_table(self, k: int) -> list[str]:
        dies = self.dies_of(k)
        out = []
        for j in range(len(dies)):
            die = dies[j]
            if die is None or die.loc > LAYOUT:
                out.append(self.dice_of(k)[j])
        return out

    def move_row(self, i: int, k: int, where: int) -> None:
        """The row's dice that are at the table move to `where`."""
        for die in self.dies_of(k):
            if die is not None and die.loc <= LAYOUT:
                die.move(i, where)

    def record_use(self, row: int, k: int) -> None:
        """First use of a die since it arrived (or was found): keep what its
        inspection record was then, for the inspection checks."""
        record = []
        dies = self.dies_of(k)
        for j in range(len(dies)):
            d = dies[j]
            if d is None or d.checked_use:
                continue
            d.checked_use = True
            record.append({
                "die": self.dice_of(k)[j], "found": d.found, "failed": d.failed,
                "inspections": [list(x) for x in (d.found_inspections if d.found
                                                  else d.inspections)],
            })
        if record:
            self.put("first_use", row, record)

    def owed(self) -> list[dict]:
        d = self.decided
        return [{"seat": d.seat[j], "bet": bet_name(FAMILIES[d.fam[j]], d.num[j]),
                 "outcome": OUTCOMES[d.outcome[j]]}
                for j in range(d.size) if d.outcome[j] != PUSH]

    def flush_pending(self) -> None:
        """Decisions of the last roll that were never settled."""
        if self.decided.size and self.pending_roll >= 0:
            owed = self.owed()
            if owed:
                self.put("unsettled", self.pending_roll, owed)
        self.decided.size = 0
        self.pending_roll = -1

    def take_wager(self, s: int, bet: int) -> None:
        """One wager of the distinct bet `bet` off seat `s` (a come or don't
        come bet named without its number: the first of its family held)."""
        key, fam = self.bet_key[bet], self.bet_fam[bet]
        if key < 0:
            return
        wagers = self.wagers
        m = wagers.find(s, key)
        if m < 0 and self.bet_num[bet] == 0 and fam >= COME:
            m = wagers.first_of(s, fam)
        if m < 0:
            return
        wagers.count[m] -= 1
        if not wagers.count[m]:
            wagers.remove_at(s, m)
        if fam >= COME:
            self.come_count -= 1
        self.refresh_line_bit(s)

    def end_lost_allowance(self, row: int, roll_dice: tuple[str, ...] | None) -> None:
        if self.lost_row < 0:
            return
        received_since = self.current_set != self.lost_set
        old_live = sorted(s for s, d in self.dice.items()
                          if d.set_id == self.lost_set and d.loc in LIVE)
        self.put("lost_followup", self.lost_row, {
            "new_set_received": received_since, "old_dice_not_removed": old_live,
            "lost_count": self.lost_count,
        })
        if roll_dice is not None:
            old_used = [s for s in roll_dice
                        if s in self.dice and self.dice[s].set_id == self.lost_set]
            if old_used:
                self.put("old_set_used", row, {"dice": old_used, "lost_count": self.lost_count})
        self.lost_row = -1

    # --- handlers: the table -------------------------------------------------

    def on_nothing(self, i: int, k: int) -> None:
        """Events that change no state the checks read (staff, overrule)."""

    def end_session(self) -> None:
        """What the end of a session (`table_close`, the next `table_open`,
        the end of the table's log) settles: decisions never settled, and a
        lost die's procedure not done by then (6.1)."""
        self.flush_pending()
        if self.lost_row >= 0:
            self.end_lost_allowance(-1, None)

    def on_table_open(self, i: int, k: int) -> None:
        self.end_session()
        self.reset(self.inputs.next_generation())
        self.open_seat = self.seat[k]

    def on_table_close(self, i: int, k: int) -> None:
        self.end_session()

    def on_player_join(self, i: int, k: int) -> None:
        self.occupied |= bit(self.seat[k])

    def on_player_leave(self, i: int, k: int) -> None:
        s = self.seat[k]
        self.occupied &= ~bit(s)
        self.come_count -= self.wagers.come_held(s)
        self.wagers.drop_seat(s)
        self.line_bettors &= ~bit(s)

    # --- handlers: wagers ------------------------------------------------------

    def on_wager_placed(self, i: int, k: int) -> None:
        s = self.seat[k]
        sb = bit(s)
        bet = self.bet[k]
        key = self.bet_key[bet]
        if key >= 0:
            self.wagers.add_seat(s)
            self.wagers.add(s, key, 1)
            if self.bet_fam[bet] >= COME:
                self.come_count += 1
            else:
                self.line_bettors |= sb  # a pass or don't pass wager is held

    def on_wager_removed(self, i: int, k: int) -> None:
        s = self.seat[k]
        self.take_wager(s, self.bet[k])

    # (no index check: k is a row of the bound chunk; bet and outcome codes
    # index tables made with a slot for each (and the last for -1); the
    # decided wagers are read below their size)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def on_wager_settled(self, i: int, k: int) -> None:
        s = self.seat[k]
        # Any wager (not only a line bet) settled on a void roll; one settled on
        # the roll before it was voided is noted for the no roll to mark.
        if self.last_roll >= 0:
            if not self.last_roll_valid:
                self.put("settled_on_void", i, self.last_roll)
            else:
                self.last_roll_voided_rows.append(i)
        bet = self.bet[k]
        if self.bet_key[bet] < 0:
            return
        fam, num = self.bet_fam[bet], self.bet_num[bet]
        outcome = self.outcome_id[self.outcome[k]]
        # Match the settlement to what the last valid roll decided for that
        # seat: the first decision of that outcome, else the last of any.
        d = self.decided
        match = -1
        any_number = num == 0 and fam >= COME
        for j in range(d.size):
            if d.seat[j] == s and d.fam[j] == fam and (d.num[j] == num or any_number):
                match = j
                if d.outcome[j] == outcome:
                    break
        if match >= 0:
            expected = d.outcome[match]
            self.settle_rows.append(i)
            self.settle_expected.append(expected)  # (an id of SETTLE_EXPECTED)
            self.settle_decided_by.append(self.pending_roll)
            if expected != PUSH or outcome != PUSH:
                d.remove(match)
            if expected == PUSH and (outcome == WIN or outcome == LOSE):
                self.take_wager(s, bet)
        else:
            self.put("settle_expected", i, UNDECIDED)
            self.put("settle_roll", i, self.last_roll)
            if outcome == WIN or outcome == LOSE:
                self.take_wager(s, bet)

    # --- handlers: dice custody --------------------------------------------------

    def on_dice_received(self, i: int, k: int) -> None:
        d = self.dice_of(k)
        self.set_count += 1
        self.current_set = self.set_count
        self.put("received_count", i, len(d))
        self.set_size = len(d)
        for x in d:
            die = self.dice[x] = Die(x, self.inputs.serial_id(x), self.current_set, self.live,
                                     self.out.die_log, i)
            self.sets.setdefault(self.current_set, []).append(die)
        self.generation = self.inputs.next_generation()  # dies_of looks again

    def on_dice_inspected(self, i: int, k: int) -> None:
        role, actor, outcome = self.role_of(k), self.inputs.value("actor_id", i), self.outcome_of(k)
        for die in self.dies_of(k):
            if die is None:
                continue
            if outcome == "fail":
                die.failed = True
            elif die.found:
                die.found_inspections.append((role or "", actor or ""))
            else:
                die.inspections.append((role or "", actor or ""))

    def on_dice_to_bowl(self, i: int, k: int) -> None:
        self.record_use(i, k)
        for die in self.dies_of(k):
            if die is not None and die.loc != REMOVED:
                die.move(i, BOWL)
                die.found = False if die.checked_use else die.found
        # The set shrank since it was received (a die removed, e.g. after a
        # failed inspection): this bowl leaves the table with that many dice.
        # A lost die is the lost-die procedure's concern (seed 6.1), not this.
        if not self.current_set:
            return
        size, lost = 0, False
        for die in self.sets.get(self.current_set, ()):
            if die.loc != REMOVED:
                size += 1
            if die.loc == LOST:
                lost = True
        if size != self.set_size and not lost:
            self.put("bowl_set_count", i, size)
            self.set_size = size

    def on_dice_removed(self, i: int, k: int) -> None:
        for die in self.dies_of(k):
            if die is not None:
                die.move(i, REMOVED)

    def on_dice_collected(self, i: int, k: int) -> None:
        for die in self.dies_of(k):
            if die is not None and die.loc <= LAYOUT:
                if die.loc < SHOOTER:
                    die.move(i, SHOOTER)
                else:
                    die.loc = SHOOTER  # in play still: nothing to log

    def on_dice_to_shooter(self, i: int, k: int) -> None:
        self.on_dice_collected(i, k)
        self.record_use(i, k)
        if self.decided.size:
            owed = self.owed()
            if owed:
                self.put("passed_unsettled", i, owed)

    def on_die_off_table(self, i: int, k: int) -> None:
        for die in self.dies_of(k):
            if die is not None:
                die.move(i, OFF_TABLE)
        self.offtable_row = i
        self.offtable_offered = False
        self.put("offtable_shooter", i, self.shooter)

    def on_die_retrieved(self, i: int, k: int) -> None:
        for die in self.dies_of(k):
            if die is not None:
                die.move(i, NEW)
                die.found = True
                die.found_inspections = []
                die.checked_use = False

    def on_die_lost(self, i: int, k: int) -> None:
        d = self.dice_of(k)
        for x in d:
            die = self.dice.get(x)
            if die is not None:
                die.move(i, LOST)
                self.lost_set = die.set_id
        # Dice of the set lost so far, whichever shooter lost them (NSW 3.6:
        # a new set when two dice are lost).
        self.lost_count = sum(1 for x in self.dice.values()
                              if x.set_id == self.lost_set and x.loc == LOST) \
            + sum(1 for x in d if x not in self.dice)
        self.lost_row = i
        self.lost_shooter = self.shooter
        self.lost_allowance_over = False

    # --- handlers: the shooter and the offer ---------------------------------------

    def on_dice_offered(self, i: int, k: int) -> None:
        s, d = self.seat[k], self.dice_of(k)
        if self.offtable_row >= 0 and self.shooter and s == self.shooter:
            # 6.1: the remaining dice offered to the shooter to replace a die.
            self.offtable_offered = True
            self.put("offer_round", i, ROUND_REPLACEMENT)
            self.offtable_row = -1
            self.move_row(i, k, OFFERED)
            self.record_use(i, k)
            return
        if self.round_kind < 0:
            if self.shooter == 0 and not self.ever_offered:
                self.round_kind, self.round_anchor = ROUND_START, 0
            else:
                self.round_kind, self.round_anchor = ROUND_AFTER_RELINQUISH, self.shooter
            self.round_declined = 0
        self.ever_offered = True
        self.put("offer_round", i, self.round_kind)
        self.put("offer_anchor", i, self.round_anchor)
        self.put("offer_open_seat", i, self.open_seat)
        live = self.live
        for x in live:
            if x not in d:
                self.put("offer_missing_dice", i, sorted(live.difference(d)))
                break
        self.record_use(i, k)
        self.move_row(i, k, OFFERED)

    def on_dice_declined(self, i: int, k: int) -> None:
        s = self.seat[k]
        self.round_anchor = s
        self.round_declined |= bit(s)
        self.declined_since_accept |= bit(s)

    def on_dice_accepted(self, i: int, k: int) -> None:
        s = self.seat[k]
        if self.lost_row >= 0 and s != self.lost_shooter:
            self.lost_allowance_over = True
        self.shooter = s
        self.seven_out_seat = 0
        # SD 20:18:33:08(2): dice that come back through the offer round to
        # the shooter who made the point leave them the "previous shooter".
        self.made_point = s != 0 and s == self.previous_shooter_seat
        if not self.made_point:
            self.previous_shooter_seat = 0
            self.declined_since_accept = 0
        self.selected = None
        self.round_kind = -1
        self.stick_decided = False

    def on_dice_selected(self, i: int, k: int) -> None:
        d = self.dice_of(k)
        held = frozenset(d)
        kept = []
        if self.offtable_offered and self.selected is not None and len(d) < 2:
            # 6.1: a new die chosen to replace one that left the table; the
            # shooter keeps the other die of the pair.
            kept = [x for x in self.selected if x in self.dice and self.dice[x].loc <= LAYOUT]
            held |= frozenset(kept)
        self.offtable_offered = False
        self.put("selected_dice", i, sorted(held))
        unknown = self.not_at_table(k)
        if unknown:
            self.put("dice_not_at_table", i, unknown)
        self.record_use(i, k)
        self.move_row(i, k, SHOOTER)
        for x in kept:
            self.dice[x].move(i, SHOOTER)
        self.selected = held

    def on_marker(self, i: int, k: int) -> None:
        words = set((self.inputs.value("flags", i) or "").split(","))
        self.marker_off_dp = self.outcome_of(k) == "off" and "dont_pass_line" in words

    def on_shooter_relinquish(self, i: int, k: int) -> None:
        s = self.seat[k]
        anchor = s or self.shooter
        if self.lost_row >= 0:
            self.lost_allowance_over = True
        self.shooter = 0
        self.seven_out_seat = 0
        self.selected = None
        self.round_kind = ROUND_AFTER_RELINQUISH
        self.round_anchor = anchor
        # Seed 000 5.11: the shooter who has just given up the dice is not a
        # player "available and willing" to take them (counted as declined).
        self.round_declined = bit(anchor)

    # --- handlers: the roll and what follows it --------------------------------------

    def on_roll(self, i: int, k: int) -> None:
        s, d = self.seat[k], self.dice_of(k)
        d1, d2 = self.die1[k], self.die2[k]
        # What the previous roll left unsettled is now missing.
        if self.decided.size:
            self.flush_pending()
        dies = self.dies_of(k)
        for die in dies:
            if die is None or not die.checked_use or die.loc > LAYOUT:
                # Some die unknown, not at the table or first used: the full story.
                self.record_use(i, k)
                unknown = self.not_at_table(k)
                if unknown:
                    self.put("dice_not_at_table", i, unknown)
                break
        by_player = self.role[k] == self.player
        if by_player:
            sb = bit(s)
            line_bet = self.wagers.holds_line(s)
            by_shooter = bool(s) and s == self.shooter
            self.player_roll_rows.append(i)
            self.roll_total.append(d1 + d2)
            self.roll_line_bet.append(line_bet)
            self.roll_by_shooter.append(by_shooter)
            self.roll_marker_off.append(self.marker_off_dp)
            # SD (2): once the remaining come wagers are decided, come bets
            # placed since leave the previous shooter none to throw for.
            after_point_made = self.made_point and s == self.shooter
            if self.come_count == 0:
                self.come_spent = True
            self.roll_come_wagers.append(0 if after_point_made and self.come_spent
                                         else self.come_count)
            self.roll_other_line_bettors.append(
                self.line_bettors & ~sb & ~self.declined_since_accept != 0)
            self.roll_after_point_made.append(after_point_made)
        else:
            stick_rows, total, any_wager, willing, after_decision = self.out.stick_rolls
            stick_rows.append(i)
            total.append(d1 + d2)
            any_wager.append(self.any_line_wager())
            willing.append(self.line_bettors & ~self.round_declined != 0)
            after_decision.append(self.stick_decided)
        if self.lost_row >= 0 and (self.lost_allowance_over
                                   or (by_player and s != self.lost_shooter) or not by_player):
            self.end_lost_allowance(i, d)
        for die in dies:
            if die is not None and die.loc <= LAYOUT:
                if die.loc < SHOOTER:
                    die.move(i, LAYOUT)
                else:
                    die.loc = LAYOUT  # in play still: nothing to log
        self.last_roll = i
        self.last_roll_valid = True
        self.last_roll_called = False
        self.last_roll_point = self.point
        self.face1, self.face2 = d1, d2
        self.last_roll_dice = d
        self.last_roll_by_player = by_player
        self.last_roll_seat = s
        self.last_roll_voided_rows.clear()
        self.dispute_die = None  # a dispute concerns the roll it follows
        self.decide(i)

    # (no index check: every position read is the replay's own, of seats and
    # keys the wagers took, checked, when placed, and of the decisions table)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def decide(self, i: int) -> None:
        """Apply the last roll's counted total: decide line and come bets, move
        the point, note a 7 Out. Called again if a cocked die or a ruling
        changes the total, after undoing the previous decision."""
        total = self.face1 + self.face2
        point = self.last_roll_point
        wagers, snapshot, decided = self.wagers, self.snapshot, self.decided
        # What the undo restores.
        snapshot.copy_from(wagers)
        self.undo_point, self.undo_line_bettors = self.point, self.line_bettors
        self.undo_seven_out_seat, self.undo_come_count = self.seven_out_seat, self.come_count
        self.undo_stick_decided, self.undo_made_point = self.stick_decided, self.made_point
        # (a void roll is no 7 Out: it neither ends the lost-die allowance
        # nor makes a previous shooter; issue 25, seed 000 6.1)
        self.undo_lost_allowance_over = self.lost_allowance_over
        self.undo_previous_shooter_seat = self.previous_shooter_seat
        self.undo_come_spent = self.come_spent
        decisions = self.decisions
        codes, key_fam, key_num = decisions.codes, decisions.key_fam, decisions.key_num
        row = decisions.row(point, total)
        width = snapshot.width
        decided.size = 0
        decision = False  # a wager won or lost: a determination (seed 000 5.11)
        for j in range(snapshot.n_seats):
            s = snapshot.order[j]
            start = s * width
            end = start + snapshot.held[s]
            # Each key as held before the roll, in order; the seat's wagers
            # change as they are decided.
            for m in range(start, end):
                key = snapshot.key[m]
                code = codes[row + key]
                if code == NO_DECISION:
                    continue
                count = snapshot.count[m]
                if code >= TRAVEL:
                    # An untravelled come bet travels to its number.
                    wagers.remove_at(s, wagers.find(s, key))
                    wagers.add(s, code - TRAVEL, count)
                    continue
                fam = key_fam[key]
                for _ in range(count):
                    decided.append(s, fam, key_num[key], code)
                if code != PUSH:
                    decision = True
                    wagers.remove_at(s, wagers.find(s, key))
                    if fam >= COME:
                        self.come_count -= count
                    elif not wagers.holds_line(s):
                        self.line_bettors &= ~bit(s)
        self.pending_roll = i
        if self.come_count == 0:
            self.come_spent = True
        seven_out = point != 0 and total == 7
        self.decision_rows.append(i)
        self.decision_totals.append(total)
        if point == 0:
            self.point = total if total in POINTS else 0
        elif total == point or total == 7:
            self.point = 0
        if self.last_roll_by_player:
            if point != 0 and total == point:
                self.made_point = True
                self.previous_shooter_seat = self.shooter
                if snapshot.holds_line(self.last_roll_seat):  # the come-out point made
                    self.come_spent = self.come_count == 0
            if seven_out:
                self.seven_out_seat = self.last_roll_seat
                self.previous_shooter_seat = 0
                if self.lost_row >= 0 and self.last_roll_seat == self.lost_shooter:
                    self.lost_allowance_over = True
        elif decision or seven_out:
            # A total that wins or loses no wager on the layout (a come-out
            # natural with only come bets on numbers) decides nothing: the
            # stickperson throws on.
            self.stick_decided = True

    def undo_decision(self) -> None:
        self.point, self.line_bettors = self.undo_point, self.undo_line_bettors
        self.seven_out_seat, self.come_count = self.undo_seven_out_seat, self.undo_come_count
        self.stick_decided, self.made_point = self.undo_stick_decided, self.undo_made_point
        self.lost_allowance_over = self.undo_lost_allowance_over
        self.previous_shooter_seat = self.undo_previous_shooter_seat
        self.come_spent = self.undo_come_spent
        self.wagers.copy_from(self.snapshot)
        self.decided.size = 0
        self.pending_roll = -1

    def on_total_called(self, i: int, k: int) -> None:
        if self.last_roll < 0:
            return
        r = self.last_roll
        if not self.last_roll_called:
            self.last_roll_called = True
            self.put("call_row", r, i)
        self.call_rows.append(i)
        self.call_rolls.append(r)

    def void_last_roll(self, i: int) -> None:
        if self.last_roll < 0 or not self.last_roll_valid:
            return
        r = self.last_roll
        self.last_roll_valid = False
        self.undo_decision()
        self.put("roll_voided", r, i)
        for j in range(self.last_roll_voided_rows.size):  # settled before the roll was voided
            row = self.last_roll_voided_rows.at(j)
            self.put("settled_on_void", row, r)

    def on_no_roll(self, i: int, k: int) -> None:
        self.void_last_roll(i)

    def on_dispute(self, i: int, k: int) -> None:
        if self.last_roll < 0:
            return
        d = self.dice_of(k)
        self.dispute_die = d[0] if d else None

    def on_die_cocked(self, i: int, k: int) -> None:
        # A cocked die counts the face opposite the one resting on the object.
        if self.last_roll < 0:
            return
        d, face = self.dice_of(k), self.die1[k]
        self.recount(d[0] if d else None, 7 - face if face else 0)

    def on_ruling(self, i: int, k: int) -> None:
        if self.last_roll < 0:
            return
        if self.inputs.value("reason", i) == "void":
            self.void_last_roll(i)
        else:  # face_determined: the ruling fixes the face of the disputed die
            self.recount(self.dispute_die, self.die1[k])

    def recount(self, target: str | None, counted: int) -> None:
        """A die of the last roll counts another face: the total may change."""
        if not counted or target not in self.last_roll_dice:
            return
        pos = self.last_roll_dice.index(target)
        if (self.face1, self.face2)[pos] == counted:
            return
        if pos == 0:
            self.face1 = counted
        else:
            self.face2 = counted
        if self.last_roll_valid:
            self.undo_decision()
            self.decide(self.last_roll)


__all__ = ["NO_ROLL_CONDITIONS", "ReplayState", "replay", "sparse"]
