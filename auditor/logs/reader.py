"""Find log files and read each into a pyarrow Table, remembering where every
row came from.

Reading is deliberately lenient about *values* (every CSV/JSON cell is read
as text, bad rows are kept) and strict about *files*: a file that cannot be a
log at all raises `LogFileError`, which the CLI turns into one line and exit 2.
Value checking happens afterwards, vectorised, in `auditor.logs.coerce`, so a
wrong cell quarantines one row instead of failing the whole file.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import hashlib
import io
import json
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from auditor.errors import LogFileError
from auditor.logs.schema import COLUMN_NAMES, REQUIRED_COLUMNS

LOG_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".parquet")

#: The largest cell accepted, in bytes of UTF-8. A longer cell quarantines
#: its row (the reason names the column and the size) and is kept in the
#: quarantine only as its first CELL_KEEP_CHARS characters.
MAX_CELL_BYTES = 1 << 20
CELL_KEEP_CHARS = 200


@dataclass
class RawRejected:
    """Rows the parser itself could not split into columns (wrong cell count,
    unparseable JSON). They are quarantined like any malformed row."""

    lines: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


@dataclass
class RawLog:
    """One input file as read: its table, the physical line of each row, and
    what the parser rejected before any value was looked at."""

    path: str
    sha256: str
    fmt: str
    table: pa.Table
    lines: np.ndarray
    rejected: RawRejected
    #: row index -> what the reader found wrong in its cells (text that is
    #: not UTF-8, a cell over MAX_CELL_BYTES); coercion quarantines these rows.
    cell_problems: dict[int, list[str]] = field(default_factory=dict)


def log_format(path: Path) -> str | None:
    """The format a file name announces (`csv`, `jsonl`, `parquet`), or None."""
    name = path.name.lower()
    name = name.removesuffix(".gz")
    for suffix in LOG_SUFFIXES:
        if name.endswith(suffix):
            return "jsonl" if suffix == ".ndjson" else suffix[1:]
    return None


def discover(paths: list[str | Path]) -> list[Path]:
    """Every log file named or found (recursively) under the given paths, in a
    stable order so two runs read the same files in the same order."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(
                p for p in sorted(path.rglob("*")) if p.is_file() and log_format(p)
            )
        elif path.is_file():
            if not log_format(path):
                raise LogFileError(
                    path, "not a log file name (expected .csv, .jsonl, .ndjson or "
                    ".parquet, optionally .gz)"
                )
            found.append(path)
        else:
            raise LogFileError(path, "no such file or folder")
    unique: dict[str, Path] = {}
    for p in found:
        unique.setdefault(str(p.resolve()), p)
    return list(unique.values())


def discover_logs(paths: list[str | Path]) -> list[Path]:
    """`discover`, and a LogFileError when nothing under `paths` is a log: an
    audit of nothing must not pass as an audit that found nothing."""
    files = discover(paths)
    if not files:
        raise LogFileError(", ".join(map(str, paths)), "no log files found "
                           "(.csv, .jsonl, .ndjson, .parquet, optionally .gz)")
    return files


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_bytes(path: Path) -> bytes:
    try:
        if path.name.lower().endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise LogFileError(path, f"cannot be read: {exc}") from None


def read_log(path: Path) -> RawLog:
    """Read one file; raise LogFileError when it cannot be a log."""
    fmt = log_format(path)
    gz = path.name.lower().endswith(".gz")
    streamed = _read_csv_streamed(path) if fmt == "csv" and not gz else None
    if streamed is not None:
        digest, (table, lines, rejected) = streamed
    else:
        table, lines, rejected, digest = _read_whole(path, fmt, gz)
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise LogFileError(path, f"missing required column(s): {', '.join(missing)}")
    if table.num_rows == 0 and not rejected.lines:
        raise LogFileError(path, "the file holds no events")
    table, cell_problems = _plain_cells(table)
    return RawLog(str(path), digest, fmt, table, lines, rejected, cell_problems)


