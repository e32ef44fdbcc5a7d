"""`auditor trend`: several audits' roll-ups, report by report."""

from __future__ import annotations

from pathlib import Path

import click

from auditor.app.trend import trend
from auditor.escape import one_line


@click.command("trend")
@click.argument("folders", metavar="REPORT_DIR...", nargs=-1, required=True,
                type=click.Path())
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Folder for trend.parquet and trend.html.")
@click.option("--allow-mixed-rulesets", is_flag=True,
              help="Chart reports made under different rulesets (content hashes); the page "
                   "says which report used which.")
def trend_command(folders, out, allow_mixed_rulesets=False):
    """Chart the roll-ups of several audits, report by report.

    Each REPORT_DIR (an `auditor check` folder) is checked against its
    manifest first: one whose files do not match is refused (exit 2, naming
    it and the file). Reports under different rulesets are refused unless
    --allow-mixed-rulesets.

    \b
    Writes OUT/trend.parquet (one row per report, level, key and code: the
    report's period, findings, rolls, rate per 1,000 valid rolls) and
    OUT/trend.html (per site and per code, the rate report by report; what is
    new since the first report and what has stopped).

    \b
    Example:
        auditor trend reports/2026-01 reports/2026-02 reports/2026-03 --out trend/
        auditor check sample_logs/nz-table-games/night-clean.csv -r nz-table-games --out jan && auditor trend jan jan --out trend/
    """
    written = trend([Path(f) for f in folders], Path(out), allow_mixed_rulesets)
    click.echo(one_line(f"{len(folders)} report(s) charted. Written: {', '.join(written)}."))
