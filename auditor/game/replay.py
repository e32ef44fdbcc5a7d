"""Replay each table's events once, in `seq` order, into state beside the
events: who holds the dice, which wagers are active, where every die is,
come-out or point, what each valid roll decided, and what was still owed when
the next thing happened.

The log is not trusted for the state of the game; this module derives it.
It is jurisdiction-neutral but for the bar number, which decides whether a
don't bet was pushed or won. Checks (in `auditor.checks`) then read the state
(`auditor.game.state.ReplayState`), mostly vectorised; none of them re-implements the game.

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
- the module is compiled by Cython at install time (`setup.py`), with the C
  types of `replay.pxd`; this file stays the one source, and runs as it is
  where nothing could be compiled (`COMPILED` says which runs). Only the
  loop and its typed containers are here: what the state's columns are and
  how they are held (`auditor.game.state`) and how the inputs are prepared
  (`auditor.game.inputs`) run once per replay, and stay plain Python.
"""

from __future__ import annotations

import functools
import gc

import numpy as np
import pandas as pd

try:
    import cython  # compiled: directives Cython reads (see the methods using them)
except ImportError:  # run uncompiled without Cython: the directives do nothing
    from auditor.game import cython_shim as cython

from auditor.game.inputs import coded, serials, values_and_nulls
from auditor.game.outcomes import POINTS, expected_outcome
from auditor.game.state import (
    BOOL_COLUMNS,
    CALL_FIELDS,
    DECISION_FIELDS,
    DENSE_COLUMNS,
    INT_COLUMNS,
    PLAYER_ROLL_FIELDS,
    SETTLE_EXPECTED,
    SETTLEMENT_FIELDS,
    SPARSE_COLUMNS,
    STICK_ROLL_FIELDS,
    UNDECIDED,
    DiceMoves,
    ReplayState,
    assemble,
    sparse,
    typed,
)
from auditor.logs.arrays import category_codes, code_counts
from auditor.logs.load import table_runs
from auditor.logs.schema import EVENTS, MAX_SEAT, NO_ROLL_CONDITIONS

#: True when this module runs compiled (a C extension built from this file).
COMPILED = not __file__.endswith(".py")

# Where a die is: the live places (at the table) are those up to LAYOUT, so
# `loc <= LAYOUT` is the hot paths' spelling of `loc in LIVE`.
NEW, BOWL, OFFERED, SHOOTER, LAYOUT, OFF_TABLE, LOST, REMOVED = range(8)
LIVE = frozenset((NEW, BOWL, OFFERED, SHOOTER, LAYOUT))

# Offer rounds.
ROUND_START, ROUND_AFTER_RELINQUISH, ROUND_REPLACEMENT = 0, 1, 2

LINE_KEYS = ("pass", "dont_pass")
#: Codes of the events `TableReplay.run` calls directly (the most frequent).
(WAGER_SETTLED, WAGER_PLACED, ROLL, DICE_COLLECTED, SETTLEMENT_COMPLETE, TOTAL_CALLED,
 DICE_TO_SHOOTER, DICE_OFFERED, DICE_TO_BOWL, DICE_SELECTED, DICE_ACCEPTED, SHOOTER_RELINQUISH,
 DICE_INSPECTED) = (EVENTS.index(e) for e in (
    "wager_settled", "wager_placed", "roll", "dice_collected", "settlement_complete",
    "total_called", "dice_to_shooter", "dice_offered", "dice_to_bowl", "dice_selected",
    "dice_accepted", "shooter_relinquish", "dice_inspected"))
