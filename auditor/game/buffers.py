"""The replay's integer buffers: `IntBuffer`, the one growing column of
64-bit integers every part of the replay appends to (compiled, an append is a
store into the array's memory), and `ints`, the fixed arrays its typed
containers hold.

Its own module because every other part of the replay (the wagers, the
dice's places, the table's state, the loop, what the replay writes) is made
of these. Compiled by Cython with `buffers.pxd` (see `auditor.game.replay`).
"""

from __future__ import annotations

import numpy as np

try:
    import cython  # compiled: directives Cython reads (see the methods using them)
except ImportError:  # run uncompiled without Cython: the directives do nothing
    from auditor.game import cython_shim as cython

#: True when this module runs compiled (a C extension built from this file).
#: The replay's modules are compiled together or not at all (setup.py):
#: `auditor.game.replay.COMPILED` says whether all of them are.
COMPILED = not __file__.endswith(".py")


def ints(n: int):
    """`n` zeros, read and written one at a time by the replay: a numpy
    array when compiled (the `.pxd` files type it as a C array view), a list in
    plain Python (where indexing a list is the faster)."""
    return np.zeros(n, dtype=np.int64) if COMPILED else [0] * n


def doubled(values):
    """`values` (from `ints`) with as many zeros again after them."""
    return np.concatenate([values, np.zeros_like(values)]) if COMPILED else values + [0] * len(values)


class IntBuffer:
    """A column of 64-bit integers appended one at a time: a numpy array
    that doubles when full. Compiled, an append is a store into the array's
    memory (`buffers.pxd` types it); a list would hold a Python int per value,
    scattered in memory, each to be converted again at the end."""

    def __init__(self, capacity: int = 4096):
        self.array = np.empty(capacity, dtype=np.int64)
        self.data = self.array
        self.size = 0

    def grow(self) -> None:
        """Twice the room (apart from `append`, which stays a few machine
        instructions once compiled)."""
        grown = np.empty(max(2 * self.size, 16), dtype=np.int64)
        grown[:self.size] = self.array
        self.array = self.data = grown

    def at(self, j: int) -> int:
        return self.data[j]

    def clear(self) -> None:
        self.size = 0

    def last(self) -> int:
        return self.data[self.size - 1]

    def take(self) -> np.ndarray:
        """The values so far (a copy), the buffer emptied."""
        out = self.array[:self.size].copy()
        self.size = 0
        return out

    def values(self) -> np.ndarray:
        """The values so far, in place (a view of the buffer)."""
        return self.array[:self.size]


def _append(self: IntBuffer, value: int) -> None:
    """`IntBuffer.append`: `value` at the end. Compiled, `append` is
    `buffers.pxd`'s inline method, these same lines typed: the modules
    appending (each a C extension of its own) then inline it, where a call
    into this one would cost the replay several per cent (tests/game/
    test_replay_compiled.py proves both derive the same state)."""
    if self.size == self.data.shape[0]:
        self.grow()
    self.data[self.size] = value
    self.size += 1


if not cython.compiled:
    IntBuffer.append = _append