def _read_whole(path: Path, fmt: str, gz: bool):
    """A file read whole (the one way for Parquet, JSON Lines and gzip; for
    a CSV file the streamed read cannot take): its table, lines, rejected
    rows and SHA-256."""
    whole = None  # a plain text file's bytes: read once, hashed as read
    try:
        if fmt == "parquet" or gz:
            digest = sha256_of(path)
        else:
            whole = path.read_bytes()
            digest = hashlib.sha256(whole).hexdigest()
    except OSError as exc:
        raise LogFileError(path, f"cannot be read: {exc.strerror or exc}") from None
    if fmt == "parquet":
        return (*_read_parquet(path), digest)
    data = _utf8(path, _read_bytes(path) if whole is None else whole)
    del whole
    if not data or data.isspace():  # (not data.strip(): no copy of a large file)
        raise LogFileError(path, "the file is empty")
    read = _read_csv if fmt == "csv" else _read_jsonl
    return (*read(path, data), digest)


def _utf8(path: Path, data: bytes) -> bytes:
    """The text of a CSV or JSON Lines file as UTF-8: a UTF-8 byte order mark
    is dropped, a UTF-16 file (with its mark) is transcoded."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:]
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        raise LogFileError(path, "UTF-32 text is not supported (write UTF-8)")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16").encode("utf-8")
        except UnicodeError as exc:
            raise LogFileError(path, f"not UTF-16 text despite its byte order mark: {exc}") \
                from None
    return data


# --- cells every reader hands on -------------------------------------------------

def _plain_cells(table: pa.Table) -> tuple[pa.Table, dict[int, list[str]]]:
    """Every column as one of the types coercion expects (text, numbers,
    timestamps), with each cell that cannot be used as read noted for its row:
    text that is not UTF-8 (kept with its bad bytes escaped as \\xNN) and a cell
    over MAX_CELL_BYTES (kept truncated). Nested values become JSON text.
    Chunk by chunk, and a chunk with nothing to change is kept as it is: no
    copy of a large file's columns."""
    problems: dict[int, list[str]] = {}
    columns = []
    for name, col in zip(table.column_names, table.columns):
        chunks, start = [], 0
        for chunk in col.chunks:
            chunks.append(_plain_chunk(name, chunk, start, problems))
            start += len(chunk)
        types = {c.type for c in chunks}
        if len(types) > 1:  # e.g. one chunk's nested values made text
            chunks = [c.cast(pa.string()) for c in chunks]
        columns.append(pa.chunked_array(chunks, chunks[0].type) if chunks
                       else pa.chunked_array([], _plain_type(col.type)))
    return pa.table(columns, names=table.column_names), problems


def _plain_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t) \
            or pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_timestamp(t) \
            or pa.types.is_boolean(t) or pa.types.is_null(t):
        return t
    return pa.string()


def _plain_chunk(name: str, col: pa.Array, start: int,
                 problems: dict[int, list[str]]) -> pa.Array:
    t = col.type
    if pa.types.is_dictionary(t):
        if _is_text_type(t.value_type):
            return _checked_dictionary(name, col, start, problems)
        col = col.dictionary_decode()
        t = col.type
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or \
            pa.types.is_fixed_size_binary(t):
        col = col.cast(pa.binary()).view(pa.string())
    elif pa.types.is_nested(t):
        col = pa.array([_nested_text(name, start + r, v, problems)
                        for r, v in enumerate(col.to_pylist())], pa.string())
    elif _plain_type(t) != t:
        try:
            col = col.cast(pa.string())
        except (pa.ArrowException, ValueError):
            col = pa.array([None if v is None else str(v) for v in col.to_pylist()],
                           pa.string())
    if (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)) \
            and col.null_count < len(col):
        col = _checked_text(name, col, start, problems)
    return col