#: Events that decide a roll again (a recount): see `_Output`.
DIE_COCKED, RULING = EVENTS.index("die_cocked"), EVENTS.index("ruling")
COME_FAMILY = ("come", "dont_come")
#: The families of the wagers the replay decides, by id.
FAMILIES = ("pass", "dont_pass", "come", "dont_come")
PASS, DONT_PASS, COME, DONT_COME = range(len(FAMILIES))
#: What a roll does to a wager, by id: an outcome, nothing (NO_DECISION), or
#: (TRAVEL + key) an untravelled come bet travels to that key.
OUTCOMES = SETTLE_EXPECTED[:UNDECIDED]  # ("win", "lose", "push"): the ids settle_expected keeps
WIN, LOSE, PUSH = range(len(OUTCOMES))
NO_DECISION, TRAVEL = -1, len(OUTCOMES)
#: Seats are 1..MAX_SEAT (0: none recorded), the index of per-seat arrays.
SEATS = 64
assert MAX_SEAT < SEATS

#: Rows per chunk of per-row Python lists (memory stays flat on long logs).
CHUNK_ROWS = 1 << 18


def bit(seat: int) -> int:
    return 1 << seat if 0 < seat < 63 else 0


def _ints(n: int):
    """`n` zeros, read and written one at a time by the replay: a numpy
    array when compiled (`replay.pxd` types it as a C array view), a list in
    plain Python (where indexing a list is the faster)."""
    return np.zeros(n, dtype=np.int64) if COMPILED else [0] * n


def _doubled(values):
    """`values` (from `_ints`) with as many zeros again after them."""
    return np.concatenate([values, np.zeros_like(values)]) if COMPILED else values + [0] * len(values)


def located(where: int) -> int:
    """A place as the location log names it (`state.DIE_LOCATIONS`): with
    the shooter and on the layout are one place there, in play."""
    return where - 1 if where >= LAYOUT else where


class DieLog:
    """Every die's moves from one logged place to another (`located`), in
    the order made: the row, the die (an id of `_Inputs.serial_names`),
    where to and the die's set. Room for `capacity` moves (more grow the
    buffers): as the change points, room never written is never faulted in."""

    def __init__(self, capacity: int):
        self.rows, self.die, self.where, self.set_id = (IntBuffer(capacity) for _ in range(4))

    def add(self, row: int, die: int, where: int, set_id: int) -> None:
        self.rows.append(row)
        self.die.append(die)
        self.where.append(located(where))
        self.set_id.append(set_id)


class Die:
    """One die: where it is, which set it came with, its inspection record.
    Moving it (`move`) keeps the table's set of live dice up to date, so
    nothing has to scan every die the table ever had, and logs the move
    where the logged place changes (a roll or a collection moves dice in
    play without a call: they stay in play)."""

    __slots__ = ("checked_use", "failed", "found", "found_inspections", "inspections", "live",
                 "loc", "log", "serial", "serial_id", "set_id")

    def __init__(self, serial: str, serial_id: int, set_id: int, live: set[str], log: DieLog,
                 row: int):
        self.serial = serial
        self.serial_id = serial_id
        self.live = live
        self.log = log
        self.loc = NEW
        live.add(serial)
        self.set_id = set_id
        log.add(row, serial_id, NEW, set_id)
        self.inspections: list[tuple[str, str]] = []  # passing (role, actor_id)
        self.failed = False
        self.found = False  # left the table and was found: needs its own inspection
        self.found_inspections: list[tuple[str, str]] = []
        self.checked_use = False  # first use since arrival/retrieval already recorded

    def move(self, row: int, where: int) -> None:
        if located(where) != located(self.loc):
            self.log.add(row, self.serial_id, where, self.set_id)
        self.loc = where
        if where <= LAYOUT:
            self.live.add(self.serial)
        else:
            self.live.discard(self.serial)


class IntBuffer:
    """A column of 64-bit integers appended one at a time: a numpy array
    that doubles when full. Compiled, an append is a store into the array's
    memory (`replay.pxd` types it); a list would hold a Python int per value,
    scattered in memory, each to be converted again at the end."""

    def __init__(self, capacity: int = 4096):
        self.array = np.empty(capacity, dtype=np.int64)
        self.data = self.array
        self.size = 0

    # (no index check: `size` is below the length, the buffer grown first)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def append(self, value: int) -> None:
        if self.size == self.data.shape[0]:
            self.grow()
        self.data[self.size] = value
        self.size += 1

    def grow(self) -> None:
        """Twice the room (apart from `append`, which stays a few machine
        instructions once compiled)."""
        grown = np.empty(max(2 * self.size, 16), dtype=np.int64)
        grown[:self.size] = self.array
        self.array = self.data = grown

    def at(self, j: int) -> int:
        return self.data[j]

    def clear(self) -> None:
        self.size = 0

    def last(self) -> int:
        return self.data[self.size - 1]

    def take(self) -> np.ndarray:
        """The values so far (a copy), the buffer emptied."""
        out = self.array[:self.size].copy()
        self.size = 0
        return out

    def values(self) -> np.ndarray:
        """The values so far, in place (a view of the buffer)."""
        return self.array[:self.size]


