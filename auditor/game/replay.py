"""Replay each table's events once, in `seq` order, into state beside the
events: who holds the dice, which wagers are active, where every die is,
come-out or point, what each valid roll decided, and what was still owed when
the next thing happened.

The log is not trusted for the state of the game; this module derives it.
It is jurisdiction-neutral but for the bar number, which decides whether a
don't bet was pushed or won. Checks (in `auditor.checks`) then read the state
(`ReplayState`), mostly vectorised; none of them re-implements the game.

The loop is the audit's hot path and is kept lean on purpose:

- everything that can be worked out per distinct value is worked out once,
  vectorised, before the loop: event codes index a list of handlers (one
  method per event type), dice lists are split once per distinct text, bet
  names parsed once per distinct bet, line-bet decisions looked up in a table
  built once per (point, total);
- the per-row inputs are turned into Python lists a chunk of rows at a time,
  so memory stays flat however long the log;
- state written on few rows (`SPARSE_COLUMNS`) is appended to growing arrays,
  never to a column as long as the log;
- a roll's decision can be undone (no roll, cocked die, ruling): the wagers
  are snapshotted copy-on-write, so only a seat whose wagers change is copied;
- the dense state is recorded only where it changes;
- the module is compiled by Cython at install time (`setup.py`), with the C
  types of `replay.pxd`; this file stays the one source, and runs as it is
  where nothing could be compiled (`COMPILED` says which runs).
"""

from __future__ import annotations

import functools
import gc

import numpy as np
import pandas as pd

from auditor.game.outcomes import POINTS, expected_outcome
from auditor.logs.schema import EVENTS, NO_ROLL_CONDITIONS

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
 DICE_TO_SHOOTER) = (EVENTS.index(e) for e in (
    "wager_settled", "wager_placed", "roll", "dice_collected", "settlement_complete",
    "total_called", "dice_to_shooter"))
COME_FAMILY = ("come", "dont_come")

#: Rows per chunk of per-row Python lists (memory stays flat on long logs).
CHUNK_ROWS = 1 << 18


def bit(seat: int) -> int:
    return 1 << seat if 0 < seat < 63 else 0


class Die:
    """One die: where it is, which set it came with, its inspection record.
    Moving it (`move`) keeps the table's set of live dice up to date, so
    nothing has to scan every die the table ever had."""

    __slots__ = ("checked_use", "failed", "found", "found_inspections", "inspections", "live",
                 "loc", "serial", "set_id")

    def __init__(self, serial: str, set_id: int, live: set[str]):
        self.serial = serial
        self.live = live
        self.loc = NEW
        live.add(serial)
        self.set_id = set_id
        self.inspections: list[tuple[str, str]] = []  # passing (role, actor_id)
        self.failed = False
        self.found = False  # left the table and was found: needs its own inspection
        self.found_inspections: list[tuple[str, str]] = []
        self.checked_use = False  # first use since arrival/retrieval already recorded

    def move(self, where: int) -> None:
        self.loc = where
        if where <= LAYOUT:
            self.live.add(self.serial)
        else:
            self.live.discard(self.serial)


#: State written only on the rows it concerns (nothing elsewhere). Every name
#: is always present in the state, so checks never meet a missing column.
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
#: Sparse columns whose value may be None (then the row counts as not written).
NULLABLE_COLUMNS = frozenset(("relinquish_roles",))
#: Sparse columns holding whole numbers, and those holding booleans: kept as
#: numpy arrays once the replay ends (read back as Python ints and bools).
INT_COLUMNS = frozenset((
    "roll_total", "roll_counted_total", "roll_point_before", "roll_voided", "roll_come_wagers",
    "call_row", "call_expected", "call_roll", "settle_roll", "settled_on_void", "offer_round",
    "offer_anchor", "offer_open_seat", "received_count", "bowl_set_count", "live_count",
    "selected_count", "offtable_shooter", "lost_shooter"))
BOOL_COLUMNS = frozenset((
    "roll_seven_out", "roll_line_bet", "roll_by_shooter", "roll_after_seven_out",
    "roll_marker_off", "roll_other_line_bettors", "roll_after_point_made", "stick_any_wager",
    "stick_willing", "stick_after_decision", "passed_then_settled", "seat_unknown"))
#: State every row carries: the value before the row's event (seats are
#: 1..62, points 4..10, seat sets bits of a 64-bit mask).
DENSE_COLUMNS: dict[str, type] = {"shooter": np.int16, "point": np.int8,
                                  "occupied": np.int64, "line_bettors": np.int64}

#: Sparse columns written together: on every roll by a player, on every
#: stickperson's roll, by every decision of a roll (again if a recount changes
#: it), and by every settlement matched to what the last roll decided.
PLAYER_ROLL_FIELDS = ("roll_dice", "roll_total", "roll_point_before", "roll_line_bet",
                      "roll_by_shooter", "roll_marker_off", "roll_come_wagers",
                      "roll_other_line_bettors", "roll_after_point_made")
STICK_ROLL_FIELDS = ("roll_dice", "roll_total", "roll_point_before", "stick_any_wager",
                     "stick_willing", "stick_after_decision")
DECISION_FIELDS = ("roll_counted_total", "roll_seven_out")
SETTLEMENT_FIELDS = ("settle_expected", "settle_roll")


