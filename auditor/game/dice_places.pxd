# cython: language_level=3
# The C types of dice_places.py (Cython's pure Python mode).
cimport cython
from auditor.game.buffers cimport IntBuffer

# (their values imported from auditor.game.ids)
cdef long NEW, LAYOUT

cpdef long located(long where)

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
