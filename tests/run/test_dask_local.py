"""The local dask cluster an audit starts for itself (`auditor.run.dask_engine`):
its workers run without dask's statistical profiler, and once the audit is
done it is closed by a thread of its own (the reports written meanwhile),
at once on an error."""

from __future__ import annotations

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
