"""The integer ids the replay's compiled modules share: where a die is, the
wager families, what a roll does to a wager, the seats.

Its own plain module because a constant typed in a `.pxd` (`cdef long`) is
C only, not an attribute of its compiled module: each compiled module that
uses one imports its value from here (its `.pxd` types it), so every
module holds the same numbers and none is written twice.
"""

from __future__ import annotations

from auditor.game.state import SETTLE_EXPECTED, UNDECIDED
from auditor.logs.schema import MAX_SEAT

# Where a die is: the live places (at the table) are those up to LAYOUT, so
# `loc <= LAYOUT` is the hot paths' spelling of `loc in LIVE`.
NEW, BOWL, OFFERED, SHOOTER, LAYOUT, OFF_TABLE, LOST, REMOVED = range(8)
LIVE = frozenset((NEW, BOWL, OFFERED, SHOOTER, LAYOUT))

#: The families of the wagers the replay decides, by id.
FAMILIES = ("pass", "dont_pass", "come", "dont_come")
PASS, DONT_PASS, COME, DONT_COME = range(len(FAMILIES))
#: What a roll does to a wager, by id: an outcome, nothing (NO_DECISION), or
#: (TRAVEL + key) an untravelled come bet travels to that key.
OUTCOMES = SETTLE_EXPECTED[:UNDECIDED]  # ("win", "lose", "push"): the ids settle_expected keeps
WIN, LOSE, PUSH = range(len(OUTCOMES))
NO_DECISION, TRAVEL = -1, len(OUTCOMES)
#: Seats are 1..MAX_SEAT (0: none recorded), the index of per-seat arrays.
SEATS = 64
assert MAX_SEAT < SEATS
