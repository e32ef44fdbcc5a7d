"""What a check is given: the replayed events, the state beside them and the
quarantined rows, with what many checks derive from them worked out once."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from auditor.checks.common import Shared


@dataclass
class CheckContext:
    """What a check sees: the events of every table (ordered by table, seq),
    the state the replay derived beside them, and the quarantined rows."""

    events: pd.DataFrame
    state: pd.DataFrame
    quarantine: pd.DataFrame

    @cached_property
    def shared(self) -> Shared:
        """What many checks derive from the events and state, worked out once
        per audit rather than once per rule."""
        return Shared.of(self.events, self.state)
