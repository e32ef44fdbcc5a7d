"""Auditing many files a batch at a time, so memory is bounded by the largest
group of files that share a table, not by the whole input.

A table must be replayed whole, so files that share a table must be loaded
together. Before anything is loaded, each file is *scanned* for the tables it
holds. A Parquet file is first planned from its footer (`survey`): a row
group whose `table_id` statistics have min == max holds that one table; a
file whose row groups' [min, max] span overlaps no other file's shares no
table, whatever it holds inside the span; the `table_id` column is read only
of the files whose spans overlap another's, or whose statistics are missing
or would read otherwise once trimmed and typed as the loader does. Other
files: a CSV's table_id column parsed by Arrow, the other cells skipped;
anything else read whole once more. Files that share a table form a
connected component; consecutive components are packed
into batches of at most `STREAM_EVENTS` events (a component larger than that
is a batch of its own, its tables cut into ranges of about that many events,
which the engines audit a range at a time: `auditor.run.by_table`). Each
batch is then loaded, replayed and checked like
a whole input, and its events dropped before the next, once a report's
collector has taken what it needs of them (`auditor.audit.collect`). Each
batch's findings are ordered and named where it was audited
(`auditor.findings.sort_findings`) and merged by `merge_sorted`, the
quarantined rows and the inputs put back in file order: the same findings,
quarantine, provenance and reports, byte for byte, as loading everything at
once.

The scan is only a plan. What each batch really holds is checked as it is
loaded; should two batches hold rows of one table (a table id the scan read
differently from the loader), the audit starts again, loading everything at
once. An input small enough to load at once (`STREAM_MIN_BYTES` on disk, or
a single batch) is loaded at once, as before.
"""

from __future__ import annotations

import io
import json
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from auditor.audit.collect import spilled
from auditor.audit.core import AuditResult, add_work, audit_tables, stage
from auditor.errors import ControlSignal, LogFileError
from auditor.findings import SortedFindings, merge_sorted
from auditor.logs import line_runs
from auditor.logs.columns import names_as_read
from auditor.logs.csv_format import is_utf8
from auditor.logs.discover import plain_format, plain_parquet
from auditor.logs.identity import TableIdentityError, check_events
from auditor.logs.load import InputFile, LoadedLogs, load_file, load_logs
from auditor.logs.memory import release_memory
from auditor.logs.raw import DEFAULT_READ, UTF8_BOM, ReadOptions
from auditor.logs.read import read_log
from auditor.logs.site import SITE_COLUMN, site_prefix
from auditor.run import scratch

#: Events a batch may hold (from the scan). A component of linked files
#: larger than this is one batch. About 0.45 KB of peak memory per event.
STREAM_EVENTS = 1_000_000
#: Inputs up to this many bytes on disk are loaded at once without a scan
#: (16 MB of Parquet is about 1M events; of CSV, about 150k).
STREAM_MIN_BYTES = 16 << 20


class TablesCrossBatches(ControlSignal):
    """Two batches hold rows of one table: the plan was wrong (see module)."""


class LazyLogs(LoadedLogs):
    """Logs audited without being held whole: the reports get what they say
    about them (inputs, quarantined rows) and, in `digest` when it was taken
    batch by batch, what a report's collector kept of the events. The events are
    read again only if a report asks for more."""

    def __init__(self, paths: list[str | Path], quarantine: pd.DataFrame,
                 inputs: list[InputFile], digest=None, read: ReadOptions = DEFAULT_READ,
                 sites: dict[str, str] | None = None):
        self.paths = list(paths)
        self.sites = sites
        self.quarantine = quarantine
        self.inputs = inputs
        self.digest = digest
        self.read = read
        self._events: pd.DataFrame | None = None

    @property
    def events(self) -> pd.DataFrame:
        if self._events is None:
            self._events = load_logs(self.paths, options=self.read, sites=self.sites).events
        return self._events


# --- loading with progress ----------------------------------------------------------------

