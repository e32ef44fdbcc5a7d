"""Read a CSV log: every cell as text, each row's physical line (quoted
line breaks counted), and the records with the wrong cell count rejected
with their line.

A plain file is parsed by Arrow a block at a time as it is read, hashed and
checked for UTF-8 on the way, bytes that are not UTF-8 marked as they come
(`read_csv_streamed`); anything else (a byte order mark, gzip, an encoding
named) is read whole (`read_csv`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from auditor.errors import ControlSignal, LogFileError
from auditor.logs.arrays import dictionary_codes, per_row, text_offsets_and_bytes
from auditor.logs.raw import (
    MAX_CELL_BYTES,
    UTF8_BOM,
    RawRejected,
    arrow_message,
    clip,
    line_blocks,
    too_many_columns,
)
from auditor.logs.schema import COLUMN_NAMES


def read_csv(path: Path, data: bytes, line_shift: int = 0, header: bytes = b""):
    """A CSV file's table, physical lines and rejected rows, from its bytes;
    for a piece read after the first (`read_csv_piece`), the file's
    `header` record, parsed before `data` (not copied to it), and
    `line_shift` added to every line."""
    # The header is the first record, which may hold quoted line breaks.
    opening = header or data
    names, header_lines = csv_names(path, opening[:header_end(opening)])
    # Arrow cannot hand a row with the wrong cell count to the handler when the
    # row is not UTF-8 (the whole file would fail): bytes that are not UTF-8
    # are marked while Arrow parses, and put back afterwards.
    marked = not is_utf8(data)
    recorded = data
    if marked:
        data = _marked(data)
    table, collected = _parse_growing(path, lambda: _Joined(header, data),
                                      len(header) + len(data), names, header_lines)
    if marked:
        table, collected = _unmarked(table), _unmarked_rejected(collected)
    return _csv_rows(table, collected, names, header_lines, b'"' in data,
                     lambda size: recorded[-size:], line_shift)


class _Joined:
    """Bytes read as one file after other bytes (a header record), neither
    copied to the other."""

    closed = False

    def __init__(self, first: bytes, then: bytes):
        self._parts = [io.BytesIO(first), io.BytesIO(then)]

    def read(self, size: int = -1) -> bytes:
        got = self._parts[0].read(size)
        if size is None or size < 0 or len(got) < size:
            more = self._parts[1].read(-1 if size is None or size < 0 else size - len(got))
            got = got + more if got else more
        return got


class CutInsideRecord(ControlSignal):
    """A piece of a CSV file that may not start or end where a record does
    (`ends_outside_quotes`): where it was cut cannot be trusted, and the
    file is read whole (`auditor.run.pieces`)."""


def read_csv_piece(path: Path, data: bytes, first_line: int, header: bytes | None):
    """`read_csv` of a piece of a CSV file: bytes cut at line starts, the
    first numbered `first_line`; `header`: the file's header record
    (`header_record`), for a piece after the first (whose bytes open with
    it). CutInsideRecord unless `ends_outside_quotes(data)`."""
    if not ends_outside_quotes(data):
        raise CutInsideRecord()
    if header is None:
        return read_csv(path, data)
    return read_csv(path, data, first_line - 1 - header.count(b"\n"), header)


def header_record(path: Path) -> bytes:
    """The header record of a CSV file cut in pieces, its line break included
    (a UTF-8 byte order mark left out); CutInsideRecord when its first
    `MAX_CELL_BYTES` hold none (the file read whole says what is wrong)."""
    with open(path, "rb") as fh:
        head = fh.read(_HEADER_FIRST_READ)  # (a header is some 200 bytes: 1 MiB only if need be)
        if header_end(head) >= len(head) == _HEADER_FIRST_READ:
            head += fh.read(MAX_CELL_BYTES + 4 - len(head))
    head = head.removeprefix(UTF8_BOM)
    end = header_end(head)
    if end >= len(head):
        raise CutInsideRecord()
    return head[:end + 1]


#: The bytes `header_record` reads first.
_HEADER_FIRST_READ = 1 << 16


#: Bytes of a piece looked at a time by `ends_outside_quotes` (at line starts).
_QUOTES_CHECK_BYTES = 1 << 24


def ends_outside_quotes(data: bytes) -> bool:
    """Whether bytes of a CSV file that start where a record does end
    outside any quoted value, as Arrow's reader reads them, so that a line
    start after them starts a record: each quote where a quoted value opens
    (a cell's first byte: after a comma, a line break or the start) or
    closes (before a comma, a line break or the end), a doubled quote
    being one of each, their number even. Then the quotes pair off in order
    as Arrow's reader takes them (a quote inside a bare cell, which it
    takes as text and which would shift the pairs, is where no value
    opens). No CR may stand alone (Arrow ends a record there, which the
    pieces' line numbers would not count). Each piece of a file checks its
    own bytes: if every piece's bytes pass, the first piece starting at the
    file's start, every cut between them is a record's start. Looked at a slice
    of whole lines at a time, a quoted value open at a slice's end going
    on into the next."""
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return False
    if b'"' not in data:
        return True
    start, inside = 0, False
    while start < len(data):
        end = data.find(b"\n", start + _QUOTES_CHECK_BYTES) + 1 or len(data)
        paired, inside = _quotes_pair(np.frombuffer(data, np.uint8, end - start, start), inside)
        if not paired:
            return False
        start = end
    return not inside


def _quotes_pair(buf: np.ndarray, inside: bool) -> tuple[bool, bool]:
    """Whether the quotes of a slice of whole lines (`inside`: starting
    inside a quoted value) open and close where Arrow's reader takes them
    to (`ends_outside_quotes`), and whether it ends inside a quoted value."""
    quotes = np.flatnonzero(buf == ord('"'))
    if inside:  # (the value opened before the slice)
        quotes = np.concatenate([[-1], quotes])
    ends_inside = bool(len(quotes) % 2)
    if ends_inside:  # (it closes after the slice)
        quotes = np.concatenate([quotes, [len(buf)]])
    if not len(quotes):
        return True, False
    opens, closes = quotes[0::2], quotes[1::2]
    last = len(buf) - 1
    before = buf[np.clip(opens - 1, 0, last)]
    opened = (opens <= 0) | (before == ord(",")) | (before == ord("\n"))
    opened[1:] |= opens[1:] == closes[:-1] + 1  # (a doubled quote)
    after = buf[np.clip(closes + 1, 0, last)]
    closed = (closes >= last) | (after == ord(",")) | (after == ord("\n")) \
        | (after == ord("\r"))
    closed[:-1] |= closes[:-1] + 1 == opens[1:]
    return bool(opened.all() and closed.all()), ends_inside


def read_csv_streamed(path: Path):
    """A plain CSV file read as Arrow parses it, a block at a time, hashed
    and checked for UTF-8 as read: no copy of the whole file is made (10M
    events: 860 MB neither faulted in nor copied again block by block).
    Bytes that are not UTF-8 are marked as they are read, as the whole read
    marks them (`read_csv`), and put back after the parse. (SHA-256,
    (table, lines, rejected)), or None where the whole read is needed (a
    byte order mark, a start that is blank or holds no whole header, bytes
    that are not UTF-8 where a read ended, any error): that read then gives
    what it always gave, error or rows."""
    try:
        # ONE open (closed by the `with` below): the bytes hashed are the bytes parsed
        fh = open(path, "rb")  # noqa: SIM115
    except OSError:
        return None  # (the whole read tells what is wrong)
    with fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            sources = [_CheckedReader(fh)]
            sources[0].peek(CSV_BLOCK_BYTES)
            first = sources[0].opening  # (as recorded: the header judged as the whole read does)
            end = header_end(first)
            if end >= len(first) or first.isspace() or first.startswith(_BYTE_ORDER_MARKS):
                return None
            names, header_lines = csv_names(path, first[:end])
            del first
            sources[0].opening = b""  # (let go: kept no longer)
            tries = []

            def source_to_parse() -> _CheckedReader:
                """The file as peeked, then read again from its start (the
                same opened file) for each larger block tried."""
                if tries:
                    fh.seek(0)
                    sources.append(_CheckedReader(fh))
                tries.append(len(tries))
                return sources[-1]

            table, collected = _parse_growing(path, source_to_parse, size, names,
                                              header_lines)
            source = sources[-1]
            source.finish()
            if source.marked:
                table, collected = _unmarked(table), _unmarked_rejected(collected)
        except (LogFileError, OSError, ValueError, pa.ArrowException, _NotUtf8):
            return None  # (the whole read tells what is wrong, as it always has)
        return source.hexdigest(), _csv_rows(table, collected, names, header_lines,
                                             source.quoted, lambda n: _file_tail(fh, n))


def _file_tail(fh, size: int) -> bytes:
    fh.seek(max(0, os.fstat(fh.fileno()).st_size - size))
    return fh.read(size)


_BYTE_ORDER_MARKS = (UTF8_BOM, b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


class _NotUtf8(ControlSignal):
    """Raised by `_CheckedReader` where bytes that are not UTF-8 were handed
    on unmarked: the end of one read, a character it began not going on in
    the next (a few bytes, a few reads in a file: the whole read marks them)."""


class _CheckedReader:
    """A file as Arrow's CSV parser reads it, hashed (SHA-256) and checked
    for UTF-8 as read; `quoted`: whether any byte is a quote. From the
    first read holding bytes that are not UTF-8 (`marked`), each such byte
    is marked (`_mark_text`) before Arrow sees it, as `read_csv` marks a
    whole file: a record with the wrong cell count that is not UTF-8 could
    not be handed on, and the whole file was read again (one Windows-1252
    name in 1.9M rows: 1.4 s). Each read gives as many bytes as asked
    (fewer at the end), as a whole file's io.BytesIO does, so the blocks
    are the same: once marking has begun, the marked bytes are counted out
    of a buffer, a character that may go on in the next read held back."""

    def __init__(self, fh):
        self._fh = fh
        self._digest = hashlib.sha256()
        self._pending = b""  # handed on by nothing yet
        self._tail = b""  # the last bytes handed on, when they may be part of a character
        self._carry = b""  # once marking: the last bytes read, not yet handed on
        self._ended = False
        self.opening: bytes | None = None  # the first bytes read, as recorded
        self.quoted = False
        self.marked = False
        self.closed = False

    def peek(self, size: int) -> bytes:
        got = self.read(size)
        self._pending = got + self._pending if self._pending else got
        return got

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            parts = [self._pending]
            while not self._ended:
                parts.append(self._take(CSV_BLOCK_BYTES))
            self._pending = b""
            return b"".join(parts)
        if not self.marked and len(self._pending) < size:  # (nearly always: bytes as read)
            pending, self._pending = self._pending, b""
            more = self._take(size - len(pending))
            got = pending + more if pending and more else pending or more
            if not self.marked:
                return got
            self._pending = got  # (marking began: from here on counted out)
        while len(self._pending) < size and not self._ended:
            self._pending += self._take(size - len(self._pending))
        got, self._pending = self._pending[:size], self._pending[size:]
        return got

    def finish(self) -> None:
        """Read to the end (Arrow does; this makes sure)."""
        while not self._ended:
            self._take(CSV_BLOCK_BYTES)

    def hexdigest(self) -> str:
        return self._digest.hexdigest()

    def _take(self, size: int) -> bytes:
        """The next `size` bytes of the file, checked; once marking has
        begun, marked, fewer or more of them (`_ended` tells the end)."""
        data = self._fh.read(size)
        self._digest.update(data)
        if self.opening is None:
            self.opening = data
        self.quoted = self.quoted or b'"' in data
        if self.marked:
            return self._marked_on(data)
        if not data:
            self._ended = True
            if self._tail and not is_utf8(self._tail):  # the end: its last character
                raise _NotUtf8()
            return data
        return data if self._check(data) else self._begin_marking(data)

    def _check(self, data: bytes) -> bool:
        """Whether `data` is UTF-8 following the bytes before: a character
        split between reads is checked whole (the previous tail with the
        continuation bytes that open `data`; a few bytes read at a time are
        carried along until they are more than a character). _NotUtf8 where
        the bytes that are not are some already handed on."""
        tail, handed = self._tail, len(self._tail)
        if handed + len(data) <= 8:
            data, tail = tail + data, b""
        lead = _continuing(data)
        end = _last_whole(data, lead)
        if is_utf8(tail + data[:lead]) and is_utf8(memoryview(data)[lead:end]):
            self._tail = data[end:]
            return True
        if handed and (not tail or not is_utf8(tail + data[:lead])):
            raise _NotUtf8()
        return False

    def _begin_marking(self, data: bytes) -> bytes:
        """`data`, which holds bytes that are not UTF-8, marked from past the
        character the bytes handed on began (if they did); marking from here on."""
        lead = _continuing(data) if self._tail else 0
        self.marked, self._tail = True, b""
        return data[:lead] + self._marked_on(data[lead:])

    def _marked_on(self, data: bytes) -> bytes:
        """`data` after the bytes held back, marked, a character that may go
        on in the next read held back in turn (all of it at the end)."""
        at_end = not data
        if self._carry:
            data, self._carry = self._carry + data, b""
        if at_end:
            self._ended = True
            return _marked(data) if data else data
        end = _last_whole(data, 0)
        self._carry = data[end:]
        return _marked(data[:end]) if end else b""


def _continuing(data: bytes) -> int:
    """How many continuation bytes (10xxxxxx) open `data`, up to 3: those that
    may finish a character begun before it."""
    lead = 0
    while lead < min(3, len(data)) and data[lead] & 0xC0 == 0x80:
        lead += 1
    return lead


def _last_whole(data: bytes, lead: int) -> int:
    """Where the last character of `data` (past `lead`) begins if it may go
    on past `data`'s end (a byte that may start a character of more than
    one, C2 to F4, with fewer than four bytes after it); len(data) if it
    may not (C0, C1 and F5 to FF start none: not UTF-8 whatever follows)."""
    for k in range(1, min(4, len(data) - lead) + 1):
        if data[-k] & 0xC0 != 0x80:  # the last byte that is not a continuation
            return len(data) - k if 0xC2 <= data[-k] <= 0xF4 else len(data)
    return len(data)


def csv_names(path: Path, header: bytes) -> tuple[list[str], int]:
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
    if (problem := too_many_columns(len(names))) is not None:
        raise LogFileError(path, f"the header has {problem}", line=1)
    if len(set(names)) != len(names):
        dupes = sorted(n for n, k in Counter(names).items() if k > 1)[:20]
        raise LogFileError(path, f"duplicate column(s) in header: {', '.join(dupes)}", line=1)
    return names, header_lines


def _parse_growing(path: Path, open_source, size: int, names: list[str], header_lines: int):
    """`_parse_csv` of `open_source()` in blocks of CSV_BLOCK_BYTES, or, when
    a record is longer than a block (Arrow cannot parse a record that spans
    two), in blocks eight times as large, and so on up to the whole file:
    a long row reads, and its cells are judged like any other. A file
    smaller than a block is parsed in one block its size (at least 64 KiB):
    the same one block, without Arrow's 4 MiB buffers for a file of 400
    bytes (20,000 small files: a third of their reading time)."""
    block = min(CSV_BLOCK_BYTES, max(size + 1, 1 << 16))
    while True:
        try:
            return _parse_csv(path, open_source(), names, header_lines, block)
        except _RecordOverBlock:
            if block > size or block >= _MAX_BLOCK_BYTES:
                raise LogFileError(path, f"not parseable as CSV: a record is longer than "
                                   f"{min(block, _MAX_BLOCK_BYTES)} bytes") from None
            block = min(block * 8, size + 1, _MAX_BLOCK_BYTES)


class _RecordOverBlock(ControlSignal):
    """A record longer than the block Arrow parsed the file in."""


def _parse_csv(path: Path, source, names: list[str], header_lines: int, block: int):
    """Arrow's parse of the records after the header, in blocks of `block`
    bytes: the table, and the records with the wrong cell count as
    (number, text, expected, actual)."""
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
                                            skip_rows=header_lines, block_size=block),
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
    except pa.ArrowInvalid as exc:
        if "straddl" in str(exc):  # "straddling object straddles two block boundaries"
            raise _RecordOverBlock() from None
        raise LogFileError(path, f"not parseable as CSV: {arrow_message(exc)}") from None
    except UnicodeDecodeError as exc:
        raise LogFileError(path, f"not parseable as CSV: {arrow_message(exc)}") from None
    return table, collected


def _csv_rows(table: pa.Table, collected: list, names: list[str], header_lines: int,
              quoted: bool, tail, line_shift: int = 0):
    """The parsed table (blank records dropped, empty cells null), each
    row's physical line (plus `line_shift`), and the rejected records;
    `quoted`: whether the file holds a quote (only a quoted value holds a
    line break); `tail(n)`: the file's last n bytes."""
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
    if line_shift:
        lines = lines + line_shift
    for (number, text, expected, actual), moved in zip(collected, shift):
        line = int((number or 0) + moved) + line_shift
        rejected.lines.append(line)
        rejected.texts.append(clip(text))
        rejected.reasons.append(f"row has {actual} cells, the header has {expected}"
                                + lines_taken(text, line))
    # Blank lines are not rows: drop records whose every cell is empty.
    blank = _blank_records(table)
    if len(blank):
        nonblank = np.ones(n_valid, dtype=bool)
        nonblank[blank] = False
        table = table.filter(pa.array(nonblank))
        lines = lines[nonblank]
    if extra is not None and table.num_rows:
        _unclosed_last_quote(table, lines, names, tail, rejected)
    table = _empty_to_null(table)
    return table, lines, rejected


