"""The dask engine: the same audit on a dask.distributed cluster.

The client sends file paths, never data. The workers read and type the files
(one task per file: the events stay in the workers' memory), each file's
events are cut by table, and each table is audited by one task that gathers
its pieces from every file holding it (a table may span files) and runs the
single-process core (`auditor.audit.audit_parts`). The client gathers the
stamped findings and merges them with `auditor.findings.finalize`: the same
findings, byte for byte, as the local engine.

Every worker must see the files at the same absolute paths as the client
(a shared file system) and have the auditor installed. The reports name each
file as the client named it, as the local engine does.

dask is an optional dependency (`pip install 'craps-auditor[dask]'`),
imported only when this engine is used.
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.audit import AuditResult, audit_parts, stage
from auditor.engine.local import add_work
from auditor.engine.split import quarantine_groups
from auditor.engine.stream import LazyLogs
from auditor.findings import finalize
from auditor.logs.load import InputFile, LoadedLogs, load_file, order_events
from auditor.logs.reader import LogFileError, discover_logs
from auditor.report.progress import NoProgress
from auditor.rules.ruleset import Ruleset


class EngineError(Exception):
    """The engine cannot run (dask missing, the scheduler unreachable): exit 2."""


def require_dask():
    """The `distributed` module, or EngineError saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise EngineError("--engine dask needs dask.distributed, which is not installed: "
                          "pip install 'craps-auditor[dask]'") from None
    return distributed


class RemoteLogs(LazyLogs):
    """Logs read by the cluster's workers. The client holds what the reports
    say about them (inputs, quarantined rows); the events themselves are read
    here only if a report asks for them (the HTML report's timelines)."""


@dataclass
class _FileSummary:
    """What the client learns of one file read by a worker."""

    error: tuple[str, str, int | None] | None = None
    loaded: InputFile | None = None
    quarantine: pd.DataFrame | None = None
    tables: tuple[str, ...] = ()


def audit_dask(paths: list[str | Path], ruleset: Ruleset, jobs: int = 1,
               scheduler: str | None = None,
               timings: dict[str, float] | None = None, progress=None) -> AuditResult:
    """Audit the logs under `paths` on the cluster at `scheduler` (an
    address), or on a LocalCluster of `jobs` worker processes started for it.
    `progress` is told of each file as a worker has read it and of each
    table as its task ends."""
    distributed = require_dask()
    progress = progress if progress is not None else NoProgress()
    files = discover_logs(paths)
    progress.expect(files=len(files))
    with ExitStack() as stack:
        client = stack.enter_context(_client(distributed, scheduler, jobs))
        progress.stage("reading")
        with stage(timings, "load"):
            read = [client.submit(_read_file, str(f), str(f.resolve()), pure=False)
                    for f in files]
            summaries = _as_done(distributed, [client.submit(_summary, r, pure=False)
                                               for r in read],
                                 lambda s: progress.advance(files=1, events=s.loaded.rows_read)
                                 if s.loaded is not None else None)
        for s in summaries:  # the first file that cannot be a log, as the local engine
            if s.error:
                raise LogFileError(*s.error)
        inputs = [s.loaded for s in summaries]
        quarantine = pd.concat([s.quarantine for s in summaries], ignore_index=True)
        tables = sorted({t for s in summaries for t in s.tables})
        progress.expect(tables=len(tables))
        progress.stage("auditing")
        with stage(timings, "parallel"):
            tasks = []
            for table, rows in zip(tables, quarantine_groups(quarantine, [[t] for t in tables])):
                pieces = [client.submit(_table_piece, r, table, pure=False)
                          for r, s in zip(read, summaries) if table in s.tables]
                tasks.append(client.submit(_audit_table, pieces, rows, ruleset, pure=False))
            if not tables and len(quarantine):  # nothing replayable: the quarantine only
                tasks.append(client.submit(_audit_table, [], quarantine, ruleset, pure=False))
            done = _as_done(distributed, tasks,
                            lambda d: progress.advance(tables=d[2], audited=d[3]))
        del read, tasks
    add_work(timings, [t for _, t, _, _ in done])
    with stage(timings, "checks"):
        findings = finalize([p for parts, _, _, _ in done for p in parts])
    return AuditResult(ruleset, RemoteLogs(paths, quarantine, inputs), findings,
                       table_ids=tables)


def _as_done(distributed, futures: list, on_result) -> list:
    """The futures' results in their own order, `on_result` called on each
    as it completes (whatever the order), so progress follows the cluster."""
    position = {f.key: k for k, f in enumerate(futures)}
    results: list = [None] * len(futures)
    for future in distributed.as_completed(futures):
        result = future.result()
        results[position[future.key]] = result
        on_result(result)
    return results


def _client(distributed, scheduler: str | None, jobs: int):
    """A client of the cluster at `scheduler`, or of a LocalCluster started
    (and closed with the client) for this audit."""
    if scheduler:
        try:
            return distributed.Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as exc:
            raise EngineError(f"cannot reach the dask scheduler at {scheduler}: {exc}") \
                from None
    # The workers' own logs stay quiet (a heartbeat that races the shutdown
    # is logged with a traceback); a task's failure reaches the client anyway.
    cluster = distributed.LocalCluster(n_workers=max(1, jobs), threads_per_worker=1,
                                       processes=True, dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
    return _Closing(distributed.Client(cluster), cluster)


class _Closing:
    """A client and the LocalCluster started for it, closed together."""

    def __init__(self, client, cluster):
        self.client, self.cluster = client, cluster

    def __enter__(self):
        return self.client

    def __exit__(self, *exc):
        self.client.close()
        self.cluster.close()
        return False


# --- tasks (run on the workers) -------------------------------------------------

def _read_file(label: str, path: str):
    """A file read and typed: (events, quarantine, provenance), or the
    LogFileError it raised as (path, problem, line), named as the client
    names the file."""
    try:
        return load_file(Path(path), label=label)
    except LogFileError as exc:
        return LogFileError(label, exc.problem, exc.line)


def _summary(read) -> _FileSummary:
    if isinstance(read, LogFileError):
        return _FileSummary(error=(read.path, read.problem, read.line))
    events, quarantine, loaded = read
    tables = pc.unique(events.column("table_id")).drop_null().to_pylist() \
        if events.num_rows else []
    return _FileSummary(loaded=loaded, quarantine=quarantine, tables=tuple(tables))


def _table_piece(read, table: str) -> pa.Table:
    events = read[0]
    return events.filter(pc.is_in(events.column("table_id"), value_set=pa.array([table])))


def _audit_table(pieces: list[pa.Table], quarantine: pd.DataFrame, ruleset: Ruleset):
    """One table's events from every file holding them, in file order, audited:
    (stamped findings, stage times, tables audited, events replayed)."""
    if pieces:
        events = order_events(pa.concat_tables(pieces, promote_options="default"))
    else:
        events = order_events(_no_events())
    timings: dict[str, float] = {}
    parts = audit_parts(LoadedLogs(events, quarantine, []), ruleset, timings)
    return [p for p in parts if len(p)], timings, 1 if pieces else 0, len(events)


def _no_events() -> pa.Table:
    from auditor.logs.coerce import EVENT_SCHEMA

    schema = EVENT_SCHEMA.append(pa.field("source_file", pa.string())) \
        .append(pa.field("source_line", pa.int64()))
    return schema.empty_table()
