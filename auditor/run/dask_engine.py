"""The dask engine: the same audit on a dask.distributed cluster.

The client sends file paths, never data. Where the local engine would audit
the files a batch at a time (`auditor.run.stream.plan`), each batch is one
task running the same worker function (`stream.audit_batch`): the worker
reads its own files and sends back only findings, quarantine and what the
reports take; a group of linked files too large for a batch is sorted out
by tables and audited a range of its tables a task (`auditor.run.by_table`;
under `--scheduler`, only into a `--scratch` folder every worker sees).
Otherwise the workers read and type the files
(one task per file: the events stay in the workers' memory), each file's
events are cut by table, and each table is audited by one task that gathers
its pieces from every file holding it (a table may span files) and runs the
single-process core (`auditor.audit.audit_tables`). A long-lived table (its
sessions open on more than one UTC day), when it is large or the tables
are fewer than the workers (`cut_by_day`), is ordered by one task and then
audited by one task per day (`auditor.run.partition.day_units`: whole
sessions, plus the rows the checks read across the cut; each task keeps
the findings at its own rows, and one more task orders the days' findings
as one table's). Each table's findings come back ordered and named
(`auditor.findings.sort_findings`) and the client only merges them
(`merge_sorted`): the same findings, byte for byte, as the local engine.
What a report's collector keeps of the events comes back from the tables'
tasks too (`auditor.audit.collect`), so the client never reads the events.

Every worker must see the files at the same absolute paths as the client
(a shared file system) and have the auditor installed. The reports name each
file as the client named it, as the local engine does.

dask is an optional dependency (`pip install 'craps-auditor[dask]'`),
imported only when this engine is used.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.audit.collect import Collector
from auditor.audit.core import AuditResult, add_work, audit_tables, judged, replay_state, stage
from auditor.compat import fork_context
from auditor.errors import EngineError, LogFileError
from auditor.findings import SortedFindings, merge_sorted, sort_findings
from auditor.logs.discover import real_paths
from auditor.logs.frame import order_events
from auditor.logs.identity import TableIdentityError, check_events, overlapping
from auditor.logs.load import InputFile, LoadedLogs, load_file
from auditor.logs.raw import (
    DEFAULT_READ,
    InflateLimits,
    ReadOptions,
    current_inflate_limits,
    inflate_limits,
)
from auditor.rules.ruleset import Ruleset
from auditor.run import by_table, pieces, scratch, stream
from auditor.run.job import AuditJob
from auditor.run.partition import DayUnit, audit_unit, day_units, quarantine_groups
from auditor.run.progress import SORTING, NoProgress
from auditor.run.stream import LazyLogs


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
    say about them (inputs, quarantined rows, and what the HTML report shows
    of the events when the tasks took it); the events themselves are read
    here only if a report asks for more."""


@dataclass
class _FileSummary:
    """What the client learns of one file read by a worker."""

    error: tuple[str, str, int | None] | None = None
    loaded: InputFile | None = None
    quarantine: pd.DataFrame | None = None
    #: Per table (in the order its rows first appear), its events in this file.
    table_rows: dict[str, int] = field(default_factory=dict)
    #: Per table, the UTC days its sessions open on in this file.
    opening_days: dict[str, set[str]] | None = None
    #: Per table, the (min seq, max seq) of its events in this file: two
    #: files holding one table id in overlapping ranges are refused.
    seq_ranges: dict[str, tuple[int, int]] | None = None

    @property
    def tables(self) -> tuple[str, ...]:
        return tuple(self.table_rows)


def audit_dask(job: AuditJob, timings: dict[str, float] | None = None,
               progress=None) -> AuditResult:
    """Audit `job`'s files (read as `job.read` says) on the cluster at
    `job.scheduler` (an address), or on a LocalCluster of `job.jobs` worker
    processes started for it. `progress` is told of each file as a worker
    has read it and of each table as its task ends. With the job's
    `collector`, each table's task also takes what it keeps of its events
    (as the local engine's batches do), so the client never reads the
    events."""
    distributed = require_dask()
    from distributed.comm import CommClosedError

    try:
        return _audit_on(distributed, job, timings, progress)
    except distributed.KilledWorker as exc:  # dask's retries spent: a line, no report
        raise EngineError(f"dask gave up on task {getattr(exc, 'task', '?')}: the workers "
                          "running it died (or were killed) more often than the scheduler's "
                          "allowed-failures; the audit stopped and wrote no report") from None
    except CommClosedError as exc:
        raise EngineError(f"the dask cluster closed the connection: {exc}; the audit "
                          "stopped and wrote no report") from None


