"""`auditor check` and `auditor validate`."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import click

from auditor.atomic import commit_together
from auditor.checks.context import CheckContext
from auditor.cli.progress import Progress
from auditor.codes import SEVERITIES
from auditor.errors import EngineError
from auditor.escape import terminal_safe
from auditor.findings import finalize
from auditor.logs.load import load_logs, small_pages
from auditor.report import html
from auditor.report.formats import FORMATS, check_out_dir, write_reports
from auditor.report.provenance import provenance
from auditor.report.summary import summary_text
from auditor.rules.ruleset import Rule, load_ruleset
from auditor.rules.versions import resolve_family
from auditor.run import ENGINES, check_engine, run_audit
from auditor.run.core import stamp_hits
from auditor.run.family import audit_family
from auditor.run.stream import load_with_progress
from auditor.triage.baseline import load_accepted, verdict


@click.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--ruleset", "-r", "ruleset_ref", required=True,
              help="A shipped ruleset id (see `auditor rulesets list`), a .toml file, or a "
                   "family of dated versions (NAME for NAME@*.toml: each table session is "
                   "judged by the version in force on its date).")
@click.option("--out", "out_dir", default="reports", show_default=True, type=click.Path(),
              help="Folder the reports are written to.")
@click.option("--format", "formats", multiple=True, type=click.Choice(FORMATS),
              default=("parquet",), show_default=True, help="Report format(s).")
@click.option("--fail-on", type=click.Choice(SEVERITIES), default="major", show_default=True,
              help="Exit 1 when any new finding (not known from --baseline, not waived) is at or above this severity.")
@click.option("--stamp", is_flag=True, help="Record the wall-clock time in the reports "
              "(they are then no longer byte-identical from run to run).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@click.option("--baseline", "baseline_file", type=click.Path(dir_okay=False),
              help="Findings already known (`auditor baseline create`): reported, not failing.")
@click.option("--waivers", "waivers_file", type=click.Path(dir_okay=False),
              help="Accepted breaches (TOML [[waiver]]): reported as waived, not failing.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Audit the tables in N processes (dask: N local workers); same findings.")
@click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True,
              help="local: this machine; dask: a dask.distributed cluster (needs the "
                   "'dask' extra).")
@click.option("--scheduler", metavar="ADDRESS",
              help="The dask scheduler's address (--engine dask); without it a local "
                   "cluster of --jobs workers is started.")
def check_command(paths, ruleset_ref, out_dir, formats, fail_on, stamp, quiet,
                  baseline_file=None, waivers_file=None, jobs=1, engine="local",
                  scheduler=None):
    """Audit logs against a ruleset and write the findings.

    PATHS are log files or folders (searched recursively for .csv, .jsonl,
    .ndjson and .parquet, each optionally .gz). Writes OUT/findings.parquet
    and OUT/quarantine.parquet (rows that could not be read, with the reason).

    \b
    Exit codes: 0 no findings at or above --fail-on; 1 findings at or above
    it; 2 the audit could not run.

    \b
    Example:
        auditor check sample_logs/ --ruleset nz-1996 --out reports/
        auditor check night.csv.gz --ruleset my-casino.toml --fail-on critical
        auditor check year/ --ruleset nz-table-games --jobs 4
    """
    family = resolve_family(ruleset_ref)  # `nz` -> nz@*.toml, each version validated
    ruleset = family.latest if family else load_ruleset(ruleset_ref)  # before any log is read
    accepted = load_accepted(baseline_file, waivers_file, ruleset,  # and these, too
                             family.versions if family else ())
    check_out_dir(Path(out_dir))
    check_engine(engine, scheduler)
    if engine == "dask" and family:
        raise EngineError("a ruleset family is audited by --engine local")
    # Progress on standard error (a terminal only, never with --quiet), fed
    # by the engines; ended (finally) before anything else is printed, error
    # or summary.
    progress = Progress(quiet=quiet)
    progress.start()
    try:
        # Fresh memory in small pages, the audit and its reports (see small_pages).
        with small_pages():
            if family:  # each version audits its own table sessions: loaded at once
                logs = load_with_progress(list(paths), progress)
                audit = functools.partial(run_audit, jobs=jobs, progress=progress)
                result = audit_family(logs, family, audit)
            else:
                result = run_audit(list(paths), ruleset, jobs=jobs, engine=engine,
                                   scheduler=scheduler, progress=progress,
                                   collector=html.COLLECTOR if "html" in formats else None)
            meta = provenance(result, stamp=stamp)
            triage = accepted.triage(result.findings)
            meta["statuses"] = triage.as_meta()
            meta["verdict"] = verdict(result.findings, triage.status, fail_on)
            progress.stage("writing")
            # The formats read each finding's status from its columns, not from meta.
            triaged = dataclasses.replace(result, findings=triage.annotate(result.findings))
            with commit_together():  # every report file in place, or none, before the summary
                written = write_reports(triaged, meta, Path(out_dir), formats)
    finally:
        progress.finish()
    failing = meta["verdict"]["failing"]  # new findings only
    if not quiet:
        click.echo(terminal_safe("\n".join(filter(None, (
            summary_text(result, written, fail_on, failing), triage.summary_text())))))
    raise SystemExit(meta["verdict"]["exit_code"])


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
def validate_command(paths):
    """Check logs against the event-log format only; list every problem.

    Prints one located line per problem (file:line, table and seq where they
    could be read, what is wrong): malformed rows, seq gaps, repeated or
    backward seq and ts. Exit 1 when there is any problem, 0 when none, 2
    when a file cannot be read as a log at all.

    \b
    Example:
        auditor validate sample_logs/
    """
    from auditor.checks import CHECKS

    logs = load_logs(list(paths))
    ctx = CheckContext(logs.events, None, logs.quarantine)
    parts = []
    for name in ("row_malformed", "sequence_gap", "sequence_order"):
        chk = CHECKS[name]
        parts.append(_validate_part(ctx, chk))
    findings = finalize(parts)
    findings = findings.sort_values(["source_file", "source_line"], kind="stable")
    for row in findings.itertuples(index=False):
        where = f"{row.source_file}:{row.source_line}"
        ident = f" {row.table_id} seq {row.seq}" if row.table_id is not None and \
            row.seq is not None and str(row.seq) != "<NA>" else ""
        click.echo(terminal_safe(f"{where}:{ident} [{row.code}] {row.message}"))
    n = len(findings)
    click.echo(f"{len(logs.inputs)} file(s), {logs.rows_read} row(s) read, "
               f"{logs.rows_quarantined} quarantined: "
               + (f"{n} problem(s)" if n else "no problems"), err=True)
    raise SystemExit(1 if n else 0)


def _validate_part(ctx, chk):
    rule = Rule(chk.code, chk.name, chk.code, "event-log-v1", "", "major", {})
    return stamp_hits(ctx, chk.func(ctx, {}), rule, "event-log-v1")
