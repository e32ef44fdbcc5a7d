"""The check registry: a check is a jurisdiction-neutral primitive that a
ruleset's rule names, with the parameters it reads.

A check is a function `(ctx, params) -> Hits` over the replayed events of every
table at once. It says which rows break the rule and why; the engine, not the
check, stamps the rule id, clause and severity on each finding.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from auditor.checks.parameters import PARAMETERS
from auditor.findings import paused_gc
from auditor.logs.schema import COLUMN_NAMES, EVENTS


@dataclass
class Hits:
    """Rows (positions in the replayed events) that break a check, each with a
    message and, optionally, evidence (a JSON-able dict)."""

    rows: np.ndarray
    messages: list[str]
    evidence: list[dict] = field(default_factory=list)
    #: For findings about rows that are not replayed events (quarantined rows):
    #: a frame with the location columns instead of `rows`.
    located: pd.DataFrame | None = None

    def __post_init__(self):
        self.rows = np.asarray(self.rows, dtype=np.int64)
        count = len(self.located) if self.located is not None else len(self.rows)
        if isinstance(self.messages, str):
            self.messages = [self.messages] * count
        if not self.evidence:
            self.evidence = [{} for _ in range(count)]


def no_hits() -> Hits:
    return Hits(np.empty(0, dtype=np.int64), [], [])


@dataclass(frozen=True)
class Needs:
    """What a check cannot judge without, in a file: `columns` the file must
    have (an optional column: a column the spec requires for an event the
    file holds stops the run instead), and `events`, event types recorded
    together, of which the check judges the rows. A file that records some
    of `events` but never another (its *neighbours* recorded, it not: rolls
    but never a `total_called`) leaves the check nothing to judge there.
    A check whose breach is an event's absence does not list that event."""

    columns: tuple[str, ...] = ()
    events: tuple[str, ...] = ()

    def missing(self, columns, events, never_filled=()) -> list[str]:
        """Why a file with these columns and recorded event types leaves the
        check unable to judge (one reason per column or event), or []. A
        column present but `never_filled` is as good as absent."""
        why = [f"column `{c}` absent" if c not in columns else
               f"column `{c}` empty on every row" for c in self.columns
               if c not in columns or c in never_filled]
        recorded = [e for e in self.events if e in events]
        if recorded:
            why += [f"event `{e}` never recorded (the file records "
                    f"{', '.join(f'`{r}`' for r in recorded)})"
                    for e in self.events if e not in events]
        return why


@dataclass(frozen=True)
class Check:
    name: str
    code: str
    family: str
    params: tuple[str, ...]
    func: Callable
    needs: Needs = Needs()

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip()

    @property
    def description(self) -> str:
        """The docstring's first paragraph, on one line."""
        return " ".join(self.doc.split("\n\n")[0].split())


CHECKS: dict[str, Check] = {}


def check(name: str, code: str, params: tuple[str, ...] = (), needs: Needs = Needs()):
    """Register a check under `name`, emitting `code`, reading `params`,
    unable to judge a file without what it `needs`."""
    unknown = [p for p in params if p not in PARAMETERS]
    unknown += [c for c in needs.columns if c not in COLUMN_NAMES]
    unknown += [e for e in needs.events if e not in EVENTS]
    if unknown:
        raise ValueError(f"check {name}: unknown parameters, columns or events {unknown}")

    def register(func):
        if name in CHECKS:
            raise ValueError(f"check {name} registered twice")
        family = func.__module__.rsplit(".", 1)[-1]
        CHECKS[name] = Check(name, code, family, tuple(params), _gc_paused(func), needs)
        return func

    return register


def _gc_paused(func: Callable) -> Callable:
    """The check with the cyclic garbage collector paused (see
    `auditor.findings.paused_gc`), whoever calls it."""
    @functools.wraps(func)
    def run(ctx, params):
        with paused_gc():
            return func(ctx, params)
    return run