def _is_text_type(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
        or pa.types.is_large_binary(t)


def _checked_dictionary(name: str, col: pa.DictionaryArray, start: int,
                        problems: dict[int, list[str]]) -> pa.DictionaryArray:
    """A dictionary-encoded text column (Parquet's own dictionary pages, CSV
    read as dictionaries) checked like `_checked_text`, but once per distinct
    value: a problem found in a value is noted for every row holding it."""
    values = kept = col.dictionary
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = values.cast(pa.binary()).view(pa.string())
    found: dict[int, list[str]] = {}
    if values.null_count < len(values):
        values = _checked_text(name, values, 0, found)
    if values is kept:
        return col
    if found:
        bad = np.zeros(len(values) + 1, dtype=bool)
        bad[list(found)] = True
        codes = dictionary_codes(col)
        for r in np.flatnonzero(bad[codes]).tolist():
            problems.setdefault(start + r, []).extend(found[int(codes[r])])
    return pa.DictionaryArray.from_arrays(col.indices, values)


def dictionary_codes(col: pa.DictionaryArray) -> np.ndarray:
    """Each row's index into the dictionary of `col`, a null row as
    len(dictionary): `per_value_with_one_more[codes]` is then per row."""
    indices = col.indices
    if indices.null_count:
        indices = pc.fill_null(indices, len(col.dictionary))
    return indices.to_numpy(zero_copy_only=False)


def per_row(col, per_value, null_value) -> np.ndarray:
    """`per_value(text array) -> numpy array` worked out for each row of `col`
    (text, plain or dictionary-encoded, chunked or not): once per distinct
    value where the column is dictionary-encoded; `null_value` for a null row
    of a dictionary."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    parts = []
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            values = np.append(per_value(chunk.dictionary), null_value)
            parts.append(values[dictionary_codes(chunk)])
        else:
            parts.append(per_value(chunk))
    if not parts:
        return np.zeros(0, dtype=np.asarray(null_value).dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _any_value(col, test) -> bool:
    """Whether `test(text array)` holds for any chunk of `col`, looking at a
    dictionary-encoded chunk's dictionary only."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    return any(test(c.dictionary if pa.types.is_dictionary(c.type) else c) for c in chunks)


def _nested_text(name: str, r: int, value, problems: dict[int, list[str]]) -> str | None:
    """A nested value (list, struct, map) as JSON text: never a log cell, so
    coercion rejects it where a value is expected; extra columns keep it."""
    if value is None:
        return None
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (RecursionError, ValueError):
        problems.setdefault(r, []).append(f"{name} is nested too deeply")
        return "[nested too deeply]"


def _checked_text(name: str, col: pa.Array, start: int,
                  problems: dict[int, list[str]]) -> pa.Array:
    """`col` (rows from `start`) with text that is not UTF-8 escaped and cells
    over MAX_CELL_BYTES truncated, each noted for its row; as it was when
    there is neither."""
    try:
        col.validate(full=True)
        utf8_ok = True
    except pa.ArrowInvalid:
        utf8_ok = False
    if not utf8_ok:
        large = pa.types.is_large_string(col.type)
        values = col.view(pa.large_binary() if large else pa.binary()).to_pylist()
        texts = []
        for r, v in enumerate(values):
            if v is None:
                texts.append(None)
                continue
            try:
                texts.append(v.decode("utf-8"))
            except UnicodeDecodeError:
                texts.append(v.decode("utf-8", "backslashreplace"))
                problems.setdefault(start + r, []).append(f"{name} is not UTF-8 text")
        col = pa.array(texts, col.type)
    sizes = pc.binary_length(col)
    if (pc.max(sizes).as_py() or 0) > MAX_CELL_BYTES:
        big = np.flatnonzero(pc.fill_null(
            pc.greater(sizes, MAX_CELL_BYTES), False).to_numpy(zero_copy_only=False))
        values = col.to_pylist()
        for r in big.tolist():
            size = len(values[r].encode("utf-8"))
            problems.setdefault(start + r, []).append(
                f"{name} is {size} bytes; a cell may hold at most {MAX_CELL_BYTES}")
            values[r] = f"{values[r][:CELL_KEEP_CHARS]}… [{size} bytes, truncated]"
        col = pa.array(values, col.type)
    return col


# --- CSV -------------------------------------------------------------------

def _read_csv(path: Path, data: bytes):
    """A CSV file's table, physical lines and rejected rows, from its bytes."""
    # The header is the first record, which may hold quoted line breaks.
    names, header_lines = _csv_names(path, data[:_header_end(data)])
    # Arrow cannot hand a row with the wrong cell count to the handler when the
    # row is not UTF-8 (the whole file would fail): bytes that are not UTF-8
    # are marked while Arrow parses, and put back afterwards.
    marked = not _is_utf8(data)
    if marked:
        data = data.decode("utf-8", _MARK_ERRORS).encode("utf-8")
    table, collected = _parse_csv(path, io.BytesIO(data), names, header_lines)
    if marked:
        table = _unmarked(table)
        collected[:] = [(n, _MARKS.sub(_mark_escape, t), e, a) for n, t, e, a in collected]
    return _csv_rows(table, collected, names, header_lines, b'"' in data)


def _read_csv_streamed(path: Path):
    """A plain CSV file read as Arrow parses it, a block at a time, hashed
    and checked for UTF-8 as read: no copy of the whole file is made (10M
    events: 860 MB neither faulted in nor copied again block by block).
    (SHA-256, (table, lines, rejected)), or None where the whole read is
    needed (a byte order mark, text that is not UTF-8, a start that is
    blank or holds no whole header, any error): that read then gives what
    it always gave, error or rows."""
    try:
        with open(path, "rb") as fh:
            source = _CheckedReader(fh)
            first = source.peek(CSV_BLOCK_BYTES)
            end = _header_end(first)
            if end >= len(first) or first.isspace() or first.startswith(_BYTE_ORDER_MARKS):
                return None
            names, header_lines = _csv_names(path, first[:end])
            del first
            table, collected = _parse_csv(path, source, names, header_lines)
            source.finish()
    except (LogFileError, OSError, ValueError, pa.ArrowException, _NotUtf8):
        return None  # (the whole read tells what is wrong, as it always has)
    return source.hexdigest(), _csv_rows(table, collected, names, header_lines, source.quoted)


_BYTE_ORDER_MARKS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


class _NotUtf8(Exception):
    """Raised by `_CheckedReader` at the first bytes that are not UTF-8."""


class _CheckedReader:
    """A file as Arrow's CSV parser reads it, hashed (SHA-256) and checked
    for UTF-8 as read; `quoted`: whether any byte is a quote. Bytes that are
    not UTF-8 stop the parse (`_NotUtf8`) before Arrow reaches their record
    (a record with the wrong cell count that is not UTF-8 cannot be handed
    on). Each read gives as many bytes as asked (fewer at the end), as a
    whole file's io.BytesIO does, so the blocks are the same."""

    def __init__(self, fh):
        self._fh = fh
        self._digest = hashlib.sha256()
        self._pending = b""  # peeked, not read yet
        self._tail = b""  # the last bytes read, when they may be part of a character
        self.quoted = False
        self.closed = False

    def peek(self, size: int) -> bytes:
        self._pending = self._take(size)
        return self._pending

    def read(self, size: int = -1) -> bytes:
        pending, self._pending = self._pending, b""
        if size is not None and 0 <= size < len(pending):
            self._pending = pending[size:]
            return pending[:size]
        more = self._take(-1 if size is None or size < 0 else size - len(pending))
        return pending + more if pending and more else pending or more

    def finish(self) -> None:
        """Read to the end (Arrow does; this makes sure)."""
        while self._take(CSV_BLOCK_BYTES):
            pass

    def hexdigest(self) -> str:
        return self._digest.hexdigest()

    def _take(self, size: int) -> bytes:
        data = self._fh.read(size)
        self._digest.update(data)
        self.quoted = self.quoted or b'"' in data
        if data:
            self._check(data)
        elif self._tail and not _is_utf8(self._tail):  # the end: its last character
            raise _NotUtf8()
        return data

    def _check(self, data: bytes) -> None:
        """UTF-8 of `data` following the bytes before: a character split
        between reads is checked whole (the previous tail with the
        continuation bytes that open `data`; a few bytes read at a time are
        carried along until they are more than a character)."""
        if len(self._tail) + len(data) <= 8:
            data, self._tail = self._tail + data, b""
        lead = 0  # continuation bytes (10xxxxxx) opening data: at most 3 belong before
        while lead < min(3, len(data)) and data[lead] & 0xC0 == 0x80:
            lead += 1
        end = len(data)  # data[end:]: a last character that may go on in the next read
        for k in range(1, min(4, len(data) - lead) + 1):
            if data[-k] & 0xC0 != 0x80:  # the last byte that starts a character
                if data[-k] >= 0xC0:
                    end = len(data) - k
                break
        if not (_is_utf8(self._tail + data[:lead]) and _is_utf8(memoryview(data)[lead:end])):
            raise _NotUtf8()
        self._tail = data[end:]


def _csv_names(path: Path, header: bytes) -> tuple[list[str], int]:
    """The column names of a CSV header record (its bytes up to its line
    break) and the physical lines it spans."""
    if len(header) > MAX_CELL_BYTES:
        raise LogFileError(path, f"the header is {len(header)} bytes; at most {MAX_CELL_BYTES} "
                           "are accepted (an unclosed quote?)", line=1)
    header_lines = header.count(b"\n") + 1  # physical lines it spans
    try:
        names = [n.strip() for n in _csv_header(header.rstrip(b"\r"))]
    except UnicodeDecodeError:
        raise LogFileError(path, "the header line is not UTF-8 text", line=1) from None
    except StopIteration:  # an empty first line: no columns
        names = []
    except csv.Error as exc:
        raise LogFileError(path, f"the header is not a CSV record: {exc}", line=1) from None
    if len(set(names)) != len(names):
        dupes = sorted(n for n, k in Counter(names).items() if k > 1)[:20]
        raise LogFileError(path, f"duplicate column(s) in header: {', '.join(dupes)}", line=1)
    return names, header_lines


def _parse_csv(path: Path, source, names: list[str], header_lines: int):
    """Arrow's parse of the records after the header: the table, and the
    records with the wrong cell count as (number, text, expected, actual)."""
    collected: list[tuple[int | None, str, int, int]] = []

    def on_invalid(row):
        collected.append((row.number, row.text, row.expected_columns, row.actual_columns))
        return "skip"

    try:
        table = pa_csv.read_csv(
            source,
            # One thread: with line breaks allowed in quoted values, Arrow
            # finds where blocks start on one thread anyway, and parsing on
            # more cost more CPU time (10M events: 9 s against 7.5 s), more
            # memory and, on two cores, more wall time; it also numbers every
            # bad record. Small blocks: their buffers are reused, not faulted
            # in afresh (4 MB: 0.7 s of kernel time fewer than 16 MB).
            read_options=pa_csv.ReadOptions(use_threads=False, column_names=names,
                                            skip_rows=header_lines, block_size=CSV_BLOCK_BYTES),
            parse_options=pa_csv.ParseOptions(newlines_in_values=True,
                                              ignore_empty_lines=False,
                                              invalid_row_handler=on_invalid),
            convert_options=pa_csv.ConvertOptions(
                column_types={n: _CSV_DICTIONARY if n in CSV_DICTIONARY_COLUMNS else pa.string()
                              for n in names},
                # An empty cell read as null (quoted, as "": made null below):
                # read as "", it would be hashed into every block's dictionary.
                strings_can_be_null=True, null_values=[""], quoted_strings_can_be_null=False,
                check_utf8=False,  # a cell that is not UTF-8 quarantines its row only
            ),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        raise LogFileError(path, f"not parseable as CSV: {_arrow_message(exc)}") from None
    return table, collected


def _csv_rows(table: pa.Table, collected: list, names: list[str], header_lines: int,
              quoted: bool):
    """The parsed table (blank records dropped, empty cells null), each
    row's physical line, and the rejected records; `quoted`: whether the
    file holds a quote (only a quoted value holds a line break)."""
    rejected = RawRejected()
    # Record numbers: Arrow numbers the records after the skipped header lines
    # from header_lines + 1, in file order.
    bad_records = sorted((c[0] or 0) for c in collected)
    n_valid = table.num_rows
    total_records = n_valid + len(bad_records)
    all_records = np.arange(header_lines + 1, total_records + header_lines + 1, dtype=np.int64)
    valid_records = all_records[:n_valid] if not bad_records else np.setdiff1d(
        all_records, np.asarray(bad_records, dtype=np.int64), assume_unique=True)[:n_valid]
    # Records holding quoted newlines, valid or not, push later physical lines down.
    extra = None
    for name in names if quoted else ():
        col = table.column(name)
        if _any_value(col, _holds_line_break):
            breaks = per_row(col, lambda v: pc.fill_null(pc.count_substring(v, "\n"), 0)
                             .to_numpy(zero_copy_only=False), 0)
            extra = breaks if extra is None else extra + breaks
    collected.sort(key=lambda c: c[0] or 0)
    bad_extras = [c[1].count("\n") for c in collected]
    if extra is None and not any(bad_extras):  # (nearly always) every record one line
        lines, shift = valid_records, [0] * len(collected)
    else:
        numbers = np.concatenate([valid_records, np.asarray(bad_records, dtype=np.int64)])
        extras = np.concatenate([np.zeros(n_valid, dtype=np.int64) if extra is None else extra,
                                 np.asarray(bad_extras, dtype=np.int64)])
        order = np.argsort(numbers, kind="stable")
        moved = np.empty_like(extras)
        moved[order] = np.cumsum(extras[order]) - extras[order]  # line breaks before each record
        lines, shift = valid_records + moved[:n_valid], moved[n_valid:].tolist()
    for (number, text, expected, actual), moved in zip(collected, shift):
        rejected.lines.append(int((number or 0) + moved))
        rejected.texts.append(_clip(text))
        rejected.reasons.append(f"row has {actual} cells, the header has {expected}")
    # Blank lines are not rows: drop records whose every cell is empty.
    blank = _blank_records(table)
    if len(blank):
        nonblank = np.ones(n_valid, dtype=bool)
        nonblank[blank] = False
        table = table.filter(pa.array(nonblank))
        lines = lines[nonblank]
    table = _empty_to_null(table)
    return table, lines, rejected


def _blank_records(table: pa.Table) -> np.ndarray:
    """The rows whose every cell is empty: those of the first column, then of
    those the ones empty in the next column, and so on (a whole column is
    looked at once, the others at the few rows left)."""
    rows = None
    for name in table.column_names:
        col = table.column(name)
        if rows is not None:
            if not len(rows):
                break
            col = col.take(pa.array(rows))
        empty = per_row(col, lambda v: pc.fill_null(pc.equal(v, ""), True).to_numpy(
            zero_copy_only=False), True)  # (a null cell, were there one, counts as empty)
        rows = np.flatnonzero(empty) if rows is None else rows[empty]
    return np.zeros(0, dtype=np.int64) if rows is None else rows


def _holds_line_break(text: pa.Array) -> bool:
    """Whether any value of a text array holds a line break: its bytes
    searched as one (Arrow's search value by value takes five times longer)."""
    if not len(text) or text.null_count == len(text):
        return False
    offsets, data = text_offsets_and_bytes(text)
    return data is not None and \
        _LINE_BREAK.search(data[int(offsets[0]):int(offsets[-1])]) is not None


_LINE_BREAK = re.compile(b"\n")


def text_offsets_and_bytes(text: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    """A (plain) text array's value offsets, one more than it has values, and
    its bytes (None when it has none), as numpy without a copy."""
    width = 8 if pa.types.is_large_string(text.type) else 4
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int64 if width == 8 else np.int32,
                            count=len(text) + 1, offset=text.offset * width)
    data = text.buffers()[2]
    return offsets, None if data is None else np.frombuffer(data, dtype=np.uint8)


def _header_end(data: bytes) -> int:
    """Where the first record of a CSV file ends: its first line break outside
    quotes (a doubled quote inside quotes closes and reopens them)."""
    pos, nl = 0, data.find(b"\n")
    while True:
        if nl != -1 and nl < pos:  # the line break was inside quotes: the next one
            nl = data.find(b"\n", pos)
        end = len(data) if nl == -1 else nl
        quote = data.find(b'"', pos, end)
        if quote == -1:
            return end
        close = data.find(b'"', quote + 1)
        if close == -1:
            return len(data)
        pos = close + 1

#: Bytes that are not UTF-8, marked while Arrow parses (private-use U+F780..
#: U+F7FF for bytes 0x80..0xFF) and restored afterwards.
_MARK_BASE = 0xF700
_MARK_ERRORS = "auditor-mark-bytes"
_MARKS = re.compile("[\uf780-\uf7ff]")


def _mark_bytes(err: UnicodeDecodeError):
    bad = err.object[err.start:err.end]
    return "".join(chr(_MARK_BASE + b) for b in bad), err.end


codecs.register_error(_MARK_ERRORS, _mark_bytes)


def _mark_escape(m: re.Match) -> str:
    return f"\\x{ord(m.group()) - _MARK_BASE:02x}"


def _is_utf8(data: bytes) -> bool:
    """Whether `data` is UTF-8, checked by Arrow without a copy."""
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64).tobytes())
    text = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _unmarked(table: pa.Table) -> pa.Table:
    """The marked bytes put back (coercion then quarantines their rows)."""
    cols = []
    for col in table.columns:
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
        if pa.types.is_dictionary(col.type):
            col = pa.DictionaryArray.from_arrays(col.indices, _unmarked_text(col.dictionary))
        else:
            col = _unmarked_text(col)
        cols.append(col)
    return pa.table(cols, names=table.column_names)