def _unclosed_last_quote(table: pa.Table, lines: np.ndarray, names: list[str], tail,
                         rejected: RawRejected) -> None:
    """A quote opened in the last column and never closed takes the rest of
    the file into that one cell, and the record still has as many cells as
    the header: Arrow reads it as a row. Its value is then the end of the
    file as recorded, a quote before it (no closing quote can follow):
    the row is noted for quarantine, with the lines it took."""
    row = table.num_rows - 1
    last = table.column(names[-1]).slice(row, 1)
    if pa.types.is_dictionary(last.type):
        last = last.cast(pa.string())
    value = last.cast(pa.binary()).to_pylist()[0]
    if not value or b"\n" not in value:
        return
    recorded = b'"' + value.replace(b'"', b'""')
    if tail(len(recorded)) != recorded:
        return
    cells = [table.column(n).slice(row, 1).cast(pa.string()).cast(pa.binary()).to_pylist()[0]
             for n in names]
    start = int(lines[row])
    opened = start + sum((c or b"").count(b"\n") for c in cells[:-1])
    end = start + sum((c or b"").count(b"\n") for c in cells) - value.endswith(b"\n")
    rejected.cell_problems[row] = [
        (f"{names[-1]}: a quote opened on line {opened} is never closed: the record took "
        f"{end - start + 1} lines ({start}-{end}), to the end of the file")]


