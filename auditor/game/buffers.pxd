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
    cpdef grow(self)
    cpdef int64_t last(self)
    cpdef int64_t at(self, Py_ssize_t j)
    cpdef void clear(self)

    # buffers.py's `_append`, typed, as an inline method: each module that
    # cimports IntBuffer compiles it into its own appends (a call into this
    # extension from another cannot be inlined).
    # (no index check: `size` is below the length, the buffer grown first)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    cdef inline int append(self, int64_t value) except -1:
        if self.size == self.data.shape[0]:
            self.grow()
        self.data[self.size] = value
        self.size += 1
        return 0