def _unmarked_text(col: pa.Array) -> pa.Array:
    if pa.types.is_string(col.type) and pc.any(
            pc.match_substring_regex(col, "[\uf780-\uf7ff]")).as_py():
        col = pa.array([None if v is None else
                        b"".join(bytes([ord(ch) - _MARK_BASE]) if _MARKS.match(ch)
                                 else ch.encode("utf-8") for ch in v)
                        if _MARKS.search(v) else v.encode("utf-8")
                        for v in col.to_pylist()], pa.binary()).view(pa.string())
    return col


#: CSV columns read as dictionaries: few distinct values each, so every later
#: step (empty cells, line breaks, UTF-8 and size checks, typing) looks at
#: each distinct value once. `seq` and `ts` are nearly all distinct.
CSV_DICTIONARY_COLUMNS = frozenset(COLUMN_NAMES) - {"seq", "ts"}
_CSV_DICTIONARY = pa.dictionary(pa.int32(), pa.string())
#: Bytes of CSV parsed at a time (see `_read_csv`).
CSV_BLOCK_BYTES = 1 << 22


def _np_bool(mask) -> np.ndarray:
    return pc.fill_null(mask, False).to_numpy(zero_copy_only=False)


def _csv_header(header: bytes) -> list[str]:
    """The names of the header record (which may hold quoted line breaks)."""
    return next(csv.reader(io.StringIO(header.decode("utf-8"), newline="")))