def lines_taken(text: str, line: int) -> str:
    """For a record over several lines (a quoted value holding line breaks,
    most often a quote never closed that swallowed the records after it):
    where the quote opened and the lines the record took, so an officer can
    find the rows in the file; "" for a record of one line."""
    breaks = text.count("\n")
    if not breaks:
        return ""
    took = f"the record took {breaks + 1} lines ({line}-{line + breaks})"
    opened = _multiline_quote(text)
    if opened is None:
        return f"; {took}"
    start, end = opened
    where = f"a quote opened on line {line + text.count(chr(10), 0, start)}"
    if end is None:
        return f"; {where} is never closed: {took}, to the end of the file"
    return f"; {where} closes on line {line + text.count(chr(10), 0, end)}: {took}"


def _multiline_quote(text: str) -> tuple[int, int | None] | None:
    """Where the first quoted value holding a line break opens in a record's
    text, and where it closes (None: never). A quote opens a value only at
    its start, as Arrow reads it; a doubled quote inside is a quote."""
    pos, at_start = 0, True
    while pos < len(text):
        if at_start and text[pos] == '"':
            close = pos + 1
            while True:
                close = text.find('"', close)
                if close != -1 and text.startswith('""', close):
                    close += 2
                    continue
                break
            end = None if close == -1 else close
            if "\n" in text[pos:end]:
                return pos, end
            if end is None:
                return None
            pos = end + 1
            at_start = False
            continue
        at_start = text[pos] == ","
        pos += 1
    return None