def _audit_on(distributed, job: AuditJob, timings, progress) -> AuditResult:
    """`audit_dask`'s audit, its cluster's failures raised as dask raises them:
    the local engine's batches when it would audit a batch at a time (the
    same plan, the same worker function), else a task per file and table."""
    progress = progress if progress is not None else NoProgress()
    files = list(job.files)
    progress.expect(files=len(files))
    # (many files are scanned by the workers: the plan waits for the cluster)
    many = len(files) >= stream.SCAN_IN_WORKERS
    batches = None if many else _planned(files, job, progress)
    # (the path each file is read from by the workers, worked out once)
    absolute = dict(zip(map(str, files), real_paths(files)))
    with ExitStack() as stack:
        client = stack.enter_context(_client(distributed, job.scheduler, job.jobs))
        workers = sum(client.nthreads().values())
        scan_all = _scanner(client, workers, absolute) if many else stream.scan_each
        if many:
            batches = _planned(files, job, progress, scan_all=scan_all)
        shares = stream.small_shares(files, workers) if SMALL_INPUT_BATCHES else 0
        if batches is None and shares:  # a small input: in batches (decision 111)
            batches = _planned(files, job, progress, shares=shares, scan_all=scan_all)
        work = pieces.split(files, batches, workers,
                            alone=min(LOADED_PIECE_ROWS, pieces.PIECE_ROWS), read=job.read)
        if work is not None:
            try:
                return _spilling(job, lambda spill: _audit_work(
                    distributed, client, job, work, absolute, timings, progress, spill))
            except stream.TablesCrossBatches:  # the plan was wrong: a task per table
                progress.start(files=len(files))
        return _spilling(job, lambda spill: _audit_files(distributed, client, job, workers,
                                                         absolute, timings, progress, spill))


#: The fewest rows a piece of a single file the plan loads at once is cut
#: with for dask's workers (`pieces.split`), far fewer than `--jobs` asks
#: (`pieces.PIECE_ROWS`): without pieces, dask audits such a file a task
#: per table and day, which cost 2.7x the CPU of `--jobs 2` on a week of 8
#: tables in one 1.9M-row file, where its pieces cost 3-13 % more than one
#: reading (docs/performance.md, 2026-12-05 (8)).
LOADED_PIECE_ROWS = 1 << 17


def _planned(files: list[Path], job: AuditJob, progress, shares: int = 0,
             scan_all=stream.scan_each):
    """`stream.plan` of the job's files, scanned by `scan_all` (None where a
    file cannot be read: a worker names it as it reads the files)."""
    try:
        return stream.plan(files, progress, read=job.read, sites=job.sites, shares=shares,
                           scan_all=scan_all)
    except LogFileError:
        return None


def _scanner(client, workers: int, absolute: dict[str, str]):
    """The plan's scan of many files by the cluster's workers, as `--jobs`
    scans them (`stream.scan_runs`): a task a run of files, each read from
    its absolute path (`absolute`, by name) under the client's inflate
    limits, the scans back in file order."""
    limits = current_inflate_limits()

    def in_workers(files: list[Path], read: ReadOptions) -> list[stream.Scanned]:
        futures = [client.submit(_scan_run, [str(f) for f in run],
                                 [absolute[str(f)] for f in run], read, limits, pure=False)
                   for run in stream.scan_runs(files, workers)]
        return stream.scans_of_runs(client.gather(futures))
    return in_workers


#: Whether a small input of several files is audited by batches
#: (`stream.small_shares`, decision 111: a task per file read and per table
#: audited cost 2.1× the CPU of `--jobs 2` on 8 files of 12 MB); False: a
#: task per file and per table, as for an input whose files one table links
#: all together.
SMALL_INPUT_BATCHES = True


@dataclass(frozen=True)
class _Spill:
    """Where the dice tally's per-die rows are written (decision 105): by
    the tasks, to `workers`, on a local cluster (as --jobs workers write
    them); by the client, to `here`, as each result arrives from a cluster
    of `--scheduler`, whose workers may not share this machine's disk (the
    rows cross the network as before, but do not pile up in the client's
    memory: about 1 MB a million events)."""

    workers: str | None = None
    here: str | None = None


def _spilling(job: AuditJob, audit) -> AuditResult:
    """`audit(spill)` given a folder of its own (`stream.spilling`), written
    to by the workers of a local cluster or by the client (`_Spill`)."""
    return stream.spilling(lambda folder: audit(
        _Spill(here=folder) if job.scheduler else _Spill(workers=folder)), job.scratch)


