"""What several formats derive from the same audit, derived once per
`write_reports` call: inside `sharing()`, `shared(fn, obj)` computes
`fn(obj)` once for the same function and object. The memo ends with the
block, so nothing is kept from one audit to the next; outside a block every
call computes afresh. A shared value is read by many formats: never modify it.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

_memo: ContextVar[dict | None] = ContextVar("auditor_report_memo", default=None)


@contextmanager
def sharing():
    """A block whose reports share what they derive; a block inside another
    shares the outer one's (the terminal's lines and the files, say)."""
    if _memo.get() is not None:
        yield
        return
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


def shared(fn, obj):
    """`fn(obj)`, computed once per `sharing()` block for this `fn` and this
    very object (by identity; the object is held so its id is not reused)."""
    memo = _memo.get()
    if memo is None:
        return fn(obj)
    key = (fn, id(obj))
    if key not in memo:
        memo[key] = (obj, fn(obj))
    return memo[key][1]


def made(fn, obj):
    """`fn(obj)` where this `sharing()` block has already computed it, else
    None (not computed here: a reader that needs only part of it can make
    that part alone)."""
    memo = _memo.get()
    entry = None if memo is None else memo.get((fn, id(obj)))
    return None if entry is None else entry[1]
