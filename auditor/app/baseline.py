"""The `baseline create` use case: the findings of a written report recorded
as known (`auditor.triage.baseline`), so later audits fail only on new ones."""

from __future__ import annotations

from pathlib import Path

from auditor.atomic import write_text
from auditor.triage.baseline import baseline_from_report, baseline_json


def create_baseline(source: Path, out: Path) -> dict:
    """Write the baseline of the report `source` (a findings.parquet) to
    `out`; returns it. A BaselineError when `source` is not such a report."""
    document = baseline_from_report(source)
    write_text(out, baseline_json(document))
    return document
