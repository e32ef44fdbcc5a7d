"""The `check` use case: the ruleset (or family of versions) resolved and
validated before any log is read, the audit run by the chosen engine, its
findings triaged against a baseline and waivers, and every report written
as one set. The command line only gathers the request and prints."""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from auditor.atomic import commit_together, report_folder
from auditor.audit.core import AuditResult
from auditor.audit.responsible import regulated
from auditor.errors import EngineError, LogFileError, OutputError, UnreadableLogsError
from auditor.escape import one_line
from auditor.logs.discover import LeftOut, discover_logs, leaving_out
from auditor.logs.identity import check_events
from auditor.logs.memory import small_pages
from auditor.logs.raw import DEFAULT_INFLATE_LIMITS, InflateLimits, ReadOptions, inflate_limits
from auditor.logs.screen import not_audited_meta, unreadable_logs
from auditor.report.dice_report import flagged_lines
from auditor.report.formats import (
    REPORT_FORMATS,
    check_out_dir,
    collector_for,
    format_options,
    write_and_render,
)
from auditor.report.manifest import OWN_NAMES, write_manifest
from auditor.report.provenance import provenance, suspect_line
from auditor.report.sarif import MAX_RESULTS
from auditor.report.shared import sharing
from auditor.report.summary import summary_text
from auditor.rules.ruleset import load_ruleset
from auditor.rules.versions import resolve_family
from auditor.run import AuditJob, check_engine, run_audit
from auditor.run.family import audit_family, audit_family_batches
from auditor.run.progress import NoProgress
from auditor.run.stream import load_with_progress
from auditor.triage.baseline import Triage, load_accepted, verdict


@dataclass(frozen=True)
class CheckRequest:
    """What `auditor check` was asked (its options, as the library takes them)."""

    paths: tuple[str, ...]
    #: the ruleset asked for: a shipped id, a .toml file or a family name
    #: (resolved and loaded by `check`)
    ruleset_ref: str
    out: Path = Path("reports")
    #: the formats written into `out` (those that go to standard output are `streams`)
    formats: tuple[str, ...] = ("parquet",)
    fail_on: str = "major"
    stamp: bool = False
    baseline: str | None = None
    waivers: str | None = None
    jobs: int = 1
    engine: str = "local"
    scheduler: str | None = None
    #: the folder for the audit's working files (`--scratch`); None: TMPDIR
    scratch: str | None = None
    #: How to read logs that depart from the spec (`--encoding`, `--assume-offset`).
    encoding: str | None = None
    assume_offset: str | None = None
    #: Exit 2 when any rule could not be evaluated in some file (the reports
    #: are written first: they say which).
    require_complete: bool = False
    #: formats whose text goes to standard output (`--format FMT:-`), rendered
    #: into `CheckOutcome.streamed` for the caller to print
    streams: tuple[str, ...] = ()
    sarif_max_results: int = MAX_RESULTS
    color: bool = False
    #: Each file's site is the first folder below the path given.
    site_from_path: bool = False
    #: How far a .gz log may inflate before it is refused (exit 2).
    inflate: InflateLimits = DEFAULT_INFLATE_LIMITS
    #: The level a die is flagged at (`--dice-alpha`; None: the ruleset's).
    dice_alpha: float | None = None
    #: Audit every file that can be read when others cannot (`--keep-going`):
    #: those are reported as not audited and the run exits 2.
    keep_going: bool = False
    #: Globs of files left out on purpose (`--exclude`), listed as excluded.
    exclude: tuple[str, ...] = ()
    #: Columns renamed on read (the configuration's `columns`: file -> spec name).
    columns: tuple[tuple[str, str], ...] = ()


@dataclass
class CheckOutcome:
    """An audit written: its result, the files written, the provenance
    (with the statuses and the verdict) and the triage."""

    result: AuditResult
    written: list[str]
    meta: dict
    triage: Triage
    fail_on: str
    require_complete: bool = False
    streamed: list[str] = dataclasses.field(default_factory=list)
    #: a line per flagged die (`flagged_lines`), from the statistics the
    #: reports were written with
    dice_lines: list[str] = dataclasses.field(default_factory=list)
    #: findings no file of the report holds: the page does not list them,
    #: is past the count it carries (decision 119), and neither
    #: findings.parquet nor findings.jsonl was written
    unkept: int = 0

    @property
    def incomplete(self) -> bool:
        """--require-complete was given and some rule was not evaluated."""
        return self.require_complete and bool(self.meta.get("not_evaluated"))

    @property
    def exit_code(self) -> int:
        # (a file not audited sets the verdict's own exit code to 2)
        return 2 if self.incomplete else self.meta["verdict"]["exit_code"]

    def warnings(self) -> list[str]:
        """A line per column that looks like a typo of a spec column, and
        one when some findings are in no file of the report."""
        lines = [suspect_line(e) for e in self.meta.get("suspect_columns", [])]
        if self.unkept:
            lines.append(f"report.html does not carry the {self.unkept:,} findings it does not "
                         "list (too many for a page) and no findings.parquet or findings.jsonl "
                         "was written: only their counts are in this report; add --format "
                         "parquet")
        return lines

    def summary(self) -> str:
        """The terminal summary: the audit, then what triage made of it."""
        failing = self.meta["verdict"]["failing"]  # new findings only
        rules = {e["rule"] for e in self.meta.get("not_evaluated", [])}
        return "\n".join(filter(None, (
            summary_text(self.result, self.written, self.fail_on, failing, self.meta),
            one_line(self.triage.summary_text()) if self.triage.summary_text() else "",
            *self.dice_lines,
            f"error: --require-complete: {len(rules)} rule(s) not evaluated (the reports "
            f"say where and why)" if self.incomplete else "")))


