# cython: language_level=3
# The C types of table_state.py (Cython's pure Python mode): the table's
# state, one record, extended by replay.pxd's TableReplay.
from auditor.game.buffers cimport IntBuffer
from auditor.game.wagers cimport Decided, Wagers

cdef class TableState:
    # the game
    cdef public long point, shooter, open_seat, seven_out_seat, come_count
    cdef public long long occupied, line_bettors
    cdef public bint made_point, marker_off_dp, stick_decided, come_spent
    cdef public long previous_shooter_seat
    cdef public object selected
    cdef public Wagers wagers, snapshot
    cdef public Decided decided
    # the dice
    cdef public dict dice, sets
    cdef public long generation, set_count, set_size, current_set
    cdef public set live
    # the offer round
    cdef public long round_kind, round_anchor
    cdef public long long round_declined, declined_since_accept
    cdef public bint ever_offered
    # the last roll, and what undoing its decision restores
    cdef public long last_roll, last_roll_point, last_roll_seat, face1, face2, pending_roll
    cdef public bint last_roll_valid, last_roll_called, last_roll_by_player
    cdef public object last_roll_dice, dispute_die
    cdef public IntBuffer last_roll_voided_rows
    cdef public long undo_point, undo_seven_out_seat, undo_come_count
    cdef public long long undo_line_bettors
    cdef public bint undo_stick_decided, undo_made_point, undo_lost_allowance_over
    cdef public bint undo_come_spent
    cdef public long undo_previous_shooter_seat
    # the dice procedures under way
    cdef public long offtable_row, lost_row, lost_shooter, lost_set, lost_count
    cdef public bint offtable_offered, lost_allowance_over

    cpdef reset(self, long generation)
