"""The audit: load the logs, replay every table, run the ruleset's checks and
gather their findings. The library entry point behind `auditor check`."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from auditor.checks import CHECKS
from auditor.checks.context import CheckContext
from auditor.checks.registry import Hits
from auditor.findings import LOCATION_COLUMNS, evidence_jsons, finalize, paused_gc
from auditor.game import replay as replay_module
from auditor.game.state import ReplayState
from auditor.logs.load import LoadedLogs, load_logs, table_runs
from auditor.rules.ruleset import Ruleset, load_ruleset
from auditor.run.caveat import caveats
from auditor.run.collect import Collector
from auditor.run.coverage import drop_unjudged, not_evaluated
from auditor.run.exposure import EXPOSURE


@dataclass
class AuditResult:
    ruleset: Ruleset
    logs: LoadedLogs
    findings: pd.DataFrame
    #: The tables audited, when the engine knows them without the events at
    #: hand (the dask engine's workers read the events).
    table_ids: list[str] | None = None
    #: What the audit dealt (`auditor.run.exposure.Exposure`): the valid rolls
    #: per session and staff duty; None where no engine collected it.
    exposure: Any = None

    def __post_init__(self):
        """Which rules could not be evaluated in which file (`coverage`);
        their findings at that file's rows are dropped (whatever engine made
        the findings, this is where every one of them ends)."""
        rulesets = getattr(self, "rulesets", None) or [self.ruleset]
        self.not_evaluated = not_evaluated(rulesets, self.logs.inputs)
        self.findings = drop_unjudged(self.findings, self.not_evaluated)

    @property
    def tables(self) -> list[str]:
        if self.table_ids is not None:
            return list(self.table_ids)
        # (every table held starts a run of rows: no pass over the rows' text)
        return sorted(set(table_runs(self.logs.events)[2]))


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
    (`auditor.run`) run this same core on groups of tables.

    `timings`, when given, receives the seconds spent per stage (`replay`,
    `checks`), added to what it already holds."""
    parts, exposure = audit_taking(logs, ruleset, EXPOSURE, timings)
    with stage(timings, "checks"):
        findings = finalize(parts)
    return AuditResult(ruleset, logs, findings, exposure=exposure)


def audit_parts(logs: LoadedLogs, ruleset: Ruleset,
                timings: dict[str, float] | None = None,
                on_stage: Callable[[str], None] | None = None) -> list[pd.DataFrame]:
    """The stamped findings of every rule, before `finalize` orders them and
    gives them their ids: what an engine gathers from each group of tables.
    `on_stage(name)`, when given, is called as each stage ends ("replay",
    then "checks"): what a live progress display follows."""
    return audit_taking(logs, ruleset, None, timings, on_stage)[0]


def audit_taking(logs: LoadedLogs, ruleset: Ruleset, collector: Collector | None,
                 timings: dict[str, float] | None = None,
                 on_stage: Callable[[str], None] | None = None) -> tuple[list[pd.DataFrame], Any]:
    """`audit_parts`, and what a report's `collector` (`auditor.run.collect`)
    takes of the events, given their findings and the replay's state, before
    the state goes (None without a collector: the state goes at once)."""
    # The cyclic collector stays off from the replay to the state's end:
    # the state holds hundreds of thousands of lists (the replay's values by
    # row), and a collection between the stages traversed them all (0.4 s
    # at 10M events, for garbage made of none of them).
    with paused_gc():
        parts, state = _replayed_parts(logs, ruleset, timings, on_stage)
        taken = None if collector is None else \
            collector.take(logs.events, finalize(parts), state)
        del state
    return parts, taken


def _replayed_parts(logs: LoadedLogs, ruleset: Ruleset, timings: dict[str, float] | None,
                    on_stage: Callable[[str], None] | None
                    ) -> tuple[list[pd.DataFrame], ReplayState]:
    with stage(timings, "replay"):
        state = replay_state(logs.events, ruleset)
    if on_stage is not None:
        on_stage("replay")
    with stage(timings, "checks"):
        part = run_checks(CheckContext(logs.events, state, logs.quarantine), ruleset)
    if on_stage is not None:
        on_stage("checks")
    return ([part] if len(part) else []), state


#: Whether the replay runs compiled (read once: the compiled module's own flag).
REPLAY_COMPILED = replay_module.COMPILED


class UncompiledReplayWarning(RuntimeWarning):
    """The replay runs as plain Python (no C compiler at install)."""


UNCOMPILED = ("the replay runs uncompiled (the package was installed without a C compiler "
              "or with AUDITOR_NO_COMPILE): the audit is right but about fifteen times "
              "slower; reinstall with a C compiler to compile it")


def replay_state(events: pd.DataFrame, ruleset: Ruleset) -> ReplayState:
    """The replay of `events` under the ruleset's bar number; a warning,
    shown once a process, when the replay runs uncompiled."""
    if not REPLAY_COMPILED:
        warnings.warn(UNCOMPILED, UncompiledReplayWarning, stacklevel=2)
    return replay_module.replay(events, bar=ruleset.parameters["bar_number"])


