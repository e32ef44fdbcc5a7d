"""A group of linked files too large for one batch, audited a range of its
tables at a time: a casino's nightly exports, every file holding a night of
every table, link every night of the casino into one group, which a batch
would load whole (a year of them, a year in memory). Memory is then bounded
by the largest range of tables (`stream.STREAM_EVENTS` events, or one
table's whole log where a table alone is larger), not by the group. A
large file whose rows interleave its tables (a casino's export in time
order: `pieces.Piece.interleaved`) is such a group of one file, sorted out
a piece at a time (its pieces' provenance then joined: `pieces.one_file`),
so that a worker holds a piece or a range, not the file.

Two passes, each a list of work items any worker takes (`--jobs`, dask's
local cluster, or this process in turn):

1. `sort_out`: each file (or piece) of the group read once, as a batch
   (a piece) reads it (`load_file`), and its typed events sorted out by
   the plan's ranges of tables (`stream.Batch.ranges`, or a file's own:
   `split`) into one file a range in the audit's
   scratch folder (Arrow IPC; compressed where the disk is short of room:
   `compression`); its quarantined rows routed the same way (those naming
   no table to the first range, so that each `log.malformed` finding is
   made once) and its provenance kept whole.
2. `audit_range`: each range's parts of every file read back in file
   order, which is the order one load of the group gives each table's
   rows, then replayed and checked as one batch, with the provenance of
   every file of the group (what a rule could be judged in, where each
   table starts and ends: `auditor.audit.core.judged`).

A table lies in one range whatever its rows say (the ranges are
consecutive names: a table the scan did not name goes where its name
falls, `range_of`), so each is replayed whole, once, and the
findings, quarantine and reports are those of the group loaded at once,
byte for byte (`merge` then puts the group's provenance back in file
order). Where no scratch folder can be made (a full or read-only TMPDIR),
or the workers may not share one (a dask cluster of `--scheduler` without
a `--scratch` they all see), the group is one batch, as before
(docs/decisions.md, 124 and 125). `validate` and a ruleset family run the
two passes in this process (`sorted_out`, `range_logs`).
"""

from __future__ import annotations

import dataclasses
import shutil
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import groupby, pairwise
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from auditor.audit.core import add_work, stage
from auditor.errors import EngineError
from auditor.logs.frame import order_events
from auditor.logs.load import InputFile, LoadedLogs, load_file
from auditor.logs.raw import DEFAULT_READ, ReadOptions
from auditor.run import pieces, scratch, stream
from auditor.run.partition import quarantine_owners
from auditor.run.progress import SORTING, NoProgress

#: About the bytes an event takes in a part as it is (typed, Arrow IPC):
#: 110 on the generated nights, against 25 compressed by LZ4 and 14 in
#: Parquet.
PART_BYTES = 128
#: Parts are written as they are where the scratch folder's disk has this
#: many times the group's parts' size free, else compressed by LZ4 (about
#: 0.2 µs of CPU an event written and read back, a fifth of an audit's:
#: docs/performance.md 2026-12-07 (8)).
ROOM_TO_SPARE = 4


def compression(folder: str, events: int) -> str | None:
    """How a group of `events` events is written to `folder`: as it is
    (None) where there is room to spare, else "lz4" (where this pyarrow
    has it)."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = 0
    if free >= ROOM_TO_SPARE * PART_BYTES * events or not pa.Codec.is_available("lz4"):
        return None
    return "lz4"


@dataclass(frozen=True)
class SortOut:
    """One file of a group to sort out by the group's ranges of tables."""

    path: str
    file: int                               # its position among the job's files
    group: int                              # the group's first file's position
    #: the first table (as keyed) of each range after the first: the ranges
    #: are consecutive tables in name order, so a table's range is found by
    #: its name alone, whatever the scan saw (`range_of`)
    bounds: tuple[str, ...]
    folder: str                             # where the parts go
    rows: int = 0                           # the rows the scan counted (to hand out)
    compression: str | None = None          # how the parts are written (`compression`)
    #: the piece of the file to sort out, where a large file whose rows
    #: interleave its tables is sorted out a piece at a time (the group is
    #: then that file alone); None: the whole file
    piece: pieces.Piece | None = None


