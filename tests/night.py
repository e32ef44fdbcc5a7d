"""A long night with a case played into it.

The generator's lawful table (`auditor.generate.session.TableSim`) plays a
night; at a moment the test chooses (`until`), the test takes the dice and
writes the rows of its case through the same table state (its players,
wagers, point, dice), and the table then plays on (`finish`). The case thus
meets what a real night holds around it: many shooters, come and place bets,
refusals, dice off the table, cocked dice, no rolls, replacement sets.

The table's own methods write the rows the game decides (`_settle`,
`_new_wagers`, `_between_hands`, `_new_set`): what a roll settles is the
generator's reading of the rules, written independently of the auditor.
"""

from __future__ import annotations

import csv
import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

from auditor.generate.session import NORMAL_THROW, POINTS, ROW_COLUMNS, TableSim
from auditor.logs.schema import COLUMN_NAMES


class Night:
    """One table's night; row indexes are returned as the log's `seq`."""

    def __init__(self, seed: int, offer_role: str = "stickperson", rolls: int = 150):
        self.sim = TableSim(1, seed, offer_role, itertools.count(1))
        self.sim.open()
        self.sim.run(rolls)

    # --- where the case goes ----------------------------------------------

    def until(self, ready, limit: int = 3000) -> None:
        """Let the table play a valid roll at a time until `ready(sim)`, with
        the shooter holding the dice and no die off the table."""
        sim = self.sim
        for _ in range(limit):
            if sim.off_die is None and sim.shooter and ready(sim):
                return
            sim.run(sim.valid_rolls + 1)
        raise AssertionError("the night never reached the case's moment")

    @property
    def shooter(self) -> int:
        return self.sim.shooter

    def seq(self) -> int:
        """The seq the next row gets."""
        return len(self.sim.rows) + 1

    def ev(self, event: str, role: str | None = None, seat: int | None = None,
           **cells) -> int:
        """One row; players act under their own id, staff under the table's.
        Returns its seq."""
        sim = self.sim
        actor = sim.seats.get(seat) if role == "player" else {
            "stickperson": sim.stick, "dealer": sim.dealers[0], "boxperson": sim.box,
            "game_supervisor": sim.sup, "pit_manager": sim.pit}.get(role)
        pid = sim.seats.get(seat) if role == "player" else None
        sim._ev(event, role, actor, seat, pid, **cells)
        return len(sim.rows)

    # --- the dice ----------------------------------------------------------

    def throw(self, d1: int, d2: int, flags: str = NORMAL_THROW) -> int:
        """The shooter throws their pair; nothing else. Returns the roll's seq."""
        sim = self.sim
        return self.ev("roll", "player", sim.shooter, dice=sim.pair_text, die1=d1, die2=d2,
                       flags=flags)

    def void(self, d1: int, d2: int, how: str = "no_roll") -> int:
        """A roll voided by a `no_roll` (stickperson, discretion, before the
        dice rest) or by a face `dispute` and the game supervisor's `ruling`
        of `void`; the dice go back to the shooter. Returns the roll's seq."""
        sim = self.sim
        seq = self.throw(d1, d2)
        if how == "no_roll":
            self.ev("no_roll", "stickperson", reason="discretion", flags="before_rest")
        else:
            self.ev("dispute", "player", sim.shooter, dice=sim.pair[0])
            self.ev("ruling", "game_supervisor", reason="void")
        self.ev("dice_collected", "stickperson", dice=sim.pair_text, flags="stick")
        self.ev("dice_to_shooter", "stickperson", sim.shooter, dice=sim.pair_text,
                flags="stick")
        return seq

    def valid(self, d1: int, d2: int, new_wagers: bool = True, pass_back: bool = True,
              reline_shooter: bool = True) -> int:
        """A valid roll as the table plays one (called, collected, every wager
        it decides settled, new wagers, the dice back to the shooter), with
        the test's faces and no voluntary pass. Returns the roll's seq."""
        sim = self.sim
        seat, dice = sim.shooter, sim.pair_text
        seq = self.throw(d1, d2)
        t = d1 + d2
        self.ev("total_called", "stickperson", total=t)
        self.ev("dice_collected", "stickperson", dice=dice, flags="stick")
        reline = sim._settle(t, d1 == d2, None)
        self.ev("settlement_complete", "dealer")
        sim.valid_rolls += 1
        if sim.point == 0:
            sim.point = t if t in POINTS else 0
        elif t in (7, sim.point):
            sim.point = 0
        if new_wagers:
            sim._new_wagers([s for s in reline if s != seat or reline_shooter])
        if pass_back:
            self.ev("dice_to_shooter", "stickperson", seat, dice=dice, flags="stick")
        return seq

    def stick_valid(self, d1: int, d2: int) -> int:
        """A valid throw by the stickperson (seed 000 5.11) with the dice last
        in play: called, collected, every wager it decides settled. Returns
        the roll's seq."""
        sim = self.sim
        seq = self.ev("roll", "stickperson", dice=sim.pair_text, die1=d1, die2=d2,
                      flags=NORMAL_THROW)
        t = d1 + d2
        self.ev("total_called", "stickperson", total=t)
        self.ev("dice_collected", "stickperson", dice=sim.pair_text, flags="stick")
        sim._settle(t, d1 == d2, None)
        self.ev("settlement_complete", "dealer")
        if sim.point == 0:
            sim.point = t if t in POINTS else 0
        elif t in (7, sim.point):
            sim.point = 0
        return seq

    def give_up(self, reason: str = "voluntary", removed: tuple[str, ...] = ()) -> int:
        """The shooter relinquishes the dice (`removed` then leave the table
        for good) and the table goes on between hands: players come and go,
        line bets, the next offer round. Returns the relinquishment's seq."""
        sim = self.sim
        out = sim.shooter
        seq = self.ev("shooter_relinquish", "player", out, reason=reason)
        if removed:
            self.ev("dice_removed", "game_supervisor", dice=",".join(removed))
        sim.shooter = 0
        sim._between_hands(out)
        return seq

    def others_clockwise(self, seat: int) -> list[int]:
        """The other occupied seats, clockwise from the left of `seat`."""
        order = self.sim.order
        return [s for s in order if s > seat] + [s for s in order if s < seat]

    def seven_out(self) -> int:
        """A valid 7 with the point on, the shooter gives up the dice and the
        table goes on between hands. Returns the roll's seq."""
        sim = self.sim
        assert sim.point
        seq = self.valid(3, 4, new_wagers=False, pass_back=False)
        sim._relinquish("seven_out")
        return seq

    def point_total(self) -> tuple[int, int]:
        """Faces that make the table's point."""
        p = self.sim.point
        return (p // 2, p - p // 2)

    # --- the end -------------------------------------------------------------

    def finish(self, path: Path, rolls: int = 150) -> Path:
        """Play `rolls` more valid rolls, close the table and write the log
        as CSV (seq = row number, 5 s apart)."""
        sim = self.sim
        sim.run(sim.valid_rolls + rolls)
        sim.close()
        start = datetime(2026, 3, 1, 20, 0, 0, tzinfo=UTC)
        with open(path, "w", newline="", encoding="utf-8") as fh:
            out = csv.writer(fh)
            out.writerow(COLUMN_NAMES)
            for i, row in enumerate(sim.rows):
                cells = dict(zip(ROW_COLUMNS, row))
                out.writerow([sim.table_id, i + 1, (start + timedelta(seconds=5 * i)).isoformat(),
                              *("" if cells[c] is None else cells[c] for c in ROW_COLUMNS)])
        return path


def found_in(path: Path, ruleset: str) -> set[tuple[str, str, int]]:
    """The audit's findings of the log at `path` as (code, table, seq)."""
    from builder import audit

    f = audit([path], ruleset).findings
    return {(c, t, int(s)) for c, t, s in zip(f["code"], f["table_id"], f["seq"])}
