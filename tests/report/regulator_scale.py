"""A regulator-sized audit for the overview's browser test and benchmark
(`benchmarks/html_overview.py`): 5 sites, 5,000 tables over 7 gaming days and
100,000 findings laid at staff, on the logs of a small real audit (the
events behind the findings are not needed for the overview; the page shows
what it has of them)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from builder import audit

from auditor.audit.core import AuditResult
from auditor.audit.exposure import Exposure
from auditor.findings import SITE_SEPARATOR, finalize
from auditor.generate import generate, write_log

CODES = np.array(["call.wrong_total", "dice.stick_not_used", "offer.order", "throw.short"])
SEVERITIES = np.array(["critical", "major", "minor", "info"])


def regulator_scale(folder: Path, tables: int = 5000, findings: int = 100_000,
                    sites: int = 5, days: int = 7) -> AuditResult:
    write_log(generate(tables=2, rolls=40, seed=3).table, folder / "small.csv")
    small = audit([folder / "small.csv"], "nz-table-games")
    rng = np.random.default_rng(29)
    per_site = tables // sites
    keys = [f"casino-{s + 1}{SITE_SEPARATOR}T{t + 1:04d}" for s in range(sites)
            for t in range(per_site)]
    start = int(datetime(2026, 3, 1, 20, tzinfo=UTC).timestamp() * 1_000_000)
    rows = [(k, d * 1000 + 1, d * 1000 + 999, True, start + d * 86_400_000_000,
             start + d * 86_400_000_000 + 3_600_000_000, "small.csv",
             int(rng.integers(100, 400))) for k in keys for d in range(days)]
    sessions = pd.DataFrame(rows, columns=["table", "first_seq", "last_seq", "opened", "open_us",
                                           "last_us", "source_file", "rolls"])
    staff_of = {k: f"K{i % (per_site // 2) + 1:04d}" for i, k in enumerate(keys)}
    staff = pd.DataFrame({"table": sessions["table"], "first_seq": sessions["first_seq"],
                          "staff_id": sessions["table"].map(staff_of),
                          "rolls": sessions["rolls"]})
    duties = pd.DataFrame({"table": sessions["table"], "first_seq": sessions["first_seq"],
                           "role": "stickperson", "staff_id": staff["staff_id"],
                           "on_seq": sessions["first_seq"], "off_seq": sessions["last_seq"] + 1,
                           "rolls": sessions["rolls"]})
    # some tables far worse than others: a skewed choice of table
    weight = rng.pareto(1.5, len(keys)) + 0.1
    at = rng.choice(len(keys), findings, p=weight / weight.sum())
    day = rng.integers(0, days, findings)
    pick = rng.choice(4, findings, p=[0.01, 0.33, 0.33, 0.33])
    frame = pd.DataFrame({
        "table_id": np.array(keys, dtype=object)[at], "seq": day * 1000 + 2 +
        rng.integers(0, 990, findings), "ts": pd.Timestamp("2026-03-01T21:00Z"),
        "event": "roll", "seat": 2, "actor_role": "player", "actor_id": "P1",
        "source_file": "small.csv", "source_line": 2, "code": CODES[pick],
        "rule_id": "R-" + CODES[pick], "ruleset": small.ruleset.id, "clause": "1",
        "severity": SEVERITIES[pick], "message": "synthetic", "evidence": "{}"})
    result = AuditResult(small.ruleset, small.logs, finalize([frame]),
                         exposure=Exposure(sessions, duties, staff))
    return regulated_synthetic(result)


def regulated_synthetic(result: AuditResult) -> AuditResult:
    """Gaming days as `regulated` gives them; each finding laid at its
    table's stickperson (the synthetic rules name no role)."""
    from auditor.audit.responsible import dated

    result.exposure.sessions = dated(result.exposure.sessions, [])
    keys = result.findings["site"].astype(str) + SITE_SEPARATOR + \
        result.findings["table_id"].astype(str)
    staff_of = dict(zip(result.exposure.staff["table"], result.exposure.staff["staff_id"]))
    result.findings = result.findings.copy()
    result.findings["responsible_id"] = keys.map(staff_of).astype(object)
    result.findings["responsible_role"] = "stickperson"
    return result