class _Output:
    """Where the replay writes: the dense state as change points (a row and
    the four values from that row on, recorded only when one of them moves),
    and per sparse column the rows and values written (last write to a row
    wins).

    The change points and the columns written together (`_columns`) go to
    `IntBuffer`s made as large as they can get (a change per row at most; a
    roll's columns once per roll, ...: `counts` says how many events there
    are of each type), so they are written in place, never grown, moved nor
    copied, and only the memory written is ever faulted in; they are taken
    as they are at the end. What `TableReplay.put` writes goes to an
    `IntBuffer` of rows and a list of values per column; `flush`, after
    every chunk of rows, moves those into numpy pieces, so the Python objects
    held stay a chunk's worth however long the log."""

    def __init__(self, n: int, counts: np.ndarray | None = None):
        self.n = n
        counts = np.zeros(len(EVENTS), dtype=np.int64) if counts is None else counts
        rolls = int(counts[ROLL])
        self.changes = tuple(IntBuffer(n) for _ in range(1 + len(DENSE_COLUMNS)))
        self.rows: dict[str, IntBuffer] = {name: IntBuffer(256) for name in SPARSE_COLUMNS}
        self.values: dict[str, list] = {name: [] for name in SPARSE_COLUMNS}
        #: (rows, values) of each sparse column, for `TableReplay.put`
        self.sinks = {name: (self.rows[name], self.values[name]) for name in SPARSE_COLUMNS}
        # (a decision again for each recount: a cocked die, a ruling)
        self.decisions = _columns(DECISION_FIELDS, rolls + int(counts[DIE_COCKED])
                                  + int(counts[RULING]))
        self.settlements = _columns(SETTLEMENT_FIELDS, int(counts[WAGER_SETTLED]))
        self.calls = _columns(CALL_FIELDS, int(counts[TOTAL_CALLED]))
        self.player_rolls = _columns(PLAYER_ROLL_FIELDS, rolls)
        self.stick_rolls = _columns(STICK_ROLL_FIELDS, rolls)
        self.columns_written = ((self.decisions, DECISION_FIELDS),
                                (self.settlements, SETTLEMENT_FIELDS),
                                (self.calls, CALL_FIELDS),
                                (self.player_rolls, PLAYER_ROLL_FIELDS),
                                (self.stick_rolls, STICK_ROLL_FIELDS))
        self.pieces: dict[str, list[tuple[np.ndarray, object]]] = {
            name: [] for name in SPARSE_COLUMNS}
        self.die_log = DieLog(max(n, 16))  # (a move per row, about)

    def flush(self) -> None:
        """Move what `put` wrote so far into numpy pieces. The lists are
        emptied in place: the table replay holds them (and their appends)."""
        for name in SPARSE_COLUMNS:
            rows, values = self.sinks[name]
            if rows.size:
                self.pieces[name].append((rows.take(), typed(values, name)))
                values.clear()

    def finish(self, serial_names: list[str] | None = None) -> ReplayState:
        self.flush()
        # (the columns written together after what `put` wrote: no row has
        # both, so the order of the pieces decides nothing)
        together = [(rows.values(), [(name, values.values() if isinstance(values, IntBuffer)
                                      else values) for name, values in zip(fields, columns)])
                    for (rows, *columns), fields in self.columns_written if rows.size]
        changes = [values.values() for values in self.changes] if self.changes[0].size \
            else None
        log = self.die_log
        moves = DiceMoves(self.n, *(b.values() for b in (log.rows, log.die, log.where,
                                                         log.set_id)), serial_names or [])
        return assemble(self.n, changes, self.pieces, together, moves)


