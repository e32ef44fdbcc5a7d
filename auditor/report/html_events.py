"""What the HTML report takes from the events: each table's span, counts and
timeline series, and the log rows around the findings it lists with the game
before each of their rows (from the events' replay state:
`auditor.report.html_state`). Nothing else of the events reaches the page.

An audit by batches (`auditor.run.stream`) takes it from each batch as
the batch is audited (`digest`) and joins the batches' digests (`join`), so
the report never holds more events than a batch. The page is the same bytes
as from one load: a table is whole in one batch, a finding's rows are those
of its table, and the findings listed are chosen per table and code (every
critical one, and the first of the others), so a batch chooses among its own
findings what the whole load would (a batch's findings keep, among
themselves, the order they have among all).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from auditor.game.state import ReplayState
from auditor.logs.schema import COLUMN_NAMES
from auditor.logs.tables import table_runs
from auditor.report.html_charts import TIMELINE_BINS, time_bins
from auditor.report.html_state import GameAt, game_states

#: events shown before and after a finding's row, in the same table
CONTEXT_EVENTS = 3
#: int64 of NaT: a finding with no time (an unreadable row)
NO_TIME = int(np.iinfo(np.int64).min)
#: columns of the loaded events that are the auditor's, not the log's
INTERNAL_COLUMNS = ("source_file", "source_line", "source_order")
#: context columns always shown, even when empty in a window
ALWAYS = ("source_line", "seq", "ts", "event")

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: nanoseconds per unit of a stored time
_NS_PER = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
_NA, _NAT = pd.NA, pd.NaT
_DIGITS = re.compile(r"(\d+)")


@dataclass
class TableEvents:
    """One table's events as the page shows them: span, counts, and rolls
    and shooter changes (`dice_accepted`) per timeline slice."""

    id: str
    t0: int  # first and last event, UTC nanoseconds
    t1: int
    events: int
    rolls: int
    shooters: int
    roll_bins: np.ndarray
    shooter_bins: np.ndarray


@dataclass
class Window:
    """The log rows around one finding's row in its table, each cell as
    text: only the columns the page shows (those always shown and those with
    something to show), by column name; and the game as the replay derived
    it before that row (`auditor.report.html_state`), when taken with the
    replay's state."""

    table: str
    mark: int  # the finding's own row
    cells: dict[str, list[str]]
    game: GameAt | None = None


@dataclass
class EventDigest:
    """All the HTML report needs of the events. `windows` are keyed by the
    (source file, line) of a finding's row and cover the findings
    `listed_findings(findings, per_table_code)` chooses."""

    tables: list[TableEvents]
    windows: dict[tuple[str, int], Window]
    extras: list[str] = field(default_factory=list)  # the log's own extra columns
    per_table_code: int = 0
    #: the details of findings sure to be listed, already rendered where their
    #: table was audited (`auditor.report.html.PageCollector`): by finding id,
    #: the opening tag and the rest; such a finding's window is not kept
    details: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def span(self) -> tuple[int, int] | None:
        if not self.tables:
            return None
        return min(t.t0 for t in self.tables), max(t.t1 for t in self.tables)

    def columns(self) -> list[str]:
        """Columns of a window, in the order shown: the log's own extra
        columns last, by name (as a quarantined row's), so a window reads
        the same whichever files were audited beside its table."""
        return ["source_line", *COLUMN_NAMES[1:], *sorted(self.extras)]


def digest(events: pd.DataFrame, findings: pd.DataFrame, per_table_code: int,
           state: ReplayState) -> EventDigest:
    """What the page needs of `events`, with the rows around the findings
    `listed_findings(findings, per_table_code)` chooses (`findings` in finding order)
    and the game before each of their rows (`state`: the events' replay)."""
    runs = table_runs(events)
    return EventDigest(table_events(events, runs),
                       _windows(events, listed_findings(findings, per_table_code), runs, state),
                       _extras(events), per_table_code)


