"""Small vectorised helpers the check families share.

Most checks look at a few rows (the rolls, the offers, the settlements) of
millions. `Shared` works out, once per audit, what many checks need (the rows
of each event, category codes, table bounds, seq, the replay's sparse columns
as arrays), so that a check costs in proportion to the rows it looks at, not
to the whole log, and nothing is recomputed rule after rule.
"""

from __future__ import annotations

import weakref
from functools import cached_property

import numpy as np
import pandas as pd

from auditor.checks.registry import Hits
from auditor.game.dice_values import DiceValues
from auditor.logs import tables
from auditor.logs.arrays import category_codes

_NO_ROWS = np.empty(0, dtype=np.int64)

#: Rows per block of a pass over every row: temporaries of a block stay in the
#: CPU cache and their memory is reused, where whole-log temporaries (80 MB of
#: int64 at 10M events) cost a page fault per 4 KiB touched.
BLOCK = 1 << 18


def code_is(codes: np.ndarray, ks) -> np.ndarray:
    """Whether each of `codes` is one of the few `ks`: compared one by one,
    which for category codes (a byte or two each) is quicker than a look-up
    table, whose reading first widens every code to a 64-bit index."""
    mask = codes == ks[0]
    for k in ks[1:]:
        mask |= codes == k
    return mask


def rows_where(n: int, mask_of, start: int = 0) -> np.ndarray:
    """Rows r in [start, n) where `mask_of(a, b)` (a boolean array for rows
    a..b-1) holds, worked out block by block."""
    out = []
    for a in range(start, n, BLOCK):
        b = min(a + BLOCK, n)
        hit = np.flatnonzero(mask_of(a, b))
        if len(hit):
            out.append(hit + a)
    return np.concatenate(out).astype(np.int64, copy=False) if out else _NO_ROWS