def _columns(fields: tuple[str, ...], rows: int) -> tuple:
    """Where columns written together go, room for `rows` rows: their rows,
    then a buffer per field (an IntBuffer for numbers and booleans, a list
    for the rest)."""
    return (IntBuffer(rows), *(IntBuffer(rows) if name in INT_COLUMNS or name in BOOL_COLUMNS
                               else [] for name in fields))


# --- what is worked out once per distinct value ------------------------------

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


def _bet_info(name: str) -> tuple[str, int, str, bool]:
    """(family, number, wager key, whether the replay tracks the wager)."""
    fam, num = _split_bet(name)
    return fam, num, _bet_name(fam, num), fam in LINE_KEYS or fam in COME_FAMILY


#: Rows of `_Decisions.codes`: one per point * 13 + total, and a last one
#: worked out again for each (point, total) outside 0..12 (a malformed total).
DECISION_ROWS = 13 * 13 + 1


class _Decisions:
    """What a roll of `total` with the table at `point` does to each wager
    key the log can hold (ids: positions in `keys`): an entry of `codes` per
    key (see OUTCOMES), in a row per (point, total) worked out on first use.
    Every key is of a family the replay decides (`FAMILIES`)."""

    def __init__(self, bar: int, keys):
        self.bar = bar
        travelled = [_bet_name(f, n) for f in COME_FAMILY for n in sorted(POINTS)]
        self.keys = tuple(dict.fromkeys([*keys, *travelled]))
        self.width = len(self.keys)
        self.index = {key: j for j, key in enumerate(self.keys)}
        self.key_fam = _ints(self.width)
        self.key_num = _ints(self.width)
        for j, key in enumerate(self.keys):
            fam, num = _split_bet(key)
            self.key_fam[j] = FAMILIES.index(fam)
            self.key_num[j] = num
        self.codes = _ints(DECISION_ROWS * self.width)
        self.built = _ints(DECISION_ROWS)

    def row(self, point: int, total: int) -> int:
        """Where the (point, total) row of `codes` starts."""
        slot = point * 13 + total if 0 <= point <= 12 and 0 <= total <= 12 \
            else DECISION_ROWS - 1
        start = slot * self.width
        if not self.built[slot]:
            for j, key in enumerate(self.keys):
                self.codes[start + j] = self.code(key, point, total)
            self.built[slot] = slot != DECISION_ROWS - 1
        return start

    def code(self, key: str, point: int, total: int) -> int:
        fam, num = _split_bet(key)
        if fam in COME_FAMILY and num == 0 and total in POINTS:
            return TRAVEL + self.index[_bet_name(fam, total)]
        result = expected_outcome(fam, num, point, total, self.bar)
        return NO_DECISION if result is None else OUTCOMES.index(result)


