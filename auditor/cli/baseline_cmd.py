"""`auditor baseline create`: record the findings of an audit as known, so
later audits fail only on new ones. A thin wrapper over
`auditor.app.baseline`."""

from __future__ import annotations

from pathlib import Path

import click

from auditor.app.baseline import create_baseline


@click.group("baseline")
def baseline_group():
    """Baselines: findings already known, which no longer fail `auditor check`.

    \b
    Example:
        auditor check sample_logs/nz-1996 -r nz-1996 --out reports/   # exits 1
        auditor baseline create --from reports/findings.parquet --out baseline.json
        auditor check sample_logs/nz-1996 -r nz-1996 --baseline baseline.json
    """


@baseline_group.command("create")
@click.option("--from", "source", required=True, type=click.Path(dir_okay=False),
              help="A findings.parquet written by `auditor check`.")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="The baseline file to write (JSON).")
def create_command(source, out):
    """Write a baseline: every finding of a findings.parquet, by finding id.

    The baseline records the ruleset id and content hash from the report's
    provenance and a sorted list of {finding_id, code, rule_id, table_id,
    seq}. `auditor check --baseline FILE` then reports those findings as
    known; only new ones count towards the exit code. A baseline made under
    another ruleset id is refused (exit 2).

    \b
    Example:
        auditor check sample_logs/nz-1996 -r nz-1996 --out reports/   # exits 1
        auditor baseline create --from reports/findings.parquet --out baseline.json
    """
    document = create_baseline(Path(source), Path(out))  # a BaselineError: exit 2
    click.echo(f"wrote {len(document['findings'])} finding(s) of ruleset "
               f"{document['ruleset']['id']} to {out}")
