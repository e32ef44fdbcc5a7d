"""The wagers the replay decides (pass, don't pass, come, don't come): what a
roll does to each (`Decisions`), which a table's seats hold (`Wagers`) and
what the last valid roll decided that is still to be settled (`Decided`).

Its own module because the wagers are the replay's largest and most
arithmetic part, kept as flat integer arrays in the orders the settlement
matching depends on; the handlers (`auditor.game.replay`) only call these.
Compiled by Cython with `wagers.pxd`.
"""

from __future__ import annotations

import functools

try:
    import cython  # compiled: directives Cython reads (see the methods using them)
except ImportError:  # run uncompiled without Cython: the directives do nothing
    from auditor.game import cython_shim as cython

from auditor.game.buffers import doubled, ints
from auditor.game.ids import (
    COME,
    DONT_PASS,
    FAMILIES,
    NO_DECISION,
    OUTCOMES,
    PASS,
    SEATS,
    TRAVEL,
)
from auditor.game.outcomes import POINTS, expected_outcome

LINE_KEYS = ("pass", "dont_pass")
COME_FAMILY = ("come", "dont_come")


def bet_name(bet: str, number: int) -> str:
    return f"{bet}_{number}" if number else bet


@functools.lru_cache(maxsize=1024)
def split_bet(name: str) -> tuple[str, int]:
    """`come_6` -> (come, 6); `pass` -> (pass, 0)."""
    for family in ("dont_come", "come"):
        if name.startswith(family + "_"):
            tail = name[len(family) + 1:]
            if tail.isdigit():
                return family, int(tail)
    return name, 0


def bet_info(name: str) -> tuple[str, int, str, bool]:
    """(family, number, wager key, whether the replay tracks the wager)."""
    fam, num = split_bet(name)
    return fam, num, bet_name(fam, num), fam in LINE_KEYS or fam in COME_FAMILY


#: Rows of `Decisions.codes`: one per point * 13 + total, and a last one
#: worked out again for each (point, total) outside 0..12 (a malformed total).
DECISION_ROWS = 13 * 13 + 1


class Decisions:
    """What a roll of `total` with the table at `point` does to each wager
    key the log can hold (ids: positions in `keys`): an entry of `codes` per
    key (see OUTCOMES), in a row per (point, total) worked out on first use.
    Every key is of a family the replay decides (`FAMILIES`)."""

    def __init__(self, bar: int, keys):
        self.bar = bar
        travelled = [bet_name(f, n) for f in COME_FAMILY for n in sorted(POINTS)]
        self.keys = tuple(dict.fromkeys([*keys, *travelled]))
        self.width = len(self.keys)
        self.index = {key: j for j, key in enumerate(self.keys)}
        self.key_fam = ints(self.width)
        self.key_num = ints(self.width)
        for j, key in enumerate(self.keys):
            fam, num = split_bet(key)
            self.key_fam[j] = FAMILIES.index(fam)
            self.key_num[j] = num
        self.codes = ints(DECISION_ROWS * self.width)
        self.built = ints(DECISION_ROWS)

    def row(self, point: int, total: int) -> int:
        """Where the (point, total) row of `codes` starts."""
        slot = point * 13 + total if 0 <= point <= 12 and 0 <= total <= 12 \
            else DECISION_ROWS - 1
        start = slot * self.width
        if not self.built[slot]:
            for j, key in enumerate(self.keys):
                self.codes[start + j] = self.code(key, point, total)
            self.built[slot] = slot != DECISION_ROWS - 1
        return start

    def code(self, key: str, point: int, total: int) -> int:
        fam, num = split_bet(key)
        if fam in COME_FAMILY and num == 0 and total in POINTS:
            return TRAVEL + self.index[bet_name(fam, total)]
        result = expected_outcome(fam, num, point, total, self.bar)
        return NO_DECISION if result is None else OUTCOMES.index(result)


