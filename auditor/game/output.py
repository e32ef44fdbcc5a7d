"""Where the replay writes (`Output`): the dense state as change points, the
sparse columns, the columns written together and every die's moves, in
buffers sized once from the events' counts, then assembled into the
`ReplayState` the checks read.

Its own module because it is the replay's one way out: the loop
(`auditor.game.replay`) only appends to what is made here. Plain Python:
it runs once per replay and once per chunk of rows, never per event.
"""

from __future__ import annotations

import numpy as np

from auditor.game.buffers import IntBuffer
from auditor.game.dice_places import DieLog
from auditor.game.state import (
    BOOL_COLUMNS,
    CALL_FIELDS,
    DECISION_FIELDS,
    DENSE_COLUMNS,
    INT_COLUMNS,
    PLAYER_ROLL_FIELDS,
    SETTLEMENT_FIELDS,
    SPARSE_COLUMNS,
    STICK_ROLL_FIELDS,
    DiceMoves,
    ReplayState,
    assemble,
    typed,
)
from auditor.logs.schema import EVENTS

#: Events whose counts size the buffers: rolls, settlements, calls, and
#: those that decide a roll again (a recount: a cocked die, a ruling).
ROLL, WAGER_SETTLED, TOTAL_CALLED, DIE_COCKED, RULING = (EVENTS.index(e) for e in (
    "roll", "wager_settled", "total_called", "die_cocked", "ruling"))


class Output:
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

