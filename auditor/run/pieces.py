"""One large file split across workers (issue 27): each worker reads its own
rows of the file, replays and checks them, and sends back what a batch of
files sends back (`auditor.run.stream.BatchResult`). Parquet first; JSON
Lines and CSV below.

The plan is made from the file's footer alone: the file is cut into pieces
of about the same number of rows at nominal rows `cut`. A table must be
replayed whole, once, so a piece does not end at its nominal cut but where
at the start or the end of the run of rows holding the table at that cut,
whichever is nearer: each worker finds its own bounds by reading the
`table_id` column around the cut (`cut_near`), and both pieces that meet
at a cut find the same row. The piece that starts at row 0 hashes the file.
The pieces are therefore contiguous row ranges that together hold every row
once, each cut between two runs of different tables.

A file whose tables are not each in one run of rows (rows interleaved by
time, as a casino's export in time order) would hold a table in every
piece. The plan sees it from samples of its rows (`interleaved`: a
Parquet file's first row group and the first that overlaps another, where
its row groups' statistics overlap; a text file's first 64 KB and as many
from its middle) and its pieces are then sorted out by ranges of
its tables instead (`auditor.run.by_table`, decision 127): each piece read
once, its rows written to its ranges' parts, each range audited whole. One
the plan did not see (or with no scratch folder to sort into) still holds
a table in two pieces: the merge sees it (as for batches of files,
`stream.TablesCrossBatches`) and the file is read whole. So do a piece
that decodes past its share of the file's decoding cap
(`parquet_format.PieceOverShare`: the file may be refused as a whole), a file every row of which was quarantined (it may be one problem,
`load._one_problem`) and a piece that finds the file cannot be a log: the
file is then read whole, once, and gives the error (or the audit) that one
reading gives. What a piece cannot judge alone is thus always judged on
the whole file. So is a file replaced while its pieces read it (each
piece notes the file before and after: `file_as_it_stands`), so that its
hash and rows come from one file.

A plain JSON Lines file in UTF-8 is cut the same way by bytes: the plan
knows only its size and its first and last lines (the rows are estimated
from its first 64 KB); each cut falls at a line start, at the start or the
end of the run of lines naming one table (`line_runs.line_cut_near`); each
piece numbers its lines as in the file, and the first hashes the file. The
line breaks before a piece are counted by a first pass, each worker counting
one nominal share of the file (`shares_to_count`, `numbered`), so the file
is scanned once in all, not once a piece (a piece then counts only the
bytes between its nominal start and its real one); a file cut in two has
no such pass, its second piece counts the first share itself. Its pieces
must agree on the file's columns (a JSON line may leave keys out): a piece
whose keys differ from the first's has the file read whole, as one reading
orders its columns. So do pieces that each name an encoding to try
(one reading names one, at the file's first text that is not UTF-8).
A plain CSV file in UTF-8 is cut as a JSON Lines file is, its table read
from the table column's cell of each line, on the word of its pieces that
every cut starts a record: each piece checks that its bytes end outside
any quoted value as Arrow's reader reads them
(`csv_format.ends_outside_quotes`), so a cut that fell inside a value
spanning lines is found by the piece before it; a piece that finds
otherwise has the file read whole, as one reading parses it. Each piece
after the first parses its bytes behind the file's header record. Text
read in an encoding of one byte a character (`--encoding cp1252`) is cut
alike, each piece decoding its own bytes. A gzip stream is not cut (it
cannot be entered in the middle), nor text in an encoding of more bytes a
character, such as UTF-16 (docs/decisions.md, 103).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auditor.errors import LogFileError
from auditor.findings import sort_findings
from auditor.logs import csv_format, line_runs
from auditor.logs.discover import plain_format
from auditor.logs.load import LoadedLogs, hints_encoding, joined_input, load_file, logs_of
from auditor.logs.parquet_format import PieceOverShare, row_group_starts
from auditor.logs.raw import (
    DEFAULT_READ,
    UTF8_BOM,
    ReadOptions,
    line_breaks_between,
    one_byte_a_character,
)
from auditor.run import stream

#: The fewest rows a piece is planned with to share a file out between
#: workers: a smaller file is not split for them (its reading costs less
#: than starting and feeding another worker).
PIECE_ROWS = 1 << 20
#: The most rows a piece is planned with, whatever the workers: a larger
#: file is cut into more pieces than workers, audited in turn, so a
#: worker's memory is bounded by a piece (about 0.45 KB of peak memory an
#: event: some 0.9 GB), or by the largest table where one table is larger.
PIECE_BUDGET = 2_000_000
#: The fewest lines a piece of a JSON Lines file is planned with to share it
#: out between workers: a line costs about five times what a Parquet row
#: does to audit (4.4 against 0.9 µs of CPU, docs/performance.md), so a
#: smaller file is worth sharing out.
TEXT_PIECE_ROWS = 1 << 18
#: The same for a CSV file: a line costs about twice a Parquet row (1.4
#: against 0.8 µs of CPU at 10M events, docs/performance.md).
CSV_PIECE_ROWS = 1 << 19


@dataclass(frozen=True)
class Piece:
    """Rows of one file, from the cut near nominal row `start` to the cut near
    nominal row `stop` (`cut_near`): the worker finds the real rows."""

    path: str
    file: int       # the file's position among the job's files
    part: int       # its place among the file's pieces
    start: int
    stop: int
    rows: int       # the file's rows (a JSON Lines or CSV file's: about)
    size: int = 0   # a JSON Lines or CSV file's bytes, which `start` and `stop` count
    #: the key (JSON Lines) or column (CSV) its lines write the table under
    key: str = line_runs.TABLE_KEY
    #: a piece of text's line breaks before byte `start`, as the first pass
    #: counted them (`numbered`); -1: the piece counts them itself
    breaks: int = -1
    #: where the file's rows interleave its tables (rows in time order: a
    #: table in every piece, `interleaved`), the tables its first rows name;
    #: such a file is sorted out by ranges of its tables a piece at a time
    #: (`auditor.run.by_table`), not audited a piece at a time. () where
    #: each table lies in one run of rows.
    interleaved: tuple[str, ...] = ()


@dataclass
class ReadWhole:
    """A piece's answer that its file must be read whole (see module)."""