@dataclass
class SortedOut:
    """What sorting a file out leaves: its provenance, its quarantined rows
    (in the order read) and each one's range, the events it wrote to each
    range's part, the schema of its events."""

    file: int
    input: InputFile | None                 # None: a piece that holds no row
    quarantine: pd.DataFrame
    owners: np.ndarray
    parts: list[int]
    schema: pa.Schema | None
    timings: dict[str, float] = field(default_factory=dict)
    #: of a piece: its place among the file's pieces, the rows [a, b) it
    #: held, and the file as it stood (`pieces.file_as_it_stands`)
    piece: int | None = None
    rows: tuple[int, int] | None = None
    seen: tuple[int, ...] | None = None

    def counts(self) -> list[int]:
        """(files, events read, tables, events replayed) for the progress."""
        first = self.rows is None or self.rows[0] == 0
        return [int(first), self.input.rows_read if self.input is not None else 0, 0, 0]


@dataclass
class RangeAudit:
    """One range of a group's tables to audit from the parts of its files."""

    group: int
    part: int
    files: tuple[int, ...]                  # the group's files, in file order
    #: the parts with events of the range, in file order: (file, piece;
    #: None where the file was sorted out whole)
    written: tuple[tuple[int, int | None], ...]
    folder: str
    quarantine: pd.DataFrame
    inputs: tuple[InputFile, ...]           # every file of the group, in file order
    schema: pa.Schema
    rows: int = 0


def split(work: list, files: list[Path], folder: str | None,
          sites: dict[str, str] | None = None, read: ReadOptions = DEFAULT_READ) -> list:
    """`work` (`pieces.split`'s) with each batch that has ranges of tables
    given as one `SortOut` a file (a piece, for a file of the group larger
    than a piece may be: `_cut`), and each piece of a file whose rows
    interleave its tables (`pieces.Piece.interleaved`) as one `SortOut` a
    piece, where there is a `folder` to sort into (else as it is: the group
    one batch, the pieces audited as pieces). `sites`: each file's site by
    path (`--site-from-path`), which keys its tables; `read`: how the files
    are read (the column a text file names its table in)."""
    if folder is None:
        return work
    mixed = Counter(item.file for item in work
                    if isinstance(item, pieces.Piece) and item.interleaved)
    bounds = {item.file: _piece_bounds(item, mixed[item.file], str(files[item.file]), sites)
              for item in work if isinstance(item, pieces.Piece) and item.interleaved}
    # (every group's parts stay until the audit ends: room is judged for all)
    packed = compression(folder, sum(pieces.rows_of(item) for item in work
                                     if isinstance(item, stream.Batch) and item.ranges
                                     or isinstance(item, pieces.Piece) and bounds.get(item.file)))
    out: list = []
    for item in work:
        if isinstance(item, stream.Batch) and item.ranges:
            share = item.rows // max(1, len(item))
            cut = tuple(min(tables) for tables in item.ranges[1:])
            for i in item:
                found = _cut(files[i], i, read)
                out += [SortOut(str(files[i]), i, item[0], cut, folder,
                                pieces.rows_of(piece), packed, piece) for piece in found] \
                    or [SortOut(str(files[i]), i, item[0], cut, folder, share, packed)]
        elif isinstance(item, pieces.Piece) and bounds.get(item.file):
            out.append(SortOut(str(files[item.file]), item.file, item.file, bounds[item.file],
                               folder, pieces.rows_of(item), packed, item))
        else:
            out.append(item)
    return out


#: A file of a group of this many bytes or fewer is sorted out whole without
#: a look at its footer or first lines: well within a piece (Parquet takes
#: about 14 bytes an event, text 60 to 300; a piece is `PIECE_BUDGET`, 2M
#: events).
WHOLE_BYTES = 16 << 20


def _cut(path: Path, file: int, read: ReadOptions) -> list[pieces.Piece]:
    """The pieces a file of a group (the job's file `file`) is sorted out
    in: of at most `pieces.PIECE_BUDGET` rows, where it has more (a month
    in one file beside nightly ones), so that no worker holds it whole;
    none where it is sorted out whole (smaller, or not to be cut: a gzip
    stream, text in UTF-16)."""
    try:
        if path.stat().st_size <= WHOLE_BYTES:
            return []
    except OSError:  # (the loader says what is wrong with it)
        return []
    return pieces.pieces(path, file, 1, key=pieces.table_key(read)) or []