class ReplayState:
    """What the replay derived, beside the events (positions 0..n-1).

    Dense columns (`DENSE_COLUMNS`) are integer arrays: `state["point"]`.
    Sparse columns (`SPARSE_COLUMNS`) hold a value on the rows they concern
    only: `written(name)` gives those rows (ascending) and their values,
    `mask(name)` the rows as a boolean mask, `at(name, row)` one value.
    """

    def __init__(self, n: int, dense: dict[str, np.ndarray],
                 sparse: dict[str, tuple[np.ndarray, list]]):
        self.n = n
        self.dense = dense
        self.sparse = sparse
        self._lookups: dict[str, dict[int, object]] = {}

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, name: str) -> np.ndarray:
        return self.dense[name]

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.dense, *self.sparse)

    def written(self, name: str) -> tuple[np.ndarray, list]:
        """Rows where the replay wrote `name`, ascending, and the values."""
        rows, values = self.sparse[name]
        return rows, _listed(values)

    def rows(self, name: str) -> np.ndarray:
        return self.sparse[name][0]

    def mask(self, name: str) -> np.ndarray:
        out = np.zeros(self.n, dtype=bool)
        out[self.sparse[name][0]] = True
        return out

    def lookup(self, name: str) -> dict[int, object]:
        """{row: value} of a sparse column (built once, on first use)."""
        got = self._lookups.get(name)
        if got is None:
            rows, values = self.sparse[name]
            got = self._lookups[name] = dict(zip(rows.tolist(), _listed(values)))
        return got

    def at(self, name: str, row: int, default=None):
        return self.lookup(name).get(int(row), default)

    def values_at(self, name: str, rows) -> list:
        look = self.lookup(name)
        return [look.get(int(r)) for r in rows]

    def column(self, name: str) -> np.ndarray:
        """A sparse column spelled out as an object array (None elsewhere)."""
        if name in self.dense:
            return self.dense[name]
        out = np.full(self.n, None, dtype=object)
        rows, values = self.sparse[name]
        for r, v in zip(rows.tolist(), _listed(values)):
            out[r] = v
        return out

    def frame(self, index=None) -> pd.DataFrame:
        """Every column as a DataFrame (for inspection; the checks do not need it)."""
        data = {name: self.column(name) for name in self.columns}
        return pd.DataFrame(data, index=index)


def _listed(values) -> list:
    return values.tolist() if isinstance(values, np.ndarray) else list(values)


class IntBuffer:
    """A column of 64-bit integers appended one at a time: a numpy array
    that doubles when full. Compiled, an append is a store into the array's
    memory (`replay.pxd` types it); a list would hold a Python int per value,
    scattered in memory, each to be converted again at the end."""

    def __init__(self, capacity: int = 4096):
        self.array = np.empty(capacity, dtype=np.int64)
        self.data = self.array
        self.size = 0

    def append(self, value: int) -> None:
        if self.size == self.data.shape[0]:
            self.array = np.concatenate([self.array, np.empty_like(self.array)])
            self.data = self.array
        self.data[self.size] = value
        self.size += 1

    def last(self) -> int:
        return self.data[self.size - 1]

    def take(self) -> np.ndarray:
        """The values so far (a copy), the buffer emptied."""
        out = self.array[:self.size].copy()
        self.size = 0
        return out


class _Output:
    """Where the replay writes: the dense state as change points (a row and
    the four values from that row on, recorded only when one of them moves),
    and per sparse column the rows and values written (last write to a row
    wins).

    Rows and the dense state go to `IntBuffer`s, values to lists; `flush`,
    after every chunk of rows, moves them into numpy pieces, so the Python
    objects held stay a chunk's worth however long the log."""

    def __init__(self, n: int):
        self.n = n
        self.changes = tuple(IntBuffer() for _ in range(1 + len(DENSE_COLUMNS)))
        self.change_pieces: list[list[np.ndarray]] = []
        self.rows: dict[str, IntBuffer] = {name: IntBuffer(256) for name in SPARSE_COLUMNS}
        self.values: dict[str, list] = {name: [] for name in SPARSE_COLUMNS}
        #: (rows, values) of each sparse column, for `TableReplay.put`
        self.sinks = {name: (self.rows[name], self.values[name]) for name in SPARSE_COLUMNS}
        self.decisions = _columns(DECISION_FIELDS)
        self.settlements = _columns(SETTLEMENT_FIELDS)
        self.player_rolls = _columns(PLAYER_ROLL_FIELDS)
        self.stick_rolls = _columns(STICK_ROLL_FIELDS)
        self.columns_written = ((self.decisions, DECISION_FIELDS),
                                (self.settlements, SETTLEMENT_FIELDS),
                                (self.player_rolls, PLAYER_ROLL_FIELDS),
                                (self.stick_rolls, STICK_ROLL_FIELDS))
        self.pieces: dict[str, list[tuple[np.ndarray, object]]] = {
            name: [] for name in SPARSE_COLUMNS}

    def flush(self) -> None:
        """Move what was written so far into numpy pieces. The lists are
        emptied in place: the table replay holds them (and their appends)."""
        if self.changes[0].size:
            self.change_pieces.append([values.take() for values in self.changes])
        for name in SPARSE_COLUMNS:
            rows, values = self.sinks[name]
            if rows.size:
                self.pieces[name].append((rows.take(), _typed(values, name)))
                values.clear()
        for (rows, *columns), fields in self.columns_written:
            if rows.size:
                at = rows.take()  # once for all the fields
                for name, values in zip(fields, columns):
                    if isinstance(values, IntBuffer):
                        taken = values.take()
                        piece = taken.astype(bool) if name in BOOL_COLUMNS else taken
                    else:
                        piece = _typed(values, name)
                        values.clear()
                    self.pieces[name].append((at, piece))

    def dense(self) -> dict[str, np.ndarray]:
        """The dense columns spelled out from the change points."""
        if not self.change_pieces:
            return {name: np.zeros(self.n, dtype=dtype) for name, dtype in DENSE_COLUMNS.items()}
        changes = [np.concatenate(column) for column in zip(*self.change_pieces)]
        counts = np.diff(np.append(changes[0], self.n))
        return {name: np.repeat(values.astype(dtype), counts)
                for (name, dtype), values in zip(DENSE_COLUMNS.items(), changes[1:])}

    def finish(self) -> ReplayState:
        self.flush()
        sparse = {name: _settle(self.pieces.pop(name), name) for name in SPARSE_COLUMNS}
        dense = self.dense()
        self.change_pieces = []
        return ReplayState(self.n, dense, sparse)


