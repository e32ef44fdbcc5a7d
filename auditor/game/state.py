"""The state the replay derives beside the events, as the checks read it:
which columns there are (`SPARSE_COLUMNS`, `DENSE_COLUMNS`), where each die
is (`DiceMoves`), how they are held (`ReplayState`, `Steps`) and how the
replay's buffers become them (`assemble`). Plain Python: only the
replay's loop and its typed containers (`auditor.game.replay.COMPILED_MODULES`)
are compiled, and nothing here runs per event.

The state is the game's, not any one check's verdict: a check that needs
more works it out from these, vectorised, in its own module."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: State written only on the rows it concerns (nothing elsewhere). Every name
#: is always present in the state, so checks never meet a missing column.
SPARSE_COLUMNS: tuple[str, ...] = (
    # rolls
    "roll_total", "roll_counted_total", "roll_voided", "roll_line_bet", "roll_by_shooter",
    "roll_marker_off", "roll_come_wagers",
    "roll_other_line_bettors", "roll_after_point_made",
    "stick_any_wager", "stick_willing", "stick_after_decision", "call_row", "unsettled",
    # calls and settlements
    "call_roll", "settle_expected", "settle_roll", "settled_on_void",
    # offers
    "offer_round", "offer_anchor", "offer_open_seat", "offer_missing_dice",
    # dice custody (where each die is: `DiceMoves`)
    "received_count", "bowl_set_count", "first_use", "dice_not_at_table", "selected_dice",
    "passed_unsettled",
    "offtable_shooter", "lost_followup", "old_set_used",
)
#: Sparse columns holding whole numbers, and those holding booleans: kept as
#: numpy arrays once the replay ends (read back as Python ints and bools).
INT_COLUMNS = frozenset((
    "roll_total", "roll_counted_total", "roll_voided", "roll_come_wagers", "call_row",
    "call_roll", "settle_expected", "settle_roll", "settled_on_void", "offer_round", "offer_anchor",
    "offer_open_seat", "received_count", "bowl_set_count", "offtable_shooter"))
BOOL_COLUMNS = frozenset((
    "roll_line_bet", "roll_by_shooter", "roll_marker_off",
    "roll_other_line_bettors", "roll_after_point_made", "stick_any_wager", "stick_willing",
    "stick_after_decision"))
#: State every row carries: the value before the row's event (seats are
#: 1..62, points 4..10, seat sets bits of a 64-bit mask). `seven_out_seat`:
#: the seat whose valid roll sevened out, until someone accepts the dice or
#: the shooter relinquishes them (0: none; a voided or recounted roll takes
#: its 7 Out back).
DENSE_COLUMNS: dict[str, type] = {"shooter": np.int16, "point": np.int8,
                                  "occupied": np.int64, "line_bettors": np.int64,
                                  "seven_out_seat": np.int16}

#: Sparse columns written together: on every roll by a player, on every
#: stickperson's roll, by every decision of a roll (again if a recount changes
#: it), by every call of a total, and by every settlement matched to what the
#: last roll decided.
PLAYER_ROLL_FIELDS = ("roll_total", "roll_line_bet", "roll_by_shooter", "roll_marker_off",
                      "roll_come_wagers", "roll_other_line_bettors", "roll_after_point_made")
STICK_ROLL_FIELDS = ("roll_total", "stick_any_wager", "stick_willing", "stick_after_decision")
DECISION_FIELDS = ("roll_counted_total",)
CALL_FIELDS = ("call_roll",)
SETTLEMENT_FIELDS = ("settle_expected", "settle_roll")
#: What `settle_expected` holds at a settlement, by id: what the last valid
#: roll decided for the wager (as the replay's outcome ids), or that it
#: decided nothing for it. Numbers, not text: a night settles millions.
SETTLE_EXPECTED = ("win", "lose", "push", "undecided")
UNDECIDED = SETTLE_EXPECTED.index("undecided")


class ReplayState:
    """What the replay derived, beside the events (positions 0..n-1).

    Dense columns (`DENSE_COLUMNS`) have a value on every row, kept as the
    rows where it changes (`Steps`): `state["point"][rows]` gives the values
    at `rows`, `np.asarray(state["point"])` every row's.
    Sparse columns (`SPARSE_COLUMNS`) hold a value on the rows they concern
    only: `written(name)` gives those rows (ascending) and their values,
    `mask(name)` the rows as a boolean mask, `at(name, row)` one value.
    Where each die is: `dice_moves` (`DiceMoves`).
    """

    def __init__(self, n: int, dense: dict[str, Steps],
                 sparse: dict[str, tuple[np.ndarray, list]], dice_moves: DiceMoves):
        self.n = n
        self.dense = dense
        self.sparse = sparse
        self.dice_moves = dice_moves
        self._lookups: dict[str, dict[int, object]] = {}
        #: what the layers above work out of these events and this state,
        #: kept while it lives (`auditor.checks.common.Shared.of`)
        self.derived: dict = {}

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, name: str) -> Steps:
        return self.dense[name]

    @property
    def columns(self) -> tuple[str, ...]:
        return (*self.dense, *self.sparse)

    def written(self, name: str) -> tuple[np.ndarray, list]:
        """Rows where the replay wrote `name`, ascending, and the values."""
        rows, values = self.sparse[name]
        return rows, _listed(values)

    def arrays(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """`written(name)` as arrays: numbers and booleans as the replay keeps
        them (no list of Python objects made), anything else as objects."""
        rows, values = self.sparse[name]
        if not isinstance(values, np.ndarray):
            values = np.fromiter(values, dtype=object, count=len(values))
        return np.asarray(rows, dtype=np.int64), values

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
            return np.asarray(self.dense[name])
        out = np.full(self.n, None, dtype=object)
        rows, values = self.sparse[name]
        for r, v in zip(rows.tolist(), _listed(values)):
            out[r] = v
        return out

    def frame(self, index=None) -> pd.DataFrame:
        """Every column as a DataFrame (for inspection; the checks do not need it)."""
        data = {name: self.column(name) for name in self.columns}
        return pd.DataFrame(data, index=index)


class Steps:
    """A column with a value on each of `n` rows, held as the rows where the
    value changes (`starts`, ascending, the first 0) and the value from each
    on: a 10M-event log changes shooter, point or seats every ten rows or so,
    and the checks read these columns only at the rows they look at.
    Indexing with rows gives the values there; `np.asarray` every row's."""

    def __init__(self, n: int, starts: np.ndarray, values: np.ndarray):
        self.n = n
        self.starts = starts
        self.values = values
        self.dtype = values.dtype

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, rows):
        rows = np.asarray(rows)
        if rows.ndim and rows.size * 4 > self.n:
            # a quarter of the rows or more: one pass over every row beats a
            # binary search per row (10M events: 0.37 -> 0.1 s for 7M rows)
            return np.asarray(self)[rows]
        return self.values[np.searchsorted(self.starts, rows, side="right") - 1]

    def block(self, a: int, b: int) -> np.ndarray:
        """The values of rows a..b-1 (a pass block by block over every row
        without spelling the whole column out)."""
        lo = np.searchsorted(self.starts, a, side="right") - 1
        hi = np.searchsorted(self.starts, b, side="left")
        bounds = np.clip(self.starts[lo:hi], a, b)
        return np.repeat(self.values[lo:hi], np.diff(np.append(bounds, b)))

    def __array__(self, dtype=None, copy=None):
        counts = np.diff(np.append(self.starts, self.n))
        out = np.repeat(self.values, counts)
        return out if dtype is None else out.astype(dtype)


