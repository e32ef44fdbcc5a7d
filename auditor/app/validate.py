"""The `validate` use case: logs judged against the event-log format only
(the `log.*` checks that need no replay), under the format's own rules."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from auditor.checks import CHECKS
from auditor.checks.context import CheckContext
from auditor.findings import finalize
from auditor.logs.load import LoadedLogs, load_logs
from auditor.logs.raw import (
    DEFAULT_INFLATE_LIMITS,
    DEFAULT_READ,
    InflateLimits,
    ReadOptions,
    inflate_limits,
)
from auditor.audit.stamp import stamp_hits
from auditor.rules.ruleset import Rule

#: The format's own ruleset id, stamped on what validate finds.
FORMAT = "event-log-v1"
#: The checks of the format that need no replay.
FORMAT_CHECKS = ("row_malformed", "sequence_gap", "sequence_order")


@dataclass
class Validation:
    logs: LoadedLogs
    #: every problem, in file and line order
    problems: pd.DataFrame


def format_rule(check_name: str) -> Rule:
    """The format's rule for one of its checks: id and code the check's code,
    clause the format, severity major."""
    chk = CHECKS[check_name]
    return Rule(chk.code, chk.name, chk.code, FORMAT, "", "major", {})


def validate(paths: list[str | Path], read: ReadOptions = DEFAULT_READ,
             inflate: InflateLimits = DEFAULT_INFLATE_LIMITS) -> Validation:
    """The format problems of the logs under `paths`, read as `read` says
    (a .gz one within `inflate`)."""
    with inflate_limits(inflate):
        logs = load_logs(list(paths), options=read)
    ctx = CheckContext(logs.events, None, logs.quarantine)
    parts = [stamp_hits(ctx, CHECKS[name].func(ctx, {}), format_rule(name), FORMAT)
             for name in FORMAT_CHECKS]
    problems = finalize(parts).sort_values(["source_file", "source_line"], kind="stable")
    return Validation(logs, problems)
