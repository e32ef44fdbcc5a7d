"""Table bounds: where each table's run of rows starts and ends in the
loaded events (`table_runs`), and where each session starts
(`session_starts`).

Its own module because it is the one place table bounds are worked out, and
five layers read them (the replay, the checks, the rule versions, the
reports and the engines' cuts), none of which needs the loader.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from auditor.logs.arrays import BLOCK_ROWS


def table_runs(events: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The first row, the row after the last, and the table id of each run
    of rows of one table (loaded events hold each table's rows together):
    found on the categorical's codes, not the text, a block at a time. The
    one place table bounds are worked out: the replay, the checks
    (`Shared.table_starts`), the sessions and the engines' cuts read them here."""
    col = events["table_id"]
    codes = np.asarray(col.array.codes) if isinstance(col.dtype, pd.CategoricalDtype) \
        else pd.factorize(col)[0]
    n = len(codes)
    if not n:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), []
    starts = np.concatenate([[0], *(np.flatnonzero(codes[a:b] != codes[a - 1:b - 1]) + a
                                    for a, b in _blocks(1, n))]).astype(np.int64)
    ends = np.append(starts[1:], n)
    return starts, ends, [str(col.iat[a]) for a in starts.tolist()]


def session_starts(table_starts: np.ndarray, opens: np.ndarray) -> np.ndarray:
    """The first row of every table session (ascending): each table's first
    row (`table_starts`, of `table_runs`) and each `table_open` (`opens`,
    their rows), where the replay starts a table afresh."""
    return np.union1d(table_starts, opens).astype(np.int64)


def _blocks(start: int, n: int) -> Iterator[tuple[int, int]]:
    for a in range(start, n, BLOCK_ROWS):
        yield a, min(a + BLOCK_ROWS, n)