class Wagers:
    """The wagers the replay decides that a table's seats hold: per seat, the
    keys held (ids of `_Decisions.keys`) and how many of each, in the order
    first held, and the seats in the order they first held one. Those are
    the orders a dict per seat kept: they decide the order of what a roll
    decides, and so which settlement is matched to which decision.

    Flat integer arrays (seat s's keys from s * width on), so that compiled
    no wager is a Python object and a roll's undo snapshot (`copy_from`) is
    a copy of a few integers."""

    def __init__(self, width: int, key_fam):
        self.width = width
        self.key_fam = key_fam
        self.order = _ints(SEATS)
        self.n_seats = 0
        self.present = _ints(SEATS)
        self.held = _ints(SEATS)
        self.key = _ints(SEATS * width)
        self.count = _ints(SEATS * width)

    def as_dict(self) -> dict[int, dict[int, int]]:
        """{seat: {key: count}} in the orders held (for tests and debugging)."""
        out = {}
        for j in range(self.n_seats):
            s = self.order[j]
            out[s] = {self.key[m]: self.count[m]
                      for m in range(s * self.width, s * self.width + self.held[s])}
        return out

    # (no index check: the seats listed were checked when added)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def clear(self) -> None:
        for j in range(self.n_seats):
            self.present[self.order[j]] = 0
        self.n_seats = 0

    # (no index check: every seat and key position copied was written, checked,
    # when `other` took the wager; both have the same shape)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def copy_from(self, other: Wagers) -> None:
        self.clear()
        width = self.width
        for j in range(other.n_seats):
            s = other.order[j]
            self.order[j] = s
            self.present[s] = 1
            self.held[s] = other.held[s]
            for m in range(s * width, s * width + other.held[s]):
                self.key[m] = other.key[m]
                self.count[m] = other.count[m]
        self.n_seats = other.n_seats

    def add_seat(self, s: int) -> None:
        if not self.present[s]:
            self.present[s] = 1
            self.held[s] = 0
            self.order[self.n_seats] = s
            self.n_seats += 1

    def drop_seat(self, s: int) -> None:
        """The seat and its wagers gone (a player left)."""
        if not self.present[s]:
            return
        self.present[s] = 0
        at = 0
        while self.order[at] != s:
            at += 1
        for j in range(at, self.n_seats - 1):
            self.order[j] = self.order[j + 1]
        self.n_seats -= 1

    def find(self, s: int, key: int) -> int:
        """Where seat `s` holds `key` (an index of `key`/`count`), or -1."""
        if self.present[s]:
            for m in range(s * self.width, s * self.width + self.held[s]):
                if self.key[m] == key:
                    return m
        return -1

    def add(self, s: int, key: int, count: int) -> None:
        """`count` more of `key` for seat `s` (held already: at the end)."""
        m = self.find(s, key)
        if m >= 0:
            self.count[m] += count
        else:
            m = s * self.width + self.held[s]
            self.key[m] = key
            self.count[m] = count
            self.held[s] += 1

    def remove_at(self, s: int, at: int) -> None:
        """Seat `s` no longer holds the key at `at` (the rest keep their order)."""
        for m in range(at, s * self.width + self.held[s] - 1):
            self.key[m] = self.key[m + 1]
            self.count[m] = self.count[m + 1]
        self.held[s] -= 1

    def first_of(self, s: int, fam: int) -> int:
        """Where seat `s` holds its first key of family `fam`, or -1."""
        if self.present[s]:
            for m in range(s * self.width, s * self.width + self.held[s]):
                if self.key_fam[self.key[m]] == fam:
                    return m
        return -1

    def holds_line(self, s: int) -> bool:
        """Whether seat `s` holds a pass or don't pass wager."""
        return self.first_of(s, PASS) >= 0 or self.first_of(s, DONT_PASS) >= 0

    def come_held(self, s: int) -> int:
        """How many come and don't come wagers seat `s` holds."""
        n = 0
        if self.present[s]:
            for m in range(s * self.width, s * self.width + self.held[s]):
                if self.key_fam[self.key[m]] >= COME:
                    n += self.count[m]
        return n


class Decided:
    """What the last valid roll decided and is still to be settled, in the
    order decided: per wager its seat, family, number and outcome (ids)."""

    def __init__(self, capacity: int = 64):
        self.size = 0
        self.seat, self.fam = _ints(capacity), _ints(capacity)
        self.num, self.outcome = _ints(capacity), _ints(capacity)

    # (no index check: `size` is below the length, the arrays grown first)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def append(self, s: int, fam: int, num: int, outcome: int) -> None:
        if self.size == len(self.seat):
            self.seat, self.fam = _doubled(self.seat), _doubled(self.fam)
            self.num, self.outcome = _doubled(self.num), _doubled(self.outcome)
        j = self.size
        self.seat[j], self.fam[j], self.num[j], self.outcome[j] = s, fam, num, outcome
        self.size += 1

    # (no index check: `at` is a position below `size`, as are those moved)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def remove(self, at: int) -> None:
        for j in range(at, self.size - 1):
            self.seat[j], self.fam[j] = self.seat[j + 1], self.fam[j + 1]
            self.num[j], self.outcome[j] = self.num[j + 1], self.outcome[j + 1]
        self.size -= 1