def expect_rows(work: list, progress) -> None:
    """Tell `progress` the events a work list of one file's pieces holds
    (the file's rows: its time left reads by them); batches of files are
    counted by their plan (`stream.plan`)."""
    if work and all(isinstance(item, Piece) for item in work):
        progress.expect(events=work[0].rows)


def split(files: list[Path], batches: list[stream.Batch] | None,
          jobs: int, alone: int | None = None,
          read: ReadOptions = DEFAULT_READ) -> list[list[int] | Piece] | None:
    """The work of an audit of `files` by `jobs` workers: each batch of
    files (`stream.plan`: file positions) as it is, but a batch of one plain
    Parquet, JSON Lines or CSV file cut into its `pieces`. Without batches (the
    input loaded at once), the pieces of a single file, each of `alone` rows
    or more (default `PIECE_ROWS`; an engine that audits such an input
    dearly otherwise asks for smaller pieces: `pieces`); None when there
    are none. Text read in an encoding of more than one byte a character
    other than UTF-8 (`read`: UTF-16, Shift JIS) is not cut; its table is
    found under the key (the column) `read`'s columns read as `table_id`."""
    key = table_key(read)
    if batches is None:
        if len(files) != 1:
            return None
        found = pieces(files[0], 0, jobs, alone, key)
        return list(found) if found else None
    work: list[list[int] | Piece] = []
    for batch in batches:
        found = pieces(files[batch[0]], batch[0], jobs, key=key) if len(batch) == 1 \
            else None
        work += found or [batch]
    return work


