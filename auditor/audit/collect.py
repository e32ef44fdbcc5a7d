"""What an engine keeps of the events for a report written after they are gone.

An engine that audits a batch of files (or, with dask, a table) at a time
drops its events once they are checked. A report that needs more of them
than the findings hold (the HTML report shows the rows around a finding and
each table's timeline, the game as the replay derived it at a finding) hands
the engine a collector: `take(events, findings, state)` runs where the events
are, once per batch with that batch's findings in finding order and its
replay state (`auditor.game.state.ReplayState`, rows as the events'), and
`join(taken)` makes one result of every batch's on the
client, which the engine hands on as the logs' `digest`. What is kept is the
report's business; the engines only carry it. A collector must pickle: it
travels to worker processes and dask workers."""

from __future__ import annotations

from typing import Any, Protocol

import pandas as pd

from auditor.game.state import ReplayState


class Collector(Protocol):
    def take(self, events: pd.DataFrame, findings: pd.DataFrame, state: ReplayState) -> Any:
        """What to keep of one batch's `events`, given its findings and the
        replay's `state` of those events."""

    def join(self, taken: list[Any]) -> Any:
        """The batches' takings (of different tables) as one."""


def spilled(collector: Any, taken: Any, folder: str) -> Any:
    """`taken` with what `collector` lets wait on disk until a report asks
    for it written to files in `folder` (its optional `spill(taken,
    folder)`), for a batch's result about to cross to another process; as
    it is for a collector without one."""
    spill = getattr(collector, "spill", None)
    return spill(taken, folder) if spill is not None and taken is not None else taken


class Taken(dict):
    """What several collectors took (`Collectors`), by name."""


def taken_by(digest: Any, name: str, alone: bool = False) -> Any:
    """What the collector named `name` took, from a logs' `digest`: its
    part of a `Taken`, or (`alone`: the digest of that collector given on
    its own) the digest itself; None when it took nothing."""
    if isinstance(digest, Taken):
        return digest.get(name)
    return digest if alone else None


class Collectors:
    """Several reports' collectors as one: each takes and joins its own, and
    the digest is a `Taken` holding each one's under its name."""

    def __init__(self, **named: Collector | None):
        self.named = tuple((k, c) for k, c in named.items() if c is not None)
        #: whether any of them reads the findings (`audit_tables` orders them
        #: only then)
        self.needs_findings = any(getattr(c, "needs_findings", True) for _, c in self.named)

    def take(self, events: pd.DataFrame, findings: pd.DataFrame, state: ReplayState) -> Taken:
        return Taken({k: c.take(events, findings, state) for k, c in self.named})

    def join(self, taken: list[Any]) -> Taken:
        return Taken({k: c.join([t[k] for t in taken if t is not None])
                      for k, c in self.named})

    def spill(self, taken: Taken, folder: str) -> Taken:
        return Taken({k: spilled(c, taken[k], folder) for k, c in self.named})