def _columns(fields: tuple[str, ...]) -> tuple:
    """Where columns written together go: their rows, then a buffer per
    field (an IntBuffer for numbers and booleans, a list for the rest)."""
    return (IntBuffer(), *(IntBuffer() if name in INT_COLUMNS or name in BOOL_COLUMNS else []
                           for name in fields))


def _typed(values: list | tuple, name: str):
    """A piece of a sparse column's values: numpy for numbers and booleans."""
    if name in INT_COLUMNS:
        return np.fromiter(values, dtype=np.int64, count=len(values))
    if name in BOOL_COLUMNS:
        return np.fromiter(values, dtype=bool, count=len(values))
    return list(values)


def _settle(pieces: list[tuple[np.ndarray, object]], name: str) -> tuple[np.ndarray, object]:
    """One sparse column from its pieces (in the order written): rows
    ascending, one value per row (the last written), None dropped; numbers
    and booleans as numpy arrays."""
    pieces = [(rows, values) for rows, values in pieces if len(rows)]
    numeric = name in INT_COLUMNS or name in BOOL_COLUMNS
    if not pieces:
        return np.empty(0, np.int64), []
    if len(pieces) == 1:
        r, values = pieces[0]
    else:
        r = np.concatenate([rows for rows, _ in pieces])
        values = np.concatenate([v for _, v in pieces]) if numeric else \
            [v for _, vs in pieces for v in vs]
    if len(r) > 1 and not (r[1:] > r[:-1]).all():
        order = np.argsort(r, kind="stable")
        r = r[order]
        last = np.ones(len(r), dtype=bool)
        last[:-1] = r[1:] != r[:-1]
        keep = order[last]
        r = r[last]
        values = values[keep] if numeric else [values[j] for j in keep.tolist()]
    if name in NULLABLE_COLUMNS and any(v is None for v in values):
        ok = [v is not None for v in values]
        r = r[np.asarray(ok, dtype=bool)]
        values = [v for v, good in zip(values, ok) if good]
    return r, values


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


class _Decisions:
    """What a roll of `total` with the table at `point` does to each wager
    key: None (nothing), a key (an untravelled come bet travels there), or
    (family, number, outcome). Worked out once per (point, total) for every
    key the log can hold, with the set of keys the roll affects, so a seat
    holding none of them is passed over."""

    def __init__(self, bar: int, keys):
        self.bar = bar
        travelled = [_bet_name(f, n) for f in COME_FAMILY for n in sorted(POINTS)]
        self.keys = tuple(dict.fromkeys([*keys, *travelled]))
        #: (table, affected keys) at [point * 13 + total], built on first use
        self.tables: list[tuple[dict, frozenset] | None] = [None] * (13 * 13)

    def table(self, point: int, total: int) -> tuple[dict, frozenset]:
        slot = point * 13 + total if 0 <= point <= 12 and 0 <= total <= 12 else -1
        got = self.tables[slot] if slot >= 0 else None
        if got is None:
            table = {key: self.decide(key, point, total) for key in self.keys}
            affected = frozenset(key for key, v in table.items() if v is not None)
            got = (table, affected)
            if slot >= 0:
                self.tables[slot] = got
        return got

    def decide(self, key: str, point: int, total: int):
        fam, num = _split_bet(key)
        if fam in COME_FAMILY and num == 0 and total in POINTS:
            return _bet_name(fam, total)
        result = expected_outcome(fam, num, point, total, self.bar)
        return None if result is None else (fam, num, result)


_MISSING = object()


def _holds_any(held: dict, keys: frozenset) -> bool:
    """Whether `held` (a seat's wagers) has any of `keys`."""
    for key in held:
        if key in keys:
            return True
    return False


