"""Progress of a long run on standard error, on one line rewritten in place:
the stage (scanning, reading, auditing, writing), files read, tables audited,
events, events per second and, once auditing has begun, about how long is
left.

It prints only when standard error is a terminal and the run is not
`--quiet`, so redirected output, CI logs and tests never see it. The engines
feed it as they go (`auditor.run.run_audit(..., progress=)`): a file as it
is read, events as they are replayed, tables as their checks end. It only
counts and prints: it never changes what is audited or reported.

    reading: 3/20 file(s), 1,447,857 event(s), 301,220 events/s
    auditing: 20/20 file(s), 13/40 table(s), 6,281,003 event(s), 171,544 events/s, about 41 s left
    sorting out: 40/365 file(s), 3,120,418 event(s), 260,034 events/s, about 1 min 05 s left to sort out

While reading, "event(s)" are rows read and the rate is over the time since
the start; from the first audit stage on, they are events replayed and the
rate is over the time since auditing began. The time left is that pace
carried on over the events still to audit (their total from the files'
metadata or scan, or once loaded; else over the tables still to check): it
counts every worker's events, whichever engine. Files sorted out by table
before their tables are audited (a casino's nightly exports, a file in time
order: `auditor.run.by_table`) are "sorting out", their time left that of
the sorting alone (the rows still to read, at its pace), as no event has
been audited to time the rest by.
"""

from __future__ import annotations

import sys
import time

from auditor.run.progress import BEFORE_AUDIT, SORTING, NoProgress


def duration(seconds: float) -> str:
    """`seconds` as the line shows a time left: "40 s", "3 min 05 s", "2 h 07 min"."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s // 60 % 60:02d} min"


class Progress(NoProgress):
    """The counts an engine reports (`auditor.run.progress.NoProgress`), shown
    on one line of `stream` rewritten at most every `interval` seconds."""

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
        self.interval = interval
        super().__init__(clock)

    def _reset(self) -> None:
        super()._reset()
        self._shown = float("-inf")
        self._width = 0

    def _advanced(self) -> None:
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
        if self.label in BEFORE_AUDIT or self._audit_started is None and not self.audited:
            count, since = self.events, self._started
        else:
            count, since = self.audited, self._audit_started or self._started
        rate = count / max(now - since, 1e-9)
        parts.append(f"{count:,} event(s)")
        parts.append(f"{rate:,.0f} events/s")
        left = self.left() if self.label not in (*BEFORE_AUDIT, "writing") \
            or self.label == SORTING else None
        if left is not None and left >= 0.5:
            parts.append(f"about {duration(left)} left"
                         + (" to sort out" if self.label == SORTING else ""))
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
