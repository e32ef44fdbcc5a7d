"""`auditor check` and `auditor validate`."""

from __future__ import annotations

from pathlib import Path

import click

from auditor.audit import CheckContext, audit_loaded, stamp_hits
from auditor.codes import SEVERITIES
from auditor.findings import at_or_above, finalize
from auditor.logs.load import load_logs
from auditor.report.formats import FORMATS, check_out_dir, write_reports
from auditor.report.provenance import provenance
from auditor.report.summary import summary_text
from auditor.rules.ruleset import Rule, load_ruleset


@click.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--ruleset", "-r", "ruleset_ref", required=True,
              help="A shipped ruleset id (see `auditor rulesets list`) or a .toml file.")
@click.option("--out", "out_dir", default="reports", show_default=True, type=click.Path(),
              help="Folder the reports are written to.")
@click.option("--format", "formats", multiple=True, type=click.Choice(FORMATS),
              default=("parquet",), show_default=True, help="Report format(s).")
@click.option("--fail-on", type=click.Choice(SEVERITIES), default="major", show_default=True,
              help="Exit 1 when any finding is at or above this severity.")
@click.option("--stamp", is_flag=True, help="Record the wall-clock time in the reports "
              "(they are then no longer byte-identical from run to run).")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
def check_command(paths, ruleset_ref, out_dir, formats, fail_on, stamp, quiet):
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
    """
    ruleset = load_ruleset(ruleset_ref)  # validated before any log is read
    check_out_dir(Path(out_dir))
    logs = load_logs(list(paths))
    result = audit_loaded(logs, ruleset)
    meta = provenance(result, stamp=stamp)
    written = write_reports(result, meta, Path(out_dir), formats)
    failing = at_or_above(result.findings, fail_on)
    if not quiet:
        click.echo(summary_text(result, written, fail_on, failing))
    raise SystemExit(1 if failing else 0)


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
        click.echo(f"{where}:{ident} [{row.code}] {row.message}")
    n = len(findings)
    click.echo(f"{len(logs.inputs)} file(s), {logs.rows_read} row(s) read, "
               f"{logs.rows_quarantined} quarantined: "
               + (f"{n} problem(s)" if n else "no problems"), err=True)
    raise SystemExit(1 if n else 0)


def _validate_part(ctx, chk):
    rule = Rule(chk.code, chk.name, chk.code, "event-log-v1", "", "major", {})
    return stamp_hits(ctx, chk.func(ctx, {}), rule, "event-log-v1")