def _audit_work(distributed, client, job: AuditJob, work: list, absolute: dict[str, str],
                timings, progress, spill: _Spill = _Spill()) -> AuditResult:
    """Each batch of files (`auditor.run.stream.plan`) and each piece of a
    large file (`auditor.run.pieces.split`) read and audited by one task, as
    `--jobs` runs them (`stream.audit_batch`, `pieces.audit_piece`): the
    worker reads its own rows from the files' absolute paths and sends back
    the findings parts, quarantine and what the collector took, never the
    events. A split file its pieces could not judge alone is then audited
    whole, by one task. `absolute`: each file's absolute path, by name;
    `spill`: where the per-die rows go."""
    files, read = list(job.files), job.read
    # (a task is sent what it reads of the job: not the input's file list,
    # 0.37 MB at 10,000 files, and the sites of its own files alone)
    lean = dataclasses.replace(job, paths=(), files=(), sites=None)
    limits = current_inflate_limits()

    def sent(names: list[str], key=absolute.get) -> AuditJob:
        """The job as a task reading `names` gets it, their sites keyed as
        the task looks them up (a batch: by the path it reads; a piece: by
        the file's name)."""
        if not job.sites:
            return lean
        return dataclasses.replace(lean, sites={key(n): job.sites[n] for n in names
                                                if n in job.sites})

    def submit(item):
        if isinstance(item, by_table.SortOut):
            name = str(files[item.file])
            return client.submit(_sort_out, name, dataclasses.replace(item, path=absolute[name]),
                                 sent([name], key=str), limits, pure=False)
        if isinstance(item, by_table.RangeAudit):
            return client.submit(_audit_range, item, lean, spill.workers, pure=False)
        if isinstance(item, pieces.Piece):
            name = str(files[item.file])
            return client.submit(_audit_piece, name,
                                 dataclasses.replace(item, path=absolute[name]),
                                 sent([name], key=str), limits, spill.workers, pure=False)
        names = [str(files[i]) for i in item]
        return client.submit(_audit_batch, names, [absolute[n] for n in names], sent(names),
                             limits, spill.workers, pure=False)

    def arrived(result) -> None:
        if isinstance(result, by_table.SortedOut):
            progress.advance(*result.counts())
        if isinstance(result, stream.BatchResult):
            stream.spill_digest(result, job, spill.here)
            progress.advance(*result.counts())

    def audited(items: list) -> list:
        # (handed out largest first, as --jobs does; the results in item order)
        submitted = {k: submit(items[k]) for k in pieces.largest_first(items)}
        futures = [submitted[k] for k in range(len(items))]
        del submitted
        results = _as_done(distributed, futures, arrived, kept=(TableIdentityError,))
        del futures
        errors = [r.error() for r in results if isinstance(r, stream.FileFailure)]
        if errors:  # the first file, in file order, that cannot be a log (as --jobs)
            position = {str(f): i for i, f in enumerate(files)}
            error = min(errors, key=lambda e: position.get(e.path, len(files)))
            done = {i for item, r in zip(items, results)
                    if isinstance(r, (stream.BatchResult, by_table.SortedOut))
                    for i in by_table.files_of(item)}
            raise stream.first_error(files, error, done, read)
        stream.stop_at_least_clash(results)
        return results

    pieces.expect_rows(work, progress)
    progress.stage("auditing")
    with stage(timings, "parallel"):
        shares = pieces.shares_to_count(work)
        if shares:  # (the line breaks before each piece of a JSON Lines or CSV file)
            counted = [client.submit(pieces.count_share, dataclasses.replace(
                share, path=absolute[str(files[share.file])]), pure=False) for share in shares]
            work = pieces.numbered(work, shares, _as_done(distributed, counted, lambda _: None))
            del counted
        # (a group of linked files too large for a batch: its files sorted out
        # by ranges of tables, then a range audited a task; on a cluster of
        # `--scheduler`, only into a `--scratch` folder its workers all see)
        folder = _tables_folder(client, job) if by_table.wanted(work) else None
        try:
            work = by_table.split(work, files, folder, job.sites, job.read)
            if by_table.sorting_only(work):
                progress.stage(SORTING)  # (files sorted out by table: reading)
            results = audited(work)
            first = (work, results)  # (the first pass, counted as each ended)
            work, results, ranges = by_table.range_audits(work, results)
            if ranges.audits:
                progress.stage("auditing")
                work = work + ranges.audits
                results = results + ranges.joined(audited(ranges.audits))
        finally:
            scratch.remove(folder)
        results, whole = pieces.join(work, results)
        if whole or ranges.whole:  # (rare: a file read in pieces, or a group
            # with such a file, that must be judged whole)
            again = [[i] for i in whole] + ranges.whole
            by_table.take_back(progress, *first, again)
            results += audited(again)
    return stream.merged_result(job, results, timings, progress, RemoteLogs)


