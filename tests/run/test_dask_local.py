"""The local dask cluster an audit starts for itself (`auditor.run.dask_engine`):
its workers run without dask's statistical profiler, and once the audit is
done it is closed by a thread of its own (the reports written meanwhile),
at once on an error."""

from __future__ import annotations

import logging
import threading

import pytest

distributed = pytest.importorskip("distributed")

from auditor.run import dask_engine


def _closing_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "auditor-dask-close"]


def test_the_workers_run_without_the_profiler_and_the_cluster_closes_after():
    closing = dask_engine._client(distributed, None, 1)
    with closing as client:
        callbacks = client.run(lambda dask_worker: sorted(dask_worker.periodic_callbacks))
        (names,) = callbacks.values()
        assert "profile" not in names and "profile-cycle" not in names
        assert "heartbeat" in names  # (the worker's own callbacks are listed)
        assert client.submit(sum, [1, 2], pure=False).result() == 3
    for thread in _closing_threads():
        thread.join(timeout=60)
    assert not _closing_threads()
    assert closing.cluster.status.name == "closed"
    assert closing.client.status == "closed"


def test_on_an_error_the_cluster_closes_at_once():
    closing = dask_engine._client(distributed, None, 1)
    with pytest.raises(RuntimeError), closing:
        raise RuntimeError("the audit failed")
    assert closing.cluster.status.name == "closed"
    assert not _closing_threads()


def test_dask_s_loggers_are_quiet_while_its_workers_are_forked_and_put_back_after():
    """`silence_logs` quiets dask's own handlers only; a record reaching
    another (a test runner's) is written by the cluster's threads while the
    workers are forked, and a worker forked mid-write hangs on the stream's
    lock it inherits. The loggers themselves are quiet for the cluster's
    life, in the workers too, and as they were after."""
    logger = logging.getLogger("distributed")
    before = logger.level
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append
    logging.getLogger().addHandler(handler)
    try:
        closing = dask_engine._client(distributed, None, 2)
        with closing as client:
            assert logger.level == logging.CRITICAL
            levels = client.run(lambda: logging.getLogger("distributed").getEffectiveLevel())
            assert set(levels.values()) == {logging.CRITICAL}
        for thread in _closing_threads():
            thread.join(timeout=60)
    finally:
        logging.getLogger().removeHandler(handler)
    assert logger.level == before
    assert not [r for r in seen if r.name.startswith("distributed") and r.levelno < 50]