class _Inputs:
    """The columns the replay reads, prepared once, vectorised; `chunk` gives
    rows [a, b) as whole numbers for the loop: integer columns, and text
    columns as codes into a list of values (`dice`, `role`, `outcome`) or
    into what was worked out once per distinct bet (`bet_*`). A code of -1
    (nothing recorded) indexes the last position, which holds the value for
    nothing (negative indexing, of lists and of the typed memoryviews alike:
    `replay.pxd` must not turn Cython's `wraparound` off)."""

    #: Read by few events (inspections, rulings, markers): looked up by row
    #: (`value`) instead of being put in the chunks.
    RARE = ("actor_id", "reason", "flags")

    def __init__(self, events: pd.DataFrame, bar: int):
        self.event = category_codes(events["event"]) \
            if isinstance(events["event"].dtype, pd.CategoricalDtype) else \
            events["event"].map({e: c for c, e in enumerate(EVENTS)}).fillna(-1) \
            .to_numpy(dtype=np.int64)
        self.ints = {name: values_and_nulls(events[name]) for name in ("seat", "die1", "die2")}
        self.rare = {name: coded(events[name]) for name in self.RARE}
        self.codes = {}
        self.codes["role"], self.roles = coded(events["actor_role"])
        self.player = self.roles.index("player") if "player" in self.roles else -2
        self.codes["outcome"], self.outcomes = coded(events["outcome"])
        self.outcome_id = _ints(len(self.outcomes))  # as OUTCOMES, -1 for the rest
        for j, value in enumerate(self.outcomes):
            self.outcome_id[j] = OUTCOMES.index(value) if value in OUTCOMES else -1
        self.codes["dice"], self.dice = coded(events["dice"],
                                               serials, ())
        # Per distinct dice value: its dice (`TableReplay.dies_of`), and the
        # generation of the table's dice they were looked up in.
        self.die_cache: list = [None] * len(self.dice)
        self.die_generation = _ints(len(self.dice))
        for j in range(len(self.dice)):
            self.die_generation[j] = -1
        self.generations = 0
        self.serial_names: list[str] = []  # the dice received, by id (`serial_id`)
        self.serial_ids: dict[str, int] = {}
        self.codes["bet"], values = coded(events["bet"])
        bets = [_bet_info(str(v)) for v in values[:-1]]
        self.decisions = _Decisions(bar, [key for _, _, key, tracked in bets if tracked])
        # Per distinct bet: its key (-1 for a bet the replay does not decide),
        # family and number.
        self.bet_key, self.bet_fam, self.bet_num = (_ints(len(bets) + 1) for _ in range(3))
        self.bet_key[len(bets)] = self.bet_fam[len(bets)] = -1
        for j, (fam, num, key, tracked) in enumerate(bets):
            self.bet_key[j] = self.decisions.index[key] if tracked else -1
            self.bet_fam[j] = FAMILIES.index(fam) if tracked else -1
            self.bet_num[j] = num
        self.buffers = {name: np.empty(min(CHUNK_ROWS, len(self.event)), dtype=np.int64)
                        for name in (*self.ints, *self.codes, "event")}

    def chunk(self, a: int, b: int) -> dict:
        """Rows [a, b) (at most CHUNK_ROWS). The codes are written into the
        same arrays chunk after chunk: arrays made afresh each time would be
        memory the kernel zeroes again each time (the previous chunk's
        replay is over when the next is asked for)."""
        out = {}
        for name, (values, nulls) in self.ints.items():
            out[name] = self.buffers[name][:b - a]
            if nulls is None:
                np.copyto(out[name], values[a:b], casting="unsafe")
            else:  # nothing recorded: 0 (a multiplication: numpy's masked copy is slower)
                np.multiply(values[a:b], ~nulls[a:b], out=out[name], casting="unsafe")
        for name, codes in self.codes.items():
            # (-1, nothing recorded, indexes the last entry of the values)
            out[name] = self.buffers[name][:b - a]
            np.copyto(out[name], codes[a:b], casting="unsafe")
        out["event"] = self.buffers["event"][:b - a]
        np.copyto(out["event"], self.event[a:b], casting="unsafe")
        return out if COMPILED else {name: values.tolist() for name, values in out.items()}

    def serial_id(self, serial: str) -> int:
        """The id of a serial the replay received (the first time: the next)."""
        got = self.serial_ids.get(serial)
        if got is None:
            got = self.serial_ids[serial] = len(self.serial_names)
            self.serial_names.append(serial)
        return got

    def next_generation(self) -> int:
        """A number no table's dice have had yet (see `TableReplay.dies_of`)."""
        self.generations += 1
        return self.generations

    def value(self, name: str, row: int):
        """The value of a `RARE` column at `row` (None if nothing recorded)."""
        codes, lut = self.rare[name]
        return lut[codes[row]]