def check(request: CheckRequest, progress: NoProgress | None = None) -> CheckOutcome:
    """Audit `request.paths` and write the reports. Everything that can be
    refused (ruleset, baseline, waivers, output folder, engine) is refused
    before any log is read. `progress` is told of the audit as it goes and
    set to "writing" before the reports; finishing it is the caller's."""
    with inflate_limits(request.inflate):
        return _check(request, progress if progress is not None else NoProgress())


def _check(request: CheckRequest, progress: NoProgress) -> CheckOutcome:
    read = ReadOptions(request.encoding, request.assume_offset, tuple(request.columns))
    family = resolve_family(request.ruleset_ref)  # `nz` -> nz@*.toml, each version validated
    ruleset = family.latest if family else load_ruleset(request.ruleset_ref)
    accepted = load_accepted(request.baseline, request.waivers, ruleset,
                             family.versions if family else ())
    check_out_dir(request.out)
    _out_apart_from_logs(request.out, request.paths)
    check_engine(request.engine, request.scheduler)
    if request.engine == "dask" and family:
        raise EngineError("a ruleset family is audited by --engine local")
    files = tuple(f for f in dict.fromkeys(request.formats) if REPORT_FORMATS[f].writes_files)
    options = format_options(request)
    # The report folder is locked (a second run into it fails now, before any
    # log is read), built aside and swapped in whole when the block ends well.
    folder = report_folder(request.out, OWN_NAMES) if files else contextlib.nullcontext()
    # Fresh memory in small pages, the audit and its reports (see small_pages).
    left = LeftOut(globs=tuple(request.exclude))
    with folder as target, small_pages(), leaving_out(left):
        def audit_all():
            # (the files discovered again on each try: those found unreadable are left out)
            job = AuditJob.of(request.paths, ruleset, jobs=request.jobs,
                              engine=request.engine, scheduler=request.scheduler, read=read,
                              site_from_path=request.site_from_path, scratch=request.scratch,
                              collector=collector_for(request.formats, ruleset,
                                                      apart=not family and (
                                                          request.jobs > 1
                                                          or request.engine == "dask")))
            if family:  # each version audits its own table sessions, a batch at a time
                def audit_version(logs, version, collector=None):
                    return run_audit(dataclasses.replace(job, ruleset=version,
                                                         collector=collector),
                                     progress=progress, loaded=logs)
                batched = audit_family_batches(job, family, audit_version, progress)
                if batched is not None:
                    return batched
                logs = load_with_progress(list(job.files), progress, read, job.sites)
                check_events(logs.events)  # (small, or one batch: loaded at once)
                return audit_family(logs, family, audit_version)
            return run_audit(job, progress=progress)

        result = _audit_readable(audit_all, request, read, left, progress)
        result = regulated(result)  # gaming days, who answers for each finding
        meta = provenance(result, stamp=request.stamp)
        triage = accepted.triage(result.findings)
        meta["statuses"] = triage.as_meta()
        meta["verdict"] = verdict(result.findings, triage.status, request.fail_on)
        not_audited_meta(meta, left.unreadable, left.excluded)
        progress.stage("writing")
        # The formats read each finding's status from its columns, not from meta.
        triaged = result.with_findings(triage.annotate(result.findings))
        with sharing():  # (the dice statistics computed once, for the files and the terminal)
            with commit_together():  # every report file in place, or none, before the summary
                written, streamed = write_and_render(
                    triaged, meta, target.staging if target else request.out,
                    request.formats, request.streams, options, workers=request.jobs)
            dice_lines = flagged_lines(triaged, request.dice_alpha)
        unkept = _unkept(files, triaged.findings)
        if target:
            written.append(write_manifest(target.staging, meta, files, options))
            written = [str(request.out / Path(w).name) for w in written]
    return CheckOutcome(result, written, meta, triage, request.fail_on,
                        request.require_complete, streamed, dice_lines, unkept)


def _unkept(files, findings) -> int:
    """The findings no file written holds (`CheckOutcome.unkept`)."""
    if "html" not in files or {"parquet", "json"} & set(files):
        return 0
    from auditor.report.html import unlisted_count, unlisted_limit

    not_listed = unlisted_count(findings)
    return not_listed if not_listed > unlisted_limit() else 0


def _audit_readable(audit_all, request: CheckRequest, read: ReadOptions, left: LeftOut,
                    progress: NoProgress):
    """`audit_all()`; when a file cannot be read as a log, every such file
    is found (one more read of each, only then): without --keep-going the
    run stops naming them all, with it they are left out and the rest is
    audited again from the start."""
    while True:
        try:
            return audit_all()
        except LogFileError:
            bad = unreadable_logs(list(request.paths), read)
            if not bad or (len(bad) == 1 and not request.keep_going):
                raise  # not a file's own fault, or the one such file: the error as it was
            if not request.keep_going:
                raise UnreadableLogsError(bad) from None
            left.unreadable.update(bad)
            try:
                discover_logs(list(request.paths))
            except LogFileError:
                raise UnreadableLogsError(left.unreadable, everything=True) from None
            progress.start()


def _out_apart_from_logs(out: Path, paths) -> None:
    """Refuse an output folder inside a folder of logs: the reports
    (findings.parquet, quarantine.parquet, findings.jsonl, findings.csv)
    are named like logs, and the next run would read them as such."""
    where = Path(out).resolve()
    for given in paths:
        folder = Path(given).resolve()
        if folder.is_dir() and (where == folder or folder in where.parents):
            raise OutputError(f"{out}: --out is inside the input folder {given}: the next run "
                              "would read the reports as logs; write them elsewhere")
