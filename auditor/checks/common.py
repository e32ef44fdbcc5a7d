"""Small vectorised helpers the check families share."""

from __future__ import annotations

import numpy as np
import pandas as pd

from auditor.checks.registry import Hits


def event_is(ctx, *names: str) -> np.ndarray:
    """Rows whose event is one of `names` (worked out per category)."""
    wanted = set(names)
    return category_mask(ctx.events["event"], wanted.__contains__)


def has_flag(ctx, word: str) -> np.ndarray:
    """Rows whose comma-separated `flags` include `word`. Worked out once per
    distinct flags value (flags are categorical), not once per row."""
    return category_mask(ctx.events["flags"], lambda text: word in text.split(","))


def category_mask(column: pd.Series, predicate) -> np.ndarray:
    """Rows of a categorical column whose value satisfies `predicate`."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype("category")
    cats = column.cat.categories
    # One more slot, False, for code -1 (nothing recorded).
    hit = np.zeros(len(cats) + 1, dtype=bool)
    hit[:len(cats)] = [bool(predicate(str(c))) for c in cats]
    return hit[column.cat.codes.to_numpy()]


def latest(ctx, anchor: np.ndarray, resets: np.ndarray | None = None) -> np.ndarray:
    """For every row, the position of the latest `anchor` row at or before it
    in the same table and not before a `resets` row of that table; -1 where
    there is none. Vectorised: a running maximum within each stretch."""
    n = len(anchor)
    table = ctx.events["table_id"].cat.codes.to_numpy()
    start = np.ones(n, dtype=bool)
    start[1:] = table[1:] != table[:-1]
    if resets is not None:
        start |= resets
    stretch = np.cumsum(start)
    last = np.maximum.accumulate(np.where(anchor, np.arange(n), -1))
    found = last >= 0
    found[found] = stretch[last[found]] == stretch[found]
    return np.where(found, last, -1)


def role_in(ctx, roles) -> np.ndarray:
    """Rows whose actor_role is one of `roles` (worked out per category)."""
    wanted = set(roles)
    return category_mask(ctx.events["actor_role"], wanted.__contains__)


def written(ctx, name: str) -> tuple[np.ndarray, list]:
    """Rows where the replay wrote state column `name` (ascending), and the
    values."""
    return ctx.state.written(name)


def value_at(ctx, name: str, rows) -> list:
    return ctx.state.values_at(name, rows)


def hits_from_mask(mask: np.ndarray, message, evidence=None) -> Hits:
    rows = np.flatnonzero(mask)
    return Hits(rows, message if isinstance(message, str) else [message(r) for r in rows],
                [evidence(r) for r in rows] if evidence else [])


def col(ctx, name: str) -> pd.Series:
    return ctx.events[name]


def seat_list(mask: int) -> list[int]:
    return [s for s in range(1, 63) if mask >> s & 1]


def by_other_roles(ctx, event: str, roles, what: str) -> Hits:
    """Every `event` whose actor_role is not one of `roles`: the shape of the
    "done by the wrong role" checks. `what` starts the message
    ("no roll declared" -> "no roll declared by dealer")."""
    rows = np.flatnonzero(event_is(ctx, event) & ~role_in(ctx, roles))
    actors = ctx.events["actor_role"]
    return Hits(rows, [f"{what} by {actors.iat[r] or 'an unrecorded role'}" for r in rows])