def table_key(read: ReadOptions) -> str | None:
    """The key (JSON Lines) or column (CSV) a text file's lines name their
    table under, as `read`'s columns read it; None where text read so is not
    cut (an encoding of more than one byte a character other than UTF-8)."""
    if read.encoding is not None and not one_byte_a_character(read.encoding):
        return None
    return next((name for name, spec in read.columns if spec == "table_id"),
                line_runs.TABLE_KEY)


def largest_first(work: list) -> list[int]:
    """The order to hand `work` (of `split`) out to workers in: the largest
    items first, by the rows the plan counted (a piece's nominal rows, a
    batch's `rows`), ties in file order. Each worker takes the next item as
    it finishes one, so the last items to start are the smallest and the
    workers finish close together: handed out in file order, a large file
    last starts when the others are done, and one worker audits it alone.
    The results are merged in file order whatever the order they end in."""
    return sorted(range(len(work)), key=lambda k: -rows_of(work[k]))


def rows_of(item) -> int:
    """The rows the plan counted in a work item (a piece: its nominal rows)."""
    if isinstance(item, Piece):
        return (item.stop - item.start) * item.rows // item.size if item.size \
            else item.stop - item.start
    return getattr(item, "rows", 0)


def files_of(item) -> list[int]:
    """The positions of the files a work item of `split` reads."""
    if isinstance(item, Piece):
        return [item.file]
    return list(item)


