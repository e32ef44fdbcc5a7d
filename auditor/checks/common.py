"""Small vectorised helpers the check families share."""

from __future__ import annotations

import numpy as np
import pandas as pd

from auditor.checks.registry import Hits
from auditor.game.replay import sparse


def event_is(ctx, *names: str) -> np.ndarray:
    return ctx.events["event"].isin(names).to_numpy()


def has_flag(ctx, word: str) -> np.ndarray:
    """Rows whose comma-separated `flags` include `word`. Worked out once per
    distinct flags value (flags are categorical), not once per row."""
    return category_mask(ctx.events["flags"], lambda text: word in text.split(","))


def category_mask(column: pd.Series, predicate) -> np.ndarray:
    """Rows of a categorical column whose value satisfies `predicate`."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype("category")
    cats = column.cat.categories
    hit = np.fromiter((bool(predicate(str(c))) for c in cats), dtype=bool, count=len(cats))
    codes = column.cat.codes.to_numpy()
    return np.where(codes >= 0, hit[codes] if len(hit) else False, False)


def role_in(ctx, roles) -> np.ndarray:
    return ctx.events["actor_role"].isin(list(roles)).to_numpy()


def written(ctx, name: str) -> tuple[np.ndarray, list]:
    """Rows where the replay wrote state column `name`, and the values."""
    col = sparse(ctx.state, name)
    mask = col.notna().to_numpy()
    rows = np.flatnonzero(mask)
    return rows, col.to_numpy()[rows].tolist()


def value_at(ctx, name: str, rows) -> list:
    col = sparse(ctx.state, name).to_numpy()
    return [col[r] for r in rows]


def hits_from_mask(mask: np.ndarray, message, evidence=None) -> Hits:
    rows = np.flatnonzero(mask)
    return Hits(rows, message if isinstance(message, str) else [message(r) for r in rows],
                [evidence(r) for r in rows] if evidence else [])


def col(ctx, name: str) -> pd.Series:
    return ctx.events[name]


def seat_list(mask: int) -> list[int]:
    return [s for s in range(1, 63) if mask >> s & 1]
