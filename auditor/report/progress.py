"""Progress of a long run on standard error, on one line rewritten in place:
the stage (scanning, reading, auditing, writing), files read, tables audited,
events and events per second.

It prints only when standard error is a terminal and the run is not
`--quiet`, so redirected output, CI logs and tests never see it. The engines
feed it as they go (`auditor.engine.run_audit(..., progress=)`): a file as it
is read, events as they are replayed, tables as their checks end. It only
counts and prints: it never changes what is audited or reported.

    reading: 3/20 file(s), 1,447,857 event(s), 301,220 events/s
    auditing: 20/20 file(s), 13/40 table(s), 6,281,003 event(s), 171,544 events/s

While reading, "event(s)" are rows read and the rate is over the time since
the start; from the first audit stage on, they are events replayed and the
rate is over the time since auditing began.
"""

from __future__ import annotations

import sys
import time

READING = "reading"


class Progress:
    """`start()`, `stage(label)`, `expect(files=, tables=)` for the totals,
    `advance(files=, events=, tables=, audited=, scanned=)` as work is done,
    `finish()`. The counters are public: tests assert on them."""

    def __init__(self, stream=None, quiet: bool = False, enabled: bool | None = None,
                 clock=time.monotonic, interval: float = 0.2):
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            try:
                enabled = bool(isatty and isatty())
            except (OSError, ValueError):  # a closed stream
                enabled = False
        self.enabled = enabled and not quiet
        self.clock = clock
        self.interval = interval
        self.label = ""
        self.files_total: int | None = None
        self.tables_total: int | None = None
        self._reset()

    def _reset(self) -> None:
        self.files = 0        # files read
        self.events = 0       # rows read
        self.scanned = 0      # files scanned for their tables
        self.tables = 0       # tables audited (checks done)
        self.audited = 0      # events replayed
        self._started = self.clock()
        self._audit_started: float | None = None
        self._shown = float("-inf")
        self._width = 0

    def start(self, files: int | None = None, label: str = READING,
              tables: int | None = None) -> None:
        self.label, self.files_total, self.tables_total = label, files, tables
        self._reset()
        self._show()

    def stage(self, label: str) -> None:
        """Switch to another stage (shown at once)."""
        if label not in (READING, "scanning", "writing") and self._audit_started is None:
            self._audit_started = self.clock()
        if label != self.label:
            self.label = label
            self._show()

    def expect(self, files: int | None = None, tables: int | None = None) -> None:
        """Set the totals once they are known (None leaves one as it is)."""
        if files is not None:
            self.files_total = files
        if tables is not None:
            self.tables_total = tables

    def advance(self, files: int = 0, events: int = 0, tables: int = 0, audited: int = 0,
                scanned: int = 0) -> None:
        self.files += files
        self.events += events
        self.tables += tables
        self.audited += audited
        self.scanned += scanned
        if self.enabled and self.clock() - self._shown >= self.interval:
            self._show()

    def finish(self) -> None:
        """The last state, and the line ended (the next output starts afresh)."""
        if not self.enabled or self._width == 0 and self._shown == float("-inf"):
            return
        self._show()
        self._write("\n")
        self._width = 0
        self._shown = float("-inf")

    def line(self) -> str:
        now = self.clock()
        files = f"{self.files}/{self.files_total}" if self.files_total is not None \
            else f"{self.files}"
        if self.label == "scanning":
            return f"scanning: {self.scanned}/{self.files_total or 0} file(s) for their tables"
        parts = [f"{self.label}: {files} file(s)"]
        if self.tables_total is not None:
            parts.append(f"{self.tables}/{self.tables_total} table(s)")
        if self.label in (READING, "scanning") or \
                self._audit_started is None and not self.audited:
            count, since = self.events, self._started
        else:
            count, since = self.audited, self._audit_started or self._started
        rate = count / max(now - since, 1e-9)
        parts.append(f"{count:,} event(s)")
        parts.append(f"{rate:,.0f} events/s")
        return ", ".join(parts)

    def _show(self) -> None:
        if not self.enabled:
            return
        text = self.line()
        pad = max(self._width - len(text), 0)
        self._write("\r" + text + " " * pad)
        self._width = len(text)
        self._shown = self.clock()

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # stderr closed or gone: stop showing, audit on
            self.enabled = False


class NoProgress(Progress):
    """Counts like a Progress and never prints (the engines' default)."""

    def __init__(self):
        super().__init__(stream=None, enabled=False)