class Shared:
    """What many checks derive from the events and the replay, worked out
    on first use and kept for the audit (`CheckContext.shared`)."""

    def __init__(self, events: pd.DataFrame, state):
        self.events = events
        self._state = state
        self.n = len(events)
        self._memo: dict = {}

    @classmethod
    def of(cls, events: pd.DataFrame, state) -> Shared:
        """The one `Shared` of `events` and their replay `state`, kept on the
        state while it lives (`ReplayState.derived`): the checks and then
        the reports' collectors, which run where the events are before the
        state goes, work out each look-up once (at 10M events the dice
        tally's own codes and rows cost it 0.25 s). Without a replay state:
        a new one."""
        derived = getattr(state, "derived", None)
        if not isinstance(derived, dict):
            return cls(events, state)
        got = derived.get("shared")
        if got is None or got.events is not events:
            got = derived["shared"] = cls(events, None)
            # (held weakly: a state holding what holds it would be a cycle,
            # freed only by a collection of the whole heap: 0.27 s at 10M)
            got._state = weakref.ref(state)
        return got

    @property
    def state(self):
        """The replay's state of the events."""
        state = self._state
        return state() if isinstance(state, weakref.ref) else state

    # --- categorical columns -------------------------------------------------

    def codes(self, name: str) -> np.ndarray:
        """The category codes of column `name` (-1: nothing recorded)."""
        key = ("codes", name)
        got = self._memo.get(key)
        if got is None:
            column = self.events[name]
            if not isinstance(column.dtype, pd.CategoricalDtype):
                column = column.astype("category")
                self._memo[("column", name)] = column
            got = self._memo[key] = category_codes(column)
        return got

    def _categorical(self, name: str) -> pd.Series:
        column = self._memo.get(("column", name))
        if column is None:
            self.codes(name)
            column = self._memo.get(("column", name), self.events[name])
        return column

    def categories(self, name: str) -> np.ndarray:
        """The categories of `name` as Python objects, with NaN appended: the
        value `.iat` gives for code -1, so `categories(name)[codes]` reads
        exactly as the column does, row by row."""
        key = ("cats", name)
        got = self._memo.get(key)
        if got is None:
            cats = self._categorical(name).cat.categories
            got = np.empty(len(cats) + 1, dtype=object)
            got[:len(cats)] = cats.to_numpy(dtype=object) \
                if pd.api.types.is_string_dtype(cats.dtype) else [c for c in cats]
            got[len(cats)] = np.nan
            self._memo[key] = got
        return got

    def values_at(self, name: str, rows) -> np.ndarray:
        """Values of categorical column `name` at `rows` (object array)."""
        return self.categories(name)[self.codes(name)[rows]]

    def category_hits(self, name: str, key, predicate) -> np.ndarray:
        """Per category of `name` whether `predicate(text)` holds, with one
        more slot, False, for code -1; memoised under `key`."""
        memo = ("hits", name, key)
        got = self._memo.get(memo)
        if got is None:
            cats = self._categorical(name).cat.categories
            got = np.zeros(len(cats) + 1, dtype=bool)
            got[:len(cats)] = [bool(predicate(str(c))) for c in cats]
            self._memo[memo] = got
        return got

    def is_in(self, name: str, values, rows) -> np.ndarray:
        """Whether column `name` is one of `values` at `rows`."""
        wanted = frozenset(values)
        return self.category_hits(name, ("in", wanted), wanted.__contains__)[
            self.codes(name)[rows]]

    def flag(self, word: str, rows) -> np.ndarray:
        """Whether the comma-separated `flags` include `word` at `rows`."""
        return self.category_hits("flags", ("flag", word),
                                  lambda text: word in text.split(","))[self.codes("flags")[rows]]

    # --- events ---------------------------------------------------------------

    def event_rows(self, *names: str) -> np.ndarray:
        """Rows (ascending) whose event is one of `names`."""
        got = self._memo.get(("event", names))
        if got is None:
            codes = self.codes("event")
            cats = self._categorical("event").cat.categories
            index = {str(c): i for i, c in enumerate(cats)}
            ks = [index[name] for name in names if name in index]
            if not ks:
                got = _NO_ROWS
            elif len(ks) <= 4:  # (comparing small codes beats looking each up)
                got = rows_where(self.n, lambda a, b: code_is(codes[a:b], ks))
            else:
                hit = np.zeros(len(cats) + 1, dtype=bool)
                hit[ks] = True
                got = rows_where(self.n, lambda a, b: np.take(hit, codes[a:b]))  # (take: faster)
            self._memo[("event", names)] = got = got.astype(np.int64, copy=False)
        return got

    def next_event(self, rows, *names: str, steps: int = 64) -> np.ndarray:
        """For each of `rows`, the first row after it whose event is one of
        `names` (n where none). The next such event is mostly a row or two
        on (the roll after a pass of the dice, after a call): each step
        forward settles most of the rows left, and only rows still looking
        after `steps` are searched for among every row of those events
        (which are then listed, once)."""
        rows = np.asarray(rows, dtype=np.int64)
        wanted = frozenset(names)
        hit = self.category_hits("event", ("in", wanted), wanted.__contains__)
        codes = self.codes("event")
        out = np.full(len(rows), self.n, dtype=np.int64)
        pending, at = np.arange(len(rows)), rows + 1
        for _ in range(steps):
            inside = at < self.n
            pending, at = pending[inside], at[inside]
            found = hit[codes[at]]
            out[pending[found]] = at[found]
            pending, at = pending[~found], at[~found] + 1
            if not len(pending):
                return out
        out[pending] = next_after(self.event_rows(*names), at - 1, self.n)
        return out

    # --- tables and seq ---------------------------------------------------------

    @cached_property
    def table_starts(self) -> np.ndarray:
        """The first row of every table (ascending; 0 first)."""
        return tables.table_runs(self.events)[0]

    def table_end(self, rows) -> np.ndarray:
        """For each row, the first row after its table (the next table's
        first row, or n)."""
        ends = np.append(self.table_starts[1:], self.n)
        return ends[np.searchsorted(self.table_starts, rows, side="right") - 1]

    @cached_property
    def session_starts(self) -> np.ndarray:
        """The first row of every session (ascending): each table's first
        row and every `table_open`, where the replay starts the table afresh."""
        return tables.session_starts(self.table_starts, self.event_rows("table_open"))

    def session_start(self, rows) -> np.ndarray:
        """For each row, the first row of its session."""
        return self.session_starts[np.searchsorted(self.session_starts, rows, side="right") - 1]

    def session_end(self, rows) -> np.ndarray:
        """For each row, the first row after its session: its table's next
        `table_open` (where the replay starts the table afresh), or the
        table's end."""
        return np.minimum(next_after(self.event_rows("table_open"), rows, self.n),
                          self.table_end(rows))

    # --- dice -------------------------------------------------------------------

    @cached_property
    def dice_values(self) -> DiceValues:
        """The serials each category of `dice` names (`DiceValues`: per
        category code where its serial ids start and how many, one slot
        more for code -1, no dice): the replay's own split where it split
        these very categories, else split here."""
        categories = self._categorical("dice").cat.categories
        state = self.state
        got = None if state is None else getattr(state, "derived", {}).get("dice_values")
        if got is not None and got.values is categories:
            return got
        return DiceValues(categories)

    @cached_property
    def seq(self) -> np.ndarray:
        return self.events["seq"].to_numpy(dtype=np.int64)

    def ints_at(self, name: str, rows) -> np.ndarray:
        """Values of a nullable integer column at `rows`, as `.iat` reads
        them (numpy integers, pd.NA where nothing was recorded)."""
        return np.asarray(self.events[name].array[np.asarray(rows, dtype=np.int64)],
                          dtype=object)

    def int_at(self, name: str, rows, na: int = 0) -> np.ndarray:
        """Values of a nullable integer column at `rows` as int64, `na` where
        nothing was recorded."""
        return self.events[name].array[np.asarray(rows, dtype=np.int64)].to_numpy(
            dtype=np.int64, na_value=na)

    def latest(self, anchors: np.ndarray, rows: np.ndarray,
               resets: np.ndarray | None = None) -> np.ndarray:
        """For each of `rows` (ascending), the latest of `anchors` (ascending)
        at or before it in the same table and not before a `resets` row of
        that table; -1 where there is none."""
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows) or not len(anchors):
            return np.full(len(rows), -1, dtype=np.int64)
        starts = self.table_starts if resets is None or not len(resets) else \
            np.union1d(self.table_starts, resets)
        at = np.searchsorted(anchors, rows, side="right") - 1
        last = np.where(at >= 0, anchors[np.maximum(at, 0)], -1)
        start = starts[np.searchsorted(starts, rows, side="right") - 1]
        return np.where((last >= 0) & (last >= start), last, -1)

    # --- the replay's sparse columns ---------------------------------------------

    def sparse(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Rows and values of a sparse state column, the values as an array
        (numbers and booleans as numpy arrays, anything else as objects)."""
        key = ("sparse", name)
        got = self._memo.get(key)
        if got is None:
            got = self.state.arrays(name)
            self._memo[key] = got
        return got

    def sparse_rows(self, name: str) -> np.ndarray:
        return self.sparse(name)[0]

    def sparse_at(self, name: str, rows, default=None) -> np.ndarray:
        """Values of sparse column `name` at `rows` (`default` where it was
        not written)."""
        srows, values = self.sparse(name)
        rows = np.asarray(rows, dtype=np.int64)
        found, idx = _find(srows, rows)
        if values.dtype != object and default is not None:
            out = np.full(len(rows), default, dtype=np.result_type(values.dtype,
                                                                   np.asarray(default).dtype))
        else:
            out = np.full(len(rows), default, dtype=object)
        out[found] = values[idx[found]]
        return out

    def written_mask(self, name: str) -> np.ndarray:
        """Whether sparse column `name` was written, on every row."""
        key = ("written", name)
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = np.zeros(self.n, dtype=bool)
            got[self.sparse_rows(name)] = True
        return got

    def written_at(self, name: str, rows) -> np.ndarray:
        """Whether sparse column `name` was written at each of `rows`."""
        return in_sorted(self.sparse_rows(name), rows, self.n)


def _find(sorted_rows: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(whether each of `rows` is in `sorted_rows`, its position there)."""
    if not len(sorted_rows):
        return np.zeros(len(rows), dtype=bool), np.zeros(len(rows), dtype=np.int64)
    idx = np.minimum(np.searchsorted(sorted_rows, rows), len(sorted_rows) - 1)
    return sorted_rows[idx] == rows, idx


def searchsorted_ascending(a: np.ndarray, v: np.ndarray, side: str = "left") -> np.ndarray:
    """`np.searchsorted(a, v, side)` for `v` ascending too: where `a` is the
    shorter, each of its entries is searched for among `v` and the counts
    laid out, not each of `v` among `a` (a roll per choice of dice: 750,000
    binary searches become 120,000)."""
    if len(a) >= len(v) or not len(v):
        return np.searchsorted(a, v, side=side)
    at = np.searchsorted(v, a, side="right" if side == "left" else "left")
    return np.cumsum(np.bincount(at, minlength=len(v) + 1))[:len(v)]


def next_after(sorted_rows: np.ndarray, rows: np.ndarray, default: int) -> np.ndarray:
    """For each of `rows`, the first of `sorted_rows` after it (`default`
    where there is none)."""
    rows = np.asarray(rows, dtype=np.int64)
    if not len(sorted_rows):
        return np.full(len(rows), default, dtype=np.int64)
    at = np.searchsorted(sorted_rows, rows, side="right")
    return np.where(at < len(sorted_rows), sorted_rows[np.minimum(at, len(sorted_rows) - 1)],
                    default)


def in_sorted(sorted_rows: np.ndarray, rows, n: int | None = None) -> np.ndarray:
    """Whether each of `rows` is in the ascending array `sorted_rows`. Given
    `n` (rows are below it) and many rows, through a mask of n booleans: a
    binary search per row costs more."""
    rows = np.asarray(rows, dtype=np.int64)
    if n is not None and len(rows) * 16 > n:
        mask = np.zeros(n, dtype=bool)
        mask[sorted_rows] = True
        return mask[rows]
    return _find(sorted_rows, rows)[0]


def expand(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranges [starts[k], starts[k] + counts[k]) laid end to end: each
    value's range k, and the values (an empty range where counts <= 0)."""
    counts = np.maximum(np.asarray(counts, dtype=np.int64), 0)
    which = np.repeat(np.arange(len(counts)), counts)
    offset = np.asarray(starts, dtype=np.int64) - (np.cumsum(counts) - counts)
    return which, np.arange(len(which)) + offset[which]


def written(ctx, name: str) -> tuple[np.ndarray, list]:
    """Rows where the replay wrote state column `name` (ascending), and the
    values."""
    return ctx.state.written(name)


def seat_list(mask: int) -> list[int]:
    return [s for s in range(1, 63) if mask >> s & 1]


def by_other_roles(ctx, event: str, roles, what: str) -> Hits:
    """Every `event` whose actor_role is not one of `roles`: the shape of the
    "done by the wrong role" checks. `what` starts the message
    ("no roll declared" -> "no roll declared by dealer")."""
    sh = ctx.shared
    rows = sh.event_rows(event)
    rows = rows[~sh.is_in("actor_role", roles, rows)]
    actors = sh.values_at("actor_role", rows)
    return Hits(rows, [f"{what} by {a or 'an unrecorded role'}" for a in actors])
