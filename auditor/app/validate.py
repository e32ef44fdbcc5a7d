"""The `validate` use case: logs judged against the event-log format only
(the `log.*` checks that need no replay), under the format's own rules,
a batch of linked files at a time (the files holding a table together, so
its seq is judged whole) as `check` reads them: memory follows the largest
batch, not the input."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from auditor.audit.stamp import stamp_hits
from auditor.checks import CHECKS
from auditor.checks.context import CheckContext
from auditor.errors import LogFileError, UnreadableLogsError
from auditor.findings import finalize
from auditor.logs.discover import LeftOut, discover_logs, leaving_out
from auditor.logs.load import LoadedLogs, load_logs
from auditor.logs.raw import (
    DEFAULT_INFLATE_LIMITS,
    DEFAULT_READ,
    InflateLimits,
    ReadOptions,
    inflate_limits,
)
from auditor.logs.screen import unreadable_logs
from auditor.rules.ruleset import Rule
from auditor.run import by_table, stream

#: The format's own ruleset id, stamped on what validate finds.
FORMAT = "event-log-v1"
#: The checks of the format that need no replay.
FORMAT_CHECKS = ("row_malformed", "sequence_gap", "sequence_order")


@dataclass
class Validation:
    #: the files read, their rows and quarantine (not their events: each
    #: batch's go once it is judged)
    logs: LoadedLogs
    #: every problem, in file and line order
    problems: pd.DataFrame
    #: the files that cannot be read as logs at all: file -> reason
    unreadable: dict[str, str] = field(default_factory=dict)


def format_rule(check_name: str) -> Rule:
    """The format's rule for one of its checks: id and code the check's code,
    clause the format, severity major."""
    chk = CHECKS[check_name]
    return Rule(chk.code, chk.name, chk.code, FORMAT, "", "major", {})


def validate(paths: list[str | Path], read: ReadOptions = DEFAULT_READ,
             inflate: InflateLimits = DEFAULT_INFLATE_LIMITS,
             scratch: str | None = None) -> Validation:
    """The format problems of the logs under `paths`, read as `read` says
    (a .gz one within `inflate`), the working files in `scratch`
    (`--scratch`; None: TMPDIR)."""
    unreadable: dict[str, str] = {}
    with inflate_limits(inflate):
        try:
            problems, logs = _validated(list(paths), read, scratch)
        except LogFileError as exc:
            # every file that cannot be a log is listed, and the others validated
            unreadable = unreadable_logs(list(paths), read)
            if not unreadable:
                raise
            with leaving_out(LeftOut(unreadable=unreadable)):
                try:
                    problems, logs = _validated(list(paths), read, scratch)
                except LogFileError:
                    if len(unreadable) == 1:  # the one file given: the error as it was
                        raise exc from None
                    raise UnreadableLogsError(unreadable, everything=True) from None
    return Validation(logs, problems, unreadable)


def _validated(paths: list[str | Path], read: ReadOptions, scratch: str | None = None
               ) -> tuple[pd.DataFrame, LoadedLogs]:
    """The format problems of every log under `paths`, in file and line
    order, and the logs read (their inputs in file order and quarantine),
    judged a batch of linked files at a time (`auditor.run.stream.plan`;
    a small input at once)."""
    files = discover_logs(paths)
    batches = stream.plan(files, read=read) or [list(range(len(files)))]
    found, quarantines, inputs = [], [], []
    for batch in batches:
        with by_table.in_process(files, batch, read, scratch) if getattr(batch, "ranges", ()) \
                else contextlib.nullcontext() as ranges:
            if ranges is not None:  # (a group too large for a batch: a range at a time)
                found += [_format_problems(logs) for logs in ranges.each(read)]
                quarantines.append(ranges.quarantine[batch[0]])
                inputs.append(ranges.inputs[batch[0]])
                continue
        logs = load_logs([files[i] for i in batch], options=read)
        found.append(_format_problems(logs))
        quarantines.append(logs.quarantine)
        inputs.append(logs.inputs)
        del logs  # (the batch's events go before the next is read)
    problems = pd.concat(found, ignore_index=True) \
        .sort_values(["source_file", "source_line"], kind="stable")
    inputs, quarantine = stream.in_file_order(files, inputs, quarantines)
    return problems, LoadedLogs(pd.DataFrame(), quarantine, inputs, read)


def _format_problems(logs: LoadedLogs) -> pd.DataFrame:
    """The format checks' findings on loaded `logs` (whole tables)."""
    ctx = CheckContext(logs.events, None, logs.quarantine)
    return finalize([stamp_hits(ctx, CHECKS[name].func(ctx, {}), format_rule(name), FORMAT)
                     for name in FORMAT_CHECKS])
