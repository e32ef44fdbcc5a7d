"""Read one log file, whatever its format, into the table coercion types,
remembering where every row came from.

Reading is deliberately lenient about *values* (every CSV/JSON cell is read
as text, bad rows are kept) and strict about *files*: a file that cannot be a
log at all raises `LogFileError`, which the CLI turns into one line and exit 2.
Value checking happens afterwards, vectorised, in `auditor.logs.coerce` and
`auditor.logs.validate`, so a wrong cell quarantines one row instead of
failing the whole file. Each format has its own module; what every one hands
on is made plain here (`_plain_cells`).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from auditor.errors import ran_out_of_memory
from auditor.logs import csv_format, jsonl_format, parquet_format
from auditor.logs.arrays import dictionary_codes, is_text_type
from auditor.logs.columns import missing_hint, renamed
from auditor.logs.discover import format_from_name, not_readable
from auditor.logs.raw import (
    CELL_KEEP_CHARS,
    DEFAULT_READ,
    MAX_CELL_BYTES,
    SCAN_BLOCK_BYTES,
    UTF8_BOM,
    LogFileError,
    PieceSpan,
    RawLog,
    ReadOptions,
    one_byte_a_character,
    read_bytes,
    read_bytes_hashed,
    read_range_hashed,
)
from auditor.logs.schema import EVENT_REQUIRES, EVENTS, REQUIRED_COLUMNS


def read_log(path: Path, options: ReadOptions = DEFAULT_READ,
             piece: PieceSpan | None = None) -> RawLog:
    """Read one file; raise LogFileError when it cannot be a log, or when
    memory ran out reading it (said as such: not unreadable evidence).
    `piece`: only rows [a, b) of a plain Parquet file (bytes [a, b) of a
    plain JSON Lines or CSV file in UTF-8 or in an encoding of one byte a
    character), as `PieceSpan` says."""
    try:
        return _read_log(path, options, piece)
    except MemoryError:  # (pyarrow's ArrowMemoryError is one)
        raise ran_out_of_memory(path) from None


def _read_log(path: Path, options: ReadOptions, piece=None) -> RawLog:
    problem = not_readable(path)  # (a pipe or a device: never opened)
    if problem:
        raise LogFileError(path, problem)
    fmt = format_from_name(path)
    gz = path.name.lower().endswith(".gz")
    encoding = options.encoding if fmt != "parquet" else None
    if piece is not None and (gz or fmt != "parquet" and encoding is not None
                              and not one_byte_a_character(encoding)):
        raise ValueError("only a plain Parquet, JSON Lines or CSV file (UTF-8, or one byte a "
                         "character) is read a piece at a time")
    streamed = csv_format.read_csv_streamed(path) \
        if fmt == "csv" and not gz and encoding is None and piece is None else None
    if streamed is not None:
        digest, (table, lines, rejected) = streamed
    else:
        table, lines, rejected, digest = _read_whole(path, fmt, gz, encoding, piece)
    table, renames = renamed(table, options.columns, path)
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise LogFileError(path, f"missing required column(s): {', '.join(missing)}"
                                 + missing_hint(missing, table.column_names))
    _check_event_columns(path, table)
    if table.num_rows == 0 and not rejected.lines:
        raise LogFileError(path, "the file holds no events")
    notes = renames + (parquet_format.time_assumptions(table) if fmt == "parquet" else []) \
        + rejected.notes
    table, cell_problems = _plain_cells(table)
    for row, why in rejected.cell_problems.items():
        cell_problems.setdefault(row, []).extend(why)
    if cell_problems and encoding is None and fmt != "parquet":
        _suggest_encoding(path, cell_problems)
    return RawLog(str(path), digest, fmt, table, lines, rejected, cell_problems, notes)


def _check_event_columns(path: Path, table: pa.Table) -> None:
    """LogFileError when the file holds an event type whose required column
    (spec: "per event") it lacks altogether: every such row would be
    quarantined and the rules judging the rest would see a table with
    holes (a night without `die1` is not a night of unreadable rolls)."""
    columns = set(table.column_names)
    lacking = {c for needs in EVENT_REQUIRES.values() for c in needs if c not in columns}
    if not lacking:  # (nearly always: every column of the spec is there)
        return
    col = table.column("event")
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        return  # (not text: every row's event is quarantined as unknown)
    held = pc.value_counts(pc.utf8_trim_whitespace(col.drop_null()) if col.null_count
                           else pc.utf8_trim_whitespace(col))
    # (as bytes: a value that is not UTF-8, whose row is quarantined later,
    # is no event's name, and Python could not decode it)
    counts = dict(zip(held.field("values").cast(pa.binary()).to_pylist(),
                      held.field("counts").to_pylist()))
    for event in EVENTS:
        need = [c for c in EVENT_REQUIRES[event] if c in lacking]
        held_here = counts.get(event.encode())
        if held_here and need:
            raise LogFileError(path, f"no column `{need[0]}`, which the spec requires for "
                                     f"`{event}` events (the file holds {held_here:,})"
                                     + missing_hint(need[:1], table.column_names))


#: What the first text that is not UTF-8 in a file is followed by, naming
#: the encoding to try (`_suggest_encoding`).
ENCODING_HINT = " (try --encoding "

#: The bytes cp1252 leaves undefined (a file holding one is not cp1252).
_NOT_CP1252 = tuple(bytes([b]) for b in (0x81, 0x8D, 0x8F, 0x90, 0x9D))


def _not_cp1252(data: bytes) -> bool:
    """Whether `data` holds a byte cp1252 leaves undefined: a fast search a
    byte (a character class in `re` took 0.65 s over 163 MB)."""
    return any(b in data for b in _NOT_CP1252)


def _suggest_encoding(path: Path, problems: dict[int, list[str]]) -> None:
    """The first row with text that is not UTF-8 told which encoding the
    file may be in (`--encoding`): one hint, not one per row."""
    first = min((r for r, why in problems.items()
                 if any(w.endswith("is not UTF-8 text") for w in why)), default=None)
    if first is None:
        return
    guess = "cp1252" if _may_be_cp1252(path) else "latin-1"
    problems[first] = [f"{w}{ENCODING_HINT}{guess})" if w.endswith("is not UTF-8 text")
                       else w for w in problems[first]]


def _may_be_cp1252(path: Path) -> bool:
    """Whether every byte of the file (a .gz file's inflated) is defined in
    cp1252: a plain file is looked at a block at a time, never held whole
    (a piece of a large file reads only its own bytes)."""
    if path.name.lower().endswith(".gz"):
        try:
            return not _not_cp1252(read_bytes(path))
        except LogFileError:
            return False
    try:
        with open(path, "rb") as fh:
            while block := fh.read(SCAN_BLOCK_BYTES):
                if _not_cp1252(block):
                    return False
    except OSError:
        return False
    return True


def _read_whole(path: Path, fmt: str, gz: bool, encoding: str | None = None, piece=None):
    """A file read whole (the one way for Parquet, JSON Lines and gzip; for
    a CSV file the streamed read cannot take), or a `piece` of a plain
    Parquet, JSON Lines or CSV file: its table, lines, rejected rows and
    SHA-256."""
    # One opened file gives both the SHA-256 and the bytes parsed (a file
    # renamed over between two opens must not pair one file's hash with
    # another's rows): a Parquet file is mapped, the rest read.
    if fmt == "parquet" and not gz:
        source, digest = parquet_format.open_hashed(path, piece is None or piece[2])
        return (*parquet_format.read_parquet(path, source, piece and piece[:2]), digest)
    if piece is not None:  # (a plain text file's bytes [a, b), its lines numbered on)
        data, digest, first_line = read_range_hashed(path, *piece)
        if encoding is not None:  # (one byte a character: each piece decoded alone)
            data = _decoded(path, data, encoding)
        elif piece[0] == 0:
            data = _utf8(path, data)
        if not data or data.isspace():  # (the file's blank lines: read whole, said whole)
            raise LogFileError(path, "the file is empty")
        if fmt == "csv":
            header = None if piece[0] == 0 else csv_format.header_record(path)
            if header is not None and encoding is not None:
                header = _decoded(path, header, encoding)
            return (*csv_format.read_csv_piece(path, data, first_line, header), digest)
        return (*jsonl_format.read_jsonl(path, data, first_line), digest)
    data, digest = read_bytes_hashed(path)
    if fmt == "parquet":
        return (*parquet_format.read_parquet(path, io.BytesIO(data)), digest)
    data = _utf8(path, data) if encoding is None else _decoded(path, data, encoding)
    if not data or data.isspace():  # (not data.strip(): no copy of a large file)
        raise LogFileError(path, "the file is empty")
    read = csv_format.read_csv if fmt == "csv" else jsonl_format.read_jsonl
    return (*read(path, data), digest)


def _decoded(path: Path, data: bytes, encoding: str) -> bytes:
    """The text of a file given (`--encoding`) as `encoding`, as UTF-8."""
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise LogFileError(path, f"not {encoding} text (byte {exc.start}: {exc.reason})") \
            from None
    return text.removeprefix("\ufeff").encode("utf-8")


def _utf8(path: Path, data: bytes) -> bytes:
    """The text of a CSV or JSON Lines file as UTF-8: a UTF-8 byte order mark
    is dropped, a UTF-16 file (with its mark) is transcoded."""
    if data.startswith(UTF8_BOM):
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
        if is_text_type(t.value_type):
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
    if col.nbytes <= MAX_CELL_BYTES:  # (its bytes bound its longest value: no call)
        return col
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