def _clip(text: str, keep: int = 500) -> str:
    """A rejected line as kept in the quarantine: at most `keep` characters."""
    return text if len(text) <= keep else f"{text[:keep]}… [{len(text)} characters, truncated]"


def _empty_to_null(table: pa.Table) -> pa.Table:
    """Empty cells mean "not recorded", like JSON null and Parquet null."""
    cols = []
    for col in table.columns:
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            empty = pc.equal(col, "")
            if pc.any(empty).as_py():  # (seq and ts: nearly never; not copied then)
                col = pc.if_else(empty, pa.scalar(None, col.type), col)
        elif pa.types.is_dictionary(col.type):
            col = pa.chunked_array([_dictionary_empty_to_null(c) for c in col.chunks], col.type)
        cols.append(col)
    return pa.table(cols, names=table.column_names)


def _dictionary_empty_to_null(col: pa.DictionaryArray) -> pa.DictionaryArray:
    """Rows holding the empty value made null (the value stays, unused)."""
    empty = _np_bool(pc.equal(col.dictionary, ""))
    if not empty.any():
        return col
    indices = col.indices
    if not indices.null_count and not indices.offset and empty.sum() == 1:
        # (as the CSV reader gives them) the validity bitmap of "not the
        # empty value", put under the same indices: no copy of the indices
        valid = pc.not_equal(indices, pa.scalar(int(np.flatnonzero(empty)[0]), indices.type))
        if not valid.offset:
            indices = pa.Array.from_buffers(indices.type, len(indices),
                                            [valid.buffers()[1], indices.buffers()[1]])
            return pa.DictionaryArray.from_arrays(indices, col.dictionary, safe=False)
    codes = dictionary_codes(col)
    null = np.append(empty, True)[codes]
    indices = pa.array(np.where(null, 0, codes).astype(np.int32), mask=null)
    return pa.DictionaryArray.from_arrays(indices.cast(col.type.index_type), col.dictionary)