def _audit_files(distributed, client, job: AuditJob, workers: int, absolute: dict[str, str],
                 timings, progress, spill: _Spill = _Spill()) -> AuditResult:
    """A task per file read and per table (or day of a table) audited, what
    they take spilled as `spill` says."""
    ruleset, collector, read = job.ruleset, job.collector, job.read
    paths, files, sites = list(job.paths), list(job.files), job.sites or {}
    progress.stage("reading")
    with stage(timings, "load"):
        limits = current_inflate_limits()
        loaded = [client.submit(_read_file, str(f), absolute[str(f)], limits, read,
                                sites.get(str(f)), pure=False)
                  for f in files]
        summaries = _as_done(distributed, [client.submit(_summary, r, pure=False)
                                           for r in loaded],
                             lambda s: progress.advance(files=1, events=s.loaded.rows_read)
                             if s.loaded is not None else None)
    for s in summaries:  # the first file that cannot be a log, as the local engine
        if s.error:
            raise LogFileError(*s.error)
    _check_identity(client, loaded, summaries)
    inputs = [s.loaded for s in summaries]
    quarantine = pd.concat([s.quarantine for s in summaries], ignore_index=True)
    tables = sorted({t for s in summaries for t in s.tables})
    progress.expect(tables=len(tables),
                    events=sum(i.rows_read for i in inputs) - len(quarantine))
    progress.stage("auditing")
    with stage(timings, "parallel"):
        found, times, digests = _audit_tables(distributed, client, workers, loaded,
                                              summaries, tables, quarantine, ruleset,
                                              progress, collector, spill)
    del loaded
    add_work(timings, times)
    with stage(timings, "checks"):
        findings = merge_sorted(found)
    digest = collector.join(digests) if collector is not None else None
    return AuditResult(ruleset, RemoteLogs(paths, quarantine, inputs, digest, read,
                                           sites or None), findings,
                       table_ids=tables)


def _check_identity(client, read: list, summaries: list[_FileSummary]) -> None:
    """TableIdentityError for a table id two files both hold a seq of
    (`auditor.logs.identity`): only the tables whose per-file seq ranges
    overlap are gathered, each by a task of its own."""
    for table in overlapping((t, s.loaded.path, lo, hi) for s in summaries
                             for t, (lo, hi) in (s.seq_ranges or {}).items()):
        pieces = [client.submit(_table_piece, r, table, pure=False)
                  for r, s in zip(read, summaries) if table in s.tables]
        clash = client.submit(_identity_clash, pieces, pure=False).result()
        if clash is not None:
            raise TableIdentityError(*clash)


def long_lived(summaries: list[_FileSummary]) -> set[str]:
    """The tables whose sessions open on more than one UTC day, whatever
    files hold them."""
    days: dict[str, set[str]] = {}
    for s in summaries:
        for table, opened in (s.opening_days or {}).items():
            days.setdefault(table, set()).update(opened)
    return {t for t, d in days.items() if len(d) > 1}


#: A long-lived table of more events than this is audited a day at a time
#: whatever the cluster: a day's task bounds a worker's memory, as a
#: piece's rows do.
DAY_CUT_ROWS = pieces.PIECE_BUDGET


def cut_by_day(summaries: list[_FileSummary], workers: int) -> set[str]:
    """The long-lived tables (`long_lived`) audited a day at a time: all of
    them where the cluster has more workers than there are tables (the days
    then share out the work), else only those of more than `DAY_CUT_ROWS`
    events. Cutting costs: each day's task reads its context, and with a
    report's collector the table is replayed whole once more, so a week of
    8 tables in one CSV file cut by day took 2.5× the CPU of `--jobs 2`
    (decision 110)."""
    lived = long_lived(summaries)
    rows: dict[str, int] = {}  # every table's events, over the files
    for s in summaries:
        for table, n in s.table_rows.items():
            rows[table] = rows.get(table, 0) + n
    if len(rows) < workers:
        return lived
    return {t for t in lived if rows[t] > DAY_CUT_ROWS}


#: Quarantined rows past this many travel to the workers as data of their
#: own (`client.scatter`), not inside the task graph: a night of 60,000
#: unreadable rows and no event made a 23 MB graph, and dask printed its
#: "Sending large graph" warning on the regulator's terminal.
SCATTER_ROWS = 10_000


def _as_data(client, arg):
    """`arg` as a task is handed it: a frame of more than `SCATTER_ROWS`
    rows scattered to the cluster first (a future in its place)."""
    if isinstance(arg, pd.DataFrame) and len(arg) > SCATTER_ROWS:
        return client.scatter(arg, hash=False)
    return arg


