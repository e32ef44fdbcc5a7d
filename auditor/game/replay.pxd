# cython: language_level=3
# The C types of replay.py (Cython's pure Python mode): the loop and the
# handlers; the containers they use are cimported from the modules the
# replay is cut into, each with its own .pxd.
cimport cython
# Note: decide()'s `held` typed as dict, walked by a for/else with break, made
# Cython 3.3 leak a reference per seat; tests/game/test_replay_compiled.py replays
# under tracemalloc to catch such leaks.
from libc.stdint cimport int64_t
from auditor.game.buffers cimport IntBuffer
from auditor.game.dice_places cimport Die
from auditor.game.table_state cimport TableState
from auditor.game.wagers cimport Decided, Decisions, Wagers

cdef long WAGER_SETTLED, WAGER_PLACED, ROLL, DICE_COLLECTED, SETTLEMENT_COMPLETE, TOTAL_CALLED
cdef long DICE_TO_SHOOTER, DICE_OFFERED, DICE_TO_BOWL, DICE_SELECTED, DICE_ACCEPTED
cdef long SHOOTER_RELINQUISH, DICE_INSPECTED
# (their values imported from auditor.game.ids, as dice_places and wagers do)
cdef long NEW, BOWL, OFFERED, SHOOTER, LAYOUT, OFF_TABLE, LOST, REMOVED
cdef long COME, WIN, LOSE, PUSH, NO_DECISION, TRAVEL

cpdef long long bit(long seat)

@cython.final
cdef class TableReplay(TableState):
    cdef public object out, inputs
    cdef public Decisions decisions
    cdef public dict sinks
    cdef public list handlers, roles, outcomes, dice_values
    cdef public long player
    cdef int64_t[:] outcome_id, bet_key, bet_fam, bet_num
    cdef int64_t[:] seat, die1, die2, role, dice_code, bet, outcome, event
    cdef public IntBuffer decision_rows, decision_totals
    cdef public IntBuffer settle_rows, settle_decided_by, player_roll_rows, settle_expected
    cdef public IntBuffer call_rows, call_rolls
    cdef public IntBuffer roll_total, roll_line_bet, roll_by_shooter
    cdef public IntBuffer roll_marker_off, roll_come_wagers, roll_other_line_bettors
    cdef public IntBuffer roll_after_point_made
    cdef public list die_cache
    cdef int64_t[:] die_generation
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
                   wagers=Wagers, snapshot=Wagers, decided=Decided, decisions=Decisions,
                   codes=int64_t[:], key_fam=int64_t[:], key_num=int64_t[:])
    cpdef decide(self, long i)
    cpdef undo_decision(self)
    cpdef on_total_called(self, long i, long k)
