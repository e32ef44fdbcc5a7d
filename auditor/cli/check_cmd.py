"""`auditor check` and `auditor validate`."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import click
from click.core import ParameterSource

from auditor.app.check import CheckRequest, check
from auditor.app.config import merged, project_config
from auditor.app.validate import validate
from auditor.cli.options import inflate_options
from auditor.cli.progress import Progress
from auditor.codes import FAIL_ON_CHOICES
from auditor.escape import one_line
from auditor.logs.columns import suspect_columns
from auditor.logs.raw import DEFAULT_INFLATE_LIMITS, ReadOptions
from auditor.report.formats import FORMATS, parse_format
from auditor.report.sarif import MAX_RESULTS
from auditor.run import ENGINES


class FormatSpec(click.ParamType):
    """`FMT` (the format's files in --out) or `FMT:-` (its text on standard
    output, for the formats that have one): `auditor.report.formats`."""

    name = "format"

    def get_metavar(self, param, ctx=None):
        return "[" + "|".join(FORMATS) + "][:-]"

    def convert(self, value, param, ctx):
        try:
            parse_format(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        return str(value)


def read_options(command):
    """`--encoding` and `--assume-offset`: how to read logs that depart from
    the spec in a way the user knows (check and validate)."""
    command = click.option(
        "--assume-offset", metavar="+HH:MM",
        help="Read times written without a UTC offset as this offset (recorded in the "
             "provenance); without it such a time quarantines its row.")(command)
    return click.option(
        "--encoding", metavar="NAME",
        help="The text encoding of CSV and JSON Lines logs (e.g. cp1252; recorded in the "
             "provenance); default UTF-8.")(command)


@click.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--ruleset", "-r", "ruleset_ref",
              help="A shipped ruleset id (see `auditor rulesets list`), a .toml file, or a "
                   "family of dated versions (NAME for NAME@*.toml: each table session is "
                   "judged by the version in force on its date). Required, here or in the "
                   "project configuration.")
@click.option("--out", "out", default="reports", show_default=True, type=click.Path(),
              help="Folder the reports are written to.")
@click.option("--format", "formats", multiple=True, type=FormatSpec(),
              show_default="parquet, and text on a terminal",
              help="Report format(s); FMT:- puts the format's text on standard output "
                   "instead of a file (json:- the findings as JSON lines).")
@click.option("--fail-on", type=click.Choice(FAIL_ON_CHOICES), default="major",
              show_default=True,
              help="Exit 1 when any new finding (not known from --baseline, not waived) is "
                   "at or above this severity; none: report only, exit 0.")
@click.option("--stamp", is_flag=True, help="Record the wall-clock time in the reports "
              "(they are then no longer byte-identical from run to run).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@click.option("--baseline", "baseline", type=click.Path(dir_okay=False),
              help="Findings already known (`auditor baseline create`): reported, not failing.")
@click.option("--waivers", "waivers", type=click.Path(dir_okay=False),
              help="Accepted breaches (TOML [[waiver]]): reported as waived, not failing.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Audit the tables in N processes (dask: N local workers); same findings.")
@click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True,
              help="local: this machine; dask: a dask.distributed cluster (needs the "
                   "'dask' extra).")
@click.option("--scheduler", metavar="ADDRESS",
              help="The dask scheduler's address (--engine dask); without it a local "
                   "cluster of --jobs workers is started.")
@click.option("--scratch", metavar="DIR",
              type=click.Path(exists=True, file_okay=False, writable=True),
              help="Where the audit's working files go (default: TMPDIR): files that all "
                   "hold the same tables (nightly exports) sorted out by table, about 110 "
                   "bytes an event. With --scheduler, a folder every worker sees at the "
                   "same path; without it such files are audited whole by one worker.")
@inflate_options
@read_options
@click.option("--require-complete", is_flag=True,
              help="Exit 2 (after writing the reports) when any rule could not be evaluated "
                   "in some file (a column or an event type it needs is not recorded).")
@click.option("--sarif-max-results", type=click.IntRange(min=0), default=MAX_RESULTS,
              show_default=True, help="At most N results (and 10 MB) in findings.sarif, "
              "the rest counted per rule; 0: no limit.")
@click.option("--color/--no-color", default=None,
              help="Colour the text format (default: on a terminal, unless NO_COLOR is set).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="The project configuration to use (default: auditor.toml or "
                   "pyproject.toml [tool.auditor], found upward from here).")
@click.option("--no-config", is_flag=True, help="Use no project configuration.")
@click.option("--site-from-path", is_flag=True,
              help="Each file's site is the first folder below the path given (PATHS "
                   "exports/ with exports/casino-a/, exports/casino-b/): tables are kept "
                   "apart by (site, table_id) and every report gains a `site` column.")
@click.option("--dice-alpha", type=click.FloatRange(min=0, max=1, min_open=True,
                                                   max_open=True), default=None,
              help="The level a die (or a session's or set's totals) is flagged at, after "
                   "Holm's adjustment (default: the ruleset's dice_alpha, else 0.01). A flag "
                   "is a signal for inspection, not a finding (docs/dice-integrity.md).")
@click.option("--keep-going", is_flag=True,
              help="Audit every file that can be read when others cannot (cannot be "
                   "decompressed or parsed, not an event log): those are reported as NOT "
                   "AUDITED, with the reason, and the run exits 2.")
@click.option("--exclude", "exclude", multiple=True, metavar="GLOB",
              help="Leave out files whose name, or path below the folder given, matches "
                   "GLOB (repeatable); they are listed as excluded in the provenance.")
@click.pass_context
def check_command(ctx, paths, quiet, config_file, no_config, **options):
    """Audit logs against a ruleset and write the findings.

    PATHS are log files or folders (searched recursively for .csv, .jsonl,
    .ndjson and .parquet, each optionally .gz). Writes OUT/findings.parquet
    and OUT/quarantine.parquet (rows that could not be read, with the reason);
    on a terminal, prints the text report (verdict, counts, top findings).

    \b
    Exit codes: 0 no findings at or above --fail-on (always under --fail-on
    none); 1 findings at or above it; 2 the audit could not run, or (reports
    written) some file could not be read under --keep-going, or, with
    --require-complete, some rule could not be evaluated.

    \b
    Example:
        auditor check sample_logs/nz-1996 --ruleset nz-1996 --out reports/   # exits 1
        auditor check sample_logs/ --site-from-path -r nz-table-games --fail-on none
        auditor check night.csv.gz --ruleset my-casino.toml --fail-on critical
        auditor check year/ --ruleset nz-table-games --jobs 4
        auditor check export.csv -r nz-table-games --encoding cp1252 --assume-offset +13:00
        auditor check export/ -r nz-table-games --format sarif --format github:-
    """
    config = project_config(config_file, no_config)
    options = merged(options, config, lambda option: _on_command_line(ctx, option))
    if config is not None and not quiet:
        click.echo(one_line(f"config: {config.source}"), err=True)
    if not options["ruleset_ref"]:
        raise click.UsageError("Missing option '--ruleset' / '-r' (or `ruleset` in the "
                               "project configuration).")
    to_terminal = _stdout_is_terminal()
    # nothing asked: the Parquet report, and the text on a terminal
    specs = options.pop("formats") or (
        ("parquet", "text") if to_terminal and not quiet else ("parquet",))
    parsed = [parse_format(s) for s in specs]
    streams = tuple(dict.fromkeys(name for name, to_stdout in parsed if to_stdout))
    if len([s for s in streams if s != "github"]) > 1:
        raise click.UsageError("one format at a time on standard output (besides github)")
    if options["color"] is None:
        options["color"] = to_terminal and not os.environ.get("NO_COLOR")
    request = CheckRequest(
        tuple(paths), formats=tuple(s for s, (_, to_stdout) in zip(specs, parsed)
                                    if not to_stdout),
        streams=streams, out=Path(options.pop("out")), **options)
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
        for line in outcome.warnings():
            click.echo(one_line(f"warning: {line}"), err=True)
    try:
        _print(outcome, streams, quiet)
    except BrokenPipeError:  # `auditor check ... | head`: the reader has had enough
        _silence_stdout()
    raise SystemExit(outcome.exit_code)


def _print(outcome, streams: tuple[str, ...], quiet: bool) -> None:
    """The streamed formats on standard output, in the order asked; the
    summary paragraph on standard output as before when nothing else is
    there, on standard error beside a streamed format, and not at all beside
    the text report (which holds it): then only the files written and the
    baseline and waivers sentence, on standard error."""
    out = sys.stdout
    binary = getattr(out, "buffer", None)  # UTF-8 whatever the locale says
    for text in outcome.streamed:
        out.flush()
        if binary is not None:
            binary.write(text.encode("utf-8", "backslashreplace"))
        else:
            out.write(text)
        out.flush()
    if quiet:
        return
    if "text" in streams:
        written = ", ".join(outcome.written) if outcome.written else "nothing"
        lines = [f"Written: {written}.", outcome.triage.summary_text()]
        click.echo("\n".join(one_line(line) for line in lines if line), err=True)
    else:
        click.echo(outcome.summary(), err=bool(set(streams) - {"github"}))


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that Python's own flush at exit
    does not meet the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (OSError, ValueError):
        return False


def _on_command_line(ctx: click.Context, option: str) -> bool:
    return ctx.get_parameter_source(option) is ParameterSource.COMMANDLINE


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@read_options
@inflate_options
@click.option("--scratch", metavar="DIR",
              type=click.Path(exists=True, file_okay=False, writable=True),
              help="Where the working files go (default: TMPDIR), as `check --scratch`.")
def validate_command(paths, encoding=None, assume_offset=None, inflate=DEFAULT_INFLATE_LIMITS,
                     scratch=None):
    """Check logs against the event-log format only; list every problem.

    Prints one located line per problem (file:line, table and seq where they
    could be read, what is wrong): malformed rows, seq gaps, repeated or
    backward seq and ts; every file that cannot be read as a log at all is
    listed too (and the others validated). Exit 1 when there is any
    problem, 0 when none, 2 when a file cannot be read as a log at all.

    \b
    Example:
        auditor validate sample_logs/nz-table-games/night-clean.csv
        auditor validate sample_logs/format/broken-rows.csv   # exits 1
    """
    validation = validate(list(paths), ReadOptions(encoding, assume_offset), inflate, scratch)
    findings, logs = validation.problems, validation.logs
    suspects = 0
    for f in logs.inputs:
        for name, likely in suspect_columns(tuple(f.columns)):
            suspects += 1
            click.echo(one_line(f"warning: {f.path}: column `{name}` is not in event-log-v1; "
                                f"did you mean `{likely}`?"), err=True)
    for path, why in validation.unreadable.items():
        click.echo(one_line(f"{path}: [not a log] cannot be read as a log: {why}"))
    for row in findings.itertuples(index=False):
        where = f"{row.source_file}:{row.source_line}"
        ident = f" {row.table_id} seq {row.seq}" if row.table_id is not None and \
            row.seq is not None and str(row.seq) != "<NA>" else ""
        click.echo(one_line(f"{where}:{ident} [{row.code}] {row.message}"))
    n = len(findings)
    bad = len(validation.unreadable)
    unread = f"{bad} file(s) not a log, " if bad else ""
    click.echo(f"{len(logs.inputs)} file(s), {unread}{logs.rows_read} row(s) read, "
               f"{logs.rows_quarantined} quarantined: "
               + (f"{n} problem(s)" if n else "no problems")
               + (f" ({suspects} column(s) that look like typos: see the warnings)"
                  if suspects else ""), err=True)
    raise SystemExit(2 if bad else 1 if n else 0)