def _audit_tables(distributed, client, workers: int, read: list,
                  summaries: list[_FileSummary],
                  tables: list[str], quarantine: pd.DataFrame, ruleset: Ruleset,
                  progress, collector: Collector | None, spill: _Spill = _Spill()
                  ) -> tuple[list[SortedFindings], list[dict[str, float]], list]:
    """Every table audited by one task, or one `cut_by_day` by a task per
    day once a task has ordered it and cut it (`day_units`), then by a task
    that orders its days' findings (`_finished_table`). Returns each
    table's findings, ordered and named by its tasks (in table order,
    whatever order the tasks end in), the stage times of every task, and
    what `collector` took: of a table audited whole, by its task; of a table
    cut by day, by the task that finishes it (a day's rows around a finding
    may be the next day's). Progress counts a table when its last day ends,
    and each task's events. `workers`: the cluster's (`cut_by_day`)."""
    work = distributed.as_completed()
    plans: dict[str, tuple] = {}  # a cut's key: (table number, table, quarantine, events)
    slot: dict[str, tuple[int, int, str | None]] = {}  # a task's key: (table, unit, id)
    left: dict[str | None, int] = {}  # tasks still running per table
    by_day: dict[str, object] = {}  # a table cut by day: its events' future
    finishing: set[str] = set()  # keys of the tasks finishing a table cut by day
    found: dict[int, SortedFindings] = {}
    days: dict[tuple[int, int], list[pd.DataFrame]] = {}  # a day's stamped findings
    times: list[dict[str, float]] = []
    digests: dict[int, object] = {}

    def submit(key: tuple[int, int, str | None], task, *args) -> str:
        args = tuple(_as_data(client, a) for a in args)
        future = client.submit(task, *args, pure=False)
        slot[future.key] = key
        work.add(future)
        return future.key

    split = cut_by_day(summaries, workers)

    def inputs_of(table: str) -> list:  # (what the findings kept of a table rest on)
        return [s.loaded for s in summaries if table in s.tables]

    for t, (table, rows) in enumerate(zip(tables, quarantine_groups(quarantine,
                                                                    [[x] for x in tables]))):
        pieces = [client.submit(_table_piece, r, table, pure=False)
                  for r, s in zip(read, summaries) if table in s.tables]
        if table in split:
            events = client.submit(_table_events, pieces, pure=False)
            cut = client.submit(day_units, events, pure=False)
            plans[cut.key] = (t, table, rows, events)
            by_day[table] = events
            work.add(cut)
        else:
            left[table] = 1
            submit((t, 0, table), _audit_table, pieces, rows, ruleset, collector,
                   spill.workers, inputs_of(table))
    if not tables and len(quarantine):  # nothing replayable: the quarantine only
        left[None] = 1
        submit((0, 0, None), _audit_table, [], quarantine, ruleset, collector,
               spill.workers)
    for future in work:
        if future.key in plans:
            t, table, rows, events = plans.pop(future.key)
            units = future.result()
            left[table] = len(units)
            for k, unit in enumerate(units):
                # cut where the table lies; only the unit's rows travel
                frame = client.submit(unit.events, events, pure=False)
                submit((t, k, table), _audit_day, frame, unit, rows, ruleset, k == 0)
            continue
        t, k, table = slot.pop(future.key)
        if future.key in finishing:
            found[t], digest = future.result()
        else:
            result, timings, audited, digest = future.result()
            times.append(timings)
            left[table] -= 1
            progress.advance(tables=int(table is not None and not left[table]),
                             audited=audited)
            if table not in by_day:
                found[t] = result
            else:
                days[t, k] = result
                if not left[table]:  # its last day: the table finished by one more task
                    parts = [p for key in sorted(key for key in days if key[0] == t)
                             for p in days.pop(key)]  # (sent on: not kept here)
                    finishing.add(submit((t, -1, table), _finished_table, by_day.pop(table),
                                         parts, ruleset, collector, spill.workers,
                                         inputs_of(table)))
        if digest is not None:
            digests[t] = stream.spill_taken(collector, digest, spill.here)
    return [found[t] for t in sorted(found)], times, [digests[t] for t in sorted(digests)]


