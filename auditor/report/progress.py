"""Progress of a long run on standard error: files and events done, events
per second, on one line rewritten in place.

It prints only when standard error is a terminal and the run is not
`--quiet`, so redirected output, CI logs and tests never see it. Loading
feeds it per file; the engines will feed it as they go.
"""

from __future__ import annotations

import sys
import time


class Progress:
    """`start()`, `advance(files=, events=)` as work is done, `finish()`."""

    def __init__(self, stream=None, quiet: bool = False, enabled: bool | None = None,
                 clock=time.monotonic, interval: float = 0.2):
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled and not quiet
        self.clock = clock
        self.interval = interval
        self.label = ""
        self.files_total: int | None = None
        self.files = 0
        self.events = 0
        self._started = 0.0
        self._shown = float("-inf")
        self._width = 0

    def start(self, files: int | None = None, label: str = "reading") -> None:
        self.label, self.files_total = label, files
        self.files = self.events = 0
        self._started = self.clock()
        self._shown = float("-inf")
        self._show()

    def advance(self, files: int = 0, events: int = 0) -> None:
        self.files += files
        self.events += events
        if self.clock() - self._shown >= self.interval:
            self._show()

    def finish(self) -> None:
        if not self.enabled:
            return
        self._show()
        self.stream.write("\n")
        self.stream.flush()
        self._width = 0

    def line(self) -> str:
        elapsed = max(self.clock() - self._started, 1e-9)
        total = f"/{self.files_total}" if self.files_total is not None else ""
        rate = self.events / elapsed
        return (f"{self.label}: {self.files}{total} file(s), {self.events:,} event(s), "
                f"{rate:,.0f} events/s")

    def _show(self) -> None:
        if not self.enabled:
            return
        text = self.line()
        pad = max(self._width - len(text), 0)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._width = len(text)
        self._shown = self.clock()