def _coded(column: pd.Series) -> tuple[np.ndarray, list]:
    """Codes (-1 for nothing recorded) and the distinct values they index."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), list(column.cat.categories)
    codes, uniques = pd.factorize(column.astype(object), use_na_sentinel=True)
    return codes, list(uniques)


class _Inputs:
    """The columns the replay reads, prepared once, vectorised; `chunk` turns
    rows [a, b) into Python lists for the loop."""

    TEXT = ("actor_role", "outcome")
    #: Read by few events (inspections, rulings, markers): looked up by row
    #: (`value`) instead of being turned into lists.
    RARE = ("actor_id", "reason", "flags")

    def __init__(self, events: pd.DataFrame):
        self.event = events["event"].cat.codes.to_numpy() \
            if isinstance(events["event"].dtype, pd.CategoricalDtype) else \
            events["event"].map({e: c for c, e in enumerate(EVENTS)}).fillna(-1) \
            .to_numpy(dtype=np.int64)
        self.table = _coded(events["table_id"])[0]
        self.ints = {name: events[name] for name in ("seat", "die1", "die2")}
        self.rare = {}
        for name in self.RARE:
            codes, values = _coded(events[name])
            self.rare[name] = (codes, _lut(values, None))
        self.coded = {}
        for name in self.TEXT:
            codes, values = _coded(events[name])
            self.coded[name] = (codes, _lut(values, None))
        codes, values = _coded(events["dice"])
        self.coded["dice"] = (codes, _lut([tuple(str(v).split(",")) for v in values], ()))
        codes, values = _coded(events["bet"])
        bets = [_bet_info(str(v)) for v in values]
        self.coded["bet"] = (codes, _lut(bets, None))
        self.wager_keys = [key for _, _, key, tracked in bets if tracked]

    def chunk(self, a: int, b: int) -> dict[str, list]:
        ints = {name: col.iloc[a:b].to_numpy(dtype=np.int64, na_value=0)
                for name, col in self.ints.items()}
        out = {name: arr.tolist() for name, arr in ints.items()}
        for name, (codes, lut) in self.coded.items():
            out[name] = lut[codes[a:b]].tolist()
        out["event"] = self.event[a:b].tolist()
        return out

    def value(self, name: str, row: int):
        """The value of a `RARE` column at `row` (None if nothing recorded)."""
        codes, lut = self.rare[name]
        return lut[codes[row]]


def _lut(values: list, missing) -> np.ndarray:
    """An object array of `values` with `missing` last, so code -1 finds it."""
    lut = np.empty(len(values) + 1, dtype=object)
    for j, v in enumerate(values):
        lut[j] = v
    lut[len(values)] = missing
    return lut


# --- the replay ----------------------------------------------------------------

def replay(events: pd.DataFrame, bar: int = 12) -> ReplayState:
    """State for `events` (ordered by table, seq), one row per event."""
    n = len(events)
    out = _Output(n)
    if n == 0:
        return out.finish()
    # The replay allocates many small objects that live until it ends and
    # makes no garbage cycles worth chasing meanwhile: the cyclic collector
    # would only traverse them again and again (15% of the replay's time).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _replay(events, out, bar)
    finally:
        if enabled:
            gc.enable()


def _replay(events: pd.DataFrame, out: _Output, bar: int) -> ReplayState:
    n = len(events)
    inputs = _Inputs(events)
    decisions = _Decisions(bar, inputs.wager_keys)
    starts = np.flatnonzero(inputs.table[1:] != inputs.table[:-1]) + 1
    bounds = [0, *starts.tolist(), n]
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
                    st.flush_pending()
                    st.close()
                st = TableReplay(out, decisions, inputs)
            hi = min(bounds[t + 1], b)
            st.bind(rows, a)
            st.run(lo - a, hi - a, rows["event"])
            lo = hi
        out.flush()
    if st is not None:
        st.flush_pending()
        st.close()
    return out.finish()


class TableReplay:
    """State of one table between two `table_open`s, and one handler per
    event type (`on_<event>`), each called with the row's position `i` and
    its index `k` in the current chunk's lists."""

    def __init__(self, out: _Output, decisions: _Decisions, inputs: _Inputs):
        self.out = out
        self.inputs = inputs
        self.decisions = decisions
        self.sinks = out.sinks
        self.bar = decisions.bar
        self.handlers = [getattr(self, "on_" + e, self.on_nothing) for e in EVENTS]
        self.handlers.append(self.on_nothing)  # code -1: not an event we know
        self.tables = decisions.tables
        # The records written most often: rows and values.
        self.decision_rows, self.decision_totals, self.decision_seven_outs = out.decisions
        (self.player_roll_rows, self.roll_dice, self.roll_total, self.roll_point_before,
         self.roll_line_bet, self.roll_by_shooter, self.roll_marker_off, self.roll_come_wagers,
         self.roll_other_line_bettors, self.roll_after_point_made) = out.player_rolls
        self.settle_rows, self.settle_expected, self.settle_decided_by = out.settlements
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
        self.snapshot: dict[int, dict[str, int]] = {}  # the wagers the undo would restore
        self.come_count = 0  # come and don't come wagers held, all seats together
        self.has_failed = False  # a die of this table failed an inspection
        self.line_bettors = 0
        self.dice: dict[str, Die] = {}
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

    def bind(self, rows: dict[str, list], base: int) -> None:
        """The current chunk's per-row lists (row `i` is `base + k`)."""
        self.seat, self.die1, self.die2 = rows["seat"], rows["die1"], rows["die2"]
        self.role, self.dice_in = rows["actor_role"], rows["dice"]
        self.bet, self.outcome = rows["bet"], rows["outcome"]
        self.base = base

    def close(self) -> None:
        """Drop the handlers (bound to self: a cycle) and the chunk's lists, so
        the table's state is freed at once, the cyclic collector being off."""
        self.handlers = []
        self.bind(dict.fromkeys(("seat", "die1", "die2", "actor_role", "dice", "bet",
                                 "outcome")), 0)
        self.inputs = None

    def run(self, lo: int, hi: int, ev: list) -> None:
        """Rows [lo, hi) of the bound chunk. The dense state before each row
        is recorded only where it changed; the most frequent events are
        called directly (a C call once compiled), the rest through
        `handlers`."""
        handlers = self.handlers
        base = self.base
        changes = self.out.changes
        rows, shooters, points, occupieds, bettors = changes
        if rows.size:
            shooter, point = shooters.last(), points.last()
            occupied, line_bettors = occupieds.last(), bettors.last()
        else:
            shooter = point = occupied = line_bettors = -1
        for k in range(lo, hi):
            if self.shooter != shooter or self.point != point \
                    or self.occupied != occupied or self.line_bettors != line_bettors:
                shooter, point = self.shooter, self.point
                occupied, line_bettors = self.occupied, self.line_bettors
                rows.append(base + k)
                shooters.append(shooter)
                points.append(point)
                occupieds.append(occupied)
                bettors.append(line_bettors)
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
                self.on_settlement_complete(base + k, k)
            elif e == TOTAL_CALLED:
                self.on_total_called(base + k, k)
            elif e == DICE_TO_SHOOTER:
                self.on_dice_to_shooter(base + k, k)
            else:
                handlers[e](base + k, k)

    # --- output ------------------------------------------------------------

    def put(self, column: str, row: int, value) -> None:
        sink = self.sinks[column]
        rows, values = sink
        rows.append(row)
        values.append(value)

    # --- helpers -------------------------------------------------------------

    def own_wagers(self, seat: int) -> dict[str, int]:
        """The seat's wagers, to be changed: created if missing, copied first if
        the undo snapshot shares them."""
        w = self.wagers.get(seat)
        if w is None:
            w = self.wagers[seat] = {}
        elif w is self.snapshot.get(seat):
            w = self.wagers[seat] = dict(w)
        return w

    def refresh_line_bit(self, seat: int) -> None:
        """The seat's bit in `line_bettors`: set while it holds a pass or don't
        pass wager (a count held is never 0: it is deleted at 0)."""
        w = self.wagers.get(seat)
        if w and ("pass" in w or "dont_pass" in w):
            self.line_bettors |= bit(seat)
        else:
            self.line_bettors &= ~bit(seat)

    def any_line_wager(self) -> bool:
        return any(n > 0 for w in self.wagers.values() for k, n in w.items())

    def check_seat(self, i: int, s: int) -> None:
        if s and not self.occupied & bit(s):
            self.put("seat_unknown", i, True)

    def check_row_seat(self, i: int, k: int) -> None:
        """`check_seat` for the seat the row names."""
        s = self.seat[k]
        if s and not self.occupied & bit(s):
            self.put("seat_unknown", i, True)

    def note_never_received(self, i: int, d: tuple[str, ...]) -> None:
        dice = self.dice
        for x in d:
            if x not in dice:
                self.put("die_never_received", i, [x for x in d if x not in dice])
                return

    def note_failed(self, i: int, d: tuple[str, ...]) -> None:
        """Dice that failed an inspection, put in play or used at row `i`."""
        if not self.has_failed:
            return
        failed = [x for x in d if x in self.dice and self.dice[x].failed]
        if failed:
            self.put("failed_dice_used", i, failed)

    def not_at_table(self, d: tuple[str, ...]) -> list[str]:
        return [x for x in d if x not in self.dice or self.dice[x].loc not in LIVE]

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
            self.put("first_use", row, record)

    def owed(self) -> list[dict]:
        return [{"seat": s, "bet": _bet_name(b, n), "outcome": o}
                for s, b, n, o in self.pending if o != "push"]

    def flush_pending(self) -> None:
        """Decisions of the last roll that were never settled."""
        if self.pending and self.pending_roll >= 0:
            owed = self.owed()
            if owed:
                self.put("unsettled", self.pending_roll, owed)
        self.pending = []
        self.pending_roll = -1

    def mark_passed_then_settled(self) -> None:
        for r in self.passed_rows:
            self.put("passed_then_settled", r, True)
        self.passed_rows = []

    def take_wager(self, s: int, fam: str, num: int, key: str) -> bool:
        w = self.wagers.get(s)
        if not w:
            return False
        if w.get(key, 0) <= 0 and num == 0 and fam in COME_FAMILY:
            key = next((k for k, v in w.items() if v > 0 and _split_bet(k)[0] == fam), key)
        if w.get(key, 0) > 0:
            w = self.own_wagers(s)
            w[key] -= 1
            if not w[key]:
                del w[key]
            if fam in COME_FAMILY:
                self.come_count -= 1
            self.refresh_line_bit(s)
            return True
        return False

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

    def on_table_open(self, i: int, k: int) -> None:
        self.flush_pending()
        self.reset()
        self.open_seat = self.seat[k]

    def on_table_close(self, i: int, k: int) -> None:
        self.flush_pending()

    def on_player_join(self, i: int, k: int) -> None:
        self.occupied |= bit(self.seat[k])

    def on_player_leave(self, i: int, k: int) -> None:
        s = self.seat[k]
        self.check_seat(i, s)
        self.occupied &= ~bit(s)
        w = self.wagers.pop(s, None)
        if w:
            self.come_count -= sum(n for key, n in w.items() if key not in LINE_KEYS)
        self.line_bettors &= ~bit(s)

    # --- handlers: wagers ------------------------------------------------------

    def on_wager_placed(self, i: int, k: int) -> None:
        s = self.seat[k]
        sb = bit(s)
        if s and not self.occupied & sb:
            self.put("seat_unknown", i, True)
        info = self.bet[k]
        fam, _, key, tracked = info
        if tracked:
            w = self.wagers.get(s)
            if w is None:
                w = self.wagers[s] = {}
            elif w is self.snapshot.get(s):
                w = self.wagers[s] = dict(w)  # copy-on-write (see `own_wagers`)
            w[key] = w.get(key, 0) + 1
            if fam in COME_FAMILY:
                self.come_count += 1
            else:
                self.line_bettors |= sb  # a pass or don't pass wager is held

    def on_wager_removed(self, i: int, k: int) -> None:
        s = self.seat[k]
        self.check_seat(i, s)
        fam, num, key, _ = self.bet[k]
        self.take_wager(s, fam, num, key)

    def on_wager_settled(self, i: int, k: int) -> None:
        s = self.seat[k]
        if s and not self.occupied & bit(s):
            self.put("seat_unknown", i, True)
        if self.passed_rows:
            self.mark_passed_then_settled()
        # Any wager (not only a line bet) settled on a void roll; one settled on
        # the roll before it was voided is noted for the no roll to mark.
        if self.last_roll >= 0:
            if not self.last_roll_valid:
                self.put("settled_on_void", i, self.last_roll)
            else:
                self.last_roll_voided_rows.append(i)
        info = self.bet[k]
        fam, num, key, tracked = info
        if not tracked:
            return
        outcome = self.outcome[k]
        # Match the settlement to what the last valid roll decided for that seat.
        pending = self.pending
        match = -1
        any_number = num == 0 and fam in COME_FAMILY
        for j in range(len(pending)):
            decided = pending[j]
            ps, pf, pn, po = decided
            if ps == s and pf == fam and (pn == num or any_number):
                match = j
                if po == outcome:
                    break
        if match >= 0:
            expected = pending[match][3]
            self.settle_rows.append(i)
            self.settle_expected.append(expected)
            self.settle_decided_by.append(self.pending_roll)
            if expected != "push" or outcome != "push":
                del pending[match]
            if expected == "push" and outcome in ("win", "lose"):
                self.take_wager(s, fam, num, key)
        else:
            self.put("settle_expected", i, "undecided")
            self.put("settle_roll", i, self.last_roll)
            if outcome in ("win", "lose"):
                self.take_wager(s, fam, num, key)

    def on_settlement_complete(self, i: int, k: int) -> None:
        if self.passed_rows:
            self.mark_passed_then_settled()

    # --- handlers: dice custody --------------------------------------------------

    def on_dice_received(self, i: int, k: int) -> None:
        d = self.dice_in[k]
        self.set_count += 1
        self.current_set = self.set_count
        self.put("received_count", i, len(d))
        self.set_size = len(d)
        for x in d:
            die = self.dice[x] = Die(x, self.current_set, self.live)
            self.sets.setdefault(self.current_set, []).append(die)
        self.put("live_count", i, len(self.live))

    def on_dice_inspected(self, i: int, k: int) -> None:
        d = self.dice_in[k]
        self.note_never_received(i, d)
        role, actor, outcome = self.role[k], self.inputs.value("actor_id", i), self.outcome[k]
        for x in d:
            die = self.dice.get(x)
            if die is None:
                continue
            if outcome == "fail":
                die.failed = True
                self.has_failed = True
            elif die.found:
                die.found_inspections.append((role or "", actor or ""))
            else:
                die.inspections.append((role or "", actor or ""))

    def on_dice_to_bowl(self, i: int, k: int) -> None:
        d = self.dice_in[k]
        self.note_never_received(i, d)
        self.record_use(i, d)
        self.note_failed(i, d)
        for x in d:
            die = self.dice.get(x)
            if die is not None and die.loc != REMOVED:
                die.move(BOWL)
                die.found = False if die.checked_use else die.found
        self.put("live_count", i, len(self.live))
        # The set shrank since it was received (a die removed, e.g. after a
        # failed inspection): this bowl leaves the table with that many dice.
        # A lost die is the lost-die procedure's concern (seed 6.1), not this.
        in_set = self.sets.get(self.current_set, [])
        size = len([x for x in in_set if x.loc != REMOVED])
        if self.current_set and size != self.set_size and not [x for x in in_set if x.loc == LOST]:
            self.put("bowl_set_count", i, size)
            self.set_size = size

    def on_dice_removed(self, i: int, k: int) -> None:
        d = self.dice_in[k]
        self.note_never_received(i, d)
        for x in d:
            if x in self.dice:
                self.dice[x].move(REMOVED)

    def on_dice_collected(self, i: int, k: int) -> None:
        d = self.dice_in[k]
        self.note_never_received(i, d)
        dice = self.dice
        for x in d:
            die = dice.get(x)
            if die is not None and die.loc <= LAYOUT:
                die.loc = SHOOTER  # from one live place to another

    def on_dice_to_shooter(self, i: int, k: int) -> None:
        self.on_dice_collected(i, k)
        d = self.dice_in[k]
        self.check_row_seat(i, k)
        self.record_use(i, d)
        self.note_failed(i, d)
        if self.pending:
            owed = self.owed()
            if owed:
                self.put("passed_unsettled", i, owed)
        self.passed_rows.append(i)

    def on_die_off_table(self, i: int, k: int) -> None:
        d = self.dice_in[k]
        self.note_never_received(i, d)
        for x in d:
            if x in self.dice:
                self.dice[x].move(OFF_TABLE)
        self.offtable_row = i
        self.offtable_offered = False
        self.put("offtable_shooter", i, self.shooter)

    def on_die_retrieved(self, i: int, k: int) -> None:
        d = self.dice_in[k]
        self.note_never_received(i, d)
        for x in d:
            die = self.dice.get(x)
            if die is not None:
                die.move(NEW)
                die.found = True
                die.found_inspections = []
                die.checked_use = False

    def on_die_lost(self, i: int, k: int) -> None:
        d = self.dice_in[k]
        self.note_never_received(i, d)
        for x in d:
            die = self.dice.get(x)
            if die is not None:
                die.move(LOST)
                self.lost_set = die.set_id
        # Dice of the set lost so far, whichever shooter lost them (NSW 3.6:
        # a new set when two dice are lost).
        self.lost_count = sum(1 for x in self.dice.values()
                              if x.set_id == self.lost_set and x.loc == LOST) \
            + sum(1 for x in d if x not in self.dice)
        self.lost_row = i
        self.lost_shooter = self.shooter
        self.lost_allowance_over = False
        self.put("lost_shooter", i, self.shooter)

    # --- handlers: the shooter and the offer ---------------------------------------

    def on_dice_offered(self, i: int, k: int) -> None:
        s, d = self.seat[k], self.dice_in[k]
        self.check_seat(i, s)
        self.note_never_received(i, d)
        if self.offtable_row >= 0 and self.shooter and s == self.shooter:
            # 6.1: the remaining dice offered to the shooter to replace a die.
            self.offtable_offered = True
            self.put("offer_round", i, ROUND_REPLACEMENT)
            self.offtable_row = -1
            for x in d:
                if x in self.dice and self.dice[x].loc in LIVE:
                    self.dice[x].move(OFFERED)
            self.record_use(i, d)
            self.note_failed(i, d)
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
        offered = set(d)
        if not live <= offered:
            self.put("offer_missing_dice", i, sorted(live - offered))
        self.note_failed(i, d)
        self.record_use(i, d)
        for x in d:
            if x in self.dice and self.dice[x].loc in LIVE:
                self.dice[x].move(OFFERED)

    def on_dice_declined(self, i: int, k: int) -> None:
        s = self.seat[k]
        self.check_seat(i, s)
        self.round_anchor = s
        self.round_declined |= bit(s)

    def on_dice_accepted(self, i: int, k: int) -> None:
        s = self.seat[k]
        self.check_seat(i, s)
        if self.lost_row >= 0 and s != self.lost_shooter:
            self.lost_allowance_over = True
        self.shooter = s
        self.seven_out_seat = 0
        self.made_point = False
        self.selected = None
        self.round_kind = -1
        self.stick_decided = False

    def on_dice_selected(self, i: int, k: int) -> None:
        s, d = self.seat[k], self.dice_in[k]
        self.check_seat(i, s)
        self.note_never_received(i, d)
        held = frozenset(d)
        if self.offtable_offered and self.selected is not None and len(d) < 2:
            # 6.1: a new die chosen to replace one that left the table; the
            # shooter keeps the other die of the pair.
            held |= {x for x in self.selected if x in self.dice and self.dice[x].loc in LIVE}
        self.offtable_offered = False
        self.put("selected_count", i, len(held))
        unknown = self.not_at_table(d)
        if unknown:
            self.put("dice_not_at_table", i, unknown)
        self.record_use(i, d)
        self.note_failed(i, d)
        for x in held:
            if x in self.dice and self.dice[x].loc in LIVE:
                self.dice[x].move(SHOOTER)
        self.selected = held
        self.selection_row = i

    def on_marker(self, i: int, k: int) -> None:
        words = set((self.inputs.value("flags", i) or "").split(","))
        self.marker_off_dp = self.outcome[k] == "off" and "dont_pass_line" in words

    def on_shooter_relinquish(self, i: int, k: int) -> None:
        s = self.seat[k]
        self.check_seat(i, s)
        anchor = s or self.shooter
        if self.lost_row >= 0:
            self.lost_allowance_over = True
        self.shooter = 0
        self.seven_out_seat = 0
        self.selected = None
        self.round_kind = ROUND_AFTER_RELINQUISH
        self.round_anchor = anchor
        self.round_declined = 0
        self.put("relinquish_roles", i, self.role[k])

    # --- handlers: the roll and what follows it --------------------------------------

    def on_roll(self, i: int, k: int) -> None:
        s, role, d = self.seat[k], self.role[k], self.dice_in[k]
        d1, d2 = self.die1[k], self.die2[k]
        # What the previous roll left unsettled is now missing.
        if self.pending:
            self.flush_pending()
        if self.passed_rows:
            self.passed_rows = []
        dice = self.dice
        for x in d:
            die = dice.get(x)
            if die is None or not die.checked_use or die.loc > LAYOUT:
                # Some die unknown, not at the table or first used: the full story.
                self.note_never_received(i, d)
                self.record_use(i, d)
                self.note_failed(i, d)
                unknown = self.not_at_table(d)
                if unknown:
                    self.put("dice_not_at_table", i, unknown)
                break
        else:
            if self.has_failed:
                self.note_failed(i, d)
        by_player = role == "player"
        if by_player:
            sb = bit(s)
            if s and not self.occupied & sb:
                self.put("seat_unknown", i, True)
            w = self.wagers.get(s)
            line_bet = bool(w.get("pass") or w.get("dont_pass")) if w else False
            by_shooter = bool(s) and s == self.shooter
            if self.seven_out_seat and s == self.seven_out_seat and by_shooter:
                self.put("roll_after_seven_out", i, True)
            # Only a die outside the chosen ones is a breach here; choosing other
            # than two is reported on the `dice_selected` itself.
            if self.selected is not None and s == self.shooter \
                    and not self.selected.issuperset(d):
                self.put("roll_not_selected", i, sorted(self.selected))
            self.player_roll_rows.append(i)
            self.roll_dice.append(d)
            self.roll_total.append(d1 + d2)
            self.roll_point_before.append(self.point)
            self.roll_line_bet.append(line_bet)
            self.roll_by_shooter.append(by_shooter)
            self.roll_marker_off.append(self.marker_off_dp)
            self.roll_come_wagers.append(self.come_count)
            self.roll_other_line_bettors.append(self.line_bettors & ~sb != 0)
            self.roll_after_point_made.append(self.made_point and s == self.shooter)
        else:
            stick_rows, dice_used, total, point, any_wager, willing, after_decision = \
                self.out.stick_rolls
            stick_rows.append(i)
            dice_used.append(d)
            total.append(d1 + d2)
            point.append(self.point)
            any_wager.append(self.any_line_wager())
            willing.append(self.line_bettors & ~self.round_declined != 0)
            after_decision.append(self.stick_decided)
        # The dice chosen by the shooter: the rest must be in the bowl by now.
        if self.selection_row >= 0:
            stray = sorted([x for x in self.live if dice[x].loc == OFFERED
                            or (dice[x].loc == NEW and dice[x].set_id == self.current_set)])
            if stray:
                self.put("rest_not_in_bowl", self.selection_row, stray)
            self.selection_row = -1
        if self.lost_row >= 0 and (self.lost_allowance_over
                                   or (by_player and s != self.lost_shooter) or not by_player):
            self.end_lost_allowance(i, d)
        for x in d:
            die = dice.get(x)
            if die is not None and die.loc <= LAYOUT:
                die.loc = LAYOUT  # from one live place to another
        self.last_roll = i
        self.last_roll_valid = True
        self.last_roll_called = False
        self.last_roll_point = self.point
        self.face1, self.face2 = d1, d2
        self.last_roll_dice = d
        self.last_roll_by_player = by_player
        self.last_roll_seat = s
        if self.last_roll_voided_rows:
            self.last_roll_voided_rows = []
        self.dispute_die = None  # a dispute concerns the roll it follows
        self.decide(i)

    def decide(self, i: int) -> None:
        """Apply the last roll's counted total: decide line and come bets, move
        the point, note a 7 Out. Called again if a cocked die or a ruling
        changes the total, after undoing the previous decision."""
        total = self.face1 + self.face2
        point = self.last_roll_point
        wagers = self.wagers
        # Undo snapshot: the seats' wager dicts are shared with it until changed.
        self.snapshot = dict(wagers)
        self.undo = (self.point, self.snapshot, self.line_bettors, self.seven_out_seat,
                     self.stick_decided, self.made_point, self.come_count)
        decisions = self.decisions
        got = self.tables[point * 13 + total] if 0 <= total <= 12 else None
        table, affected = got if got is not None else decisions.table(point, total)
        pending = []
        for seat_no, held in self.snapshot.items():
            if not _holds_any(held, affected):
                continue  # nothing this seat holds is decided or travels
            # Copy-on-write: the undo snapshot keeps the seat's wagers as they were.
            w = wagers[seat_no] = dict(held)
            for key, count in held.items():
                got = table.get(key, _MISSING)
                if got is _MISSING:
                    got = table[key] = decisions.decide(key, point, total)
                if got is None:
                    continue
                if type(got) is str:
                    # An untravelled come bet travels to its number.
                    del w[key]
                    w[got] = w.get(got, 0) + count
                    continue
                fam, num, result = got
                if count == 1:
                    pending.append((seat_no, fam, num, result))
                else:
                    pending.extend([(seat_no, fam, num, result)] * count)
                if result != "push":
                    del w[key]
                    if fam in LINE_KEYS:
                        if "pass" not in w and "dont_pass" not in w:
                            self.line_bettors &= ~bit(seat_no)
                    else:
                        self.come_count -= count
        self.pending = pending
        self.pending_roll = i
        seven_out = point != 0 and total == 7
        self.decision_rows.append(i)
        self.decision_totals.append(total)
        self.decision_seven_outs.append(seven_out)
        if point == 0:
            self.point = total if total in POINTS else 0
        elif total == point or total == 7:
            self.point = 0
        decision = (point == 0 and total not in POINTS) or (point != 0 and total in (point, 7))
        if self.last_roll_by_player:
            if point != 0 and total == point:
                self.made_point = True
            if seven_out:
                self.seven_out_seat = self.last_roll_seat
                if self.lost_row >= 0 and self.last_roll_seat == self.lost_shooter:
                    self.lost_allowance_over = True
        elif decision:
            self.stick_decided = True

    def undo_decision(self) -> None:
        (self.point, self.wagers, self.line_bettors, self.seven_out_seat, self.stick_decided,
         self.made_point, self.come_count) = self.undo
        self.pending = []
        self.pending_roll = -1

    def on_total_called(self, i: int, k: int) -> None:
        if self.last_roll < 0:
            return
        r = self.last_roll
        if not self.last_roll_called:
            self.last_roll_called = True
            self.put("call_row", r, i)
        self.put("call_expected", i, self.face1 + self.face2)
        self.put("call_roll", i, r)

    def void_last_roll(self, i: int) -> None:
        if self.last_roll < 0 or not self.last_roll_valid:
            return
        r = self.last_roll
        self.last_roll_valid = False
        self.undo_decision()
        self.put("roll_voided", r, i)
        for row in self.last_roll_voided_rows:  # settled before the roll was voided
            self.put("settled_on_void", row, r)

    def on_no_roll(self, i: int, k: int) -> None:
        self.void_last_roll(i)

    def on_dispute(self, i: int, k: int) -> None:
        if self.last_roll < 0:
            return
        d = self.dice_in[k]
        self.dispute_die = d[0] if d else None

    def on_die_cocked(self, i: int, k: int) -> None:
        # A cocked die counts the face opposite the one resting on the object.
        if self.last_roll < 0:
            return
        d, face = self.dice_in[k], self.die1[k]
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


def sparse(state: ReplayState, name: str) -> pd.Series:
    """A state column spelled out (None where the replay wrote nothing)."""
    return pd.Series(state.column(name), dtype=object)


__all__ = ["NO_ROLL_CONDITIONS", "ReplayState", "replay", "sparse"]