#: Where a die can be (`DiceMoves.where` indexes this): in play is with the
#: shooter or on the layout, between a roll and the dice coming back.
DIE_LOCATIONS = ("new", "bowl", "offered", "in_play", "off_table", "lost", "removed")


class DiceMoves:
    """Where each die is, as every move of a die from one place
    (`DIE_LOCATIONS`) to another, in the order the replay made them: a
    receipt (`dice_received`: to `new`), the bowl, an offer, a choice, a
    roll or collection out of the bowl or offer (to `in_play`), leaving the
    table, found again (to `new`), lost, removed. Arrays, one entry a move:
    `rows` (the event's row, ascending), `die` (an index of `serials`),
    `where` (an index of `DIE_LOCATIONS`), `set_id` (the set of its session
    the die came with: 1 the first received). A die is what its table last
    received under its serial in the session: the replay starts afresh at a
    table's first row and at each `table_open`, so a session's dice are the
    moves from its first row on. Where die d is just before row r: the
    place of its last move before r, if that move is in r's session."""

    def __init__(self, n: int, rows: np.ndarray, die: np.ndarray, where: np.ndarray,
                 set_id: np.ndarray, serials: list[str]):
        self.n = n
        self.rows, self.die, self.where, self.set_id = rows, die, where, set_id
        self.serials = list(serials)
        self._until: np.ndarray | None = None

    def until(self) -> np.ndarray:
        """Per move, the row of the same die's next move (`n` after its last):
        the die stays where the move put it up to that row's event (worked
        out once: the checks and the HTML report both ask)."""
        if self._until is None:
            self._until = self._next_moves()
        return self._until

    def _next_moves(self) -> np.ndarray:
        """`until`, worked out: the moves sorted by die (ids below 2**16 as
        16-bit, numpy's radix sort, not a merge sort), each followed by its
        die's next."""
        die = self.die.astype(np.uint16) if len(self.serials) <= 1 << 16 else self.die
        order = np.argsort(die, kind="stable")
        nxt = np.full(len(order), self.n, dtype=np.int64)
        same = self.die[order][1:] == self.die[order][:-1]
        nxt[:-1][same] = self.rows[order][1:][same]
        out = np.empty(len(order), dtype=np.int64)
        out[order] = nxt
        return out