def load_with_progress(paths: list[str | Path], progress,
                       read: ReadOptions = DEFAULT_READ,
                       sites: dict[str, str] | None = None,
                       labels: dict[str, str] | None = None) -> LoadedLogs:
    """`load_logs`, telling `progress` of each file as soon as it is read."""
    return load_logs(paths, on_file=lambda f: progress.advance(files=1, events=f.rows_read),
                     options=read, sites=sites, labels=labels)


# --- the plan -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Scanned:
    """What the scan learnt of one file: the tables it names (trimmed text,
    every row, quarantined or not) and about how many rows it has. With a
    `span` (from a Parquet footer), `tables` is only those known for sure and
    every table the file names lies within the span, bounds included."""

    tables: frozenset[str]
    rows: int
    span: tuple[str, str] | None = None
    #: the file has a `site` column of its own (a cell of it wins over the
    #: folder's site: `auditor.logs.site`)
    site_column: bool = False

    def bounds(self) -> tuple[str, str] | None:
        """The least and greatest table the file may name (None: none)."""
        if self.span is not None:
            return self.span
        return (min(self.tables), max(self.tables)) if self.tables else None

    def of_site(self, site: str | None) -> Scanned:
        """What it names keyed by `site` (as the loader keys a file's tables
        by its folder's site); as it is without one."""
        if site is None:
            return self
        key = site_prefix(site)
        return Scanned(frozenset(key + t for t in self.tables), self.rows,
                       None if self.span is None else (key + self.span[0], key + self.span[1]),
                       self.site_column)


def scan_each(files: list[Path], read: ReadOptions = DEFAULT_READ) -> list[Scanned]:
    """`scan` of each file in turn, in this process."""
    return [scan(f, read) for f in files]


#: From this many files, an engine with workers (`--jobs` over 1, dask)
#: scans them for its plan in its workers, a run of files each
#: (`scan_runs`), rather than one after another in the main process before
#: any worker starts (a Parquet footer is about 0.25 ms: 146,000 files of a
#: state's year, 35 s in series).
SCAN_IN_WORKERS = 512


