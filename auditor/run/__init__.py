"""Engines: where the audit runs. One facade, `run_audit`, dispatching to

- `local` (`auditor.run.local`): this process, or `jobs` processes on this
  machine, each auditing a group of whole tables;
- `dask` (`auditor.run.dask_engine`): the workers of a dask.distributed
  cluster read the files and audit one table per task.

What a run needs travels as one `AuditJob` (`auditor.run.job`), its input
files discovered once. Every engine runs the same single-process audit
(`auditor.audit.core.audit_tables`)
on whole tables and merges the findings with `auditor.findings.finalize`, so
the findings are the same, byte for byte, whichever engine and however many
jobs.

    from auditor.run import AuditJob, run_audit
    result = run_audit(AuditJob.of(["logs/"], ruleset, jobs=4))
    result = run_audit(AuditJob.of(["logs/"], ruleset, engine="dask",
                                   scheduler="tcp://10.0.0.5:8786"))
"""

from __future__ import annotations

from auditor.audit.core import AuditResult
from auditor.errors import EngineError
from auditor.logs.load import LoadedLogs
from auditor.run.job import AuditJob

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


def run_audit(job: AuditJob, timings: dict[str, float] | None = None, progress=None,
              loaded: LoadedLogs | None = None) -> AuditResult:
    """Run `job` (`AuditJob`: its files, its ruleset, its engine and how
    many processes or workers) and return the result.

    `timings`, when given, receives seconds per stage: `load`, `replay`,
    `checks` and, when the work was shared out, `parallel` (the elapsed time
    of the shared part; `replay` and `checks` are then the work summed over
    the workers).

    `progress`, when given (an `auditor.run.progress.NoProgress`, or the
    terminal's line that shows it), is told of files read, events replayed
    and tables checked as the engine goes. The local engine audits many
    files a batch of linked files at a time (`auditor.run.stream`); given
    `loaded` logs (already read: the job's files are then not read again),
    all at once. The job's `collector`, when given (a report's,
    `auditor.audit.collect`), takes what that report needs of the events and
    their replay state where they are: of each batch, group of tables or
    dask task before its events and state are dropped; the result is the
    logs' `digest`."""
    check_engine(job.engine, job.scheduler)
    if job.engine == "dask":
        from auditor.run.dask_engine import audit_dask

        if loaded is not None:
            raise EngineError("the dask engine reads the logs on its workers: "
                              "give it the paths, not loaded logs")
        return audit_dask(job, timings=timings, progress=progress)
    from auditor.run.local import audit_local, audit_paths

    if loaded is None:
        return audit_paths(job, timings=timings, progress=progress)
    return audit_local(loaded, job, timings=timings, progress=progress)


__all__ = ["ENGINES", "AuditJob", "check_engine", "run_audit"]
