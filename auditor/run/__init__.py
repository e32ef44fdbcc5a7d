"""Engines: where the audit runs. One facade, `run_audit`, dispatching to

- `local` (`auditor.run.local`): this process, or `jobs` processes on this
  machine, each auditing a group of whole tables;
- `dask` (`auditor.run.dask_engine`): the workers of a dask.distributed
  cluster read the files and audit one table per task.

Every engine runs the same single-process core (`auditor.run.core.audit_parts`)
on whole tables and merges the findings with `auditor.findings.finalize`, so
the findings are the same, byte for byte, whichever engine and however many
jobs.

    from auditor.run import run_audit
    result = run_audit(["logs/"], ruleset, jobs=4)
    result = run_audit(["logs/"], ruleset, engine="dask", scheduler="tcp://10.0.0.5:8786")
"""

from __future__ import annotations

from pathlib import Path

from auditor.errors import EngineError
from auditor.logs.load import LoadedLogs
from auditor.logs.raw import DEFAULT_READ, ReadOptions
from auditor.rules.ruleset import Ruleset
from auditor.run.collect import Collector
from auditor.run.core import AuditResult
from auditor.run.exposure import EXPOSURE, Paired, with_exposure

ENGINES: tuple[str, ...] = ("local", "dask")


def check_engine(engine: str, scheduler: str | None = None) -> None:
    """Fail early (EngineError) when the engine asked for cannot run here."""
    if engine not in ENGINES:
        raise EngineError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if scheduler and engine != "dask":
        raise EngineError("--scheduler is for --engine dask")
    if engine == "dask":
        from auditor.run.dask_engine import require_dask  # (only this engine needs it)

        require_dask()


def run_audit(logs: LoadedLogs | list[str | Path], ruleset: Ruleset, jobs: int = 1,
              engine: str = "local", scheduler: str | None = None,
              timings: dict[str, float] | None = None, progress=None,
              collector: Collector | None = None,
              read: ReadOptions = DEFAULT_READ,
              site_from_path: bool = False) -> AuditResult:
    """Audit `logs` (paths of files or folders, or logs already loaded, read
    as `read` says: `--encoding`, `--assume-offset`; with `site_from_path`,
    each file's site is the first folder below the path given)
    against `ruleset` with `engine`, in `jobs` processes (local) or workers
    (a dask LocalCluster when no `scheduler` address is given).

    `timings`, when given, receives seconds per stage: `load`, `replay`,
    `checks` and, when the work was shared out, `parallel` (the elapsed time
    of the shared part; `replay` and `checks` are then the work summed over
    the workers).

    `progress`, when given (an `auditor.run.progress.NoProgress`, or the
    terminal's line that shows it), is told
    of files read, events replayed and tables checked as the engine goes.
    Given paths, the local engine audits many files a batch of linked files
    at a time (`auditor.run.stream`); given loaded logs, all at once.
    `collector`, when given (a report's, `auditor.run.collect`), takes what
    that report needs of the events and their replay state where they are:
    of each batch, group of tables or dask task before its events and state
    are dropped; the result is the logs' `digest`.
    `site_from_path`: each file's site is the first folder below the path
    given that holds it (`auditor.logs.site`)."""
    check_engine(engine, scheduler)
    # Every audit collects its exposure beside the report's own collector.
    both = EXPOSURE if collector is None else Paired(EXPOSURE, collector)
    return with_exposure(_run(logs, ruleset, jobs, engine, scheduler, timings, progress, both,
                              read, site_from_path), collector is not None)


def _run(logs, ruleset, jobs, engine, scheduler, timings, progress, collector, read,
         site_from_path) -> AuditResult:
    if engine == "dask":
        from auditor.run.dask_engine import audit_dask

        if isinstance(logs, LoadedLogs):
            paths = getattr(logs, "paths", None)
            if paths is None:
                raise EngineError("the dask engine reads the logs on its workers: "
                                  "give it the paths, not loaded logs")
            logs = paths
        return audit_dask(list(logs), ruleset, jobs=jobs, scheduler=scheduler,
                          timings=timings, progress=progress, collector=collector, read=read,
                          site_from_path=site_from_path)
    from auditor.run.local import audit_local, audit_paths

    if not isinstance(logs, LoadedLogs):
        return audit_paths(list(logs), ruleset, jobs=jobs, timings=timings, progress=progress,
                           collector=collector, read=read, site_from_path=site_from_path)
    return audit_local(logs, ruleset, jobs=jobs, timings=timings, progress=progress,
                       collector=collector)


__all__ = ["ENGINES", "check_engine", "run_audit"]
