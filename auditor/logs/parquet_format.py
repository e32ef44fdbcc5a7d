"""Read a Parquet log: text columns dictionary-encoded as stored, a column
at a time; a row is located by its 1-based row number."""

from __future__ import annotations

import hashlib
import io
import mmap
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from auditor.errors import ControlSignal, LogFileError, ran_out_of_memory
from auditor.logs.arrays import is_text_type
from auditor.logs.raw import (
    RawRejected,
    arrow_message,
    current_inflate_limits,
    ratio_cap,
    read_bytes,
    too_inflated,
    too_many_columns,
)

#: What a value of a cell costs beyond its bytes when decoded (an offset),
#: and at least what any cell costs (a number, a time): a row count alone
#: past the limits is refused before any column is read.
CELL_OVERHEAD = 4


def open_hashed(path: Path, hashed: bool = True):
    """A Parquet file mapped from ONE open, as the reader's source, and its
    SHA-256 (of exactly the bytes mapped; "" when not `hashed`: a piece of
    a split file other than its first, `auditor.run.pieces`)."""
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                return io.BytesIO(b""), hashlib.sha256(b"").hexdigest()
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:
        raise LogFileError(path, f"cannot be read: {getattr(exc, 'strerror', None) or exc}") \
            from None
    source = pa.BufferReader(pa.py_buffer(mapped))
    if not hashed:
        return source, ""
    digest = hashlib.sha256()
    view = memoryview(mapped)
    for at in range(0, len(view), 1 << 24):
        digest.update(view[at:at + (1 << 24)])
    view.release()
    return source, digest.hexdigest()


def read_parquet(path: Path, source=None, rows: tuple[int, int] | None = None):
    """The file's table; `source`: the file as already opened (`open_hashed`,
    or a .gz file's inflated bytes); `rows`: only rows [a, b) of it (a piece
    of a split file: `auditor.run.pieces`), each located by its row number
    in the whole file. Running out of memory while reading is said as such:
    a readable file is not unreadable evidence."""
    if source is None:
        source = io.BytesIO(read_bytes(path)) if path.name.lower().endswith(".gz") else path
    try:
        return _read_parquet(path, source, rows)
    except MemoryError:  # (pyarrow's ArrowMemoryError is one)
        raise ran_out_of_memory(path) from None


def _read_parquet(path: Path, source, rows: tuple[int, int] | None = None):
    footer = _footer(source)
    _refuse_wide(path, footer)
    packed = _size(path, source)
    try:
        try:
            # Text columns as Parquet stores them, dictionary-encoded: no
            # string per row is built, and every check looks at each
            # distinct value once.
            pf, names = _opened(path, source, packed, metadata=footer,
                                read_dictionary=_text_columns(footer))
            if len(set(names)) == len(names):
                table = _held(path, packed, _in_bounds(_parquet_columns(pf, names, rows)),
                              rows, pf.metadata.num_rows)
        except MemoryError:
            raise
        except (pa.ArrowException, OSError, UnicodeDecodeError):
            # A damaged file: read as before, so its error (or its rows) are
            # exactly what the plain reader gives, held to the same cap.
            if hasattr(source, "seek"):
                source.seek(0)
            pf, names = _opened(path, source, packed)
            if len(set(names)) == len(names):
                table = _held(path, packed, _parquet_columns(pf, names, rows), rows,
                              pf.metadata.num_rows)
    except MemoryError:
        raise
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        salvaged = _salvaged(path, source, packed, footer) if rows is None else None
        if salvaged is None:
            raise LogFileError(path, f"not a readable Parquet file: {arrow_message(exc)}") \
                from None
        table, names, rejected = salvaged
    else:
        rejected = RawRejected()
    if len(set(names)) != len(names):
        dupes = sorted(n for n, k in Counter(names).items() if k > 1)[:20]
        raise LogFileError(path, f"duplicate column(s): {', '.join(dupes)}")
    # Parquet has no lines; a row is located by its 1-based row number.
    first = rows[0] if rows is not None else 0
    return table, np.arange(first + 1, first + table.num_rows + 1, dtype=np.int64), rejected


