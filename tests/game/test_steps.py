"""A dense state column keeps only the rows where its own value changes
(`state._own_changes`), and reads exactly as it would from the rows where
any dense column changed."""

import numpy as np
import pytest

from auditor.game.state import Steps, _own_changes


@pytest.mark.parametrize("seed", range(4))
def test_own_changes_read_as_every_change_row(seed):
    rng = np.random.default_rng(seed)
    n = 5_000
    rows = np.unique(np.r_[0, rng.integers(1, n, 800)])
    values = rng.integers(0, 3, len(rows)).astype(np.int16)  # (repeats: merged)
    everything = Steps(n, rows, values)
    own = _own_changes(n, rows, values)
    assert len(own.starts) < len(rows)
    assert (own.values[1:] != own.values[:-1]).all()
    asked = rng.integers(0, n, 3_000)
    np.testing.assert_array_equal(own[asked], everything[asked])
    np.testing.assert_array_equal(np.asarray(own), np.asarray(everything))
    np.testing.assert_array_equal(own.block(100, 2_000), everything.block(100, 2_000))


def test_no_rows_no_changes():
    own = _own_changes(0, np.zeros(0, np.int64), np.zeros(0, np.int8))
    assert len(own.starts) == 0 and len(own) == 0
