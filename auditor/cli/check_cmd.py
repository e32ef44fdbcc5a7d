"""`auditor check` and `auditor validate`."""

from __future__ import annotations

from pathlib import Path

import click

from auditor.app.check import CheckRequest, check
from auditor.app.validate import validate
from auditor.cli.options import inflate_options
from auditor.cli.progress import Progress
from auditor.codes import SEVERITIES
from auditor.escape import terminal_safe
from auditor.logs.raw import DEFAULT_INFLATE_LIMITS
from auditor.report.formats import FORMATS
from auditor.run import ENGINES


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
@inflate_options
def check_command(paths, ruleset_ref, out_dir, formats, fail_on, stamp, quiet,
                  baseline_file=None, waivers_file=None, jobs=1, engine="local",
                  scheduler=None, inflate=DEFAULT_INFLATE_LIMITS):
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
    request = CheckRequest(tuple(paths), ruleset_ref, Path(out_dir), tuple(formats), fail_on,
                           stamp, baseline_file, waivers_file, jobs, engine, scheduler,
                           inflate)
    # Progress on standard error (a terminal only, never with --quiet), fed
    # by the engines; ended (finally) before anything else is printed, error
    # or summary.
    progress = Progress(quiet=quiet)
    progress.start()
    try:
        outcome = check(request, progress)
    finally:
        progress.finish()
    if not quiet:
        click.echo(terminal_safe(outcome.summary()))
    raise SystemExit(outcome.exit_code)


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@inflate_options
def validate_command(paths, inflate=DEFAULT_INFLATE_LIMITS):
    """Check logs against the event-log format only; list every problem.

    Prints one located line per problem (file:line, table and seq where they
    could be read, what is wrong): malformed rows, seq gaps, repeated or
    backward seq and ts. Exit 1 when there is any problem, 0 when none, 2
    when a file cannot be read as a log at all.

    \b
    Example:
        auditor validate sample_logs/
    """
    validation = validate(list(paths), inflate)
    findings, logs = validation.problems, validation.logs
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
