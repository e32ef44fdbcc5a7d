"""The audit of loaded tables: replay every table, run the ruleset's checks
and stamp their findings (`audit_tables`, the one entry point every engine
calls), and the result an engine makes of the parts (`AuditResult`)."""

from __future__ import annotations

import copy
import time
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

import pandas as pd

from auditor.audit.collect import Collector
from auditor.audit.coverage import drop_unjudged, not_evaluated
from auditor.audit.midsession import mid_session
from auditor.audit.stamp import stamp_all
from auditor.checks import CHECKS
from auditor.checks.context import CheckContext
from auditor.checks.registry import Hits
from auditor.findings import SortedFindings, merge_sorted, paused_gc, sort_findings
from auditor.game import replay as replay_module
from auditor.game.state import ReplayState
from auditor.logs.load import LoadedLogs
from auditor.logs.tables import table_runs
from auditor.rules.ruleset import Ruleset


@dataclass
class AuditResult:
    ruleset: Ruleset
    logs: LoadedLogs
    findings: pd.DataFrame
    #: The tables audited, when the engine knows them without the events at
    #: hand (the dask engine's workers read the events).
    table_ids: list[str] | None = None
    #: What the audit dealt (`auditor.audit.exposure.Exposure`): the valid
    #: rolls per session and staff duty; None where no engine collected it.
    exposure: Any = None

    def __post_init__(self):
        """Which rules could not be evaluated in which file (`coverage`);
        their findings at that file's rows are dropped (whatever engine made
        the findings, this is where every one of them ends)."""
        rulesets = getattr(self, "rulesets", None) or [self.ruleset]
        self.findings, self.not_evaluated, self.mid_session = judged(
            rulesets, self.logs.inputs, self.findings)

    def with_findings(self, findings: pd.DataFrame) -> AuditResult:
        """This result with `findings`, its own findings annotated (already
        judged), in their place: a copy not judged again (`judged` passes
        over every input file, 0.3 s of 10,000 files, for the same answer)."""
        out = copy.copy(self)
        out.findings = findings
        return out

    @property
    def tables(self) -> list[str]:
        if self.table_ids is not None:
            return list(self.table_ids)
        # (every table held starts a run of rows: no pass over the rows' text)
        return sorted(set(table_runs(self.logs.events)[2]))


class AuditedTables(NamedTuple):
    """What `audit_tables` returns for the tables it was given."""

    #: the stamped findings of every rule, before `auditor.findings.finalize`
    #: orders them and gives them their ids (an engine gathers these from
    #: each group of tables and finalizes them together)
    parts: list[pd.DataFrame]
    #: what the report's collector took of the events (None without one)
    taken: Any
    #: with `ordered`, the findings already ordered and named
    #: (`auditor.findings.sort_findings`), to be merged with other tables'
    #: by `merge_sorted`; else None
    ordered: SortedFindings | None = None


def judged(rulesets: list[Ruleset], inputs, findings: pd.DataFrame
           ) -> tuple[pd.DataFrame, list[dict], list[dict]]:
    """`findings` less those no report keeps: of a rule not evaluated in its
    file (`coverage`), or resting on state a mid-session start left unknown
    (`midsession`); with the rules not evaluated and the tables starting or
    ending mid-session. Each table's findings depend on its own files'
    `inputs` alone, so a batch of whole tables gets what the whole audit
    gets of them."""
    unjudged = not_evaluated(rulesets, inputs)
    findings = drop_unjudged(findings, unjudged)
    # tables whose log here starts or ends mid-session (auditor.audit.midsession)
    findings, unknown, tables = mid_session(rulesets, inputs, findings)
    return findings, unjudged + unknown, tables


def audit_tables(logs: LoadedLogs, ruleset: Ruleset, collector: Collector | None = None,
                 timings: dict[str, float] | None = None,
                 on_stage: Callable[[str], None] | None = None,
                 ordered: bool = False) -> AuditedTables:
    """The audit of loaded `logs` (whole tables) in this process: every
    table replayed, every rule's check run, the hits stamped. The one entry
    point of the audit: every engine (`auditor.run`) calls it on the tables
    it holds and merges the parts with `auditor.findings.finalize`.

    `collector` (`auditor.audit.collect`), when given, takes what a report
    needs of the events, given their findings and the replay's state, before
    the state goes (`taken`; without one the state goes at once).
    `timings`, when given, receives the seconds spent per stage (`replay`,
    `checks`), added to what it already holds. `on_stage(name)`, when given,
    is called as each stage ends ("replay", then "checks"): what a live
    progress display follows. `ordered`: the findings also ordered and
    named here (`ordered`), for an engine that merges whole tables'
    findings without finalizing them again (the main process of --jobs
    and dask: decision 107)."""
    # The cyclic collector stays off from the replay to the state's end:
    # the state holds hundreds of thousands of lists (the replay's values by
    # row), and a collection between the stages traversed them all (0.4 s
    # at 10M events, for garbage made of none of them).
    with paused_gc():
        parts, state = _replayed_parts(logs, ruleset, timings, on_stage)
        # (a collector that reads no findings, `needs_findings` False, is
        # spared their ordering while the state is held: the dice tally)
        needs = collector is not None and getattr(collector, "needs_findings", True)
        with stage(timings, "checks"):
            sorted_parts = sort_findings(parts) if ordered or needs else None
        # (the findings the reports will keep: a report that lists the first
        # of each table and code must have taken those)
        taken = None if collector is None else collector.take(
            logs.events, judged([ruleset], logs.inputs, merge_sorted([sorted_parts]))[0]
            if needs else pd.DataFrame(), state)
        del state
    return AuditedTables(parts, taken, sorted_parts if ordered else None)


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


def add_work(timings: dict[str, float] | None, workers: list[dict[str, float]]) -> None:
    """Stage times of work done side by side: the sum over the workers (the
    work done; the elapsed time of the whole is `timings["parallel"]`)."""
    if timings is None:
        return
    for t in workers:
        for name, seconds in t.items():
            timings[name] = timings.get(name, 0.0) + seconds
