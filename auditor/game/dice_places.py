"""Where each die is (its place: new, in the bowl, offered, with the
shooter, on the layout, off the table, lost, removed), which set it came
with and its inspection record (`Die`), and every move from one logged place
to another (`DieLog`).

Its own module because dice custody is a concern of its own, apart from
the wagers and the offer: the table's state holds its dice by serial, the
handlers move them, and `auditor.game.state.DiceMoves` is what the checks
read of the log kept here. Compiled by Cython with `dice_places.pxd`.
"""

from __future__ import annotations

from auditor.game.buffers import IntBuffer
from auditor.game.ids import LAYOUT, NEW


def located(where: int) -> int:
    """A place as the location log names it (`state.DIE_LOCATIONS`): with
    the shooter and on the layout are one place there, in play."""
    return where - 1 if where >= LAYOUT else where


class DieLog:
    """Every die's moves from one logged place to another (`located`), in
    the order made: the row, the die (an id of `Inputs.serial_names`),
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
