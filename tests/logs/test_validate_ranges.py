"""`validate._outside` (is any value of a column below or above its range)
gives what Arrow's min_max gives, whatever the nulls, slicing or values: it
reads int64 columns through numpy instead."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from auditor.logs.validate import _outside


def _arrow_outside(col, low, high):
    bounds = pc.min_max(col)
    lo, hi = bounds["min"].as_py(), bounds["max"].as_py()
    return (False, False) if lo is None else (lo < low, hi > high)


@pytest.mark.parametrize("seed", range(6))
def test_the_same_answer_as_arrow(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    values = rng.integers(-3, 10, n)
    values[rng.integers(0, n)] = rng.choice([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0])
    nulls = rng.random(n) < rng.choice([0.0, 0.5, 0.99])
    col = pa.array(values, mask=nulls)
    start = int(rng.integers(0, n))
    for part in (col, col.slice(start), col.slice(start, n // 3)):
        for low, high in ((1, 6), (-3, 9), (0, 0), (np.iinfo(np.int64).min, 5)):
            assert _outside(part, low, high) == _arrow_outside(part, low, high)


def test_a_value_hidden_under_a_null_is_not_read():
    col = pa.Array.from_buffers(pa.int64(), 3, [pa.py_buffer(np.packbits([1, 0, 1], bitorder="little")),
                                                pa.py_buffer(np.array([3, 99, 4]).tobytes())],
                                null_count=1)
    assert _outside(col, 1, 6) == (False, False)
    assert _outside(col, 4, 6) == (True, False)


def test_nothing_or_only_nulls_is_never_outside():
    assert _outside(pa.array([], pa.int64()), 1, 6) == (False, False)
    assert _outside(pa.array([None, None], pa.int64()), 1, 6) == (False, False)
