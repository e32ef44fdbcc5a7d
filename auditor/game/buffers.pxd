# cython: language_level=3
# The C types of buffers.py (Cython's pure Python mode): the integer columns
# every other part of the replay cimports.
cimport cython
from libc.stdint cimport int64_t

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
