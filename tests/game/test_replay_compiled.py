"""The compiled replay (Cython, built from `auditor/game/replay.py` with the
types of `replay.pxd`) derives exactly the state the Python source does.

The source is loaded as a separate module and both replay the same logs:
generated nights with every plantable violation, both offer roles, under
both bar numbers (12 and 2), and the sample logs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import auditor.game.replay as replay_module
from auditor.generate import INJECTABLE, generate
from auditor.generate.write import write_log
from auditor.logs.load import load_logs

SOURCE = Path(replay_module.__file__).with_name("replay.py")
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not replay_module.COMPILED,
                                reason="the replay is not compiled here (no C compiler at install)")


def _source_module():
    spec = importlib.util.spec_from_file_location("auditor_replay_source", SOURCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compiled_module_is_built_from_the_current_source():
    built = Path(replay_module.__file__).stat().st_mtime
    assert SOURCE.stat().st_mtime <= built, \
        "replay.py changed after it was compiled: rebuild with `pip install -e .`"


def _assert_same_state(a, b):
    assert a.n == b.n
    assert set(a.dense) == set(b.dense) and set(a.sparse) == set(b.sparse)
    for name in a.dense:
        assert a.dense[name].dtype == b.dense[name].dtype, name
        np.testing.assert_array_equal(a.dense[name], b.dense[name], err_msg=name)
    for name in a.sparse:
        rows_a, values_a = a.written(name)
        rows_b, values_b = b.written(name)
        np.testing.assert_array_equal(rows_a, rows_b, err_msg=name)
        assert values_a == values_b, name


@pytest.mark.parametrize("seed, offer_role", [(3, "stickperson"), (4, "dealer")])
def test_same_state_as_the_source_on_planted_nights(tmp_path, seed, offer_role):
    log = tmp_path / "night.parquet"
    write_log(generate(tables=2, rolls=150, seed=seed, inject=sorted(INJECTABLE),
                       offer_role=offer_role).table, log)
    events = load_logs([log]).events
    source = _source_module()
    for bar in (12, 2):
        _assert_same_state(source.replay(events, bar=bar), replay_module.replay(events, bar=bar))


def test_same_state_as_the_source_on_the_sample_logs():
    events = load_logs([ROOT / "sample_logs"]).events
    source = _source_module()
    _assert_same_state(source.replay(events), replay_module.replay(events))


def test_replaying_again_and_again_holds_no_more_memory(tmp_path):
    """A reference the compiled code forgets to release would pile up once
    per table audited: across the batches of a year of logs that is memory
    without bound. Replays under tracemalloc must come back to where they
    started. Only what this test's own calls allocated is counted (threads
    of other tests, such as a dask cluster's, allocate meanwhile)."""
    import gc
    import tracemalloc

    log = tmp_path / "night.parquet"
    write_log(generate(tables=2, rolls=300, seed=5, inject=sorted(INJECTABLE)).table, log)
    events = load_logs([log]).events
    replay_module.replay(events)  # first use: caches and lazily built tables
    gc.collect()
    ours = [tracemalloc.Filter(True, __file__, all_frames=True)]
    tracemalloc.start(64)
    try:
        before = tracemalloc.take_snapshot().filter_traces(ours)
        for _ in range(3):
            replay_module.replay(events)
        gc.collect()
        after = tracemalloc.take_snapshot().filter_traces(ours)
    finally:
        tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert grown < 64 * 1024, f"{grown} bytes still held after three replays"
