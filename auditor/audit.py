"""The audit: load the logs, replay every table, run the ruleset's checks and
gather their findings. The library entry point behind `auditor check`."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from auditor.checks import CHECKS
from auditor.checks.registry import Hits
from auditor.findings import LOCATION_COLUMNS, evidence_json, finalize
from auditor.game.replay import replay
from auditor.logs.load import LoadedLogs, load_logs
from auditor.rules.ruleset import Ruleset, load_ruleset


@dataclass
class CheckContext:
    """What a check sees: the events of every table (ordered by table, seq),
    the state the replay derived beside them, and the quarantined rows."""

    events: pd.DataFrame
    state: pd.DataFrame
    quarantine: pd.DataFrame


@dataclass
class AuditResult:
    ruleset: Ruleset
    logs: LoadedLogs
    findings: pd.DataFrame
    #: The tables audited, when the engine knows them without the events at
    #: hand (the dask engine's workers read the events).
    table_ids: list[str] | None = None

    @property
    def tables(self) -> list[str]:
        if self.table_ids is not None:
            return list(self.table_ids)
        return sorted(self.logs.events["table_id"].astype(str).unique().tolist())


def audit(paths: list[str | Path], ruleset: Ruleset | str) -> AuditResult:
    """Audit every log under `paths` against `ruleset` (an id, a path or a
    loaded Ruleset). The ruleset is validated before any log is read."""
    if not isinstance(ruleset, Ruleset):
        ruleset = load_ruleset(ruleset)
    logs = load_logs(paths)
    return audit_loaded(logs, ruleset)


def audit_loaded(logs: LoadedLogs, ruleset: Ruleset,
                 timings: dict[str, float] | None = None) -> AuditResult:
    """The audit of loaded logs in this process: every table replayed, every
    rule's check run, the findings ordered and given their ids. The engines
    (`auditor.engine`) run this same core on groups of tables.

    `timings`, when given, receives the seconds spent per stage (`replay`,
    `checks`), added to what it already holds."""
    parts = audit_parts(logs, ruleset, timings)
    with stage(timings, "checks"):
        findings = finalize(parts)
    return AuditResult(ruleset, logs, findings)


def audit_parts(logs: LoadedLogs, ruleset: Ruleset,
                timings: dict[str, float] | None = None) -> list[pd.DataFrame]:
    """The stamped findings of every rule, before `finalize` orders them and
    gives them their ids: what an engine gathers from each group of tables."""
    with stage(timings, "replay"):
        state = replay(logs.events, bar=ruleset.parameters["bar_number"])
    with stage(timings, "checks"):
        ctx = CheckContext(logs.events, state, logs.quarantine)
        parts = []
        for rule in ruleset.rules:
            hits = CHECKS[rule.check].func(ctx, rule.params)
            parts.append(stamp_hits(ctx, hits, rule, ruleset.id))
    return parts


@contextmanager
def stage(timings: dict[str, float] | None, name: str):
    """Add the wall-clock seconds of the block to `timings[name]` (if given)."""
    if timings is None:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - start


def stamp_hits(ctx: CheckContext, hits: Hits, rule, ruleset_id: str) -> pd.DataFrame:
    """The engine, not the check, stamps rule id, clause and severity."""
    if hits.located is not None:
        frame = hits.located.reset_index(drop=True).copy()
    else:
        if not len(hits.rows):
            return pd.DataFrame()
        frame = ctx.events.iloc[hits.rows][list(LOCATION_COLUMNS)].reset_index(drop=True)
        for col in ("table_id", "event", "actor_role", "source_file"):
            frame[col] = frame[col].astype(object)
    if not len(frame):
        return pd.DataFrame()
    frame["code"] = rule.code
    frame["rule_id"] = rule.id
    frame["ruleset"] = ruleset_id
    frame["clause"] = rule.clause
    frame["severity"] = rule.severity
    frame["message"] = hits.messages
    frame["evidence"] = [evidence_json(e) for e in hits.evidence]
    return frame