def _salvaged(path: Path, source, packed: int, footer
              ) -> tuple[pa.Table, list[str], RawRejected] | None:
    """A file whose footer reads but some of whose pages do not decode,
    read a row group and a column at a time: every column chunk that
    decodes is kept, one that does not is read as nulls and its row
    group's rows are quarantined, each saying which columns of which row
    group could not be decoded and why (decision 135). A regulator's night
    with one damaged page is audited but for that page's rows, which are
    counted and listed, not lost: the rows of a row group are known from
    the footer whatever its pages hold. None where nothing can be salvaged
    (the footer cannot be read, names a column twice, or not one column
    chunk decodes): the file is then refused whole, as before. A piece of
    a split file is never salvaged: the file is then read whole
    (`auditor.run.pieces`), so that every engine reads it the same way."""
    if footer is None:
        return None
    if hasattr(source, "seek"):
        source.seek(0)
    try:
        pf, names = _opened(path, source, packed, metadata=footer,
                            read_dictionary=_text_columns(footer))
        groups = pf.metadata.num_row_groups
        starts = row_group_starts(pf.metadata).tolist()
        sizes = np.diff(starts).tolist()
        types = [pf.schema_arrow.field(name).type for name in names]
    except MemoryError:
        raise
    except (pa.ArrowException, OSError, UnicodeDecodeError, ValueError):
        return None
    if len(set(names)) != len(names) or not names or not groups:
        return None
    chunks: list[list[pa.Array]] = [[] for _ in names]
    damaged: dict[int, list[tuple[str, str]]] = {}
    for g in range(groups):
        for k, name in enumerate(names):
            try:
                column = _in_bounds(pf.read_row_group(g, columns=[name], use_threads=False)
                                    ).column(0)
                if column.type != types[k] or len(column) != sizes[g]:
                    raise pa.ArrowInvalid(f"decoded as {column.type}, {len(column)} rows")
                chunks[k] += column.chunks
            except MemoryError:
                raise
            except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
                damaged.setdefault(g, []).append((name, arrow_message(exc)))
                try:
                    chunks[k].append(pa.nulls(sizes[g], types[k]))
                except (pa.ArrowException, ValueError, TypeError):
                    return None  # (a type without nulls of its own: refused whole)
    if len(damaged) == groups and all(len(d) == len(names) for d in damaged.values()):
        return None  # (not one page decodes: not a file to audit in part)
    table = pa.table([pa.chunked_array(c, type=t) for c, t in zip(chunks, types)], names=names)
    _refuse_decoding(path, packed, table)
    rejected = RawRejected()
    for g, lost in damaged.items():
        reason = (f"row group {g + 1} of {groups} (rows {starts[g] + 1:,}-{starts[g + 1]:,}) "
                  f"could not be decoded in column(s) {', '.join(n for n, _ in lost)}: "
                  f"{lost[0][1]}")
        rejected.cell_problems.update({row: [reason] for row in range(starts[g], starts[g + 1])})
        rejected.notes.append(f"{reason}: its {sizes[g]:,} row(s) quarantined")
    return table, names, rejected


def _in_bounds(table: pa.Table) -> pa.Table:
    """`table`, its dictionary-encoded columns checked: Arrow's reader of
    dictionaries takes a damaged page's indices as they are (past the end
    of the dictionary: found by hand, 2026-12-07, an internal error where
    the file's rows were typed), where its plain reader refuses them. One
    pass over each chunk's indices as numpy sees their buffer (a null's
    slot may hold anything: a slot out of bounds is asked of Arrow again,
    nulls passed over); ArrowInvalid where one is out of bounds (the file
    is then read plainly, and its error is that read's). About 10 ms at
    3.6M rows (Arrow's own checks: 40-65 ms)."""
    for column in table.columns:
        if not pa.types.is_dictionary(column.type):
            continue
        for chunk in column.chunks:
            indices, size = chunk.indices, len(chunk.dictionary)
            buffer = indices.buffers()[1]
            if not len(indices) or buffer is None:
                continue
            raw = np.frombuffer(buffer, dtype=indices.type.to_pandas_dtype(),
                                count=len(indices) + indices.offset)[indices.offset:]
            if raw.min() >= 0 and raw.max() < size:
                continue
            bounds = pc.min_max(indices)
            low, high = bounds["min"].as_py(), bounds["max"].as_py()
            if low is not None and (low < 0 or high >= size):
                raise pa.ArrowInvalid("Index not in dictionary bounds")
    return table


def _held(path: Path, packed: int, table: pa.Table, rows: tuple[int, int] | None,
          file_rows: int) -> pa.Table:
    """`table` (the file's columns, or rows [a, b) of them) if it decodes
    within the file's cap (`_refuse_decoding`) or, for a piece, its share of
    it (`_within_share`)."""
    if rows is None:
        _refuse_decoding(path, packed, table)
    else:
        _within_share(path, packed, table, rows, file_rows)
    return table


def _opened(path: Path, source, packed: int, **options) -> tuple[pq.ParquetFile, list[str]]:
    """The file opened (`options`: ParquetFile's) and its column names; a
    file whose rows alone would decode past its limit is refused from its
    footer, before any column is read."""
    pf = pq.ParquetFile(source, **options)
    names = pf.schema_arrow.names
    _refuse_decoding(path, packed, pf.metadata.num_rows * len(names) * CELL_OVERHEAD)
    return pf, names


