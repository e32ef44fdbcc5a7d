# cython: language_level=3
cimport cython
# Note: decide()'s `held` typed as dict, walked by a for/else with break, made
# Cython 3.3 leak a reference per seat (hence `_holds_any`);
# tests/test_replay_compiled.py replays under tracemalloc to catch such leaks.
from libc.stdint cimport int64_t

cdef long WAGER_SETTLED, WAGER_PLACED, ROLL, DICE_COLLECTED, SETTLEMENT_COMPLETE, TOTAL_CALLED
cdef long DICE_TO_SHOOTER, NEW, BOWL, OFFERED, SHOOTER, LAYOUT, OFF_TABLE, LOST, REMOVED

cpdef long long bit(long seat)
cpdef bint _holds_any(dict held, frozenset keys)

cdef class IntBuffer:
    cdef public object array
    cdef int64_t[:] data
    cdef public Py_ssize_t size
    cpdef append(self, int64_t value)
    cpdef int64_t last(self)

cdef class Die:
    cdef public bint checked_use, failed, found
    cdef public list found_inspections, inspections
    cdef public set live
    cdef public int loc
    cdef public object serial
    cdef public long set_id

cdef class TableReplay:
    cdef public object out, decisions, tables, inputs
    cdef public dict sinks
    cdef public int bar
    cdef public list handlers
    cdef public IntBuffer decision_rows, decision_totals, decision_seven_outs
    cdef public IntBuffer settle_rows, settle_decided_by, player_roll_rows
    cdef public list settle_expected, roll_dice
    cdef public IntBuffer roll_total, roll_point_before, roll_line_bet, roll_by_shooter
    cdef public IntBuffer roll_marker_off, roll_come_wagers, roll_other_line_bettors
    cdef public IntBuffer roll_after_point_made
    cdef public long point, shooter, open_seat, seven_out_seat
    cdef public long long occupied, line_bettors, round_declined
    cdef public bint made_point, has_failed, ever_offered, last_roll_valid, last_roll_called
    cdef public bint marker_off_dp, stick_decided, offtable_offered, lost_allowance_over
    cdef public bint last_roll_by_player
    cdef public object selected, dispute_die
    cdef public long selection_row, come_count, set_count, set_size, current_set
    cdef public long round_kind, round_anchor, last_roll, last_roll_point, last_roll_seat
    cdef public long pending_roll, offtable_row, lost_row, lost_shooter, lost_set, lost_count
    cdef public dict wagers, snapshot, dice, sets
    cdef public set live
    cdef public list last_roll_voided_rows, pending, passed_rows
    cdef public long face1, face2
    cdef public object last_roll_dice, undo
    cdef public list seat, die1, die2, role, dice_in, bet, outcome
    cdef public long base

    @cython.locals(rows=IntBuffer, shooters=IntBuffer, points=IntBuffer, occupieds=IntBuffer,
                   bettors=IntBuffer,
                   k=cython.long, base=cython.long, e=cython.long, shooter=cython.long,
                   point=cython.long, occupied=cython.longlong, line_bettors=cython.longlong)
    cpdef run(self, long lo, long hi, list ev)
    @cython.locals(rows=IntBuffer, values=list, sink=tuple)
    cpdef put(self, str column, long row, value)
    cpdef check_seat(self, long i, long s)
    cpdef check_row_seat(self, long i, long k)
    cpdef note_never_received(self, long i, tuple d)
    cpdef note_failed(self, long i, tuple d)
    @cython.locals(d=Die)
    cpdef record_use(self, long row, tuple serials)
    cpdef flush_pending(self)
    cpdef mark_passed_then_settled(self)
    cpdef refresh_line_bit(self, long seat)
    @cython.locals(s=cython.long, sb=cython.longlong, info=tuple, w=dict, tracked=bint)
    cpdef on_wager_placed(self, long i, long k)
    @cython.locals(s=cython.long, num=cython.long, match=cython.long, j=cython.long, pn=cython.long,
                   ps=cython.long, any_number=cython.bint, info=tuple, decided=tuple, pending=list,
                   tracked=bint)
    cpdef on_wager_settled(self, long i, long k)
    cpdef on_settlement_complete(self, long i, long k)
    @cython.locals(die=Die, d=tuple, dice=dict)
    cpdef on_dice_collected(self, long i, long k)
    @cython.locals(die=Die)
    cpdef on_dice_to_bowl(self, long i, long k)
    cpdef on_dice_to_shooter(self, long i, long k)
    @cython.locals(stick_rows=IntBuffer, total=IntBuffer, point=IntBuffer, any_wager=IntBuffer,
                   willing=IntBuffer, after_decision=IntBuffer, dice_used=list, die=Die, d=tuple, dice=dict, w=dict, s=cython.long, d1=cython.long, d2=cython.long, sb=cython.longlong, by_player=cython.bint, by_shooter=cython.bint, line_bet=cython.bint)
    cpdef on_roll(self, long i, long k)
    @cython.locals(total=cython.long, point=cython.long, seat_no=cython.long, count=cython.long, num=cython.long, seven_out=cython.bint, decision=cython.bint,
                   w=dict, held=dict, pending=list, table=dict, affected=frozenset, wagers=dict,
                   snapshot=dict)
    cpdef decide(self, long i)
    cpdef on_total_called(self, long i, long k)