def scan_runs(files: list[Path], workers: int) -> list[list[Path]]:
    """`files` cut into runs for `workers` to scan, in file order: four a
    worker, so that one slow run does not hold the plan up."""
    parts = 4 * max(1, workers)
    return [files[len(files) * k // parts:len(files) * (k + 1) // parts] for k in range(parts)]


def scan_run(files: list[Path], read: ReadOptions = DEFAULT_READ,
             labels: list[str] | None = None) -> list:
    """In a worker: `scan` of each file of a run, up to the first that
    cannot be a log (its `FileFailure`, last; named by `labels` where the
    worker reads the files under other names)."""
    found: list = []
    for k, path in enumerate(files):
        try:
            found.append(scan(path, read))
        except LogFileError as exc:
            found.append(FileFailure.of(exc, None if labels is None else labels[k]))
            break
    return found


def scans_of_runs(runs: list[list]) -> list[Scanned]:
    """The scans of runs (`scan_run`), in file order; the first file that
    cannot be a log raised, as one scan after another meets it."""
    scanned = []
    for found in runs:
        for each in found:
            if isinstance(each, FileFailure):
                raise each.error()
            scanned.append(each)
    return scanned


def plan(files: list[Path], progress=None, budget: int | None = None,
         read: ReadOptions = DEFAULT_READ,
         sites: dict[str, str] | None = None, shares: int = 0,
         scan_all: Callable[[list[Path], ReadOptions], list[Scanned]] = scan_each,
         ) -> list[Batch] | None:
    """Batches of file positions (each in file order), or None when the
    input is best loaded at once (small, or one batch anyway). `sites`: each
    file's site (`--site-from-path`), so that two casinos' `T01` are two
    tables here as they are to the audit (`plan_sites`). `shares`: a small
    input planned too, in batches of at most its rows over `shares` (an
    engine that cannot load it at once and share its tables out cheaply,
    as `--jobs` does, audits it by batches instead). `scan_all`: how the
    files are scanned (`scan_each`; `--jobs` shares many out to its
    workers). A group of linked files of more than `budget` events (what
    memory allows a batch, whatever `shares` asks) has its tables cut into
    ranges (`Batch.ranges`; one such group alone is planned too)."""
    budget = STREAM_EVENTS if budget is None else budget
    if len(files) < 2 or (not shares and small(files)):
        return None
    if progress is not None:
        progress.expect(files=len(files))
        progress.stage("scanning")
    scans = scan_all(files, read)
    site_of = plan_sites(files, scans, sites, read)
    scans = [s.of_site(site) for s, site in zip(scans, site_of)]
    again = overlapping([s.span for s in scans], [s.bounds() for s in scans])
    if progress is not None:
        progress.advance(scanned=len(files) - len(again))
    for i in again:  # a span that meets another file's: the file's exact tables
        scans[i] = read_tables(files[i], read).of_site(site_of[i])
        if progress is not None:
            progress.advance(scanned=1)
    bound = budget  # (what memory allows a batch: a group over it is cut into ranges)
    if shares:
        budget = min(budget, max(1, -(-sum(s.rows for s in scans) // shares)))
    batches = pack(components([s.tables for s in scans]), [s.rows for s in scans], budget)
    for batch in batches:
        if batch.rows > bound and len(batch) > 1:  # (one group of linked files)
            batch.ranges = table_ranges([scans[i] for i in batch], bound)
    if len(batches) < 2 and not batches[0].ranges:
        return None
    if progress is not None:
        known = all(s.span is None for s in scans)  # (else counted as the batches end)
        progress.expect(tables=len(set().union(*(s.tables for s in scans))) if known else None,
                        events=sum(s.rows for s in scans))  # (quarantined rows too)
    return batches


def plan_sites(files: list[Path], scans: list[Scanned], sites: dict[str, str] | None,
               read: ReadOptions = DEFAULT_READ) -> list[str | None]:
    """The site the plan keys each file's tables by: its folder's
    (`sites`), unless some file has a `site` column of its own (or one is
    renamed to or from `site` on read), whose cells may name any site: then
    none, and a table id links the files that name it whatever their sites
    (the plan of a run without sites). A plan wrong all the same is caught
    as the batches are loaded (`TablesCrossBatches`)."""
    renames_site = any(SITE_COLUMN in pair for pair in read.columns)
    if not sites or renames_site or any(s.site_column for s in scans):
        return [None] * len(files)
    return [sites.get(str(f)) for f in files]


def overlapping(spans: list[tuple[str, str] | None],
                bounds: list[tuple[str, str] | None]) -> list[int]:
    """The positions whose `spans` (None: not a span) meet another file's
    `bounds` (None: names no table): those files' exact tables are needed."""
    order = sorted((b[0], b[1], i) for i, b in enumerate(bounds) if b is not None)
    meets: set[int] = set()
    reach, holder = None, -1  # the greatest upper bound so far, and whose
    for lo, hi, i in order:
        if reach is not None and lo <= reach:
            meets.update((i, holder))
        if reach is None or hi > reach:
            reach, holder = hi, i
    # (a span that meets an earlier one meets the one reaching furthest so
    # far, `holder`; the earlier of two that meet is marked as the first
    # span after it to meet it is)
    return sorted(i for i in meets if spans[i] is not None)


def small(files: list[Path]) -> bool:
    """Whether `files` are few enough bytes (`STREAM_MIN_BYTES` in all) to
    be loaded at once without a plan."""
    return sum(_size(f) for f in files) <= STREAM_MIN_BYTES


def small_shares(files: list[Path], workers: int, read_rows: bool = True) -> int:
    """The `shares` of `plan` for `workers` workers (decision 111): twice
    the workers (so that they end close together) for several files, the
    batches at most their events over that many, so that an input of a
    few batches' events is not loaded by one process; 0 for one file.
    `read_rows` False (an engine that loads a `small` input at once where
    that is cheaper): 0 too for a small input unless every file is plain
    Parquet, whose footer tells the plan its tables (of CSV the plan reads
    the `table_id` column, of JSON Lines each line's table as written, of
    gzip'd files every row: for `--jobs`, more than loading a small input
    at once costs). A larger input is scanned by the plan anyway."""
    if len(files) < 2:
        return 0
    if not read_rows and small(files) and not all(plain_parquet(f) for f in files):
        return 0
    return 2 * workers


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def components(tables: list[frozenset[str]]) -> list[list[int]]:
    """Files (by position) linked by a shared table, each group in file
    order, the groups in order of their first file."""
    parent = list(range(len(tables)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, names in enumerate(tables):
        for t in names:
            j = first.setdefault(t, i)
            a, b = root(i), root(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(tables)):
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


class Batch(list):
    """A batch of the plan: its file positions (a list, in file order) and
    `rows`, the rows the scan counted in its files, by which the engines
    hand the largest batches out first (`pieces.largest_first`). `ranges`:
    for one group of linked files larger than a batch may be, its tables
    cut into ranges of about a batch's events each, which the engines audit
    a range at a time (`auditor.run.by_table`); empty otherwise."""

    def __init__(self, positions=(), rows: int = 0,
                 ranges: tuple[frozenset[str], ...] = ()):
        super().__init__(positions)
        self.rows = rows
        self.ranges = ranges


def table_ranges(scans: list[Scanned], budget: int) -> tuple[frozenset[str], ...]:
    """The tables of a group of linked files (their `scans`) cut into
    ranges of at most `budget` events each by the scan's count (a table
    larger than that a range of its own): consecutive tables in name order,
    each file's rows shared evenly among the tables it names. Empty when
    the group is one range."""
    sizes: dict[str, float] = {}
    for s in scans:
        for t in s.tables:
            sizes[t] = sizes.get(t, 0) + s.rows / len(s.tables)
    ranges: list[set[str]] = []
    size = 0.0
    for t in sorted(sizes):
        if not ranges or size + sizes[t] > budget:
            ranges.append(set())
            size = 0.0
        ranges[-1].add(t)
        size += sizes[t]
    return tuple(frozenset(r) for r in ranges) if len(ranges) > 1 else ()


def pack(comps: list[list[int]], rows: list[int], budget: int) -> list[Batch]:
    """Consecutive components joined into batches of at most `budget` rows
    (fewer, larger audits: each audit has a fixed cost of its own)."""
    batches: list[Batch] = []
    current: list[int] = []
    size = 0
    for comp in comps:
        n = sum(rows[i] for i in comp)
        if current and size + n > budget:
            batches.append(Batch(sorted(current), size))
            current, size = [], 0
        current += comp
        size += n
    if current:
        batches.append(Batch(sorted(current), size))
    return batches


def scan(path: Path, read: ReadOptions = DEFAULT_READ) -> Scanned:
    """What the plan first learns of `path`: a Parquet file's footer where
    it tells enough (`survey`), else the tables it names (`read_tables`)."""
    if plain_parquet(path):
        try:
            found = survey(path, read)
        except Exception:  # noqa: BLE001 - anything odd: read as the loader does
            found = None
        if found is not None:
            return found
    return read_tables(path, read)


def read_tables(path: Path, read: ReadOptions = DEFAULT_READ) -> Scanned:
    """The tables `path` names, cheaply where the format allows. A file the
    quick scan cannot read is read as the loader reads it (which raises
    LogFileError for a file that cannot be a log)."""
    try:
        if plain_parquet(path):
            return _scan_parquet(path, read)
        if plain_format(path) == "csv" and read.encoding is None:
            return _scan_csv(path, read)
        if plain_format(path) == "jsonl" and read.encoding is None:
            return _scan_jsonl(path, read)
    except Exception:  # noqa: BLE001, S110 - anything odd: read it as the loader does
        pass
    raw = read_log(path, read)
    col = raw.table.column("table_id")
    return Scanned(_table_names(col), raw.table.num_rows + len(raw.rejected.lines),
                   site_column=SITE_COLUMN in raw.table.column_names)


def _columns_as_read(names: list[str], read: ReadOptions) -> tuple[int | None, bool]:
    """Of a file's column `names`, the position of the one the loader reads
    as `table_id` (None unless exactly one is), and whether one is read as
    `site` (the project configuration's `columns` renaming them)."""
    as_read = names_as_read(names, read.columns)
    table = as_read.index("table_id") if as_read.count("table_id") == 1 else None
    return table, SITE_COLUMN in as_read


def _scan_parquet(path: Path, read: ReadOptions = DEFAULT_READ) -> Scanned:
    pf = pq.ParquetFile(path)
    rows = pf.metadata.num_rows
    names = pf.schema_arrow.names
    at, sited = _columns_as_read(names, read)
    if at is None:
        return Scanned(frozenset(), rows)  # the loader will say what is wrong
    col = pf.read(columns=[names[at]], use_threads=False).column(0)
    return Scanned(_table_names(col), rows, site_column=sited)


def survey(path: Path, read: ReadOptions = DEFAULT_READ) -> Scanned | None:
    """A Parquet file's tables from its footer alone: exact where each row
    group's `table_id` statistics have min == max (trimmed as the loader
    trims), else the span of its row groups' [min, max]; None when the
    column must be read: no such text column, a row group without
    statistics, or a span whose bounds are not plain printable ASCII (first
    and last byte neither white space nor part of a longer character). With
    such bounds no id in the span starts with white space, and one trimmed
    at its end stays within the span unless the white space it loses is
    not ASCII: that plan, wrong, is caught as the batches are loaded
    (`TablesCrossBatches`, the audit loaded at once). The columns go by the
    names `read` gives them (the project configuration's `columns`)."""
    meta = pq.read_metadata(path)
    at, sited = _columns_as_read([meta.schema.column(i).path
                                  for i in range(meta.num_columns)], read)
    if at is None:
        return None
    column = meta.schema.column(at)
    if column.physical_type != "BYTE_ARRAY" or str(column.logical_type.type) != "STRING":
        return None
    singles: set[bytes] = set()
    lo = hi = None
    spanned = False
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        stats = group.column(at).statistics
        if group.num_rows == 0:
            continue
        if stats is None:
            return None
        if stats.has_null_count and stats.null_count >= group.num_rows:
            continue  # no table named
        if not stats.has_min_max:
            return None
        low, high = stats.min_raw, stats.max_raw
        if not isinstance(low, bytes):
            low, high = str(low).encode("utf-8"), str(high).encode("utf-8")
        if low == high:
            singles.add(low)
        else:
            spanned = True
        lo = low if lo is None or low < lo else lo
        hi = high if hi is None or high > hi else hi
    names = _trimmed_names(singles)
    if not spanned:
        return Scanned(names, meta.num_rows, site_column=sited)
    if not (_plain(lo) and _plain(hi)):
        return None
    return Scanned(names, meta.num_rows, (lo.decode("ascii"), hi.decode("ascii")), sited)


def _plain(text: bytes) -> bool:
    """Printable ASCII, spaces inside only: what trimming leaves as it is
    and what no id starting with white space can lie between."""
    return bool(text) and all(0x20 <= c < 0x7F for c in text) \
        and text[0] != 0x20 and text[-1] != 0x20


def _trimmed_names(values: set[bytes]) -> frozenset[str]:
    """Raw table ids as the loader reads them (`_table_names`): plain
    printable ASCII ones (`_plain`, which trimming leaves as they are)
    as they are, without an Arrow call a file (a third of a footer's
    survey, with a file a table and night); any other through Arrow."""
    if all(_plain(v) for v in values):
        return frozenset(v.decode("ascii") for v in values)
    return _table_names(pa.array(sorted(values), pa.binary()))


def _scan_csv(path: Path, read: ReadOptions = DEFAULT_READ) -> Scanned:
    """The table_id column of a plain UTF-8 CSV file, by Arrow, every other
    cell skipped. Anything unusual (a byte order mark, quoted names, bytes
    that are not UTF-8, which Arrow cannot hand to the row handler) goes to
    the loader's own reading."""
    data = path.read_bytes()
    if not is_utf8(data):
        raise ValueError("not UTF-8: read it whole")
    end = data.find(b"\n")
    header = (data if end < 0 else data[:end]).rstrip(b"\r")
    if header.startswith((UTF8_BOM, b"\xff\xfe", b"\xfe\xff")) or b'"' in header:
        raise ValueError("not a plain header")
    names = [n.strip() for n in header.decode("utf-8").split(",")]
    at, sited = _columns_as_read(names, read)
    if at is None or len(set(names)) != len(names):
        raise ValueError("read it whole")
    column = names[at]
    table = pa_csv.read_csv(
        io.BytesIO(data),
        read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1,
                                        block_size=1 << 24),
        parse_options=pa_csv.ParseOptions(newlines_in_values=True,
                                          invalid_row_handler=lambda row: "skip"),
        convert_options=pa_csv.ConvertOptions(include_columns=[column],
                                              column_types={column: pa.string()},
                                              strings_can_be_null=False,
                                              check_utf8=False))
    return Scanned(_table_names(table.column(0)), table.num_rows, site_column=sited)


def _scan_jsonl(path: Path, read: ReadOptions = DEFAULT_READ) -> Scanned:
    """The tables a plain UTF-8 JSON Lines file names, from each line's
    `"table_id":` value as written (`line_runs.JsonTables`), not parsed:
    about a seventh of what reading the file costs (which the scan did, and
    the workers then did again). Only where the file's lines and the table
    names found in it are as many, each a JSON string, no line names a
    `site` and the project configuration renames neither: anything else (a
    blank line, a line without the key or with it twice, as in an object
    nested in it, a bare value, text not UTF-8, a line longer than
    `line_runs.LONG_LINE_BYTES`) is read as the loader reads it. (A line
    naming none beside one naming two passes: a name too many only keeps
    files together; one the scan would miss, a key written with escapes
    there, is caught as the batches load, `TablesCrossBatches`.)"""
    if any(name in pair for pair in read.columns for name in ("table_id", SITE_COLUMN)):
        raise ValueError("columns renamed: read it whole")
    pattern = line_runs.JsonTables().pattern
    written: set[bytes] = set()
    lines = 0
    for block in line_runs.whole_line_blocks(path):
        if not block or b'"site"' in block or not is_utf8(block):  # (b"": a line too long)
            raise ValueError("read it whole")
        found = pattern.findall(block)
        breaks = block.count(b"\n")
        if len(found) != breaks + (not block.endswith(b"\n")):
            raise ValueError("a line naming no table, or two: read it whole")
        written.update(found)
        lines += len(found)
    if not all(value.startswith(b'"') for value in written):
        raise ValueError("a table id not written as text: read it whole")
    names = [json.loads(value) for value in sorted(written)]
    return Scanned(_table_names(pa.array(names, pa.string())), lines)


def _table_names(col) -> frozenset[str]:
    """Distinct table ids as the loader types them: text, trimmed, empty
    meaning none."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks else pa.array([], col.type)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    col = pc.unique(col)
    if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
        col = col.cast(pa.string())
    elif pa.types.is_timestamp(col.type):
        col = pc.strftime(col, format="%Y-%m-%dT%H:%M:%S")
    elif not pa.types.is_string(col.type):
        col = pc.cast(col, pa.string())
    col.validate(full=True)  # text that is not UTF-8: read as the loader does
    names = pc.utf8_trim_whitespace(col.drop_null()).to_pylist()
    return frozenset(n for n in names if n)


# --- auditing a batch ---------------------------------------------------------------------

@dataclass
class BatchResult:
    """What one batch, or one piece of a file (`auditor.run.pieces`), leaves
    behind once its events are dropped."""

    findings: SortedFindings  # ordered and named where the batch was audited
    quarantine: pd.DataFrame
    inputs: list[InputFile]
    tables: list[str]           # tables with events (audited)
    named: set[str]             # every table the batch's rows name
    events: int
    timings: dict[str, float]
    digest: object  # what the collector kept of the events, or None
    #: a piece's rows [a, b) of its file; None for a batch of whole files
    #: (a piece's `inputs` hold its own provenance until `pieces.join`)
    rows: tuple[int, int] | None = None
    #: the file a piece read, as it stood (`pieces.file_as_it_stands`)
    file: tuple[int, ...] | None = None

    def counts(self) -> list[int]:
        """(files, events read, tables, events replayed): what the progress
        is told of it when it ends; a split file is counted by its first
        piece only."""
        files = len(self.inputs) if self.rows is None else int(self.rows[0] == 0)
        return [files, sum(f.rows_read for f in self.inputs), len(self.tables), self.events]


@dataclass(frozen=True)
class FileFailure:
    """A file that cannot be a log, as a worker (of `--jobs` or dask) met it:
    its LogFileError's arguments, which survive pickling where the
    exception does not."""

    path: str
    problem: str
    line: int | None = None

    @classmethod
    def of(cls, exc: LogFileError, path: str | None = None) -> FileFailure:
        """`exc`, named `path` where the worker read the file under another
        name (a dask worker reads the absolute path)."""
        return cls(str(exc.path) if path is None else path, exc.problem, exc.line)

    def error(self) -> LogFileError:
        return LogFileError(self.path, self.problem, self.line)


def audit_batch(files: list[Path], job, progress,
                labels: dict[str, str] | None = None) -> BatchResult:
    """Load, replay and check one batch of `job`'s files (an
    `auditor.run.job.AuditJob`); keep only the findings and what the job's
    collector takes of the events, so no report reads them again.
    The files that share a table are in one batch, so a table id held twice
    (`auditor.logs.identity`) is refused here. `labels`: each file's name in
    the reports, by path, where it is read under another (a dask worker
    reads the absolute path)."""
    labels = labels if labels is not None else job.labels
    return audit_read(lambda: load_with_progress(list(files), progress, job.read, job.sites,
                                                 labels), job, progress)


def audit_read(load, job, progress) -> BatchResult:
    """`audit_batch` of the logs `load()` reads (a batch of files, or a
    piece of one: `auditor.run.pieces`)."""
    timings: dict[str, float] = {}
    progress.stage("reading")
    with stage(timings, "load"):
        logs = load()
    check_events(logs.events)
    tables, named = tables_named(logs)
    progress.stage("auditing")
    audited = audit_tables(logs, job.ruleset, job.collector, timings,
                           stage_progress(progress, len(logs.events), len(tables)), ordered=True)
    out = BatchResult(audited.ordered, logs.quarantine, list(logs.inputs), tables, named,
                      len(logs.events), timings, audited.taken)
    # (the batch's events go now, by their count of references: nothing of
    # them is in a cycle, so no collection of the whole heap is run for them,
    # about 40 ms a batch; tests/run/test_streaming.py holds it so)
    del logs
    release_memory()
    return out


def tables_named(logs: LoadedLogs) -> tuple[list[str], set[str]]:
    """The tables with events in `logs` (sorted), and every table their
    rows name, quarantined ones too: what the merge checks no two batches
    share (`merge`)."""
    tables = sorted({str(t) for t in logs.events["table_id"].unique().tolist()})
    q = logs.quarantine["table_id"] if len(logs.quarantine) else pd.Series([], dtype=object)
    return tables, set(tables) | {str(t) for t in q.dropna().tolist()}


def stage_progress(progress, events: int, tables: int):
    """The `on_stage` callback of `audit_tables` that tells `progress` of the
    events replayed (as the replay ends) and the tables checked (as the
    checks end)."""

    def on_stage(name: str) -> None:
        if name == "replay":
            progress.advance(audited=events)
        elif name == "checks":
            progress.advance(tables=tables)

    return on_stage


def merge(files: list[Path], results: list[BatchResult], labels: dict[str, str] | None = None
          ) -> tuple[list, pd.DataFrame, list[InputFile], list[str]]:
    """The batches' sorted findings, and their quarantine, inputs and tables
    in file order, as one load gives them (each file known by its name in
    the reports: its `labels` entry, else its path). TablesCrossBatches when
    two batches hold rows of one table (their findings could not be merged)."""
    seen: set[str] = set()
    for r in results:
        if seen & r.named:
            raise TablesCrossBatches(min(seen & r.named))
        seen |= r.named
    inputs, quarantine = in_file_order(files, [r.inputs for r in results],
                                       [r.quarantine for r in results], labels)
    findings = [r.findings for r in results]
    tables = sorted({t for r in results for t in r.tables})
    return findings, quarantine, inputs, tables


def in_file_order(files: list[Path], inputs: list[list[InputFile]],
                  quarantines: list[pd.DataFrame], labels: dict[str, str] | None = None
                  ) -> tuple[list[InputFile], pd.DataFrame]:
    """Batches' inputs and quarantined rows as one load of `files` gives
    them: in file order (each file known by its `labels` entry, else its
    path)."""
    position = {(labels or {}).get(str(f), str(f)): i for i, f in enumerate(files)}
    ordered: list[InputFile | None] = [None] * len(files)
    for batch in inputs:
        for f in batch:
            ordered[position[f.path]] = f
    quarantine = pd.concat(quarantines, ignore_index=True)
    if len(quarantine):
        where = quarantine["source_file"].map(lambda p: position.get(str(p), -1))
        order = np.argsort(where.to_numpy(dtype=np.int64), kind="stable")
        quarantine = quarantine.iloc[order].reset_index(drop=True)
    return [f for f in ordered if f is not None], quarantine


# --- what the workers spill --------------------------------------------------------------

def spilling(audit: Callable[[str | None], AuditResult], root: str | None = None
             ) -> AuditResult:
    """`audit(folder)` given a fresh folder of the system's temporary space
    (TMPDIR, or `root`: `--scratch`; `auditor.run.scratch`) for the per-die
    rows to be spilled to (`spill_digest`; decision 105), removed with the
    result it returns or at once on an error; None where no folder can be
    made (the workers then send those rows with their results)."""
    folder = scratch.make("spill", root)
    try:
        out = audit(folder)
    except BaseException:
        scratch.remove(folder)
        raise
    weakref.finalize(out.logs, scratch.remove, folder)
    return out


def spill_taken(collector, taken, folder: str | None):
    """In a worker, before `taken` (what `collector` took of some tables) is
    sent, or in the main process as it arrives from workers that could not
    write to `folder` (a dask cluster of `--scheduler`): what the collector
    spills of it written to `folder` (`collect.spilled`); with no folder, as
    it is; on a write that fails (a full disk, say) as it is too, the rows
    going with it."""
    if folder is None or collector is None:
        return taken
    try:
        return spilled(collector, taken, folder)
    except OSError:
        return taken


def spill_digest(result, job, folder: str | None):
    """`spill_taken` of a batch's or a piece's result; anything else as it is."""
    if isinstance(result, BatchResult):
        result.digest = spill_taken(job.collector, result.digest, folder)
    return result


def merged_result(job, results: list[BatchResult], timings: dict[str, float] | None,
                  progress, logs_type: type[LazyLogs] = LazyLogs) -> AuditResult:
    """The audit of `job` (an `auditor.run.job.AuditJob`) from its batches'
    (or pieces') results, whichever engine ran them: the findings
    finalized, the logs lazy (`logs_type`), their digest what the job's
    collector took of each."""
    add_work(timings, [r.timings for r in results])
    found, quarantine, inputs, tables = merge(list(job.files), results, job.labels)
    progress.expect(tables=len(tables))
    with stage(timings, "checks"):
        findings = merge_sorted(found)
    collector = job.collector
    digest = collector.join([r.digest for r in results]) if collector is not None else None
    return AuditResult(job.ruleset, logs_type(list(job.paths), quarantine, inputs, digest,
                                              job.read, job.sites),
                       findings, table_ids=tables)


def stop_at_least_clash(results) -> None:
    """Raise, of the table identity clashes among the batches' `results`
    (each kept as its batch's result), the one a single load of every file
    names (`check_events`: the least table id). Each batch names the least
    of its own, and a table's files lie in one batch, so the batches are
    heard out before the run stops: the first to end would name whichever
    clash its worker found first."""
    clashes = [r for r in results if isinstance(r, TableIdentityError)]
    if clashes:
        raise min(clashes, key=lambda clash: clash.table)


def first_error(files: list[Path], error: LogFileError, done: set[int],
                read: ReadOptions = DEFAULT_READ) -> LogFileError:
    """The error one load of every file would have raised: that of the first
    file, in file order, that cannot be a log (files before the failed one
    that no batch has read yet are read now)."""
    failed = next((i for i, f in enumerate(files) if str(f) == error.path), None)
    if failed is None:
        return error
    for i in range(failed):
        if i in done:
            continue
        try:
            load_file(files[i], options=read)  # (every row quarantined is an error too)
        except LogFileError as exc:
            return exc
    return error