def _size(path: Path, source) -> int:
    """The Parquet file's size in bytes (a .gz file's: inflated)."""
    if isinstance(source, io.BytesIO):
        return source.getbuffer().nbytes
    if isinstance(source, pa.NativeFile):
        return source.size()
    return path.stat().st_size


def _refuse_decoding(path: Path, packed: int, decoded) -> None:
    """LogFileError for a file whose columns decode to more than the ratio
    a .gz file inflates within (`--max-inflate-ratio` times its size; 16 MiB
    always allowed): a 94 KB file whose dictionary holds one 900 KB value
    used by 7,000 rows decodes to 6.3 GB, and every step after the reader
    (a quarantined row as recorded, a finding's evidence, a column not in
    the spec) may need it decoded. A log's Parquet file decodes to 9 to 16
    times its size; the ratio alone is held (not `--max-inflated-bytes`: a
    large file, like a large CSV file, is not a bomb). `decoded`: the
    bytes, or the table (measured against the cap: `decoded_bytes`)."""
    limits = current_inflate_limits()
    cap = ratio_cap(packed, limits)
    if isinstance(decoded, pa.Table):
        decoded = decoded_bytes(decoded, cap)
    if decoded > cap:
        raise LogFileError(path, too_inflated(packed, limits, True,
                                              verb="its columns decode to"))


class PieceOverShare(ControlSignal):
    """A piece of a split file decodes past its share of the file's cap
    (`_within_share`): whether the whole file would be refused is not known
    from the piece, so the file is read whole."""


def _within_share(path: Path, packed: int, table: pa.Table, rows: tuple[int, int],
                  file_rows: int) -> None:
    """PieceOverShare unless rows [a, b) of a file of `file_rows` rows
    decode within their share of the cap `_refuse_decoding` holds the whole
    file to: every piece within its share, the file is within the cap, and
    is not refused (as one reading of it would not refuse it)."""
    cap = ratio_cap(packed, current_inflate_limits())
    share = cap * (rows[1] - rows[0]) // max(1, file_rows)
    if decoded_bytes(table, share) > share:
        raise PieceOverShare(path)


def decoded_bytes(table: pa.Table, cap: int) -> int:
    """What `table`'s columns take decoded, or a bound of it no larger than
    `cap`. A dictionary column (text, as read) is first bounded by its
    longest value times its rows, from the dictionary alone (a few distinct
    values: no pass over the rows); only when the bounds pass `cap` are its
    values' lengths summed row by row. Any other column is what it holds.
    Coarsest first: a dictionary's own bytes bound its longest value, with
    no Arrow call (two a column cost a small file a fifth of a millisecond)."""
    fixed, pieces = 0, []
    for column in table.columns:
        if pa.types.is_dictionary(column.type):
            pieces += [chunk for chunk in column.chunks if len(chunk)]
        else:
            fixed += column.nbytes
    overhead = CELL_OVERHEAD * sum(len(chunk) for chunk in pieces)
    coarse = fixed + overhead + sum(chunk.dictionary.nbytes * len(chunk) for chunk in pieces)
    if coarse <= cap:
        return coarse
    lengths = [pc.binary_length(chunk.dictionary) for chunk in pieces]
    bound = fixed + overhead + sum((pc.max(n).as_py() or 0) * len(chunk)
                                   for n, chunk in zip(lengths, pieces))
    if bound <= cap:
        return bound
    return fixed + overhead + sum(pc.sum(n.take(chunk.indices)).as_py() or 0
                                  for n, chunk in zip(lengths, pieces))


def _footer(source) -> pq.FileMetaData | None:
    """The file's footer, read once for every use of it (the column count,
    the text columns, the file opened: three readings of it cost about a
    quarter of a millisecond more a file); None when it cannot be read."""
    try:
        return pq.read_metadata(source)
    except (pa.ArrowException, OSError, UnicodeDecodeError):
        return None
    finally:
        if hasattr(source, "seek"):
            source.seek(0)


def _refuse_wide(path: Path, footer: pq.FileMetaData | None) -> None:
    """LogFileError for a file of more than MAX_COLUMNS columns, from its
    footer alone (a footer that cannot be read: the reader says why)."""
    if footer is None:
        return
    try:
        count = len(footer.schema.to_arrow_schema().names)
    except (pa.ArrowException, OSError, UnicodeDecodeError):
        return
    if (problem := too_many_columns(count)) is not None:
        raise LogFileError(path, f"the file has {problem}")


