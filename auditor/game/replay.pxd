# cython: language_level=3
cimport cython
# Note: decide()'s `held` typed as dict, walked by a for/else with break, made
# Cython 3.3 leak a reference per seat; tests/game/test_replay_compiled.py replays
# under tracemalloc to catch such leaks.
from libc.stdint cimport int64_t

cdef long WAGER_SETTLED, WAGER_PLACED, ROLL, DICE_COLLECTED, SETTLEMENT_COMPLETE, TOTAL_CALLED
cdef long DICE_TO_SHOOTER, DICE_OFFERED, DICE_TO_BOWL, DICE_SELECTED, DICE_ACCEPTED
cdef long SHOOTER_RELINQUISH, DICE_INSPECTED, NEW, BOWL, OFFERED, SHOOTER, LAYOUT, OFF_TABLE, LOST, REMOVED
cdef long PASS, DONT_PASS, COME, DONT_COME, WIN, LOSE, PUSH, NO_DECISION, TRAVEL, SEATS
cdef long DECISION_ROWS

cpdef long long bit(long seat)
cpdef long located(long where)

@cython.final
cdef class IntBuffer:
    cdef public object array
    cdef int64_t[:] data
    cdef public Py_ssize_t size
    cpdef int append(self, int64_t value) except -1
    cpdef grow(self)
    cpdef int64_t last(self)
    cpdef int64_t at(self, Py_ssize_t j)
    cpdef void clear(self)

@cython.final
cdef class _Decisions:
    cdef public long bar, width
    cdef public tuple keys
    cdef public dict index
    cdef int64_t[:] key_fam, key_num, codes, built
    @cython.locals(slot=cython.long, start=cython.long, j=cython.long)
    cpdef long row(self, long point, long total)

@cython.final
cdef class Wagers:
    cdef public long width, n_seats
    cdef int64_t[:] key_fam, order, present, held, key, count
    @cython.locals(j=cython.long)
    cpdef clear(self)
    @cython.locals(j=cython.long, s=cython.long, m=cython.long, width=cython.long)
    cpdef copy_from(self, Wagers other)
    cpdef add_seat(self, long s)
    @cython.locals(j=cython.long, at=cython.long)
    cpdef drop_seat(self, long s)
    @cython.locals(m=cython.long)
    cpdef long find(self, long s, long key)
    cpdef add(self, long s, long key, long count)
    @cython.locals(m=cython.long)
    cpdef remove_at(self, long s, long at)
    @cython.locals(m=cython.long)
    cpdef long first_of(self, long s, long fam)
    cpdef bint holds_line(self, long s)
    @cython.locals(m=cython.long, n=cython.long)
    cpdef long come_held(self, long s)

@cython.final
cdef class Decided:
    cdef public long size
    cdef int64_t[:] seat, fam, num, outcome
    cpdef append(self, long s, long fam, long num, long outcome)
    @cython.locals(j=cython.long)
    cpdef remove(self, long at)

@cython.final
cdef class DieLog:
    cdef public IntBuffer rows, die, where, set_id
    cpdef add(self, long row, long die, long where, long set_id)

@cython.final
cdef class Die:
    cdef public bint checked_use, failed, found
    cdef public list found_inspections, inspections
    cdef public set live
    cdef public int loc
    cdef public object serial
    cdef public long serial_id, set_id
    cdef public DieLog log
    cpdef move(self, long row, long where)