class Wagers:
    """The wagers the replay decides that a table's seats hold: per seat, the
    keys held (ids of `Decisions.keys`) and how many of each, in the order
    first held, and the seats in the order they first held one. Those are
    the orders a dict per seat kept: they decide the order of what a roll
    decides, and so which settlement is matched to which decision.

    Flat integer arrays (seat s's keys from s * width on), so that compiled
    no wager is a Python object and a roll's undo snapshot (`copy_from`) is
    a copy of a few integers."""

    def __init__(self, width: int, key_fam):
        self.width = width
        self.key_fam = key_fam
        self.order = ints(SEATS)
        self.n_seats = 0
        self.present = ints(SEATS)
        self.held = ints(SEATS)
        self.key = ints(SEATS * width)
        self.count = ints(SEATS * width)

    def as_dict(self) -> dict[int, dict[int, int]]:
        """{seat: {key: count}} in the orders held (for tests and debugging)."""
        out = {}
        for j in range(self.n_seats):
            s = self.order[j]
            out[s] = {self.key[m]: self.count[m]
                      for m in range(s * self.width, s * self.width + self.held[s])}
        return out

    # (no index check: the seats listed were checked when added)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def clear(self) -> None:
        for j in range(self.n_seats):
            self.present[self.order[j]] = 0
        self.n_seats = 0

    # (no index check: every seat and key position copied was written, checked,
    # when `other` took the wager; both have the same shape)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def copy_from(self, other: Wagers) -> None:
        self.clear()
        width = self.width
        for j in range(other.n_seats):
            s = other.order[j]
            self.order[j] = s
            self.present[s] = 1
            self.held[s] = other.held[s]
            for m in range(s * width, s * width + other.held[s]):
                self.key[m] = other.key[m]
                self.count[m] = other.count[m]
        self.n_seats = other.n_seats

    def add_seat(self, s: int) -> None:
        if not self.present[s]:
            self.present[s] = 1
            self.held[s] = 0
            self.order[self.n_seats] = s
            self.n_seats += 1

    def drop_seat(self, s: int) -> None:
        """The seat and its wagers gone (a player left)."""
        if not self.present[s]:
            return
        self.present[s] = 0
        at = 0
        while self.order[at] != s:
            at += 1
        for j in range(at, self.n_seats - 1):
            self.order[j] = self.order[j + 1]
        self.n_seats -= 1

    def find(self, s: int, key: int) -> int:
        """Where seat `s` holds `key` (an index of `key`/`count`), or -1."""
        if self.present[s]:
            for m in range(s * self.width, s * self.width + self.held[s]):
                if self.key[m] == key:
                    return m
        return -1

    def add(self, s: int, key: int, count: int) -> None:
        """`count` more of `key` for seat `s` (held already: at the end)."""
        m = self.find(s, key)
        if m >= 0:
            self.count[m] += count
        else:
            m = s * self.width + self.held[s]
            self.key[m] = key
            self.count[m] = count
            self.held[s] += 1

    def remove_at(self, s: int, at: int) -> None:
        """Seat `s` no longer holds the key at `at` (the rest keep their order)."""
        for m in range(at, s * self.width + self.held[s] - 1):
            self.key[m] = self.key[m + 1]
            self.count[m] = self.count[m + 1]
        self.held[s] -= 1

    def first_of(self, s: int, fam: int) -> int:
        """Where seat `s` holds its first key of family `fam`, or -1."""
        if self.present[s]:
            for m in range(s * self.width, s * self.width + self.held[s]):
                if self.key_fam[self.key[m]] == fam:
                    return m
        return -1

    def holds_line(self, s: int) -> bool:
        """Whether seat `s` holds a pass or don't pass wager."""
        return self.first_of(s, PASS) >= 0 or self.first_of(s, DONT_PASS) >= 0

    def come_held(self, s: int) -> int:
        """How many come and don't come wagers seat `s` holds."""
        n = 0
        if self.present[s]:
            for m in range(s * self.width, s * self.width + self.held[s]):
                if self.key_fam[self.key[m]] >= COME:
                    n += self.count[m]
        return n


class Decided:
    """What the last valid roll decided and is still to be settled, in the
    order decided: per wager its seat, family, number and outcome (ids)."""

    def __init__(self, capacity: int = 64):
        self.size = 0
        self.seat, self.fam = ints(capacity), ints(capacity)
        self.num, self.outcome = ints(capacity), ints(capacity)

    # (no index check: `size` is below the length, the arrays grown first)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def append(self, s: int, fam: int, num: int, outcome: int) -> None:
        if self.size == len(self.seat):
            self.seat, self.fam = doubled(self.seat), doubled(self.fam)
            self.num, self.outcome = doubled(self.num), doubled(self.outcome)
        j = self.size
        self.seat[j], self.fam[j], self.num[j], self.outcome[j] = s, fam, num, outcome
        self.size += 1

    # (no index check: `at` is a position below `size`, as are those moved)
    @cython.boundscheck(False)
    @cython.initializedcheck(False)
    def remove(self, at: int) -> None:
        for j in range(at, self.size - 1):
            self.seat[j], self.fam[j] = self.seat[j + 1], self.fam[j + 1]
            self.num[j], self.outcome[j] = self.num[j + 1], self.outcome[j + 1]
        self.size -= 1