def _as_done(distributed, futures: list, on_result, kept: tuple = ()) -> list:
    """The futures' results in their own order, `on_result` called on each
    as it completes (whatever the order), so progress follows the cluster;
    a task's exception of a type in `kept` taken as its result."""
    position = {f.key: k for k, f in enumerate(futures)}
    results: list = [None] * len(futures)
    for future in distributed.as_completed(futures):
        try:
            result = future.result()
        except kept as exc:
            results[position[future.key]] = exc
            continue
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
        except ValueError as exc:  # (dask's reading of the address: no port, no host)
            raise EngineError(f"--scheduler {scheduler}: not a dask scheduler's address "
                              f"({exc}; e.g. tcp://10.0.0.5:8786)") from None
    # The workers' own logs stay quiet (a heartbeat that races the shutdown
    # is logged with a traceback); a task's failure reaches the client anyway.
    # On Linux the workers are forked, as --jobs forks its own: they inherit
    # the auditor already imported (spawned, each imported dask, pandas,
    # pyarrow and the auditor again: about 0.7 s of CPU a worker).
    import dask

    # A forked worker closes the report folder's lock it inherited and ends
    # with the audit (`auditor.run.dask_setup`).
    forked = fork_context() is not None
    # The scheduler's and workers' own files in a folder of this audit's,
    # not in TMPDIR's shared dask-scratch-space: removed as the cluster
    # closes, or by a later audit if this one is killed (`auditor.run.scratch`).
    scratch_folder = scratch.make("dask")
    # `silence_logs` quiets dask's own handlers only: its records still reach
    # any other handler (a test runner's), written by the cluster's threads
    # while the workers are forked, and a worker forked mid-write inherits
    # that stream's lock held and hangs on its first record. Its loggers are
    # quieted instead, for the cluster's life (the workers inherit it).
    quieted = _Quieted(logging.getLogger("distributed"))
    try:
        settings = LOCAL_CONFIG | {"distributed.worker.multiprocessing-method":
                                   "fork" if forked else "spawn"}
        if scratch_folder is not None:
            settings["temporary-directory"] = scratch_folder
        with dask.config.set(settings):
            cluster = distributed.LocalCluster(
                n_workers=max(1, jobs), threads_per_worker=1, processes=True,
                dashboard_address=None, silence_logs=logging.CRITICAL,
                # (its HTTP server on a free port of this machine alone: no
                # warning that 8787, dask's default, is taken)
                scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                preload=["auditor.run.dask_setup"] if forked else [])
        return _Closing(distributed.Client(cluster), cluster, scratch_folder, quieted)
    except BaseException:
        quieted.restore()
        scratch.remove(scratch_folder)
        raise


class _Quieted:
    """A logger set to CRITICAL until `restore` (its level as it was)."""

    def __init__(self, logger: logging.Logger):
        self.logger, self.level = logger, logger.level
        logger.setLevel(logging.CRITICAL)

    def restore(self) -> None:
        self.logger.setLevel(self.level)


#: The local cluster's settings that cost the audit time and tell it
#: nothing: each worker's statistical profiler (a look at the running
#: task's stack every 10 ms, for a dashboard no one opens) and the event
#: loops' 20 ms ticks (for a warning of a blocked loop). A cluster of your
#: own keeps its own settings.
LOCAL_CONFIG = {"distributed.worker.profile.enabled": False,
                "distributed.admin.tick.interval": "1s"}


class _Closing:
    """A client and the LocalCluster started for it, closed together: once
    the audit is done, by a thread of its own while the reports are written
    (the program waits for it as it exits: not a daemon); on an error, at
    once."""

    def __init__(self, client, cluster, folder: str | None = None,
                 quieted: _Quieted | None = None):
        self.client, self.cluster, self.folder = client, cluster, folder
        self.quieted = quieted

    def __enter__(self):
        return self.client

    def __exit__(self, kind, *exc):
        if kind is None:
            threading.Thread(target=self.close, name="auditor-dask-close").start()
        else:
            self.close()
        return False

    def close(self) -> None:
        try:
            self.client.close()
            self.cluster.close()
        finally:
            scratch.remove(self.folder)
            if self.quieted is not None:
                self.quieted.restore()


# --- tasks (run on the workers) -------------------------------------------------

def _read_file(label: str, path: str, limits: InflateLimits,
               read: ReadOptions = DEFAULT_READ, site: str | None = None):
    """A file read and typed (a .gz one under the client's `limits`), as
    `read` says: (events, quarantine, provenance), or the LogFileError it
    raised as (path, problem, line), named as the client names the file."""
    if not Path(path).exists():  # the client found it: this worker does not see it
        return _unseen(label, path).error()
    try:
        with inflate_limits(limits):
            return load_file(Path(path), label=label, options=read, site=site)
    except LogFileError as exc:
        return LogFileError(label, exc.problem, exc.line)


def _unseen(label: str, path: str) -> stream.FileFailure:
    """The error of a file the client found and this worker does not see."""
    return stream.FileFailure(
        label, f"not found by the dask worker {_worker_address()} at {path}: every worker "
        "must see the logs at the same absolute path as the client (a shared file system)")