@dataclass(frozen=True)
class EventCollector:
    """The HTML report's collector (`auditor.audit.collect`): each batch's
    digest, with the rows around every critical finding and the first
    `per_table_code` others of each table and code, joined on the client."""

    per_table_code: int

    def take(self, events: pd.DataFrame, findings: pd.DataFrame,
             state: ReplayState) -> EventDigest:
        return digest(events, findings, self.per_table_code, state)

    def join(self, taken: list[EventDigest]) -> EventDigest:
        return join(taken)


def join(digests: list[EventDigest]) -> EventDigest:
    """The digests of batches holding different tables, as one."""
    extras: dict[str, None] = {}
    windows: dict[tuple[str, int], Window] = {}
    details: dict[str, tuple[str, str]] = {}
    for d in digests:
        extras.update(dict.fromkeys(d.extras))
        windows.update(d.windows)
        details.update(d.details)
    tables = sorted((t for d in digests for t in d.tables), key=lambda t: natural_key(t.id))
    return EventDigest(tables, windows, list(extras),
                       min((d.per_table_code for d in digests), default=0), details)


def natural_key(name) -> tuple:
    """A table id sorted as a person counts: T2 before T10 (digits by value,
    the rest as text; the text itself breaks ties, so the order is total)."""
    text_ = str(name)
    parts = _DIGITS.split(text_)
    return tuple((0, int(p), p) if i % 2 else (1, 0, p) for i, p in enumerate(parts)), text_


def group_keys(findings: pd.DataFrame) -> list[pd.Series]:
    """The (site, table, code) of each finding: the groups the page caps."""
    keys = [findings["table_id"].astype(object).fillna(""), findings["code"].astype(object)]
    if "site" in findings:
        keys.insert(0, findings["site"].astype(object).fillna(""))
    return keys


def is_critical(findings: pd.DataFrame) -> np.ndarray:
    return (findings["severity"].astype(object) == "critical").to_numpy(dtype=bool)


def listed_findings(findings: pd.DataFrame, per_table_code: int) -> pd.DataFrame:
    """The findings the page lists, in finding order: every critical one,
    and the first `per_table_code` others of each table and code, so every table's
    worst findings are there whatever the volume."""
    if not len(findings):
        return findings
    critical = is_critical(findings)
    others = findings[~critical]
    rank = np.full(len(findings), -1, dtype=np.int64)
    rank[~critical] = others.groupby(group_keys(others), sort=False).cumcount().to_numpy()
    return findings[critical | (rank < per_table_code)].reset_index(drop=True)


# --- times and cells as text ---------------------------------------------


def utc_ns(ts) -> np.ndarray:
    """UTC nanoseconds since the epoch; NaT becomes NO_TIME."""
    s = pd.Series(ts)
    if not (isinstance(s.dtype, pd.DatetimeTZDtype) or s.dtype.kind == "M"):
        s = pd.to_datetime(s, utc=True)
    return np.asarray(s.array.as_unit("ns").asi8)


@functools.lru_cache(maxsize=1024)
def _day_text(day: int) -> str:
    return (_EPOCH + timedelta(days=day)).strftime("%Y-%m-%d")


