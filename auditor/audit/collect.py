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
