"""How loading holds its memory: numpy's large arrays on small pages while a
log is read and typed (`small_pages`), Arrow's allocator chosen for a lean
peak (`use_lean_memory_pool`) and its freed blocks handed back
(`release_memory`).

Its own module because these are process-wide tuning, not reading: the
loader, the engines and the `check` command call them around their work
(docs/performance.md has the measurements that chose them).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import pyarrow as pa

from auditor.compat import set_madvise_hugepage


@contextmanager
def small_pages() -> Iterator[None]:
    """Numpy arrays of 4 MB or more allocated without numpy's `madvise`
    asking for transparent huge pages (the documented knob the environment
    variable NUMPY_MADVISE_HUGEPAGE sets: when it is set, its choice stands).
    Reading and typing a log (`load_file`, `order_events`, whichever engine
    calls them) touch a few GB of fresh memory once, and a fresh huge page
    was found to cost far more kernel time to fault in than its 512 small
    pages. Process-wide while it lasts; put back afterwards."""
    previous = None if "NUMPY_MADVISE_HUGEPAGE" in os.environ else set_madvise_hugepage(False)
    if previous is None:  # the environment's choice, or numpy's knob is gone
        yield
        return
    try:
        yield
    finally:
        set_madvise_hugepage(previous)


def release_memory() -> None:
    """Hand the memory Arrow freed back to the system. Its allocator keeps
    freed blocks for reuse, which after reading a large file can be as much
    again as the data kept (new in pyarrow 13; a no-op before)."""
    release = getattr(pa.default_memory_pool(), "release_unused", None)
    if release is not None:
        release()


def use_lean_memory_pool() -> None:
    """Allocate Arrow memory with jemalloc where the wheel has it and nobody
    chose otherwise (ARROW_DEFAULT_MEMORY_POOL): mimalloc, the default, keeps
    hundreds of MB of freed blocks while a large log is read (a higher peak,
    at the same speed)."""
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL") or \
            pa.default_memory_pool().backend_name != "mimalloc":
        return
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except (NotImplementedError, pa.ArrowNotImplementedError):
        pass
