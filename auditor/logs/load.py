"""Read every input file and gather the events of all of them, grouped by
table and ordered by `seq` whatever the file order.

The result keeps the count that makes the audit trustworthy: for every file,
rows read = rows replayed + rows quarantined. Here: finding, reading and
typing each file, a slice at a time, and its provenance; the frame the files
are joined into is built by `auditor.logs.frame`, the memory held while
loading tuned by `auditor.logs.memory`, and the table bounds read from the
frame by `auditor.logs.tables`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from auditor.errors import LogFileError
from auditor.logs import schema
from auditor.logs.coerce import Placement, coerce, recorded_events
from auditor.logs.discover import discover_logs
from auditor.logs.frame import order_events
from auditor.logs.local_day import offsets_by_file, open_offsets
from auditor.logs.memory import release_memory, small_pages, use_lean_memory_pool
from auditor.logs.raw import DEFAULT_READ, PieceSpan, RawLog, RawRejected, ReadOptions
from auditor.logs.read import ENCODING_HINT, read_log
from auditor.logs.sessions import joined_marks, marks_by_file, table_marks
from auditor.logs.site import with_site


@dataclass(frozen=True)
class InputFile:
    """Provenance of one input: what a report must say about where it stood."""

    path: str
    sha256: str
    format: str
    rows_read: int
    rows_replayed: int
    rows_quarantined: int
    #: The file's columns as read, and the event types its rows name: what
    #: the audit could judge in it (`auditor.audit.coverage`).
    columns: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    #: How the file was read when not as the spec says (`ReadOptions`): the
    #: text encoding it was decoded from, the UTC offset its times without
    #: one were read as (only when some time had none).
    encoding: str | None = None
    assumed_offset: str | None = None
    #: what reading it assumed (a Parquet time without a zone read as UTC)
    notes: tuple[str, ...] = ()
    #: the site the file's path gave it (`--site-from-path`), so that
    #: `auditor verify` keys its tables as the audit did
    site: str | None = None
    #: Columns present but empty on every row, though the file records
    #: events the spec has them filled on (`schema.FILLED_ON`): judged as
    #: absent (`auditor.run.coverage`).
    never_filled: tuple[str, ...] = ()
    #: where each table's log in the file begins and ends, and its rows that
    #: establish the table's state (`auditor.logs.sessions`); not provenance
    marks: dict = field(default_factory=dict, compare=False, repr=False)
    #: (table_id as recorded, seq, minutes east of UTC) of each `table_open`:
    #: the offset its time was written in (`auditor.logs.local_day`), which
    #: dates the session's gaming day. Not in the provenance.
    open_offsets: tuple[tuple[str, int, int], ...] = ()
    #: The columns of `schema.FILLED_ON` empty on every row read, whatever
    #: the events: what `never_filled` is worked out from when a file is
    #: read in pieces (`joined_input`). Not in the provenance.
    empty_columns: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def as_dict(self) -> dict:
        """What the provenance says of the file: the counts, the spec's
        columns it lacks, how it was read and what reading it assumed, each
        only when there is any (so every other report's bytes stay as they
        were)."""
        out = {k: getattr(self, k) for k in
               ("path", "sha256", "format", "rows_read", "rows_replayed", "rows_quarantined")}
        absent = [c for c in schema.COLUMN_NAMES if c not in self.columns]
        if absent:
            out["columns_absent"] = absent
        for k in ("encoding", "assumed_offset", "site"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass
class LoadedLogs:
    events: pd.DataFrame
    quarantine: pd.DataFrame
    inputs: list[InputFile]
    #: How the files were read (`--encoding`, `--assume-offset`).
    read: ReadOptions = DEFAULT_READ

    @property
    def rows_read(self) -> int:
        return sum(f.rows_read for f in self.inputs)

    @property
    def rows_replayed(self) -> int:
        return sum(f.rows_replayed for f in self.inputs)

    @property
    def rows_quarantined(self) -> int:
        return sum(f.rows_quarantined for f in self.inputs)


def load_logs(paths: list[str | Path],
              on_file: Callable[[InputFile], object] | None = None,
              options: ReadOptions = DEFAULT_READ,
              sites: dict[str, str] | None = None,
              labels: dict[str, str] | None = None) -> LoadedLogs:
    """Discover, read and type every log under `paths` (LogFileError on a file
    that cannot be a log), as `options` say. `on_file`, when given, is called
    with each file's InputFile as soon as that file is typed (small files are
    typed a batch at a time: `_typed_together`): what a progress display
    needs. `sites`: each file's site (by `str(file)`,
    `auditor.logs.site.path_sites`), when known. `labels` maps a file path
    (as found) to the name it goes by in the reports (`load_file`): how
    `auditor verify` reads logs that have moved since the audit."""
    files = discover_logs(paths)
    use_lean_memory_pool()
    gathered = _Gathered(on_file)
    batch = _Batch()
    for path in files:
        site = (sites or {}).get(str(path))
        try:
            raw = _read(path, (labels or {}).get(str(path)), options)
        except LogFileError:
            batch.type_into(gathered, options)  # (the files before it are judged first)
            raise
        joinable = _joinable(raw)
        if not batch.takes(raw, site, joinable):
            batch.type_into(gathered, options)
        if joinable:
            batch.add(raw, site)
        else:
            events, quarantine, loaded = _typed(raw, options, site)
            gathered.add(events, quarantine, [loaded])
    batch.type_into(gathered, options)
    return gathered.logs(options)


class _Batch:
    """Small files read and held back to be typed together
    (`_typed_together`): of one site and one schema, up to JOIN_FILES files
    and TOGETHER_ROWS rows."""

    def __init__(self):
        self.raws: list[RawLog] = []
        self.site: str | None = None
        self.rows = 0

    def takes(self, raw: RawLog, site: str | None, joinable: bool) -> bool:
        """Whether `raw` (of `site`) can join the files held (true when none
        is held)."""
        return not self.raws or (
            joinable and site == self.site and len(self.raws) < JOIN_FILES
            and self.rows + raw.table.num_rows <= TOGETHER_ROWS
            and raw.table.schema.equals(self.raws[0].table.schema))

    def add(self, raw: RawLog, site: str | None) -> None:
        self.raws.append(raw)
        self.site = site
        self.rows += raw.table.num_rows

    def type_into(self, gathered: _Gathered, options: ReadOptions) -> None:
        """The files held typed (together where they can be) into
        `gathered`, and let go."""
        together = _typed_together(self.raws, options, self.site) \
            if len(self.raws) > 1 else None
        if together is not None:
            gathered.add(*together)
        else:
            for raw in self.raws:
                events, quarantine, loaded = _typed(raw, options, self.site)
                gathered.add(events, quarantine, [loaded])
        self.raws, self.rows = [], 0


class _Gathered:
    """The files typed so far, as `load_logs` joins them: small files'
    tables joined as they come (`_joined`), every quarantine and
    provenance in file order."""

    def __init__(self, on_file: Callable[[InputFile], object] | None):
        self.on_file = on_file
        self.tables: list[pa.Table] = []
        self.small: list[pa.Table] = []
        self.small_rows = 0
        self.quarantines: list[pd.DataFrame] = []
        self.inputs: list[InputFile] = []

    def add(self, events: pa.Table, quarantine: pd.DataFrame, inputs: list[InputFile]) -> None:
        """The events, quarantined rows and provenance of one file, or of a
        batch of small files typed together."""
        if events.num_rows < JOIN_ROWS:
            self.small.append(events)
            self.small_rows += events.num_rows
        else:
            self._join_small()
            self.tables.append(events)
        if len(self.small) == JOIN_FILES or self.small_rows >= JOIN_ROWS:
            self._join_small()
        self.quarantines.append(quarantine)
        for loaded in inputs:
            self.inputs.append(loaded)
            if self.on_file is not None:
                self.on_file(loaded)

    def _join_small(self) -> None:
        self.tables += _joined(self.small)  # (empties `small`)
        self.small_rows = 0

    def logs(self, options: ReadOptions) -> LoadedLogs:
        self._join_small()
        events = order_events(self.tables)  # empties `tables`: freed as the frame is built
        release_memory()
        quarantine = pd.concat(self.quarantines, ignore_index=True)
        return LoadedLogs(events, quarantine, self.inputs, options)


def logs_of(events: pa.Table, quarantine: pd.DataFrame, loaded: InputFile,
            options: ReadOptions = DEFAULT_READ) -> LoadedLogs:
    """The logs of one file (or piece of one) `load_file` read, as
    `load_logs` makes them of its files."""
    frame = order_events([events])
    release_memory()
    return LoadedLogs(frame, quarantine, [loaded], options)


#: Small files' tables are joined into one as they are typed, up to this
#: many tables (a file's, or a batch's typed together) or rows a join: a
#: table kept per file costs some 32 KB of Arrow's own objects (its
#: columns, buffers, dictionaries) however few rows it holds, so 20,000
#: files of 4 rows held 700 MB to type 80,000 events (issue 28). A file of
#: more rows is kept as read (joining it would copy it).
JOIN_FILES = 256
JOIN_ROWS = 1 << 16


def _joined(small: list[pa.Table]) -> list[pa.Table]:
    """The small files' tables (emptied) as one table, in file order: the
    rows and every dictionary value as the pieces had them (`order_events`
    gives the frame it gives the pieces)."""
    if len(small) < 2:
        joined = list(small)
    else:
        joined = [pa.concat_tables(small, promote_options="default").combine_chunks()]
    small.clear()
    return joined


def load_file(path: Path, label: str | None = None, options: ReadOptions = DEFAULT_READ,
              site: str | None = None, piece: PieceSpan | None = None
              ) -> tuple[pa.Table, pd.DataFrame, InputFile]:
    """Read and type one file as `options` say: its events (in file order),
    its quarantined rows and its provenance. `label` is the name the file
    goes by in the reports (default: `path` as given), for a file read
    through another path. A file whose every row is quarantined for one
    reason is one problem, not a finding per row: LogFileError. `site`: the
    file's site (its folder's), keying its tables by site
    (`auditor.logs.site`) as does a `site` column of its own. `piece`:
    only those rows of a plain Parquet or JSON Lines file (`PieceSpan`;
    `auditor.run.pieces`, which judges the whole file's rows as one
    problem: not done here)."""
    return _typed(_read(path, label, options, piece), options, site, piece)


@small_pages()
def _read(path: Path, label: str | None, options: ReadOptions,
          piece: PieceSpan | None = None) -> RawLog:
    """`read_log`, the file named `label` in the reports when given."""
    use_lean_memory_pool()
    raw = read_log(path, options, piece)
    release_memory()
    if label is not None:
        raw.path = label
    return raw


@small_pages()
def _typed(raw: RawLog, options: ReadOptions, site: str | None,
           piece: PieceSpan | None = None
           ) -> tuple[pa.Table, pd.DataFrame, InputFile]:
    """`load_file` of a file read."""
    # Typed a slice at a time: what a slice is checked with is dropped before
    # the next (its text columns come out dictionary-encoded).
    tables, quarantines, rows_read = [], [], 0
    recorded: set[str] = set()
    assumed = 0
    place = Placement(raw.table.num_rows, raw.lines)
    for start, part in _slices(raw, SLICE_ROWS):
        place.start = start
        coerced = coerce(part, place, options.assume_offset)
        tables.append(coerced.events)
        quarantines.append(coerced.quarantine)
        rows_read += coerced.rows_read
        recorded |= coerced.recorded
        assumed += coerced.assumed
        del coerced
        release_memory()
    events = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    quarantine = quarantines[0]
    if len(quarantines) > 1:  # in line order, as one coercion of the file gives
        quarantine = pd.concat([q for q in quarantines if len(q)] or quarantines[:1],
                               ignore_index=True)
        quarantine = quarantine.sort_values("source_line", kind="stable") \
            .reset_index(drop=True)
    if events.num_rows == 0 and piece is None:
        _one_problem(raw.path, quarantine, options)
    events, quarantine = with_site(events, quarantine, site)
    loaded = _input_file(raw, events, rows_read, len(quarantine), recorded,
                         options, assumed, site)
    return events, quarantine, loaded


def _input_file(raw: RawLog, events: pa.Table, rows_read: int, quarantined: int,
                recorded: set[str] | frozenset[str], options: ReadOptions, assumed: int,
                site: str | None, found: tuple[dict, tuple] | None = None) -> InputFile:
    """The provenance of a file read (`raw`) from its typed `events`;
    `found`: its tables' marks and its opening offsets, when worked out
    already (`_typed_together`)."""
    marks, offsets = found or (table_marks(events),
                               open_offsets(raw.table, options.assume_offset))
    empty = _empty_columns(events)
    return InputFile(raw.path, raw.sha256, raw.fmt, rows_read, events.num_rows, quarantined,
                     tuple(raw.table.column_names),
                     tuple(e for e in schema.EVENTS if e in recorded),
                     options.encoding if raw.fmt != "parquet" else None,
                     options.assume_offset if assumed else None, tuple(raw.notes), site,
                     _filled_nowhere(empty, recorded),
                     marks, offsets,
                     empty)


@small_pages()
def _typed_together(raws: list[RawLog], options: ReadOptions, site: str | None
                    ) -> tuple[pa.Table, pd.DataFrame, list[InputFile]] | None:
    """Small files of one site and one schema, every row read whole
    (`_joinable`), typed and checked as one table: a file of a table-night
    costs Arrow's and numpy's fixed costs of some ninety calls once a batch,
    not once a file. Their events (in file order), their quarantined rows
    and each file's provenance, as `_typed` gives them file by file: every
    check is a row's own, so a row is judged as in its file alone, and each
    row is given back its file and line (typed under its row number in the
    batch). None where some time was read at an assumed offset (the files
    are then typed one by one: which file assumed is each file's own)."""
    table = pa.concat_tables([r.table.replace_schema_metadata(None) for r in raws])
    number = np.arange(1, table.num_rows + 1, dtype=np.int64)  # (a row's number in the batch)
    joined = RawLog(raws[0].path, raws[0].sha256, raws[0].fmt, table, number, RawRejected())
    coerced = coerce(joined, Placement(table.num_rows, number), options.assume_offset)
    del joined
    if coerced.assumed:
        return None
    rows = [r.table.num_rows for r in raws]
    offsets = offsets_by_file(table, rows, options.assume_offset)
    del table
    ends = np.cumsum(rows)
    lines = np.concatenate([r.lines for r in raws])
    paths = np.array([r.path for r in raws], dtype=object)
    events, kept = _placed(coerced.events, ends, lines, paths)
    quarantine = coerced.quarantine
    at = quarantine["source_line"].to_numpy() - 1  # (each row's place in the batch)
    set_aside = np.searchsorted(ends, at, side="right")
    if len(quarantine):
        quarantine = quarantine.assign(
            source_file=pd.Series(paths[set_aside], index=quarantine.index, dtype=object),
            source_line=lines[at])
    bounds = np.searchsorted(kept, np.arange(len(raws) + 1))  # (each file's kept rows)
    set_aside_of = np.bincount(set_aside, minlength=len(raws)).tolist()
    named: list[set[str]] = [set() for _ in raws]  # (the events of each file's rows set aside)
    for k, event in zip(set_aside.tolist(), quarantine["event"].tolist()):
        if event is not None:
            named[k].add(event)
    for k, raw in enumerate(raws):
        if bounds[k + 1] == bounds[k]:  # (every row of this file set aside)
            _one_problem(raw.path, quarantine[set_aside == k], options)
    events, quarantine = with_site(events, quarantine, site)
    found = zip(marks_by_file(events, np.diff(bounds).tolist()), offsets)
    inputs = []
    for k, (raw, n, known) in enumerate(zip(raws, rows, found)):
        part = events.slice(bounds[k], bounds[k + 1] - bounds[k])
        inputs.append(_input_file(raw, part, n, set_aside_of[k],
                                  recorded_events(part) | named[k], options, 0, site, known))
    return events, quarantine, inputs


def _placed(events: pa.Table, ends: np.ndarray, lines: np.ndarray, paths: np.ndarray
            ) -> tuple[pa.Table, np.ndarray]:
    """Events typed under their row numbers in a batch of files (`ends`:
    where each file's rows end) given back their files and lines, and each
    kept row's file."""
    number = events.column("source_line").to_numpy() - 1
    kept = np.searchsorted(ends, number, side="right")
    files = pa.DictionaryArray.from_arrays(pa.array(kept.astype(np.int32)),
                                           pa.array(list(paths), pa.string()), safe=False)
    events = events.set_column(events.column_names.index("source_file"), "source_file", files)
    events = events.set_column(events.column_names.index("source_line"), "source_line",
                               pa.array(lines[number]))
    return events, kept


def _joinable(raw: RawLog) -> bool:
    """Whether a file read can be typed with others (`_typed_together`):
    small, and every row split into cells the reader could read."""
    return raw.table.num_rows < JOIN_ROWS and not raw.rejected.lines and not raw.cell_problems


def _empty_columns(events: pa.Table) -> tuple[str, ...]:
    """The columns of `schema.FILLED_ON` this file holds, empty on every row."""
    n = events.num_rows
    return tuple(c for c in schema.FILLED_ON
                 if c in events.column_names and events.column(c).null_count == n)


def _filled_nowhere(empty: tuple[str, ...] | set[str], recorded: set[str]) -> tuple[str, ...]:
    """The columns of `schema.FILLED_ON` among the `empty` ones that a file
    (or pieces of it) never fills, though it records an event they are
    filled on."""
    return tuple(c for c, on in schema.FILLED_ON.items() if c in empty and recorded & set(on))


def joined_input(pieces: list[InputFile]) -> InputFile:
    """One file's provenance from that of its pieces (rows [a, b) each, in
    row order: `auditor.run.pieces`), as reading it whole gives it: the
    first piece's hash (the only one hashed), the counts summed, the events
    recorded and the columns never filled worked out over every row, the
    tables' marks (`joined_marks`: a table may have rows in several pieces)
    and the openings joined."""
    first = pieces[0]
    events = set().union(*(p.events for p in pieces))
    empty = set(first.empty_columns).intersection(*(p.empty_columns for p in pieces))
    marks = joined_marks([p.marks for p in pieces])
    return replace(first, rows_read=sum(p.rows_read for p in pieces),
                   rows_replayed=sum(p.rows_replayed for p in pieces),
                   rows_quarantined=sum(p.rows_quarantined for p in pieces),
                   events=tuple(e for e in schema.EVENTS if e in events),
                   assumed_offset=next((p.assumed_offset for p in pieces
                                        if p.assumed_offset is not None), None),
                   never_filled=_filled_nowhere(empty, events),
                   marks=marks,
                   open_offsets=tuple(o for p in pieces for o in p.open_offsets),
                   empty_columns=tuple(c for c in first.empty_columns if c in empty))


#: What to say after the reason every row of a file was quarantined for.
_FILE_FAULT_HINTS = {
    "ts has no UTC offset": "; if the times are local, give their offset: "
                            "--assume-offset +HH:MM",
    "is not UTF-8 text": "; give the file's encoding: --encoding NAME",
}


#: Between two reasons of one quarantined row (a reason may hold "; " too).
_REASONS_SPLIT = re.compile(r"; (?!a cell may hold)")


def hints_encoding(quarantine: pd.DataFrame) -> bool:
    """Whether a quarantined row's reason names an encoding to try (one
    reading of a file names one, at its first text that is not UTF-8)."""
    return bool(len(quarantine)) and bool(
        quarantine["reason"].astype(str).str.contains(ENCODING_HINT, regex=False).any())


def _one_problem(path: str, quarantine: pd.DataFrame, options: ReadOptions) -> None:
    """LogFileError when every row of a file (two or more) was quarantined
    for one same reason (each row may have others too): the file, not its
    rows, is at fault, and thousands of `log.malformed` findings would hide
    it (and every rule would see nothing to judge)."""
    if len(quarantine) < 2:
        return
    reasons = quarantine["reason"].astype(str)
    common = None
    for text in reasons.unique().tolist():
        why = {w.split(ENCODING_HINT)[0] for w in _REASONS_SPLIT.split(text)}
        common = why if common is None else common & why
        if not common:
            return
    reason = min(common)
    hint = next((h for key, h in _FILE_FAULT_HINTS.items() if key in reason), "")
    raise LogFileError(path, f"every row ({len(quarantine):,}) was quarantined for one "
                             f"reason: {reason}{hint}")


#: Rows typed at a time (see `load_file`).
SLICE_ROWS = 1 << 20

#: Rows of small files typed together at most (`_typed_together`).
TOGETHER_ROWS = 1 << 18


def _slices(raw: RawLog, rows: int):
    """The file as read, cut into slices of about `rows` rows (views, not
    copies), each with its first row; the rows the parser rejected go with
    the last slice."""
    n = raw.table.num_rows
    if n <= rows:
        yield 0, raw
        return
    for a, b in _cuts(raw, rows):
        yield a, replace(raw, table=raw.table.slice(a, b - a), lines=raw.lines[a:b],
                      rejected=raw.rejected if b == n else RawRejected(),
                      cell_problems={r - a: why for r, why in raw.cell_problems.items()
                                     if a <= r < b})


def _cuts(raw: RawLog, rows: int) -> list[tuple[int, int]]:
    """Where to cut the file into slices: every `rows` rows; for Parquet, at
    row group ends (whole row groups up to `rows` rows, a larger one cut in
    `rows`), so each column of a slice is one piece as read and typing it
    copies nothing (a slice across two row groups joins its pieces)."""
    n = raw.table.num_rows
    lengths = [len(c) for c in raw.table.column(0).chunks] if raw.table.num_columns else []
    if raw.fmt != "parquet" or len(lengths) < 2 or any(
            [len(c) for c in col.chunks] != lengths for col in raw.table.columns[1:]):
        return [(a, min(a + rows, n)) for a in range(0, n, rows)]
    cuts, a, end = [], 0, 0
    for length in lengths:
        if end + length - a > rows and end > a:  # this group would overflow the slice
            cuts.append((a, end))
            a = end
        end += length
        while end - a > rows:  # a row group longer than a slice
            cuts.append((a, a + rows))
            a += rows
    if end > a:
        cuts.append((a, end))
    return cuts