def _scan_run(labels: list[str], paths: list[str], read: ReadOptions,
              limits: InflateLimits) -> list:
    """A run of files scanned for the plan (`stream.scan_run`) from
    `paths`, named `labels`, up to the first that cannot be a log or that
    this worker does not see."""
    seen = next((k for k, path in enumerate(paths) if not Path(path).exists()), len(paths))
    with inflate_limits(limits):
        found = stream.scan_run([Path(p) for p in paths[:seen]], read, labels[:seen])
    if seen < len(paths) and not (found and isinstance(found[-1], stream.FileFailure)):
        found.append(_unseen(labels[seen], paths[seen]))
    return found


def _audit_batch(labels: list[str], paths: list[str], job: AuditJob, limits: InflateLimits,
                 spill: str | None = None):
    """One batch of files read from `paths` (named `labels`) and audited as
    `--jobs` audits it (`stream.audit_batch`, spilled to `spill`): its
    BatchResult, or the `FileFailure` it met."""
    for label, path in zip(labels, paths):
        if not Path(path).exists():
            return _unseen(label, path)
    try:
        with inflate_limits(limits):
            result = stream.audit_batch([Path(p) for p in paths], job, NoProgress(),
                                        dict(zip(paths, labels)))
    except LogFileError as exc:
        return stream.FileFailure.of(exc)
    return stream.spill_digest(result, job, spill)


def _tables_folder(client, job: AuditJob) -> str | None:
    """Where a group's files are sorted out by ranges of tables: a folder of
    TMPDIR (or of `--scratch`) for a local cluster; for a cluster of
    `--scheduler`, one of `--scratch` that every worker sees (EngineError
    naming a worker that does not), else none (the group is one task)."""
    if job.scheduler and not job.scratch:
        return None
    folder = scratch.make("tables", job.scratch)
    if folder is None or not job.scheduler:
        return folder
    unseen = sorted(worker for worker, seen in client.run(os.path.isdir, folder).items()
                    if not seen)
    if unseen:
        scratch.remove(folder)
        raise EngineError(
            f"--scratch {job.scratch}: not seen by the dask worker {unseen[0]} (of "
            f"{len(unseen)}) at {folder}: every worker must see the scratch folder at the "
            "same path as the client (a shared file system); the audit stopped and wrote "
            "no report")
    return folder


def _sort_out(label: str, item: by_table.SortOut, job: AuditJob, limits: InflateLimits):
    """One file of a group read from its absolute path (named `label`) and
    sorted out by ranges of tables (`by_table.sort_out`): its `SortedOut`,
    or the `FileFailure` it met."""
    if not Path(item.path).exists():
        return _unseen(label, item.path)
    try:
        with inflate_limits(limits):
            return by_table.sort_out(item, job, NoProgress(), label)
    except LogFileError as exc:
        return stream.FileFailure.of(exc)


def _audit_range(item: by_table.RangeAudit, job: AuditJob, spill: str | None = None):
    """One range of a group's tables audited from its sorted-out parts
    (`by_table.audit_range`), spilled to `spill`."""
    return stream.spill_digest(by_table.audit_range(item, job, NoProgress()), job, spill)


def _audit_piece(label: str, piece: pieces.Piece, job: AuditJob, limits: InflateLimits,
                 spill: str | None = None):
    """One piece of a file read from its absolute path (named `label`) and
    audited as `--jobs` audits it (`pieces.audit_piece`, spilled to
    `spill`): its BatchResult, `ReadWhole`, or the `FileFailure` it met."""
    if not Path(piece.path).exists():
        return _unseen(label, piece.path)
    with inflate_limits(limits):
        return stream.spill_digest(pieces.audit_piece(piece, job, NoProgress(), label), job,
                                   spill)


def _worker_address() -> str:
    """The address of the dask worker running this task."""
    import distributed

    try:
        return distributed.get_worker().address
    except ValueError:  # not on a worker (a task run in the client, as tests may)
        return "(none)"


def _summary(read) -> _FileSummary:
    if isinstance(read, LogFileError):
        return _FileSummary(error=(read.path, read.problem, read.line))
    events, quarantine, loaded = read
    counted = pc.value_counts(events.column("table_id")).to_pylist() if events.num_rows else []
    rows = {c["values"]: c["counts"] for c in counted if c["values"] is not None}
    return _FileSummary(loaded=loaded, quarantine=quarantine, table_rows=rows,
                        opening_days=_opening_days(events), seq_ranges=_seq_ranges(events))


