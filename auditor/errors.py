"""The errors a user is meant to see, in one place.

Each is an `AuditorError`: a failure the program expects (a file that cannot
be a log, a ruleset that cannot be used, an output that cannot be written)
and says in one line. The `auditor` command prints it as `error: ...` and
exits with its `exit_code`; anything else is an internal error. Kept below
every other module so that any layer can raise them and the CLI alone
decides how they end.
"""

from __future__ import annotations

import os
import re
from pathlib import Path


class AuditorError(Exception):
    """An expected failure: its message is the line the user reads."""

    #: 2: the audit could not run (0 and 1 are verdicts, never errors).
    exit_code = 2


def shown_path(path) -> str:
    """A file's path as text every message and report can hold: as it is
    when it is text, else with each byte of its name that is not UTF-8 (a
    name written in another encoding, which the system hands over as a lone
    surrogate) as `\\xNN`, and any other lone surrogate as `\\uXXXX`."""
    text = str(path)
    if is_text(text):
        return text
    try:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # (a surrogate no byte was decoded to)
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def unshown_path(text: str) -> str:
    """The path `shown_path` showed as `text`, each `\\xNN` taken for the
    byte it stands for (what `auditor verify` looks for when no file is
    named `text` as it is)."""
    if "\\x" not in text:
        return text
    raw = re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]),
                 text.encode("utf-8", "surrogateescape"))
    return os.fsdecode(raw)


def is_text(value: str) -> bool:
    """Whether UTF-8 can write `value` (it holds no lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class LogFileError(AuditorError):
    """A file that cannot be read as a log at all."""

    def __init__(self, path: Path | str, problem: str, line: int | None = None):
        self.path = shown_path(path)  # (a name that is not UTF-8 still said, escaped)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {problem}")


def ran_out_of_memory(path: Path | str) -> LogFileError:
    """A file that could not be read for want of memory: said as such, since
    a readable file is not unreadable evidence."""
    return LogFileError(path, "ran out of memory while reading it (the file may be "
                              "sound: give the audit more memory, or split the file)")


class ControlSignal(Exception):
    """Control flow inside one layer (a reader's fallback, a batch to be cut
    again): always caught where it is raised, never shown to a user."""


class RulesetError(AuditorError):
    """A ruleset that cannot be used. The message names where."""

    def __init__(self, path: str, message: str, rule: str | None = None,
                 key: str | None = None):
        where = path
        if rule:
            where += f": rule {rule!r}"
        if key:
            where += f": key {key!r}"
        super().__init__(f"{where}: {message}")
        self.path, self.rule, self.key = path, rule, key


class VersionError(RulesetError):
    """No version of a ruleset family is in force for some session."""


class ReadOptionError(AuditorError):
    """An option for reading logs (`--encoding`, `--assume-offset`) that
    cannot be used."""


class OutputError(AuditorError):
    """The output could not be written."""


class EngineError(AuditorError):
    """The engine cannot run (dask missing, the scheduler unreachable)."""


class BaselineError(AuditorError):
    """A baseline or waiver file that cannot be used. The message names the
    file and, for a waiver, its number and key."""


class ReportError(AuditorError):
    """There is no report to verify."""


class ConfigError(AuditorError):
    """A project configuration (`auditor.toml`, `[tool.auditor]` in
    pyproject.toml) that cannot be used: unreadable, not TOML, an unknown
    key or a value of the wrong kind."""


class UnreadableLogsError(AuditorError):
    """Files that cannot be read as logs, every one found in one run (not
    only the first), each with its reason: `unreadable` maps file -> reason."""

    #: Files the one line names at most (20,000 files out of memory made
    #: a line of 2.5 MB); the rest are counted.
    LISTED = 20

    def __init__(self, unreadable: dict[str, str], everything: bool = False):
        self.unreadable = dict(unreadable)
        listed = "; ".join(f"{shown_path(path)}: {why}" for path, why in
                           list(self.unreadable.items())[:self.LISTED])
        if len(self.unreadable) > self.LISTED:
            listed += f"; and {len(self.unreadable) - self.LISTED:,} more"
        hint = ("no file could be read" if everything else
                "--keep-going audits the others and reports these as not audited")
        super().__init__(f"{len(self.unreadable)} file(s) cannot be read as logs "
                         f"({hint}): {listed}")