def _any_value(col, test) -> bool:
    """Whether `test(text array)` holds for any chunk of `col`, looking at a
    dictionary-encoded chunk's dictionary only."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    return any(test(c.dictionary if pa.types.is_dictionary(c.type) else c) for c in chunks)


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


def header_end(data: bytes) -> int:
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

#: Bytes that are not UTF-8, marked while Arrow parses and restored
#: afterwards: a byte b as the character U+F700 + b (U+F780 to U+F7FF,
#: private use: UTF-8 that Arrow hands on), `_mark_text`.
_MARK_BASE = 0xF700
_MARKS = re.compile("[\uf780-\uf7ff]")


def _mark_text(block: bytes) -> bytes:
    """`block` (whole characters) with each byte that is not UTF-8 marked:
    Python's "surrogateescape" decodes such a byte b as U+DC00 + b, encoded
    ("surrogatepass") as ED B2 or ED B3 and a last byte; the mark U+F700 + b
    is EF 9E or EF 9F and the same last byte (ED B2 and ED B3 begin nothing
    else in UTF-8). All in C: a Python handler called at each run of such
    bytes took 9 s for 30 MB of random bytes (0.5 s)."""
    return (block.decode("utf-8", "surrogateescape").encode("utf-8", "surrogatepass")
            .replace(b"\xed\xb2", b"\xef\x9e").replace(b"\xed\xb3", b"\xef\x9f"))


def _recorded(marked: bytes) -> bytes:
    """Marked text's bytes as recorded, each mark its byte again: the marks
    made the surrogates `_mark_text` made them from, which "surrogateescape"
    writes as their bytes. In C (a cell's characters one at a time in
    Python took 10 s for 30 MB of random bytes)."""
    return (marked.replace(b"\xef\x9e", b"\xed\xb2").replace(b"\xef\x9f", b"\xed\xb3")
            .decode("utf-8", "surrogatepass").encode("utf-8", "surrogateescape"))


def is_utf8(data: bytes) -> bool:
    """Whether `data` is UTF-8, checked by Arrow without a copy."""
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64).tobytes())
    text = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


#: Bytes of a CSV file that is not all UTF-8 looked at a time for the bytes
#: to mark (whole lines: a line break is never inside a character).
MARK_BLOCK_BYTES = 1 << 22


def _marked(data: bytes) -> bytes:
    """`data` with each byte that is not UTF-8 marked (`_mark_text`), a
    block of whole lines at a time, the blocks that are UTF-8 as they are:
    one name in Windows-1252 among 1.9M rows decoded and encoded the whole
    file again (163 MB: 3.4 -> 5.1 s)."""
    view, parts = memoryview(data), []
    for start, end in line_blocks(data, MARK_BLOCK_BYTES):
        block = view[start:end]
        parts.append(block if is_utf8(block) else _mark_text(bytes(block)))
    return b"".join(parts)


def _unmarked(table: pa.Table) -> pa.Table:
    """The marked bytes put back (coercion then quarantines their rows), a
    chunk at a time: only the chunks holding a mark are looked at again
    (the whole table was copied into one chunk a column)."""
    return pa.table([pa.chunked_array([_unmarked_chunk(c) for c in col.chunks], col.type)
                     for col in table.columns], names=table.column_names)


def _unmarked_chunk(chunk: pa.Array) -> pa.Array:
    if pa.types.is_dictionary(chunk.type):
        text = _unmarked_text(chunk.dictionary)
        return chunk if text is chunk.dictionary else \
            pa.DictionaryArray.from_arrays(chunk.indices, text)
    return _unmarked_text(chunk)


def _unmarked_rejected(collected: list) -> list:
    """The rejected records' texts with their marked bytes written as \\xNN,
    mark by mark (`str.translate`: a regex calling back a mark took 7.5 s
    for 30 MB of random bytes, 13M marks, against 2 s). Not the recorded
    bytes (`_recorded`) decoded again: a character U+F780 to U+F7FF
    recorded as such is taken for a mark (as it always was), and its byte
    and a marked byte after it could then be read as one character."""
    return [(n, _escaped_marks(t) if _MARKS.search(t) else t, e, a) for n, t, e, a in collected]


def _escaped_marks(text: str) -> str:
    """`text`, each mark as \\xNN, translated a slice at a time: a text of
    millions of characters translated whole had its growing copy moved
    again and again (29M characters of random bytes: 13.5 s of kernel
    time, against 0.3 s)."""
    return "".join([text[at:at + _ESCAPE_SLICE].translate(_MARK_ESCAPES)
                    for at in range(0, len(text), _ESCAPE_SLICE)])


#: Each mark as the rejected record's text writes it.
_MARK_ESCAPES = {_MARK_BASE + b: f"\\x{b:02x}" for b in range(0x80, 0x100)}
#: Characters of a text translated at a time (`_escaped_marks`).
_ESCAPE_SLICE = 1 << 16


def _unmarked_text(col: pa.Array) -> pa.Array:
    """`col` with the marked bytes of its cells put back: only the cells
    holding a mark are rebuilt (a `seq` or `ts` column was rebuilt a row
    at a time in Python for one marked cell)."""
    if not pa.types.is_string(col.type) or not _may_hold_mark(col):
        return col
    holds = pc.fill_null(pc.match_substring_regex(col, "[\uf780-\uf7ff]"), False)
    if not pc.any(holds).as_py():
        return col
    rows = pa.array(np.flatnonzero(_np_bool(holds)))
    bytes_back = [_recorded(v) for v in col.take(rows).cast(pa.binary()).to_pylist()]
    return pc.replace_with_mask(col, holds, pa.array(bytes_back, pa.binary())
                                .view(pa.string()))


def _may_hold_mark(col: pa.Array) -> bool:
    """Whether the bytes of a text column's values may hold a mark (U+F780
    to U+F7FF: EF 9E or EF 9F), found by numpy, not a regex a row."""
    data = col.buffers()[2]
    if data is None or data.size < 2:
        return False
    values = np.frombuffer(data, np.uint8)
    at = np.flatnonzero(values[:-1] == 0xEF)
    return bool(len(at)) and bool(((values[at + 1] & 0xFE) == 0x9E).any())


#: CSV columns read as dictionaries: few distinct values each, so every later
#: step (empty cells, line breaks, UTF-8 and size checks, typing) looks at
#: each distinct value once. `seq` and `ts` are nearly all distinct.
CSV_DICTIONARY_COLUMNS = frozenset(COLUMN_NAMES) - {"seq", "ts"}
_CSV_DICTIONARY = pa.dictionary(pa.int32(), pa.string())
#: Bytes of CSV parsed at a time (see `read_csv`).
CSV_BLOCK_BYTES = 1 << 22
#: The largest block Arrow takes (its block size is a 32-bit integer).
_MAX_BLOCK_BYTES = (1 << 31) - 1


def _np_bool(mask) -> np.ndarray:
    return pc.fill_null(mask, False).to_numpy(zero_copy_only=False)


def _csv_header(header: bytes) -> list[str]:
    """The names of the header record (which may hold quoted line breaks)."""
    return next(csv.reader(io.StringIO(header.decode("utf-8"), newline="")))


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