def _seq_ranges(events: pa.Table) -> dict[str, tuple[int, int]]:
    """Per table, the lowest and highest seq of its events."""
    if not events.num_rows:
        return {}
    keys = events.select(["table_id", "seq"])
    tid = keys.column("table_id")
    if pa.types.is_dictionary(tid.type):
        keys = keys.set_column(0, "table_id", pc.cast(tid, pa.string()))
    spans = keys.group_by("table_id").aggregate([("seq", "min"), ("seq", "max")])
    return {str(t): (lo, hi) for t, lo, hi in zip(spans.column("table_id").to_pylist(),
                                                  spans.column("seq_min").to_pylist(),
                                                  spans.column("seq_max").to_pylist())
            if t is not None and lo is not None}


def _opening_days(events: pa.Table) -> dict[str, set[str]]:
    """Per table, the UTC days ("YYYY-MM-DD") of its `table_open` rows."""
    opens = events.filter(_is_event(events.column("event"), "table_open"))
    out: dict[str, set[str]] = {}
    days = opens.column("ts").to_numpy().astype("datetime64[us]").astype("datetime64[D]")
    for table, day in zip(opens.column("table_id").to_pylist(), days):
        if table is not None and not np.isnat(day):
            out.setdefault(str(table), set()).add(str(day))
    return out


def _is_event(column: pa.ChunkedArray, name: str) -> pa.ChunkedArray:
    """Where `column` (dictionary-encoded as loaded, or text) is `name`,
    compared on the dictionary indices rather than text per row."""
    if not pa.types.is_dictionary(column.type):
        return pc.fill_null(pc.equal(column, name), False)
    chunks = []
    for chunk in column.chunks:
        at = pc.index(chunk.dictionary, name).as_py()
        chunks.append(pc.fill_null(pc.equal(chunk.indices, at), False) if at >= 0
                      else pa.array(np.zeros(len(chunk), dtype=bool)))
    return pa.chunked_array(chunks, pa.bool_())


def _table_piece(read, table: str) -> pa.Table:
    events = read[0]
    return events.filter(pc.is_in(events.column("table_id"), value_set=pa.array([table])))


def _identity_clash(pieces: list[pa.Table]):
    """(table, first, second) of a seq of one table two files hold, or None."""
    try:
        check_events(_table_events(pieces))
    except TableIdentityError as exc:
        return exc.table, exc.first, exc.second
    return None


def _table_events(pieces: list[pa.Table]) -> pd.DataFrame:
    """One table's events from every file holding them, in file order, ordered
    as the local engine orders them."""
    if not pieces:
        return order_events(_no_events())
    return order_events(pa.concat_tables(pieces, promote_options="default"))


def _audit_table(pieces: list[pa.Table], quarantine: pd.DataFrame, ruleset: Ruleset,
                 collector: Collector | None, spill: str | None = None, inputs=()):
    """One table audited whole: (its findings ordered and named, stage
    times, events replayed, what `collector` takes of its events, spilled
    to `spill`, or None)."""
    events = _table_events(pieces)
    timings: dict[str, float] = {}
    _, taken, found = audit_tables(LoadedLogs(events, quarantine, list(inputs)), ruleset,
                                   collector, timings, ordered=True)
    return found, timings, len(events), stream.spill_taken(collector, taken, spill)


def _finished_table(events: pd.DataFrame, parts: list[pd.DataFrame], ruleset: Ruleset,
                    collector: Collector | None, spill: str | None = None, inputs=()):
    """A table audited a day at a time, finished: its days' stamped findings
    ordered and named as one table's (`sort_findings`), and what `collector`
    takes of it (as of a batch of one table: `auditor.run.stream`), spilled
    to `spill`: the table replayed whole once more, since each day's task
    replayed only its day (None without a collector)."""
    found = sort_findings(parts)
    if collector is None:
        return found, None
    taken = collector.take(events, judged([ruleset], list(inputs), merge_sorted([found]))[0],
                           replay_state(events, ruleset))
    return found, stream.spill_taken(collector, taken, spill)


def _audit_day(frame: pd.DataFrame, unit: DayUnit, quarantine: pd.DataFrame,
               ruleset: Ruleset, first: bool):
    """One day of a long-lived table audited (`audit_unit`): (stamped
    findings, stage times, events of its own)."""
    timings: dict[str, float] = {}
    parts = audit_unit(frame, unit, quarantine, ruleset, first, timings)
    return parts, timings, len(unit.own), None


def _no_events() -> pa.Table:
    from auditor.logs.coerce import EVENT_SCHEMA

    schema = EVENT_SCHEMA.append(pa.field("source_file", pa.string())) \
        .append(pa.field("source_line", pa.int64()))
    return schema.empty_table()