def time_assumptions(table: pa.Table) -> list[str]:
    """What reading a Parquet `ts` column assumes, to be said in the
    provenance: a timestamp without a time zone is taken as UTC, a date as
    midnight UTC (the format asks for an offset; these types carry none)."""
    if "ts" not in table.column_names:
        return []
    t = table.schema.field("ts").type
    if pa.types.is_timestamp(t) and t.tz is None:
        return ["ts is a Parquet timestamp without a time zone: read as UTC"]
    if pa.types.is_date(t):
        return [f"ts is a Parquet date ({t}, no time of day): read as midnight UTC"]
    return []


def _text_columns(footer: pq.FileMetaData | None) -> list[str]:
    """The top-level text and binary columns of a Parquet file, from its
    footer (none when it cannot be read: opening the file then fails, and
    the plain reader gives the error)."""
    if footer is None:
        return []
    return [f.name for f in footer.schema.to_arrow_schema() if is_text_type(f.type)]


#: Whether a Parquet column is decoded on Arrow's thread pool (see `_parquet_columns`).
PARQUET_THREADS = True


def _parquet_columns(pf: pq.ParquetFile, names: list[str],
                     rows: tuple[int, int] | None = None) -> pa.Table:
    """The file's columns one at a time: a large file is read with a
    column's worth of memory to spare, not the whole table's (every row
    group read at once, then joined), and quicker. Every column keeps one
    piece per row group, as read: the file is typed a row group at a time
    (`load._slices`), so joining the pieces would only copy them (and a
    dictionary column's pieces each have their own dictionary). `rows`:
    only rows [a, b), from the row groups that hold them."""
    if rows is not None:
        return _rows_of(pf, names, *rows)
    groups = pf.metadata.num_row_groups
    if groups <= 1 or not names:
        return pf.read(use_threads=False)
    return _groups_columns(pf, names, range(groups))


def _groups_columns(pf: pq.ParquetFile, names: list[str], groups: range,
                    per_group: bool = False) -> pa.Table:
    """Row groups `groups` of the file, a column at a time (`_parquet_columns`);
    `per_group`: every column in one piece a row group, as text columns are
    (a piece of a file is typed a row group at a time whatever its rows'
    first row: `load._cuts`)."""
    columns = []
    for name in names:
        if not per_group and not pa.types.is_dictionary(pf.schema_arrow.field(name).type):
            columns.append(pf.read_row_groups(list(groups), columns=[name],
                                              use_threads=PARQUET_THREADS).column(0)
                           if len(groups) < pf.metadata.num_row_groups
                           else pf.read(columns=[name], use_threads=PARQUET_THREADS).column(0))
            continue
        # A text column read as a dictionary a row group at a time: read
        # whole, its reader was found to zero its growing buffer again for
        # every row group it takes in (8 % of a 10M audit's instructions in
        # memset, for ten row groups); it is kept in those pieces anyway.
        pieces = [pf.read_row_group(group, columns=[name], use_threads=PARQUET_THREADS).column(0)
                  for group in groups]
        columns.append(pa.chunked_array([c for piece in pieces for c in piece.chunks],
                                        type=pieces[0].type))
    return pa.table(columns, names=names)


def _rows_of(pf: pq.ParquetFile, names: list[str], a: int, b: int) -> pa.Table:
    """Rows [a, b) of the file: the row groups holding them read (as
    `_parquet_columns` reads them), the last one only up to row b when the
    rows end inside it (its batches decoded until then), then sliced."""
    starts = row_group_starts(pf.metadata)
    first = max(0, int(np.searchsorted(starts, a, side="right")) - 1)
    last = max(first, int(np.searchsorted(starts, b, side="left")) - 1)
    last = min(last, pf.metadata.num_row_groups - 1)
    if not names or last < first or b <= a:
        return pf.schema_arrow.empty_table()
    whole = range(first, last if b < starts[last + 1] else last + 1)
    parts = [_groups_columns(pf, names, whole, per_group=True)] if len(whole) else []
    if b < starts[last + 1]:  # the last row group's head only
        parts.append(_head(pf, names, last, b - int(starts[last])))
    table = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
    return table.slice(a - int(starts[first]), b - a)


def _head(pf: pq.ParquetFile, names: list[str], group: int, rows: int) -> pa.Table:
    """The first `rows` rows of row group `group`, decoded as one batch (one
    piece a column, as a whole row group is read) and no further."""
    batches = pf.iter_batches(batch_size=max(1, rows), row_groups=[group], columns=names,
                              use_threads=PARQUET_THREADS)
    try:
        return pa.Table.from_batches([next(batches)], schema=pf.schema_arrow)
    finally:
        batches.close()


def row_group_starts(metadata) -> np.ndarray:
    """The first row of each row group, and the file's row count after them."""
    sizes = [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)]
    return np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)