def _listed(values) -> list:
    return values.tolist() if isinstance(values, np.ndarray) else list(values)


def typed(values: list | tuple, name: str):
    """A piece of a sparse column's values: numpy for numbers and booleans."""
    if name in INT_COLUMNS:
        return np.fromiter(values, dtype=np.int64, count=len(values))
    if name in BOOL_COLUMNS:
        return np.fromiter(values, dtype=bool, count=len(values))
    return list(values)


def settle(pieces: list[tuple[np.ndarray, object]], name: str) -> tuple[np.ndarray, object]:
    """One sparse column from its pieces (in the order written): rows
    ascending, one value per row (the last written); numbers
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
    return r, values


def assemble(n: int, changes: list[np.ndarray] | None,
             pieces: dict[str, list[tuple[np.ndarray, object]]],
             together: list[tuple[np.ndarray, list[tuple[str, object]]]],
             dice_moves: DiceMoves) -> ReplayState:
    """The state from what the replay wrote: the dense columns' change
    points (`changes`: the rows, then each column's values from there on;
    None if no row was replayed), each sparse column's pieces in the order
    written (emptied here), after them the columns written together
    (`together`: their rows and each column's values), and the dice's moves."""
    for at, columns in together:
        for name, values in columns:
            if isinstance(values, np.ndarray):
                piece = values.astype(bool) if name in BOOL_COLUMNS else values
            else:
                piece = typed(values, name)
            pieces[name].append((at, piece))
    if changes is None:
        changes = [np.zeros(1 if n else 0, dtype=np.int64)] * (1 + len(DENSE_COLUMNS))
    dense = {name: _own_changes(n, changes[0], values.astype(dtype, copy=False))
             for (name, dtype), values in zip(DENSE_COLUMNS.items(), changes[1:])}
    sparse = {name: settle(pieces.pop(name), name) for name in SPARSE_COLUMNS}
    return ReplayState(n, dense, sparse, dice_moves)


def _own_changes(n: int, rows: np.ndarray, values: np.ndarray) -> Steps:
    """One dense column from the rows where any dense column changed: only
    where this one does (the seats change a few times a session, the line
    bettors at most wagers), so a look-up searches its few changes, not all."""
    keep = np.empty(len(values), dtype=bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return Steps(n, rows[keep], values[keep])


def sparse(state: ReplayState, name: str) -> pd.Series:
    """A state column spelled out (None where the replay wrote nothing)."""
    return pd.Series(state.column(name), dtype=object)
