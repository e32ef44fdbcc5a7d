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
from auditor.findings import finalize
from auditor.logs.load import InputFile, LoadedLogs, load_file, load_logs, order_events
from auditor.logs.reader import LogFileError, discover
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


class RemoteLogs(LoadedLogs):
    """Logs read by the cluster's workers. The client holds what the reports
    say about them (inputs, quarantined rows); the events themselves are read
    here only if a report asks for them (the HTML report's timelines)."""

    def __init__(self, paths: list[str | Path], quarantine: pd.DataFrame,
                 inputs: list[InputFile]):
        self.paths = list(paths)
        self.quarantine = quarantine
        self.inputs = inputs
        self._events: pd.DataFrame | None = None

    @property
    def events(self) -> pd.DataFrame:
        if self._events is None:
            self._events = load_logs(self.paths).events
        return self._events


@dataclass
class _FileSummary:
    """What the client learns of one file read by a worker."""

    error: tuple[str, str, int | None] | None = None
    loaded: InputFile | None = None
    quarantine: pd.DataFrame | None = None
    tables: tuple[str, ...] = ()


def audit_dask(paths: list[str | Path], ruleset: Ruleset, jobs: int = 1,
               scheduler: str | None = None,
               timings: dict[str, float] | None = None) -> AuditResult:
    """Audit the logs under `paths` on the cluster at `scheduler` (an
    address), or on a LocalCluster of `jobs` worker processes started for it."""
    distributed = require_dask()
    files = discover(paths)
    if not files:
        raise LogFileError(", ".join(map(str, paths)), "no log files found "
                           "(.csv, .jsonl, .ndjson, .parquet, optionally .gz)")
    with ExitStack() as stack:
        client = stack.enter_context(_client(distributed, scheduler, jobs))
        with stage(timings, "load"):
            read = [client.submit(_read_file, str(f), str(f.resolve()), pure=False)
                    for f in files]
            summaries = client.gather([client.submit(_summary, r, pure=False) for r in read])
        for s in summaries:  # the first file that cannot be a log, as the local engine
            if s.error:
                raise LogFileError(*s.error)
        inputs = [s.loaded for s in summaries]
        quarantine = pd.concat([s.quarantine for s in summaries], ignore_index=True)
        tables = sorted({t for s in summaries for t in s.tables})
        with stage(timings, "parallel"):
            tasks = []
            for table, rows in zip(tables, quarantine_groups(quarantine, [[t] for t in tables])):
                pieces = [client.submit(_table_piece, r, table, pure=False)
                          for r, s in zip(read, summaries) if table in s.tables]
                tasks.append(client.submit(_audit_table, pieces, rows, ruleset, pure=False))
            if not tables and len(quarantine):  # nothing replayable: the quarantine only
                tasks.append(client.submit(_audit_table, [], quarantine, ruleset, pure=False))
            done = client.gather(tasks)
        del read, tasks
    add_work(timings, [t for _, t in done])
    with stage(timings, "checks"):
        findings = finalize([p for parts, _ in done for p in parts])
    return AuditResult(ruleset, RemoteLogs(paths, quarantine, inputs), findings,
                       table_ids=tables)


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
    """One table's events from every file holding them, in file order, audited."""
    if pieces:
        events = order_events(pa.concat_tables(pieces, promote_options="default"))
    else:
        events = order_events(_no_events())
    timings: dict[str, float] = {}
    parts = audit_parts(LoadedLogs(events, quarantine, []), ruleset, timings)
    return [p for p in parts if len(p)], timings


def _no_events() -> pa.Table:
    from auditor.logs.coerce import EVENT_SCHEMA

    schema = EVENT_SCHEMA.append(pa.field("source_file", pa.string())) \
        .append(pa.field("source_line", pa.int64()))
    return schema.empty_table()