# --- the replay ----------------------------------------------------------------

def replay(events: pd.DataFrame, bar: int = 12) -> ReplayState:
    """State for `events` (ordered by table, seq), one row per event."""
    n = len(events)
    if n == 0:
        return _Output(0).finish()
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
    inputs = _Inputs(events, bar)
    out = _Output(n, code_counts(inputs.event, len(EVENTS)))
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
    return out.finish(inputs.serial_names)


class TableReplay:
    """State of one table between two `table_open`s, and one handler per
    event type (`on_<event>`), each called with the row's position `i` and
    its index `k` in the current chunk's lists."""

    def __init__(self, out: _Output, inputs: _Inputs):
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
        self.wagers = Wagers(self.decisions.width, self.decisions.key_fam)
        self.snapshot = Wagers(self.decisions.width, self.decisions.key_fam)
        self.decided = Decided()
        # The records written most often: rows and values.
        self.decision_rows, self.decision_totals = out.decisions
        (self.player_roll_rows, self.roll_total, self.roll_line_bet, self.roll_by_shooter,
         self.roll_marker_off, self.roll_come_wagers, self.roll_other_line_bettors,
         self.roll_after_point_made) = out.player_rolls
        self.settle_rows, self.settle_expected, self.settle_decided_by = out.settlements
        self.call_rows, self.call_rolls = out.calls
        self.reset()

    def reset(self) -> None:
        self.point = 0
        self.occupied = 0
        self.open_seat = 0
        self.shooter = 0
        self.seven_out_seat = 0
        self.made_point = False  # the shooter has made a point since accepting the dice
        # SD 20:18:33:08(2)'s "previous shooter": the seat whose hand made the
        # point, until a 7 Out or another player accepting the dice (0: none).
        self.previous_shooter_seat = 0
        # (2)'s "remaining come or don't come wagers", those on the layout when
        # the point was made, have all been decided (or none were left).
        self.come_spent = False
        # Seats that declined the dice since the shooter accepted them (in a
        # round that gave them back to the previous shooter): not players who
        # would shoot.
        self.declined_since_accept = 0
        self.selected: frozenset[str] | None = None
        self.wagers.clear()
        self.snapshot.clear()  # the wagers the undo would restore
        self.come_count = 0  # come and don't come wagers held, all seats together
        self.line_bettors = 0
        self.dice: dict[str, Die] = {}
        self.generation = self.inputs.next_generation()
        self.live: set[str] = set()  # serials of the dice at the table (see Die.move)
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
        self.last_roll_called = False
        self.last_roll_point = 0
        self.last_roll_voided_rows = IntBuffer(64)  # settled since the last roll
        self.decided.size = 0
        self.pending_roll = -1  # the roll that decided what `decided` holds
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

    def bind(self, rows: dict, base: int) -> None:
        """The current chunk's columns (row `i` is `base + k`; see `_Inputs.chunk`)."""
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
        return [{"seat": d.seat[j], "bet": _bet_name(FAMILIES[d.fam[j]], d.num[j]),
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
        self.reset()
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
