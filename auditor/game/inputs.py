"""How the replay's input columns are prepared, once per distinct value and
vectorised, before the loop reads them (`auditor.game.replay._Inputs`).
Plain Python: nothing here runs per event."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from auditor.compat import masked_arrays
from auditor.logs.arrays import category_codes


def coded(column: pd.Series, parse=None, missing=None) -> tuple[np.ndarray, list]:
    """Codes (-1 for nothing recorded) and the distinct values they index,
    each through `parse` when given, then `missing` last (where -1 finds it)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes, values = category_codes(column), list(column.cat.categories)
    else:
        codes, values = pd.factorize(column.astype(object), use_na_sentinel=True)
    return codes, [*(values if parse is None else map(parse, values)), missing]


def serials(text) -> tuple[str, ...]:
    """The dice a `dice` cell names. Each serial is interned: the replay
    looks dice up by serial many times per roll, and a lookup whose key is
    the very object stored is the quickest."""
    return tuple(map(sys.intern, str(text).split(",")))


def values_and_nulls(column: pd.Series) -> tuple[np.ndarray, np.ndarray | None]:
    """A whole-number column as pandas holds it, not copied: a nullable
    column's values and null mask (`compat.masked_arrays`), else its
    values, nulls as 0."""
    masked = masked_arrays(column.array)
    if masked is not None:
        values, nulls = masked
        if values.dtype.kind in "iu" and len(values) == len(column):
            return values, nulls
    return column.to_numpy(dtype=np.int64, na_value=0), None
