"""`auditor verify`: does a report still stand?"""

from __future__ import annotations

from pathlib import Path

import click

from auditor.app.verify import verify_report
from auditor.cli.options import inflate_options
from auditor.escape import terminal_safe
from auditor.logs.raw import DEFAULT_INFLATE_LIMITS


@click.command("verify")
@click.argument("folder", metavar="DIR", type=click.Path())
@inflate_options
@click.pass_context
def verify_command(ctx, folder, inflate=DEFAULT_INFLATE_LIMITS):
    """Check that the report in DIR still stands.

    Re-reads every input named in DIR/findings.parquet's provenance and
    compares its SHA-256, reloads the ruleset (the files of its extends chain)
    and compares its content hash, re-runs the audit and compares the
    findings and the quarantined rows row for row with the report. Input
    paths are those given to `auditor check`: run verify from the same folder.

    \b
    Exit codes: 0 the report stands; 1 something no longer matches (each
    difference is listed); 2 DIR holds no report.

    \b
    Example:
        auditor check logs/ --ruleset nz-1996 --out reports/
        auditor verify reports/
    """
    verdict = verify_report(Path(folder), inflate)  # no report: "error: ..." and exit 2
    for note in verdict.notes:
        click.echo(terminal_safe(f"note: {note}"))
    if verdict.stands:
        click.echo(terminal_safe(
            f"report stands: {verdict.inputs} input(s) unchanged, ruleset {verdict.ruleset} "
            f"unchanged, {verdict.findings} finding(s) and {verdict.quarantined} quarantined "
            f"row(s) reproduced."))
        ctx.exit(0)
    click.echo(terminal_safe(f"report does not stand: {len(verdict.problems)} difference(s)"))
    for problem in verdict.problems:
        click.echo(terminal_safe(f"  - {problem}"))
    ctx.exit(1)
