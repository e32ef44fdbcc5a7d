# cython: language_level=3
# The C types of wagers.py (Cython's pure Python mode).
cimport cython
from libc.stdint cimport int64_t

# (their values imported from auditor.game.ids)
cdef long PASS, DONT_PASS, COME, NO_DECISION, TRAVEL, SEATS
cdef long DECISION_ROWS

@cython.final
cdef class Decisions:
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
