"""The local engine: the audit in this process, or in N processes on this
machine, each auditing a group of whole tables (`--jobs N`).

The logs are loaded once, here (reading is vectorised and already uses the
machine's cores); the tables are then cut into N groups of about the same
number of events, each group is replayed and checked in its own process by
the single-process core (`auditor.audit.audit_parts`), and the findings of
all groups are merged by `auditor.findings.finalize`: the same order and the
same ids, byte for byte, as `--jobs 1`.

On Linux the worker processes are forked, so they inherit the loaded events
instead of receiving a copy; elsewhere they are spawned and sent their group.
"""

from __future__ import annotations

import multiprocessing
import sys
from concurrent.futures import ProcessPoolExecutor

import pandas as pd

from auditor.audit import AuditResult, audit_loaded, audit_parts, stage
from auditor.engine.split import split_logs
from auditor.findings import finalize
from auditor.logs.load import LoadedLogs
from auditor.rules.ruleset import Ruleset

#: Groups handed to forked workers by position (they inherit this module's
#: memory, so the events are not copied through a pipe).
_GROUPS: list[LoadedLogs] = []


def audit_local(logs: LoadedLogs, ruleset: Ruleset, jobs: int = 1,
                timings: dict[str, float] | None = None) -> AuditResult:
    """Audit `logs` in `jobs` processes (1: in this one)."""
    groups = split_logs(logs, jobs) if jobs > 1 else [logs]
    if len(groups) == 1:
        return audit_loaded(logs, ruleset, timings)
    with stage(timings, "parallel"):
        parts, worker_timings = _run_groups(groups, ruleset)
    add_work(timings, worker_timings)
    with stage(timings, "checks"):
        findings = finalize(parts)
    return AuditResult(ruleset, logs, findings)


def add_work(timings: dict[str, float] | None, workers: list[dict[str, float]]) -> None:
    """Stage times of work done side by side: the sum over the workers (the
    work done; the elapsed time of the whole is `timings["parallel"]`)."""
    if timings is None:
        return
    for t in workers:
        for name, seconds in t.items():
            timings[name] = timings.get(name, 0.0) + seconds


def _run_groups(groups: list[LoadedLogs], ruleset: Ruleset):
    global _GROUPS
    forked = sys.platform.startswith("linux") and \
        "fork" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if forked else "spawn")
    if forked:
        _GROUPS = groups
        tasks = list(range(len(groups)))
    else:
        tasks = groups
    try:
        with ProcessPoolExecutor(max_workers=len(groups), mp_context=context) as pool:
            done = list(pool.map(_audit_group, tasks, [ruleset] * len(groups)))
    finally:
        _GROUPS = []
    parts = [p for group_parts, _ in done for p in group_parts]
    return parts, [t for _, t in done]


def _audit_group(task: int | LoadedLogs, ruleset: Ruleset
                 ) -> tuple[list[pd.DataFrame], dict[str, float]]:
    """In a worker: the stamped findings of one group, and its stage times."""
    logs = _GROUPS[task] if isinstance(task, int) else task
    timings: dict[str, float] = {}
    parts = [p for p in audit_parts(logs, ruleset, timings) if len(p)]
    return parts, timings