def pieces(path: Path, file: int, jobs: int, least: int | None = None,
           key: str | None = line_runs.TABLE_KEY) -> list[Piece] | None:
    """The pieces of `path` (the job's file `file`) for `jobs` workers, from
    its footer alone: one a worker for a file of `least` (`PIECE_ROWS`) rows
    a worker, and pieces of at most `PIECE_BUDGET` rows (nominal: a piece
    ends where a table does) whatever the workers. Of pieces smaller than
    `PIECE_ROWS` there are no more than the file has row groups (or two),
    planned at their starts: a piece starting inside a row group decodes
    the group's rows before it (two pieces of one group decode it 1.5
    times). None when it is not split (not plain Parquet,
    small, or row groups whose statistics say one table holds every row);
    a plain JSON Lines or CSV file (when its table's `key` is given) is cut
    by `_text_pieces`."""
    kind = plain_format(path)
    if kind in ("jsonl", "csv") and key is not None:
        return _text_pieces(path, file, jobs, least, key, kind == "csv")
    if kind != "parquet":
        return None
    try:
        meta = pq.read_metadata(path)
        names = meta.schema.to_arrow_schema().names
    except Exception:  # noqa: BLE001 - the loader says what is wrong with it
        return None
    if "table_id" not in names or names.count("table_id") != 1 or _one_table(meta, names):
        return None
    least = PIECE_ROWS if least is None else least
    rows = meta.num_rows
    budget = -(-rows // PIECE_BUDGET)
    parts = max(min(jobs, rows // least), budget)
    if least < PIECE_ROWS:
        parts = max(min(parts, max(2, meta.num_row_groups)), budget)
    if parts < 2:
        return None
    cuts = nominal_cuts(row_group_starts(meta), parts)
    mixed = _parquet_interleaved(path, meta, names)
    return [Piece(str(path), file, k, a, b, rows, interleaved=mixed)
            for k, (a, b) in enumerate(pairwise(cuts))]


def _text_pieces(path: Path, file: int, jobs: int, least: int | None,
                 key: str, csv: bool = False) -> list[Piece] | None:
    """The pieces of a plain JSON Lines or CSV file, cut at equal shares of
    its bytes (each worker moves its cuts to line starts between tables),
    for as many lines as `pieces` asks rows (`TEXT_PIECE_ROWS` at least a
    worker, `CSV_PIECE_ROWS` for CSV, fewer when `least` asks for fewer),
    its lines estimated from its first 64 KB. None when it is not cut:
    small, not in UTF-8 (a UTF-16 file's bytes cannot be cut at a line
    break), not a JSON object on its first line or no whole CSV header
    naming the table column `key` there, or its first and last lines
    naming one table (most likely a file of one table) where its first
    lines do not interleave tables (`interleaved`)."""
    try:
        head, last, size = line_runs.edges(path)
    except OSError:  # (the loader says what is wrong with it)
        return None
    head = head.removeprefix(UTF8_BOM)
    tables = _csv_tables(path, head, key) if csv else line_runs.JsonTables(key)
    if tables is None or not csv and not head.startswith(b"{"):
        return None
    body = head[head.find(b"\n") + 1:] if csv else head
    breaks = body.count(b"\n")
    if not breaks:
        return None
    rows = size * breaks // len(body)
    per_worker = CSV_PIECE_ROWS if csv else TEXT_PIECE_ROWS
    least = per_worker if least is None else min(least, per_worker)
    parts = max(min(jobs, rows // least), -(-rows // PIECE_BUDGET))
    first = tables.written(body[:body.find(b"\n")])
    mixed = _text_interleaved(path, body, size, tables)
    if parts < 2 or not mixed and first == tables.written(last):
        return None
    cuts = [size * k // parts for k in range(parts + 1)]
    return [Piece(str(path), file, k, a, b, rows, size, key, interleaved=mixed)
            for k, (a, b) in enumerate(pairwise(cuts))]


def _csv_tables(path: Path, head: bytes, key: str) -> line_runs.CsvTables | None:
    """How a CSV file's lines name their table (the column `key` of the
    header that opens `head`, its first bytes), or None: no whole header of
    one line there, or no such column."""
    end = csv_format.header_end(head)
    if end >= len(head) or b"\n" in head[:end]:
        return None
    try:
        names, _ = csv_format.csv_names(path, head[:end])
    except LogFileError:  # (the loader says what is wrong with it)
        return None
    return line_runs.CsvTables(names.index(key)) if key in names else None


def nominal_cuts(starts: np.ndarray, parts: int) -> list[int]:
    """Rows cutting a file whose row groups start at `starts` (its rows
    last) into `parts` pieces of about the same size: at the row group
    starts nearest each share where there are enough row groups (a piece
    then decodes only its own groups, and the head of the next that ends
    its last table: `parquet_format._rows_of`), else at the shares."""
    n = int(starts[-1])
    share = [n * k // parts for k in range(parts + 1)]
    inner = starts[1:-1]
    if len(inner) < parts - 1:
        return share
    cuts = [0]
    for k in range(1, parts):
        left = len(inner) - (parts - 1 - k)  # leave a start for each cut after this one
        options = inner[np.searchsorted(inner, cuts[-1], side="right"):left]
        cuts.append(int(options[np.argmin(np.abs(options - share[k]))]))
    return cuts + [n]


def _one_table(meta, names: list[str]) -> bool:
    """Whether every row group's `table_id` statistics say it holds one same
    value (then no piece could hold a table of its own)."""
    column = names.index("table_id")
    seen = set()
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(column).statistics
        bounds = _bounds(stats)
        if bounds is None or bounds[0] != bounds[1] or stats.null_count:
            return False
        seen.add(bounds[0])
    return len(seen) == 1


def _bounds(stats) -> tuple | None:
    """A row group's [min, max] of a column as the footer records them, None
    where it records none or none Python can read: the footer is the
    file's word, and a damaged one may hold text that is not UTF-8 (read
    as it is, bytes; Arrow decodes a text column's `min`), or a value of
    another type than the column's."""
    if stats is None:
        return None
    try:
        if not stats.has_min_max:
            return None
        return stats.min_raw, stats.max_raw
    except (pa.ArrowException, OverflowError, ValueError):  # (UnicodeDecodeError is one)
        return None


#: The rows of a Parquet file's first row group looked at for whether its
#: tables interleave (`_parquet_interleaved`): about the lines of a text
#: file's first 64 KB.
SAMPLE_ROWS = 1 << 12


#: The longest run of one table's rows, on average, in rows that
#: interleave their tables (`interleaved`).
INTERLEAVED_RUN = 16


def interleaved(names: list) -> tuple[str, ...]:
    """The tables named by a file's rows `names` (its first rows' table ids,
    in row order; None: none) where they interleave (rows in time order):
    some table's rows in two runs or more, with another's between, and the
    runs short (`INTERLEAVED_RUN` rows on average, at most); else (). A
    stray row of another table in a run (a row to quarantine) does not
    make a file of runs interleaved."""
    named = [n for n in names if n is not None]
    tables = set(named)
    runs = 1 + sum(a != b for a, b in pairwise(named)) if named else 0
    if len(tables) < 2 or runs <= len(tables) or runs * INTERLEAVED_RUN < len(named):
        return ()
    return tuple(sorted(tables))


def _parquet_interleaved(path: Path, meta, names: list[str]) -> tuple[str, ...]:
    """Where a Parquet file's row groups' `table_id` statistics overlap (a
    group's least table below the greatest of the group before it), or it
    has one row group, and the first `SAMPLE_ROWS` rows of its first row
    group or of the first group that overlaps the one before interleave
    (`interleaved`: a file whose first hour is one table's is seen by the
    latter), every table those groups name; () where they do not (each
    table in one run, or the tables out of name order: the pieces then
    find out)."""
    column = names.index("table_id")
    spans = []
    for g in range(meta.num_row_groups):
        bounds = _bounds(meta.row_group(g).column(column).statistics)
        if bounds is None:
            return ()
        spans.append(bounds)
    overlap = next((g + 1 for g, (before, after) in enumerate(pairwise(spans))
                    if before[1] > after[0]), None)
    if len(spans) > 1 and overlap is None:
        return ()
    try:
        pf = pq.ParquetFile(path, metadata=meta, read_dictionary=["table_id"])
        samples = [next(pf.iter_batches(batch_size=SAMPLE_ROWS, columns=["table_id"],
                                        row_groups=[g])).column(0)
                   for g in dict.fromkeys((0, overlap or 0))]
    except Exception:  # noqa: BLE001 - the loader says what is wrong with it
        return ()
    if not any(interleaved([None if t is None else str(t).strip() for t in ids.to_pylist()])
               for ids in samples):
        return ()
    # (a text column's dictionary is its row group's: every table the group names)
    named = [ids.dictionary if pa.types.is_dictionary(ids.type) else pc.unique(ids)
             for ids in samples]
    return tuple(sorted({str(t).strip() for values in named for t in values.to_pylist()
                         if t is not None}))


def _text_interleaved(path: Path, body: bytes, size: int, tables) -> tuple[str, ...]:
    """`interleaved` of the whole lines of a text file's first bytes `body`,
    or of as many bytes from its middle (a file whose first hour is one
    table's), each line's table as written, unquoted (`tables`:
    `line_runs.JsonTables` or `CsvTables`); the tables both name. Their
    escapes are kept: the tables found only balance the ranges a file is
    sorted out by; each row goes by its table as read."""
    samples = [_named(body, tables)]
    if size > 4 * line_runs.EDGE_BYTES:
        try:
            with open(path, "rb") as fh:
                fh.seek(size // 2)
                block = fh.read(line_runs.EDGE_BYTES)
        except OSError:  # (the loader says what is wrong with it)
            block = b""
        samples.append(_named(block[block.find(b"\n") + 1:], tables))
    if not any(interleaved(names) for names in samples):
        return ()
    return tuple(sorted({n for names in samples for n in names if n is not None}))


def _named(block: bytes, tables) -> list[str | None]:
    """The table each whole line of `block` names, as written, unquoted."""
    written = (tables.written(line) for line in block.split(b"\n")[:-1])
    return [None if w is None else w.strip(b'"').decode("utf-8", "replace").strip()
            for w in written]


def cut_near(pf: pq.ParquetFile, starts: np.ndarray, row: int) -> int:
    """Where a piece cut at nominal row `row` really falls: the start or the
    end of the run of rows (one `table_id` as recorded) holding `row`,
    whichever is nearer (the start on a tie); 0 and the file's rows stay
    as they are. A pure function of the file and `row`, so the two pieces
    meeting at a cut find the same row."""
    n = int(starts[-1])
    if row <= 0 or row >= n:
        return max(0, min(row, n))
    ids = _Ids(pf, starts)
    value = ids.at(row)
    begin = ids.last_other(row, value) + 1
    if begin == row:
        return row
    end = ids.first_other(row, value, limit=row + (row - begin))
    return begin if row - begin <= end - row else end


class _Ids:
    """The `table_id` column of a file as recorded, a row group at a time,
    each read once."""

    def __init__(self, pf: pq.ParquetFile, starts: np.ndarray):
        self.pf, self.starts = pf, starts
        self.n = int(starts[-1])
        self.name = "table_id"
        self._groups: dict[int, pa.Array] = {}

    def group_of(self, row: int) -> int:
        return int(np.searchsorted(self.starts, row, side="right")) - 1

    def values(self, group: int) -> pa.Array:
        if group not in self._groups:
            self._groups[group] = self.pf.read_row_group(
                group, columns=[self.name], use_threads=False).column(0).combine_chunks()
        return self._groups[group]

    def at(self, row: int) -> pa.Scalar:
        group = self.group_of(row)
        value = self.values(group)[row - int(self.starts[group])]
        return value.value if isinstance(value, pa.DictionaryScalar) and value.is_valid \
            else value

    def _other(self, group: int, value: pa.Scalar) -> np.ndarray:
        """Where the row group's ids differ from `value` (a null from a
        value); text compared by its dictionary codes, not a string a row."""
        ids = self.values(group)
        if pa.types.is_dictionary(ids.type):
            code = pc.index(ids.dictionary, value).as_py() if value.is_valid else -2
            codes = ids.indices.to_numpy(zero_copy_only=False)
            differs = codes != code
            if ids.null_count:
                nulls = np.asarray(ids.is_null().to_numpy(zero_copy_only=False), dtype=bool)
                differs = ~nulls if not value.is_valid else (differs | nulls)
            return differs
        if value.is_valid:
            differs = pc.fill_null(pc.not_equal(ids, value), True)
        else:
            differs = pc.is_valid(ids)
        return np.asarray(differs.to_numpy(zero_copy_only=False), dtype=bool)

    def first_other(self, row: int, value: pa.Scalar, limit: int) -> int:
        """The first row at or after `row` whose id is not `value` (`limit`
        or the file's rows when none is found before them)."""
        group = self.group_of(row)
        while group < len(self.starts) - 1:
            first = int(self.starts[group])
            if first >= min(limit, self.n):
                break
            hits = np.flatnonzero(self._other(group, value)[max(0, row - first):])
            if len(hits):
                return max(row, first) + int(hits[0])
            group += 1
        return min(limit, self.n)

    def last_other(self, row: int, value: pa.Scalar) -> int:
        """The last row before `row` whose id is not `value` (-1 if none)."""
        group = self.group_of(row - 1)
        while group >= 0:
            first = int(self.starts[group])
            hits = np.flatnonzero(self._other(group, value)[:row - first])
            if len(hits):
                return first + int(hits[-1])
            group -= 1
        return -1


def shares_to_count(work: list) -> list[Piece]:
    """The pieces of `work` (`split`) whose nominal shares of their JSON
    Lines or CSV file the first pass counts the line breaks of (`count_share`):
    every piece but the last of a file cut in three or more. (Of a file cut
    in two, the second piece counts the first share as the pass would.)"""
    last: dict[int, int] = {}
    for item in work:
        if isinstance(item, Piece) and item.size:
            last[item.file] = max(last.get(item.file, 0), item.part)
    return [item for item in work if isinstance(item, Piece) and item.size
            and last[item.file] >= 2 and item.part < last[item.file]]


def count_share(piece: Piece) -> int | None:
    """In a worker: the line breaks in `piece`'s nominal bytes [start, stop)
    (`shares_to_count`); None when they cannot be read (the piece then
    counts for itself, and meets what is wrong with the file)."""
    try:
        return line_breaks_between(Path(piece.path), piece.start, piece.stop)
    except OSError:
        return None


def numbered(work: list, shares: list[Piece], counts: list[int | None]) -> list:
    """`work` with each piece whose file's earlier shares were all counted
    (`count_share` of each of `shares`) told its line breaks before its
    nominal start."""
    counted = {(s.file, s.part): c for s, c in zip(shares, counts, strict=True)}
    before: dict[tuple[int, int], int | None] = {}  # (file, part): its breaks before the part
    for file, part in sorted(counted):  # (a file's shares in order: one sum a file)
        known = before.get((file, part), 0 if part == 0 else None)
        share = counted[file, part]
        before[file, part + 1] = None if known is None or share is None else known + share
    out = []
    for item in work:
        if isinstance(item, Piece) and item.size and item.part \
                and before.get((item.file, item.part)) is not None:
            item = dataclasses.replace(item, breaks=before[item.file, item.part])
        out.append(item)
    return out


def piece_rows(piece: Piece) -> tuple[int, int]:
    """The rows [a, b) `piece` holds (a JSON Lines or CSV file's bytes; see
    module)."""
    if piece.size:
        path = Path(piece.path)
        tables = line_runs.JsonTables(piece.key) if plain_format(path) != "csv" else \
            _csv_tables(path, csv_format.header_record(path), piece.key)
        if tables is None:  # (the file changed since it was planned)
            raise csv_format.CutInsideRecord()
        return (line_runs.line_cut_near(path, piece.start, tables),
                line_runs.line_cut_near(path, piece.stop, tables))
    pf = pq.ParquetFile(piece.path, read_dictionary=["table_id"])
    starts = row_group_starts(pf.metadata)
    return cut_near(pf, starts, piece.start), cut_near(pf, starts, piece.stop)


def audit_piece(piece: Piece, job, progress, label: str | None = None):
    """In a worker: one piece of the file read, replayed and checked (a
    `BatchResult` with its `rows`); a `FileFailure` for a file that cannot
    be a log, as one reading of it says; `ReadWhole` when the file must be
    read whole (see module). `label`: the file's name in the reports (by
    default the job's label of the file, else its path)."""
    sites = job.sites or {}
    site = sites.get(piece.path, sites.get(label))  # (a dask worker's: by label)
    label = label if label is not None else (job.labels or {}).get(piece.path)

    def audit(rows: tuple[int, int], load) -> stream.BatchResult:
        if rows[0] >= rows[1]:  # (a table runs across the whole piece: its start's piece holds it)
            return stream.BatchResult(sort_findings([]), pd.DataFrame(), [], [], set(), 0, {},
                                      None)

        def logs() -> LoadedLogs:
            events, quarantine, loaded = load()
            progress.advance(files=1 if rows[0] == 0 else 0, events=loaded.rows_read)
            return logs_of(events, quarantine, loaded, job.read)
        return stream.audit_read(logs, job, progress)

    done = in_piece(piece, job.read, label, site, audit)
    if not isinstance(done, tuple):
        return done
    result, rows, seen = done
    return dataclasses.replace(result, rows=rows, file=seen)


def in_piece(piece: Piece, read: ReadOptions, label: str | None, site: str | None, use):
    """`use(rows, load)` on `piece` of its file, `rows` the rows [a, b) it
    holds (`piece_rows`), `load()` reading them (`load_file`'s events,
    quarantined rows and provenance): (what `use` gave, the rows, the file
    as it stood: `file_as_it_stands`); `ReadWhole` where the file must be
    read whole (see module); a `FileFailure` for a file that cannot be a
    log, as one reading of it says."""
    path = Path(piece.path)
    try:
        seen = file_as_it_stands(path)
        a, b = piece_rows(piece)

        def load():
            lines = (piece.start, piece.breaks) if piece.breaks >= 0 else None
            return load_file(path, label, read, site, piece=(a, b, a == 0, lines))
        done = use((a, b), load)
        if a < b and file_as_it_stands(path) != seen:  # (replaced while the piece read it)
            return ReadWhole()
    except (PieceOverShare, csv_format.CutInsideRecord, pa.ArrowException, OSError):
        return ReadWhole()
    except LogFileError:
        try:  # the error one reading of the whole file gives
            load_file(path, label, read, site)
        except LogFileError as exc:  # (named as given: a dask worker reads the absolute path)
            return stream.FileFailure.of(exc, label if label and str(exc.path) == str(path)
                                         else None)
        return ReadWhole()
    return done, (a, b), seen


def file_as_it_stands(path: Path) -> tuple[int, ...]:
    """What tells one file at `path` from another put there (a log renamed
    over while it is read, as an exporter replaces a file): its device,
    inode, size and time of change. A piece takes it before it opens the
    file and again once it has read it; the pieces of a file must all have
    read one file, or it is read whole, in one open (its hash and rows from
    one file: docs/limits.md)."""
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def join(work: list, results: list) -> tuple[list, list[int]]:
    """The results of `work` (`split`) with each split file's provenance
    joined into its first piece's (`joined_input`), the empty pieces left
    out; and the files to be read whole instead (see module): a piece asked
    for it, two pieces hold one table, or no row of the file was replayed
    (the whole file may be one problem). Their pieces' results are dropped."""
    out, whole = [], []
    k = 0
    while k < len(work):
        if not isinstance(work[k], Piece):
            out.append(results[k])
            k += 1
            continue
        end = k
        while end < len(work) and isinstance(work[end], Piece) and work[end].file == work[k].file:
            end += 1
        joined = _joined(results[k:end])
        if joined is None:
            whole.append(work[k].file)
        else:
            out += joined
        k = end
    return out, whole


def _joined(results: list) -> list | None:
    """One file's pieces' results, joined (`join`), or None to read it whole."""
    if any(not isinstance(r, stream.BatchResult) or r.rows is None for r in results):
        return None
    if len({r.file for r in results}) > 1:  # (the file was replaced between pieces)
        return None
    results = [r for r in results if r.rows[0] < r.rows[1]]
    named: set[str] = set()
    for r in results:
        if named & r.named:
            return None
        named |= r.named
    whole = one_file([f for r in results for f in r.inputs], [r.quarantine for r in results])
    if whole is None:
        return None
    return [dataclasses.replace(r, inputs=[whole] if k == 0 else [])
            for k, r in enumerate(results)]


def one_file(inputs: list, quarantines: list[pd.DataFrame]):
    """The provenance of a file read in pieces (each piece's that holds
    rows, in row order) joined (`joined_input`), or None where the file must
    be read whole: its pieces read other columns (a JSON line may leave
    keys out), more than one named an encoding to try (one reading names
    one, at the file's first text that is not UTF-8), or no row of it was
    replayed (the whole file may be one problem: `load._one_problem`)."""
    if len({frozenset(f.columns) for f in inputs}) > 1:
        return None
    if sum(hints_encoding(q) for q in quarantines) > 1:
        return None
    whole = joined_input(inputs)
    return whole if whole.rows_replayed else None
