"""What an engine tells of its progress as it goes: files read, events
replayed, tables checked. `NoProgress` counts and shows nothing (the engines'
default); the terminal's progress line (`auditor.cli.progress.Progress`) is
the same counts, shown. Progress never changes what is audited or reported."""

from __future__ import annotations

import time

READING = "reading"
#: The first pass over files sorted out by table (`auditor.run.by_table`):
#: reading, with a time left of its own (the rows still to read).
SORTING = "sorting out"
#: The stages before any event is audited: the audit's pace starts after them.
BEFORE_AUDIT = (READING, SORTING, "scanning")


class NoProgress:
    """`start()`, `stage(label)`, `expect(files=, tables=)` for the totals,
    `advance(files=, events=, tables=, audited=, scanned=)` as work is done,
    `finish()`. The counters are public: tests assert on them."""

    enabled = False

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.label = ""
        self.files_total: int | None = None
        self.tables_total: int | None = None
        self.events_total: int | None = None  # events to audit, about (None: not known)
        self._reset()

    def _reset(self) -> None:
        self.files = 0        # files read
        self.events = 0       # rows read
        self.scanned = 0      # files scanned for their tables
        self.tables = 0       # tables audited (checks done)
        self.audited = 0      # events replayed
        self._started = self.clock()
        self._audit_started: float | None = None
        self._sorting_started: float | None = None

    def start(self, files: int | None = None, label: str = READING,
              tables: int | None = None) -> None:
        self.label, self.files_total, self.tables_total = label, files, tables
        self.events_total = None
        self._reset()
        self._show()

    def stage(self, label: str) -> None:
        """Switch to another stage (shown at once)."""
        if label not in (*BEFORE_AUDIT, "writing") and self._audit_started is None:
            self._audit_started = self.clock()
        if label == SORTING and self._sorting_started is None:
            self._sorting_started = self.clock()
        if label != self.label:
            self.label = label
            self._show()

    def expect(self, files: int | None = None, tables: int | None = None,
               events: int | None = None) -> None:
        """Set the totals once they are known (None leaves one as it is);
        `events`: about how many events there are to audit."""
        if files is not None:
            self.files_total = files
        if tables is not None:
            self.tables_total = tables
        if events is not None:
            self.events_total = events

    def left(self) -> float | None:
        """About how many seconds the audit has left, from its pace since
        auditing began: by the events audited of `events_total` where that
        is known, else by the tables; None before anything is audited.
        While files are sorted out by table (`SORTING`, before any event is
        audited), how long the sorting has left: by the rows read of
        `events_total`, at its pace since it began."""
        if self.label == SORTING and self._audit_started is None:
            if self._sorting_started is None or not self.events_total or not self.events:
                return None
            done = min(self.events / self.events_total, 1.0)
            return (self.clock() - self._sorting_started) * (1 - done) / done
        if self._audit_started is None:
            return None
        elapsed = self.clock() - self._audit_started
        if self.events_total and self.audited:
            done = min(self.audited / self.events_total, 1.0)
        elif self.tables_total and self.tables:
            done = min(self.tables / self.tables_total, 1.0)
        else:
            return None
        return elapsed * (1 - done) / done

    def advance(self, files: int = 0, events: int = 0, tables: int = 0, audited: int = 0,
                scanned: int = 0) -> None:
        self.files += files
        self.events += events
        self.tables += tables
        self.audited += audited
        self.scanned += scanned
        self._advanced()

    def finish(self) -> None:
        """The end of the run's progress."""

    def _show(self) -> None:
        """Shown nowhere (a subclass shows the counts)."""

    def _advanced(self) -> None:
        """Shown nowhere (a subclass shows the counts)."""