def fmt_time(ns: int) -> str:
    """UTC time as `YYYY-MM-DD HH:MM:SS[.ffffff]` ("" for no time). The date
    is formatted once per day, the clock by integers: thousands of cells."""
    if ns == NO_TIME:
        return ""
    ns = int(ns)
    day, us = divmod(ns // 1000, 86_400_000_000)
    seconds, micro = divmod(us, 1_000_000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    text = f"{_day_text(day)} {hours:02d}:{minutes:02d}:{seconds:02d}"
    if ns % 1_000_000_000:
        text += f".{micro:06d}".rstrip("0")
    return text


def text(value) -> str:
    """A cell as text: empty when not recorded, integers without `.0`."""
    kind = type(value)  # the plain types first: thousands of cells
    if kind is str:
        return value
    if kind is int:
        return str(value)
    if value is None or value is _NA or value is _NAT:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, (np.integer,)):
        return str(int(value))
    if isinstance(value, np.floating):
        return text(float(value))
    return str(value)


def _column_text(series: pd.Series, name: str) -> list[str]:
    if name == "ts" or pd.api.types.is_datetime64_any_dtype(series):
        return [fmt_time(v) for v in utc_ns(series)]
    return [text(v) for v in series.astype(object).tolist()]


# --- tables --------------------------------------------------------------


def _categories(series: pd.Series):
    """`series.astype("category").cat`, without that copy of every code when
    the column is categorical already (the loaded events' text columns)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return series.cat
    return series.astype("category").cat


def table_events(events: pd.DataFrame, runs=None) -> list[TableEvents]:
    """Every table's span, counts and timeline series, by numpy over all
    tables at once (nothing per event in Python). `runs`: the events'
    `table_runs`, when known."""
    starts, ends, names = runs if runs is not None else table_runs(events)
    if not names:
        return []
    at, t0, t1 = _table_times(events["ts"], starts)
    kinds = events["event"]
    rolls = _per_slice(np.flatnonzero((kinds == "roll").to_numpy()), at, starts, t0, t1)
    accepts = _per_slice(np.flatnonzero((kinds == "dice_accepted").to_numpy()), at, starts,
                         t0, t1)
    return sorted((TableEvents(name, int(t0[k]), int(t1[k]), int(ends[k] - starts[k]),
                               int(rolls[k].sum()), int(accepts[k].sum()), rolls[k], accepts[k])
                   for k, name in enumerate(names)), key=lambda t: natural_key(t.id))


def _table_times(ts: pd.Series, starts: np.ndarray):
    """Each table's first and last time (UTC ns) and a function giving the
    UTC ns of the events at given positions. Times stored in a coarser unit
    (microseconds, from Parquet) are read in it and only the times used are
    scaled, rather than converting millions; the numbers are those of
    `utc_ns` (which is used whenever a time is missing or out of its range)."""
    if pd.api.types.is_datetime64_any_dtype(ts.dtype) and \
            getattr(ts.array, "unit", None) in _NS_PER:
        native, scale = ts.array.asi8, _NS_PER[ts.array.unit]
        t0 = np.minimum.reduceat(native, starts)
        t1 = np.maximum.reduceat(native, starts)
        limit = np.iinfo(np.int64).max // scale
        if t0.min() > -limit and t1.max() < limit:  # no NaT (int64 min), none out of range
            return (lambda rows: native[rows] * scale), t0 * scale, t1 * scale
    ns = utc_ns(ts)
    return (lambda rows: ns[rows]), np.minimum.reduceat(ns, starts), \
        np.maximum.reduceat(ns, starts)


def _per_slice(rows: np.ndarray, at, starts: np.ndarray, t0: np.ndarray,
               t1: np.ndarray) -> np.ndarray:
    """Events at positions `rows` (ascending; `at(rows)` their times)
    counted per table (row) and timeline slice (column)."""
    per_table = np.diff(np.r_[np.searchsorted(rows, starts), len(rows)])
    k = np.repeat(np.arange(len(starts)), per_table)
    slot = k * TIMELINE_BINS + time_bins(at(rows), t0[k], t1[k] - t0[k], TIMELINE_BINS)
    return np.bincount(slot, minlength=len(starts) * TIMELINE_BINS) \
        .reshape(len(starts), TIMELINE_BINS)


# --- the rows around a finding -------------------------------------------


def _extras(events: pd.DataFrame) -> list[str]:
    return [c for c in events.columns if c not in COLUMN_NAMES and c not in INTERNAL_COLUMNS]


def event_positions(events: pd.DataFrame, listed: pd.DataFrame) -> np.ndarray:
    """The position in `events` of each listed finding's row (-1: none, as
    for a quarantined row), by source file and line."""
    if not len(events):
        return np.full(len(listed), -1, dtype=np.int64)
    files = _categories(events["source_file"])
    ev_lines = events["source_line"].to_numpy(dtype=np.int64, na_value=-1)
    # -1 for a file no event came from (every row of it quarantined)
    f_codes = files.categories.get_indexer(listed["source_file"].astype(object)) \
        .astype(np.int64)
    f_lines = listed["source_line"].to_numpy(dtype=np.int64, na_value=-1)
    # Only the rows holding a listed line are looked at (a few hundred
    # findings against millions of events), found by a table of the lines
    # listed (a line past it reads its last entry: False; -1, no line, reads
    # the first, line 0, and is dropped after); the first row of a key wins.
    top = max(int(f_lines.max()), 0) + 1
    listed_line = np.zeros(top + 1, dtype=bool)
    listed_line[f_lines[f_lines >= 0]] = True
    positions = np.flatnonzero(listed_line.take(ev_lines, mode="clip"))
    positions = positions[ev_lines[positions] >= 0]
    if not len(positions):  # every listed finding is of a quarantined row
        return np.full(len(listed), -1, dtype=np.int64)
    ev_keys = (files.codes.to_numpy()[positions].astype(np.int64) << 32) | \
        (ev_lines[positions] & 0xFFFFFFFF)
    wanted = (f_codes << 32) | (f_lines & 0xFFFFFFFF)
    index = pd.Index(ev_keys)
    first = ~index.duplicated()
    index, positions = pd.Index(ev_keys[first]), positions[first]
    found = index.get_indexer(wanted)
    ok = (found >= 0) & (f_codes >= 0) & (f_lines >= 0)
    return np.where(ok, positions[np.maximum(found, 0)], -1).astype(np.int64)


def _windows(events: pd.DataFrame, listed: pd.DataFrame, runs,
             state: ReplayState) -> dict[tuple[str, int], Window]:
    """The CONTEXT_EVENTS events before and after each listed finding's row
    in its table, in recorded (seq) order, every row shown formatted once,
    and the game before the row."""
    if not len(listed) or not len(events):
        return {}
    positions = event_positions(events, listed)
    starts, ends, names = runs
    bounds: dict[int, tuple[int, int, int]] = {}
    for pos in positions.tolist():
        if pos >= 0 and pos not in bounds:
            k = int(np.searchsorted(starts, pos, side="right") - 1)
            bounds[pos] = (max(int(starts[k]), pos - CONTEXT_EVENTS),
                           min(int(ends[k]), pos + CONTEXT_EVENTS + 1), k)
    if not bounds:
        return {}
    rows = np.array(sorted({r for lo, hi, _ in bounds.values() for r in range(lo, hi)}),
                    dtype=np.int64)
    sub = events.iloc[rows]
    columns = {c: dict(zip(rows.tolist(), _column_text(sub[c], c)))
               for c in ["source_line", *COLUMN_NAMES[1:], *_extras(events)]}
    files = listed["source_file"].astype(object).tolist()
    lines = listed["source_line"].astype(object).tolist()
    seats = pd.to_numeric(listed["seat"], errors="coerce").fillna(0).to_numpy(dtype=np.int64)
    games = game_states(events, state, positions, seats, runs)
    out: dict[tuple[str, int], Window] = {}
    for i, pos in enumerate(positions.tolist()):
        if pos < 0:
            continue
        lo, hi, k = bounds[pos]
        cells = {}
        for c, by_row in columns.items():
            values = [by_row[r] for r in range(lo, hi)]
            if c in ALWAYS or any(values):
                cells[c] = values
        out[(str(files[i]), int(lines[i]))] = Window(names[k], pos - lo, cells, games[i])
    return out


def windows_of(events: EventDigest, findings: pd.DataFrame) -> list[Window | None]:
    """`window_of` each finding of `findings`, in order."""
    return [window_of(events, f, line) for f, line in
            zip(findings["source_file"].astype(object), findings["source_line"].astype(object))]


def window_of(events: EventDigest, source_file, source_line) -> Window | None:
    """The window of a finding's row (None: no event holds it)."""
    if source_file is None or source_file is pd.NA or isinstance(source_file, float):
        return None  # (a float file name is NaN: not recorded)
    try:
        return events.windows.get((str(source_file), int(source_line)))
    except (TypeError, ValueError):  # no line recorded
        return None
