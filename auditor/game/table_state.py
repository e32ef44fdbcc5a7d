"""The state of one table between two `table_open`s, as one declared record
(`TableState`): every field the replay's handlers read and write, each set
in `reset`, none first set in a handler.

Its own module so that what the replay knows of a table is read in one
place, apart from how each event changes it (`auditor.game.replay`'s
handlers, on `TableReplay`, a subclass) and from how the replay is wired to
its inputs and output. Compiled by Cython with `table_state.pxd`, which
declares the same fields with their C types.
"""

from __future__ import annotations

from auditor.game.buffers import IntBuffer
from auditor.game.dice_places import Die
from auditor.game.wagers import Decided, Wagers


class TableState:
    """One table's state: the game (point, shooter, who holds which wager),
    its dice, the offer round, the last roll (and what undoing its decision
    restores), and the dice procedures under way (a die off the table, a
    lost die). Made once per table (`width`, `key_fam`: the wager keys, see
    `auditor.game.wagers.Decisions`); `reset` at each `table_open`."""

    def __init__(self, width: int, key_fam):
        self.wagers = Wagers(width, key_fam)
        self.snapshot = Wagers(width, key_fam)  # the wagers the undo would restore
        self.decided = Decided()  # what the last valid roll decided, to be settled

    def reset(self, generation: int) -> None:
        """A new session: nothing known. `generation`: a number no table's
        dice have had yet (`Inputs.next_generation`)."""
        # The game.
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
        self.selected: frozenset[str] | None = None
        self.wagers.clear()
        self.snapshot.clear()
        self.come_count = 0  # come and don't come wagers held, all seats together
        self.line_bettors = 0
        self.marker_off_dp = False
        self.stick_decided = False
        # The dice.
        self.dice: dict[str, Die] = {}
        self.generation = generation
        self.live: set[str] = set()  # serials of the dice at the table (see Die.move)
        self.sets: dict[int, list[Die]] = {}
        self.set_count = 0
        self.set_size = 0  # dice of the current set at the table, as last reported
        self.current_set = 0
        # The offer round.
        self.round_kind = -1
        self.round_anchor = 0
        self.round_declined = 0
        # Seats that declined the dice since the shooter accepted them (in a
        # round that gave them back to the previous shooter): not players who
        # would shoot.
        self.declined_since_accept = 0
        self.ever_offered = False
        # The last roll, and what undoing its decision restores (`decide`).
        self.last_roll = -1
        self.last_roll_valid = False
        self.last_roll_called = False
        self.last_roll_point = 0
        self.last_roll_seat = 0
        self.last_roll_by_player = False
        self.last_roll_dice: tuple[str, ...] = ()
        self.face1 = self.face2 = 0  # the faces counted (a cocked die, a ruling: another)
        self.last_roll_voided_rows = IntBuffer(64)  # settled since the last roll
        self.decided.size = 0
        self.pending_roll = -1  # the roll that decided what `decided` holds
        self.undo_point = self.undo_seven_out_seat = self.undo_come_count = 0
        self.undo_line_bettors = 0
        self.undo_stick_decided = self.undo_made_point = False
        # (a void roll is no 7 Out: it neither ends the lost-die allowance nor
        # makes a previous shooter)
        self.undo_lost_allowance_over = self.undo_come_spent = False
        self.undo_previous_shooter_seat = 0
        self.dispute_die: str | None = None
        # The dice procedures under way: a die off the table, a lost die (6.1).
        self.offtable_row = -1
        self.offtable_offered = False
        self.lost_row = -1
        self.lost_shooter = 0
        self.lost_set = 0
        self.lost_count = 0
        self.lost_allowance_over = False