def _piece_bounds(piece: pieces.Piece, count: int, path: str,
                  sites: dict[str, str] | None) -> tuple[str, ...]:
    """The ranges of tables (their bounds, as `SortOut` takes them) a file
    whose rows interleave its tables, cut in `count` pieces, is sorted out
    by: the tables its first rows name, keyed by the file's site, cut as a
    group's are (`stream.table_ranges`), into as many ranges as pieces at
    least (each piece's worker then audits about a range), each within
    what a batch may hold; () where that is one range (the file is then
    tried a piece at a time, and read whole). A table its first rows do not
    name goes to the range its name falls in."""
    scanned = stream.Scanned(frozenset(piece.interleaved), piece.rows)
    ranges = stream.table_ranges([scanned.of_site((sites or {}).get(path))],
                                 min(stream.STREAM_EVENTS, -(-piece.rows // max(1, count))))
    return tuple(min(tables) for tables in ranges[1:])


def sorting_only(work: list) -> bool:
    """Whether every item of `work` sorts a file out (the first pass alone:
    `SORTING` to the progress line, with a time left of its own)."""
    return bool(work) and all(isinstance(item, SortOut) for item in work)


def wanted(work: list) -> bool:
    """Whether some batch of `work` is to be audited by ranges of tables
    (or some file, sorted out a piece at a time)."""
    return any(isinstance(item, stream.Batch) and item.ranges
               or isinstance(item, pieces.Piece) and item.interleaved for item in work)


def files_of(item) -> list[int]:
    """The positions of the files a work item reads (of this module, or of
    `pieces.split`)."""
    if isinstance(item, SortOut):
        return [item.file]
    if isinstance(item, RangeAudit):
        return list(item.files)
    return pieces.files_of(item)


def counts_of(result) -> list[int]:
    """(files, events read, tables, events replayed) a work item's result
    counts for in the progress, as it ends: nothing for one that asked for
    its file to be read whole."""
    if isinstance(result, (stream.BatchResult, SortedOut)):
        return result.counts()
    return [0, 0, 0, 0]


def take_back(progress, work: list, results: list, again: list[list[int]]) -> None:
    """Take back from `progress` what the pieces and sortings out of the
    files to be audited `again`, whole, counted (their results dropped), so
    that the audit again counts them once: the line never shows more files
    or events than there are."""
    files = {i for group in again for i in group}
    for item, result in zip(work, results):
        if isinstance(item, (pieces.Piece, SortOut)) and item.file in files:
            counted = counts_of(result)
            if any(counted):
                progress.advance(*(-c for c in counted))


def _part_path(folder: str, group: int, part: int, file: int, piece: int | None = None) -> str:
    of_piece = "" if piece is None else f"-p{piece}"
    return str(Path(folder) / f"g{group}-r{part}-f{file}{of_piece}.arrow")


# --- the first pass: each file sorted out ------------------------------------------------

def sort_out(item: SortOut, job, progress, label: str | None = None):
    """In a worker: `item`'s file (or piece of it) read as a batch reads it,
    its events written to its ranges' parts and its quarantined rows routed
    to them: its `SortedOut`. LogFileError for a file that cannot be a log
    (a piece's: the `FileFailure` one reading of the file gives, or
    `pieces.ReadWhole` where the file must be read whole). `label`: the
    file's name in the reports (by default the job's label of it, else its
    path)."""
    sites = job.sites or {}
    site = sites.get(item.path, sites.get(label))  # (a dask worker's: by label)
    label = label if label is not None else (job.labels or {}).get(item.path)
    name = label or item.path
    if item.piece is None:
        return _sorted(item, name, None, lambda: load_file(Path(item.path), label, job.read,
                                                           site), progress)
    piece = dataclasses.replace(item.piece, path=item.path)  # (a dask worker's path)
    done = pieces.in_piece(piece, job.read, label, site,
                           lambda rows, load: _sorted(item, name, rows, load, progress))
    if not isinstance(done, tuple):
        return done
    result, rows, seen = done
    return dataclasses.replace(result, piece=piece.part, rows=rows, seen=seen)


def _sorted(item: SortOut, name: str, rows: tuple[int, int] | None, load,
            progress) -> SortedOut:
    """`load()`'s events (a file's, `rows` None, or a piece's of rows
    `rows`) written to `item`'s ranges' parts (see `sort_out`)."""
    timings: dict[str, float] = {}
    ranges = len(item.bounds) + 1
    piece = None if item.piece is None else item.piece.part
    if rows is not None and rows[0] >= rows[1]:  # (a piece holding no row)
        return SortedOut(item.file, None, pd.DataFrame(), np.zeros(0, dtype=np.int64),
                         [0] * ranges, None, timings)
    progress.stage(SORTING)
    with stage(timings, "load"):
        events, quarantine, loaded = load()
    progress.advance(files=int(rows is None or rows[0] == 0), events=loaded.rows_read)
    where = _ranges_of(events.column("table_id"), item.bounds)
    parts = []
    for part, taken in enumerate(_rows_by_range(where, ranges)):
        parts.append(sum(len(r) for r in taken))
        if taken:
            _write(_taken(events, taken),
                   _part_path(item.folder, item.group, part, item.file, piece),
                   name, item.compression)
    owners = quarantine_owners(quarantine, lambda table: range_of(table, item.bounds))
    return SortedOut(item.file, loaded, quarantine, owners, parts, events.schema, timings)


def range_of(table: str, bounds: tuple[str, ...]) -> int:
    """The range of `table` (as keyed) among ranges starting at `bounds`
    (after the first)."""
    return bisect_right(bounds, table)


def _ranges_of(ids: pa.ChunkedArray, bounds: tuple[str, ...]) -> np.ndarray:
    """Each row's range, by its table id (a missing one: the first),
    looked up a distinct id at a time."""
    out = []
    for chunk in ids.chunks:
        if not pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary_encode()
        lookup = np.array([range_of(t, bounds) for t in chunk.dictionary.to_pylist()] + [0],
                          dtype=np.int64)
        codes = chunk.indices.fill_null(len(chunk.dictionary)).to_numpy(zero_copy_only=False)
        out.append(lookup[codes])
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


#: A file whose rows change range more often than this (rows in time order,
#: tables interleaved) has its ranges' rows gathered, not sliced.
_MOST_RUNS = 256


def _rows_by_range(where: np.ndarray, ranges: int) -> list[list]:
    """Each range's rows, in file order: runs of consecutive rows
    (`range`s) where the file's rows change range rarely (a file written a
    table after another: each range's rows then a slice of the file's, not
    a copy), else one array of positions."""
    starts = np.flatnonzero(np.diff(where)) + 1
    if len(starts) >= _MOST_RUNS:
        picked = [np.flatnonzero(where == part) for part in range(ranges)]
        return [[rows] if len(rows) else [] for rows in picked]
    bounds = [0, *starts.tolist(), len(where)]
    out: list[list] = [[] for _ in range(ranges)]
    for a, b in pairwise(bounds):
        if b > a:
            out[int(where[a])].append(range(a, b))
    return out


def _taken(events: pa.Table, rows: list) -> pa.Table:
    """The rows of `events` `_rows_by_range` gave one range. Rows gathered
    are filtered, not taken: a filter keeps each chunk (and its dictionary)
    as it is, where a take of rows from several chunks unifies their
    dictionaries at each range (1.7M rows of 8 tables in time order, four
    ranges: 0.25 against 0.66 s of CPU, and no copy of the whole piece as
    joining its chunks first would make)."""
    if isinstance(rows[0], range):
        parts = [events.slice(r.start, len(r)) for r in rows]
        return parts[0] if len(parts) == 1 else pa.concat_tables(parts)
    mask = np.zeros(events.num_rows, dtype=bool)
    mask[rows[0]] = True
    return events.filter(pa.array(mask))


def _write(table: pa.Table, path: str, name: str, packed: str | None = None) -> None:
    """A range's part of the file `name` written to `path` (`packed`: its
    compression); EngineError (the audit stops, no report written) where it
    cannot be: a full disk."""
    options = pa.ipc.IpcWriteOptions(compression=packed)
    try:
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, table.schema,
                                                              options=options) as writer:
            writer.write_table(table)
    except OSError as exc:
        raise EngineError(
            f"could not write {name}'s events sorted out by table to {Path(path).parent} "
            f"({exc.strerror or exc}): a group of files too large for one batch is audited "
            "from there; free space there, or point TMPDIR at a disk with room (about 25 "
            "bytes an event, or 110 where there is room to spare); no report was "
            "written") from None


def _read(path: str) -> pa.Table:
    with pa.memory_map(path) as source:
        return pa.ipc.open_stream(source).read_all()


# --- the second pass: each range audited -------------------------------------------------

@dataclass
class Ranges:
    """The second pass of the groups sorted out: a `RangeAudit` a range,
    and each group's provenance and quarantined rows, every file's whole
    and in file order, which its first range's result is given
    (`joined`), the others' none: the merge puts them in file order, each
    file's quarantined rows in the order one reading gives them."""

    audits: list[RangeAudit]
    inputs: dict[int, list[InputFile]]
    quarantine: dict[int, pd.DataFrame]
    #: the seconds each group's files took to read and sort out, by stage
    timings: dict[int, dict[str, float]] = field(default_factory=dict)
    #: the groups (their files' positions) to audit whole instead, as one
    #: batch: a file of them sorted out a piece at a time whose pieces
    #: cannot be joined (`_joined_pieces`)
    whole: list[list[int]] = field(default_factory=list)

    def each(self, read: ReadOptions = DEFAULT_READ) -> Iterator[LoadedLogs]:
        """Each range's logs in turn (`range_logs`), one held at a time."""
        for item in self.audits:
            yield range_logs(item, read)

    def joined(self, results: list) -> list:
        """The ranges' `results` (in `audits`' order), so given (the first
        range's also given its group's time sorting out)."""
        out = []
        for item, result in zip(self.audits, results, strict=True):
            if isinstance(result, stream.BatchResult):
                first = item.part == 0
                timings = dict(result.timings)
                add_work(timings, [self.timings[item.group]] if first else [])
                result = dataclasses.replace(
                    result, inputs=self.inputs[item.group] if first else [],
                    quarantine=self.quarantine[item.group] if first
                    else result.quarantine.iloc[0:0], timings=timings)
            out.append(result)
        return out


def range_audits(work: list, results: list) -> tuple[list, list, Ranges]:
    """The work and results of the first pass less its sorted-out files,
    and the second pass: the ranges to audit from them, each group's in
    order; a group with a file sorted out a piece at a time whose pieces
    cannot be joined (`_joined_pieces`) is to be audited whole instead
    (`Ranges.whole`)."""
    rest_work, rest_results = [], []
    groups: dict[int, list[tuple[SortOut, SortedOut]]] = {}
    for item, result in zip(work, results, strict=True):
        if isinstance(item, SortOut):
            groups.setdefault(item.group, []).append((item, result))
        else:
            rest_work.append(item)
            rest_results.append(result)
    ranges = Ranges([], {}, {})
    for group, members in sorted(groups.items()):
        members.sort(key=lambda pair: (pair[0].file, _piece_of(pair[0])))
        found = _group_members(members)
        if found is None:
            ranges.whole.append(list(dict.fromkeys(item.file for item, _ in members)))
        else:
            _add_group(ranges, group, *found)
    return rest_work, rest_results, ranges


def _group_members(members: list) -> tuple[list, tuple] | None:
    """A group's items and results to audit by range (`members`, in file
    and row order: a file sorted out whole, or its pieces that hold rows)
    and its files' provenance (a file in pieces: joined, `_joined_pieces`);
    None where a file's pieces cannot be joined (the group is then audited
    whole)."""
    kept, inputs = [], []
    for _, of_file in groupby(members, key=lambda pair: pair[0].file):
        of_file = list(of_file)
        if of_file[0][0].piece is None:
            kept += of_file
            inputs.append(of_file[0][1].input)
            continue
        joined = _joined_pieces(of_file)
        if joined is None:
            return None
        kept += joined[0]
        inputs.append(joined[1])
    return kept, tuple(inputs)


def _add_group(ranges: Ranges, group: int, members: list, inputs: tuple) -> None:
    """A group's ranges to audit (`members`: its files' and pieces' items
    and results, in file and row order; `inputs`: its files' provenance)."""
    ranges.inputs[group] = list(inputs)
    ranges.timings[group] = {}
    add_work(ranges.timings[group], [done.timings for _, done in members])
    ranges.quarantine[group] = pd.concat(
        [done.quarantine for _, done in members], ignore_index=True)
    files = tuple(dict.fromkeys(item.file for item, _ in members))
    for part in range(len(members[0][0].bounds) + 1):
        written = tuple((done.file, done.piece) for _, done in members if done.parts[part])
        quarantine = pd.concat([done.quarantine.loc[done.owners == part]
                                for _, done in members], ignore_index=True)
        rows = sum(done.parts[part] for _, done in members)
        ranges.audits.append(RangeAudit(group, part, files, written, members[0][0].folder,
                                        quarantine, inputs, members[0][1].schema, rows))


def _piece_of(item: SortOut) -> int:
    return -1 if item.piece is None else item.piece.part


def _joined_pieces(members: list) -> tuple[list, InputFile] | None:
    """The pieces of one file sorted out (`members`: (item, result), in row
    order) that hold rows, and the file's provenance joined from theirs; or
    None where the file must be read whole: a piece asked for it, the file
    was replaced between pieces, or they cannot be joined
    (`pieces.one_file`)."""
    results = [done for _, done in members]
    if not all(isinstance(done, SortedOut) for done in results) \
            or len({done.seen for done in results}) > 1:
        return None
    kept = [(item, done) for item, done in members if done.input is not None]
    if not kept:
        return None
    whole = pieces.one_file([done.input for _, done in kept],
                            [done.quarantine for _, done in kept])
    return None if whole is None else (kept, whole)


def range_logs(item: RangeAudit, read: ReadOptions = DEFAULT_READ) -> LoadedLogs:
    """One range of a group's tables as one load of the group gives them:
    its parts of every file read back in file order, its quarantined rows,
    the provenance of every file of the group."""
    tables = [_read(_part_path(item.folder, item.group, item.part, f, piece))
              for f, piece in item.written] or [item.schema.empty_table()]
    return LoadedLogs(order_events(tables), item.quarantine, list(item.inputs), read)


def audit_range(item: RangeAudit, job, progress) -> stream.BatchResult:
    """In a worker: one range of a group's tables audited from its parts
    (see module): a batch's result, less the group's provenance (which
    `Ranges.joined` gives the group's first range)."""
    result = stream.audit_read(lambda: range_logs(item, job.read), job, progress)
    return dataclasses.replace(result, inputs=[])


@dataclass(frozen=True)
class Reading:
    """How the files are read, where there is no audit job (`sorted_out`)."""

    read: ReadOptions = DEFAULT_READ
    sites: dict[str, str] | None = None
    labels: dict[str, str] | None = None


@contextmanager
def in_process(files: list[Path], batch: stream.Batch, read: ReadOptions = DEFAULT_READ,
               root: str | None = None, sites: dict[str, str] | None = None,
               labels: dict[str, str] | None = None) -> Iterator[Ranges | None]:
    """The two passes over one group (`batch`, with ranges) in this process,
    for a caller that judges each range's rows itself (`auditor validate`,
    a ruleset family): the group sorted out into a scratch folder of
    `root` (TMPDIR), its `Ranges` given (`Ranges.each` reads each range
    back), the folder removed after; None where no folder can be made, or
    where the group must be read whole (`sorted_out`)."""
    folder = scratch.make("tables", root)
    if folder is None:
        yield None
        return
    try:
        yield sorted_out(files, batch, folder, read, sites, labels)
    finally:
        scratch.remove(folder)


def sorted_out(files: list[Path], batch: stream.Batch, folder: str,
               read: ReadOptions = DEFAULT_READ, sites: dict[str, str] | None = None,
               labels: dict[str, str] | None = None) -> Ranges | None:
    """In this process: the first pass over one group's files (`batch`,
    with ranges), sorted out into `folder`, and the second pass to run
    (`auditor validate`, a ruleset family: each judges each range's rows
    itself); None where the group must be read whole (a file of it sorted
    out in pieces that cannot be joined). LogFileError for a file that
    cannot be a log."""
    items = split([batch], files, folder, sites, read)
    results = []
    for item in items:
        result = sort_out(item, Reading(read, sites, labels), NoProgress())
        if isinstance(result, stream.FileFailure):
            raise result.error()
        results.append(result)
    ranges = range_audits(items, results)[2]
    return None if ranges.whole else ranges