@cython.final
cdef class TableReplay:
    cdef public object out, inputs
    cdef public _Decisions decisions
    cdef public dict sinks
    cdef public list handlers, roles, outcomes, dice_values
    cdef public long player
    cdef int64_t[:] outcome_id, bet_key, bet_fam, bet_num
    cdef int64_t[:] seat, die1, die2, role, dice_code, bet, outcome, event
    cdef public Wagers wagers, snapshot
    cdef public Decided decided
    cdef public IntBuffer decision_rows, decision_totals
    cdef public IntBuffer settle_rows, settle_decided_by, player_roll_rows, settle_expected
    cdef public IntBuffer call_rows, call_rolls
    cdef public IntBuffer roll_total, roll_line_bet, roll_by_shooter
    cdef public IntBuffer roll_marker_off, roll_come_wagers, roll_other_line_bettors
    cdef public IntBuffer roll_after_point_made
    cdef public long point, shooter, open_seat, seven_out_seat
    cdef public long long occupied, line_bettors, round_declined, declined_since_accept
    cdef public bint made_point, ever_offered, last_roll_valid, last_roll_called
    cdef public bint marker_off_dp, stick_decided, offtable_offered, lost_allowance_over
    cdef public bint last_roll_by_player
    cdef public object selected, dispute_die
    cdef public long come_count, set_count, set_size, current_set
    cdef public long round_kind, round_anchor, last_roll, last_roll_point, last_roll_seat
    cdef public long pending_roll, offtable_row, lost_row, lost_shooter, lost_set, lost_count
    cdef public long undo_point, undo_seven_out_seat, undo_come_count
    cdef public long long undo_line_bettors
    cdef public bint undo_stick_decided, undo_made_point, undo_lost_allowance_over
    cdef public bint come_spent, undo_come_spent
    cdef public long previous_shooter_seat, undo_previous_shooter_seat
    cdef public dict dice, sets
    cdef public list die_cache
    cdef int64_t[:] die_generation
    cdef public long generation
    cdef public set live
    cdef public IntBuffer last_roll_voided_rows
    cdef public long face1, face2
    cdef public object last_roll_dice
    cdef public long base

    @cython.locals(rows=IntBuffer, shooters=IntBuffer, points=IntBuffer, occupieds=IntBuffer,
                   bettors=IntBuffer, seven_outs=IntBuffer, ev=int64_t[:],
                   k=cython.long, base=cython.long, e=cython.long, shooter=cython.long,
                   point=cython.long, occupied=cython.longlong, line_bettors=cython.longlong,
                   seven_out=cython.long)
    cpdef run(self, long lo, long hi)
    cdef tuple dice_of(self, long k)
    @cython.locals(code=cython.long, dice=dict, dies=tuple)
    cdef tuple dies_of(self, long k)
    cdef object role_of(self, long k)
    cdef object outcome_of(self, long k)
    @cython.locals(rows=IntBuffer, values=list, sink=tuple)
    cpdef put(self, str column, long row, value)
    @cython.locals(die=Die, out=list, dies=tuple, j=cython.Py_ssize_t)
    cpdef list not_at_table(self, long k)
    @cython.locals(die=Die)
    cpdef move_row(self, long i, long k, long where)
    @cython.locals(d=Die, dies=tuple, j=cython.Py_ssize_t)
    cpdef record_use(self, long row, long k)
    @cython.locals(d=Decided, j=cython.long)
    cpdef list owed(self)
    cpdef flush_pending(self)
    cpdef refresh_line_bit(self, long seat)
    @cython.locals(wagers=Wagers, j=cython.long)
    cpdef bint any_line_wager(self)
    @cython.locals(key=cython.long, fam=cython.long, m=cython.long, wagers=Wagers)
    cpdef take_wager(self, long s, long bet)
    @cython.locals(s=cython.long, sb=cython.longlong, bet=cython.long, key=cython.long)
    cpdef on_wager_placed(self, long i, long k)
    @cython.locals(s=cython.long, bet=cython.long, fam=cython.long, num=cython.long,
                   outcome=cython.long, match=cython.long, j=cython.long, expected=cython.long,
                   any_number=cython.bint, d=Decided)
    cpdef on_wager_settled(self, long i, long k)
    @cython.locals(die=Die, d=tuple, dice=dict)
    cpdef on_dice_collected(self, long i, long k)
    @cython.locals(die=Die, d=tuple, dice=dict, size=cython.long, lost=cython.bint)
    cpdef on_dice_to_bowl(self, long i, long k)
    cpdef on_dice_to_shooter(self, long i, long k)
    @cython.locals(die=Die, d=tuple, dice=dict)
    cpdef on_dice_inspected(self, long i, long k)
    @cython.locals(s=cython.long, d=tuple, live=set)
    cpdef on_dice_offered(self, long i, long k)
    @cython.locals(d=tuple)
    cpdef on_dice_selected(self, long i, long k)
    @cython.locals(s=cython.long)
    cpdef on_dice_accepted(self, long i, long k)
    @cython.locals(s=cython.long, anchor=cython.long)
    cpdef on_shooter_relinquish(self, long i, long k)
    @cython.locals(stick_rows=IntBuffer, total=IntBuffer, any_wager=IntBuffer,
                   willing=IntBuffer, after_decision=IntBuffer, die=Die, d=tuple,
                   s=cython.long, d1=cython.long, d2=cython.long, sb=cython.longlong,
                   by_player=cython.bint, by_shooter=cython.bint, line_bet=cython.bint,
                   after_point_made=cython.bint)
    cpdef on_roll(self, long i, long k)
    @cython.locals(total=cython.long, point=cython.long, j=cython.long, s=cython.long,
                   start=cython.long, end=cython.long, m=cython.long, key=cython.long,
                   code=cython.long, count=cython.long, fam=cython.long, row=cython.long,
                   width=cython.long, seven_out=cython.bint, decision=cython.bint,
                   wagers=Wagers, snapshot=Wagers, decided=Decided, decisions=_Decisions,
                   codes=int64_t[:], key_fam=int64_t[:], key_num=int64_t[:])
    cpdef decide(self, long i)
    cpdef undo_decision(self)
    cpdef on_total_called(self, long i, long k)
