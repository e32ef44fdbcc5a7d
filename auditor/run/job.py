"""`AuditJob`: what one audit run needs, from the command to the workers,
in one frozen record instead of the same parameters passed at every hop
(`auditor.run.run_audit` -> an engine -> its batches, groups or tasks).

The input files are discovered once, here (`AuditJob.files`), with each
file's site when `--site-from-path` asks for it; every engine reads those.
Where the run reports (`timings`, `progress`) is not part of the job: each
worker process has its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from auditor.audit.collect import Collector
from auditor.logs.discover import discover_logs
from auditor.logs.raw import DEFAULT_READ, ReadOptions
from auditor.logs.site import path_sites
from auditor.rules.ruleset import Ruleset


@dataclass(frozen=True)
class AuditJob:
    """One audit run's options. Build it with `AuditJob.of(...)`, which
    discovers the input files (LogFileError when none is a log)."""

    #: the files and folders as given (what the reports name as the input)
    paths: tuple[str | Path, ...]
    #: every log file under `paths`, in the stable order every engine reads
    files: tuple[Path, ...]
    ruleset: Ruleset
    #: processes on this machine (local) or dask workers
    jobs: int = 1
    engine: str = "local"
    #: the dask scheduler's address; None: a local cluster of `jobs` workers
    scheduler: str | None = None
    #: how to read logs that depart from the spec (`--encoding`, `--assume-offset`)
    read: ReadOptions = DEFAULT_READ
    #: each file's site (by `str(file)`), with `--site-from-path`; else None
    sites: dict[str, str] | None = field(default=None, hash=False)
    #: what a report takes of the events before they go (`auditor.audit.collect`)
    collector: Collector | None = None
    #: each file's name in the reports where it is read under another (by
    #: `str(file)`): `auditor verify` reading logs that have moved; else None
    labels: dict[str, str] | None = field(default=None, hash=False)
    #: the folder the audit's working files go in (`--scratch`); None: TMPDIR
    #: (`auditor.run.scratch`)
    scratch: str | None = None

    @classmethod
    def of(cls, paths, ruleset: Ruleset, *, jobs: int = 1, engine: str = "local",
           scheduler: str | None = None, read: ReadOptions = DEFAULT_READ,
           site_from_path: bool = False, collector: Collector | None = None,
           scratch: str | None = None) -> AuditJob:
        """The job of auditing every log under `paths` (files or folders)
        against `ruleset`: the files discovered now, once; with
        `site_from_path`, each file's site is the first folder below the
        path given that holds it (`auditor.logs.site`)."""
        paths = tuple(paths)
        files = tuple(discover_logs(list(paths)))
        sites = path_sites(list(paths), list(files)) if site_from_path else None
        return cls(paths, files, ruleset, jobs, engine, scheduler, read, sites, collector,
                   scratch=scratch)

    @classmethod
    def loaded(cls, ruleset: Ruleset, *, jobs: int = 1,
               collector: Collector | None = None) -> AuditJob:
        """The job of auditing logs already loaded (`run_audit(job,
        loaded=logs)`): no files to discover or read."""
        return cls((), (), ruleset, jobs=jobs, collector=collector)