def run_checks(ctx: CheckContext, ruleset: Ruleset,
               keep: Callable[[Hits], Hits] | None = None) -> pd.DataFrame:
    """Every rule's check over `ctx`, stamped: one frame of findings in rule
    order (not yet ordered nor given ids). `keep`, when given, picks each
    rule's hits to stamp (an engine auditing rows it does not report on)."""
    with paused_gc():
        found = [(CHECKS[rule.check].func(ctx, rule.params), rule) for rule in ruleset.rules]
        if keep is not None:
            found = [(keep(hits), rule) for hits, rule in found]
        return stamp_all(ctx, found, ruleset.id)


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
    with paused_gc():
        return stamp_all(ctx, [(hits, rule)], ruleset_id)


def stamp_all(ctx: CheckContext, found: list[tuple[Hits, object]],
              ruleset_id: str) -> pd.DataFrame:
    """`stamp_hits` of every rule's hits, in rule order, as one frame: the
    location columns are gathered once for all rows of all rules (a frame
    built and typed per rule costs more than most checks)."""
    found = [(h, r) for h, r in found
             if (len(h.located) if h.located is not None else len(h.rows))]
    if not found:
        return pd.DataFrame()
    blocks: list[dict] = []
    run: list[Hits] = []
    for hits, _ in found:
        if hits.located is None:
            run.append(hits)
            continue
        if run:
            blocks.append(_locate_rows(ctx, np.concatenate([h.rows for h in run])))
            run = []
        blocks.append(_located(ctx, hits.located))
    if run:
        blocks.append(_locate_rows(ctx, np.concatenate([h.rows for h in run])))
    columns = {c: _joined([b[c] for b in blocks]) for c in LOCATION_COLUMNS}
    counts = [len(h.located) if h.located is not None else len(h.rows) for h, _ in found]
    for name, attr in (("code", "code"), ("rule_id", "id"), ("clause", "clause"),
                       ("severity", "severity")):
        columns[name] = np.repeat(np.array([getattr(r, attr) for _, r in found], dtype=object),
                                  counts)
    columns["ruleset"] = np.full(sum(counts), ruleset_id, dtype=object)
    messages: list = []
    evidence: list = []
    for hits, _ in found:
        messages.extend(hits.messages)
        evidence.extend(hits.evidence)
    columns["message"] = _objects(messages)
    # A finding whose hand holds unreadable rows says so (auditor.run.caveat).
    event_rows = np.concatenate([h.rows if h.located is None else
                                 np.full(len(h.located), -1, dtype=np.int64) for h, _ in found])
    columns["caveat"] = caveats(ctx.events, ctx.state, ctx.quarantine, event_rows,
                                columns["code"])
    for i in np.flatnonzero(pd.notna(columns["caveat"])).tolist():
        evidence[i] = {**(evidence[i] or {}), "caveat": columns["caveat"][i]}
    columns["evidence"] = _objects(evidence_jsons(evidence))
    order = (*LOCATION_COLUMNS, "code", "rule_id", "ruleset", "clause", "severity", "message",
             "evidence", "caveat")
    # Text stays object: a frame built from object arrays of text would
    # infer the str dtype and read None as NaN.
    return pd.DataFrame({c: pd.Series(columns[c], dtype=object, copy=False)
                         if isinstance(columns[c], np.ndarray) and columns[c].dtype == object
                         else columns[c] for c in order})


_CATEGORICAL_LOCATION = ("table_id", "event", "actor_role", "actor_id", "source_file")


def _locate_rows(ctx: CheckContext, rows: np.ndarray) -> dict:
    """The location columns of event `rows`: text as objects (NaN where
    nothing was recorded, as a categorical reads), numbers and time as
    the events hold them."""
    events = ctx.events
    out = {}
    for c in LOCATION_COLUMNS:
        column = events[c]
        if isinstance(column.dtype, pd.CategoricalDtype):
            out[c] = ctx.shared.values_at(c, rows)
        elif c in _CATEGORICAL_LOCATION:
            out[c] = np.asarray(column.array.take(rows), dtype=object)
        else:
            out[c] = column.array.take(rows)
    return out


def _located(ctx: CheckContext, located: pd.DataFrame) -> dict:
    """The location columns of findings about rows that are not events."""
    out = {}
    for c in LOCATION_COLUMNS:
        values = located[c]
        if c in ("seq", "seat", "source_line"):
            out[c] = values.astype("Int64").array
        elif c == "ts":
            ts = pd.to_datetime(values, utc=True)
            like = ctx.events["ts"].dtype if "ts" in ctx.events else None
            if isinstance(like, pd.DatetimeTZDtype) and ts.dtype != like:
                ts = ts.astype(like)  # as the events' times: one dtype to join
            out[c] = ts.array
        else:
            out[c] = values.to_numpy(dtype=object)
    return out


def _joined(arrays: list):
    if len(arrays) == 1:
        return arrays[0]
    if all(isinstance(a, np.ndarray) for a in arrays):
        return np.concatenate(arrays)
    return pd.concat([pd.Series(a) for a in arrays], ignore_index=True).array


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