# --- JSON Lines --------------------------------------------------------------

MAX_FAST_JSON_BRACKETS = 256


def _read_jsonl(path: Path, data: bytes):
    """Fast path: pyarrow's reader when every line is a plain object and each
    column keeps one type. Otherwise a line-by-line read that locates and keeps
    every bad line."""
    text_lines = data.split(b"\n")
    # Arrow's reader takes time quadratic in the nesting of lists (5,000 nested
    # lists in one 10 kB line: seconds): a log has no lists, so many brackets
    # send the file down the line-by-line path, which bounds nesting.
    simple = b"\n\n" not in data and not data.startswith(b"\n") and b"\r" not in data \
        and data.count(b"[") <= MAX_FAST_JSON_BRACKETS
    if simple:
        try:
            table = pa_json.read_json(io.BytesIO(data))
            if table.num_rows == sum(1 for ln in text_lines if ln):
                table = _stringify_nested(table)
                return table, np.arange(1, table.num_rows + 1, dtype=np.int64), RawRejected()
        except (pa.ArrowInvalid, RecursionError, UnicodeDecodeError):  # (a key not UTF-8)
            # the line-by-line read locates the line
            pass
    return _read_jsonl_slow(path, text_lines)


def _read_jsonl_slow(path: Path, text_lines: list[bytes]):
    rejected = RawRejected()
    rows: list[dict] = []
    lines: list[int] = []
    for number, raw in enumerate(text_lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            obj, reason = None, "the line is not UTF-8 text"
        except RecursionError:
            obj, reason = None, "not a JSON object: nested too deeply"
        except ValueError as exc:
            obj, reason = None, f"not a JSON object: {exc}"
        else:
            reason = "not a JSON object"
        if not isinstance(obj, dict):
            rejected.lines.append(number)
            rejected.texts.append(_clip(raw.decode("utf-8", "backslashreplace")))
            rejected.reasons.append(reason)
            continue
        rows.append(obj)
        lines.append(number)
    names: list[str] = []
    seen: set[str] = set()
    for obj in rows:
        for key in obj:
            if key not in seen:
                seen.add(key)
                names.append(key)
    columns = {}
    for name in names:
        columns[name] = pa.array(
            [_json_cell(obj.get(name)) for obj in rows], type=pa.string()
        )
    table = pa.table(columns) if columns else pa.table({n: pa.array([], pa.string())
                                                        for n in COLUMN_NAMES})
    return table, np.asarray(lines, dtype=np.int64), rejected


def _json_cell(value) -> str | None:
    """A JSON value as the text a CSV cell would hold; coercion types it later."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    try:
        return json.dumps(value, sort_keys=True)
    except RecursionError:
        return "[nested too deeply]"


def _stringify_nested(table: pa.Table) -> pa.Table:
    """Nested JSON values cannot be log cells; keep them as JSON text."""
    cols = []
    for col in table.columns:
        if pa.types.is_struct(col.type) or pa.types.is_list(col.type):
            col = pa.array([None if v is None else json.dumps(v, sort_keys=True)
                            for v in col.to_pylist()], type=pa.string())
        elif pa.types.is_null(col.type):
            col = pa.nulls(len(col), pa.string())
        cols.append(col)
    return pa.table(cols, names=table.column_names)


# --- Parquet -----------------------------------------------------------------

def _read_parquet(path: Path):
    source = io.BytesIO(_read_bytes(path)) if path.name.lower().endswith(".gz") else path
    try:
        try:
            # Text columns as Parquet stores them, dictionary-encoded: no
            # string per row is built, and every check looks at each
            # distinct value once.
            pf = pq.ParquetFile(source, read_dictionary=_text_columns(source))
            names = pf.schema_arrow.names
            if len(set(names)) == len(names):
                table = _parquet_columns(pf, names)
        except (pa.ArrowException, OSError, UnicodeDecodeError):
            # A damaged file: read as before, so its error (or its rows) are
            # exactly what the plain reader gives.
            if isinstance(source, io.BytesIO):
                source.seek(0)
            pf = pq.ParquetFile(source)
            names = pf.schema_arrow.names
            if len(set(names)) == len(names):
                table = _parquet_columns(pf, names)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        raise LogFileError(path, f"not a readable Parquet file: {_arrow_message(exc)}") from None
    if len(set(names)) != len(names):
        dupes = sorted(n for n, k in Counter(names).items() if k > 1)[:20]
        raise LogFileError(path, f"duplicate column(s): {', '.join(dupes)}")
    # Parquet has no lines; a row is located by its 1-based row number.
    return table, np.arange(1, table.num_rows + 1, dtype=np.int64), RawRejected()


def _text_columns(source) -> list[str]:
    """The top-level text and binary columns of a Parquet file."""
    schema = pq.read_schema(source)
    if isinstance(source, io.BytesIO):
        source.seek(0)
    return [f.name for f in schema if _is_text_type(f.type)]


#: Whether a Parquet column is decoded on Arrow's thread pool (see `_parquet_columns`).
PARQUET_THREADS = True


def _parquet_columns(pf: pq.ParquetFile, names: list[str]) -> pa.Table:
    """The file's columns one at a time: a large file is read with a
    column's worth of memory to spare, not the whole table's (every row
    group read at once, then joined), and quicker. Every column keeps one
    piece per row group, as read: the file is typed a row group at a time
    (`load._slices`), so joining the pieces would only copy them (and a
    dictionary column's pieces each have their own dictionary)."""
    if pf.metadata.num_row_groups <= 1 or not names:
        return pf.read(use_threads=False)
    columns = [pf.read(columns=[name], use_threads=PARQUET_THREADS).column(0) for name in names]
    return pa.table(columns, names=names)


def _arrow_message(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
