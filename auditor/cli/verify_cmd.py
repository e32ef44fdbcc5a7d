"""`auditor verify`: does a report still stand?"""

from __future__ import annotations

from pathlib import Path

import click

from auditor.app.verify import verify_report
from auditor.cli.options import inflate_options
from auditor.cli.progress import Progress
from auditor.escape import one_line
from auditor.logs.raw import DEFAULT_INFLATE_LIMITS


@click.command("verify")
@click.argument("folder", metavar="DIR", type=click.Path())
@click.option("--inputs-root", type=click.Path(file_okay=False),
              help="Where the logs are now: the folder that holds what was the inputs' "
                   "common folder (default: the paths as recorded, relative ones from "
                   "here).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Re-run the audit in N processes, as `check --jobs` runs it (a batch of "
                   "files at a time whatever N: memory follows the batch, not the input).")
@click.option("--scratch", metavar="DIR",
              type=click.Path(exists=True, file_okay=False, writable=True),
              help="Where the re-run's working files go (default: TMPDIR), as `check "
                   "--scratch`.")
@inflate_options
@click.pass_context
def verify_command(ctx, folder, inputs_root=None, inflate=DEFAULT_INFLATE_LIMITS, jobs=1,
                   scratch=None):
    """Check that the report in DIR still stands.

    \b
    1. The folder: every file DIR/manifest.json lists, with its size and
       SHA-256, and no other file; the provenance in the manifest and in
       the Parquet files the same.
    2. The audit: every input named in the provenance re-read (its SHA-256
       and row counts), the ruleset reloaded (a shipped one by its id, in
       this installation) and its content hash compared, the audit re-run,
       the findings and quarantined rows compared row for row.
    3. The provenance: its verdict, counts and statuses those that the
       re-run audit, the baseline and the waivers give.
    4. The files: every format in the folder rendered again and compared
       byte for byte.

    Input paths are those given to `auditor check` (run verify from the
    same folder), or found under --inputs-root.

    \b
    Exit codes: 0 the report stands; 1 it does not (each difference is
    listed); 2 DIR holds no report.

    \b
    Example:
        auditor check sample_logs/nz-1996 --ruleset nz-1996 --out reports/   # exits 1
        auditor verify reports/
        auditor verify archive/2026-03/reports --inputs-root archive/2026-03/logs --jobs 4
    """
    # (the re-run's progress on standard error, on a terminal only, as `check` shows it)
    progress = Progress()
    progress.start()
    try:
        verdict = verify_report(Path(folder), Path(inputs_root) if inputs_root else None,
                                inflate, jobs, progress, scratch)
    finally:
        progress.finish()
    for note in verdict.notes:
        click.echo(one_line(f"note: {note}"))
    if verdict.stands:
        files = f"{verdict.files} file(s) as listed, " if verdict.files else ""
        click.echo(one_line(
            f"report stands: {verdict.inputs} input(s) unchanged, ruleset {verdict.ruleset_id} "
            f"unchanged, {verdict.findings} finding(s) and {verdict.quarantined} quarantined "
            f"row(s) reproduced, {files}every format rendered again the same."))
        ctx.exit(0)
    click.echo(f"report does not stand: {len(verdict.problems)} difference(s)")
    for problem in verdict.problems:
        click.echo("  - " + one_line(problem))
    ctx.exit(1)
